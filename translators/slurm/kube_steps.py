"""The job steps of one node group: ``srun`` lines per launch style (plain, torch, MPI, Ray).

Used by :mod:`.kube_job`; the pieces they wrap (the container runtime, torchrun
and mpirun argv handling) are in :mod:`.launch`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

from migrate import ir, workloads
from migrate.render import plural
from migrate.vocab import ContainerRuntime, ContainerStage, EnvOrigin

from . import environment, kubevars, launch, shape
from .context import NO_RUNTIME, Context
from .quoting import c_string, shell_word
from .shape import MPI, TORCH, Part
from .volumes import Mounts

# What mpirun (Open MPI) tells each rank about its place, which programs read to pick a GPU or a file.
MPI_RANK_ENV = (
    "bash -c 'export OMPI_COMM_WORLD_RANK=$SLURM_PROCID OMPI_COMM_WORLD_SIZE=$SLURM_NTASKS "
    "OMPI_COMM_WORLD_LOCAL_RANK=$SLURM_LOCALID OMPI_COMM_WORLD_LOCAL_SIZE=$SLURM_NTASKS_PER_NODE "
    'OMPI_COMM_WORLD_NODE_RANK=$SLURM_NODEID; exec "$@"\' migrate-mpi-env'
)


def tasks_per_node(part: Part) -> int:
    if part.launch == MPI:
        res = part.resources
        if res.tasks_per_node:
            return res.tasks_per_node
        ranks = _mpi_line(part)
        if ranks is not None and ranks.ranks:
            return max(1, math.ceil(ranks.ranks / part.nodes))
    return 1


def record_containers(ctx: Context, part: Part, init_steps: bool = True) -> None:
    """``init_steps``: the init containers run as steps before the program (:func:`init_lines`)."""
    for role in part.roles:
        pod_containers = [c for c in role.containers if c.runtime == ContainerRuntime.KUBERNETES]
        app = shape.container_of(role)
        for i, container in enumerate(pod_containers):
            item = f"container {container.name or i} ({container.image})"
            if container.stage is ContainerStage.INIT:
                if init_steps:
                    ctx.fidelity.mapped(item, INIT_STEP, container.line)
                else:
                    reason = "init containers of this launch style do not run"
                    ctx.fidelity.dropped(item, reason, container.line)
            elif container.stage is ContainerStage.SIDECAR:
                reason = "a sidecar runs beside the pod's program; a Slurm task runs one program"
                ctx.fidelity.dropped(item, reason, container.line)
            elif container is not app:
                ctx.fidelity.dropped(
                    item,
                    "only the first container of a pod runs; sidecars have no Slurm counterpart",
                    container.line,
                )
            elif ctx.runtime == NO_RUNTIME:
                ctx.fidelity.approximated(
                    item,
                    "--container-runtime none: the program must be installed on the nodes",
                    container.line,
                )
            else:
                ctx.fidelity.mapped(item, f"runs in the image through {ctx.runtime}", container.line)


INIT_STEP = (
    "an init container: a step on each of its pods' tasks before the program starts; the job ends if it fails"
)
# Runs the rest of the line only in the tasks SLURM_PROCID $1 to $2-1: the pods of one role where several
# roles share nodes.
_ROLE_TASKS = (
    'sh -c \'[ "$SLURM_PROCID" -ge "$1" ] && [ "$SLURM_PROCID" -lt "$2" ] || exit 0; shift 2; exec "$@"\' sh'
)


def init_lines(
    ctx: Context,
    part: Part,
    mounts_of: Callable[[ir.Container], Mounts],
    names: list[str],
    extra: list[str],
    defined: Callable[[str], bool],
) -> list[str]:
    """The init containers of the part's pods, each an srun step on its pods' tasks, in order, before the
    program: the pods' own (one task a pod), then an MPI launcher's (its pod is the batch script's node)."""
    inits = [(role, shape.init_containers(role)) for role in part.roles]
    lines: list[str] = []
    if all(containers == inits[0][1] for _, containers in inits):  # every pod's: one task a pod
        for container in inits[0][1]:
            lines += _init_step(ctx, part, container, mounts_of, names, extra, [], defined)
        inits = []
    first = 0  # the role's first pod among the part's tasks
    for role, containers in inits:
        count = shape.pods(role)
        where: list[str] = []
        wrap: list[str] = []
        if part.pods_per_node > 1:
            wrap = [_ROLE_TASKS, str(first), str(first + count)]
        else:
            where = [f"--nodes={count}", f"--ntasks={count}", f"--relative={first}"]
        first += count
        for container in containers:
            lines += _init_step(ctx, part, container, mounts_of, names, [*extra, *where], wrap, defined)
    if part.launcher is not None:
        for container in shape.init_containers(part.launcher):
            ctx.fidelity.mapped(
                f"container {container.name} ({container.image})",
                "the launcher's init container: a step on the first node before mpirun",
                container.line,
            )
            where = ["--nodes=1", "--ntasks=1"]
            lines += _init_step(ctx, part, container, mounts_of, names, [*extra, *where], [], defined)
    return lines


def _init_step(
    ctx: Context,
    part: Part,
    container: ir.Container,
    mounts_of: Callable[[ir.Container], Mounts],
    names: list[str],
    extra: list[str],
    wrap: list[str],
    defined: Callable[[str], bool],
) -> list[str]:
    mounts = mounts_of(container)
    prog = launch.program(ctx, container, defined, mounts)
    if prog is None:
        ctx.fidelity.dropped(
            f"container {container.name} ({container.image})",
            "an init container that runs its image's default command, which the manifest does not name",
            container.line,
        )
        return []
    if wrap and prog.uses_entrypoint:
        ctx.fidelity.dropped(
            f"container {container.name} ({container.image})",
            "an init container of one role, run by its image's entrypoint, on nodes its role shares",
            container.line,
        )
        return []
    if wrap:
        prog = launch.Program([*wrap, *prog.argv])
    return [*mounts.setup, launch.step(ctx, part, prog, mounts, names, extra, container) + " || exit $?"]


def no_command(ctx: Context, part: Part) -> list[str]:
    container = shape.container_of(part.main)
    image = container.image if container else "?"
    ctx.fidelity.dropped(
        f"{part.name}: the image's default command",
        "the image's entrypoint is unknown without a container runtime that can run it",
        part.main.line,
    )
    ctx.diag(
        "TO-SLURM-NO-COMMAND",
        f"{part.name} runs the default command of {image}, which the manifest does not name: "
        "write the command into the script (or use --container-runtime apptainer, which can run it)",
        part.main.line,
    )
    return [
        f"# migrate: dropped: {part.name} runs the default command of {image}; write it here",
        "echo 'migrate: the command of this job is unknown; edit the script' >&2",
        "exit 1",
    ]


def folder_lines(
    part: Part, container: ir.Container | None, mounts: Mounts, het: int | None, runtime: str
) -> list[str]:
    """``mkdir`` of the folders a pod has before its program starts, on every node of the part."""
    folders = list(mounts.per_node_dirs)
    if container is not None and container.workdir and (runtime == NO_RUNTIME or not container.image):
        # a container runtime makes a missing workingDir; srun --chdir would start in /tmp instead
        folders.append(shell_word(container.workdir))
    nodes = part.nodes_allocated or part.nodes  # pods that share a node need the folder once there
    lines = []
    for folder in folders:
        if nodes > 1 or het is not None:
            het_opt = f" --het-group={het}" if het is not None else ""
            lines.append(f"srun{het_opt} --ntasks-per-node=1 --ntasks={nodes} mkdir -p {folder}")
        else:
            lines.append(f"mkdir -p {folder}")
    return lines


def plain_or_torch(
    ctx: Context,
    part: Part,
    mounts: Mounts,
    names: list[str],
    extra: list[str],
    defined: Callable[[str], bool],
    per_task: Mapping[str, str] | None = None,
) -> list[str]:
    """``per_task``: variables each task sets for itself before the program starts (a pod's index)."""
    container = shape.container_of(part.main)
    prog = launch.program(ctx, container, defined, mounts)
    if prog is None:
        return no_command(ctx, part)

    def step(program: launch.Program) -> str:
        if per_task:
            program = _with_per_task(ctx, part, program, per_task)
        return launch.step(ctx, part, program, mounts, names, extra)

    raw = shape.words(container)
    line = part.main.line
    if (
        part.launch == TORCH
        and not prog.uses_entrypoint
        and (part.nodes > 1 or workloads.launch_of(ctx.job.kind) == TORCH)
    ):
        argv, why = launch.torch_program(ctx, part, prog.argv, raw)
        ctx.fidelity.mapped(
            f"{part.name}: {' '.join(raw[:4])}", f"srun torchrun on {plural(part.nodes, 'node')}: {why}", line
        )
        return [*launch.torch_env_lines(launch.master_port(ctx.job)), step(launch.Program(argv))]
    if part.launch == TORCH and prog.uses_entrypoint:
        ctx.fidelity.approximated(
            f"{part.name}: distributed torch",
            "the image's entrypoint runs on each node with MASTER_ADDR/MASTER_PORT set; "
            "ranks are not assigned",
            line,
        )
        return [*launch.torch_env_lines(launch.master_port(ctx.job)), step(prog)]
    if part.nodes > 1 and "JOB_COMPLETION_INDEX" in " ".join(raw) and not prog.uses_entrypoint:
        # Each pod of an Indexed replicated job has its own index: expand the argv inside each task.
        def indexed(name: str) -> bool:
            return name == "JOB_COMPLETION_INDEX" or defined(name)

        each = launch.program(ctx, container, indexed, mounts)
        assert each is not None
        inner = "JOB_COMPLETION_INDEX=$SLURM_NODEID; export JOB_COMPLETION_INDEX; exec " + " ".join(each.argv)
        prog = launch.Program(["sh", "-c", shell_word(inner)])
        ctx.fidelity.mapped(
            f"{part.name}: $(JOB_COMPLETION_INDEX)", "each node's index is its SLURM_NODEID", line
        )
    what = "the image's entrypoint with these args" if prog.uses_entrypoint else "the container's command"
    ctx.fidelity.mapped(
        f"{part.name}: {' '.join(raw[:4]) or 'command'}",
        f"srun runs {what} on {plural(part.nodes, 'node')}, each word quoted as written",
        line,
    )
    return [step(prog)]


def _with_per_task(
    ctx: Context, part: Part, prog: launch.Program, per_task: Mapping[str, str]
) -> launch.Program:
    """The program started by a shell that first sets each task's own values."""
    if prog.uses_entrypoint:
        for name in per_task:
            ctx.fidelity.approximated(
                f"{part.name}: env {name} per pod",
                "the image's entrypoint runs with the batch script's value (0) in every task",
                part.main.line,
            )
        return prog
    sets = "; ".join(f"{name}={expression}; export {name}" for name, expression in per_task.items())
    return launch.Program(["sh", "-c", shell_word(f'{sets}; exec "$@"'), "sh", *prog.argv])


def _mpi_line(part: Part) -> launch.MpiLine | None:
    if part.launcher is None:
        return None
    container = shape.container_of(part.launcher)
    parsed = launch.mpi_from_argv(shape.words(container))
    if parsed is not None:
        return parsed
    for launcher in part.launcher.launchers:
        if launcher.name in shape.MPI_PROGRAMS:
            return launch.mpi_from_launcher(launcher)
    return None


def mpi_lines(
    ctx: Context,
    part: Part,
    launcher: ir.Component,
    mounts: Mounts,
    names: list[str],
    extra: list[str],
    defined: Callable[[str], bool],
) -> list[str]:
    mpi = _mpi_line(part)
    line = launcher.line
    if mpi is None or not mpi.program:
        return plain_or_torch(ctx, part, mounts, names, extra, defined)
    lines: list[str] = []
    # -x NAME passes the Launcher's own NAME: the batch script runs mpirun's part, so it sets it
    launcher_env = {  # literal values only: a fieldRef names a field of the Launcher pod, not a value
        v.name: v.value
        for v in environment.container_env(launcher)
        if v.value is not None and v.origin != EnvOrigin.FIELD_REF
    }
    for name, value in mpi.env:
        if value is None and not defined(name) and name in launcher_env:
            value = launcher_env[name]
        if value is not None and environment._NAME.match(name):
            lines.append(f"export {name}={shell_word(c_string(value))}")
            names = [*names, name] if ctx.names_variables else names
        elif value is None:
            ctx.fidelity.mapped(
                f"mpirun -x {name}",
                f"srun gives every rank the batch script's environment (--export=ALL), {name} among it"
                + (f"; the launcher pod's {name} is set above" if defined(name) else ""),
                line,
            )
            names = [*names, name] if ctx.names_variables and defined(name) else names
    if mpi.from_script:
        argv = list(mpi.program)
        ctx.fidelity.approximated(
            f"{launcher.name}: launcher script",
            "only its mpirun line runs, through srun --mpi=pmix; the ssh and host-file set-up "
            "around it is not needed",
            line,
        )
    else:
        argv = [kubevars.shell_text(kubevars.split(c_string(w), defined)) for w in mpi.program]
    tpn = tasks_per_node(part)
    srun_extra = [*extra, "--mpi=pmix"]
    if mpi.workdir:
        srun_extra.append(f"--chdir={shell_word(mpi.workdir)}")
        ctx.fidelity.mapped(f"mpirun -wdir {mpi.workdir}", "srun --chdir: every rank starts there", line)
    if mpi.bind:
        srun_extra.append(f"--cpu-bind={launch.cpu_bind(mpi.bind)}")
        ctx.fidelity.mapped(
            f"mpirun --bind-to {mpi.bind}",
            f"srun --cpu-bind={launch.cpu_bind(mpi.bind)} pins the ranks alike",
            line,
        )
    if mpi.ranks and mpi.ranks != tpn * part.nodes:
        srun_extra.append(f"--ntasks={mpi.ranks}")
    for dropped in mpi.dropped:
        ctx.fidelity.approximated(f"mpirun {dropped}", "srun places the ranks from the allocation", line)
    ctx.fidelity.mapped(
        f"{launcher.name}: mpirun {' '.join(mpi.program[:3])}",
        f"srun --mpi=pmix starts {mpi.ranks or tpn * part.nodes} ranks on {plural(part.nodes, 'node')}, "
        f"{tpn} per node; the launcher pod is not needed",
        line,
    )
    ctx.fidelity.approximated(
        f"{launcher.name}: each rank's OMPI_COMM_WORLD_* variables",
        "mpirun gives them to every rank and srun's direct launch does not: set from the Slurm task ids",
        line,
    )
    argv = [MPI_RANK_ENV, *argv]
    return [*lines, launch.step(ctx, part, launch.Program(argv), mounts, names, srun_extra)]


__all__ = [
    "folder_lines",
    "init_lines",
    "mpi_lines",
    "no_command",
    "plain_or_torch",
    "record_containers",
    "tasks_per_node",
]
