"""Kubernetes -> Slurm on a small EKS-shaped site (corpus/cases/plan-to-slurm): partitions, pilot, text."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import CORPUS, GOLDEN, REPO
from golden import check_text

from migrate import api
from migrate.plan.planner import plan_json
from migrate.scan import scanner
from migrate.site.allocation import allocate
from migrate.site.config import load_site_config
from migrate.site.kube_partition import Basis, kube_partition

CASE = (CORPUS / "cases" / "plan-to-slurm").relative_to(REPO)
CONFIG = str(CASE / "migrate.yaml")


@pytest.fixture(scope="module")
def planned() -> api.PlanRun:
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(REPO)  # paths in plan.json relative to the repository
        return api.run_plan([str(CASE)], "slurm", config=CONFIG)


def test_plan_golden(planned: api.PlanRun, update_golden: bool) -> None:
    check_text(
        GOLDEN / "plan" / "cases" / "plan-to-slurm.to-slurm.json", plan_json(planned.plan), update_golden
    )


def _job(run: api.PlanRun, name: str) -> dict:
    [job] = [j for j in run.plan.to_dict()["jobs"] if j["id"].endswith(f"#{name}")]
    return job


def test_a_job_naming_no_node_pool_runs_in_the_default_partition(planned: api.PlanRun) -> None:
    job = _job(planned, "Job/tokenize-corpus")
    assert job["allocation"]["partition"] == {"source": "site-default", "value": "cpu"}
    assert job["demand"]["partition"] == "cpu"
    assert not [w for w in planned.plan.to_dict()["warnings"] if "no partition" in w]


def test_the_partition_choice_says_its_basis(in_repo: Path) -> None:
    config = load_site_config(CONFIG)
    jobs = {j.name: j for j in scanner.scan([str(CASE)]).jobs}
    assert kube_partition(jobs["tokenize-corpus"], config).basis == Basis.DEFAULT
    assert kube_partition(jobs["gpu-burn"], config).basis == Basis.GPU_COUNT
    assert kube_partition(jobs["llama3-8b-p5"], config).basis == Basis.NODE_SELECTOR
    assert allocate(jobs["gpu-burn"], config).partition.value == "p5"


def test_plan_and_translate_agree_on_every_partition(
    planned: api.PlanRun, in_repo: Path, tmp_path: Path
) -> None:
    translated = api.run_translate([str(CASE)], "slurm", str(tmp_path / "out"), config=CONFIG)
    written = {}
    for tr in translated.result.translations:
        for text in tr.files.values():
            found = re.search(r"^#SBATCH --partition=(\S+)", text, re.M)
            written[tr.job_id] = found.group(1) if found else None
    assert len(written) == 7
    for job_id, partition in written.items():
        [job] = [j for j in planned.plan.to_dict()["jobs"] if j["id"] == job_id]
        assert job["allocation"]["partition"]["value"] == partition, job_id


def test_wandb_is_monitoring_only_where_it_is_on(in_repo: Path) -> None:
    jobs = {j.name: j for j in scanner.scan([str(CASE)]).jobs}
    kinds = {name: sorted({h.kind for h in job.monitoring}) for name, job in jobs.items()}
    assert kinds["llama3-8b-p5"] == ["wandb"]  # WANDB_PROJECT, nothing switches it off
    for name in ("tokenize-corpus", "eval-nemo", "llama2-7b-trn1", "bert-finetune-g5"):
        assert "wandb" not in kinds[name], name


def test_report_with_translations_keeps_the_plan(planned: api.PlanRun, in_repo: Path, tmp_path: Path) -> None:
    translated = api.run_translate([str(CASE)], "slurm", str(tmp_path / "tr"), config=CONFIG)
    report = api.run_report(
        [str(CASE)], "slurm", str(tmp_path / "report"), config=CONFIG, translations=translated.result
    )
    assert plan_json(report.plan) == plan_json(planned.plan)


def test_the_headline_says_the_basis_and_what_rests_on_assumptions(in_repo: Path, tmp_path: Path) -> None:
    """Services are on all week, batch jobs run once unless a schedule says more: the headline says so."""
    api.run_report([str(CASE)], "slurm", str(tmp_path), config=CONFIG)
    doc = json.loads((tmp_path / "plan.json").read_text())
    summary = doc["summary"]["demand"]
    assert summary["window_hours"] == 168 and summary["runs_assumed"] > 0
    text = (tmp_path / "report.md").read_text()
    headline = next(line for line in text.splitlines() if line.startswith("**Recommendation"))
    assert "of the node-hours per 168 h window" in headline
    share = round(100 * summary["assumed_node_hours"] / summary["node_hours"])
    assert f"; {share}% of these node-hours rest on assumptions" in headline
    demand = next(line for line in text.splitlines() if line.startswith("- **Demand:**"))
    assert "services always on, all 168 h" in demand and "once, an assumption" in demand
