"""A Kubernetes workload (Job, CronJob, JobSet, Volcano, Kubeflow, TrainJob, RayJob) as batch scripts.

:mod:`.shape` decides the scripts and node groups, :mod:`.placement` the
partition, :mod:`.environment` and :mod:`.volumes` what the pod's env and
volumes become, :mod:`.launch` the ``srun`` lines. This module puts them
together, one :class:`Script` per stage, and records a fidelity entry for
every manifest field it reads.
"""

from __future__ import annotations

import math

from migrate import ir, workloads
from migrate.devices import DeviceKind
from migrate.render import plural
from migrate.site import pod_allocation
from migrate.site.allocation import node_type
from migrate.site.config import KubernetesSettings
from migrate.vocab import FidelityStatus, PlaceholderRole

from . import (
    array_values,
    configmaps,
    environment,
    kube_allocation,
    kube_fields,
    kube_groups,
    kube_record,
    kube_steps,
    placeholders,
    placement,
    ray_cluster,
    shape,
    volumes,
)
from . import options as sbatch
from .configmaps import ConfigMaps
from .context import Context
from .header import Header
from .script import Script
from .shape import LWS, MPI, RAY, Part, Stage
from .volumes import FILES_DIR, FILES_SETUP, SCRATCH_SETUP, Mounts

RETRY_HELPER = r"""# migrate_retry N CMD...: run CMD, again up to N times while it fails (backoffLimit)
migrate_retry() {
  local left=$1 rc=0
  shift
  while :; do
    "$@" && return 0
    rc=$?
    [ "$left" -gt 0 ] || return "$rc"
    left=$((left - 1))
    echo "migrate: the program failed (exit $rc); retrying, $left retries left" >&2
  done
}"""
WAIT_ALL = [
    "rc=0",
    'for pid in "${pids[@]}"; do wait "$pid" || rc=$?; done',
    'exit "$rc"',
]


def translate(ctx: Context) -> list[Script]:
    job = ctx.job
    stages = shape.stages(job, ctx.name)
    config_maps = configmaps.for_job(job)
    parts = [p for s in stages for p in s.parts]
    place = placement.decide(ctx, [p.resources for p in parts])
    kube_record.record_placement(ctx, place)
    kube_allocation.record(ctx, parts, place.partition)
    scripts = [_script(ctx, stage, place, config_maps, len(stages) > 1) for stage in stages]
    kube_record.record_job_fields(ctx, stages)
    if kube_groups.is_groups(ctx):
        kube_groups.record(ctx, stages)
    kube_fields.record(ctx)
    return scripts


# ---------------------------------------------------------------------------
# One script


def _script(
    ctx: Context,
    stage: Stage,
    place: placement.Placement,
    config_maps: ConfigMaps,
    staged: bool,
) -> Script:
    job = ctx.job
    filename = "job.sbatch" if not staged else f"{stage.name.removeprefix(ctx.name + '-')}.sbatch"
    script = Script(filename, stage.name, [Header() for _ in stage.parts], after=list(stage.after))
    first = script.header
    names = [u.name for u in job.unresolved]
    first.add("job-name", _printable_name(stage.name if staged else job.name, ctx.name, names))
    if place.partition:
        first.add(
            "partition",
            place.partition,
            "" if place.status == FidelityStatus.MAPPED else f"approximated: {place.reason}",
        )
    account, qos = placement.account(ctx), placement.qos(ctx)
    if account:
        first.add("account", account)
    if qos:
        first.add("qos", qos)
    if place.features:
        first.add("constraint", "&".join(place.features))
    array = _array(ctx, stage, first) if not staged else None
    if kube_groups.is_groups(ctx):
        script.copies, script.copy_var = kube_groups.submissions(ctx, stage), kube_groups.GROUP_VAR
    if job.time_limit_s:
        first.add("time", sbatch.format_time(job.time_limit_s))
    _hold(ctx, first)
    first.add("output", "%x-%A_%a.out" if array else "%x-%j.out")
    _requeue(ctx, first, stage)
    _job_image(ctx, first, stage)
    for header, part in zip(script.components, stage.parts, strict=True):
        _resources(ctx, header, part, place)
    script.intro = _intro(ctx, stage)
    script.body = _from_environment(ctx, _body(ctx, stage, config_maps, array is not None), filename)
    return script


