"""How the pods of a Kubernetes workload become Slurm scripts, components and job steps.

A pod is one node (the reader's convention), so a role with N replicas is N
nodes. Roles that run the same program on the same resources are one group of
nodes (PyTorchJob Master + Workers, Volcano tasks of a torch job); roles that
differ run side by side as the components of a heterogeneous job; roles that
wait for each other (JobSet ``dependsOn``, Volcano task ``dependsOn``) become
separate scripts chained by ``submit.sh``. The launch style says how the
program starts on those nodes:

- ``plain``: ``srun`` runs the container's program once per node;
- ``torch``: ``srun torchrun`` with a c10d rendezvous on the first node;
- ``mpi``: the launcher pod disappears, ``srun --mpi=pmix`` starts the ranks on
  the worker nodes (``slotsPerWorker`` ranks per node);
- ``ray``: a Ray head on the first node, workers on the others, then the entrypoint;
- ``lws``: one LeaderWorkerSet group per allocation, the leader's program on its first task and the
  workers' on the others (:mod:`.kube_groups`).
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field

from migrate import ir, workloads
from migrate.vocab import ContainerStage, DependencyType, EnvOrigin
from migrate.workloads import Launch

# The launch styles: each kind declares its own (migrate/workloads.py); a group of roles of
# another kind may still run torch by its program.
PLAIN = Launch.PLAIN
TORCH = Launch.TORCH
MPI = Launch.MPI
RAY = Launch.RAY
LWS = Launch.LWS

TORCH_PROGRAMS = frozenset({"torchrun", "torch.distributed.run", "torch.distributed.launch"})
MPI_PROGRAMS = frozenset({"mpirun", "mpiexec", "orterun"})
_LAUNCHER_ROLES = frozenset({"launcher"})


@dataclass
class Part:
    """One homogeneous group of nodes: the job, or one component of a heterogeneous job."""

    name: str
    roles: list[ir.Component]  # the source roles merged into this group
    nodes: int
    launch: Launch = PLAIN
    launcher: ir.Component | None = None  # MPI: the role whose mpirun line is run (its pod is not)
    note: str = ""  # why roles were merged or resources approximated
    # How the pods land on Slurm nodes, once the partition is known (``kube_job._resources``).
    nodes_allocated: int = 0
    pods_per_node: int = 1

    @property
    def main(self) -> ir.Component:
        return self.roles[0]

    @property
    def resources(self) -> ir.Resources:
        return self.main.resources


@dataclass
class Stage:
    """One batch script: the parts that run at the same time."""

    name: str
    parts: list[Part]
    after: list[tuple[str, str, int | None]] = field(default_factory=list)  # (stage, sbatch dep type, line)


def words(container: ir.Container | None) -> list[str]:
    return [] if container is None else [*container.command, *container.args]


def program_name(argv: list[str]) -> str:
    """The program an argv runs, with ``python -m module`` read as the module."""
    if not argv:
        return ""
    first = posixpath.basename(argv[0])
    if first.startswith("python") and len(argv) >= 3 and argv[1] == "-m":
        return argv[2]
    return first


def container_of(comp: ir.Component) -> ir.Container | None:
    """The container that does the pod's work: its first app container (init containers come first)."""
    return next((c for c in comp.containers if c.stage is ContainerStage.APP), None)


def init_containers(comp: ir.Component) -> list[ir.Container]:
    return [c for c in comp.containers if c.stage is ContainerStage.INIT]


def pods(comp: ir.Component) -> int:
    return max(1, comp.replicas) * comp.resources.computed_nodes()


def _same_program(a: ir.Component, b: ir.Component) -> bool:
    ca, cb = container_of(a), container_of(b)
    if ca is None or cb is None:
        return ca is cb
    return (ca.image, ca.command, ca.args, ca.workdir) == (cb.image, cb.command, cb.args, cb.workdir)


def _group(name: str, roles: list[ir.Component], launch: Launch) -> Part:
    """Roles run as one group of nodes; differing resources take the largest of each."""
    res = roles[0].resources
    note = ""
    for other in roles[1:]:
        if other.resources != res:
            res = _largest(res, other.resources)
            names = ", ".join(r.name for r in roles)
            note = f"roles {names} ask for different resources; each node gets the largest"
    first = ir.replace(roles[0], resources=res)
    return Part(name, [first, *roles[1:]], sum(pods(r) for r in roles), launch, note=note)


