"""A content-addressed cache of scan results, so that a re-scan reads only what changed.

The key of a file is a hash of its bytes, salted with everything else its
result depends on: the tool and IR versions, a fingerprint of the reader code
and of the parser libraries, the size limit and whether the name looks like a
job file. An edited file has a new key, so a stale result is never served;
nothing relies on modification times.

The value is the file's result as one line of JSON plus a few summary facts
and its table rows. A second table keeps the outcome of the cross-file passes
(:mod:`migrate.scan.links`) over the files that take part in them, under the
keys and paths of those files: a table of an unchanged site reads it back
instead of reading those files into jobs again. Results are computed with
:data:`PATH_TOKEN` in place of the file's display path (readers use the path
only as an opaque id), so one entry serves the same content wherever it lives:
:func:`stamp` puts the real path back.

Where: ``$MIGRATE_CACHE_DIR``, else ``$XDG_CACHE_HOME/migrate``, else
``~/.cache/migrate``; one SQLite file per code version in that folder, about
4 KB per file scanned (files of other versions unused for two weeks are
removed). SQLite rather than one file per entry: a warm scan of 100,000 files
costs about 2,000 indexed batch reads in one open file instead of 100,000
opens, a killed run leaves only whole transactions behind, and two scans can
share the folder (WAL). Rows carry a checksum, so a damaged row reads as a
miss; a cache that cannot be opened is treated as empty, a file that is not a
database is replaced, a read-only one is only read. Deleting the folder is
always safe.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.util
import json
import os
import sqlite3
import sys
import time
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

import migrate.translators as translators
from migrate import __version__, ir
from migrate.site.config import SpankOption

ENV_VAR = "MIGRATE_CACHE_DIR"
SCHEMA = 4
DB_PREFIX = "scan-cache-"
UNUSED_DAYS = 14  # cache files of other code versions untouched this long are removed
# Stands for the display path inside cached results; cannot occur in a path from the walk.
PATH_TOKEN = "\x00migrate-path\x00"
PATH_TOKEN_JSON = json.dumps(PATH_TOKEN)[1:-1]
PATH_TOKEN_BYTES = PATH_TOKEN_JSON.encode()
_FLUSH_EVERY = 512

# The code a scan result depends on, relative to the migrate package and to migrate.translators.
_CORE_MODULES = (
    "ir.py",
    "vocab.py",
    "serialize.py",
    "diagnostics.py",
    "secrets.py",
    "yamlload.py",
    "workloads.py",  # the workload kinds the Kubernetes reader reads, and the table they are kept in
    "declared.py",
    "scan/discover.py",
    "scan/files.py",
    "scan/scanner.py",
    "scan/results.py",
    "scan/pool.py",
    "scan/jsonstream.py",
    # the summary's counts (FileFacts) come from the allocation model
    "devices.py",
    "site/job_size.py",
    "site/allocation.py",
    "site/allocation_model.py",
    "site/allocation_resources.py",
    "site/pod_allocation.py",
    "site/kube_component.py",
    "site/kube_partition.py",
    "site/config.py",
    "scan/cache.py",
    # the table's rows, and which files take part in the cross-file passes and what those give
    "render.py",
    "scan/rows.py",
    "scan/links.py",
    "scan/templates.py",
    "scan/argo_refs.py",
    "scan/kueue_refs.py",
    "scan/ray_refs.py",
    "scan/service_refs.py",
    "scan/spark_refs.py",
)
_READER_PACKAGES = ("slurm", "shell", "kubernetes", "argo", "katib")
_LINKED_KEPT = 8  # outcomes of the cross-file passes kept: the latest states of the linked files


def default_dir() -> str:
    """The cache folder: ``$MIGRATE_CACHE_DIR``, ``$XDG_CACHE_HOME/migrate`` or ``~/.cache/migrate``."""
    explicit = os.environ.get(ENV_VAR)
    if explicit:
        return explicit
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "migrate")


@functools.cache
def code_fingerprint() -> bytes:
    """A hash of the reader code and parser libraries: new code, new keys."""
    core = Path(__file__).resolve().parent.parent
    files = [core / name for name in _CORE_MODULES]
    for root in translators.__path__:
        for package in _READER_PACKAGES:
            files.extend(sorted((Path(root) / package).rglob("*.py")))
    digest = hashlib.blake2b(digest_size=20)
    for path in files:
        digest.update(f"{path.parent.name}/{path.name}".encode() + b"\0")
        try:
            digest.update(path.read_bytes())
        except OSError:
            digest.update(b"missing")
    digest.update(_installed_version("bashlex").encode())
    digest.update(f"PyYAML {yaml.__version__}".encode())
    digest.update(b"libyaml" if getattr(yaml, "__with_libyaml__", False) else b"pure")
    digest.update(f"{sys.version_info[0]}.{sys.version_info[1]}".encode())
    return digest.digest()


def _installed_version(package: str) -> str:
    """The version of the installed package, from the ``.dist-info`` folder beside it: loading
    ``importlib.metadata`` costs 15 ms, a tenth of a warm scan's start. Elsewhere (an egg, a
    zip), from ``importlib.metadata``; "absent" when it is not installed."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return "absent"
    folder = Path(next(iter(spec.submodule_search_locations))).parent
    prefix = f"{package}-"
    with contextlib.suppress(OSError):
        for entry in os.scandir(folder):
            name = entry.name
            if name.startswith(prefix) and name.endswith(".dist-info"):
                return name[len(prefix) : -len(".dist-info")]
    from importlib import metadata

    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "absent"


