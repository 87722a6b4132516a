"""The CLI through its real entry point: exit codes, JSON on stdout, no tracebacks."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SBATCH = "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --frobnicate=3\nsrun hostname\n"


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from migrate.cli import main; main()", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
    )


def test_scan_json_and_strict(tmp_path: Path) -> None:
    (tmp_path / "a.sbatch").write_text(SBATCH)
    res = run("scan", "--format", "json", str(tmp_path))
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["summary"]["jobs"] == 1
    strict = run("scan", "--strict", "--format", "json", str(tmp_path))
    assert strict.returncode == 1
    assert "Traceback" not in strict.stderr


def test_scan_table(tmp_path: Path) -> None:
    (tmp_path / "a.sbatch").write_text(SBATCH)
    res = run("scan", str(tmp_path))
    assert res.returncode == 0
    assert "a.sbatch" in res.stdout and "SLURM-UNKNOWN-OPTION" in res.stdout
    assert "1 jobs" in res.stdout


def test_bad_usage_exits_2(tmp_path: Path) -> None:
    missing = run("scan", str(tmp_path / "nope"))
    assert missing.returncode == 2
    assert "no such file or folder" in missing.stderr
    assert "Traceback" not in missing.stderr
    bad_flag = run("scan", "--format", "xml", str(tmp_path))
    assert bad_flag.returncode == 2
    assert "Traceback" not in bad_flag.stderr
