"""Kubeflow training jobs: PyTorchJob (kubeflow.org/v1) and MPIJob (kubeflow.org/v2beta1).

PyTorchJob: node 0 is the Master, the others Workers; every pod runs the
script, whose ``torchrun`` (started once per pod by the srun shim) finds its
peers through ``MASTER_ADDR``/``MASTER_PORT`` and ``PET_*`` set by the
operator. ``nprocPerNode`` comes from the torchrun options.

MPIJob: the Launcher pod runs the script, so ``mpirun`` (or ``srun --mpi``,
which the shim turns into ``mpirun``) starts the ranks on the Worker pods
through the operator's hostfile; Workers only run sshd. ``slotsPerWorker`` is
the tasks per node.
"""

from __future__ import annotations

import copy
from typing import Any

from . import execution, flavors, native, pod_template, slurmenv, submit_dir
from .flavors import nproc_per_node
from .job_policy import JobPolicy
from .kinds import PYTORCH_PORT_NAME
from .storage import Volume
from .translation_context import Context, Workload
from .yamlemit import Manifest, Path

PYTORCH_API = "kubeflow.org/v1"
MPI_API = "kubeflow.org/v2beta1"
REPLICA_LABEL = "training.kubeflow.org/job-name"
SSHD = ["/usr/sbin/sshd", "-De"]
MPI_NOT_SLURM = (
    ("OMPI_MCA_plm", "rsh"),  # Open MPI: launch over ssh, not srun
    ("OMPI_MCA_ras", "^slurm"),  # and take the hosts from the hostfile, not SLURM_JOB_NODELIST
    ("HYDRA_BOOTSTRAP", "ssh"),  # MPICH
    ("I_MPI_HYDRA_BOOTSTRAP", "ssh"),  # Intel MPI
)


def _run_policy(policy: JobPolicy, kueue: bool) -> dict[str, Any]:
    run: dict[str, Any] = {"cleanPodPolicy": "None", "backoffLimit": policy.backoff_limit}
    if policy.active_deadline is not None:
        run["activeDeadlineSeconds"] = policy.active_deadline
    if kueue or policy.suspend:
        run["suspend"] = True
    return run


def _meta(ctx: Context, policy: JobPolicy) -> dict[str, object]:
    meta = ctx.metadata()
    meta["labels"] = {**meta["labels"], **policy.labels}  # type: ignore[dict-item]
    if policy.annotations:
        meta["annotations"] = {**meta["annotations"], **policy.annotations}  # type: ignore[dict-item]
    return meta


def _add_notes(manifest: Manifest, base: Path, comments: dict[Path, list[str]]) -> None:
    for path, texts in comments.items():
        for text in texts:
            manifest.note((*base, *path), text)


def build_pytorch(
    ctx: Context, policy: JobPolicy, volumes: list[Volume], kueue: bool = False
) -> tuple[list[Manifest], Workload]:
    comp = ctx.job.components[0]
    nodes = comp.resources.computed_nodes() * comp.replicas
    hosts = [f"{ctx.name}-master-0"] + [f"{ctx.name}-worker-{i}" for i in range(nodes - 1)]
    topo = slurmenv.Topology(
        index_from="RANK", nodes=nodes, hosts=tuple(hosts), uid_label=REPLICA_LABEL, uid_is_name=True
    )
    parts = pod_template.build(ctx, comp, 0, topo, policy, volumes, container_name="pytorch")
    launcher = flavors.torch_launcher(ctx.job)
    nproc = nproc_per_node(launcher, parts.gpus)
    worker = copy.deepcopy(parts.template)
    elastic = ctx.native.elastic if ctx.native is not None else None
    if ctx.native is None:
        execution.record_batch_host(ctx, nodes)
    elif elastic is None:
        _native_master(ctx, parts.template)
    replicas: dict[str, Any] = {
        "Master": {"replicas": 1, "restartPolicy": "Never", "template": parts.template}
    }
    if nodes > 1:
        replicas["Worker"] = {"replicas": nodes - 1, "restartPolicy": "Never", "template": worker}
    spec: dict[str, Any] = {"nprocPerNode": nproc}
    if elastic is not None:
        replicas = {"Worker": {"replicas": elastic[1], "restartPolicy": "Never", "template": worker}}
        spec["elasticPolicy"] = _elastic_policy(ctx, elastic, policy)
    spec |= {"runPolicy": _run_policy(policy, kueue), "pytorchReplicaSpecs": replicas}
    manifest = Manifest(
        {"apiVersion": PYTORCH_API, "kind": "PyTorchJob", "metadata": _meta(ctx, policy), "spec": spec}
    )
    manifest.note(
        ("spec", "pytorchReplicaSpecs"),
        "node 0 is the Master; the operator sets MASTER_ADDR, "
        "MASTER_PORT, WORLD_SIZE, RANK and PET_* in every pod",
    )
    for role in replicas:
        _add_notes(manifest, ("spec", "pytorchReplicaSpecs", role, "template"), parts.comments)
    return [*pod_template.script_manifests(ctx), manifest], Workload(
        "pytorchjob", ctx.name, ctx.namespace, "Succeeded", "Failed"
    )


