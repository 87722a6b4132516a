"""The Slurm environment of a pod: static ``SLURM_*`` values and the ``MIGRATE_*`` inputs of the entrypoint.

Values known when translating (node count, tasks, CPUs, GPUs, names) are
written into the manifest, where a reviewer sees them; values that depend on
the pod (node id, array task id, host list, job id) are computed by the
entrypoint from the ``MIGRATE_*`` variables set here. ``Topology`` says, per
flavor, where a pod finds its index and how its peers are named.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from migrate import ir
from migrate.devices import GPU
from migrate.names import job_file_name
from migrate.site.allocation_model import Source
from migrate.site.task_layout import job_layout, layout_text
from migrate.translators.job_variables import POD
from migrate.vocab import JobKind

from . import step_service, submit_dir, submitter
from .translation_context import Context

MOUNT_DIR = POD.DIR.default or ""  # where the ConfigMap of the scripts is mounted


@dataclass(frozen=True)
class Topology:
    """How the pods of one component find their index and each other."""

    index_from: str | None = None  # env var holding the pod's index in its group
    index_env: tuple[dict[str, Any], ...] = ()  # env entries that provide index_from
    nodes: int = 1  # pods per array task / component
    node_offset: int = 0  # global node id of this component's first pod (hetjobs)
    hosts: tuple[str, ...] = ()  # explicit host list (all components)
    host_prefix: str | None = None  # or "prefix<N>suffix"
    host_suffix: str = ""
    het_group: int | None = None
    uid_label: str | None = "batch.kubernetes.io/controller-uid"  # pod label with the job's uid
    uid_is_name: bool = False  # the label holds the job's name: the operator gives its pods no uid
    srun_mode: str = "local"  # local | mpirun
    restarts_annotation: str | None = None


# Variables the entrypoint and the srun shim compute in the pod.
COMPUTED = frozenset(
    {
        "SLURM_NODEID", "SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_JOB_ID", "SLURM_JOB_ID", "SLURM_JOBID",
        "SLURM_JOB_NODELIST", "SLURM_NODELIST", "SLURMD_NODENAME", "SLURM_TOPOLOGY_ADDR", "SLURM_PROCID",
        "SLURM_LOCALID", "SLURM_TASK_PID", "SLURM_RESTART_COUNT", "SLURM_SUBMIT_DIR", "SLURM_SUBMIT_HOST",
        "SLURM_JOB_START_TIME", "SLURM_JOB_END_TIME", "SLURM_STEP_NUM_TASKS", "SLURM_STEP_NUM_NODES",
        "SLURM_STEP_NODELIST",
    }
)  # fmt: skip
# Computed, but not quite what Slurm gives.
APPROXIMATE = {
    "SLURM_JOB_ID": "the Kubernetes job's uid (a UUID, plus -<task> in arrays), not a number",
    "SLURM_JOBID": "the Kubernetes job's uid (a UUID), not a number",
    "SLURM_ARRAY_JOB_ID": "the Kubernetes job's uid (a UUID), not a number",
    "SLURM_RESTART_COUNT": "the pod's index failure count or its JobSet's restarts, once there was one",
    "SLURM_SUBMIT_DIR": "the site's kubernetes.submit_dirs, else the folder the pod starts in",
    "SLURM_SUBMIT_HOST": "the pod's own host name",
    "SLURM_TASK_PID": "the entrypoint's process id",
}
_HET_VAR = re.compile(r"SLURM_([A-Z_]+)_HET_GROUP_([0-9]+)\Z")


def batch_task_counts(res: ir.Resources) -> dict[str, int]:
    """The task counts sbatch puts in the batch shell's environment: SLURM_NTASKS (and SLURM_NPROCS)
    only when --ntasks or --ntasks-per-node asks for tasks, SLURM_NTASKS_PER_NODE only with
    --ntasks-per-node (a job that asks neither runs one task a node, and its script sees none)."""
    out: dict[str, int] = {}
    if res.tasks or res.tasks_per_node:
        out["SLURM_NTASKS"] = out["SLURM_NPROCS"] = res.computed_tasks()
    if res.tasks_per_node:
        out["SLURM_NTASKS_PER_NODE"] = res.tasks_per_node
    return out


def array_ranges(spec: ir.ArraySpec) -> list[tuple[int, int, int]]:
    """The array's indices as ``(start, step, count)`` runs, in order."""
    if spec.indices:
        return _runs(spec.indices)
    runs: list[tuple[int, int, int]] = []
    for item in spec.spec.split("%", 1)[0].split(","):
        m = re.fullmatch(r"([0-9]+)(?:-([0-9]+)(?::([0-9]+))?)?", item)
        if not m:
            continue
        first, last = int(m.group(1)), int(m.group(2) or m.group(1))
        step = int(m.group(3) or 1)
        runs.append((first, step, (last - first) // step + 1))
    return sorted(runs)


def _runs(indices: tuple[int, ...]) -> list[tuple[int, int, int]]:
    runs: list[tuple[int, int, int]] = []
    i = 0
    while i < len(indices):
        start = indices[i]
        if i + 1 < len(indices):
            step = indices[i + 1] - start
            n = 2
            while i + n < len(indices) and indices[i + n] - indices[i + n - 1] == step:
                n += 1
            if n > 2:
                runs.append((start, step, n))
                i += n
                continue
        runs.append((start, 1, 1))
        i += 1
    return runs


def array_count(spec: ir.ArraySpec) -> int:
    return spec.count or sum(n for _, _, n in array_ranges(spec))


def _lit(name: str, value: object) -> dict[str, Any]:
    return {"name": name, "value": str(value)}


def _field(name: str, path: str) -> dict[str, Any]:
    return {"name": name, "valueFrom": {"fieldRef": {"fieldPath": path}}}


def tasks_per_node_text(res: ir.Resources) -> str:
    """SLURM_TASKS_PER_NODE: Slurm's layout (15,1), else the even count (8(x2)), or the tasks dealt
    round-robin where the nodes' size is unknown (-N 2 -n 3: 2,1)."""
    nodes = res.computed_nodes()
    layout = res.task_layout or job_layout(res.tasks, nodes, res.tasks_per_node, None, False)
    return layout_text(layout or [res.computed_tasks_per_node()] * nodes)


def node_cpus_layout(res: ir.Resources, cpus: int) -> tuple[int, ...]:
    """The job's CPUs on each node where its task layout differs per node and the CPUs follow the
    tasks (--cpus-per-task, or one a task); () otherwise."""
    if not res.task_layout or cpus != max(res.task_layout) * (res.cpus_per_task or 1):
        return ()
    return tuple(n * (res.cpus_per_task or 1) for n in res.task_layout)


def slurm_job_name(job: ir.Job, fallback: str) -> str:
    """The name Slurm gives the job: ``--job-name``, else a batch script's file name."""
    if job.name:
        return job.name
    if job.kind == JobKind.SBATCH and job.source.path:
        return job_file_name(job.source.path)
    return fallback


def environment(
    ctx: Context,
    comp: ir.Component,
    index: int,
    topo: Topology,
    cpus: int,
    gpus: int,
    io_env: list[dict[str, Any]],
) -> list[dict[str, Any]]:
    """The env list of the main container: static SLURM_* first, then MIGRATE_* inputs."""
    job = ctx.job
    res = comp.resources
    nodes = res.computed_nodes()
    spread = node_cpus_layout(res, cpus)  # the CPUs of each node, where they differ
    env: list[dict[str, Any]] = [
        _lit("SLURM_JOB_NAME", slurm_job_name(job, ctx.name)),
        _lit("SLURM_JOB_NUM_NODES", nodes),
        _lit("SLURM_NNODES", nodes),
        *(_lit(name, value) for name, value in batch_task_counts(res).items()),
        _lit("SLURM_TASKS_PER_NODE", tasks_per_node_text(res)),
        _lit("SLURM_CPUS_ON_NODE", cpus),
        _lit("SLURM_JOB_CPUS_PER_NODE", layout_text(spread or [cpus] * nodes)),
    ]
    if res.cpus_per_task and len(job.components) == 1:  # a hetjob's is per component only
        env.append(_lit("SLURM_CPUS_PER_TASK", res.cpus_per_task))
    if res.cpus_per_gpu:  # sbatch sets it only when --cpus-per-gpu is given
        env.append(_lit("SLURM_CPUS_PER_GPU", res.cpus_per_gpu))
    if res.tasks_per_gpu:  # likewise, checked on the sandbox
        env.append(_lit("SLURM_NTASKS_PER_GPU", res.tasks_per_gpu))
    if gpus:
        env += [
            _lit("SLURM_GPUS_ON_NODE", gpus),
            _lit("SLURM_GPUS_PER_NODE", gpus),
            _lit("SLURM_GPUS", gpus * nodes),
            _lit("SLURM_JOB_GPUS", ",".join(str(i) for i in range(gpus))),
            # Slurm sets it to the job's GPUs; the device plugin sets only NVIDIA_VISIBLE_DEVICES,
            # and the container sees its GPUs as 0..N-1
            _lit(GPU.visible_devices, ",".join(str(i) for i in range(gpus))),
        ]
    if res.mem_per_node_mb:
        env.append(_lit("SLURM_MEM_PER_NODE", res.mem_per_node_mb))
    if res.mem_per_cpu_mb:
        env.append(_lit("SLURM_MEM_PER_CPU", res.mem_per_cpu_mb))
    if res.mem_per_gpu_mb:
        env.append(_lit("SLURM_MEM_PER_GPU", res.mem_per_gpu_mb))
    place = job.placement
    if place.partitions:
        env.append(_lit("SLURM_JOB_PARTITION", place.partitions[0]))
    if place.account:
        env.append(_lit("SLURM_JOB_ACCOUNT", place.account))
    if place.qos:
        env.append(_lit("SLURM_JOB_QOS", place.qos))
    env.append(_lit("SLURM_CLUSTER_NAME", ctx.site.name))
    submitted_from = submit_dir.folder(ctx)
    if submitted_from:  # --chdir moves the script, not the folder sbatch ran in
        env.append(_lit("SLURM_SUBMIT_DIR", submitted_from))
    if job.array is not None:
        ranges = array_ranges(job.array)
        indices = [s + k * st for s, st, n in ranges for k in (range(n) if n <= 2 else (0, n - 1))]
        steps = {st for _, st, n in ranges if n > 1}
        env += [
            _lit("SLURM_ARRAY_TASK_COUNT", array_count(job.array)),
            _lit("SLURM_ARRAY_TASK_MIN", min(indices) if indices else 0),
            _lit("SLURM_ARRAY_TASK_MAX", max(indices) if indices else 0),
            _lit("SLURM_ARRAY_TASK_STEP", steps.pop() if len(steps) == 1 and len(ranges) == 1 else 1),
        ]
    if len(job.components) > 1:
        env += _het_env(ctx, topo)
    env += submitter.env(ctx)
    # Inputs of the entrypoint and the shims.
    env.append(_lit(POD.DIR.name, MOUNT_DIR))
    env.extend(topo.index_env)
    if topo.index_from:
        env.append(_lit(POD.INDEX_FROM.name, topo.index_from))
    env.append(_lit(POD.NODES.name, topo.nodes))
    env.append(_lit(POD.TASKS_PER_NODE.name, res.computed_tasks_per_node()))  # the srun shim's default
    alloc = ctx.allocation.components[index] if ctx.allocation is not None else None
    if alloc is not None and gpus and alloc.gpus_per_node.source == Source.EXCLUSIVE:
        # --exclusive gave the job all of the node's GPUs; its steps get those it asked (Slurm 22.05)
        env.append(_lit(POD.STEP_GPUS.name, res.computed_gpus_per_node()))
    if res.task_layout:  # the entrypoint's task and CPU counts of each node, srun's bounds
        env.append(_lit(POD.TASK_LAYOUT.name, ",".join(map(str, res.task_layout))))
        if spread:
            env.append(_lit(POD.NODE_CPUS.name, ",".join(map(str, spread))))
    if topo.node_offset:
        env.append(_lit(POD.NODE_OFFSET.name, topo.node_offset))
    if topo.het_group is not None:
        env.append(_lit(POD.HET_GROUP.name, topo.het_group))
    if topo.hosts:
        env.append(_lit(POD.HOSTS.name, " ".join(topo.hosts)))
    elif topo.host_prefix:
        env.append(_lit(POD.HOST_PREFIX.name, topo.host_prefix))
        env.append(_lit(POD.HOST_SUFFIX.name, topo.host_suffix))
    if job.array is not None:
        env.append(
            _lit(POD.ARRAY_RANGES.name, " ".join(f"{s}:{st}:{n}" for s, st, n in array_ranges(job.array)))
        )
    if topo.uid_label:
        env.append(_field(POD.JOB_UID.name, f"metadata.labels['{topo.uid_label}']"))
    else:
        env.append(_field(POD.JOB_UID.name, "metadata.name"))
    ctx.job_id_is_name = topo.uid_is_name
    if topo.restarts_annotation:
        env.append(_field(POD.RESTARTS.name, f"metadata.annotations['{topo.restarts_annotation}']"))
    if job.time_limit_s:
        env.append(_lit(POD.TIME_LIMIT.name, job.time_limit_s))
    if topo.srun_mode != "local":
        env.append(_lit(POD.SRUN_MODE.name, topo.srun_mode))
    elif job.total_nodes() > 1:  # node 0's srun sends steps to the other pods' step service
        env.append(step_service.token_env(ctx))
    env.extend(io_env)
    sig = job.failure.signal
    if sig is not None:
        env += [
            _lit(POD.SIGNAL.name, sig.name),
            _lit(POD.SIGNAL_LEAD.name, sig.seconds_before),
            _lit(POD.SIGNAL_BATCH_ONLY.name, 1 if sig.batch_only else 0),
        ]
    return env


def _het_env(ctx: Context, topo: Topology) -> list[dict[str, Any]]:
    env = [_lit("SLURM_HET_SIZE", len(ctx.job.components))]
    offset = 0
    for i, comp in enumerate(ctx.job.components):
        res = comp.resources
        nodes = res.computed_nodes() * comp.replicas
        hosts = topo.hosts[offset : offset + nodes]
        group: dict[str, object] = {
            "JOB_NODELIST": ",".join(hosts),
            "NODELIST": ",".join(hosts),
            "JOB_NUM_NODES": nodes,
            "NNODES": nodes,
            "NTASKS": res.computed_tasks(),
            "NPROCS": res.computed_tasks(),
            "TASKS_PER_NODE": tasks_per_node_text(res),
        }
        if res.tasks_per_node:  # as without a hetjob: only when --ntasks-per-node is given
            group["NTASKS_PER_NODE"] = res.tasks_per_node
        if res.cpus_per_task:
            group["CPUS_PER_TASK"] = res.cpus_per_task
        # Slurm 22.05 still sets the pre-20.02 names (PACK_GROUP) beside the new ones
        env += [
            _lit(f"SLURM_{name}_{kind}_GROUP_{i}", value)
            for kind in ("HET", "PACK")
            for name, value in group.items()
        ]
        offset += nodes
    return env


JOB_ID_VARS = frozenset(("SLURM_JOB_ID", "SLURM_JOBID", "SLURM_ARRAY_JOB_ID"))
# Where the pods' job id is the job's name (no uid label, or a native translation)
NAME_AS_JOB_ID = (
    "unique while the job runs, but a rerun under the same name gets the same value, so a path built "
    "from it is reused, where Slurm numbers every run anew"
)


def record_script_variables(ctx: Context, env_names: set[str]) -> None:
    """One fidelity entry per SLURM_* variable the script reads."""
    script = ctx.job.script
    if script is None:
        return
    for var in script.slurm_vars:
        item = f"${var}"
        if var in JOB_ID_VARS and ctx.job_id_is_name:
            ctx.fidelity.approximated(
                item,
                f"set by the entrypoint: the job's name (its pods carry no uid of their job): "
                f"{NAME_AS_JOB_ID}",
            )
        elif var in APPROXIMATE:
            ctx.fidelity.approximated(item, f"set by the entrypoint: {APPROXIMATE[var]}")
        elif var in COMPUTED:
            ctx.fidelity.mapped(item, "set by the entrypoint from the pod's index and peers")
        elif var in env_names:
            ctx.fidelity.mapped(item, "set in the container env")
        elif _HET_VAR.match(var) and len(ctx.job.components) > 1:
            ctx.fidelity.dropped(item, "this heterogeneous-job variable is not emulated")
        else:
            ctx.fidelity.dropped(item, "no Kubernetes counterpart; the variable is unset in the pod")
            ctx.diag("TRANSLATE-SLURM-VAR", f"the script reads ${var}, which the pod does not provide")


__all__ = [
    "COMPUTED",
    "MOUNT_DIR",
    "Topology",
    "array_count",
    "array_ranges",
    "environment",
    "record_script_variables",
]
