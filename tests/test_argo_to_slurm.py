"""Argo workflows to Slurm: one script per task, submit.sh chaining them, a CronWorkflow in scrontab.

The submit script runs against a stand-in ``sbatch`` that records each call and
prints a job id, so the test sees the order and the ``--dependency`` each script got.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from conftest import CORPUS, GOLDEN
from golden import check_text

from migrate.scan import scanner
from migrate.translate import translate_jobs

ARGO = CORPUS / "cases" / "argo"
STAND_IN = """#!/bin/bash
# records: <id> <script> <dependency or ->
n=$(( $(wc -l < "$SBATCH_LOG" 2>/dev/null || echo 0) + 1000 ))
dep=-
script=
for a in "$@"; do
  case "$a" in
    --dependency=*) dep=${a#--dependency=} ;;
    --parsable) ;;
    *) script=$a ;;
  esac
done
echo "$n $script $dep" >> "$SBATCH_LOG"
echo "$n;cluster1"
"""


def submitted(tmp_path: Path, files: list[str]) -> tuple[dict[str, str], dict[str, str]]:
    """Translate ``files`` to Slurm, run submit.sh with the stand-in: script -> (id, dependency)."""
    result = translate_jobs(scanner.scan([str(ARGO / f) for f in files]).jobs, to="slurm")
    out = tmp_path / "out"
    result.tree.commit(str(out))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "sbatch").write_text(STAND_IN)
    (bin_dir / "sbatch").chmod(0o755)
    log = tmp_path / "sbatch.log"
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "SBATCH_LOG": str(log)}
    subprocess.run(["bash", str(out / "submit.sh")], check=True, env=env, capture_output=True, timeout=60)
    ids: dict[str, str] = {}
    deps: dict[str, str] = {}
    for line in log.read_text().splitlines():
        job_id, script, dep = line.split(" ", 2)
        name = script.split("/")[0]
        ids[name] = job_id
        deps[name] = dep
    return ids, {name: _named(dep, ids) for name, dep in deps.items()}


def _named(dep: str, ids: dict[str, str]) -> str:
    """A dependency with job ids replaced by the names of the scripts that got them."""
    by_id = {v: k for k, v in ids.items()}
    return re.sub(r"\d{4}", lambda m: by_id.get(m.group(0), "?" + m.group(0)), dep)


def test_a_dag_is_submitted_in_order_with_its_dependency_types(tmp_path: Path) -> None:
    ids, deps = submitted(tmp_path, ["dag_depends_train.yaml"])
    order = sorted(ids, key=lambda n: ids[n])
    assert order[0] == "asr-finetune-prepare"
    for name, dep in deps.items():  # every dependency names a job submitted before
        assert "?" + "1" not in dep and all(
            ids[n] < ids[name] for n in re.findall(r"asr-finetune-[a-z-]+", dep)
        )
    assert deps["asr-finetune-train"] == "afterok:asr-finetune-prepare"
    assert deps["asr-finetune-evaluate"] == "afterok:asr-finetune-train"
    assert set(deps["asr-finetune-publish"].split(",")) == {
        "afterok:asr-finetune-evaluate",
        "afterok:asr-finetune-prepare",
    }
    # train.Failed || evaluate.Failed || evaluate.Errored: an OR list, either failure starts it
    assert set(deps["asr-finetune-notify-failure"].split("?")) == {
        "afternotok:asr-finetune-train",
        "afternotok:asr-finetune-evaluate",
    }
    # (publish.Succeeded || publish.Failed) && !notify-failure.Succeeded: waits for both to end
    assert set(deps["asr-finetune-cleanup"].split(",")) == {
        "afterany:asr-finetune-publish",
        "afterany:asr-finetune-notify-failure",
    }


def test_steps_groups_wait_for_the_whole_group_before(tmp_path: Path) -> None:
    _, deps = submitted(tmp_path, ["steps_parallel_groups.yaml"])
    for name in ("fastqc", "kraken", "coverage"):
        assert deps[f"wgs-qc-run-2291-{name}"] == "afterok:wgs-qc-run-2291-fetch"
    assert set(deps["wgs-qc-run-2291-report"].split(",")) == {
        f"afterok:wgs-qc-run-2291-{n}" for n in ("fastqc", "kraken", "coverage")
    }


def test_fan_out_is_an_array_with_the_parallelism_as_throttle(tmp_path: Path) -> None:
    result = translate_jobs(scanner.scan([str(ARGO / "fanout_items_sequence_param.yaml")]).jobs, to="slurm")
    files = result.tree.files
    assert "#SBATCH --array=0-3%3\n" in files["vision-sweep-lr/job.sbatch"]
    assert "#SBATCH --array=1-16%3\n" in files["vision-sweep-shard/job.sbatch"]
    per_file = next(t for t in result.translations if t.name == "vision-sweep-per-file")
    assert any(
        e.item == "fan-out withParam" and e.status == "approximated" for e in per_file.fidelity.entries
    )


def test_each_dependency_is_in_the_fidelity_log(tmp_path: Path) -> None:
    result = translate_jobs(scanner.scan([str(ARGO / "dag_depends_train.yaml")]).jobs, to="slurm")
    cleanup = next(t for t in result.translations if t.name == "asr-finetune-cleanup")
    items = {(e.item, e.status) for e in cleanup.fidelity.entries if e.item.startswith("depends")}
    assert items == {
        ("depends: publish.Succeeded || publish.Failed -> afterany", "mapped"),
        ("depends: !notify-failure.Succeeded -> afterany", "approximated"),
    }


def test_cron_workflows_become_scrontab_entries() -> None:
    result = translate_jobs(
        scanner.scan([str(ARGO / "cron_v3_schedule.yaml"), str(ARGO / "cron_v4_schedules.yaml")]).jobs,
        to="slurm",
    )
    files = result.tree.files
    assert files["feature-store-refresh/scrontab"].count("30 2 * * *") == 1
    assert "0 6 * * *" in files["ckpt-pruner/scrontab"]
    pruner = next(t for t in result.translations if t.name == "ckpt-pruner")
    # the second of the v4 schedules has no entry: said so
    assert any(e.status == "dropped" and "0 18 * * *" in e.item for e in pruner.fidelity.entries)


def test_the_submit_script_golden(in_repo: Path, update_golden: bool) -> None:
    rel = str((ARGO / "dag_depends_train.yaml").relative_to(in_repo))
    result = translate_jobs(scanner.scan([rel]).jobs, to="slurm")
    check_text(
        GOLDEN / "workflow" / "dag_depends_train.submit.sh", result.tree.files["submit.sh"], update_golden
    )
