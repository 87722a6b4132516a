"""Worker processes change nothing: the same files, results and order as one process."""

from __future__ import annotations

import io
import multiprocessing.pool
from pathlib import Path

import pytest

from migrate.scan import jsonstream, scanner
from migrate.scan import pool as scan_pool
from migrate.scan.results import ScanOptions

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def pool_starts(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count the pools started, so that a test knows the workers really ran."""
    started: list[int] = []
    real = scan_pool._start_pool

    def counting(workers: int) -> multiprocessing.pool.Pool:
        started.append(workers)
        return real(workers)

    monkeypatch.setattr(scan_pool, "_start_pool", counting)
    return started


@pytest.fixture
def small_windows(monkeypatch: pytest.MonkeyPatch) -> None:
    """Workers from the first file on, in windows of 5, so that a small tree spans many tasks."""
    monkeypatch.setattr(scan_pool, "PARALLEL_MIN_FILES", 1)
    monkeypatch.setattr(scan_pool, "POOL_AFTER_MISSES", 1)
    monkeypatch.setattr(scan_pool, "CHUNK_FILES", 5)


@pytest.fixture(scope="module")
def generated_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    site = tmp_path_factory.mktemp("generated") / "site"
    with pytest.MonkeyPatch.context() as patch:
        patch.syspath_prepend(str(REPO))  # benchmarks/ is not installed: it runs from the repository
        from benchmarks.generate import generate

        generate(site, 500, seed=11)
    return site


def _json(paths: list[str], options: ScanOptions) -> str:
    out = io.BytesIO()
    jsonstream.write_scan(scanner.iter_rendered(paths, options), out)
    return out.getvalue().decode()


def test_corpus_in_parallel_equals_one_process(small_windows: None, pool_starts: list[int]) -> None:
    corpus = [str(REPO / "corpus")]
    serial = scanner.scan(corpus, ScanOptions(jobs=1))
    parallel = scanner.scan(corpus, ScanOptions(jobs=2))
    assert pool_starts == [2]
    assert [f.path for f in parallel.files] == [f.path for f in serial.files]
    assert parallel.files == serial.files
    assert _json(corpus, ScanOptions(jobs=2)) == _json(corpus, ScanOptions(jobs=1))


def test_generated_site_in_parallel_equals_one_process(generated_site: Path, pool_starts: list[int]) -> None:
    paths = [str(generated_site)]
    serial = _json(paths, ScanOptions(jobs=1))
    assert serial.count("\n") > 480  # one line per reported file: all but the few template-value files
    assert _json(paths, ScanOptions(jobs=2)) == serial
    assert pool_starts == [2]


def test_generated_site_through_the_cache_equals_one_process(
    generated_site: Path, tmp_path: Path, pool_starts: list[int]
) -> None:
    paths = [str(generated_site)]
    serial = _json(paths, ScanOptions(jobs=1))
    cached = ScanOptions(jobs=2, cache=str(tmp_path / "cache"))
    assert _json(paths, cached) == serial  # cold: computed by the workers
    assert _json(paths, cached) == serial  # warm: all from the cache
    assert pool_starts == [2]  # the warm scan needed no workers


def test_objects_in_parallel_equal_one_process(generated_site: Path) -> None:
    paths = [str(generated_site)]
    assert scanner.scan(paths, ScanOptions(jobs=2)).files == scanner.scan(paths, ScanOptions(jobs=1)).files


def test_small_scans_stay_in_process(pool_starts: list[int]) -> None:
    scanner.scan([str(REPO / "corpus" / "sample-site")], ScanOptions(jobs=2))
    assert pool_starts == []


def test_a_scan_without_a_cache_hashes_no_result(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A result's own key (a hash of its JSON and bytes) names it in a cache; without one it is not made."""
    hashed: list[int] = []
    real = scan_pool.hashlib.blake2b

    def counting(*args: object, **kwargs: object) -> object:
        hashed.append(1)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(scan_pool.hashlib, "blake2b", counting)
    site = [str(REPO / "corpus" / "sample-site")]
    files = list(scanner.iter_rendered(site, ScanOptions(jobs=1)))
    assert files and all(f.key is None for f in files)
    assert hashed == []
    assert _json(site, ScanOptions(jobs=1)) == _json(site, ScanOptions(jobs=1, cache=str(tmp_path / "c")))


def test_a_cold_scan_reads_no_file_in_the_parent(
    generated_site: Path, monkeypatch: pytest.MonkeyPatch, pool_starts: list[int]
) -> None:
    """A window holds enough misses to start the pool: the first window of a cold scan goes to the
    workers, not to the parent alone while the other core waits."""
    in_parent: list[str] = []
    real = scan_pool.compute

    def counting(miss: scan_pool.Miss) -> scan_pool.Outcome | None:
        in_parent.append(miss.path)  # a forked worker appends to its own copy
        return real(miss)

    monkeypatch.setattr(scan_pool, "compute", counting)
    lines = _json([str(generated_site)], ScanOptions(jobs=2)).count("\n")
    assert pool_starts == [2] and lines > 480
    assert in_parent == []


@pytest.mark.parametrize("count", [1, 95, 96, 191, 192, 193, 500, 1000])
def test_the_last_windows_are_cut_small_so_the_workers_end_together(count: int) -> None:
    """Every item once, in order, in windows of the full size but for the last two windows' worth,
    which come in as many smaller pieces as asked: a worker is not left reading a whole window
    while the other waits."""
    windows = list(scan_pool._chunks(range(count), 96, 8))  # type: ignore[arg-type]
    assert [i for w in windows for i in w] == list(range(count))
    full = [len(w) for w in windows if len(w) == 96]
    tail = windows[len(full) :]
    assert all(len(w) == 96 for w in windows[: len(full)])
    assert sum(map(len, tail)) == count - 96 * len(full) and sum(map(len, tail)) <= 2 * 96
    assert 1 <= len(tail) <= 8
    assert max(map(len, tail)) <= -(-2 * 96 // 8)


def test_the_pool_passes_a_window_in_one_piece_and_leaves_results_to_its_result_thread() -> None:
    fcntl = pytest.importorskip("fcntl")
    if not hasattr(fcntl, "F_GETPIPE_SZ"):
        pytest.skip("pipe sizes are set on Linux only")
    pool = scan_pool._start_pool(2)
    try:
        for queue in (pool._inqueue, pool._outqueue):  # type: ignore[attr-defined]
            assert fcntl.fcntl(queue._reader.fileno(), fcntl.F_GETPIPE_SZ) >= scan_pool.PIPE_BYTES
        # the worker handler is woken by the workers and the pool's state, not by waiting results
        assert pool._outqueue._reader not in pool._get_sentinels()  # type: ignore[attr-defined]
        assert pool.apply_async(sum, ([1, 2],)).get(timeout=30) == 3
    finally:
        pool.terminate()