@functools.cache
def _salt() -> bytes:
    return f"{SCHEMA}|{__version__}|{ir.IR_VERSION}|".encode() + code_fingerprint()


def linked_key(files: Iterable[tuple[str, bytes]], values: tuple[tuple[str, str], ...] = ()) -> bytes:
    """The key of the cross-file passes' outcome over ``files``, (display path, key) in walk order,
    under the template values ``values`` (the passes fill templates too)."""
    digest = hashlib.blake2b(_salt(), digest_size=24)
    digest.update(json.dumps(values).encode() + b"|")
    for path, key in files:
        digest.update(json.dumps(path).encode() + key)
    return digest.digest()


def entry_key(
    data: bytes,
    job_like: bool,
    max_bytes: int,
    values: tuple[tuple[str, str], ...] = (),
    spank_options: tuple[SpankOption, ...] = (),
) -> bytes:
    """The cache key of a file's bytes, read under the given name rule, size limit, template values
    and the site's SPANK options."""
    digest = _key_prefix(job_like, max_bytes, values, spank_options).copy()
    digest.update(data)
    return digest.digest()


# The same for every file of a scan but for the name rule: hashed once, then copied for each file.
@functools.lru_cache(maxsize=8)
def _key_prefix(
    job_like: bool,
    max_bytes: int,
    values: tuple[tuple[str, str], ...],
    spank_options: tuple[SpankOption, ...],
) -> Any:
    digest = hashlib.blake2b(_salt(), digest_size=24)
    digest.update(b"J" if job_like else b"-")
    digest.update(f"{max_bytes}|".encode())
    # The values change what a template reads as: each set of them is its own entry.
    digest.update(json.dumps(values).encode() + b"|")
    # A site's plugin option is read where it would be an unknown one: each list is its own entry.
    digest.update(json.dumps([(o.name, o.plugin, o.takes_value) for o in spank_options]).encode() + b"|")
    return digest


@dataclass(frozen=True)
class Entry:
    """A cached result: the file as JSON (empty when the file is not reported), its facts and its
    table rows (FileRows as JSON)."""

    fragment: bytes
    facts: str
    rows: str = ""
    # False: the file is not reported. An entry read without its JSON (the table's) has an empty
    # fragment and says here whether there is one.
    reported: bool = True


def stamp(fragment: bytes, display: str) -> bytes:
    """The cached JSON (ASCII bytes) with the file's display path in place of the token."""
    if PATH_TOKEN_BYTES not in fragment:
        return fragment
    return fragment.replace(PATH_TOKEN_BYTES, _spelled(display).encode())


def stamp_text(text: str, display: str) -> str:
    """:func:`stamp` for JSON held as text."""
    if PATH_TOKEN_JSON not in text:
        return text
    return text.replace(PATH_TOKEN_JSON, _spelled(display))


def _spelled(display: str) -> str:
    """The path as a JSON string spells it between its quotes."""
    if display.isascii() and display.isprintable() and '"' not in display and "\\" not in display:
        return display  # nearly every path: the encoder escapes none of its characters
    return json.dumps(display)[1:-1]


def db_path(directory: str | os.PathLike[str]) -> str:
    """One file per table layout and code version: a new version never mixes with an old one."""
    return os.path.join(os.fspath(directory), f"{DB_PREFIX}{SCHEMA}-{code_fingerprint().hex()[:12]}.sqlite3")


