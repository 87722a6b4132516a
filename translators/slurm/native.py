"""IR read from sbatch scripts, written back as sbatch scripts.

The options come from the IR's typed fields through the option table's
``format_*`` inverses, options the IR kept raw are re-emitted as written, and
the body is the original script text after the directives. Dependencies on
other jobs are not written into the script: ``submit.sh`` passes them with the
new job ids (a job id from the old cluster means nothing on the new one).
"""

from __future__ import annotations

from migrate import ir
from migrate.vocab import ContainerRuntime, DependencyType, EnvOrigin, GresScope

from . import options as sbatch
from .context import Context
from .header import Header, OptionError
from .quoting import comment_text
from .script import Script

_SHELLS = {"sh": "#!/bin/sh", "bash": "#!/bin/bash"}
# Raw options that only make sense to sbatch's own command line.
_NOT_IN_SCRIPTS = frozenset(
    {"--parsable", "--wait", "--test-only", "--help", "--usage", "--version", "--wrap"}
)


def translate(ctx: Context) -> tuple[list[Script], str, str]:
    job = ctx.job
    components = [Header() for _ in job.components]
    first = components[0]
    _job_options(ctx, first)
    for header, comp in zip(components, job.components, strict=True):
        _resources(ctx, header, comp)
    _raw_options(ctx, components)
    body = job.script.body if job.script is not None else ""
    shebang = _SHELLS.get(job.script.shell or "", "#!/bin/bash") if job.script is not None else "#!/bin/bash"
    script = Script("job.sbatch", ctx.name, components, body=body.rstrip("\n").split("\n") if body else [])
    script.shebang = shebang
    script.separate = False  # the body is the original text after the directives, blank lines included
    script.intro = [f"{job.kind} {job.name or ctx.name}: options rewritten from the IR, body unchanged"]
    ctx.fidelity.mapped(
        "script body",
        "copied unchanged after the directives",
        job.script.first_command_line if job.script else None,
    )
    kind = "hetjob" if len(components) > 1 else "sbatch-array" if job.array else "sbatch"
    return [script], kind, f"{job.kind} from {job.source.path}: written back as sbatch"


def _add(ctx: Context, header: Header, long: str, value: object = None, line: int | None = None) -> None:
    try:
        written = header.add(long, value)
    except OptionError as exc:
        ctx.fidelity.dropped(f"--{long}={value}", f"not a valid sbatch value: {exc}", line)
        return
    ctx.fidelity.mapped(written, "same option", line)


def _job_options(ctx: Context, h: Header) -> None:
    job = ctx.job
    place = job.placement
    if job.name:
        _add(ctx, h, "job-name", job.name)
    if place.partitions:
        _add(ctx, h, "partition", ",".join(place.partitions))
    for long, value in (
        ("account", place.account),
        ("qos", place.qos),
        ("priority", place.priority),
        ("nice", place.nice),
        ("reservation", place.reservation),
        ("nodelist", place.nodelist),
        ("exclude", place.exclude),
        ("clusters", place.clusters),
        ("begin", job.begin),
        ("deadline", job.deadline),
    ):
        if value is not None:
            _add(ctx, h, long, value)
    for kv in place.topology:
        _add(ctx, h, kv.key, None if kv.value == "true" else kv.value)
    if job.time_limit_s:
        _add(ctx, h, "time", sbatch.format_time(job.time_limit_s))
    if job.time_min_s:
        _add(ctx, h, "time-min", sbatch.format_time(job.time_min_s))
    if job.hold:
        _add(ctx, h, "hold")
    if job.array is not None:
        _add(ctx, h, "array", job.array.spec)
    _dependencies(ctx, h)
    failure = job.failure
    if failure.requeue is True:
        _add(ctx, h, "requeue")
    elif failure.requeue is False:
        _add(ctx, h, "no-requeue")
    if failure.signal is not None:
        _add(ctx, h, "signal", sbatch.format_signal(failure.signal))
    if failure.no_kill:
        _add(ctx, h, "no-kill")
    io = job.io
    for long, value in (
        ("chdir", io.workdir),
        ("output", io.stdout),
        ("error", io.stderr),
        ("input", io.stdin),
        ("open-mode", io.open_mode),
    ):
        if value:
            _add(ctx, h, long, value)
    if job.mail is not None:
        if job.mail.types:
            _add(ctx, h, "mail-type", ",".join(job.mail.types))
        if job.mail.user:
            _add(ctx, h, "mail-user", job.mail.user)
    if job.export:
        _export(ctx, h)


def _export(ctx: Context, h: Header) -> None:
    job = ctx.job
    listed = [e for e in job.environment if e.origin == EnvOrigin.SBATCH_EXPORT]
    items = [job.export] if job.export in ("ALL", "NONE", "NIL") else []
    for var in listed:
        items.append(var.name if var.value is None else f"{var.name}={var.value}")
    _add(ctx, h, "export", ",".join(items) or job.export)


