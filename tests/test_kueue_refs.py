"""A job queued in Kueue lands on its flavor's nodes (migrate/scan/kueue_refs.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

from conftest import CORPUS

from migrate.scan import scanner
from migrate.scan.results import ScanOptions
from migrate.site.allocation import allocate
from migrate.site.config import parse_site_config

CASES = CORPUS / "cases" / "kubernetes"
SITE = parse_site_config(
    {
        "partitions": {
            "g5": {"gpus_per_node": 4, "node_selector": {"node.kubernetes.io/instance-type": "g5.12xlarge"}},
            "cpu": {"cpus_per_node": 64, "default": True},
        }
    }
)


def _jobs(root: Path) -> dict[str, object]:
    return {job.name: job for job in scanner.scan([str(root)], ScanOptions(jobs=1)).jobs}


def test_a_queued_job_gets_its_flavors_node_labels_and_so_its_partition(tmp_path: Path) -> None:
    for name in ("kueue_queues.yaml", "kueue_job.yaml"):
        shutil.copy(CASES / name, tmp_path)
    (job,) = [j for j in _jobs(tmp_path).values() if getattr(j, "kind", "") == "Job"]
    selector = {(kv.key, kv.value) for c in job.components for kv in c.resources.node_selector}
    assert ("node.kubernetes.io/instance-type", "g5.12xlarge") in selector
    assert any(i.key == "kueueFlavor" and "ResourceFlavor a10g" in i.value for i in job.raw)
    assert allocate(job, SITE).partition.value == "g5"


def test_without_the_queues_file_the_job_is_as_read(tmp_path: Path) -> None:
    shutil.copy(CASES / "kueue_job.yaml", tmp_path)
    (job,) = [j for j in _jobs(tmp_path).values() if getattr(j, "kind", "") == "Job"]
    assert not any(i.key == "kueueFlavor" for i in job.raw)