def _from_environment(ctx: Context, body: list[str], filename: str) -> list[str]:
    """Placeholders with no value, taken from the submitting environment rather than kept as literals."""
    names = dict.fromkeys(u.name for u in ctx.job.unresolved)
    body, found = placeholders.open_to_shell(body, names)
    for name in found:
        line = next(u.line for u in ctx.job.unresolved if u.name == name)
        ctx.fidelity.approximated(
            f"${name}",
            f"a template placeholder with no value: read from the environment sbatch runs in "
            f"({name}=VALUE sbatch {filename}); the script stops at once when it is unset",
            line,
        )
    for name in names:
        if name not in found:
            item = next(u for u in ctx.job.unresolved if u.name == name)
            if item.role == PlaceholderRole.OTHER:
                ctx.fidelity.dropped(
                    f"{item.field}: ${name}" if item.field else f"${name}",
                    f"a template placeholder with no value, in a field the script does not carry "
                    f"(give it with --set {name}=VALUE)",
                    item.line,
                )
    return [*placeholders.guards(found, filename), *body] if found else body


def _intro(ctx: Context, stage: Stage) -> list[str]:
    job = ctx.job
    out = [
        f"{job.kind} {job.name or ctx.name}"
        + (f" in namespace {job.placement.namespace}" if job.placement.namespace else "")
    ]
    if len(stage.parts) > 1:
        out.append(
            f"heterogeneous job: {', '.join(f'component {i}: {p.name}' for i, p in enumerate(stage.parts))}"
        )
    for part in stage.parts:
        if part.note:
            out.append(f"migrate: approximated: {part.note}")
    for kv in job.labels:
        out.append(f"label {kv.key}={kv.value}")
    for kv in job.annotations:
        out.append(f"annotation {kv.key}={kv.value}")
    return out


def _array(ctx: Context, stage: Stage, header: Header) -> str | None:
    """``--array`` from Indexed completions, parallel pods of a plain Job, or LeaderWorkerSet groups."""
    job = ctx.job
    if kube_groups.is_groups(ctx):
        return kube_groups.array(ctx, stage, header)
    if job.array is not None and not job.array.count and not job.array.indices:
        # a fan-out whose size is known only at run time (Argo withParam): the submitter gives it
        limit = job.array.max_concurrent
        spec = "0" + (f"%{limit}" if limit else "")
        written = header.add("array", spec, "set --array=0-<items - 1> when submitting")
        ctx.fidelity.approximated(
            f"fan-out {job.array.spec}",
            f"{written}: its size is known only at run time; give sbatch --array=0-<items - 1> at submission",
            stage.parts[0].main.line,
        )
        return spec
    if job.array is not None:
        base = job.array.spec.split("%", 1)[0]
        try:
            sbatch.parse_array(base)
        except ValueError:
            base = ",".join(str(i) for i in job.array.indices) or "0"
        count = job.array.count or len(job.array.indices)
        limit = job.array.max_concurrent
        spec = base + (f"%{limit}" if limit and limit < count else "")
        written = header.add("array", spec)
        ctx.fidelity.mapped(
            (f"maxTrialCount {count}" if job.sweep else f"Indexed completions {count}")
            + (f", {'parallelTrialCount' if job.sweep else 'parallelism'} {limit}" if limit else ""),
            f"{written}: one array task per index"
            + (f", at most {limit} at a time" if limit and limit < count else ""),
            stage.parts[0].main.line,
        )
        if max(job.array.indices or (count - 1,)) > 1000:
            ctx.fidelity.approximated(
                f"{count} indexes",
                "Slurm's default MaxArraySize allows indexes up to 1000; raise it or split",
                None,
            )
        return spec
    comp = stage.parts[0].main
    declared = workloads.declared(job.kind)
    alike = declared is not None and declared.job_spec_pods
    if alike and len(stage.parts) == 1 and comp.replicas > 1 and len(job.components) == 1:
        completions = next(
            (int(i.value) for i in ctx.raw("completions") if (i.value.isascii() and i.value.isdigit())),
            comp.replicas,
        )
        spec = f"0-{completions - 1}" + (f"%{comp.replicas}" if comp.replicas < completions else "")
        written = header.add("array", spec, "approximated: the pods of a non-indexed Job become array tasks")
        ctx.fidelity.approximated(
            f"parallelism {comp.replicas}"
            + (f", completions {completions}" if completions != comp.replicas else ""),
            f"{written}: the pods of a non-indexed Job become array tasks (each also gets an index)",
            comp.line,
        )
        stage.parts[0].nodes = 1
        return spec
    return None


