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

from migrate.scan import argo_refs, kueue_refs, ray_refs, service_refs, spark_refs
from migrate.scan.results import FileResult
from migrate.scan.templates import Values


def resolve(results: list[FileResult], values: Values = ()) -> list[FileResult]:
    """The results with every cross-file pass applied; ``values`` are the scan's template values."""
    results = argo_refs.resolve(results, values)
    results = ray_refs.link(service_refs.link(results, values))
    return kueue_refs.link(spark_refs.mark(results), values)


def takes_part(result: FileResult, data: bytes, values: Values = ()) -> bool:
    """Whether any pass may change the file or take something from it; ``data``: the file's bytes."""
    return (
        ray_refs.takes_part(result)
        or service_refs.takes_part(result, data)
        or spark_refs.takes_part(result, data)
        or kueue_refs.takes_part(result, data)
        or argo_refs.takes_part(result, data, values)
    )


__all__ = ["resolve", "takes_part"]
