"""Every measurement of the benchmark runs, once, on a small site: a change to what they call (the
scan's byte stream, the CLI) breaks here rather than in the middle of a 10,000-file run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import REPO

from benchmarks import measure
from benchmarks.generate import BUCKETS, bucket_of, generate, site_files


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("bench") / "site"
    generate(out, 40, seed=3, repo=REPO)
    return out


@pytest.mark.parametrize("name", sorted(set(measure.MEASUREMENTS) - {"baseline"}))
def test_each_measurement_runs_on_a_small_site(
    name: str, site: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [name, "--site", str(site), "--cache", str(tmp_path / "cache"), "--jobs", "1"]
    if name == "scan-bucket":
        sizes = {bucket_of(p.stat().st_size) for p in site_files(site)}
        argv += ["--bucket", next(label for label, _ in BUCKETS if label in sizes)]
    measure.main(argv)
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert "skipped" in result or result["seconds"] >= 0, result
