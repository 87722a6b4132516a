"""The scan's cross-file passes, in their order, and which files take part in them.

Files are read one by one; what one file names in another is resolved once all
are read (Argo templateRefs, Services, RayClusters, Spark pod templates, Kueue
flavors: see each pass). A file that takes part in no pass is neither changed by
them nor changes what they do to others, so the passes can run over only the
files that take part, in walk order, and give those files what a run over all
files gives them. :func:`takes_part` is asked where a file is read, with its
bytes, and kept with its result (:mod:`migrate.scan.rows`).
"""

from __future__ import annotations

from typing import NamedTuple

from migrate.scan import argo_refs, kueue_refs, ray_refs, service_refs, spark_refs
from migrate.scan.results import FileResult
from migrate.scan.templates import Values
from migrate.vocab import Format


class Ahead(NamedTuple):
    """What the passes read again of one manifest file."""

    services: list[service_refs.Service] | None  # None: the file offers none (see service_refs.offers)
    kueue: list[kueue_refs.KueueObject]


def ahead_of(result: FileResult, values: Values = (), data: bytes | None = None) -> Ahead | None:
    """What the passes read again of a file (None for a file of no Kubernetes objects); ``data``: its
    bytes, else read again from disk. Where the file was just read (a worker, under
    ``yamlload.parsed_once``), its documents are not parsed a second time."""
    if result.format != Format.KUBERNETES:
        return None
    services = service_refs.services_in(result.path, values, data) if service_refs.offers(result) else None
    return Ahead(services, kueue_refs.objects_in(result.path, values, data))


class ReadAhead:
    """What the passes read of each file, by path, as the worker that read the file found it
    (:func:`ahead_of`); a pass reads a file that is not here again from disk."""

    def __init__(self) -> None:
        self.services: dict[str, list[service_refs.Service]] = {}
        self.kueue: dict[str, list[kueue_refs.KueueObject]] = {}

    def add(self, path: str, ahead: Ahead) -> None:
        if ahead.services is not None:
            self.services[path] = ahead.services
        self.kueue[path] = ahead.kueue


def resolve(
    results: list[FileResult], values: Values = (), ahead: ReadAhead | None = None
) -> list[FileResult]:
    """The results with every cross-file pass applied; ``values`` are the scan's template values,
    ``ahead`` what was read ahead of the passes (the rest is read here)."""
    services = ahead.services if ahead is not None else None
    queues = ahead.kueue if ahead is not None else None
    results = argo_refs.resolve(results, values)
    results = ray_refs.link(service_refs.link(results, values, services))
    return kueue_refs.link(spark_refs.mark(results), values, queues)


def takes_part(result: FileResult, data: bytes, values: Values = ()) -> bool:
    """Whether any pass may change the file or take something from it; ``data``: the file's bytes."""
    return (
        ray_refs.takes_part(result)
        or service_refs.takes_part(result, data)
        or spark_refs.takes_part(result, data)
        or kueue_refs.takes_part(result, data)
        or argo_refs.takes_part(result, data, values)
    )


__all__ = ["Ahead", "ReadAhead", "ahead_of", "resolve", "takes_part"]
