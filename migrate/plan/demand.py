"""What each job asks of the cluster: node-hours, GPU-hours, its largest gang, its partition.

Demand comes from what Slurm allocates each job (``migrate.site.allocation``,
read through the job's facts): the nodes it holds (whole nodes, or each
node's share by its scarcest resource, so that 48 one-GPU array tasks run 8
at a time pack onto one 8-GPU node), its GPUs (all of a node's for a
whole-node job), its time limit (its own, else the partition's DefaultTime or
MaxTime, else ``default_job_hours``, said to be assumed), times the array
size; for cron jobs and services the runs or hours they add up to over the
demand window. Every figure is per demand window (``thresholds.demand_window_hours``,
a week by default): a service is on for all of it; a batch job runs once in it
unless a schedule (a CronJob's, a scrontab line's) or the accounting says how
often, and ``runs`` / ``runs_basis`` say which ("runs" in ``assumed`` when none
does). When an accounting dump covers a job (``--accounting``, read
by ``migrate.site.usage``), ``accounted_demand`` replaces the estimate with
what the job actually used; ``basis`` says which it is.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace

from migrate import ir
from migrate.plan.facts import JobFacts
from migrate.render import plural
from migrate.site.allocation import allocate
from migrate.site.config import SiteConfig
from migrate.site.usage_match import JobUsage
from migrate.vocab import WRAPPER_KINDS, Format, PlaceholderRole

UNASSIGNED = "(unassigned)"  # no partition or queue that migrate.yaml knows
LOGIN_NODE = "(login node)"  # wrapper scripts run where users log in, not on compute nodes

_CRON_ALIASES = {
    "@yearly": 1 / 365,
    "@annually": 1 / 365,
    "@monthly": 1 / 30,
    "@weekly": 1 / 7,
    "@daily": 1.0,
}
_CRON_ALIASES |= {"@midnight": 1.0, "@hourly": 24.0}


@dataclass(frozen=True, slots=True)
class JobDemand:
    job_id: str
    partition: str
    nodes: int  # the gang: nodes that must be free at once for one run (array tasks packed)
    gpus_per_node: int
    node_hours: float  # over the demand window
    gpu_hours: float
    basis: str  # how the numbers were reached, for the report
    node_load: float = 1.0  # nodes one run holds (a share of one for a partial node)
    # what the numbers rest on that no source told: "time_limit", "node_share", "nodes_placeholder" ...
    assumed: tuple[str, ...] = ()
    run_hours: float = 0.0  # hours its runs hold their nodes over the window (0: not known apart)
    runs: float = 1.0  # runs per demand window (array tasks count as one run)
    runs_basis: str = ""  # where ``runs`` comes from: always on, a schedule, the accounting, or assumed
    always_on: bool = False  # a service: on for the whole window, not a count of runs


def job_demand(job: ir.Job, facts: JobFacts, config: SiteConfig) -> JobDemand:
    limits = config.thresholds
    window = limits.demand_window_hours
    if job.kind in WRAPPER_KINDS:
        basis = "a wrapper: runs on a login node"
        return JobDemand(job.id, LOGIN_NODE, 0, 0, 0.0, 0.0, basis, runs_basis=f"{basis}, no compute demand")
    load = facts.node_load or float(facts.nodes)
    gang = facts.nodes
    assumed_runs: tuple[str, ...] = ()
    always_on = ir.runs_as_service(job)
    if always_on:
        hours, runs, basis = float(window), 1.0, "always on over the window"
        per_window, runs_basis = 1.0, f"always on: all {window:g} h of the window"
    else:
        hours = facts.time_s / 3600 if facts.time_s else float(limits.default_job_hours)
        runs = float(facts.array_size or 1)
        basis = _time_basis(job, facts, hours)
        if facts.array_size:
            basis += f" x {facts.array_size} array tasks"
            gang = _array_gang(job, facts, load)
            if load < facts.nodes:
                basis += f", {load:g} node each, {plural(gang, 'node')} for the tasks that run at once"
        elif load < facts.nodes:
            basis += f", {load:g} of a node"
        per_window, runs_basis = (
            1.0,
            f"one run per {window:g} h window assumed: no schedule or accounting says more",
        )
        if job.schedule is not None:
            per_day = cron_runs_per_day(job.schedule.cron)
            runs *= per_day * window / 24
            basis += f" x {per_day:g} runs a day"
            per_window = round(per_day * window / 24, 4)
            runs_basis = (
                f"schedule {job.schedule.cron}: {per_window:g} runs per {window:g} h ({per_day:g} a day)"
            )
        else:
            assumed_runs = ("runs",)
    node_hours = round(load * hours * runs, 2)
    gpu_hours = round(facts.gpus * hours * runs, 2)
    per_node = max(1, math.ceil(facts.gpus / facts.nodes)) if facts.gpus else 0
    # What the allocation assumed; of a Kubernetes workload's, the time limit its pods lack.
    kept = facts.assumed if job.source.format == Format.SLURM else ("time_limit",)
    assumed = tuple(a for a in facts.assumed if a in kept)
    if always_on:
        assumed = tuple(a for a in assumed if a != "time_limit")  # on for the window: no time limit to assume
    assumed += assumed_runs
    # A count a template placeholder holds is unknown: the figures count its default instead.
    sized = {u.role for u in job.unresolved} & {PlaceholderRole.NODES, PlaceholderRole.GPUS}
    assumed += tuple(f"{role}_placeholder" for role in sorted(sized))
    return JobDemand(
        job.id,
        partition_of(job, config, facts),
        gang,
        per_node,
        node_hours,
        gpu_hours,
        basis,
        load,
        assumed,
        round(hours * runs, 4),
        per_window,
        runs_basis,
        always_on,
    )


def _time_basis(job: ir.Job, facts: JobFacts, hours: float) -> str:
    if job.time_limit_s:
        return f"{hours:g} h time limit"
    if facts.hours is not None:  # the partition's DefaultTime or MaxTime
        return f"{hours:g} h: {facts.time_basis}"
    return f"no time limit: {hours:g} h assumed"


def _array_gang(job: ir.Job, facts: JobFacts, load: float) -> int:
    """The nodes an array's tasks hold at once: one task's, or for partial-node tasks %N of them packed."""
    assert job.array is not None
    if load >= facts.nodes:
        return facts.nodes
    at_once = min(job.array.max_concurrent or 1, facts.array_size or 1)
    return max(1, math.ceil(round(at_once * load, 4)))


def helper_demand(
    helper: JobDemand, users: list[JobDemand], window_hours: float, carried: bool = False
) -> JobDemand:
    """A helper is up while the jobs that use it run, not all week: their hours, at most the window.

    ``carried``: on Slurm each user starts its own copy inside its allocation (a RayJob that names
    a RayCluster): the users' demand holds it, and the helper adds none.
    """
    if carried:
        basis = f"started inside the allocation of the {plural(len(users), 'job')} that use it"
        return replace(helper, node_hours=0.0, gpu_hours=0.0, run_hours=0.0, basis=basis)
    hours = min(float(window_hours), sum(_run_hours(u) for u in users))
    always = _run_hours(helper) or float(window_hours)
    scale = hours / always if always else 0.0
    return replace(
        helper,
        node_hours=round(helper.node_hours * scale, 2),
        gpu_hours=round(helper.gpu_hours * scale, 2),
        run_hours=round(hours, 4),
        basis=f"up while the {plural(len(users), 'job')} that use it run: {hours:g} h",
    )


def _run_hours(demand: JobDemand) -> float:
    """The hours a job's runs hold their nodes; from its node-hours where they were not kept apart."""
    if demand.run_hours:
        return demand.run_hours
    held = demand.node_load or float(demand.nodes)
    return demand.node_hours / held if held else 0.0


