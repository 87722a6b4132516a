"""``migrate init``: a starter migrate.yaml holds only what the scripts name literally, on the host."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import yaml
from conftest import CORPUS

from migrate import api, init_config
from migrate.init_config import render_starter, starter_config
from migrate.scan import scanner
from migrate.scan.node_pools import read_node_pools
from migrate.scan.results import ScanOptions
from migrate.site.config import PLACEHOLDER, parse_site_config_text

CONTAINER_JOB = """#!/bin/bash
#SBATCH --job-name=train
#SBATCH --nodes=2
#SBATCH --gres=gpu:8
#SBATCH --container-image=nvcr.io/nvidia/pytorch:24.01-py3
#SBATCH --container-mounts=/fsx/data:/workspace/data
#SBATCH --container-workdir=/workspace
srun python /workspace/train.py --data /workspace/data --out /workspace/out/ckpt
"""
DYNAMIC_PARTITION = """#!/bin/bash
#SBATCH --partition=$part
#SBATCH --account=${ACCOUNT}
#SBATCH --nodes=1
srun hostname
"""
NAMED_PARTITION = "#!/bin/bash\n#SBATCH --partition=gpu\n#SBATCH --nodes=4\nsrun hostname\n"


def _jobs(tmp_path: Path, files: dict[str, str]) -> list:  # type: ignore[type-arg]
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    return scanner.scan([str(tmp_path)], ScanOptions()).jobs


def test_a_dynamic_partition_or_account_is_not_written(tmp_path: Path) -> None:
    data, _ = starter_config(
        _jobs(tmp_path, {"dyn.sbatch": DYNAMIC_PARTITION, "named.sbatch": NAMED_PARTITION})
    )
    assert list(data["partitions"]) == ["gpu"]  # type: ignore[call-overload]
    assert data["accounts"] == {}


def test_no_partition_named_gives_a_default_partition_placeholder(tmp_path: Path) -> None:
    data, _ = starter_config(
        _jobs(tmp_path, {"dyn.sbatch": DYNAMIC_PARTITION, "train.sbatch": CONTAINER_JOB})
    )
    partitions = data["partitions"]
    assert list(partitions) == [PLACEHOLDER]  # type: ignore[call-overload]
    entry = partitions[PLACEHOLDER]  # type: ignore[index]
    assert entry["default"] is True and entry["nodes"] == 2
    config = parse_site_config_text(render_starter(_jobs(tmp_path, {})), "migrate.yaml")
    assert config.partitions[0][1].default


def test_only_host_paths_become_file_systems(tmp_path: Path) -> None:
    data, _ = starter_config(_jobs(tmp_path, {"train.sbatch": CONTAINER_JOB}))
    prefixes = [fs["prefix"] for fs in data["filesystems"]]  # type: ignore[attr-defined]
    assert prefixes == ["/fsx"]


def test_the_count_of_values_to_fill_is_what_the_file_holds(tmp_path: Path) -> None:
    text = render_starter(_jobs(tmp_path, {"train.sbatch": CONTAINER_JOB}))
    data = yaml.safe_load(text)

    def leaves(node: object) -> int:
        if isinstance(node, dict):
            return sum((k == PLACEHOLDER) + leaves(v) for k, v in node.items())
        if isinstance(node, list):
            return sum(leaves(v) for v in node)
        return int(node == PLACEHOLDER)

    assert init_config.placeholders(text) == leaves(data) > 0
    res = subprocess.run(
        [
            sys.executable,
            "-c",
            "from migrate.cli import main; main()",
            "init",
            str(tmp_path),
            "--out",
            str(tmp_path / "m.yaml"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 0, res.stderr
    assert f": {leaves(data)} values to fill in" in res.stdout


EFA_JOB = """#!/bin/bash
#SBATCH --partition=p5
#SBATCH --nodes=4
#SBATCH --exclusive
export FI_PROVIDER=efa
export NCCL_DEBUG=INFO
srun torchrun --nproc_per_node=8 train.py
"""


def test_what_a_node_holds_and_its_fabric_device_are_left_to_fill(tmp_path: Path) -> None:
    """No script says a node's CPUs, memory or EFA interfaces: the starter asks for them, and loads."""
    jobs = _jobs(tmp_path, {"efa.sbatch": EFA_JOB, "named.sbatch": NAMED_PARTITION})
    data, _ = starter_config(jobs)
    p5 = data["partitions"]["p5"]  # type: ignore[index]
    assert p5["cpus_per_node"] == p5["mem_gb"] == PLACEHOLDER
    assert p5["devices"] == {"vpc.amazonaws.com/efa": PLACEHOLDER}
    assert "devices" not in data["partitions"]["gpu"]  # type: ignore[index]  # no fabric variables there
    config = parse_site_config_text(render_starter(jobs), "migrate.yaml")
    part = config.partition("p5")
    assert part is not None and part.cpus_per_node is None and part.devices == ()  # read as not given
    assert "partitions.p5.devices.vpc.amazonaws.com/efa" in config.unfilled
    assert "cpus_per_node" not in part.explicit  # an inventory may still fill it


