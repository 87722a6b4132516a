"""The scan cache: hits and misses, edits, damage, relocation, location."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from migrate.scan import cache, scanner
from migrate.scan import pool as scan_pool
from migrate.scan.results import ScanOptions
from migrate.site.config import SpankOption

SBATCH = """#!/bin/bash
#SBATCH --job-name=train
#SBATCH --nodes=2
#SBATCH --gres=gpu:4
#SBATCH --time=01:00:00
module load cuda/12.2
srun python train.py --data /fsx/data
"""
SCRONTAB = "#SCRON -p cpu -t 00:10:00\n0 2 * * * /home/ops/bin/cleanup.sh\n"
MANIFEST = """apiVersion: batch/v1
kind: Job
metadata:
  name: eval
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: eval
          image: nvcr.io/nvidia/pytorch:24.03-py3
          resources: {limits: {nvidia.com/gpu: 1}}
"""


@pytest.fixture
def site(tmp_path: Path) -> Path:
    root = tmp_path / "site"
    (root / "jobs").mkdir(parents=True)
    (root / "jobs" / "train.sbatch").write_text(SBATCH)
    (root / "jobs" / "nightly").write_text(SCRONTAB)
    (root / "eval.yaml").write_text(MANIFEST)
    (root / "notes.txt").write_text("nothing to see\n")  # not reported, cached as such
    (root / "empty.sbatch").write_text("")
    return root


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files read into jobs (cache misses), by display path."""
    seen: list[str] = []
    real = scan_pool.compute

    def counting(miss: scan_pool.Miss) -> scan_pool.Outcome | None:
        seen.append(miss.path)
        return real(miss)

    monkeypatch.setattr(scan_pool, "compute", counting)
    return seen


def _scan(root: Path, cache_dir: Path | None) -> dict[str, Any]:
    options = ScanOptions(cache=str(cache_dir) if cache_dir else None, jobs=1)
    return scanner.scan([str(root)], options).to_dict()


def test_second_scan_reads_nothing_and_gives_the_same_result(
    site: Path, tmp_path: Path, reads: list[str]
) -> None:
    uncached = _scan(site, None)
    reads.clear()
    first = _scan(site, tmp_path / "cache")
    assert len(reads) == 5  # every file with content to read; none of them known yet
    reads.clear()
    second = _scan(site, tmp_path / "cache")
    assert reads == []
    assert first == second == uncached