def prune(directory: str | os.PathLike[str], keep: str, unused_days: float = UNUSED_DAYS) -> None:
    """Remove the cache files of other code versions that no scan used for ``unused_days``."""
    limit = time.time() - unused_days * 86400
    try:
        names = os.listdir(directory)
    except OSError:
        return
    for name in names:
        path = os.path.join(directory, name)
        if not name.startswith(DB_PREFIX) or path.startswith(keep):
            continue
        with contextlib.suppress(OSError):
            if os.stat(path).st_mtime < limit:
                os.remove(path)


def _checksum(*parts: bytes) -> int:
    # SQLite keeps no checksums of its own; a damaged row must read as a miss, not as output.
    checksum = 0
    for part in parts:
        checksum = zlib.crc32(part, checksum)
    return checksum


class ScanCache:
    """The cache of one folder, opened by the scanning process (workers never touch it).

    Every failure is quiet: a cache that cannot be opened is empty and a write
    that fails stops the writing, never the scan.
    """

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.path = db_path(directory)
        self._pending: list[tuple[bytes, bytes, str, str, int, int]] = []
        self._writable = True
        self._conn = self._open()
        if self._writable:
            prune(os.path.dirname(self.path), keep=self.path)

    def _open(self) -> sqlite3.Connection | None:
        with contextlib.suppress(OSError):  # an unwritable place: opened read-only below, if at all
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
        for attempt in range(2):
            try:
                return _prepare(sqlite3.connect(self.path, timeout=5.0))
            except sqlite3.Error as exc:
                # A damaged file is replaced once; a locked or read-only one is only read.
                if attempt or not _damaged(exc) or not _remove_database(self.path):
                    break
            except OSError:
                break
        self._writable = False
        return _open_read_only(self.path)

    def _entries(self, columns: str, keys: list[bytes]) -> list[tuple[object, ...]]:
        """``columns`` of the entries of ``keys``; none where the cache cannot be read."""
        if self._conn is None or not keys:
            return []
        marks = ",".join("?" * len(keys))
        try:
            query = f"SELECT {columns} FROM entries WHERE key IN ({marks})"
            return self._conn.execute(query, keys).fetchall()
        except sqlite3.Error:
            return []  # a missing table, a damaged page, a lock: all misses

    def get_many(self, keys: list[bytes]) -> dict[bytes, Entry]:
        """The entries found for ``keys``; damaged or unreadable ones are left out (misses)."""
        found: dict[bytes, Entry] = {}
        for row in self._entries("key, fragment, facts, rows, checksum", keys):
            entry = _decode(row)
            if entry is not None and isinstance(row[0], bytes):
                found[row[0]] = entry
        return found

    def get(self, key: bytes) -> Entry | None:
        return self.get_many([key]).get(key)

    def get_summaries(self, keys: list[bytes]) -> dict[bytes, Entry]:
        """The entries found for ``keys`` without their JSON (what the table needs: a fifth of the
        bytes), checked by their own checksum; see :meth:`get_fragments` for the JSON."""
        found: dict[bytes, Entry] = {}
        for key, size, facts, table_rows, checksum in self._entries(
            "key, length(fragment), facts, rows, summary_checksum", keys
        ):
            if not isinstance(facts, str) or not isinstance(table_rows, str) or not isinstance(size, int):
                continue
            if isinstance(key, bytes) and _checksum(facts.encode(), table_rows.encode()) == checksum:
                found[key] = Entry(b"", facts, table_rows, reported=size > 0)
        return found

    def get_fragments(self, keys: list[bytes]) -> dict[bytes, bytes]:
        """The JSON kept for ``keys`` (checked), where it is still there."""
        return {key: entry.fragment for key, entry in self.get_many(keys).items() if entry.fragment}

    def put(self, key: bytes, entry: Entry) -> None:
        if self._conn is None or not self._writable:
            return
        checksum = _checksum(entry.fragment, entry.facts.encode(), entry.rows.encode())
        summary = _checksum(entry.facts.encode(), entry.rows.encode())
        self._pending.append((key, entry.fragment, entry.facts, entry.rows, checksum, summary))
        if len(self._pending) >= _FLUSH_EVERY:
            self.flush()

    def get_linked(self, key: bytes) -> str | None:
        """The outcome of the cross-file passes kept under ``key`` (see :func:`linked_key`), if any."""
        if self._conn is None:
            return None
        try:
            row = self._conn.execute("SELECT value, checksum FROM linked WHERE key = ?", (key,)).fetchone()
        except sqlite3.Error:
            return None
        if row is None or not isinstance(row[0], str) or _checksum(row[0].encode()) != row[1]:
            return None
        return row[0]

    def put_linked(self, key: bytes, value: str) -> None:
        """Keep ``value``, and only the latest few others: a new state of the linked files makes a new one."""
        if self._conn is None or not self._writable:
            return
        try:
            with self._conn:
                self._conn.execute(
                    "INSERT OR REPLACE INTO linked VALUES (?, ?, ?)", (key, value, _checksum(value.encode()))
                )
                self._conn.execute(
                    "DELETE FROM linked WHERE rowid NOT IN"
                    " (SELECT rowid FROM linked ORDER BY rowid DESC LIMIT ?)",
                    (_LINKED_KEPT,),
                )
        except sqlite3.Error:
            self._writable = False

    def put_many(self, items: Iterable[tuple[bytes, Entry]]) -> None:
        for key, entry in items:
            self.put(key, entry)

    def flush(self) -> None:
        if self._conn is None or not self._pending:
            return
        rows, self._pending = self._pending, []
        try:
            with self._conn:
                self._conn.executemany("INSERT OR REPLACE INTO entries VALUES (?, ?, ?, ?, ?, ?)", rows)
        except sqlite3.Error as exc:
            # A full disk or a damaged file: stop writing and keep scanning; a damaged
            # file is removed so that the next run starts a clean cache.
            self._writable = False
            if _damaged(exc):
                self.close()
                _remove_database(self.path)

    def close(self) -> None:
        if self._conn is None:
            return
        self.flush()
        if self._conn is not None:
            self._conn.close()
            self._conn = None


