"""The scan's second pass: Argo templateRefs that name a WorkflowTemplate of another file.

Files are read one by one (in worker processes, through the cache), so a
Workflow whose ``templateRef`` names a WorkflowTemplate kept in another file
gets ARGO-TEMPLATEREF-UNRESOLVED at first. Once every file is read, the files
with that diagnostic are read again with the WorkflowTemplates of all scanned
manifests; a reference still not found keeps its diagnostic.
"""

from __future__ import annotations

from migrate.diagnostics import Collector
from migrate.scan import files, templates
from migrate.scan.results import FileResult
from migrate.scan.templates import Values
from migrate.translators.argo import reader as argo_reader
from migrate.translators.argo import scopes
from migrate.translators.interfaces import ReadContext
from migrate.vocab import Format

UNRESOLVED = "ARGO-TEMPLATEREF-UNRESOLVED"


def takes_part(result: FileResult, data: bytes, values: Values = ()) -> bool:
    """Whether :func:`resolve` may read the file again or take WorkflowTemplates from it."""
    if any(d.code == UNRESOLVED for d in result.diagnostics):
        return True
    return result.format == Format.KUBERNETES and _is_argo(result, data, values)


def _is_argo(result: FileResult, data: bytes, values: Values) -> bool:
    text = templates.fill(files.decode(data, Collector(result.path)), Format.KUBERNETES, values)
    return argo_reader.sniff(text)


def resolve(results: list[FileResult], values: Values = ()) -> list[FileResult]:
    """The results with the pending files read again; ``values`` are the scan's template values."""
    pending = [i for i, r in enumerate(results) if any(d.code == UNRESOLVED for d in r.diagnostics)]
    if not pending:
        return results
    texts: dict[str, bytes] = {}
    library: scopes.Library = {}
    for result in results:
        if result.format != Format.KUBERNETES:
            continue
        try:
            with open(result.path, "rb") as fh:
                data = fh.read()
        except OSError:
            continue  # gone since it was read: its first reading stands
        if _is_argo(result, data, values):
            texts[result.path] = data
            text = templates.fill(files.decode(data, Collector(result.path)), Format.KUBERNETES, values)
            library |= scopes.library_of(scopes.scopes(text))
    out = list(results)
    for index in pending:
        path = results[index].path
        if path in texts:
            again = files.read_data(texts[path], path, True, ReadContext(library=library), values)
            if again is not None:
                out[index] = again
    return out


__all__ = ["resolve", "takes_part"]