def _dependencies(ctx: Context, h: Header) -> None:
    deps = ctx.job.dependencies
    if not deps:
        return
    singleton = tuple(d for d in deps if d.type == DependencyType.SINGLETON)
    others = tuple(d for d in deps if d.type != DependencyType.SINGLETON)
    if singleton:
        _add(ctx, h, "dependency", DependencyType.SINGLETON, singleton[0].line)
    if others:
        text = sbatch.format_dependencies(others)
        ctx.fidelity.approximated(
            f"--dependency={text}",
            "not written into the script: submit.sh passes --dependency with the ids of the translated jobs",
            others[0].line,
        )


def _resources(ctx: Context, h: Header, comp: ir.Component) -> None:
    res = comp.resources
    line = comp.line
    if res.nodes_min:
        _add(ctx, h, "nodes", sbatch.format_nodes(res.nodes_min, res.nodes_max), line)
    for long, value in (
        ("ntasks", res.tasks),
        ("ntasks-per-node", res.tasks_per_node),
        ("ntasks-per-gpu", res.tasks_per_gpu),
        ("cpus-per-task", res.cpus_per_task),
        ("mincpus", res.cpus_per_node),
        ("cpus-per-gpu", res.cpus_per_gpu),
    ):
        if value:
            _add(ctx, h, long, value, line)
    if res.mem_per_node_mb is not None:
        _add(ctx, h, "mem", sbatch.format_memory(res.mem_per_node_mb), line)
    if res.mem_per_cpu_mb:
        _add(ctx, h, "mem-per-cpu", sbatch.format_memory(res.mem_per_cpu_mb), line)
    if res.mem_per_gpu_mb:
        _add(ctx, h, "mem-per-gpu", sbatch.format_memory(res.mem_per_gpu_mb), line)
    if res.gpus:
        _add(ctx, h, "gpus", sbatch.format_gpus(res.gpu_counts(res.gpus)), line)
    if res.gpus_per_task:
        _add(ctx, h, "gpus-per-task", sbatch.format_gpus(res.gpu_counts(res.gpus_per_task)), line)
    gres = [sbatch.format_gpus(res.gpu_counts(res.gpus_per_node), gres=True)] if res.gpus_per_node else []
    others = tuple(g for g in res.generic if g.per == GresScope.NODE)
    if others:
        gres.append(sbatch.format_gres(others))
    if gres:
        _add(ctx, h, "gres", ",".join(gres), line)
    per_task = [g for g in res.generic if g.per == GresScope.TASK]
    if per_task:
        text = ",".join(f"gres/{g.name}{':' + g.type if g.type else ''}={g.count}" for g in per_task)
        _add(ctx, h, "tres-per-task", text, line)
    if res.tmp_disk_mb:
        _add(ctx, h, "tmp", sbatch.format_memory(res.tmp_disk_mb), line)
    if res.constraint:
        _add(ctx, h, "constraint", res.constraint, line)
    if res.licenses:
        _add(ctx, h, "licenses", ",".join(f"{g.name}:{g.count}" for g in res.licenses), line)
    if res.exclusive:
        _add(ctx, h, "exclusive", None if res.exclusive == "node" else res.exclusive, line)
    for container in comp.containers:
        if (
            container.runtime == ContainerRuntime.PYXIS
            and container.line is not None
            and _pyxis_directive(container)
        ):
            _add(ctx, h, "container-image", container.image, container.line)


def _pyxis_directive(container: ir.Container) -> bool:
    """The reader builds a pyxis container from #SBATCH --container-image only when it had no command."""
    return not container.command and not container.args


def _raw_options(ctx: Context, components: list[Header]) -> None:
    """Options the IR kept raw, written again as they were."""
    for item in ctx.job.raw:
        if not item.origin.startswith("#SBATCH") or not item.key.startswith("-"):
            continue
        index = item.component if item.component < len(components) else 0
        spelled = f"{item.key}={item.value}" if item.value else item.key
        option, _ = sbatch.lookup_long(item.key.lstrip("-")) if item.key.startswith("--") else (None, ())
        if item.key in _NOT_IN_SCRIPTS or option is None:
            ctx.fidelity.dropped(spelled, "not an option sbatch accepts in a script", item.line)
            continue
        if components[index].has(option.long) and not option.accumulate:
            ctx.fidelity.mapped(spelled, "already written from the typed value", item.line)
            continue
        try:
            components[index].add(option.long, item.value or None)
        except OptionError as exc:
            ctx.fidelity.dropped(spelled, comment_text(str(exc)), item.line)
            continue
        ctx.fidelity.mapped(spelled, "kept as written", item.line)


__all__ = ["translate"]