def _job_image(ctx: Context, header: Header, stage: Stage) -> None:
    """A runtime whose SPANK option gives the job its image (Shifter's --image): the first part's; a step
    with another names it."""
    runtime = ctx.launch
    if runtime is None or not runtime.job_image:
        return
    container = shape.container_of(stage.parts[0].main)
    ctx.job_image = container.image if container is not None and container.image else None
    if ctx.job_image:
        header.add(runtime.job_image, runtime.image_form(ctx.job_image), runtime.job_image_note)


def _hold(ctx: Context, header: Header) -> None:
    job = ctx.job
    if not job.hold:
        return
    kueue = any(kv.key == "kueue.x-k8s.io/queue-name" for kv in job.labels) or job.placement.queue is not None
    if kueue:
        ctx.fidelity.approximated(
            "suspend: true", "Kueue creates jobs suspended until it admits them; the Slurm queue does that"
        )
        return
    written = header.add("hold")
    ctx.fidelity.mapped("suspend: true", f"{written}: released with scontrol release")


def _retries(ctx: Context) -> tuple[int, str]:
    """(retries of the program, where the number comes from)."""
    failure = ctx.job.failure
    if failure.retries_per_index is not None:
        return failure.retries_per_index, f"backoffLimitPerIndex {failure.retries_per_index}"
    if failure.max_retries is not None:
        return failure.max_retries, f"backoff limit {failure.max_retries}"
    declared = workloads.declared(ctx.job.kind)
    if declared is not None and declared.default_retries is not None:
        default = declared.default_retries
        return default, f"backoffLimit unset (Kubernetes' default {default})"
    return 0, ""


def _requeue(ctx: Context, header: Header, stage: Stage) -> None:
    failure = ctx.job.failure
    retries, why = _retries(ctx)
    if retries > 0:
        written = header.add(
            "requeue",
            None,
            "approximated: Slurm requeues after a node failure; migrate_retry re-runs a failed program",
        )
        ctx.fidelity.approximated(
            why,
            f"a failed program is re-run, {plural(retries, 'more time')} at most, and {written} "
            "re-queues the job "
            "after a node failure or preemption (no exponential back-off)",
        )
    elif why:
        written = header.add("no-requeue")
        ctx.fidelity.mapped(why, f"{written}: no retries")
    if failure.restart_policy:
        ctx.fidelity.mapped(
            f"restartPolicy {failure.restart_policy}",
            "failed programs are retried by the script, not restarted in place",
        )
    for rule in failure.rules:
        ctx.fidelity.dropped(f"failure rule: {rule}", "Slurm has no exit-code or pod-condition policies")
    if failure.max_failed_indexes is not None:
        ctx.fidelity.dropped(
            f"maxFailedIndexes {failure.max_failed_indexes}",
            "every array task runs; Slurm does not stop the array early",
        )


# ---------------------------------------------------------------------------
# Resources


