"""Scanning many files: the content-hash cache and worker processes, same output as one process.

The parent walks the tree in windows of ``CHUNK_FILES`` files. It reads each
file, hashes it and looks the hash up in the cache, which is cheap; only the
files the cache does not know (misses) are read into jobs, and once a scan has
seen ``POOL_AFTER_MISSES`` of them the misses of each window go to a pool of
worker processes as one task. Windows are emitted strictly in walk order, so
the output is the same, byte for byte, whatever the number of workers. A
warm re-scan never starts the pool at all.

Scans of fewer than ``PARALLEL_MIN_FILES`` files stay in the calling process:
starting workers costs more than it saves there. Results travel as JSON
text, which is cheap to send and is what the cache keeps anyway; only the
parent opens the cache.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import multiprocessing
import multiprocessing.pool
import os
import signal
from collections import deque
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any, NamedTuple

from migrate.scan import cache
from migrate.scan.charts import is_chart
from migrate.scan.discover import Candidate, Skipped
from migrate.scan.files import SITE_CONFIG_NAMES, job_like_name, load, load_readers, read_data, scan_item
from migrate.scan.garbage import collect_less, collecting_less, freeze_survivors
from migrate.scan.jsonstream import Rendered, from_rendered, render
from migrate.scan.results import FileFacts, FileResult, ScanOptions, job_sizes
from migrate.scan.rows import FileRows
from migrate.scan.templates import Values
from migrate.site.config import SpankOption
from migrate.translators.interfaces import ReadContext
from migrate.yamlload import parsed_once

if TYPE_CHECKING:
    from migrate.scan.links import Ahead

PARALLEL_MIN_FILES = 200
POOL_AFTER_MISSES = 64
# Each window costs the parent's pool threads a round trip (about 1.7 ms of CPU here, taken from
# the workers' cores); and a window of at least POOL_AFTER_MISSES misses starts the pool at the
# first window of a cold scan instead of reading that window in this process alone.
CHUNK_FILES = 96
WINDOWS_PER_WORKER = 4  # in flight at once: keeps workers busy and memory bounded

Item = Candidate | Skipped


class Outcome(NamedTuple):
    """A file's result: JSON (possibly holding cache.PATH_TOKEN; empty when not reported), its
    facts and its table rows (FileRows as JSON)."""

    path: str
    json: bytes
    facts: FileFacts | None
    rows: str
    key: bytes | None  # what the result is kept under: its cache key, else a hash of its JSON and bytes
    new: bool = False  # the result belongs in the cache
    ahead: Ahead | None = None  # what the cross-file passes read of a linked file just read


class Miss(NamedTuple):
    """A file whose content must be read into jobs."""

    path: str
    data: bytes
    job_like: bool
    key: bytes | None  # None when there is no cache: read under the real path
    values: tuple[tuple[str, str], ...] = ()
    spank_options: tuple[SpankOption, ...] = ()
    cached: bool = True  # False: the scan has no cache, so a result needs no key of its own


def worker_count(options: ScanOptions) -> int:
    if options.jobs is not None:
        return max(1, options.jobs)
    try:
        return len(os.sched_getaffinity(0))  # the cores this process may use, not the machine's
    except AttributeError:
        return os.cpu_count() or 1


def _fresh(
    result: FileResult | None, data: bytes | None = None, values: Values = (), keyed: bool = True
) -> Outcome | None:
    """A result computed here and not cached; ``data``: the file's bytes, else read as the passes do;
    ``keyed``: the result gets a hash of its JSON and bytes (a scan without a cache needs none)."""
    if result is None:
        return None
    if data is None:
        data = _bytes_at(result.path)
    text = render(result).encode()
    key = hashlib.blake2b(text + b"\0" + data, digest_size=24).digest() if keyed else None
    facts, rows, ahead = _facts_and_rows(result, data, values)
    return Outcome(result.path, text, facts, rows, key, ahead=ahead)


def _facts_and_rows(result: FileResult, data: bytes, values: Values) -> tuple[FileFacts, str, Ahead | None]:
    """The file's facts, its rows as JSON, and, for a file that takes part in the cross-file
    passes, what they read of it (here, from its bytes, rather than again in the parent)."""
    from migrate.scan import links  # with the readers: only for a file that is read

    sizes = job_sizes(result)
    linked = links.takes_part(result, data, values)
    rows = FileRows.of(result, sizes, linked)
    ahead = links.ahead_of(result, values, data) if linked else None
    return FileFacts.of(result, sizes), rows.to_json(), ahead


def _bytes_at(path: str) -> bytes:
    """What the cross-file passes read of a file that was not read here (skipped, too large, a chart)."""
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError:
        return b""


def _stage(item: Item, options: ScanOptions, cached: bool) -> Outcome | Miss | None:
    """Read one item: settled when it is cheap (skipped, unreadable ...), else a Miss to look up."""
    if isinstance(item, Skipped):
        return _fresh(scan_item(item, options))
    path = item.display
    if os.path.basename(path) in SITE_CONFIG_NAMES:
        return None
    if is_chart(path):
        return _fresh(scan_item(item, options))  # helm reads the whole folder: not cached by one file
    loaded = load(item, options)
    if not isinstance(loaded, bytes):
        return _fresh(loaded)  # unreadable, binary or too large: cheap, never cached
    job_like = job_like_name(path)
    if not cached or b"\0" in loaded:  # a NUL byte could spell the path token
        return Miss(path, loaded, job_like, None, options.values, options.spank_options, cached)
    key = cache.entry_key(loaded, job_like, options.max_bytes, options.values, options.spank_options)
    return Miss(path, loaded, job_like, key, options.values, options.spank_options)


def _settle(staged: Outcome | Miss | None, found: dict[bytes, cache.Entry]) -> Outcome | Miss | None:
    if not isinstance(staged, Miss) or staged.key is None:
        return staged
    entry = found.get(staged.key)
    if entry is None:
        return staged
    if not entry.reported:
        return None  # known not to be worth reporting
    try:
        return Outcome(staged.path, entry.fragment, FileFacts.from_json(entry.facts), entry.rows, staged.key)
    except (ValueError, TypeError):
        return staged  # damaged facts: read the file again


def prepare(
    items: list[Item], options: ScanOptions, store: cache.ScanCache | None, fragments: bool = True
) -> list[Outcome | Miss | None]:
    """What the parent settles by itself for a window of items (hits, unread files), and the Misses;
    ``fragments``: False leaves the cached JSON of a hit unread (the table needs its rows only)."""
    staged = [_stage(item, options, store is not None) for item in items]
    keys = [s.key for s in staged if isinstance(s, Miss) and s.key is not None]
    found: dict[bytes, cache.Entry] = {}
    if store is not None and keys:
        found = store.get_many(keys) if fragments else store.get_summaries(keys)
    return [_settle(s, found) for s in staged]


def compute(miss: Miss) -> Outcome | None:
    with parsed_once():  # what the passes read of a file again, they take from its first reading
        return _compute(miss)


def _compute(miss: Miss) -> Outcome | None:
    context = ReadContext(spank=miss.spank_options)
    if miss.key is None:
        result = read_data(miss.data, miss.path, miss.job_like, context, miss.values)
        return _fresh(result, miss.data, miss.values, keyed=miss.cached)
    result = read_data(miss.data, cache.PATH_TOKEN, miss.job_like, context, miss.values)
    if result is None:
        return Outcome(
            miss.path, b"", None, "", miss.key, new=True
        )  # cached too, so that it is not read again
    facts, rows, ahead = _facts_and_rows(result, miss.data, miss.values)
    return Outcome(miss.path, render(result).encode(), facts, rows, miss.key, new=True, ahead=ahead)


def _compute_all(misses: list[Miss]) -> list[Outcome | None]:
    outcomes = [compute(m) for m in misses]
    freeze_survivors()
    return outcomes


def _chunks(items: Iterable[Item], size: int, last_pieces: int = 1) -> Iterator[list[Item]]:
    """Windows of ``size`` items; the last two windows' worth in ``last_pieces`` smaller ones, so
    that the workers run out of work together rather than one window apart."""
    iterator = iter(items)
    ahead = list(itertools.islice(iterator, 2 * size))
    while ahead:
        more = list(itertools.islice(iterator, size))
        if not more:
            step = max(1, -(-len(ahead) // last_pieces))
            for start in range(0, len(ahead), step):
                yield ahead[start : start + step]
            return
        yield ahead[:size]
        ahead = ahead[size:] + more


def _start_pool(workers: int) -> multiprocessing.pool.Pool:
    # fork: workers start at once and inherit the imported readers; elsewhere the default.
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else None)
    load_readers()
    return _Pool(workers, initializer=_init_worker, context=context)


class _Pool(multiprocessing.pool.Pool):
    """``multiprocessing.pool.Pool`` with two costs of a scan's traffic taken out.

    - Its worker handler wakes only when a worker exits or the pool changes state. The
      standard pool also wakes it whenever a result waits in the pipe, and it does nothing
      with the result, so it spins until the result thread has read it: 0.2 s of the scanning
      process's CPU on 10,000 files, taken from the workers' two cores. Results reach
      ``apply_async`` through the result thread alone; worker exits still wake the handler
      (each worker's sentinel), and so do ``close`` and ``terminate`` (the change notifier).
    - Its pipes hold a whole window of files (half a megabyte of bytes one way, of JSON the
      other). In a 64 KiB pipe, a window passes in a dozen pieces, each waiting for the
      scanning process's thread to get the interpreter lock back from the main thread; the
      worker waits meanwhile (0.05 s of each worker's time on 10,000 files).
    """

    def _get_sentinels(self) -> list[Any]:
        return [self._change_notifier._reader]  # type: ignore[attr-defined]

    def _setup_queues(self) -> None:
        super()._setup_queues()  # type: ignore[misc]
        for queue in (self._inqueue, self._outqueue):  # type: ignore[attr-defined]
            _widen(queue._reader)


PIPE_BYTES = 1 << 20  # Linux's default ceiling for a pipe an unprivileged process sizes


def _widen(connection: Any) -> None:
    """Make the pipe behind ``connection`` hold ``PIPE_BYTES``, where the system allows it."""
    try:
        import fcntl
    except ImportError:  # not a POSIX system
        return
    setting = getattr(fcntl, "F_SETPIPE_SZ", None)  # Linux only: elsewhere the pipe stays as it is
    if setting is not None:
        with contextlib.suppress(OSError):
            fcntl.fcntl(connection.fileno(), setting, PIPE_BYTES)


def _init_worker() -> None:
    # Ctrl-C is the parent's to handle; workers would each print a traceback.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    collect_less()


class _Window:
    """A window of files in walk order; its misses are computed here or in the pool."""

    def __init__(self, prepared: list[Outcome | Miss | None]) -> None:
        self.prepared = prepared
        self.misses = [p for p in prepared if isinstance(p, Miss)]
        self.computed: list[Outcome | None] | None = None
        self.pending: multiprocessing.pool.AsyncResult[list[Outcome | None]] | None = None

    def ready(self) -> bool:
        return self.pending is None or self.pending.ready()

    def outcomes(self) -> Iterator[Outcome | None]:
        computed = iter(self.pending.get() if self.pending is not None else self.computed or [])
        for p in self.prepared:
            yield next(computed) if isinstance(p, Miss) else p


def _outcomes(
    items: Iterator[Item], options: ScanOptions, store: cache.ScanCache | None, fragments: bool = True
) -> Iterator[Outcome | None]:
    with collecting_less():  # the windows not given to workers are read here
        yield from _windows(items, options, store, fragments)


def _windows(
    items: Iterator[Item], options: ScanOptions, store: cache.ScanCache | None, fragments: bool = True
) -> Iterator[Outcome | None]:
    workers = worker_count(options)
    head = list(itertools.islice(items, PARALLEL_MIN_FILES))
    parallel = workers > 1 and len(head) >= PARALLEL_MIN_FILES
    pool: multiprocessing.pool.Pool | None = None
    seen_misses = 0
    in_flight: deque[_Window] = deque()
    try:
        for chunk in _chunks(itertools.chain(head, items), CHUNK_FILES, 4 * workers if parallel else 1):
            window = _Window(prepare(chunk, options, store, fragments))
            seen_misses += len(window.misses)
            if pool is None and parallel and seen_misses >= POOL_AFTER_MISSES:
                pool = _start_pool(workers)
            if pool is not None and window.misses:
                window.pending = pool.apply_async(_compute_all, (window.misses,))
            else:
                window.computed = _compute_all(window.misses)
            in_flight.append(window)
            while in_flight and (len(in_flight) > workers * WINDOWS_PER_WORKER or in_flight[0].ready()):
                yield from in_flight.popleft().outcomes()
        while in_flight:
            yield from in_flight.popleft().outcomes()
    finally:
        if pool is not None:
            pool.terminate()


def run(items: Iterator[Item], options: ScanOptions, fragments: bool = True) -> Iterator[Rendered]:
    """Each reported file, in the order of ``items``, the cache filled as a side effect;
    ``fragments``: False gives a file found in the cache with no JSON (``b""``), only its rows."""
    store = cache.ScanCache(options.cache) if options.cache is not None else None
    try:
        for out in _outcomes(items, options, store, fragments):
            if out is None:
                continue
            if out.new and out.key is not None and store is not None:
                facts = out.facts.to_json() if out.facts else ""
                store.put(out.key, cache.Entry(out.json, facts, out.rows))
            if out.facts is not None and (out.json or not fragments):
                stamped = cache.stamp(out.json, out.path), cache.stamp_text(out.rows, out.path)
                yield Rendered(out.path, *stamped, out.facts, out.key, out.ahead)
    finally:
        if store is not None:
            store.close()


def run_objects(items: Iterator[Item], options: ScanOptions) -> Iterator[FileResult]:
    """The same files as :func:`run`, as objects."""
    if options.cache is None:
        head = list(itertools.islice(items, PARALLEL_MIN_FILES))
        items = itertools.chain(head, items)
        if worker_count(options) == 1 or len(head) < PARALLEL_MIN_FILES:
            with collecting_less():
                for item in items:  # read straight into objects: no JSON round trip
                    result = scan_item(item, options)
                    if result is not None:
                        yield result
            return
    for rendered in run(items, options):
        yield from_rendered(rendered)


__all__ = [
    "CHUNK_FILES",
    "PARALLEL_MIN_FILES",
    "POOL_AFTER_MISSES",
    "Miss",
    "Outcome",
    "compute",
    "prepare",
    "run",
    "run_objects",
    "worker_count",
]
