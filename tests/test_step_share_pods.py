"""What a step gets of its nodes in the pods, as under Slurm: the tasks of each node where the nodes
get different counts, and the GPUs a step sees where --exclusive gave the job a whole node's.

Each expectation was measured on the project's sandbox (Slurm 22.05, 16-CPU nodes): ``-N 2 -n 16``
gives ``SLURM_TASKS_PER_NODE=15,1``, a plain ``srun`` starts 15 tasks on node 0 and 1 on node 1
(ranks 0-14 and 15), ``srun -n 4`` deals 3 and 1, and the second node's ``SLURM_CPUS_ON_NODE`` is 1.
Under ``--exclusive`` the batch script sees all 8 GPUs of the node, a step those the job asked:
none (no ``SLURM_GPUS_ON_NODE``, no ``CUDA_VISIBLE_DEVICES``), or 2 with ``--gres=gpu:2``.
Here the translation runs in the pod runner (pods as local processes with their own host names).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from podrunner import testing as pods
from podrunner.testing import require_pods

from migrate.diagnostics import Collector
from migrate.site.config import parse_site_config
from migrate.translators.kubernetes.writer import translate_job
from migrate.translators.slurm import reader

SITE = parse_site_config(
    {
        "site": "layout",
        "partitions": {
            "cpu": {"nodes": 4, "cpus_per_node": 16, "mem_gb": 64, "default": True},
            "gpu": {"nodes": 4, "cpus_per_node": 16, "mem_gb": 64, "gpus_per_node": 8},
        },
        "kubernetes": {"reserved_cpus": 0},
        "defaults": {"image": "registry.example/base:1", "namespace": "batch"},
    }
)
JOB = "#!/bin/bash\n#SBATCH -N 2 -n 16\nsrun hostname\n"


def manifest(text: str, tmp_path: Path) -> str:
    path = tmp_path / "job.sbatch"
    path.write_text(text)
    (job,) = reader.read(text, str(path), Collector(str(path)))
    (out,) = translate_job(job, SITE, "job", style="emulate").files.values()
    return out


def test_sixteen_tasks_on_two_16_cpu_pods_run_15_and_1_and_a_step_deals_3_and_1(tmp_path: Path) -> None:
    require_pods()
    show = 'echo "$SLURM_NODEID $SLURM_PROCID $SLURM_LOCALID $SLURM_CPUS_ON_NODE"'
    script = (
        "#!/bin/bash\n"
        'echo "batch $SLURM_TASKS_PER_NODE $SLURM_JOB_CPUS_PER_NODE $SLURM_NTASKS"\n'
        f"srun bash -c '{show}' | sed 's/^/all /'\n"
        f"srun -n 4 bash -c '{show}' | sed 's/^/four /'\n"
    )
    result = pods.run(manifest(JOB, tmp_path), tmp_path, script=script)
    assert result.status == "Complete", result.describe()
    lines = result.pods[0].stdout.splitlines()
    assert lines[0] == "batch 15,1 15,1 16"
    every = sorted(tuple(int(v) for v in line.split()[1:]) for line in lines if line.startswith("all "))
    assert every == [(0, rank, rank, 15) for rank in range(15)] + [(1, 15, 0, 1)]
    four = Counter(int(line.split()[1]) for line in lines if line.startswith("four "))
    assert four == {0: 3, 1: 1}


def test_under_exclusive_a_step_sees_the_gpus_the_job_asked_not_the_nodes(tmp_path: Path) -> None:
    require_pods()
    show = 'echo "$0 ${SLURM_GPUS_ON_NODE-unset} ${CUDA_VISIBLE_DEVICES-unset}"'
    script = f"#!/bin/bash\nbash -c '{show}' batch\nsrun bash -c '{show}' step | sort\n"
    seen = {}
    for asked in ("", " --gres=gpu:2"):
        text = f"#!/bin/bash\n#SBATCH -p gpu -N 2 --exclusive{asked}\nsrun hostname\n"
        result = pods.run(manifest(text, tmp_path), tmp_path, script=script)
        assert result.status == "Complete", result.describe()
        seen[asked] = result.pods[0].stdout.splitlines()
    everything = ",".join(map(str, range(8)))
    assert seen[""] == [f"batch 8 {everything}", "step unset unset", "step unset unset"]
    assert seen[" --gres=gpu:2"] == [f"batch 8 {everything}", "step 2 0,1", "step 2 0,1"]


def test_a_steps_own_ntasks_per_node_is_what_its_tasks_see(tmp_path: Path) -> None:
    """On the sandbox, in -N 2 -n 4: `srun --ntasks-per-node=2` tasks see SLURM_NTASKS_PER_NODE=2,
    `srun -n 3` tasks none (the job asked no --ntasks-per-node)."""
    require_pods()
    show = 'echo "$0 ${SLURM_NTASKS_PER_NODE-unset}"'
    script = (
        f"#!/bin/bash\nsrun --ntasks-per-node=2 bash -c '{show}' two | sort\n"
        f"srun -n 3 bash -c '{show}' three | sort\n"
    )
    job = "#!/bin/bash\n#SBATCH -N 2 -n 4\nsrun hostname\n"
    result = pods.run(manifest(job, tmp_path), tmp_path, script=script)
    assert result.status == "Complete", result.describe()
    assert result.pods[0].stdout.splitlines() == ["two 2"] * 4 + ["three unset"] * 3
