"""Scan: turn files into IR jobs and diagnostics, one file at a time.

A file is a job file by its content, never by its name; the name only decides
whether a file that holds no job is worth a word (``run.sbatch`` that is empty
is, ``notes.txt`` is not). Nothing read here is ever executed.

Large trees: :func:`iter_rendered` streams each file's result as one line of
JSON (:mod:`migrate.jsonstream`), in walk order, through the content-hash
cache (:mod:`migrate.cache`) and a pool of worker processes
(:mod:`migrate.scan_pool`); :func:`scan` and :func:`iter_scan` give the same
results as objects.
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any, NamedTuple

from migrate import ir
from migrate.diagnostics import CODES, SEVERITIES, Collector, Diagnostic
from migrate.discover import Candidate, Skipped, walk
from migrate.serialize import job_to_dict
from migrate.translators.kubernetes import reader as k8s_reader
from migrate.translators.slurm import reader as slurm_reader

if TYPE_CHECKING:
    from migrate.jsonstream import Rendered

DEFAULT_MAX_BYTES = 1 << 20  # 1 MiB: no real job script or manifest comes close
SNIFF_BYTES = 64 << 10
BINARY_SNIFF_BYTES = 8 << 10  # a NUL this close to the start: binary, as git and grep decide
# A file's list keeps this many diagnostics of one code; one FILE-DIAGNOSTICS-CAPPED note
# counts the rest (10,000 repeated #SBATCH lines are one finding, not 10,000 lines of output).
MAX_REPEATS_PER_CODE = 20

SLURM = "slurm"
KUBERNETES = "kubernetes"
UNKNOWN = "unknown"

_JOB_LIKE_SUFFIXES = (".sh", ".bash", ".sbatch", ".slurm", ".job", ".batch", ".yaml", ".yml", ".pbs")
_JOB_LIKE_WORDS = ("sbatch", "slurm", "scrontab", "job")
# Data, documents and code that may mention jobs but are never job files themselves.
_NEVER_JOB_SUFFIXES = (
    ".json",
    ".md",
    ".rst",
    ".html",
    ".svg",
    ".png",
    ".jpg",
    ".csv",
    ".log",
    ".out",
    ".err",
    ".py",
    ".ipynb",
    ".graphml",
    ".pdf",
)
SITE_CONFIG_NAMES = frozenset({"migrate.yaml", "migrate.yml"})


@dataclass(frozen=True)
class ScanOptions:
    max_bytes: int = DEFAULT_MAX_BYTES
    cache: str | None = None  # cache folder (see migrate.cache.default_dir); None reads every file
    jobs: int | None = None  # worker processes; None: one per available core


@dataclass
class FileResult:
    path: str
    format: str
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

    @classmethod
    def of(cls, result: FileResult) -> FileFacts:
        counts = _counted(result.diagnostics)
        return cls(
            result.format,
            tuple(j.kind for j in result.jobs),
            sum(j.total_nodes() for j in result.jobs),
            sum(j.total_gpus() for j in result.jobs),
            tuple((code, severity, n) for (code, severity), n in counts.items()),
            sum(counts.values()) - len(result.diagnostics),
        )

    def to_json(self) -> str:
        return json.dumps(self)

    @classmethod
    def from_json(cls, text: str) -> FileFacts:
        fmt, kinds, nodes, gpus, diags, left = json.loads(text)
        return cls(fmt, tuple(kinds), nodes, gpus, tuple((c, s, int(n)) for c, s, n in diags), int(left))


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
        self.severities: Counter[str] = Counter()
        self.codes: Counter[str] = Counter()
        self.left_out = 0

    def add(self, facts: FileFacts) -> None:
        self.files += 1
        self.job_files += bool(facts.kinds)
        self.jobs += len(facts.kinds)
        self.formats[facts.format] += 1
        self.kinds.update(facts.kinds)
        self.nodes += facts.nodes
        self.gpus += facts.gpus
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
        counted = Summary()
        for f in self.files:
            counted.add(FileFacts.of(f))
        return counted.to_dict()

    def to_dict(self) -> dict[str, Any]:
        return {
            "ir_version": ir.IR_VERSION,
            "files": [f.to_dict() for f in self.files],
            "summary": self.summary(),
        }


def job_like_name(path: str) -> bool:
    """Whether a file that holds no job is worth a word (run.sbatch is, results.json is not)."""
    name = os.path.basename(path).lower()
    if name.endswith(_NEVER_JOB_SUFFIXES):
        return False
    return name.endswith(_JOB_LIKE_SUFFIXES) or any(w in name for w in _JOB_LIKE_WORDS)


def decode(data: bytes, diags: Collector) -> str:
    """UTF-8 (BOM stripped), else Latin-1 with a diagnostic; never fails."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        diags.add("FILE-ENCODING", f"not valid UTF-8 (byte 0x{data[exc.start]:02x}); read as Latin-1", line)
        return data.decode("latin-1")


def sniff(text: str) -> str | None:
    """The format of a job file by its content, or None."""
    if slurm_reader.sniff(text):
        return SLURM
    if k8s_reader.sniff(text):
        return KUBERNETES
    return None


def read_text(text: str, path: str, fmt: str, diags: Collector) -> list[ir.Job]:
    reader = slurm_reader if fmt == SLURM else k8s_reader
    return reader.read(text, path, diags)


