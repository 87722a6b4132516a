"""A model served across nodes, read as one LeaderWorkerSet group (native_lws, lws, leaderworkerset)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import CORPUS
from podrunner.testing import require_pods
from podrunner.testing import run as run_pods

from migrate.diagnostics import Collector
from migrate.site.config import load_site_config, parse_site_config
from migrate.translate import translate_jobs
from migrate.translators.kubernetes import reader as k8s_reader
from migrate.translators.kubernetes import validate
from migrate.translators.kubernetes.native import constants
from migrate.translators.kubernetes.native_lws import constants as group_constants
from migrate.translators.kubernetes.native_lws import read_serving
from migrate.translators.kubernetes.writer import translate_job
from migrate.translators.slurm import reader
from migrate.vocab import FidelityStatus, JobKind

CASES = CORPUS / "cases" / "native"
SITE = load_site_config(CORPUS / "sample-site" / "migrate.yaml")
HEADER = (
    "#!/bin/bash\n#SBATCH -J serve\n#SBATCH -N 2\n#SBATCH --ntasks-per-node=1\n#SBATCH --gpus-per-node=8\n"
)
HEAD = 'head=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n1)\n'
SGLANG = (
    "srun --nodes=2 --ntasks-per-node=1 python -m sglang.launch_server --model-path /m --tp 16 "
    "--nnodes $SLURM_NNODES --node-rank $SLURM_NODEID --dist-init-addr $head:5000 --host 0.0.0.0 "
    "--port 30000\n"
)


def _job(body: str, header: str = HEADER) -> Any:
    (job,) = reader.read(header + body, "t.sbatch", Collector("t.sbatch"))
    return job


def _translate(body: str, flavor: str = "auto", header: str = HEADER) -> tuple[Any, list[dict[str, Any]]]:
    t = translate_job(_job(body, header), None, flavor)
    (text,) = t.files.values()
    return t, [d for d in yaml.safe_load_all(text) if d]


def _case(name: str) -> Any:
    path = CASES / f"{name}.sbatch"
    rel = str(path.relative_to(CORPUS.parent))
    return translate_jobs(reader.read(path.read_text(encoding="utf-8"), rel, Collector(rel)), config=SITE)


def _containers(lws: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    template = lws["spec"]["leaderWorkerTemplate"]
    return (
        template["leaderTemplate"]["spec"]["containers"][0],
        template["workerTemplate"]["spec"]["containers"][0],
    )


def test_a_server_srun_starts_on_every_node_reads_as_one_group() -> None:
    job = _job(HEAD + SGLANG)
    serving = read_serving(job, group_constants(constants(job, "serve")))
    assert serving is not None and serving.ray is None
    assert serving.server.name == "SGLang"
    assert serving.shape.step is not None and serving.shape.step.under_srun


def test_the_group_has_the_scripts_nodes_and_each_pod_the_groups_own_values() -> None:
    t, docs = _translate(HEAD + SGLANG)
    assert (t.flavor, t.style) == ("lws", "native"), t.style_reason
    lws, service = docs
    spec = lws["spec"]
    assert (spec["replicas"], spec["leaderWorkerTemplate"]["size"]) == (1, 2)
    assert spec["leaderWorkerTemplate"]["restartPolicy"] == "RecreateGroupOnPodRestart"
    leader, worker = _containers(lws)
    args = leader["args"]
    assert args[args.index("--nnodes") + 1] == "$(LWS_GROUP_SIZE)"
    assert args[args.index("--node-rank") + 1] == "$(LWS_WORKER_INDEX)"
    assert args[args.index("--dist-init-addr") + 1] == "$(LWS_LEADER_ADDRESS):5000"
    assert worker["args"] == args and worker["command"] == leader["command"] == ["python"]
    assert leader["ports"] == [{"name": "http", "containerPort": 30000}] and "ports" not in worker
    assert str(leader["resources"]["limits"]["nvidia.com/gpu"]) == "8"
    assert "restartPolicy" not in spec["leaderWorkerTemplate"]["leaderTemplate"]["spec"]  # Always
    assert service["kind"] == "Service" and service["metadata"]["name"] == "serve-leader"
    assert service["spec"]["selector"] == {
        "leaderworkerset.sigs.k8s.io/name": "serve",
        "leaderworkerset.sigs.k8s.io/worker-index": "0",
    }
    assert service["spec"]["ports"][0]["port"] == 30000
    assert t.wait is not None and (t.wait.resource, t.wait.ok) == ("leaderworkerset", "Available")


def test_every_value_the_group_changes_is_in_the_fidelity_log() -> None:
    t, _ = _translate(HEAD + SGLANG, header=HEADER + "#SBATCH --time=12:00:00\n")
    entries = {e.item: e for e in t.fidelity.entries}
    assert entries["$SLURM_NODEID"].status == FidelityStatus.APPROXIMATED
    assert "every node got 0" in entries["$SLURM_NODEID"].reason  # the batch shell's expansion
    assert entries["$SLURM_NNODES"].status == FidelityStatus.MAPPED
    assert entries["head="].reason.endswith("$(LWS_LEADER_ADDRESS)")
    time = entries["--time=12:00:00"]
    assert time.status == FidelityStatus.APPROXIMATED and "serves until it is deleted" in time.reason
    assert any(e.item.startswith("server:") and "port 30000" in e.reason for e in t.fidelity.entries)


def test_the_ray_cluster_under_a_server_is_started_by_the_leader_and_joined_by_the_workers() -> None:
    t = _case("vllm_ray_llama405b").translations[0]
    assert (t.flavor, t.style) == ("lws", "native"), t.style_reason
    (text,) = t.files.values()
    leader, worker = _containers(next(d for d in yaml.safe_load_all(text) if d))
    script = leader["args"][0].splitlines()
    assert script[0].startswith("ray start --head --port=6379")
    assert script[-1].startswith("exec vllm serve /fsx/models/Meta-Llama-3.1-405B-Instruct")
    assert any("$LWS_GROUP_SIZE" in line for line in script[1:-1])  # waits for the workers first
    assert worker["args"][0].startswith("until ray start --address=$(LWS_LEADER_ADDRESS):6379 --block")
    statuses = {e.item: e.status for e in t.fidelity.entries}
    assert statuses["ray start --num-cpus"] == FidelityStatus.APPROXIMATED  # $SLURM_CPUS_ON_NODE
    assert statuses["ray start (head)"] == statuses["ray start (workers)"] == FidelityStatus.MAPPED
    assert not any("KubeRay" in e.reason for e in t.fidelity.entries)


@pytest.mark.parametrize(
    ("flavor", "body", "why"),
    [
        ("jobset", HEAD + SGLANG, "natively a LeaderWorkerSet"),
        ("auto", HEAD + "mkdir -p /scratch/cache\n" + SGLANG, "once before the servers start"),
        ("auto", HEAD + SGLANG.replace("srun --nodes=2 --ntasks-per-node=1 ", ""), "on node 0 of 2 nodes"),
        (
            "auto",
            HEAD + SGLANG.replace("--ntasks-per-node=1", "--ntasks-per-node=2"),
            "srun --ntasks-per-node",
        ),
        ("auto", "srun python -m myapp.api_server --model /m\n", "is given no --port"),
        ("auto", HEAD + SGLANG.replace("--port 30000", "--port $PORT"), "$PORT comes from the submitter"),
        ("auto", HEAD + SGLANG + "python notify.py\n", "runs once after the step"),
    ],
)
def test_what_keeps_a_multi_node_server_emulated(flavor: str, body: str, why: str) -> None:
    t, _ = _translate(body, flavor)
    assert t.style == "emulate" and why in t.style_reason, t.style_reason


def test_a_server_on_one_node_or_a_script_that_serves_nothing_is_no_group() -> None:
    one, _ = _translate(HEAD + SGLANG.replace("--nodes=2 ", ""), header=HEADER.replace("-N 2", "-N 1"))
    assert (one.flavor, one.style) == ("job", "native")
    training, _ = _translate("srun python train.py --epochs 3\n")
    assert training.flavor == "jobset"


def test_flavor_lws_forces_the_group_and_falls_back_with_the_reason_it_cannot() -> None:
    t, _ = _translate(HEAD + SGLANG, "lws")
    assert (t.flavor, t.style, t.fallback) == ("lws", "native", None)
    none, _ = _translate("srun python train.py\n", "lws")
    assert none.flavor == "jobset" and none.fallback and "no model server" in none.fallback
    assert any(d.code == "TRANSLATE-FLAVOR-FALLBACK" for d in none.diagnostics)
    blocked, _ = _translate(HEAD + "mkdir -p /scratch/cache\n" + SGLANG, "lws")
    assert blocked.flavor == "jobset" and blocked.fallback is not None
    assert "does not read as a model server across nodes" in blocked.fallback
    assert any(e.item == "--flavor lws" for e in blocked.fidelity.entries)


def test_kueue_admits_the_group_by_its_queue_label() -> None:
    t, docs = _translate(HEAD + SGLANG, "kueue", header=HEADER + "#SBATCH --partition=gpu\n")
    lws = docs[0]
    assert (t.flavor, lws["kind"]) == ("kueue", "LeaderWorkerSet")
    assert lws["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "gpu"
    assert "suspend" not in lws["spec"]


@pytest.mark.parametrize("case", ["sglang_llama405b", "vllm_ray_llama405b"])
def test_the_manifests_pass_strict_validation_and_a_wrong_field_does_not(case: str) -> None:
    (text,) = _case(case).translations[0].files.values()
    assert validate.validate_documents(text) == []
    docs = [d for d in yaml.safe_load_all(text) if d]
    docs[0]["spec"]["leaderWorkerTemplate"]["sizes"] = 2
    docs[0]["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]["restartPolicy"] = "Never"
    problems = [p.path for p in validate.validate_object(docs[0])]
    assert problems == [
        "spec.leaderWorkerTemplate.sizes",
        "spec.leaderWorkerTemplate.workerTemplate.spec.restartPolicy",
    ]


@pytest.mark.parametrize("case", ["sglang_llama405b", "vllm_ray_llama405b"])
def test_the_kubernetes_reader_reads_the_group_back_as_the_same_job(case: str) -> None:
    """Nodes, GPUs per node and the leader's command: the same job the sbatch script is; its port
    and the Service make it a service the reader sees."""
    source = _case(case).translations[0]
    path = CASES / f"{case}.sbatch"
    (original,) = reader.read(path.read_text(encoding="utf-8"), str(path), Collector(str(path)))
    (text,) = source.files.values()
    (back,) = k8s_reader.read(text, "leaderworkerset.yaml", Collector("leaderworkerset.yaml"))
    assert back.kind == JobKind.LEADER_WORKER_SET
    assert [(c.name, c.replicas) for c in back.components] == [("leader", 1), ("worker", 1)]
    assert back.total_nodes() == original.total_nodes() == 2
    per_node = {c.resources.gpus_per_node for c in back.components}
    assert per_node == {original.components[0].resources.computed_gpus_per_node()} == {8}
    lws = next(d for d in yaml.safe_load_all(text) if d)
    leader, _ = _containers(lws)
    command = (*leader["command"], *leader.get("args", ()))
    assert back.components[0].containers[0].command + back.components[0].containers[0].args == command
    model = "/fsx/models/Meta-Llama-3.1-405B-Instruct"
    assert model in " ".join(command) and model in (original.script.body if original.script else "")
    (service,) = back.services
    port = leader["ports"][0]["containerPort"]
    assert service.addresses == (f"{source.name}-leader",) and port in service.ports


# ---------------------------------------------------------------------------
# The group run as local pods: the leader's address, the group's size and each pod's rank

# Stands in for SGLang: the leader (rank 0) takes one connection from every other rank at the
# init address; each rank writes what it saw.
FAKE_SERVER = """
import argparse, json, os, socket, time
p = argparse.ArgumentParser()
for name in ("--model-path", "--dist-init-addr", "--host", "--out"):
    p.add_argument(name)
