"""A Ray cluster a batch script starts, read as the RayJob KubeRay runs (native_ray, rayjob)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from conftest import CORPUS

from migrate.diagnostics import Collector
from migrate.translate import translate_jobs
from migrate.translators.kubernetes import validate
from migrate.translators.kubernetes.native import constants
from migrate.translators.kubernetes.native_ray import read_ray
from migrate.translators.kubernetes.writer import translate_job
from migrate.translators.slurm import reader
from migrate.vocab import Format

HEADER = "#!/bin/bash\n#SBATCH -J hpo\n#SBATCH -N 3\n#SBATCH --ntasks-per-node=1\n#SBATCH -c 4\n"
GUIDE = """nodes=$(scontrol show hostnames "$SLURM_JOB_NODELIST")
nodes_array=($nodes)
head_node=${nodes_array[0]}
head_node_ip=$(srun --nodes=1 --ntasks=1 -w "$head_node" hostname --ip-address)
port=6379
ip_head=$head_node_ip:$port
export ip_head
srun --nodes=1 --ntasks=1 -w "$head_node" ray start --head --node-ip-address="$head_node_ip" \\
    --port=$port --num-cpus "${SLURM_CPUS_PER_TASK}" --block &
sleep 10
for ((i = 1; i <= SLURM_JOB_NUM_NODES - 1; i++)); do
    node_i=${nodes_array[$i]}
    srun --nodes=1 --ntasks=1 -w "$node_i" ray start --address "$ip_head" --num-cpus 4 --block &
    sleep 5
done
"""


def _job(body: str, header: str = HEADER) -> Any:
    (job,) = reader.read(header + body, "t.sbatch", Collector("t.sbatch"))
    return job


def _rayjob(body: str, flavor: str = "auto", header: str = HEADER) -> tuple[Any, dict[str, Any]]:
    t = translate_job(_job(body, header), None, flavor)
    (text,) = t.files.values()
    docs = [d for d in yaml.safe_load_all(text) if d]
    return t, docs[-1]


def test_the_guides_script_reads_as_a_head_workers_and_a_driver() -> None:
    job = _job(GUIDE + "mkdir -p /scratch/out\npython -u tune.py --out /scratch/out\n")
    ray = read_ray(job, constants(job, "hpo"))
    assert ray is not None and ray.shape.blocker is None, ray.shape.blocker
    assert ray.head is not None and ray.head.params == {"num-cpus": "4"}  # --port, --block ... KubeRay's
    assert [w.params for w in ray.workers] == [{"num-cpus": "4"}]
    assert [st.text for st in ray.shape.setup] == ["mkdir -p /scratch/out"]
    assert ray.shape.step is not None and ray.shape.step.text == "python -u tune.py --out /scratch/out"
    assert {"nodes", "nodes_array", "head_node", "head_node_ip", "ip_head"} <= ray.head_values


def test_a_script_without_a_ray_head_is_not_read_as_ray() -> None:
    job = _job("srun python train.py\n")
    assert read_ray(job, constants(job, "x")) is None


def test_the_rayjob_has_the_clusters_shape_and_the_driver_as_entrypoint() -> None:
    t, doc = _rayjob(GUIDE + "python -u tune.py --address $ip_head\n")
    assert (t.flavor, t.style) == ("rayjob", "native")
    assert doc["kind"] == "RayJob" and doc["spec"]["shutdownAfterJobFinishes"] is True
    assert doc["spec"]["entrypoint"] == (
        'export ip_head="${RAY_ADDRESS%:*}:6379"\npython -u tune.py --address "${RAY_ADDRESS%:*}:6379"'
    )
    cluster = doc["spec"]["rayClusterSpec"]
    head = cluster["headGroupSpec"]
    assert head["rayStartParams"] == {"num-cpus": "4"}
    assert "command" not in head["template"]["spec"]["containers"][0]  # KubeRay's ray start
    (workers,) = cluster["workerGroupSpecs"]
    assert (workers["replicas"], workers["minReplicas"], workers["maxReplicas"]) == (2, 2, 2)
    assert validate.validate_documents(next(iter(t.files.values()))) == []
    assert t.wait is not None and t.wait.by_phase == ".status.jobDeploymentStatus"


def test_what_keeps_a_ray_script_emulated() -> None:
    cases = {
        # another kind asked for
        ("jobset", GUIDE + "python d.py\n"): "native form is a RayJob",
        # two nodes, only the head starts
        (
            "auto",
            'srun -N1 -n1 -w "$(hostname)" ray start --head --block &\nsleep 5\npython d.py\n',
        ): "run no ray start",
        # the set-up reads the head's address before the cluster starts
        ("auto", GUIDE + 'echo "$ip_head" > /scratch/head.txt\npython d.py\n'): "the head's address",
        # no driver
        ("auto", GUIDE): "no driver",
    }
    for (flavor, body), why in cases.items():
        t, _ = _rayjob(body, flavor)
        assert t.style == "emulate" and why in t.style_reason, (t.style_reason, why)


def test_flavor_rayjob_falls_back_with_a_reason_when_the_script_starts_no_ray() -> None:
    t = translate_job(_job("srun hostname\n"), None, "rayjob")
    assert t.flavor == "jobset" and t.fallback and "no ray start --head" in t.fallback
    assert any(d.code == "TRANSLATE-FLAVOR-FALLBACK" for d in t.diagnostics)


def test_a_rayjob_translated_to_slurm_comes_back_as_the_same_cluster(tmp_path: Path) -> None:
    """The Ray-on-Slurm script the Slurm writer makes for a RayJob reads back as that RayJob's cluster:
    the groups' sizes, the explicit rayStartParams, the entrypoint and its image."""
    from migrate.translators.kubernetes import reader as k8s_reader

    path = CORPUS / "cases" / "run" / "rayjob_own_cluster.yaml"
    rel = str(path.relative_to(CORPUS.parent))
    original = yaml.safe_load(path.read_text())
    jobs = k8s_reader.read(path.read_text(encoding="utf-8"), rel, Collector(rel))
    to_slurm = translate_jobs(jobs, to=Format.SLURM)  # pyxis: the image rides on srun
    (script,) = [
        text for t in to_slurm.translations for name, text in t.files.items() if name.endswith("sbatch")
    ]
    back = translate_jobs(reader.read(script, "job.sbatch", Collector("job.sbatch"))).translations[0]
    assert (back.flavor, back.style) == ("rayjob", "native"), back.style_reason
    (text,) = back.files.values()
    doc = [d for d in yaml.safe_load_all(text) if d][-1]
    spec, want = doc["spec"], original["spec"]
    assert spec["entrypoint"] == want["entrypoint"]
    cluster, want_cluster = spec["rayClusterSpec"], want["rayClusterSpec"]
    for key, value in want_cluster["headGroupSpec"]["rayStartParams"].items():
        assert cluster["headGroupSpec"]["rayStartParams"][key] == value
    (group,) = cluster["workerGroupSpecs"]
    assert group["replicas"] == want_cluster["workerGroupSpecs"][0]["replicas"]
    assert group["rayStartParams"]["object-store-memory"] == "200000000"
    assert cluster["rayVersion"] == "2.40.0"
