"""Scan: every job file under the given paths, in walk order, as IR jobs and diagnostics.

Large trees: :func:`iter_rendered` streams each file's result as one line of
JSON (:mod:`migrate.scan.jsonstream`), in walk order, through the content-hash
cache (:mod:`migrate.scan.cache`) and a pool of worker processes
(:mod:`migrate.scan.pool`); :func:`scan` and :func:`iter_scan` give the same
results as objects, and :func:`overview` what the scan table shows of them.
One file is read by :mod:`migrate.scan.files`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING

from migrate.scan import overview as scan_overview
from migrate.scan import pool
from migrate.scan.discover import Candidate, Skipped, walk
from migrate.scan.results import DEFAULT_OPTIONS, FileResult, ScanOptions, ScanResult

if TYPE_CHECKING:
    from migrate.scan.jsonstream import Rendered
    from migrate.scan.overview import FileView


def iter_candidates(paths: Iterable[str]) -> Iterator[Candidate | Skipped]:
    for root in paths:
        yield from walk(root)


def iter_rendered(paths: Iterable[str], options: ScanOptions = DEFAULT_OPTIONS) -> Iterator[Rendered]:
    """Every reported file under ``paths``, in walk order, as JSON; for output that streams."""
    yield from pool.run(iter_candidates(paths), options)


def overview(
    paths: Iterable[str], options: ScanOptions = DEFAULT_OPTIONS, on_file: Callable[[], object] | None = None
) -> list[FileView]:
    """Every reported file as the scan table shows it, with what :func:`scan` resolves across files;
    ``on_file`` is called as each file is read (a progress bar)."""
    paths = list(paths)

    def build(fragments: bool) -> list[FileView]:
        files: Iterable[Rendered] = pool.run(iter_candidates(paths), options, fragments)
        if on_file is not None:
            files = _calling(on_file, files)
        return scan_overview.build(files, options.values, options.cache)

    try:
        return build(fragments=False)  # the cached JSON is read only for the files the passes need
    except scan_overview.FragmentsGone:
        return build(fragments=True)  # another scan changed the cache meanwhile: JSON and all


def _calling(on_file: Callable[[], object], files: Iterable[Rendered]) -> Iterator[Rendered]:
    for f in files:
        on_file()
        yield f


def iter_scan(paths: Iterable[str], options: ScanOptions = DEFAULT_OPTIONS) -> Iterator[FileResult]:
    """Every reported file under ``paths``, in walk order."""
    yield from pool.run_objects(iter_candidates(paths), options)


def scan(paths: Iterable[str], options: ScanOptions = DEFAULT_OPTIONS) -> ScanResult:
    """All files; what one file names in another resolved (the streaming scans read file by file):
    Argo templateRefs, Services that select the pods of a workload kept in another file, the
    RayCluster a RayJob's clusterSelector names, bare Pods another file hands to Spark as pod
    templates, and the Kueue flavor whose node labels a queued job's pods get."""
    from migrate.scan import links  # the passes load the readers, which a cached scan does without

    return ScanResult(links.resolve(list(iter_scan(paths, options)), options.values))


__all__ = ["iter_candidates", "iter_rendered", "iter_scan", "overview", "scan"]