def _largest(a: ir.Resources, b: ir.Resources) -> ir.Resources:
    def top(x: int | None, y: int | None) -> int | None:
        return y if x is None else x if y is None else max(x, y)

    return ir.replace(
        a,
        cpus_per_node=top(a.cpus_per_node, b.cpus_per_node),
        cpus_per_task=top(a.cpus_per_task, b.cpus_per_task),
        mem_per_node_mb=top(a.mem_per_node_mb, b.mem_per_node_mb),
        gpus_per_node=top(a.gpus_per_node, b.gpus_per_node),
        tasks_per_node=top(a.tasks_per_node, b.tasks_per_node),
        tmp_disk_mb=top(a.tmp_disk_mb, b.tmp_disk_mb),
        gpu_type=a.gpu_type or b.gpu_type,
        node_selector=a.node_selector or b.node_selector,
        generic=a.generic or b.generic,
    )


def launch_style(job: ir.Job, roles: list[ir.Component]) -> Launch:
    """How a group of roles starts its program."""
    if workloads.launch_of(job.kind) == TORCH:  # its pods form one distributed torch job
        return TORCH
    programs = {program_name(words(container_of(r))) for r in roles}
    if programs & TORCH_PROGRAMS:
        return TORCH
    if any(item.key == "plugins" and '"pytorch"' in item.value for item in job.raw):
        return TORCH  # Volcano's pytorch plugin wires MASTER_ADDR/RANK like the operator does
    return PLAIN


def _mpi_launcher(job: ir.Job) -> ir.Component | None:
    """The role that runs mpirun (MPIJob Launcher, Volcano master task), if the job is MPI-shaped."""
    if len(job.components) < 2:
        return None
    for comp in job.components:
        argv_program = program_name(words(container_of(comp)))
        launched = {launcher.name for launcher in comp.launchers}
        if (
            comp.name.lower() in _LAUNCHER_ROLES
            or argv_program in MPI_PROGRAMS
            or (launched & MPI_PROGRAMS and workloads.launch_of(job.kind) != TORCH)
        ):
            return comp
    return None


def stages(job: ir.Job, name: str) -> list[Stage]:
    """The batch scripts a Kubernetes workload becomes."""
    comps = list(job.components)
    style = workloads.launch_of(job.kind)
    if style == RAY:
        return [Stage(name, [_group("ray", comps, RAY)])]
    if style == LWS and comps:
        return [Stage(name, group_parts(job))]
    launcher = _mpi_launcher(job) if style == MPI else None
    if launcher is not None:
        workers = [c for c in comps if c is not launcher] or [launcher]
        part = _group("workers", workers, MPI)
        part.launcher = launcher
        return [Stage(name, [part])]
    waits = _internal_waits(job)
    if not waits:
        return [Stage(name, _parts(job, comps))]
    # One script per role that waits or is waited for; the rest run with the first script.
    out: list[Stage] = []
    by_role: dict[str, Stage] = {}
    for comp in comps:
        stage = Stage(f"{name}-{comp.name}", _parts(job, [comp]))
        by_role[comp.name] = stage
        out.append(stage)
    for dependent, target, dep_type, line in waits:
        if dependent in by_role and target in by_role:
            by_role[dependent].after.append((by_role[target].name, dep_type, line))
    return out


def _parts(job: ir.Job, comps: list[ir.Component]) -> list[Part]:
    """Same program, same image: one group; different programs: one component each."""
    groups: list[list[ir.Component]] = []
    for comp in comps:
        for group in groups:
            if _same_program(group[0], comp):
                group.append(comp)
                break
        else:
            groups.append([comp])
    if len(groups) == 1:
        roles = groups[0]
        return [_group(roles[0].name if len(comps) == 1 else "main", roles, launch_style(job, roles))]
    return [_group(g[0].name, g, launch_style(job, g)) for g in groups]


# ---------------------------------------------------------------------------
# LeaderWorkerSet groups


def lws_groups(job: ir.Job) -> int:
    """The groups of a LeaderWorkerSet (``replicas``): the leader role has one pod per group."""
    return job.components[0].replicas if job.components else 0