def _unresolved(ctx: Context, role: PlaceholderRole, instead: str) -> bool:
    """Whether a template placeholder left ``role`` unknown; each one recorded as dropped, not defaulted."""
    found = [u for u in ctx.job.unresolved if u.role == role]
    for item in found:
        ctx.fidelity.dropped(
            f"{item.field}: ${item.name}" if item.field else f"${item.name}",
            f"a template placeholder with no value; {instead} (give it with --set {item.name}=VALUE)",
            item.line,
        )
        ctx.diag(
            "TO-SLURM-UNRESOLVED",
            f"{item.field or 'a value'} is ${item.name}, which has no value: {instead}; "
            f"translate again with --set {item.name}=VALUE or --env-file FILE",
            item.line,
        )
    return bool(found)


def _packing(ctx: Context, part: Part, place: placement.Placement) -> pod_allocation.PodGroup:
    """How the part's pods share the nodes of its partition (``migrate.site.pod_allocation``)."""
    settings = ctx.config.kubernetes if ctx.config is not None else KubernetesSettings()
    label = f"partition {place.partition}" if place.partition else "the partition"
    pods = ir.replace(
        part.main, replicas=part.nodes, pods_per_job=1, resources=ir.replace(part.resources, nodes_min=None)
    )
    return pod_allocation.group(ctx.job, pods, node_type(ctx.config, place.partition), label, settings)


