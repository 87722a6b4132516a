"""A RayJob on a standing RayCluster of another file takes that cluster's roles (migrate/scan/ray_refs.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

from conftest import CORPUS

from migrate.scan import scanner
from migrate.scan.results import ScanOptions
from migrate.site.allocation import allocate
from migrate.site.config import load_site_config

EKS = CORPUS / "eks-site"


def _scan(root: Path) -> dict[str, object]:
    result = scanner.scan([str(root)], ScanOptions(jobs=1))
    return {job.name: (job, f) for f in result.files for job in f.jobs}


def test_a_rayjob_with_a_cluster_selector_gets_the_clusters_roles(tmp_path: Path) -> None:
    shutil.copytree(EKS / "ray", tmp_path / "ray")
    jobs = _scan(tmp_path)
    job, _ = jobs["llm-batch-inference"]
    assert [c.name for c in job.components] == ["head", "gpu"]
    assert job.images() == ("rayproject/ray-ml:2.37.0-gpu",)
    assert any(item.key == "rayClusterOf" and item.value.startswith("ray-g5 (") for item in job.raw)
    alloc = allocate(job, load_site_config(EKS / "migrate.yaml"))
    assert (alloc.partition.value, alloc.total_nodes(), alloc.total_gpus()) == ("g5", 3, 16)


def test_a_selector_that_matches_no_cluster(tmp_path: Path) -> None:
    (tmp_path / "ray").mkdir()
    shutil.copy(EKS / "ray" / "batch-inference-rayjob.yaml", tmp_path / "ray")
    jobs = _scan(tmp_path)
    job, found = jobs["llm-batch-inference"]
    assert not job.images()
    codes = [(d.code, d.line) for d in found.diagnostics]
    assert ("K8S-RAY-CLUSTER-UNRESOLVED", 8) in codes


def test_a_cluster_of_another_namespace_is_not_selected(tmp_path: Path) -> None:
    shutil.copytree(EKS / "ray", tmp_path / "ray")
    cluster = tmp_path / "ray" / "raycluster.yaml"
    cluster.write_text(cluster.read_text().replace("namespace: training", "namespace: other"))
    job, found = _scan(tmp_path)["llm-batch-inference"]
    assert not job.images() and any(d.code == "K8S-RAY-CLUSTER-UNRESOLVED" for d in found.diagnostics)


def test_a_selector_by_another_label_is_what_kuberay_refuses(tmp_path: Path) -> None:
    # KubeRay reads only ray.io/cluster: a selector on the cluster's own labels fails the RayJob
    shutil.copytree(EKS / "ray", tmp_path / "ray")
    rayjob = tmp_path / "ray" / "batch-inference-rayjob.yaml"
    rayjob.write_text(rayjob.read_text().replace("ray.io/cluster: ray-g5", "ray.io/cluster-pool: g5-shared"))
    job, found = _scan(tmp_path)["llm-batch-inference"]
    assert not job.images()
    (diag,) = [d for d in found.diagnostics if d.code == "K8S-RAY-CLUSTER-UNRESOLVED"]
    assert "by the ray.io/cluster key alone" in diag.message and diag.line == 8
