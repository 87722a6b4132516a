"""Read one file: decide what it is by its content, read it with its format's reader, report the rest.

A file is a job file by its content, never by its name; the name only decides
whether a file that holds no job is worth a word (``run.sbatch`` that is empty
is, ``notes.txt`` is not). Nothing read here is ever executed.

The readers are imported when a file is first read, not with this module: a
scan that the cache answers reads no file, and importing them costs it a third
of a second.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from typing import IO

from migrate import ir
from migrate.diagnostics import Collector
from migrate.scan import charts, templates
from migrate.scan.discover import Candidate, Skipped
from migrate.scan.results import (
    DEFAULT_OPTIONS,
    FileResult,
    ScanOptions,
    cap_repeats,
)
from migrate.scan.templates import Values
from migrate.translators import registry
from migrate.translators.interfaces import NO_CONTEXT, ReadContext
from migrate.vocab import Format

SNIFF_BYTES = 64 << 10
BINARY_SNIFF_BYTES = 8 << 10  # a NUL this close to the start: binary, as git and grep decide

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


def job_like_name(path: str) -> bool:
    """Whether a file that holds no job is worth a word (run.sbatch is, results.json is not)."""
    name = os.path.basename(path).lower()
    if name.endswith(_NEVER_JOB_SUFFIXES):
        return False
    return name.endswith(_JOB_LIKE_SUFFIXES) or any(w in name for w in _JOB_LIKE_WORDS)


_BOM = b"\xef\xbb\xbf"


def decode(data: bytes, diags: Collector) -> str:
    """UTF-8 (BOM stripped), else Latin-1 with a diagnostic; never fails."""
    if data.startswith(_BOM):
        data = data[3:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        diags.add("FILE-ENCODING", f"not valid UTF-8 (byte 0x{data[exc.start]:02x}); read as Latin-1", line)
        return data.decode("latin-1")


def manifest_again(
    path: str, values: Values, gate: re.Pattern[bytes], data: bytes | None = None
) -> tuple[str, Collector] | None:
    """A manifest file's text as the scan read it (decoded, template values filled), for a
    cross-file pass, with a collector of its own (the first reading reported its problems); None
    when the file is gone or its bytes do not match ``gate``. ``data``: the file's bytes, when they
    are at hand; else they are read again from disk."""
    if data is None:
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError:
            return None  # gone since it was read: its first reading stands
    if not gate.search(data):
        return None
    quiet = Collector(path)
    return templates.fill(decode(data, quiet), Format.KUBERNETES, values), quiet


def load_readers() -> None:
    """Import the readers now (before worker processes are forked, so that they inherit them)."""
    for entry in registry.READERS:
        entry.load()


def main_reader(text: str) -> registry.ReaderEntry | None:
    """The first reader that takes the text as its format's, or None: it decides the file's format."""
    for entry in registry.READERS:
        if not entry.alongside and entry.load().sniff(text):
            return entry
    return None


def sniff(text: str) -> Format | None:
    """The format of a job file by its content, or None."""
    entry = main_reader(text)
    return None if entry is None else entry.format


def read_text(
    text: str, path: str, main: registry.ReaderEntry, diags: Collector, context: ReadContext = NO_CONTEXT
) -> list[ir.Job]:
    """The jobs of a file ``main`` took: its own, then those of the readers that read beside it and
    take the file too."""
    jobs = main.load().read(text, path, diags, context)
    for entry in registry.readers_of(main.format):
        reader = entry.load()
        if entry.alongside and reader.sniff(text):
            jobs += reader.read(text, path, diags, context)
    return jobs


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
        return FileResult(path, Format.UNKNOWN, [], diags.items)
    if b"\0" in head[:BINARY_SNIFF_BYTES]:
        if not job_like_name(path):
            return None
        diags.add("FILE-BINARY", "binary content (NUL bytes); not a job script or manifest")
        return FileResult(path, Format.UNKNOWN, [], diags.items)
    data = head + rest
    if over or len(data) > options.max_bytes:
        fmt = sniff(decode(head, Collector(path)))
        if fmt is None and not job_like_name(path):
            return None
        diags.add(
            "FILE-TOO-LARGE",
            f"{max(candidate.size, len(data))} bytes is over the limit of {options.max_bytes}; not read",
        )
        return FileResult(path, fmt or Format.UNKNOWN, [], diags.items)
    return data


def read_data(
    data: bytes,
    path: str,
    job_like: bool,
    context: ReadContext = NO_CONTEXT,
    values: Values = (),
) -> FileResult | None:
    """Read a file's content as the job file at ``path``; None when it is not worth reporting.

    ``context``: what the readers may need beyond the text (the WorkflowTemplates of the other
    scanned files, the site's SPANK options). The result depends on ``path`` only as an opaque id,
    which is what lets the cache compute it once under a placeholder path.
    """
    diags = Collector(path)
    if b"\0" in data:
        cleaned = without_stray_nuls(data, diags)
        if cleaned is None:
            return FileResult(path, Format.UNKNOWN, [], diags.items) if job_like else None
        data = cleaned
    if not data.strip():
        if not job_like:
            return None
        diags.add("FILE-EMPTY", "empty file")
        return FileResult(path, Format.UNKNOWN, [], diags.items)
    text = decode(data, diags)
    main = main_reader(text)
    if main is not None:
        text = templates.fill(text, main.format, values)
    if main is not None and main.format == Format.SLURM and data.startswith(_BOM):
        text = "\ufeff" + text  # sbatch refuses a script that starts with one: its reader says so
    if main is None:
        if not job_like:
            return None
        diags.add("FILE-NOT-A-JOB", "no #SBATCH directives, sbatch calls or Kubernetes objects found")
        return FileResult(path, Format.UNKNOWN, [], diags.items)
    try:
        jobs = read_text(text, path, main, diags, context)
    except Exception as exc:  # a reader bug must not lose the file or the run
        diags.add("INTERNAL-ERROR", f"reader failed: {type(exc).__name__}: {exc}")
        jobs = []
    return FileResult(path, main.format, jobs, cap_repeats(diags.items))


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


def scan_file(candidate: Candidate, options: ScanOptions = DEFAULT_OPTIONS) -> FileResult | None:
    """Read one file; None when it is not a job file and not worth reporting."""
    path = candidate.display
    if os.path.basename(path) in SITE_CONFIG_NAMES:
        return None  # the site configuration is read by plan and translate, not scanned as a job
    loaded = load(candidate, options)
    if not isinstance(loaded, bytes):
        return loaded
    if charts.is_chart(path):
        text = decode(loaded, Collector(path))
        return charts.read_chart(candidate.path, path, text, options.helm_values)
    context = ReadContext(spank=options.spank_options)
    return read_data(loaded, path, job_like_name(path), context, options.values)


def scan_item(item: Candidate | Skipped, options: ScanOptions = DEFAULT_OPTIONS) -> FileResult | None:
    if isinstance(item, Skipped):
        return FileResult(item.display, Format.UNKNOWN, [], [item.diagnostic])
    return scan_file(item, options)


__all__ = [
    "decode",
    "job_like_name",
    "load",
    "manifest_again",
    "read_data",
    "scan_file",
    "scan_item",
    "sniff",
]
