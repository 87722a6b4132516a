"""slurm-bridge: the job's pods are scheduled by Slurm, through the bridge's scheduler.

The object is the Job or JobSet the base flavor built; this adds what the
bridge reads: ``schedulerName: slurm-bridge-scheduler`` on every pod, and on
the top-level workload (where the bridge reads them for a Job or JobSet) the
``slurmjob.slinky.slurm.net/*`` annotations for what Slurm would otherwise not
know of the allocation: partition, account, QOS, time limit in minutes, GRES
as TRES per node, exclusivity, constraints, licenses, job name, reservation,
priority. The partition is passed as written (a list stays a list); a time
limit only when the job gives a finite one (without it Slurm applies the
partition's default); no node range, since each pod is its own one-node job.
CPUs and memory the bridge takes from the pods' own requests, GPUs from their
``nvidia.com/gpu`` limits unless ``gres`` says more (a GPU type, other GRES).

Each option it maps replaces what the base flavor recorded for it: on the
bridge the option is Slurm's again.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from migrate.fidelity import Entry
from migrate.vocab import JobKind

from .translation_context import Context, option_name
from .yamlemit import Manifest

SCHEDULER = "slurm-bridge-scheduler"  # schedulerConfig.schedulerName's default
PREFIX = "slurmjob.slinky.slurm.net/"
WORKLOAD_KINDS = ("Job", "JobSet", "CronJob")


def _pod_specs(node: Any) -> Iterator[dict[str, Any]]:
    """Every pod spec in an object: the ``spec`` of each ``template`` that has containers."""
    if isinstance(node, dict):
        template = node.get("template")
        if (
            isinstance(template, dict)
            and isinstance(template.get("spec"), dict)
            and "containers" in template["spec"]
        ):
            yield template["spec"]
        for value in node.values():
            yield from _pod_specs(value)
    elif isinstance(node, list):
        for value in node:
            yield from _pod_specs(value)


def _workload_metadata(manifest: Manifest) -> dict[str, Any]:
    """Where the bridge reads the annotations: the Job or JobSet (a CronJob's Jobs carry its template's)."""
    body = manifest.body
    if body["kind"] == JobKind.CRONJOB:
        template = body["spec"]["jobTemplate"]
        return template.setdefault("metadata", {})  # type: ignore[no-any-return]
    return body["metadata"]  # type: ignore[no-any-return]


def _annotations(ctx: Context) -> list[tuple[str, str, str, str]]:
    """(option, value as written, annotation suffix, annotation value) for what the job says."""
    job, alloc = ctx.job, ctx.allocation
    comp = job.components[0]
    res = comp.resources
    part_alloc = alloc.components[0] if alloc is not None else None
    out: list[tuple[str, str, str, str]] = []
    place = job.placement
    # the bridge hands the value to Slurm unchanged: a list of partitions stays a list
    partition = ",".join(place.partitions) or (alloc.partition.value if alloc is not None else None)
    if partition:
        out.append(("partition", partition, "partition", partition))
    if place.account:
        out.append(("account", place.account, "account", place.account))
    if place.qos:
        out.append(("qos", place.qos, "qos", place.qos))
    if place.reservation:
        out.append(("reservation", place.reservation, "reservation", place.reservation))
    if place.priority and place.priority.isdigit():
        out.append(("priority", place.priority, "priority", place.priority))
    # only the job's own limit: without the annotation Slurm applies the partition's default, as
    # sbatch does without --time (the plan's assumption stays out of the artifact)
    if job.time_limit_s:
        out.append(("time", str(job.time_limit_s), "timelimit", str(-(-job.time_limit_s // 60))))
    if job.name:
        out.append(("job-name", job.name, "job-name", job.name))
    for raw in job.raw:
        if raw.origin.startswith("#SBATCH") and option_name(raw.key) == "wckey" and raw.value:
            out.append(("wckey", raw.value, "wckey", raw.value))
    if res.constraint:
        out.append(("constraint", res.constraint, "constraints", res.constraint))
    if res.licenses:
        text = ",".join(f"{lic.name}:{lic.count}" for lic in res.licenses)
        out.append(("licenses", text, "licenses", text))
    if part_alloc is not None:
        tres = _tres_per_node(part_alloc)
        if tres:
            out.append(("gres", tres, "gres", tres))
        # no min-nodes/max-nodes: each pod is a Slurm job of its own, of one node (_node_range)
        if not part_alloc.whole_node:
            out.append(("exclusive", "", "exclusive", "false"))
    return out


def _tres_per_node(comp: Any) -> str:
    """GRES as TRES per node (``gres/gpu:h100=8,gres/nvme=1``) when it says more than the pods' GPU count."""
    parts = []
    gpu_type = comp.gpu_type.value
    if comp.gpus_per_node.value and gpu_type:
        parts.append(f"gres/gpu:{gpu_type}={comp.gpus_per_node.value}")
    for gres in comp.gres:
        kind = f":{gres.value.type}" if gres.value.type else ""
        parts.append(f"gres/{gres.value.name}{kind}={gres.value.quantity}")
    if parts and comp.gpus_per_node.value and not gpu_type:
        parts.insert(
            0, f"gres/gpu={comp.gpus_per_node.value}"
        )  # the annotation replaces what the bridge derives
    return ",".join(parts)


