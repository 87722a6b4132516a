"""What a scan gives: per-file results, the summary counted file by file, and the scan options.

Small and free of the readers, so that the pool workers, the JSON stream and the
cache share these types without importing each other.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

from migrate import ir
from migrate.diagnostics import CODES, SEVERITIES, Diagnostic
from migrate.serialize import job_to_dict
from migrate.site.config import SpankOption
from migrate.vocab import Format

if TYPE_CHECKING:
    from migrate.site.job_size import JobSize

DEFAULT_MAX_BYTES = 1 << 20  # 1 MiB: no real job script or manifest comes close
# A file's list keeps this many diagnostics of one code; one FILE-DIAGNOSTICS-CAPPED note
# counts the rest (10,000 repeated #SBATCH lines are one finding, not 10,000 lines of output).
MAX_REPEATS_PER_CODE = 20


@dataclass(frozen=True)
class ScanOptions:
    max_bytes: int = DEFAULT_MAX_BYTES
    cache: str | None = None  # cache folder (see migrate.scan.cache.default_dir); None reads every file
    jobs: int | None = None  # worker processes; None: one per available core
    # Template values (--set, --env-file) as sorted (name, value) pairs; see migrate.scan.templates.
    values: tuple[tuple[str, str], ...] = ()
    helm_values: tuple[str, ...] = ()  # values files for helm template (--values), absolute paths
    # The #SBATCH options of the site's own SPANK plugins (migrate.yaml spank_options).
    spank_options: tuple[SpankOption, ...] = ()


DEFAULT_OPTIONS = ScanOptions()


@dataclass
class FileResult:
    path: str
    format: Format
    jobs: list[ir.Job] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "format": self.format,
            "jobs": [job_to_dict(j) for j in self.jobs],
            "diagnostics": [d.to_dict() for d in self.diagnostics],
        }


_CAPPED = "FILE-DIAGNOSTICS-CAPPED"
_CAPPED_MESSAGE = "{count} more {code} left out of this list (the first {kept} are listed)"
_CAPPED_COUNT = re.compile(r"(\d+) more (\S+) left out")


def cap_repeats(diagnostics: list[Diagnostic], kept: int = MAX_REPEATS_PER_CODE) -> list[Diagnostic]:
    """The first ``kept`` diagnostics of each code; in place of the next one, a note counting the rest."""
    totals = Counter(d.code for d in diagnostics)
    if max(totals.values(), default=0) <= kept:
        return diagnostics
    seen: Counter[str] = Counter()
    out: list[Diagnostic] = []
    for d in diagnostics:
        seen[d.code] += 1
        if seen[d.code] <= kept:
            out.append(d)
        elif seen[d.code] == kept + 1:
            message = _CAPPED_MESSAGE.format(count=totals[d.code] - kept, code=d.code, kept=kept)
            out.append(Diagnostic(_CAPPED, CODES[_CAPPED][0], message, d.path, d.line))
    return out


def omitted_by_note(diagnostic: Diagnostic) -> tuple[str, int] | None:
    """For a FILE-DIAGNOSTICS-CAPPED note: the code it stands for and how many it left out.

    Read back from the message, so that it survives the JSON, the cache and the workers.
    """
    if diagnostic.code != _CAPPED:
        return None
    m = _CAPPED_COUNT.match(diagnostic.message)
    return (m.group(2), int(m.group(1))) if m else None


def _counted(diagnostics: list[Diagnostic]) -> Counter[tuple[str, str]]:
    """(code, severity) -> how many were found, the listed ones and those left out."""
    counts: Counter[tuple[str, str]] = Counter()
    severity_of: dict[str, str] = {}
    for d in diagnostics:
        counts[d.code, d.severity] += 1
        severity_of[d.code] = d.severity
    for d in diagnostics:
        omitted = omitted_by_note(d)
        if omitted is not None:
            code, count = omitted
            counts[code, severity_of.get(code, CODES.get(code, (d.severity,))[0])] += count
    return counts


class FileFacts(NamedTuple):
    """What the summary needs of one file, small enough to cache and to send between processes."""

    format: str
    kinds: tuple[str, ...]
    nodes: int
    gpus: int
    diagnostics: tuple[tuple[str, str, int], ...]  # (code, severity, how many were found)
    left_out: int  # how many of those the file's list leaves out
    accelerators: tuple[tuple[str, int], ...] = ()  # accelerators that are not GPUs, by device name

    @classmethod
    def of(cls, result: FileResult, sizes: Sequence[JobSize] | None = None) -> FileFacts:
        """``sizes``: ``job_size`` of each job, when the caller has them already."""
        counts = _counted(result.diagnostics)
        # sizes as the allocation model gives them: pods packed onto nodes, and a job that runs on
        # another scanned object (a RayJob on a RayCluster) not counted twice
        sizes = [s for s in (job_sizes(result) if sizes is None else sizes) if s.counted]
        accelerators: Counter[str] = Counter()
        for size in sizes:
            accelerators.update(dict(size.accelerators))
        return cls(
            result.format,
            tuple([j.kind for j in result.jobs]),
            sum(s.nodes for s in sizes),
            sum(s.gpus for s in sizes),
            tuple([(code, severity, n) for (code, severity), n in counts.items()]),
            sum(counts.values()) - len(result.diagnostics),
            tuple(sorted(accelerators.items())),
        )

    def to_json(self) -> str:
        return json.dumps(self)

    @classmethod
    def from_json(cls, text: str) -> FileFacts:
        return cls.from_value(read_json(text))

    @classmethod
    def from_value(cls, value: list[Any]) -> FileFacts:
        fmt, kinds, nodes, gpus, diags, left, accelerators = value
        return cls(
            fmt,
            tuple(kinds),
            nodes,
            gpus,
            tuple([(c, s, int(n)) for c, s, n in diags]),
            int(left),
            tuple([(name, int(n)) for name, n in accelerators]),
        )


def read_json(text: str) -> Any:
    """One JSON value that the tool wrote (a cache row, a worker's result): ``json.loads`` without
    its checks for a byte order mark and for what follows the value, a quarter of its cost on the
    short texts a table reads ten thousand of. Raises ValueError on a text that is not JSON."""
    return _DECODE(text)[0]


_DECODE = json.JSONDecoder().raw_decode


def job_sizes(result: FileResult) -> list[JobSize]:
    """The size of each job of a file, as the allocation model gives it."""
    from migrate.site.job_size import job_size  # the allocation model: not needed to read files

    return [job_size(job) for job in result.jobs]


class Summary:
    """The scan summary, counted file by file so that a streamed scan needs no file list.

    Diagnostics are counted as found: the repeats a file's list leaves out (see
    :func:`cap_repeats`) are counted under their own code and severity, and each
    FILE-DIAGNOSTICS-CAPPED note counts once more; ``listed`` is how many of them
    the files list.
    """

    def __init__(self) -> None:
        self.files = 0
        self.job_files = 0
        self.jobs = 0
        self.formats: Counter[str] = Counter()
        self.kinds: Counter[str] = Counter()
        self.nodes = 0
        self.gpus = 0
        self.accelerators: Counter[str] = Counter()
        self.severities: Counter[str] = Counter()
        self.codes: Counter[str] = Counter()
        self.left_out = 0

    @classmethod
    def of(cls, facts: Iterable[FileFacts]) -> Summary:
        counted = cls()
        for each in facts:
            counted.add(each)
        return counted

    def add(self, facts: FileFacts) -> None:
        # counted key by key: Counter.update asks each argument whether it is a Mapping first,
        # which costs more than the counting for a file's two or three kinds
        self.files += 1
        self.formats[facts.format] += 1
        if facts.kinds:
            self.job_files += 1
            self.jobs += len(facts.kinds)
            for kind in facts.kinds:
                self.kinds[kind] += 1
        self.nodes += facts.nodes
        self.gpus += facts.gpus
        for name, count in facts.accelerators:
            self.accelerators[name] += count
        for code, severity, count in facts.diagnostics:
            self.severities[severity] += count
            self.codes[code] += count
        self.left_out += facts.left_out

    @property
    def errors(self) -> int:
        return self.severities["error"]

    def to_dict(self) -> dict[str, Any]:
        return {
            "files": self.files,
            "job_files": self.job_files,
            "jobs": self.jobs,
            "by_format": dict(sorted(self.formats.items())),
            "by_kind": dict(sorted(self.kinds.items())),
            "nodes": self.nodes,
            "gpus": self.gpus,
            "accelerators": dict(sorted(self.accelerators.items())),
            "diagnostics": {s: self.severities[s] for s in SEVERITIES},
            "by_code": dict(sorted(self.codes.items())),
            "diagnostics_listed": sum(self.severities.values()) - self.left_out,
        }


@dataclass
class ScanResult:
    files: list[FileResult]

    @property
    def jobs(self) -> list[ir.Job]:
        return [job for f in self.files for job in f.jobs]

    @property
    def diagnostics(self) -> list[Diagnostic]:
        return [d for f in self.files for d in f.diagnostics]

    def summary(self) -> dict[str, Any]:
        return Summary.of(FileFacts.of(f) for f in self.files).to_dict()

    def to_dict(self) -> dict[str, Any]:
        return {
            "ir_version": ir.IR_VERSION,
            "files": [f.to_dict() for f in self.files],
            "summary": self.summary(),
        }


__all__ = [
    "DEFAULT_MAX_BYTES",
    "DEFAULT_OPTIONS",
    "MAX_REPEATS_PER_CODE",
    "FileFacts",
    "FileResult",
    "ScanOptions",
    "ScanResult",
    "Summary",
    "cap_repeats",
    "job_sizes",
    "omitted_by_note",
    "read_json",
]