def test_an_edit_is_read_again_even_with_the_same_size_and_time(
    site: Path, tmp_path: Path, reads: list[str]
) -> None:
    _scan(site, tmp_path / "cache")
    script = site / "jobs" / "train.sbatch"
    before = script.stat()
    script.write_text(SBATCH.replace("--nodes=2", "--nodes=8"))
    os.utime(script, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert script.stat().st_size == before.st_size
    reads.clear()
    result = scanner.scan([str(site)], ScanOptions(cache=str(tmp_path / "cache"), jobs=1))
    assert reads == [str(script)]
    (job,) = [j for j in result.jobs if j.id == str(script)]
    assert job.total_nodes() == 8


def test_a_moved_tree_is_served_from_the_cache_with_its_new_paths(
    site: Path, tmp_path: Path, reads: list[str]
) -> None:
    _scan(site, tmp_path / "cache")
    moved = tmp_path / "elsewhere" / "copy"
    shutil.copytree(site, moved)
    reads.clear()
    relocated = _scan(moved, tmp_path / "cache")
    assert reads == []
    assert relocated == _scan(moved, None)
    text = str(relocated)
    assert str(site) not in text
    ids = [j["id"] for f in relocated["files"] for j in f["jobs"]]
    assert f"{moved}/jobs/nightly@2" in ids and f"{moved}/jobs/train.sbatch" in ids


def test_a_file_that_is_not_a_database_is_replaced(site: Path, tmp_path: Path) -> None:
    folder = tmp_path / "cache"
    folder.mkdir()
    Path(cache.db_path(folder)).write_bytes(b"this is not sqlite" * 500)
    assert _scan(site, folder) == _scan(site, None)
    store = cache.ScanCache(folder)
    assert store.get_many([b"x"]) == {}  # a working, fresh database again
    store.close()


def test_a_damaged_row_is_a_miss(site: Path, tmp_path: Path, reads: list[str]) -> None:
    folder = tmp_path / "cache"
    expected = _scan(site, folder)
    with sqlite3.connect(cache.db_path(folder)) as conn:
        conn.execute("UPDATE entries SET fragment = CAST('{\"path\": 1}' AS BLOB)")
    reads.clear()
    assert _scan(site, folder) == expected
    assert len(reads) == 5


def test_an_unusable_cache_folder_only_costs_the_cache(site: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("in the way of the cache folder")
    assert _scan(site, blocker / "cache") == _scan(site, None)


def test_the_key_covers_content_name_rule_and_size_limit() -> None:
    key = cache.entry_key(b"#!/bin/bash\n", True, 1000)
    assert key == cache.entry_key(b"#!/bin/bash\n", True, 1000)
    assert key != cache.entry_key(b"#!/bin/bash \n", True, 1000)
    assert key != cache.entry_key(b"#!/bin/bash\n", False, 1000)
    assert key != cache.entry_key(b"#!/bin/bash\n", True, 1001)


def test_the_key_covers_the_sites_own_spank_options() -> None:
    ssd = SpankOption("ssd-size", "nvme-scratch")
    key = cache.entry_key(b"#!/bin/bash\n#SBATCH --ssd-size=1G\n", True, 1000)
    with_site = cache.entry_key(b"#!/bin/bash\n#SBATCH --ssd-size=1G\n", True, 1000, (), (ssd,))
    assert with_site != key
    flag = SpankOption("ssd-size", "nvme-scratch", "none")
    assert cache.entry_key(b"#!/bin/bash\n#SBATCH --ssd-size=1G\n", True, 1000, (), (flag,)) != with_site


def test_a_cached_scan_reads_a_file_again_under_other_site_options(tmp_path: Path) -> None:
    (tmp_path / "jobs").mkdir()
    (tmp_path / "jobs" / "a.sbatch").write_text("#!/bin/bash\n#SBATCH --ssd-size=800G\nhostname\n")
    folder = str(tmp_path / "cache")

    def codes(spank: tuple[SpankOption, ...]) -> list[str]:
        options = ScanOptions(cache=folder, jobs=1, spank_options=spank)
        return [d.code for d in scanner.scan([str(tmp_path / "jobs")], options).diagnostics]

    assert codes(()) == ["SLURM-UNKNOWN-OPTION"]
    assert codes((SpankOption("ssd-size", "nvme-scratch"),)) == ["SLURM-PLUGIN-OPTION"]
    assert codes(()) == ["SLURM-UNKNOWN-OPTION"]  # from the cache, as first read


def test_the_location_follows_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MIGRATE_CACHE_DIR", "/srv/cache")
    monkeypatch.setenv("XDG_CACHE_HOME", "/xdg")
    assert cache.default_dir() == "/srv/cache"
    monkeypatch.delenv("MIGRATE_CACHE_DIR")
    assert cache.default_dir() == os.path.join("/xdg", "migrate")
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", "/home/someone")
    assert cache.default_dir() == "/home/someone/.cache/migrate"


def test_the_corpus_reads_the_same_through_the_cache(tmp_path: Path) -> None:
    corpus = str(Path(__file__).resolve().parent.parent / "corpus")
    plain = scanner.scan([corpus], ScanOptions(jobs=1))
    for _ in range(2):  # filling the cache, then served by it
        cached = scanner.scan([corpus], ScanOptions(jobs=1, cache=str(tmp_path / "cache")))
        assert cached.files == plain.files
        assert cached.to_dict() == plain.to_dict()


def test_files_of_other_code_versions_go_when_unused(tmp_path: Path) -> None:
    folder = tmp_path / "cache"
    folder.mkdir()
    stale, recent, unrelated = (
        folder / n for n in ("scan-cache-2-0000.sqlite3", "scan-cache-2-1111.sqlite3", "notes")
    )
    month_ago = time.time() - 30 * 86400
    for path in (stale, recent, unrelated):
        path.write_text("x")
    for path in (stale, unrelated):
        os.utime(path, (month_ago, month_ago))
    cache.ScanCache(folder).close()
    assert not stale.exists()
    assert recent.exists() and unrelated.exists()
    assert Path(cache.db_path(folder)).exists()


def test_every_reader_package_is_in_the_fingerprint() -> None:
    """A reader whose code is not hashed would serve results of its old code from the cache."""
    from migrate import translators

    with_readers = {p.parent.name for root in translators.__path__ for p in Path(root).glob("*/reader.py")}
    assert with_readers <= set(cache._READER_PACKAGES)


@given(st.text())
def test_a_stamped_path_reads_back_as_the_path(display: str) -> None:
    """Whatever the path's characters, the stamped JSON holds it as the encoder spells it."""
    fragment = json.dumps({"path": cache.PATH_TOKEN, "note": f"in {cache.PATH_TOKEN}"}).encode()
    assert json.loads(cache.stamp(fragment, display)) == {"path": display, "note": f"in {display}"}
    rows = json.dumps([[f"{cache.PATH_TOKEN}:3: x"]])
    assert json.loads(cache.stamp_text(rows, display)) == [[f"{display}:3: x"]]


def test_a_library_version_is_read_beside_the_library_as_importlib_reads_it() -> None:
    from importlib import metadata

    assert cache._installed_version("bashlex") == metadata.version("bashlex")
    assert cache._installed_version("no_such_package_here") == "absent"