def _elastic_policy(ctx: Context, bounds: tuple[int, int], policy: JobPolicy) -> dict[str, Any]:
    """torchrun's rendezvous across min..max Worker pods, set by the operator (PET_NNODES=min:max ...)."""
    low, high = bounds
    restarts = native.max_restarts(ctx.native.argv_as_written())
    out = {"rdzvBackend": "c10d", "minReplicas": low, "maxReplicas": high}
    out["maxRestarts"] = restarts if restarts is not None else policy.backoff_limit
    ctx.fidelity.approximated(
        ctx.option("nodes", f"{low}-{high}"),
        f"elasticPolicy: {high} Worker pods, torchrun's rendezvous goes on with {low} to {high} "
        f"(the operator's PET_NNODES={low}:{high}); Slurm fixes the count when the job starts, here "
        "pods may join or leave while it runs",
        ctx.line_of("nodes"),
    )
    return out


def _native_master(ctx: Context, template: dict[str, Any]) -> None:
    """The once-only statements in the Master's init container; the script's MASTER_PORT as its port."""
    container = template["spec"]["containers"][0]
    port = ctx.native.master_port()
    if port:
        container["ports"] = [{"name": PYTORCH_PORT_NAME, "containerPort": int(port)}]
    init = ctx.native.init_container(container, submit_dir.start(ctx))
    if init is not None:
        template["spec"]["initContainers"] = [init]


def build_mpi(
    ctx: Context, policy: JobPolicy, volumes: list[Volume], kueue: bool = False
) -> tuple[list[Manifest], Workload]:
    comp = ctx.job.components[0]
    res = comp.resources
    nodes = res.computed_nodes() * comp.replicas
    hosts = tuple(f"{ctx.name}-worker-{i}.{ctx.name}" for i in range(nodes))
    topo = slurmenv.Topology(
        nodes=1, hosts=hosts, uid_label=REPLICA_LABEL, uid_is_name=True, srun_mode="mpirun"
    )
    parts = pod_template.build(ctx, comp, 0, topo, policy, volumes)
    if ctx.native is None:
        execution.record_batch_host(
            ctx, nodes, "runs once, in the Launcher pod; mpirun starts the ranks on the Workers"
        )
    worker = copy.deepcopy(parts.template)
    worker_container = worker["spec"]["containers"][0]
    worker_container["command"] = list(SSHD)
    worker_container.pop("args", None)
    launcher = copy.deepcopy(parts.template)
    lspec = launcher["spec"]
    if ctx.native is None:
        # The SLURM_* variables the entrypoint sets would make mpirun start its daemons with srun;
        # here they go over ssh to the hosts of the operator's hostfile.
        lspec["containers"][0]["env"] += [{"name": k, "value": v} for k, v in MPI_NOT_SLURM]
    lspec["containers"][0]["resources"] = {
        "requests": {"cpu": "1", "memory": "2Gi"},
        "limits": {"cpu": "1", "memory": "2Gi"},
    }
    for key in ("nodeSelector", "affinity", "tolerations"):
        lspec.pop(key, None)
    lspec["volumes"] = [v for v in lspec["volumes"] if v["name"] != "dshm"]
    lspec["containers"][0]["volumeMounts"] = [
        m for m in lspec["containers"][0]["volumeMounts"] if m["name"] != "dshm"
    ]
    if ctx.native is not None:
        init = ctx.native.init_container(lspec["containers"][0], submit_dir.start(ctx))
        if init is not None:
            lspec["initContainers"] = [init]
    spec = {
        "slotsPerWorker": res.computed_tasks_per_node(),
        "runPolicy": _run_policy(policy, kueue),
        "mpiImplementation": "OpenMPI",
        "mpiReplicaSpecs": {
            "Launcher": {"replicas": 1, "restartPolicy": "Never", "template": launcher},
            "Worker": {"replicas": nodes, "restartPolicy": "Never", "template": worker},
        },
    }
    manifest = Manifest(
        {"apiVersion": MPI_API, "kind": "MPIJob", "metadata": _meta(ctx, policy), "spec": spec}
    )
    manifest.note(
        ("spec", "mpiReplicaSpecs", "Launcher"),
        ("runs the job script" if ctx.native is None else "runs mpirun")
        + "; mpirun reaches the Workers through the operator's hostfile",
    )
    manifest.note(
        ("spec", "mpiReplicaSpecs", "Worker", "template", "spec", "containers", 0, "command"),
        "Workers only serve ssh for mpirun: the image needs sshd and the MPI the program was built with",
    )
    _add_notes(manifest, ("spec", "mpiReplicaSpecs", "Worker", "template"), parts.comments)
    ctx.diag(
        "TRANSLATE-MPI-IMAGE",
        "the MPIJob's Workers run sshd: the image needs an ssh server and the "
        "same MPI as the program (OpenMPI assumed)",
    )
    return [*pod_template.script_manifests(ctx), manifest], Workload(
        "mpijob", ctx.name, ctx.namespace, "Succeeded", "Failed"
    )


__all__ = ["build_mpi", "build_pytorch", "nproc_per_node"]
