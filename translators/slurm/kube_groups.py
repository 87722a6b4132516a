"""A LeaderWorkerSet that serves no port, as Slurm jobs: each group one allocation, the leader first.

A LeaderWorkerSet (leaderworkerset.x-k8s.io/v1) runs ``replicas`` groups of
``leaderWorkerTemplate.size`` pods: a leader (pod ``<name>-<group>``) and ``size - 1``
workers (``<name>-<group>-<index>``), host names under the headless Service ``<name>``.
Its pod webhook puts three variables first in every container's env, where they win
over the container's own of the same name:

- ``LWS_LEADER_ADDRESS``: the leader's DNS name, ``<name>-<group>.<subdomain>.<namespace>``;
- ``LWS_GROUP_SIZE``: ``size``;
- ``LWS_WORKER_INDEX``: 0 for the leader, 1 .. size-1 for the workers;

and labels each pod with its group's and its own index
(``leaderworkerset.sigs.k8s.io/group-index``, ``worker-index``).

On Slurm each group is one allocation whose tasks are its pods, packed onto nodes as
the pods would be (``kube_job._resources``): task 0, on the first node, runs the
leader's program, the other tasks the workers'. The variables come from the
allocation: the leader address is its first host, the worker index the task's.
The groups are the tasks of a job array when both roles fit one srun step (same
resources, image and mounts). Otherwise a group is a heterogeneous job, the leader's
component first; Slurm has no arrays of heterogeneous jobs, so ``submit.sh`` submits
the script once per group, the group's index in ``MIGRATE_LWS_GROUP``.

Each task starts through ``sh -c``: it sets its worker index, sets its pod's literal
env again in the kubelet's order (so ``$(LWS_WORKER_INDEX)`` in a value is the
task's own), and ``exec``s the command, whose ``$(VAR)`` references that shell
expands. Values read at run time (Secrets, ConfigMaps of other files) are read once
by the batch script, which every task inherits.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from migrate import ir, workloads
from migrate.render import plural
from migrate.translators.job_variables import SLURM, bash_value

from . import environment, kube_steps, launch, shape, volumes
from .configmaps import ConfigMaps
from .context import Context
from .header import Header
from .quoting import shell_word
from .shape import LWS, Part, Stage
from .volumes import Mounts

LEADER_ADDRESS = "LWS_LEADER_ADDRESS"
GROUP_SIZE = "LWS_GROUP_SIZE"
WORKER_INDEX = "LWS_WORKER_INDEX"
LWS_ENV = (LEADER_ADDRESS, GROUP_SIZE, WORKER_INDEX)
GROUP_VAR = environment.LWS_GROUP_VAR  # the group's index: the array task id, or the copy submitted
RESTART_ORIGIN = "spec.leaderWorkerTemplate.restartPolicy"
DEFAULT_RESTART = "RecreateGroupOnPodRestart"  # the API's default
RECREATE = frozenset({"RecreateGroupOnPodRestart", "RecreateGroupAfterStart"})
_PLAIN_EXPORT = re.compile(r"export [A-Za-z_][A-Za-z0-9_]*=")


def is_groups(ctx: Context) -> bool:
    return workloads.launch_of(ctx.job.kind) == LWS


def _line(job: ir.Job) -> int | None:
    return job.components[0].line if job.components else None


def array(ctx: Context, stage: Stage, header: Header) -> str | None:
    """``--array`` over the groups, when a group is one srun step (not a heterogeneous job)."""
    job = ctx.job
    groups = shape.lws_groups(job)
    if len(stage.parts) > 1 or groups == 1:
        return None
    if groups < 1:
        ctx.fidelity.approximated(
            f"replicas {groups}",
            "no group runs on Kubernetes; the script runs one when submitted",
            _line(job),
        )
        return None
    spec = f"0-{groups - 1}"
    written = header.add("array", spec)
    ctx.fidelity.mapped(
        f"replicas {groups}",
        f"{written}: one array task per group, the task id its group index "
        "(the leaderworkerset.sigs.k8s.io/group-index label)",
        _line(job),
    )
    return spec


def submissions(ctx: Context, stage: Stage) -> int:
    """How often ``submit.sh`` submits the script: once per group of a heterogeneous job."""
    job = ctx.job
    groups = shape.lws_groups(job)
    if len(stage.parts) < 2 or groups < 2:
        return 1
    ctx.fidelity.approximated(
        f"replicas {groups}",
        f"Slurm has no arrays of heterogeneous jobs: submit.sh submits the script {groups} times, "
        f"each with its group index in {GROUP_VAR}",
        _line(job),
    )
    return groups


def _restart_policy(job: ir.Job) -> str:
    return next((i.value for i in job.raw if i.origin == RESTART_ORIGIN), DEFAULT_RESTART)


def record(ctx: Context, stages: list[Stage]) -> None:
    """The fields of the group as a whole, and what the controller adds to every pod."""
    job = ctx.job
    line = _line(job)
    size = shape.lws_size(job)
    parts = [p for s in stages for p in s.parts]
    het = len(parts) > 1
    ctx.fidelity.mapped(
        f"leaderWorkerTemplate.size {size}",
        f"each group is one allocation of {plural(size, 'task')}, one per pod: the leader's is task 0 "
        "on the first node" + (" (component 0 of the heterogeneous job)" if het else ""),
        line,
    )
    ctx.fidelity.approximated(
        f"env {LEADER_ADDRESS}",
        "the first host of the group's allocation (scontrol show hostnames), which the leader's task "
        "runs on, for the leader pod's DNS name <name>-<group>.<name>.<namespace>",
        line,
    )
    ctx.fidelity.mapped(f"env {GROUP_SIZE}", f"{size} in every task", line)
    ctx.fidelity.mapped(
        f"env {WORKER_INDEX}",
        "each task's own: 0 for the leader's task, "
        + ("SLURM_PROCID + 1 in the workers' component" if het else "the task's SLURM_PROCID for a worker"),
        line,
    )
    ctx.fidelity.approximated(
        "pods that end",
        "the controller's StatefulSets start a pod's program again whenever it ends, for as long as the "
        "LeaderWorkerSet exists; a Slurm job ends when its processes end: each group's programs run once",
        line,
    )
    ctx.fidelity.approximated(
        "each pod's own address",
        "tasks of a group that share a node share its address and ports, and so do groups Slurm places "
        "on one node: a fixed port the leader listens on may then be taken",
        line,
    )
    if not any(i.origin == RESTART_ORIGIN for i in job.raw):
        ctx.fidelity.approximated(
            f"restartPolicy (default {DEFAULT_RESTART})",
            "a process that fails ends every task of its group (srun --kill-on-bad-exit=1), as the "
            "controller recreates the whole group; Slurm does not start the group again",
            line,
        )
    if any(r.name.startswith("google.com/tpu") for c in job.components for r in c.resources.generic):
        ctx.fidelity.dropped(
            "TPU_WORKER_HOSTNAMES, TPU_WORKER_ID, TPU_NAME",
            "the controller sets them for pods that ask for TPUs; the tasks do not get them",
            line,
        )


# ---------------------------------------------------------------------------
# The lines of one part: the whole group, or the leader's or the workers' component


def part_lines(
    ctx: Context, part: Part, het: int | None, config_maps: ConfigMaps
) -> tuple[list[str], Mounts, environment.EnvLines]:
    job = ctx.job
    container = shape.container_of(part.main)
    mounts = volumes.Mounts() if container is None else volumes.plan(ctx, container, config_maps)
    kube_steps.record_containers(ctx, part, init_steps=False)
    roles = _roles(ctx, part, config_maps)
    lines = _prelude(job, het)
    batch_names: set[str] = set()
    for i, env in enumerate(_distinct(env for _, env in roles)):
        # the batch script stands for the leader pod: its env, and what the others read at run time
        lines += env.lines if i == 0 else [ln for ln in env.lines if not _plain(ln)]
        batch_names |= _names(env) if i == 0 else _names(env) - _plain_names(env)
    lines += mounts.setup
    lines += kube_steps.folder_lines(part, container, mounts, het, ctx.runtime)
    merged = environment.EnvLines(exported=[*LWS_ENV, GROUP_VAR])
    for _, env in roles:
        merged.helpers |= env.helpers
        merged.exported += [n for n in env.exported if n not in merged.exported]
    extra = [f"--het-group={het}"] if het is not None else []
    if _restart_policy(job) in RECREATE and part.nodes > 1:
        extra.append("--kill-on-bad-exit=1")
    names = merged.exported if ctx.names_variables else []
    programs = [(role, env, _program(ctx, role, env, mounts)) for role, env in roles]
    if any(prog is None for _, _, prog in programs):
        return [*lines, *kube_steps.no_command(ctx, part)], mounts, merged
    first = part.name != "workers"
    index = "$SLURM_PROCID" if first else "$((SLURM_PROCID + 1))"
    if part.nodes == 1 and first:
        index = "0"
    entry = [prog for _, _, prog in programs if prog is not None and prog.uses_entrypoint]
    if entry:
        ctx.fidelity.approximated(
            f"{part.name}: {WORKER_INDEX} per pod",
            "the image's entrypoint runs with the batch script's value (0) in every task",
            part.main.line,
        )
        assert programs[0][2] is not None
        return [*lines, launch.step(ctx, part, programs[0][2], mounts, names, extra)], mounts, merged
    branches = [_branch(env, prog, batch_names) for _, env, prog in programs if prog is not None]
    script = [f"{WORKER_INDEX}={index}", f"export {WORKER_INDEX}"]
    if len(branches) > 1 and branches[0] != branches[1]:
        script.append(f'if [ "${WORKER_INDEX}" -eq 0 ]; then ' + "; ".join(branches[0]) + "; fi")
        script += branches[1]
        _record_roles(ctx, part, programs, index)
    else:
        script += branches[0]
        _record_roles(ctx, part, programs[:1], index)
    program = launch.Program(["sh", "-c", shell_word("; ".join(script))])
    return [*lines, launch.step(ctx, part, program, mounts, names, extra)], mounts, merged


def _roles(
    ctx: Context, part: Part, config_maps: ConfigMaps
) -> list[tuple[ir.Component, environment.EnvLines]]:
    """Each distinct role of the part with its env lines (one entry when both roles set the same env)."""
    out: list[tuple[ir.Component, environment.EnvLines]] = []
    seen: list[tuple[object, ...]] = []
    for role in part.roles:
        env = _own_env(ctx, role)
        key = tuple((v.name, v.value, v.secret, v.origin) for v in env)
        if key in seen:
            out.append((role, out[seen.index(key)][1]))
            continue
        seen.append(key)
        out.append((role, environment.export_lines(ctx, env, config_maps, LWS_ENV)))
    return out


def _own_env(ctx: Context, role: ir.Component) -> list[ir.EnvVar]:
    """The container's env less what the controller's webhook replaces with its own values."""
    out = []
    for var in environment.container_env(role):
        if var.name in LWS_ENV:
            ctx.fidelity.mapped(
                f"env {var.name} of {role.name}",
                "the controller's value replaces the pod's own, on Kubernetes as here",
                var.line,
            )
            continue
        out.append(var)
    return out


def _prelude(job: ir.Job, het: int | None) -> list[str]:
    nodes = "$SLURM_JOB_NODELIST"
    if het is not None:  # the leader's component is the first: its first node
        nodes = "${SLURM_JOB_NODELIST_HET_GROUP_0:-$SLURM_JOB_NODELIST}"
    group = f'"{bash_value(SLURM.LWS_GROUP)}"' if het is not None else '"${SLURM_ARRAY_TASK_ID:-0}"'
    return [
        f"# LeaderWorkerSet group of {plural(shape.lws_size(job), 'pod')}: the leader's program on the "
        "first task, the workers' on the others, with the controller's env",
        f"{GROUP_VAR}={group}",
        f'{LEADER_ADDRESS}=$(scontrol show hostnames "{nodes}" | head -n1)',
        f"{GROUP_SIZE}={shape.lws_size(job)}",
        f"{WORKER_INDEX}=0",
        f"export {GROUP_VAR} {' '.join(LWS_ENV)}",
    ]


def _plain(line: str) -> bool:
    """An ``export NAME=value`` line that any task's shell can run again (no helper, no file read)."""
    return bool(_PLAIN_EXPORT.match(line)) and "migrate_" not in line


