"""Manifests that migrate wrote from sbatch scripts, turned back into sbatch scripts.

The Kubernetes writer keeps the original script (``job.sh``) in a ConfigMap,
runs it through ``/opt/migrate/entrypoint.sh``, and puts the Slurm values it
knew into the container's env (``SLURM_NTASKS_PER_NODE``, ``MIGRATE_TIME_LIMIT``,
``MIGRATE_ARRAY_RANGES`` ...). Going back, the script's body is used as it is,
the options come from those values (so edits made to the manifest win), and
options that Kubernetes could not hold are restored from the original script's
header, marked approximated. Dependencies are left to submit.sh.
"""

from __future__ import annotations

from collections.abc import Callable

from migrate import ir
from migrate.diagnostics import Collector
from migrate.translators.job_variables import POD
from migrate.vocab import ContainerRuntime, EnvOrigin

from . import directives, environment
from . import options as sbatch
from .configmaps import ConfigMaps
from .context import Context
from .header import Header, OptionError
from .script import Script

ENTRYPOINT = "/opt/migrate/entrypoint.sh"
_NOT_RESTORED = frozenset({"dependency"})  # old job ids: submit.sh chains the new ones


def _main_container(comp: ir.Component) -> ir.Container | None:
    return next((c for c in comp.containers if c.runtime == ContainerRuntime.KUBERNETES), None)


def is_migrated(job: ir.Job) -> bool:
    """A manifest the Kubernetes writer made: its entrypoint runs the original script kept in a ConfigMap."""
    if job.script is None or ("#SBATCH" not in job.script.body and not job.script.body.startswith("#!")):
        return False
    for comp in job.components:
        container = _main_container(comp)
        if container is not None and ENTRYPOINT in (*container.command, *container.args):
            return True
    return False


def _hints(comp: ir.Component) -> dict[str, str]:
    return {
        var.name: var.value
        for var in comp.environment
        if var.origin == EnvOrigin.ENV
        and var.value is not None
        and var.name.startswith(("SLURM_", "MIGRATE_"))
    }


def _groups(job: ir.Job) -> list[tuple[ir.Component, dict[str, str]]]:
    """One (component, hints) per hetjob group; the roles of one group (Master + Worker) count once."""
    seen: dict[str, tuple[ir.Component, dict[str, str]]] = {}
    for comp in job.components:
        hints = _hints(comp)
        seen.setdefault(hints.get(POD.HET_GROUP.name, "0"), (comp, hints))
    return [seen[k] for k in sorted(seen, key=lambda g: int(g) if (g.isascii() and g.isdigit()) else 0)]


def array_spec(ranges: str) -> str | None:
    """``MIGRATE_ARRAY_RANGES`` (``start:step:count`` runs) as an sbatch array spec."""
    items = []
    for run in ranges.split():
        parts = run.split(":")
        if len(parts) != 3 or not all((p.isascii() and p.isdigit()) for p in parts):
            return None
        start, step, count = (int(p) for p in parts)
        if count <= 1:
            items.append(str(start))
        elif step == 1:
            items.append(f"{start}-{start + count - 1}")
        else:
            items.append(f"{start}-{start + step * (count - 1)}:{step}")
    return ",".join(items) or None


def translate(ctx: Context) -> tuple[list[Script], str, str]:
    job = ctx.job
    assert job.script is not None
    original = directives.split_lines(job.script.body)
    old = directives.read_header(original, Collector(job.source.path))
    groups = _groups(job)
    components = [Header() for _ in groups]
    for index, (header, (comp, hints)) in enumerate(zip(components, groups, strict=True)):
        if index == 0:
            _job_options(ctx, header, hints)
        _component_options(ctx, header, comp, hints, _whole_node_only(old, index))
    _restore(ctx, components, old)
    body = original[old.last_directive_line :] if old.last_directive_line else original[1:]
    env = _added_env(ctx, old)
    shebang = old.shebang or "#!/bin/bash"
    script = Script("job.sbatch", ctx.name, components, body=[*env, *body], shebang=shebang, separate=False)
    script.intro = [
        f"{job.kind} {job.name or ctx.name} was written by migrate from an sbatch script: the body is",
        "that script's; the options come from the manifest (restored ones are marked)",
    ]
    ctx.fidelity.mapped("job.sh (original script)", "its body is the batch script's body again")
    kind = "hetjob" if len(components) > 1 else "sbatch-array" if job.array else "sbatch"
    return [script], kind, "a manifest migrate wrote from an sbatch script: the script comes back"


