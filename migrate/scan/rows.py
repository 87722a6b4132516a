"""What the scan table shows of one file, small enough to cache beside the file's JSON.

A table of 10,000 files must not turn 10,000 files' JSON back into jobs to show
seven short cells per job: each file's rows, its counts and its diagnostics as
lines are made once, where the file is read, and kept with its result in the
cache. ``linked`` says whether the file takes part in the scan's cross-file
passes (:mod:`migrate.scan.links`); only such files are read back into jobs.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from migrate.render import job_row, shell_coverage, unknown_roles
from migrate.scan.results import FileResult, read_json
from migrate.vocab import PlaceholderRole

if TYPE_CHECKING:
    from migrate.site.job_size import JobSize


class FileRows(NamedTuple):
    jobs: Sequence[Sequence[str]]  # a row per job: kind, nodes, GPUs, time, launcher, storage, diag
    diagnostics: Sequence[str]  # each diagnostic as its line (Diagnostic.render)
    unknown: int  # jobs whose node or GPU count a template placeholder leaves unknown
    understood: int  # shell statements read by the full parser
    statements: int  # shell statements in the file's job bodies
    linked: bool  # the file takes part in a cross-file pass

    @classmethod
    def of(cls, result: FileResult, sizes: Sequence[JobSize], linked: bool) -> FileRows:
        """``sizes``: ``job_size`` of each job, as the summary's facts count them."""
        rows = []
        for i, (job, size) in enumerate(zip(result.jobs, sizes, strict=True)):
            row = job_row(job, size.nodes, size.devices_text())
            # the first job's row also counts the diagnostics of the file that name no job
            mine = (None, job.id) if i == 0 else (job.id,)
            count = sum(1 for d in result.diagnostics if d.job in mine)
            cells = ("kind", "nodes", "gpus", "time", "launcher", "storage")
            rows.append((*(row[c] for c in cells), str(count)))
        understood, statements = shell_coverage(result.jobs)
        return cls(
            tuple(rows),
            tuple(d.render() for d in result.diagnostics),
            sum(1 for job in result.jobs if unknown_roles(job) - {PlaceholderRole.OTHER}),
            understood,
            statements,
            linked,
        )

    def to_json(self) -> str:
        return json.dumps(self)

    @classmethod
    def from_value(cls, value: list[Any]) -> FileRows:
        """From the JSON's lists as they are: the cache's checksum vouches for what it wrote."""
        jobs, diagnostics, unknown, understood, statements, linked = value
        if not isinstance(jobs, list) or not isinstance(diagnostics, list):
            raise TypeError("FileRows: jobs and diagnostics are lists")
        return cls(jobs, diagnostics, unknown, understood, statements, linked)

    @classmethod
    def from_json(cls, text: str) -> FileRows:
        return cls.from_value(read_json(text))


__all__ = ["FileRows"]
