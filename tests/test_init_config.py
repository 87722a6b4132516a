"""``migrate init``: a starter migrate.yaml holds only what the scripts name literally, on the host."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import yaml

from migrate import init_config
from migrate.init_config import render_starter, starter_config
from migrate.scan import scanner
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