def _add(ctx: Context, header: Header, long: str, value: object, source: str) -> None:
    try:
        written = header.add(long, value)
    except OptionError as exc:
        ctx.fidelity.dropped(f"{source}={value}", str(exc))
        return
    ctx.fidelity.mapped(source, written)


def _job_options(ctx: Context, h: Header, hints: dict[str, str]) -> None:
    job = ctx.job
    _add(ctx, h, "job-name", hints.get("SLURM_JOB_NAME") or job.name or ctx.name, "metadata.name")
    for env, long in (
        ("SLURM_JOB_PARTITION", "partition"),
        ("SLURM_JOB_ACCOUNT", "account"),
        ("SLURM_JOB_QOS", "qos"),
        ("SLURM_SUBMIT_DIR", "chdir"),
        (POD.STDOUT.name, "output"),
        (POD.STDERR.name, "error"),
        (POD.STDIN.name, "input"),
        (POD.OPEN_MODE.name, "open-mode"),
    ):
        if hints.get(env):
            _add(ctx, h, long, hints[env], f"env {env}")
    limit = hints.get(POD.TIME_LIMIT.name)
    seconds = int(limit) if limit and (limit.isascii() and limit.isdigit()) else job.time_limit_s
    if seconds:
        _add(ctx, h, "time", sbatch.format_time(seconds), "activeDeadlineSeconds")
    ranges = hints.get(POD.ARRAY_RANGES.name)
    if job.array is not None:
        spec = (array_spec(ranges) if ranges else None) or job.array.spec.split("%", 1)[0]
        limit_n = job.array.max_concurrent
        count = job.array.count
        _add(
            ctx,
            h,
            "array",
            spec + (f"%{limit_n}" if limit_n and limit_n < count else ""),
            "Indexed completions",
        )
    if hints.get(POD.SIGNAL.name):
        lead = hints.get(POD.SIGNAL_LEAD.name, str(sbatch.SIGNAL_DEFAULT_SECONDS))
        flag = "B:" if hints.get(POD.SIGNAL_BATCH_ONLY.name) == "1" else ""
        _add(ctx, h, "signal", f"{flag}{hints[POD.SIGNAL.name]}@{lead}", f"env {POD.SIGNAL.name}")
    kueue = any(kv.key == "kueue.x-k8s.io/queue-name" for kv in job.labels)
    if job.hold and not kueue:
        _add(ctx, h, "hold", None, "suspend: true")


def _component_options(
    ctx: Context, h: Header, comp: ir.Component, hints: dict[str, str], whole_node_only: bool
) -> None:
    def number(name: str) -> int | None:
        value = hints.get(name, "")
        return int(value) if (value.isascii() and value.isdigit()) else None

    nodes = number("SLURM_JOB_NUM_NODES") or sum(
        max(1, c.replicas) for c in ctx.job.components if _hints(c) == hints
    )
    _add(ctx, h, "nodes", nodes, f"{comp.name}: pods")
    tpn = number("SLURM_NTASKS_PER_NODE")
    tasks = number("SLURM_NTASKS")
    if tpn:
        _add(ctx, h, "ntasks-per-node", tpn, "env SLURM_NTASKS_PER_NODE")
    if tasks and tasks != (tpn or 1) * nodes:
        _add(ctx, h, "ntasks", tasks, "env SLURM_NTASKS")
    formats: tuple[tuple[str, str, Callable[[int], str]], ...] = (
        ("SLURM_CPUS_PER_TASK", "cpus-per-task", str),
        ("SLURM_MEM_PER_NODE", "mem", sbatch.format_memory),
        ("SLURM_MEM_PER_CPU", "mem-per-cpu", sbatch.format_memory),
        ("SLURM_MEM_PER_GPU", "mem-per-gpu", sbatch.format_memory),
    )
    for env, long, fmt in formats:
        value = number(env)
        if value is not None and (value or long == "mem"):
            _add(ctx, h, long, fmt(value), f"env {env}")
    gpus = number("SLURM_GPUS_PER_NODE") or comp.resources.gpus_per_node
    if gpus and whole_node_only:
        ctx.fidelity.approximated(
            f"{comp.name}: {gpus} GPUs",
            "the whole-node pod held the node's GPUs; --exclusive gives them again",
        )
    elif gpus:
        _add(ctx, h, "gres", sbatch.format_gres((ir.GenericResource("gpu", gpus),)), f"{comp.name}: GPUs")


_GPU_OPTIONS = frozenset(
    {"gres", "gpus", "gpus-per-node", "gpus-per-task", "gpus-per-socket", "tres-per-task"}
)