def test_jobs_that_name_no_partition_get_a_default_partition_beside_the_named_ones(tmp_path: Path) -> None:
    unnamed = "#!/bin/bash\n#SBATCH --nodes=3\nsrun hostname\n"
    data, _ = starter_config(_jobs(tmp_path, {"named.sbatch": NAMED_PARTITION, "plain.sbatch": unnamed}))
    partitions = data["partitions"]
    assert list(partitions) == ["gpu", PLACEHOLDER]  # type: ignore[call-overload]
    assert partitions[PLACEHOLDER]["default"] is True  # type: ignore[index]
    assert partitions[PLACEHOLDER]["nodes"] == 3  # type: ignore[index]  # sized by the jobs that run there


# ---------------------------------------------------------------------------
# Kubernetes manifests: partitions from the node pools and queues they name


def _kube_starter(path: Path) -> dict:  # type: ignore[type-arg]
    result = scanner.scan([str(path)], ScanOptions())
    data, _ = starter_config(result.jobs, pools=read_node_pools(result.files))
    return data


def test_partitions_come_from_the_node_pools_the_manifests_name(in_repo: Path) -> None:
    data = _kube_starter(CORPUS / "cases" / "plan-to-slurm")
    partitions = data["partitions"]
    assert list(partitions) == ["p5", "g5", "trn1", "cpu"]  # GPU nodes first, largest first
    p5, g5, trn1, cpu = (partitions[n] for n in ("p5", "g5", "trn1", "cpu"))
    assert p5["node_selector"] == {"node.kubernetes.io/instance-type": "p5.48xlarge"}
    assert (p5["gpus_per_node"], p5["gpu_type"], p5["cpus_per_node"], p5["mem_gb"]) == (8, "h100", 192, 2048)
    assert p5["devices"] == {"vpc.amazonaws.com/efa": 32}  # the pods ask for EFA: all of the instance's
    assert p5["nodes"] == 4  # the Kueue ClusterQueue's 32 GPUs of flavor p5-flavor
    assert (g5["gpus_per_node"], g5["cpus_per_node"], g5["mem_gb"]) == (
        4,
        48,
        192,
    )  # NodePool's g5.12xlarge
    assert trn1["devices"] == {"aws.amazon.com/neuron": 16, "vpc.amazonaws.com/efa": 8}
    assert trn1["nodes"] == 4  # the NodePool's limit of 64 Neuron devices
    assert cpu["default"] is True and cpu["cpus_per_node"] == PLACEHOLDER
    assert data["gres"] == {"neuron": "aws.amazon.com/neuron"}
    queues = {name: entry.get("queue") for name, entry in partitions.items()}
    assert queues == {"p5": "gpu-bench", "g5": None, "trn1": None, "cpu": None}  # named by a job, and only so
    assert PLACEHOLDER not in partitions


def test_a_cpu_node_pool_is_the_default_partition(tmp_path: Path) -> None:
    pod = "apiVersion: batch/v1\nkind: Job\nmetadata: {{name: {name}}}\nspec:\n  template:\n    spec:\n{sel}      containers:\n        - {{name: m, image: busybox, command: [sh, -c, 'true']}}\n      restartPolicy: Never\n"  # noqa: E501
    (tmp_path / "a.yaml").write_text(
        pod.format(name="etl", sel="      nodeSelector: {beta.kubernetes.io/instance-type: c6i.32xlarge}\n")
    )
    (tmp_path / "b.yaml").write_text(pod.format(name="plain", sel=""))
    partitions = _kube_starter(tmp_path)["partitions"]
    assert list(partitions) == ["c6i"]
    assert partitions["c6i"]["default"] is True and partitions["c6i"]["cpus_per_node"] == 128
    assert partitions["c6i"]["node_selector"] == {"beta.kubernetes.io/instance-type": "c6i.32xlarge"}


def test_init_on_the_eks_site_places_every_job_as_the_hand_written_config_does(tmp_path: Path) -> None:
    site = tmp_path / "eks"
    shutil.copytree(CORPUS / "eks-site", site)
    (site / "migrate.yaml").unlink()
    run = api.run_init([str(site)])
    assert run.written == [str(site / "migrate.yaml")] and run.plan_reads == str(site / "migrate.yaml")
    by_init = api.run_plan([str(site)], "slurm")
    assert by_init.config_path == str(site / "migrate.yaml")  # plan finds what init wrote
    by_hand = api.run_plan([str(site)], "slurm", config=str(CORPUS / "eks-site" / "migrate.yaml"))

    def partitions(run: api.PlanRun) -> dict[str, str]:
        return {j.job_id.split("#")[1]: j.partition for j in run.plan.demands}  # type: ignore[misc]

    assert partitions(by_init) == partitions(by_hand) and len(partitions(by_init)) == 10
    for phase in by_init.plan.phases:
        if phase.capacity:
            assert sum(c.target_nodes for c in phase.capacity) > 0, phase.id


def test_a_claim_the_pods_mount_is_a_file_system_at_its_mount_path(tmp_path: Path) -> None:
    site = tmp_path / "eks"
    shutil.copytree(CORPUS / "eks-site", site)
    data, unplaced = starter_config(scanner.scan([str(site)], ScanOptions()).jobs)
    # every eks-site job mounts fsx-claim at /fsx: Slurm's nodes need /fsx, of a kind the site names
    assert data["filesystems"] == [{"prefix": "/fsx", "kind": PLACEHOLDER, "pvc": "fsx-claim"}]
    assert unplaced == []
    config = parse_site_config_text(render_starter(scanner.scan([str(site)], ScanOptions()).jobs), "m.yaml")
    assert [(fs.prefix, fs.pvc) for fs in config.filesystems] == [("/fsx", ("fsx-claim",))]