p.add_argument("--nnodes", type=int)
p.add_argument("--node-rank", type=int)
p.add_argument("--port", type=int)
a = p.parse_args()
host, port = a.dist_init_addr.rsplit(":", 1)
seen = {"rank": a.node_rank, "nnodes": a.nnodes, "hostname": socket.gethostname(), "init": host,
        "env": {k: v for k, v in os.environ.items() if k.startswith("LWS_")}}
if a.node_rank == 0:
    s = socket.create_server(("0.0.0.0", int(port)))
    peers = []
    while len(peers) < a.nnodes - 1:
        c, _ = s.accept()
        peers.append(int(c.recv(16).decode()))
        c.close()
    seen["peers"] = sorted(peers)
else:
    for _ in range(300):
        try:
            c = socket.create_connection((host, int(port)))
            break
        except OSError:
            time.sleep(0.1)
    c.sendall(str(a.node_rank).encode())
    c.close()
with open(os.path.join(a.out, f"rank-{a.node_rank}.json"), "w") as f:
    json.dump(seen, f)
"""
RUN_SITE = parse_site_config(
    {
        "site": "run",
        "filesystems": [{"prefix": "/mnt/shared", "kind": "nfs", "pvc": "shared"}],
        "defaults": {"image": "stand-in", "namespace": "run"},
    }
)


def test_the_groups_pods_find_the_leader_and_take_ranks_0_to_n_minus_1(tmp_path: Path) -> None:
    require_pods()
    shared = tmp_path / "shared"
    (shared / "fake" / "sglang").mkdir(parents=True)
    (shared / "fake" / "sglang" / "__init__.py").write_text("")
    (shared / "fake" / "sglang" / "launch_server.py").write_text(FAKE_SERVER)
    (shared / "out").mkdir()
    script = textwrap.dedent(
        """\
        #!/bin/bash
        #SBATCH --job-name=lws-run
        #SBATCH --nodes=3
        #SBATCH --ntasks-per-node=1
        export PYTHONPATH=/mnt/shared/fake
        head=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n1)
        srun python3 -m sglang.launch_server --model-path /mnt/shared/model --nnodes $SLURM_NNODES \\
            --node-rank $SLURM_NODEID --dist-init-addr $head:29555 --host 0.0.0.0 --port 30000 \\
            --out /mnt/shared/out
        """
    )
    (job,) = reader.read(script, "lws-run.sbatch", Collector("lws-run.sbatch"))
    t = translate_jobs([job], config=RUN_SITE).translations[0]
    assert (t.flavor, t.style) == ("lws", "native"), t.style_reason
    (text,) = t.files.values()
    result = run_pods(text, tmp_path / "pods", claims={"shared": shared}, timeout=90)
    assert result.status == "Complete", result.describe()
    ranks = {
        int(p.stem.split("-")[1]): json.loads(p.read_text()) for p in (shared / "out").glob("rank-*.json")
    }
    assert sorted(ranks) == [0, 1, 2]
    leader = "lws-run-0.lws-run.run"
    for rank, seen in ranks.items():
        assert (seen["nnodes"], seen["init"], seen["env"]["LWS_LEADER_ADDRESS"]) == (3, leader, leader)
        assert seen["env"]["LWS_WORKER_INDEX"] == str(rank)
    assert ranks[0]["peers"] == [1, 2] and ranks[0]["hostname"] == "lws-run-0"
    assert {ranks[1]["hostname"], ranks[2]["hostname"]} == {"lws-run-0-1", "lws-run-0-2"}
