"""A job's size for people (migrate/site/job_size.py): the allocation model's, everywhere it is shown."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import CORPUS

from migrate.render import job_row
from migrate.scan import scanner
from migrate.scan.results import ScanOptions
from migrate.site import allocation
from migrate.site.config import SiteConfig, load_site_config
from migrate.site.job_size import job_size

EKS = CORPUS / "eks-site"


def _jobs(root: Path) -> dict[str, object]:
    return {job.name: job for job in scanner.scan([str(root)], ScanOptions(jobs=1)).jobs}


def test_one_gpu_pods_pack_onto_the_node_they_select() -> None:
    # 8 pods of 1 GPU on g5.48xlarge (8 GPUs): one node, not eight
    job = _jobs(EKS / "training")["fsdp-finetune"]
    size = job_size(job)  # type: ignore[arg-type]
    assert (size.nodes, size.gpus, size.accelerators) == (1, 8, ())
    assert job_row(job, size.nodes, size.devices_text())["nodes"] == "1"  # type: ignore[arg-type]


def test_an_accelerator_that_is_no_gpu_is_counted_by_its_name() -> None:
    job = _jobs(EKS / "training")["llama2-7b-trn1"]
    size = job_size(job, load_site_config(EKS / "migrate.yaml"))  # type: ignore[arg-type]
    assert (size.nodes, size.gpus, size.accelerators) == (12, 0, (("neuron", 192),))
    assert size.devices_text() == "192 neuron"


def test_a_rayjob_on_a_scanned_cluster_shows_the_cluster_but_adds_nothing(tmp_path: Path) -> None:
    shutil.copytree(EKS / "ray", tmp_path / "ray")
    result = scanner.scan([str(tmp_path)], ScanOptions(jobs=1))
    jobs = {job.name: job for job in result.jobs}
    on = job_size(jobs["llm-batch-inference"])
    assert (on.nodes, on.gpus, on.on, on.counted) == (3, 16, "ray-g5", False)
    assert on.devices_text() == "16 on ray-g5"
    summary = result.summary()
    # the cluster (3 nodes, 16 GPUs) and the tune RayJob's own cluster (5 nodes, 4 GPUs), once each
    assert (summary["nodes"], summary["gpus"]) == (3 + 5, 16 + 4)


def test_the_scan_summary_counts_packed_nodes_and_accelerators() -> None:
    summary = scanner.scan([str(EKS / "training")], ScanOptions(jobs=1)).summary()
    # fsdp 1 node/8 GPUs, trn1 12 nodes/192 neuron, nemo 4 nodes/32 GPUs, the shard Job 1 node
    assert (summary["nodes"], summary["gpus"], summary["accelerators"]) == (18, 40, {"neuron": 192})


def test_jobs_sized_without_a_site_share_one_view_of_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """The scan sizes every job against no configuration: what the allocation reads of it is worked
    out once, not once per job."""
    made: list[object] = []

    class Counted(allocation._Site):
        def __init__(self, config: SiteConfig) -> None:
            made.append(config)
            super().__init__(config)

    monkeypatch.setattr(allocation, "_Site", Counted)
    monkeypatch.setattr(allocation, "_SITES", {})
    jobs = list(_jobs(EKS / "training").values())
    sizes = [job_size(job) for job in jobs]  # type: ignore[arg-type]
    assert len(jobs) > 1 and all(s.nodes >= 1 for s in sizes)
    assert len(made) == 1
