"""Fidelity entries for a Kubernetes job's placement and job-level fields (queue, selectors, priority ...)."""

from __future__ import annotations

from migrate.render import plural
from migrate.vocab import MonitoringKind

from . import options as sbatch
from . import placement, shape
from .context import Context
from .shape import Stage


def record_placement(ctx: Context, place: placement.Placement) -> None:
    job = ctx.job
    if job.placement.queue:
        if place.basis == placement.Basis.QUEUE:
            ctx.fidelity.mapped(
                f"queue {job.placement.queue}", f"--partition={place.partition}: {place.reason}"
            )
        else:
            ctx.fidelity.dropped(
                f"queue {job.placement.queue}", "no partition of the site config mirrors this queue"
            )
            ctx.diag(
                "TO-SLURM-QUEUE-UNMAPPED",
                f"queue {job.placement.queue} is no partition's queue in migrate.yaml: "
                + (
                    f"partition {place.partition} was chosen ({place.reason})"
                    if place.partition and place.basis != placement.Basis.DEFAULT
                    else f"the default partition{f' {place.partition}' if place.partition else ''} is used"
                ),
            )
    if place.partition and place.basis != placement.Basis.QUEUE:
        ctx.fidelity.record(place.status, f"placement: partition {place.partition}", place.reason)
    for feature in place.features:
        ctx.fidelity.mapped(f"node selector for feature {feature}", f"--constraint={feature}")
    for key, value in place.unmapped:
        ctx.fidelity.dropped(
            f"nodeSelector {key}={value}", "no partition or node feature in the site config selects it"
        )
        ctx.diag(
            "TO-SLURM-NODE-SELECTOR",
            f"node selector {key}={value}: no partition or feature in migrate.yaml matches; the job may land "
            "on any node of its partition",
        )
    if job.placement.affinity:
        ctx.fidelity.dropped(
            f"node affinity: {job.placement.affinity}", "Slurm selects nodes by partition and features only"
        )
        ctx.diag(
            "TO-SLURM-NODE-SELECTOR", f"node affinity {job.placement.affinity}: not expressible on Slurm"
        )
    for tol in job.placement.tolerations:
        ctx.fidelity.approximated(
            f"toleration {tol.key} {tol.value}", "no taints on Slurm: partition access plays that role"
        )
    if job.placement.priority:
        _priority(ctx)
    if job.placement.scheduler:
        ctx.fidelity.mapped(f"schedulerName {job.placement.scheduler}", "slurmctld schedules the job")
    for kv in job.placement.topology:
        ctx.fidelity.approximated(
            f"topology {kv.key}={kv.value}", "whole nodes (--exclusive); Slurm's topology plugin places them"
        )


def _priority(ctx: Context) -> None:
    priority = ctx.job.placement.priority or ""
    qos = placement.qos(ctx)
    if qos:
        ctx.fidelity.mapped(f"priority class {priority}", f"--qos={qos}: the site config's qos table")
        return
    ctx.fidelity.dropped(
        f"priority class {priority}", "no QOS in the site config maps to this priority class"
    )


def record_job_fields(ctx: Context, stages: list[Stage]) -> None:
    job = ctx.job
    if job.time_limit_s:
        ctx.fidelity.mapped(f"deadline {job.time_limit_s}s", f"--time={sbatch.format_time(job.time_limit_s)}")
    if job.placement.namespace:
        account = placement.account(ctx)
        if account:
            ctx.fidelity.mapped(
                f"namespace {job.placement.namespace}", f"--account={account}: the site's accounts table"
            )
        else:
            ctx.fidelity.approximated(
                f"namespace {job.placement.namespace}", "no account of the site config uses this namespace"
            )
    if job.labels or job.annotations:
        ctx.fidelity.approximated(
            f"{plural(len(job.labels), 'label')}, {plural(len(job.annotations), 'annotation')}",
            "noted in the script header",
        )
    if len(stages) > 1:
        for stage in stages:
            for target, dep_type, line in stage.after:
                ctx.fidelity.mapped(
                    f"{stage.name} dependsOn {target}",
                    f"separate scripts; submit.sh submits {stage.name} with "
                    f"--dependency={dep_type}:<{target} job id>",
                    line,
                )
    for dep in job.dependencies:
        if shape.is_internal(job, dep) and len(stages) == 1:
            ctx.fidelity.approximated(
                f"dependsOn {', '.join(dep.targets)}",
                "the roles run in one allocation, at the same time",
                dep.line,
            )
    for hook in job.monitoring:
        if hook.kind == MonitoringKind.PROMETHEUS_SCRAPE:
            ctx.fidelity.dropped(
                f"monitoring {hook.kind}", "Prometheus does not discover Slurm jobs", hook.line
            )
        else:
            ctx.fidelity.mapped(f"monitoring {hook.kind}", "runs inside the job as before", hook.line)
    if job.script is not None and job.script.unparsed:
        ctx.fidelity.mapped("shell script", "passed to bash unchanged (quoted as one word)")


__all__ = ["record_job_fields", "record_placement"]
