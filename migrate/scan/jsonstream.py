"""The scan as JSON: each file's result as one line, and the document written file by file.

A file's line is ``json.dumps(FileResult.to_dict())`` as bytes (ASCII: the
encoder escapes the rest); it is what the cache keeps and what workers send
back, and it is written out as it is, never decoded. The document has the
shape of ``ScanResult.to_dict()``: ``ir_version``, then ``files`` one per
line, then the ``summary``, counted on the way, so memory stays flat on any
tree size. Tools can read it whole with any JSON parser, or line by line.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable
from typing import TYPE_CHECKING, BinaryIO

from migrate import ir
from migrate.diagnostics import Diagnostic
from migrate.scan.results import FileFacts, FileResult, Summary
from migrate.serialize import job_from_dict, written_fields
from migrate.vocab import Format

if TYPE_CHECKING:
    from migrate.scan.links import Ahead


@dataclasses.dataclass(frozen=True)
class Rendered:
    """One file's result as a line of JSON (``FileResult.to_dict``) with its summary facts, its
    table rows (:class:`migrate.scan.rows.FileRows` as JSON), the key it is kept under and, for a
    file just read that takes part in the cross-file passes, what they read of it."""

    path: str
    json: bytes
    rows: str
    facts: FileFacts
    key: bytes | None = None
    ahead: Ahead | None = None


def render(result: FileResult) -> str:
    """``json.dumps(result.to_dict())``, the same text at half the cost: the C encoder walks the
    IR itself and asks :func:`_ir_fields` only for each dataclass's non-default fields. The IR
    (frozen dataclasses and tuples) has no cycles, so the encoder is spared looking for them."""
    document = {
        "path": result.path,
        "format": result.format,
        "jobs": result.jobs,
        "diagnostics": [d.to_dict() for d in result.diagnostics],
    }
    return json.dumps(document, default=_ir_fields, check_circular=False)


def _ir_fields(obj: object) -> dict[str, object]:
    fields = written_fields(obj)
    if fields is None:
        raise TypeError(f"{type(obj).__name__} is not JSON serializable")
    return fields


def from_rendered(rendered: Rendered) -> FileResult:
    data = json.loads(rendered.json)
    path = data["path"]
    diagnostics = [
        Diagnostic(d["code"], d["severity"], d["message"], path, d.get("line"), d.get("job"))
        for d in data["diagnostics"]
    ]
    return FileResult(path, Format(data["format"]), [job_from_dict(j) for j in data["jobs"]], diagnostics)


def write_scan(files: Iterable[Rendered], out: BinaryIO) -> Summary:
    """Write the document for ``files`` to the byte stream ``out``; return the summary (for ``--strict``)."""
    summary = Summary()
    out.write(f'{{"ir_version": {json.dumps(ir.IR_VERSION)}, "files": ['.encode())
    separator = b"\n"
    for f in files:
        out.write(separator)
        out.write(f.json)
        separator = b",\n"
        summary.add(f.facts)
    out.write(f'\n],\n"summary": {json.dumps(summary.to_dict())}}}\n'.encode())
    return summary


__all__ = ["Rendered", "from_rendered", "render", "write_scan"]
