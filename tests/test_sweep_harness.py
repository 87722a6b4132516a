"""The sweep's own rules (tests/sweep/): what fails it, how a large array is run on both sides, what a
submitter gives a case, which paths are folders."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent / "sweep"))

import cases
import pod_side
import run
import standins
from inputs import Given

from migrate.diagnostics import Collector
from migrate.translators.slurm import reader


def _report(tmp_path: Path, outcome: dict[str, dict[str, object]], baseline: str = "") -> int:
    (tmp_path / "baseline.txt").write_text(baseline)
    return run.report(outcome, 1.0, None, tmp_path / "baseline.txt")


def test_an_undeclared_difference_fails_the_sweep_and_a_declared_one_does_not(tmp_path: Path) -> None:
    declared = {"a": {"result": "declared", "difference": "x", "why": "on purpose"}}
    assert (
        _report(tmp_path, {**declared, "b": {"result": "equal"}, "c": {"result": "empty", "why": "-"}}) == 0
    )
    assert _report(tmp_path, {**declared, "d": {"result": "differs", "difference": "argv: ..."}}) == 1
    # a case the baseline holds equal may not become declared: a pattern must not swallow it
    assert _report(tmp_path, declared, baseline="a\n") == 1


def _job(text: str) -> cases.Job:
    (job,) = reader.read(text, "t.sbatch", Collector("t.sbatch"))
    return job


def test_a_large_array_runs_its_first_tasks_on_both_sides() -> None:
    stepped = _job("#!/bin/bash\n#SBATCH --array=1-1000:4%8\nsrun python x.py\n")
    assert cases.first_tasks(stepped) == (1, 5, 9, 13, 17, 21)
    assert cases.too_large(stepped) is None
    assert cases.first_tasks(_job("#!/bin/bash\n#SBATCH --array=0-5\ntrue\n")) == ()
    indexed = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "shards"},
        "spec": {
            "completions": 250,
            "parallelism": 8,
            "completionMode": "Indexed",
            "template": {
                "spec": {
                    "containers": [{"name": "m", "env": [{"name": "SLURM_ARRAY_TASK_COUNT", "value": "250"}]}]
                }
            },
        },
    }
    config = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "c"},
        "data": {"job.sh": "echo\n"},
    }
    cut = list(yaml.safe_load_all(pod_side.first_tasks_only(yaml.safe_dump_all([config, indexed]), 6)))
    assert cut[0] == config
    assert (cut[1]["spec"]["completions"], cut[1]["spec"]["parallelism"]) == (6, 6)
    # the pods are still told the array's size as written
    assert cut[1]["spec"]["template"]["spec"]["containers"][0]["env"][0]["value"] == "250"


def test_what_the_submitter_gives_reaches_the_pods_as_the_user_adds_it() -> None:
    job = {"kind": "Job", "spec": {"template": {"spec": {"containers": [{"name": "m", "args": ["a"]}]}}}}
    (out,) = yaml.safe_load_all(
        pod_side.with_submitters(yaml.safe_dump(job), {"CKPT": "/fsx/c"}, ("/fsx/audio",))
    )
    (container,) = out["spec"]["template"]["spec"]["containers"]
    assert container["env"] == [{"name": "CKPT", "value": "/fsx/c"}]
    assert container["args"] == ["a", "/fsx/audio"]


def test_a_given_file_is_at_its_path_or_in_the_folder_the_job_is_submitted_from() -> None:
    case = cases.Case(
        "x", Path("x"), "", _job("#!/bin/bash\n#SBATCH -N 1\ntrue\n"), submitted_from="cases/slurm"
    )
    case.given = Given(files={"files.txt": "a\n", "/fsx/eval/best.txt": "7\n"})
    assert case.given_files() == {
        f"{cases.SUBMIT_ROOT}/cases/slurm/files.txt": "a\n",
        "/fsx/eval/best.txt": "7\n",
    }


def test_a_path_the_script_writes_to_is_a_file_in_a_folder() -> None:
    text = 'echo "failed" >> /lustre/cohorts/FAILED\ncat /fsx/data/shards\nlog > /fsx/logs/run.log\n'
    assert cases.folders_named(text) == ["/fsx/data/shards", "/fsx/logs", "/lustre/cohorts"]


def _slept(tmp_path: Path, script: str) -> float:
    started = time.monotonic()
    subprocess.run(["bash", "-c", script], cwd=tmp_path / "bin", check=True, timeout=30)
    return time.monotonic() - started


def test_a_sleep_after_a_background_step_waits_for_it_no_longer_than_it_asked(tmp_path: Path) -> None:
    standins.write_bin(tmp_path / "bin", [])
    # the background command (a step srun still launches) ends after 1.8 s: the stand-in waits for it
    # (in a script of its own, named as Slurm names a batch script)
    (tmp_path / "bin" / "slurm_script").write_text("#!/bin/bash\n/bin/sleep 1.8 &\n./sleep 10\n")
    (tmp_path / "bin" / "slurm_script").chmod(0o755)
    assert 1.7 < _slept(tmp_path, "./slurm_script") < 3.8
    assert 1.7 < _slept(tmp_path, "/bin/sleep 1.8 & ./sleep 10") < 3.8
    # with nothing in the background a second is enough; and a sleep whose parent is no shell (bash
    # -c execs a lone command) does not wait on the parent's other children
    assert _slept(tmp_path, "./sleep 10; true") < 2.0
    held = subprocess.Popen(["/bin/sleep", "20"])  # this process's other child
    try:
        assert _slept(tmp_path, "./sleep 10") < 2.0
    finally:
        held.kill()
        held.wait()
    # a background command that runs on is waited for as long as the sleep asked, no longer
    assert 2.9 < _slept(tmp_path, "/bin/sleep 20 & ./sleep 3; kill %1") < 5.0
