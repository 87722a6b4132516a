"""Scan: turn files into IR jobs and diagnostics, one file at a time.

A file is a job file by its content, never by its name; the name only decides
whether a file that holds no job is worth a word (``run.sbatch`` that is empty
is, ``notes.txt`` is not). Nothing read here is ever executed.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from migrate import ir
from migrate.diagnostics import Collector, Diagnostic, count_by_severity
from migrate.discover import Candidate, Skipped, walk
from migrate.serialize import job_to_dict
from migrate.translators.kubernetes import reader as k8s_reader
from migrate.translators.slurm import reader as slurm_reader

DEFAULT_MAX_BYTES = 1 << 20  # 1 MiB: no real job script or manifest comes close
SNIFF_BYTES = 64 << 10

SLURM = "slurm"
KUBERNETES = "kubernetes"
UNKNOWN = "unknown"

_JOB_LIKE_SUFFIXES = (".sh", ".bash", ".sbatch", ".slurm", ".job", ".batch", ".yaml", ".yml", ".pbs")
_JOB_LIKE_WORDS = ("sbatch", "slurm", "scrontab", "job")
SITE_CONFIG_NAMES = frozenset({"migrate.yaml", "migrate.yml"})


@dataclass(frozen=True)
class ScanOptions:
    max_bytes: int = DEFAULT_MAX_BYTES


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
        diags = self.diagnostics
        jobs = self.jobs
        return {
            "files": len(self.files),
            "job_files": sum(1 for f in self.files if f.jobs),
            "jobs": len(jobs),
            "by_format": dict(sorted(Counter(f.format for f in self.files).items())),
            "by_kind": dict(sorted(Counter(j.kind for j in jobs).items())),
            "nodes": sum(j.total_nodes() for j in jobs),
            "gpus": sum(j.total_gpus() for j in jobs),
            "diagnostics": count_by_severity(diags),
            "by_code": dict(sorted(Counter(d.code for d in diags).items())),
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "ir_version": ir.IR_VERSION,
            "files": [f.to_dict() for f in self.files],
            "summary": self.summary(),
        }


def job_like_name(path: str) -> bool:
    name = os.path.basename(path).lower()
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


def scan_file(candidate: Candidate, options: ScanOptions = ScanOptions()) -> FileResult | None:
    """Read one file; None when it is not a job file and not worth reporting."""
    path = candidate.display
    if os.path.basename(path) in SITE_CONFIG_NAMES:
        return None  # the site configuration is read by plan and translate, not scanned as a job
    diags = Collector(path)
    job_like = job_like_name(path)
    try:
        with open(candidate.path, "rb") as fh:
            head = fh.read(min(SNIFF_BYTES, options.max_bytes + 1))
            over = candidate.size > options.max_bytes
            rest = b"" if over else fh.read(options.max_bytes + 1 - len(head))
    except OSError as exc:
        diags.add("FILE-UNREADABLE", f"cannot read: {exc.strerror or exc}")
        return FileResult(path, UNKNOWN, [], diags.items)
    if b"\0" in head[:8192]:
        if not job_like:
            return None
        diags.add("FILE-BINARY", "binary content (NUL bytes); not a job script or manifest")
        return FileResult(path, UNKNOWN, [], diags.items)
    data = head + rest
    if over or len(data) > options.max_bytes:
        fmt = sniff(decode(head, Collector(path)))
        if fmt is None and not job_like:
            return None
        diags.add(
            "FILE-TOO-LARGE",
            f"{max(candidate.size, len(data))} bytes is over the limit of {options.max_bytes}; not read",
        )
        return FileResult(path, fmt or UNKNOWN, [], diags.items)
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
    return FileResult(path, fmt, jobs, diags.items)


def iter_candidates(paths: Iterable[str]) -> Iterator[Candidate | Skipped]:
    for root in paths:
        yield from walk(root)


def scan_item(item: Candidate | Skipped, options: ScanOptions = ScanOptions()) -> FileResult | None:
    if isinstance(item, Skipped):
        return FileResult(item.display, UNKNOWN, [], [item.diagnostic])
    return scan_file(item, options)


def scan(paths: Iterable[str], options: ScanOptions = ScanOptions()) -> ScanResult:
    files = [r for r in (scan_item(i, options) for i in iter_candidates(paths)) if r is not None]
    return ScanResult(files)