# Option -> the sbatch spelling that the fidelity log names (``--gres`` covers --gpus* too).
_OPTIONS = {
    "gres": ("gres", "gpus-per-node", "gpus", "gpus-per-task"),
    "nodes": ("nodes",),
    "exclusive": ("exclusive",),
}


def _replace_entries(ctx: Context, long: str, reason: str, approximated: bool = False) -> bool:
    """Record ``long`` as the bridge carries it (mapped, or approximated), in place of what the base
    flavor said; False if the job file does not hold it."""
    spellings = _OPTIONS.get(long, (long,))
    texts = {ctx.option_texts[(name, 0)] for name in spellings if (name, 0) in ctx.option_texts}
    if not texts:
        return False
    kept: list[Entry] = [e for e in ctx.fidelity.entries if e.item not in texts]
    ctx.fidelity.entries[:] = kept
    record = ctx.fidelity.approximated if approximated else ctx.fidelity.mapped
    for name in spellings:
        if (name, 0) in ctx.option_texts:
            record(ctx.option(name), reason, ctx.line_of(name))
    return True


def _time_limit(ctx: Context) -> None:
    """No timelimit annotation: say what Slurm does instead (the job's own limit was annotated)."""
    if ctx.job.time_limit_s:
        return
    if ctx.given("time"):  # UNLIMITED, INFINITE, 0 or -1: read, but no number of minutes
        _replace_entries(
            ctx,
            "time",
            "no timelimit annotation: the bridge takes whole minutes and has no unlimited, so Slurm "
            "applies the partition's default time limit (DefaultTime, else MaxTime); unlimited only "
            "where that is",
            approximated=True,
        )
        return
    ctx.fidelity.mapped(
        "allocation: time limit",
        "no --time and no timelimit annotation: Slurm applies the partition's default time limit, "
        "as sbatch does",
    )


def _node_range(ctx: Context) -> None:
    """--nodes=MIN-MAX: the bridge makes each pod a one-node Slurm job, so the range has no carrier."""
    res = ctx.job.components[0].resources
    if not res.nodes_max or res.nodes_max == res.nodes_min or not ctx.given("nodes"):
        return
    pods = res.computed_nodes()
    _replace_entries(
        ctx,
        "nodes",
        f"{pods} pods (the minimum), each its own one-node Slurm job on the bridge: Slurm cannot grow "
        f"the job to {res.nodes_max} nodes, and no min-nodes/max-nodes annotation applies to one pod",
        approximated=True,
    )


def apply(ctx: Context, manifests: list[Manifest]) -> None:
    """Hand the workload's pods to slurm-bridge and tell Slurm the job's allocation."""
    workloads = [m for m in manifests if m.body.get("kind") in WORKLOAD_KINDS]
    for manifest in workloads:
        for spec in _pod_specs(manifest.body):
            spec["schedulerName"] = SCHEDULER
    if not workloads:
        return
    top = workloads[-1]
    meta = _workload_metadata(top)
    annotations = meta.setdefault("annotations", {})
    pods = sum(1 for _ in _pod_specs(top.body))
    for long, _value, suffix, value in _annotations(ctx):
        key = PREFIX + suffix
        annotations[key] = value
        reason = f"{key}: {value}, Slurm allocates the bridge's external job with it"
        if suffix == "exclusive" and (ctx.job.total_nodes() > 1 or pods > 1):
            reason += " (the bridge honours it for single-pod workloads only; others get whole nodes)"
        _replace_entries(ctx, long, reason)
    alloc = ctx.allocation
    if alloc is not None and alloc.components[0].whole_node:
        _replace_entries(
            ctx, "exclusive", "slurm-bridge allocates every pod a whole node unless told otherwise"
        )
    _time_limit(ctx)
    path = (
        ("metadata", "annotations")
        if top.body["kind"] != JobKind.CRONJOB
        else ("spec", "jobTemplate", "metadata")
    )
    top.note(
        path, "slurm-bridge: Slurm schedules these pods as one external job per pod (a JobSet is no gang)"
    )
    res = ctx.job.components[0].resources
    if res.nodes_max and res.nodes_max != res.nodes_min:
        _node_range(ctx)
    elif ctx.job.total_nodes() > 1:
        item = ctx.option("nodes", str(ctx.job.total_nodes())) if ("nodes", 0) in ctx.option_texts else None
        if item is not None:
            ctx.fidelity.entries[:] = [e for e in ctx.fidelity.entries if e.item != item]
            ctx.fidelity.approximated(
                item,
                "slurm-bridge makes each pod of a Job or JobSet its own Slurm job: the nodes are not "
                "allocated together (a PodGroup would gang them)",
                ctx.line_of("nodes"),
            )


__all__ = ["PREFIX", "SCHEDULER", "WORKLOAD_KINDS", "apply"]
