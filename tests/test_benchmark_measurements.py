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


def test_the_instruction_count_is_read_from_callgrind_and_its_program_scans(site: Path) -> None:
    """The count is callgrind's last 'Collected' line; the program it counts runs as written (here
    without valgrind), so a change to the scan's interface breaks here, not in a long count."""
    import subprocess
    import sys

    from benchmarks import instructions

    printed = "==41== Events    : Ir\n==41== Collected : 6677371349\n==41==\n==41== I   refs: 6,677,371,349\n"
    assert instructions.collected(printed) == 6_677_371_349
    with pytest.raises(ValueError):
        instructions.collected("==41== Events    : Ir\n")
    for code, args in ((instructions.IMPORTS, []), (instructions.SCAN, [str(site)])):
        done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=REPO)
        assert done.returncode == 0, done.stderr
