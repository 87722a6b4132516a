"""Scan: every job file under the given paths, in walk order, as IR jobs and diagnostics.

Large trees: :func:`iter_rendered` streams each file's result as one line of
JSON (:mod:`migrate.scan.jsonstream`), in walk order, through the content-hash
cache (:mod:`migrate.scan.cache`) and a pool of worker processes
(:mod:`migrate.scan.pool`); :func:`scan` and :func:`iter_scan` give the same
results as objects. One file is read by :mod:`migrate.scan.files`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from migrate.scan import argo_refs, kueue_refs, pool, ray_refs, service_refs, spark_refs
from migrate.scan.discover import Candidate, Skipped, walk
from migrate.scan.results import DEFAULT_OPTIONS, FileResult, ScanOptions, ScanResult

if TYPE_CHECKING:
    from migrate.scan.jsonstream import Rendered


def iter_candidates(paths: Iterable[str]) -> Iterator[Candidate | Skipped]:
    for root in paths:
        yield from walk(root)


def iter_rendered(paths: Iterable[str], options: ScanOptions = DEFAULT_OPTIONS) -> Iterator[Rendered]:
    """Every reported file under ``paths``, in walk order, as JSON; for output that streams."""
    yield from pool.run(iter_candidates(paths), options)


def iter_scan(paths: Iterable[str], options: ScanOptions = DEFAULT_OPTIONS) -> Iterator[FileResult]:
    """Every reported file under ``paths``, in walk order."""
    yield from pool.run_objects(iter_candidates(paths), options)


def scan(paths: Iterable[str], options: ScanOptions = DEFAULT_OPTIONS) -> ScanResult:
    """All files; what one file names in another resolved (the streaming scans read file by file):
    Argo templateRefs, Services that select the pods of a workload kept in another file, the
    RayCluster a RayJob's clusterSelector names, bare Pods another file hands to Spark as pod
    templates, and the Kueue flavor whose node labels a queued job's pods get."""
    results = argo_refs.resolve(list(iter_scan(paths, options)), options.values)
    results = ray_refs.link(service_refs.link(results, options.values))
    return ScanResult(kueue_refs.link(spark_refs.mark(results), options.values))


__all__ = ["iter_candidates", "iter_rendered", "iter_scan", "scan"]