def _decode(row: tuple[object, ...]) -> Entry | None:
    _, fragment, facts, rows, checksum = row[:5]
    if not isinstance(fragment, bytes) or not isinstance(facts, str) or not isinstance(rows, str):
        return None
    if not isinstance(checksum, int) or _checksum(fragment, facts.encode(), rows.encode()) != checksum:
        return None
    return Entry(fragment, facts, rows, reported=bool(fragment))


def _prepare(conn: sqlite3.Connection) -> sqlite3.Connection:
    try:
        # WAL lets a second scan read while this one writes. Some network file systems refuse
        # it; the default journal still works there.
        with contextlib.suppress(sqlite3.OperationalError):
            conn.execute("PRAGMA journal_mode=WAL")
        # No fsync: a cache damaged by a power cut is detected and rebuilt, never trusted.
        conn.execute("PRAGMA synchronous=OFF")
        conn.execute(
            "CREATE TABLE IF NOT EXISTS entries (key BLOB PRIMARY KEY,"
            " fragment BLOB NOT NULL, facts TEXT NOT NULL, rows TEXT NOT NULL, checksum INTEGER NOT NULL,"
            " summary_checksum INTEGER NOT NULL)"
        )
        conn.execute(
            "CREATE TABLE IF NOT EXISTS linked"
            " (key BLOB PRIMARY KEY, value TEXT NOT NULL, checksum INTEGER NOT NULL)"
        )
        conn.execute("SELECT count(*) FROM entries WHERE key = x''").fetchone()
    except sqlite3.Error:
        conn.close()
        raise
    return conn


def _open_read_only(path: str) -> sqlite3.Connection | None:
    try:
        conn = sqlite3.connect(Path(path).resolve().as_uri() + "?mode=ro", uri=True, timeout=5.0)
    except (sqlite3.Error, OSError, ValueError):
        return None
    try:
        conn.execute("SELECT count(*) FROM entries WHERE key = x''").fetchone()
    except sqlite3.Error:
        conn.close()
        return None
    return conn


def _damaged(exc: sqlite3.Error) -> bool:
    return getattr(exc, "sqlite_errorname", "") in ("SQLITE_NOTADB", "SQLITE_CORRUPT")


def _remove_database(path: str) -> bool:
    try:
        for suffix in ("", "-wal", "-shm", "-journal"):
            if os.path.exists(path + suffix):
                os.remove(path + suffix)
    except OSError:
        return False
    return True


__all__ = [
    "ENV_VAR",
    "PATH_TOKEN",
    "Entry",
    "ScanCache",
    "code_fingerprint",
    "default_dir",
    "entry_key",
    "linked_key",
    "stamp",
    "stamp_text",
]