def _resources(ctx: Context, header: Header, part: Part, place: placement.Placement) -> None:
    res = part.resources
    packed = _packing(ctx, part, place)
    per_node = packed.pods_per_node.value
    part.nodes_allocated = packed.nodes
    part.pods_per_node = per_node
    tpn = kube_steps.tasks_per_node(part) * per_node
    nodes_unknown = _unresolved(ctx, PlaceholderRole.NODES, "no --nodes is written (sbatch's default is 1)")
    gpus_unknown = _unresolved(ctx, PlaceholderRole.GPUS, "no GPUs are requested")
    written = [] if nodes_unknown else [header.add("nodes", sbatch.format_nodes(packed.nodes, None))]
    if not nodes_unknown and packed.nodes > 1 and part.nodes % per_node:
        written.append(header.add("ntasks", part.nodes * kube_steps.tasks_per_node(part)))
    written.append(header.add("ntasks-per-node", tpn))
    asked = ["an unknown number of pods" if nodes_unknown else plural(part.nodes, "pod")]
    if per_node > 1:
        asked.append(f"{per_node} per node")
    task_share = max(1, tpn // per_node)
    if res.cpus_per_node:
        rounded = res.cpus_per_node % task_share != 0
        note = (
            f"approximated: {res.cpus_per_node} CPUs over {task_share} tasks, rounded up" if rounded else ""
        )
        written.append(header.add("cpus-per-task", max(1, math.ceil(res.cpus_per_node / task_share)), note))
        asked.append(f"cpu {res.cpus_per_node}")
    if res.mem_per_node_mb:
        written.append(header.add("mem", sbatch.format_memory(res.mem_per_node_mb * per_node)))
        asked.append(f"memory {res.mem_per_node_mb}Mi")
    gpus = res.computed_gpus_per_node()
    gres: list[ir.GenericResource] = []
    if gpus and per_node > 1 and task_share == 1:
        written.append(header.add("gpus-per-task", gpus))
    elif gpus:
        gres.append(ir.GenericResource("gpu", gpus * per_node))
    gres += [g for g in (_generic(ctx, d, per_node, packed, part.main.line) for d in packed.devices) if g]
    typed = {d.resource for d in packed.devices}
    for other in res.generic:
        if other.name not in typed:  # huge pages and the like: a node setting on Slurm, not a request
            ctx.fidelity.dropped(
                f"{other.name}: {other.count}",
                "a resource with no GRES in the site config; on Slurm it is a setting of the nodes",
                part.main.line,
            )
    if gres:
        written.append(header.add("gres", sbatch.format_gres(tuple(gres))))
    if gpus:
        asked.append(f"{plural(gpus, 'GPU')}" + (f" ({res.gpu_type})" if res.gpu_type else ""))
    if res.tmp_disk_mb:
        written.append(header.add("tmp", sbatch.format_memory(res.tmp_disk_mb * per_node)))
        asked.append(f"ephemeral-storage {res.tmp_disk_mb}Mi")
    if gpus_unknown:
        asked.append("GPUs unknown")
    if packed.whole_node and not nodes_unknown:
        written.append(
            header.add(
                "exclusive", None, "approximated: each pod takes a whole node; the node is the job's alone"
            )
        )
    line = part.main.line
    ctx.fidelity.mapped(f"resources of {part.name}: {', '.join(asked)}", " ".join(written), line)
    ctx.fidelity.mapped(f"pods of {part.name} per node", packed.pods_per_node.detail, line)
    if res.cpus_per_node and res.cpus_per_node % task_share:
        ctx.fidelity.approximated(
            f"cpu {res.cpus_per_node} over {task_share} ranks", "rounded up to whole CPUs per task", line
        )
    if place.gpu_type_dropped and gpus:
        ctx.fidelity.dropped(
            f"GPU model {place.gpu_type_dropped}",
            "no partition of the site config has this GPU model; any GPU of the partition is taken",
            line,
        )
        ctx.diag(
            "TO-SLURM-GPU-TYPE",
            f"GPU model {place.gpu_type_dropped}: no partition in migrate.yaml has it "
            "(partitions.*.gpu_type); "
            "the job asks for untyped GPUs",
            line,
        )


def _generic(
    ctx: Context,
    device: pod_allocation.PodDevice,
    per_node: int,
    packed: pod_allocation.PodGroup,
    line: int | None,
) -> ir.GenericResource | None:
    """A device a pod asks for (other than GPUs) as the GRES the site names it, if it is one."""
    kind = device.type.kind if device.type is not None else None
    if kind in (DeviceKind.GPU, DeviceKind.GPU_SLICE):
        return None
    item = f"{device.resource}: {device.quantity}"
    table = ctx.config.gres if ctx.config is not None else ()
    name = next((gres for gres, resource in table if resource == device.resource), None)
    if name:
        ctx.fidelity.mapped(item, f"GRES {name}: the site config's gres table", line)
        return ir.GenericResource(name, device.quantity * per_node)
    if kind == DeviceKind.NIC:
        held = (
            "; the pods take whole nodes, and --exclusive gives the job all of them"
            if packed.whole_node
            else ""
        )
        ctx.fidelity.mapped(
            item,
            f"a network interface of the node: Slurm does not schedule it, every job on the node uses "
            f"it{held}",
            line,
        )
        return None
    if packed.whole_node:
        ctx.fidelity.approximated(
            item,
            "no GRES in the site config's gres table; each pod takes a whole node, and --exclusive holds "
            "all of its devices",
            line,
        )
        return None
    suggested = device.type.gres if device.type is not None and device.type.gres else "NAME"
    ctx.fidelity.dropped(
        item,
        f"a device with no GRES in the site config (add gres: {{{suggested}: {device.resource}}}); "
        "another job may share the node's devices",
        line,
    )
    ctx.diag(
        "TO-SLURM-NO-GRES",
        f"{device.resource}: no GRES in migrate.yaml stands for it, and the pods do not take whole nodes; "
        f"add gres: {{{suggested}: {device.resource}}} so that the job holds its devices",
        line,
    )
    return None


# ---------------------------------------------------------------------------
# Body


def _body(ctx: Context, stage: Stage, config_maps: ConfigMaps, indexed: bool) -> list[str]:
    job = ctx.job
    helpers: list[str] = []
    setup: list[str] = []
    launches: list[list[str]] = []
    scratch = files = False
    retries, _ = _retries(ctx)
    # a sweep's trials are separate jobs on Kubernetes, not indexes of one
    preset = ["JOB_COMPLETION_INDEX"] if indexed and job.array is not None and job.sweep is None else []
    own_values = job.array.values if indexed and job.array is not None else ()
    preset += [value.name for value in own_values]
    for index, part in enumerate(stage.parts):
        het = len(stage.parts) > 1
        lines, mounts, env = _part_lines(ctx, part, index if het else None, config_maps, preset)
        for helper in sorted(env.helpers):
            if helper not in helpers:
                helpers.append(helper)
        scratch |= mounts.uses_scratch
        files |= mounts.uses_files
        if retries and not het and part.launch != RAY and RETRY_HELPER not in helpers:
            helpers.append(RETRY_HELPER)
            lines = [f"migrate_retry {retries} {ln}" if ln.startswith("srun ") else ln for ln in lines]
        launches.append(lines)
    body: list[str] = []
    for helper in helpers:
        body += [helper, ""]
    if "JOB_COMPLETION_INDEX" in preset:
        body += [
            "# Indexed Job: the completion index is the array task id",
            'export JOB_COMPLETION_INDEX="$SLURM_ARRAY_TASK_ID"',
        ]
    for value in own_values:
        body += array_values.lines(value)
        ctx.fidelity.mapped(
            f"each array task's {value.name}",
            "set from its array task id" + (" out of the listed items" if value.items else ""),
            stage.parts[0].main.line,
        )
    if any(p.resources.cpus_per_node for p in stage.parts):
        body += [
            "# srun does not pass --cpus-per-task on to its steps in Slurm 22.05-23.02",
            'export SRUN_CPUS_PER_TASK="${SLURM_CPUS_PER_TASK:-1}"',
        ]
    if files:
        setup += [FILES_SETUP, f"trap 'rm -rf \"${FILES_DIR}\"' EXIT"]
    if scratch:
        setup += [SCRATCH_SETUP]
    body += setup
    if len(launches) == 1:
        body += launches[0]
    else:
        body.append("pids=()")
        for lines in launches:
            body.append("(")
            body += ["  " + ln for ln in lines]
            body.append(") &")
            body.append("pids+=($!)")
        body += WAIT_ALL
    return body


def _part_lines(
    ctx: Context, part: Part, het: int | None, config_maps: ConfigMaps, preset: list[str]
) -> tuple[list[str], Mounts, environment.EnvLines]:
    if part.launch == LWS:
        return kube_groups.part_lines(ctx, part, het, config_maps)
    comp = part.launcher if part.launch == MPI and part.launcher is not None else part.main
    worker = part.main
    container = shape.container_of(worker)
    env = environment.export_lines(
        ctx, environment.container_env(worker), config_maps, preset, worker.pods_per_job
    )
    mounts = volumes.Mounts() if container is None else volumes.plan(ctx, container, config_maps)
    kube_steps.record_containers(ctx, part)
    lines: list[str] = []
    lines += env.lines
    lines += mounts.setup
    lines += kube_steps.folder_lines(part, container, mounts, het, ctx.runtime)
    extra = [f"--het-group={het}"] if het is not None else []
    names = env.exported if ctx.names_variables else []

    def defined(name: str) -> bool:
        return env.defined(name) or env.maybe(name)

    def init_mounts(init: ir.Container) -> volumes.Mounts:
        planned = volumes.plan(ctx, init, config_maps)
        mounts.uses_files |= planned.uses_files
        mounts.uses_scratch |= planned.uses_scratch
        planned.setup = [ln for ln in planned.setup if ln not in lines]  # the pod's volumes, made once
        return planned

    lines += kube_steps.init_lines(ctx, part, init_mounts, names, extra, defined)
    if part.launch == RAY:
        lines += ray_cluster.lines(ctx, part, mounts, names)
    elif part.launch == MPI:
        lines += kube_steps.mpi_lines(ctx, part, comp, mounts, names, extra, defined)
    else:
        lines += kube_steps.plain_or_torch(ctx, part, mounts, names, extra, defined, env.per_task)
    return lines, mounts, env


__all__ = ["translate"]


def _printable_name(name: str | None, fallback: str, placeholders: list[str]) -> str:
    """The job name as one directive line; a name of only line breaks or NULs uses ``fallback``.

    A name that still holds one of the job's template placeholders uses ``fallback`` too:
    sbatch would keep ``${RUN_NAME}`` as written.
    """
    text = " ".join((name or "").splitlines()).replace("\0", "")
    if any(f"${p}" in text or f"${{{p}}}" in text for p in placeholders):
        return fallback
    return text or fallback