def _names(env: environment.EnvLines) -> set[str]:
    return {n for n in env.exported if n not in LWS_ENV}


def _plain_names(env: environment.EnvLines) -> set[str]:
    return {ln[len("export ") :].split("=", 1)[0] for ln in env.lines if _plain(ln)}


def _distinct(envs: Iterable[environment.EnvLines]) -> list[environment.EnvLines]:
    out: list[environment.EnvLines] = []
    for env in envs:
        if not any(env is seen for seen in out):
            out.append(env)
    return out


def _program(
    ctx: Context, role: ir.Component, env: environment.EnvLines, mounts: Mounts
) -> launch.Program | None:
    def defined(name: str) -> bool:
        return env.defined(name) or env.maybe(name)

    return launch.program(ctx, shape.container_of(role), defined, mounts)


def _branch(env: environment.EnvLines, prog: launch.Program, batch_names: set[str]) -> list[str]:
    """What one role's task runs: its literal env again, in order, then its command."""
    out = [ln for ln in env.lines if _plain(ln)]
    gone = sorted(batch_names - _names(env))
    if gone:
        out.append("unset " + " ".join(gone))  # the other role's, which this pod does not have
    out.append("exec " + " ".join(prog.argv))
    return out


def _record_roles(
    ctx: Context,
    part: Part,
    programs: list[tuple[ir.Component, environment.EnvLines, launch.Program | None]],
    index: str,
) -> None:
    places = ["task 0 (the leader's)", "every other task"]
    if len(programs) == 1:
        places = ["its task" if part.nodes == 1 else f"its {plural(part.nodes, 'task')}"]
    for (role, _, _), where in zip(programs, places, strict=True):
        container = shape.container_of(role)
        raw = shape.words(container)
        ctx.fidelity.mapped(
            f"{role.name}: {' '.join(raw[:4]) or 'command'}",
            f"runs on {where} through sh -c, which sets {WORKER_INDEX}={index} and the pod's env first; "
            "its $(VAR) references are expanded there, each word quoted as written",
            container.line if container is not None and container.line is not None else role.line,
        )


__all__ = [
    "GROUP_SIZE",
    "GROUP_VAR",
    "LEADER_ADDRESS",
    "LWS_ENV",
    "WORKER_INDEX",
    "array",
    "is_groups",
    "part_lines",
    "record",
    "submissions",
]