def _whole_node_only(old: directives.Header, index: int) -> bool:
    """The original component asked for whole nodes and no GPUs: the pod's GPUs came with the node."""
    mine = [s for s in old.settings if s.component == index]
    exclusive = any(s.option.long == "exclusive" for s in mine)
    return exclusive and not any(s.option.long in _GPU_OPTIONS for s in mine)


def _restore(ctx: Context, components: list[Header], old: directives.Header) -> None:
    """Options of the original header that the manifest could not carry."""
    for setting in old.settings:
        long = setting.option.long
        index = min(setting.component, len(components) - 1)
        spelled = f"--{long}" + (f"={setting.value}" if setting.value is not None else "")
        if long in _NOT_RESTORED and setting.value != "singleton":
            ctx.fidelity.approximated(
                spelled, "submit.sh passes --dependency with the new job ids", setting.line
            )
            continue
        if _gpu_types_lost(components[index], long, setting.value):
            _restore_gpu_types(components[index], long, setting.value or "")
            ctx.fidelity.approximated(
                spelled,
                "the pod's GPU request had no type (node labels stood for it on Kubernetes); "
                "restored from the original script",
                setting.line,
            )
            continue
        if components[index].has(long) or _implied(components[index], long):
            continue
        try:
            components[index].add(
                long, setting.value, "restored from the original script (not enforced on Kubernetes)"
            )
        except OptionError as exc:
            ctx.fidelity.dropped(spelled, str(exc), setting.line)
            continue
        ctx.fidelity.approximated(
            spelled,
            "restored from the original script the manifest kept; Kubernetes did not enforce it",
            setting.line,
        )


# Where each GPU option counts its GPUs: the manifest kept their number per node (one pod per node).
_GPU_SCOPES = {"gres": "node", "gpus-per-node": "node", "gpus-per-task": "task", "gpus": "job"}


def _gpu_types_lost(header: Header, long: str, original: str | None) -> bool:
    """The original option asked for typed GPUs, and the manifest kept only their count per node."""
    scope = _GPU_SCOPES.get(long)
    if original is None or scope is None:
        return False
    try:
        now = [g for g in sbatch.parse_gres(header.value("gres") or "") if g.name == "gpu"]
        parse = sbatch.parse_gres if long == "gres" else sbatch.parse_gpus
        before = [g for g in parse(original) if g.name == "gpu"]
    except ValueError:
        return False
    if len(now) != 1 or now[0].type or not any(g.type for g in before):
        return False
    per_node = sum(g.count for g in before)
    if scope == "task":
        per_node *= _number(header, "ntasks-per-node")
    elif scope == "job":
        per_node = -(-per_node // _number(header, "nodes"))
    return per_node == now[0].count


def _number(header: Header, long: str) -> int:
    value = header.value(long) or ""
    return int(value) if value.isascii() and value.isdigit() and int(value) else 1


def _restore_gpu_types(header: Header, long: str, original: str) -> None:
    """The original GPU option in place of the untyped GPUs of the rewritten --gres."""
    if long != "gres":
        others = tuple(g for g in sbatch.parse_gres(header.value("gres") or "") if g.name != "gpu")
        header.remove("gres")
        if others:
            header.add("gres", sbatch.format_gres(others))
    header.add(long, original, "GPU types restored from the original script")


def _implied(header: Header, long: str) -> bool:
    """Options the rewritten header already states in another spelling."""
    same = {
        "gpus-per-node": "gres",
        "gpus": "gres",
        "gpus-per-task": "gres",
        "ntasks": "ntasks-per-node",
        "tasks-per-node": "ntasks-per-node",
        "cpus-per-gpu": "cpus-per-task",
        "mem-per-gpu": "mem",
    }
    return long in same and header.has(same[long])


def _added_env(ctx: Context, old: directives.Header) -> list[str]:
    """Container env that is neither the writer's SLURM_*/MIGRATE_* values nor an --export of the script."""
    exported = {
        name.split("=", 1)[0]
        for s in old.settings
        if s.option.long == "export" and s.value
        for name in s.value.split(",")
    }
    extra = [
        var
        for comp in ctx.job.components[:1]
        for var in environment.container_env(comp)
        if not var.name.startswith(("SLURM_", "MIGRATE_")) and var.name not in exported
    ]
    if not extra:
        return []
    lines = environment.export_lines(ctx, extra, ConfigMaps())
    return ["# env of the Kubernetes manifest", *sorted(lines.helpers), *lines.lines, ""]


__all__ = ["ENTRYPOINT", "array_spec", "is_migrated", "translate"]