def _open_regular(path: str) -> IO[bytes]:
    """Open for reading without blocking: a file swapped for a FIFO or a device is refused."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file (changed while scanned)")
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def load(candidate: Candidate, options: ScanOptions) -> bytes | FileResult | None:
    """A file's whole content, or the result for a file that is not read (unreadable, binary, too big)."""
    path = candidate.display
    diags = Collector(path)
    try:
        with _open_regular(candidate.path) as fh:
            head = fh.read(min(SNIFF_BYTES, options.max_bytes + 1))
            over = candidate.size > options.max_bytes
            rest = b"" if over else fh.read(options.max_bytes + 1 - len(head))
    except OSError as exc:
        diags.add("FILE-UNREADABLE", f"cannot read: {exc.strerror or exc}")
        return FileResult(path, UNKNOWN, [], diags.items)
    if b"\0" in head[:BINARY_SNIFF_BYTES]:
        if not job_like_name(path):
            return None
        diags.add("FILE-BINARY", "binary content (NUL bytes); not a job script or manifest")
        return FileResult(path, UNKNOWN, [], diags.items)
    data = head + rest
    if over or len(data) > options.max_bytes:
        fmt = sniff(decode(head, Collector(path)))
        if fmt is None and not job_like_name(path):
            return None
        diags.add(
            "FILE-TOO-LARGE",
            f"{max(candidate.size, len(data))} bytes is over the limit of {options.max_bytes}; not read",
        )
        return FileResult(path, fmt or UNKNOWN, [], diags.items)
    return data


def read_data(data: bytes, path: str, job_like: bool) -> FileResult | None:
    """Read a file's content as the job file at ``path``; None when it is not worth reporting.

    The result depends on ``path`` only as an opaque id, which is what lets the
    cache compute it once under a placeholder path.
    """
    diags = Collector(path)
    if b"\0" in data:
        cleaned = without_stray_nuls(data, diags)
        if cleaned is None:
            return FileResult(path, UNKNOWN, [], diags.items) if job_like else None
        data = cleaned
    if not data.strip():
        if not job_like:
            return None
        diags.add("FILE-EMPTY", "empty file")
        return FileResult(path, UNKNOWN, [], diags.items)
    text = decode(data, diags)
    fmt = sniff(text)
    if fmt is None:
        if not job_like:
            return None
        diags.add("FILE-NOT-A-JOB", "no #SBATCH directives, sbatch calls or Kubernetes objects found")
        return FileResult(path, UNKNOWN, [], diags.items)
    try:
        jobs = read_text(text, path, fmt, diags)
    except Exception as exc:  # a reader bug must not lose the file or the run
        diags.add("INTERNAL-ERROR", f"reader failed: {type(exc).__name__}: {exc}")
        jobs = []
    return FileResult(path, fmt, jobs, cap_repeats(diags.items))


def without_stray_nuls(data: bytes, diags: Collector) -> bytes | None:
    """The text of a file with NUL bytes past its first 8 KiB, or None when it is binary after all.

    The head had no NUL, so the file began as text; a NUL further on is a stray
    (an editor slip, blocks zero-filled by a crash), and the rest is read without
    it, as bash reads it. sbatch refuses such a script, hence the warning. When
    what is left is not UTF-8 either, the file carries a binary payload (like a
    self-extracting installer) and is not read.
    """
    first = data.index(b"\0")
    line = data.count(b"\n", 0, first) + 1
    cleaned = data.replace(b"\0", b"")
    try:
        cleaned.decode("utf-8")
    except UnicodeDecodeError:
        diags.add("FILE-BINARY", f"binary content from line {line} on (NUL bytes); not read", line)
        return None
    count = len(data) - len(cleaned)
    diags.add(
        "FILE-NUL-BYTE",
        f"{count} NUL byte{'s' if count > 1 else ''} from line {line} on, removed before reading, "
        "as bash does (sbatch refuses a script that holds one)",
        line,
    )
    return cleaned


def scan_file(candidate: Candidate, options: ScanOptions = ScanOptions()) -> FileResult | None:
    """Read one file; None when it is not a job file and not worth reporting."""
    path = candidate.display
    if os.path.basename(path) in SITE_CONFIG_NAMES:
        return None  # the site configuration is read by plan and translate, not scanned as a job
    loaded = load(candidate, options)
    if not isinstance(loaded, bytes):
        return loaded
    return read_data(loaded, path, job_like_name(path))


def iter_candidates(paths: Iterable[str]) -> Iterator[Candidate | Skipped]:
    for root in paths:
        yield from walk(root)


def scan_item(item: Candidate | Skipped, options: ScanOptions = ScanOptions()) -> FileResult | None:
    if isinstance(item, Skipped):
        return FileResult(item.display, UNKNOWN, [], [item.diagnostic])
    return scan_file(item, options)


# ---------------------------------------------------------------------------
# Streaming, cached and parallel scans
# ---------------------------------------------------------------------------


def iter_rendered(paths: Iterable[str], options: ScanOptions = ScanOptions()) -> Iterator[Rendered]:
    """Every reported file under ``paths``, in walk order, as JSON; for output that streams."""
    from migrate import scan_pool  # the pool module imports this one

    yield from scan_pool.run(iter_candidates(paths), options)


def iter_scan(paths: Iterable[str], options: ScanOptions = ScanOptions()) -> Iterator[FileResult]:
    """Every reported file under ``paths``, in walk order."""
    from migrate import scan_pool

    yield from scan_pool.run_objects(iter_candidates(paths), options)


def scan(paths: Iterable[str], options: ScanOptions = ScanOptions()) -> ScanResult:
    return ScanResult(list(iter_scan(paths, options)))


__all__ = [
    "DEFAULT_MAX_BYTES",
    "KUBERNETES",
    "SLURM",
    "UNKNOWN",
    "FileFacts",
    "FileResult",
    "ScanOptions",
    "ScanResult",
    "Summary",
    "iter_candidates",
    "iter_rendered",
    "iter_scan",
    "scan",
    "scan_file",
    "scan_item",
]
