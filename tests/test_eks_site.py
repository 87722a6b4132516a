"""The EKS site (corpus/eks-site): training leaves Kubernetes for Slurm, serving stays.

Goldens under corpus/golden/eks-site/: what each job is allocated (nodes, pods per
node, devices, accelerator-hours), the translated sbatch scripts, and the plan.
The figures the issue asked for are asserted too, so that a golden accepted by
mistake still fails here.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from conftest import CORPUS, GOLDEN, REPO
from golden import check_text

from migrate import ir
from migrate.plan.planner import Plan, build_plan, plan_json
from migrate.site.allocation import allocate
from migrate.site.config import SiteConfig, load_site_config
from migrate.translate import translate_jobs
from migrate.vocab import Direction, Format

SITE = CORPUS / "eks-site"
OUT = GOLDEN / "eks-site"


@pytest.fixture(scope="module")
def config() -> SiteConfig:
    return load_site_config(SITE / "migrate.yaml")


@pytest.fixture(scope="module")
def jobs() -> list[ir.Job]:
    from migrate.scan import scanner

    here = Path.cwd()
    os.chdir(REPO)
    try:
        return scanner.scan([str(SITE.relative_to(REPO))]).jobs
    finally:
        os.chdir(here)


@pytest.fixture(scope="module")
def plan(jobs: list[ir.Job], config: SiteConfig) -> Plan:
    return build_plan(jobs, Direction.TO_SLURM, config)


def _allocations(jobs: list[ir.Job], config: SiteConfig) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for job in sorted(jobs, key=lambda j: j.id):
        alloc = allocate(job, config)
        hours = alloc.time_limit_s.value / 3600
        out[job.id] = {
            "partition": alloc.partition.value,
            "nodes": alloc.total_nodes(),
            "accelerators": alloc.total_gpus(),
            "accelerator_hours_per_run": round(alloc.total_gpus() * hours, 1),
            "roles": [c.to_dict() for c in alloc.components],
        }
    return out


def test_allocation_golden(jobs: list[ir.Job], config: SiteConfig, update_golden: bool) -> None:
    text = json.dumps(_allocations(jobs, config), indent=1, sort_keys=True) + "\n"
    check_text(OUT / "allocation.json", text, update_golden)


def test_each_jobs_nodes_and_accelerators(jobs: list[ir.Job], config: SiteConfig) -> None:
    got = {
        job.name: (allocate(job, config).total_nodes(), allocate(job, config).total_gpus())
        for job in jobs
        if job.kind not in ("Deployment", "LeaderWorkerSet")
    }
    assert got["llama2-7b-trn1"] == (12, 192)  # 12 trn1 nodes of 16 Neuron devices
    assert got["fsdp-finetune"] == (1, 8)  # 8 one-GPU pods on one 8-GPU node
    assert got["nemo-gpt-p5"] == (4, 32)
    assert got["nccl-tests-p5"] == (2, 16)  # the Launcher is no node
    assert got["llm-batch-inference"] == (3, 16)  # the RayCluster it selects: a head and 2 workers
    assert got["resnet-tune"] == (5, 4)


def test_translation_golden(jobs: list[ir.Job], config: SiteConfig, update_golden: bool) -> None:
    result = translate_jobs(jobs, Format.SLURM, config=config)
    files = {
        f"{t.name}/{name}": text
        for t in sorted(result.translations, key=lambda t: t.name)
        for name, text in sorted(t.files.items())
    }
    check_text(OUT / "to-slurm.json", json.dumps(files, indent=1, sort_keys=True) + "\n", update_golden)


def test_plan_golden(plan: Plan, update_golden: bool) -> None:
    check_text(OUT / "plan.to-slurm.json", plan_json(plan), update_golden)


def test_a_ray_cluster_its_jobs_carry_adds_no_demand_on_slurm(plan: Plan) -> None:
    data = json.loads(plan_json(plan))
    by_name = {j["id"].rsplit("/", 1)[1]: j for j in data["jobs"]}
    cluster, user = by_name["ray-g5"], by_name["llm-batch-inference"]
    assert cluster["pattern"] == "job-helper" and cluster["demand"]["node_hours"] == 0.0
    assert user["demand"]["gpu_hours"] == 16.0  # the cluster's head and two 8-GPU workers, for one run