def lws_size(job: ir.Job) -> int:
    """Pods per group (``leaderWorkerTemplate.size``): the leader and its workers."""
    groups = lws_groups(job)
    workers = sum(c.replicas for c in job.components[1:])
    return 1 + (workers // groups if groups else workers)


def split_roles(leader: ir.Component, worker: ir.Component) -> str:
    """Why the leader and the workers cannot be the tasks of one srun step ('' when they can)."""
    a, b = container_of(leader), container_of(worker)
    if leader.resources != worker.resources:
        return "the leader and the workers ask for different resources"
    if a is None or b is None:
        return "" if a is b else "only one of the roles has a container"
    if _where_it_runs(a) != _where_it_runs(b):
        return "the leader and the workers run different images, mounts or working folders"
    read_at_run_time = {}
    for var in leader.environment:
        if var.secret is not None or var.origin == EnvOrigin.ENV_FROM:
            read_at_run_time[var.name] = (var.value, var.secret, var.origin)
    for var in worker.environment:
        known = read_at_run_time.get(var.name)
        if known is not None and known != (var.value, var.secret, var.origin):
            return f"the leader and the workers read env {var.name} from different sources"
    return ""


def _where_it_runs(c: ir.Container) -> tuple[object, ...]:
    """What the container runtime wraps around a program: one srun step has one of it."""
    return (c.image, c.workdir, tuple(ir.replace(m, line=None) for m in c.mounts))


def group_parts(job: ir.Job) -> list[Part]:
    """One group of a LeaderWorkerSet: one part of ``size`` tasks, the leader first, when both roles
    fit one srun step; else a leader component and a workers component (a heterogeneous job)."""
    leader, workers = job.components[0], list(job.components[1:])
    size = lws_size(job)
    if not workers or size < 2:
        return [Part("leader", [leader], 1, LWS)]
    worker = workers[0]
    why = split_roles(leader, worker)
    if not why:
        return [Part("group", [leader, worker], size, LWS)]
    return [
        Part("leader", [leader], 1, LWS, note=f"{why}: a heterogeneous job, the leader's component first"),
        Part("workers", [worker], size - 1, LWS),
    ]


def _internal_waits(job: ir.Job) -> list[tuple[str, str, str, int | None]]:
    """(dependent role, target role, sbatch dependency type, line) for waits between roles of this job.

    ``ir.Dependency`` does not say which role waits; the reader lists the roles
    in file order and the ``dependsOn`` lies inside the waiting role, so the
    role that starts last before the dependency's line is the one.
    """
    roles = sorted((c for c in job.components if c.line is not None), key=lambda c: c.line or 0)
    names = {c.name for c in job.components}
    out: list[tuple[str, str, str, int | None]] = []
    for dep in job.dependencies:
        if dep.type != DependencyType.DEPENDS_ON or dep.line is None:
            continue
        owner = [c.name for c in roles if (c.line or 0) <= dep.line]
        if not owner:
            continue
        for target in dep.targets:
            role = target.split(":", 1)[1] if target.startswith(("replicatedJob:", "task:")) else target
            if role in names and role != owner[-1]:
                out.append((owner[-1], role, dependency_type(dep), dep.line))
    return out


def dependency_type(dep: ir.Dependency) -> DependencyType:
    """JobSet ``Complete`` waits for success; ``Ready`` (and Volcano task order) only for the start."""
    if dep.status == "Complete":
        return DependencyType.AFTEROK
    return DependencyType.AFTER


def is_internal(job: ir.Job, dep: ir.Dependency) -> bool:
    names = {c.name for c in job.components}
    return dep.type == DependencyType.DEPENDS_ON and all(
        (t.split(":", 1)[1] if t.startswith(("replicatedJob:", "task:")) else t) in names for t in dep.targets
    )


__all__ = [
    "LWS",
    "MPI",
    "PLAIN",
    "RAY",
    "TORCH",
    "Part",
    "Stage",
    "container_of",
    "dependency_type",
    "group_parts",
    "is_internal",
    "launch_style",
    "lws_groups",
    "lws_size",
    "pods",
    "program_name",
    "split_roles",
    "stages",
    "words",
]