def accounted_demand(script: JobDemand, usage: JobUsage) -> JobDemand:
    """What the accounting says the job used, in place of the script's estimate."""
    states = ", ".join(f"{state} {count}" for state, count in usage.states)
    basis = (
        f"accounted: {plural(usage.runs, 'run')}, {plural(usage.allocations, 'allocation')} ({states})"
        + (", scaled to one demand window" if usage.scaled else "")
        + f"; the script estimate was {script.node_hours:g} node-h"
    )
    return JobDemand(
        script.job_id,
        usage.partition or script.partition,
        usage.nodes or script.nodes,
        usage.gpus_per_node,
        usage.node_hours,
        usage.gpu_hours,
        basis,
        runs=float(usage.runs),
        runs_basis=f"accounted: {plural(usage.runs, 'run')}"
        + (", scaled to one demand window" if usage.scaled else " in the demand window"),
    )


def unaccounted_demand(script: JobDemand, credited_to: str | None) -> JobDemand:
    """A job the dumps cover that has no record: it did not run, or its records went to a namesake."""
    if credited_to is not None:  # the records were counted once, for the other job
        basis = f"accounted under {credited_to}, which has the same name"
        return replace(script, node_hours=0.0, gpu_hours=0.0, basis=basis)
    return replace(script, basis=f"{script.basis}; did not run in the accounting window")


def partition_of(job: ir.Job, config: SiteConfig, facts: JobFacts | None = None) -> str:
    """The migrate.yaml partition whose nodes the job runs on, on either scheduler (the allocation's)."""
    name = facts.partition if facts is not None else allocate(job, config).partition.value
    if name is not None and config.partition(name) is not None:
        return name
    if job.source.format == Format.SLURM and len(job.placement.partitions) > 1:
        known = {part for part, _ in config.partitions}
        return next((p for p in job.placement.partitions if p in known), UNASSIGNED)
    return UNASSIGNED


def cron_runs_per_day(cron: str) -> float:
    """How many times a day a cron line fires, roughly (day-of-month and month are ignored)."""
    text = cron.strip()
    if text.startswith("@"):
        return _CRON_ALIASES.get(text.split()[0], 1.0)
    fields = text.split()
    if len(fields) < 5:
        return 1.0
    minutes = _field_count(fields[0], 0, 59)
    hours = _field_count(fields[1], 0, 23)
    weekdays = _field_count(fields[4], 0, 6)
    return round(minutes * hours * weekdays / 7, 4)


def _field_count(field: str, low: int, high: int) -> int:
    values: set[int] = set()
    for part in field.split(","):
        body, _, step_text = part.partition("/")
        step = int(step_text) if (step_text.isascii() and step_text.isdigit()) and int(step_text) > 0 else 1
        if body in ("*", "?"):
            start, end = low, high
        elif re.fullmatch(r"\d+-\d+", body):
            start, end = (int(x) for x in body.split("-"))
        elif body.isascii() and body.isdigit():
            start = int(body)
            end = high if step_text else start
        else:
            return 1  # names such as MON-FRI: count once rather than guess
        values.update(range(start, min(end, high) + 1, step))
    return max(1, len(values))


__all__ = [
    "LOGIN_NODE",
    "UNASSIGNED",
    "JobDemand",
    "accounted_demand",
    "cron_runs_per_day",
    "helper_demand",
    "job_demand",
    "partition_of",
    "unaccounted_demand",
]
