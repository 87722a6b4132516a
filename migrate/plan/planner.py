"""The phased coexistence plan: foundations, a pilot, waves, and the end state.

The seeds' advice is the shape: decide by workload (the recommendations), run
the new scheduler on a subset of nodes beside the old one (capacity per
phase), validate on real jobs before anything is switched off (gates), keep
shared storage visible to both sides (Phase 0), and let what belongs on the
old scheduler stay there (hybrid end state).

``build_plan`` takes IR jobs and returns a ``Plan``; ``plan_json`` renders it as
the stable, byte-for-byte deterministic ``plan.json``.
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, fields, replace
from enum import StrEnum
from typing import Any

import networkx as nx

from migrate import ir, json_indented
from migrate.diagnostics import Diagnostic
from migrate.graph import model as gm
from migrate.graph.builder import Flows, add_flow_edges, analyze, build_graph_and_flows, release_graph
from migrate.graph.perf import paused_gc
from migrate.graph.submitted import as_submitted
from migrate.plan.classify import Assessment, assess_jobs
from migrate.plan.coexistence import CoexistenceDecision, check_choice, decide, decision_dict
from migrate.plan.coexistence_phases import (
    PoolShare,
    bridge_order,
    mode_gates,
    mode_rollback,
    phase_steps,
    pool,
    pool_dict,
)
from migrate.plan.coexistence_phases import foundation_steps as coexistence_foundations
from migrate.plan.demand import JobDemand, accounted_demand, helper_demand, job_demand, unaccounted_demand
from migrate.plan.phases import Capacity, CapacityTracker, FoundationKind, Step, foundations, gates, rollback
from migrate.plan.runnable import blocked_units, error_diagnostics
from migrate.plan.units import UnitDecision, decide_units
from migrate.render import plural
from migrate.site.config import CONFIG_NAME, PLACEHOLDER, SiteConfig
from migrate.site.inventory import Inventory, inventory_section, merge_inventory
from migrate.site.inventory_model import SLURM_CONF
from migrate.site.usage import (
    AccountingFile,
    UsageReport,
    job_accounting,
    match_usage,
    usage_section,
    usage_warnings,
)
from migrate.vocab import (
    AUTO_COEXISTENCE,
    WRAPPER_KINDS,
    Action,
    CoexistenceMode,
    Direction,
    Format,
    JobKind,
    Pattern,
    UnitAction,
)

PLAN_SCHEMA = "migrate-plan/1"


class PhaseKind(StrEnum):
    """What a phase is; readers tell a wave from the pilot by it, not by the id. In the order phases come."""

    FOUNDATIONS = "foundations"
    PILOT = "pilot"
    WAVE = "wave"
    END_STATE = "end"


PHASE_KINDS = tuple(PhaseKind)
HYBRID = "hybrid steady state"
DECOMMISSION = "decommission"
NO_JOBS = "no jobs were found in the scanned files: there is nothing to move, so the plan has no phases"


# One line of why the pilot has its units: the unit it is about (None: the pilot as a whole), and the line.
PilotReason = tuple[str | None, str]


@dataclass(frozen=True, slots=True)
class Phase:
    id: str  # P0, P1, W1, W2 ..., END
    name: str
    kind: PhaseKind
    units: tuple[str, ...] = ()
    jobs: tuple[str, ...] = ()  # in the order to move them
    steps: tuple[Step, ...] = ()
    capacity: tuple[Capacity, ...] = ()
    gates: tuple[str, ...] = ()
    rollback: tuple[str, ...] = ()
    exit_criteria: tuple[str, ...] = ()
    stays: tuple[tuple[str, str], ...] = ()  # job -> why it stays on the source
    why: tuple[str, ...] = ()  # why these units (the pilot: the workload each one stands for)
    pool: tuple[PoolShare, ...] = ()  # nodes both schedulers draw from (Slinky, slurm-bridge)


@dataclass(frozen=True, slots=True)
class Plan:
    direction: Direction
    site: str
    source: str
    target: str
    thresholds: tuple[tuple[str, int], ...]
    assessments: tuple[Assessment, ...]
    units: tuple[UnitDecision, ...]
    demands: tuple[JobDemand, ...]
    phases: tuple[Phase, ...]
    shared_filesystems: tuple[str, ...]
    cycles: tuple[tuple[str, ...], ...]
    warnings: tuple[str, ...]
    usage: UsageReport | None = None  # accounting dumps and what they matched, when given
    inventory: tuple[Inventory, ...] = ()  # slurm.conf / ParallelCluster files, when given
    coexistence: CoexistenceDecision | None = None  # None: static partitioning as asked

    def to_dict(self) -> dict[str, Any]:
        return _plan_dict(self)


def build_plan(
    jobs: Iterable[ir.Job],
    direction: str,
    config: SiteConfig | None = None,
    fidelity: Mapping[str, tuple[int, int]] | None = None,
    usage: Sequence[AccountingFile] = (),
    inventory: Sequence[Inventory] = (),
    coexistence: str = AUTO_COEXISTENCE,
    diagnostics: Sequence[Diagnostic] = (),
) -> Plan:
    """The plan for moving ``jobs`` in ``direction``.

    ``fidelity`` maps a job id to (dropped, approximated) items from its
    translation, when the caller has translated the jobs; it raises the risk.
    ``usage`` (read by ``migrate.site.usage.parse_accounting``) replaces the script
    estimate of every job it matches with what the job used; ``inventory``
    (``migrate.site.inventory.parse_inventory``) completes the partitions of
    ``config``. Both add plan warnings for what they could not place.
    ``coexistence`` is a mode of ``CoexistenceMode`` or auto (``coexistence.decide``).
    ``diagnostics`` are the scan's: a unit with a job they find an error in is no pilot unit.
    """
    direction = Direction.of(direction)
    with paused_gc():
        plan, graph, _ = _build_plan(
            jobs, direction, config or SiteConfig(), fidelity, usage, inventory, coexistence, diagnostics
        )
        release_graph(graph)
        return plan


def build_plan_and_graph(
    jobs: Iterable[ir.Job],
    direction: str,
    config: SiteConfig | None = None,
    fidelity: Mapping[str, tuple[int, int]] | None = None,
    usage: Sequence[AccountingFile] = (),
    inventory: Sequence[Inventory] = (),
    coexistence: str = AUTO_COEXISTENCE,
    diagnostics: Sequence[Diagnostic] = (),
) -> tuple[Plan, nx.MultiDiGraph]:
    """``build_plan``, and the graph it was built on (``build_graph``): the report draws it."""
    direction = Direction.of(direction)
    with paused_gc():
        plan, graph, flows = _build_plan(
            jobs, direction, config or SiteConfig(), fidelity, usage, inventory, coexistence, diagnostics
        )
        add_flow_edges(graph, flows)
        return plan, graph


def _carried_clusters(jobs: Sequence[ir.Job]) -> set[str]:
    """RayClusters every user of which starts its own copy on Slurm (it carries the cluster's roles)."""
    names = {job.name: job.id for job in jobs if job.kind == JobKind.RAY_CLUSTER}
    return {
        names[item.value.split(" (", 1)[0]]
        for job in jobs
        for item in job.raw
        if item.key == "rayClusterOf" and item.value.split(" (", 1)[0] in names
    }


def _helpers_run_with_their_jobs(
    demands: dict[str, JobDemand],
    graph: nx.MultiDiGraph,
    by_id: Mapping[str, Assessment],
    config: SiteConfig,
    carried: frozenset[str] | set[str] = frozenset(),
) -> dict[str, JobDemand]:
    out = dict(demands)
    for job_id, assessment in by_id.items():
        if assessment.pattern != Pattern.HELPER or job_id not in demands:
            continue
        node = gm.job_node(job_id)
        users = sorted(
            {
                gm.split_node(u)[1]
                for u, _, kind in graph.in_edges(node, data=gm.Attr.TYPE)
                if kind == gm.USES_HELPER
            }
        )
        out[job_id] = helper_demand(
            demands[job_id],
            [demands[u] for u in users if u in demands],
            config.thresholds.demand_window_hours,
            carried=job_id in carried,
        )
    return out


def _build_plan(
    jobs: Iterable[ir.Job],
    direction: Direction,
    config: SiteConfig,
    fidelity: Mapping[str, tuple[int, int]] | None,
    usage: Sequence[AccountingFile],
    inventory: Sequence[Inventory],
    mode: str,
    diagnostics: Sequence[Diagnostic] = (),
) -> tuple[Plan, nx.MultiDiGraph, Flows]:
    """The plan, and the graph (without its produces_for edges) and flows it was built on."""
    config, input_warnings = merge_inventory(config, inventory)
    if config.unfilled:
        shown = ", ".join(config.unfilled[:4]) + (" ..." if len(config.unfilled) > 4 else "")
        input_warnings.append(
            f"{os.path.basename(config.source or CONFIG_NAME)} still has "
            f"{plural(len(config.unfilled), 'value')} to fill in ({PLACEHOLDER}: {shown}); "
            "a count or duration left so is read as not given"
        )
    job_list = as_submitted(sorted(jobs, key=lambda j: j.id))
    graph, flows = build_graph_and_flows(job_list, config)
    assessed = assess_jobs(job_list, direction, config)
    by_id = {a.job_id: a for a in assessed}
    # Cleanup and backup jobs read everyone's data; they must not weld pipelines together.
    detached = [a.job_id for a in assessed if a.pattern == Pattern.MAINTENANCE]
    analysis = analyze(graph, detached, flows)
    decisions = decide_units(graph, analysis.units, by_id, direction, config, fidelity, flows)
    demands = {job.id: job_demand(job, by_id[job.id].facts, config) for job in job_list if job.id in by_id}
    report = UsageReport(tuple(usage), match_usage(job_list, usage, config)) if usage else None
    if report is not None:
        demands = _weigh_by_usage(demands, report)
        input_warnings += usage_warnings(report)
    carried = _carried_clusters(job_list) if direction.target == Format.SLURM else set()
    demands = _helpers_run_with_their_jobs(demands, graph, by_id, config, carried)
    source, target = direction.source.display_name, direction.target.display_name

    movable = sorted((d for d in decisions if d.moving), key=lambda d: (d.risk.score, d.unit.id))
    patterns = {a.job_id: a.pattern for a in assessed}
    moving = [j for d in movable for j in d.moving]
    bridge_fs = {fs for d in decisions for fs in d.bridge_filesystems}
    touched = {fs for d in movable for fs in d.unit.filesystems} | bridge_fs
    shared = [fs for fs in analysis.shared_filesystems if fs.node in touched or fs.node in bridge_fs]
    blocked = blocked_units(
        {d.unit.id: d.moving for d in decisions},
        {job.id: job for job in job_list},
        {a.job_id: a.facts for a in assessed},
        direction,
        error_diagnostics(job_list, diagnostics),
    )
    layout = _Layout(graph, by_id, demands, direction, config, decisions, source, blocked)
    foundation_steps = foundations(graph, moving, by_id, demands, sorted(touched), shared, direction, config)
    phases, warnings = layout.phases(movable, foundation_steps, None)
    coexistence = None
    if check_choice(mode) != CoexistenceMode.PARTITION and job_list:  # no jobs: no schedulers to share
        caps = [
            (p.id, p.capacity)
            for p in phases
            if p.kind in (PhaseKind.PILOT, PhaseKind.WAVE, PhaseKind.END_STATE)
        ]
        coexistence = decide(
            mode, job_list, assessed, demands, caps, config, _has_slurmctld(direction, inventory)
        )
        if coexistence.mode == CoexistenceMode.SLURM_BRIDGE:
            order = bridge_order([(d.unit.id, [patterns[j] for j in d.moving]) for d in movable])
            rank = {unit: i for i, unit in enumerate(order)}
            movable = sorted(movable, key=lambda d: rank[d.unit.id])
        if coexistence.mode != CoexistenceMode.PARTITION:
            kept = [s for s in foundation_steps if s.kind != FoundationKind.COEXISTENCE]
            gpu_parts = [name for name, part in config.partitions if part.gpus_per_node and part.nodes]
            steps = kept + coexistence_foundations(coexistence, direction, inventory, gpu_parts)
            phases, warnings = layout.phases(movable, steps, coexistence.mode)
        warnings += coexistence.warnings
    warnings[:0] = input_warnings  # what the inputs could not tell comes first
    if analysis.cycles:
        warnings.append(
            f"{plural(len(analysis.cycles), 'dependency cycle')}: their units are blocked until fixed"
        )
    plan = Plan(
        direction=direction,
        site=config.site,
        source=source,
        target=target,
        thresholds=tuple(sorted(asdict(config.thresholds).items())),
        assessments=tuple(assessed),
        units=tuple(decisions),
        demands=tuple(demands[j] for j in sorted(demands)),
        phases=tuple(phases),
        shared_filesystems=tuple(fs.node for fs in shared),
        cycles=analysis.cycles,
        warnings=tuple(warnings),
        usage=report,
        inventory=tuple(inventory),
        coexistence=coexistence,
    )
    return plan, graph, flows


def _has_slurmctld(direction: Direction, inventory: Sequence[Inventory]) -> bool:
    """A Slurm the site already runs: the source of a move to Kubernetes, or a slurm.conf given."""
    return direction == Direction.TO_KUBERNETES or any(inv.format == SLURM_CONF for inv in inventory)


@dataclass
class _Layout:
    """Lays out the phases after Phase 0 from the movable units, for a coexistence mode."""

    graph: nx.MultiDiGraph
    by_id: Mapping[str, Assessment]
    demands: Mapping[str, JobDemand]
    direction: Direction
    config: SiteConfig
    decisions: list[UnitDecision]
    source: str
    blocked: Mapping[str, str]  # unit id -> why it cannot be a pilot unit (runnable.blocked_units)

    def phases(
        self,
        movable: list[UnitDecision],
        foundation_steps: list[Step],
        mode: CoexistenceMode | None,
    ) -> tuple[list[Phase], list[str]]:
        by_id, demands, direction, config = self.by_id, self.demands, self.direction, self.config
        if not by_id:  # nothing was found: no phase to run and no end state to reach
            return [], [NO_JOBS]
        hours = {job: need.node_hours for job, need in demands.items()}
        patterns = {a.job_id: a.pattern for a in by_id.values()}
        pilot, waves, warnings, chosen = _schedule(movable, config, patterns, hours, self.blocked)
        if mode == CoexistenceMode.SLINKY:
            pilot, waves, chosen = _one_nodeset_pilot(pilot, waves, chosen, demands, config)
        phases = [Phase("P0", PhaseKind.FOUNDATIONS, PhaseKind.FOUNDATIONS, steps=tuple(foundation_steps))]
        previous: dict[str, int] = {}
        in_scope = [j for j in demands if by_id[j].recommendation.action != Action.ALREADY_THERE]
        tracker = CapacityTracker(in_scope, demands, config)
        groups = [pilot, *waves] if pilot else [[], *waves]  # no unit can run: waves without a pilot
        for index, group in enumerate(groups):
            if not group:
                continue
            phase_id, name, kind = (
                ("P1", PhaseKind.PILOT, PhaseKind.PILOT)
                if index == 0
                else (f"W{index}", f"{PhaseKind.WAVE} {index}", PhaseKind.WAVE)
            )
            jobs_now = [j for d in group for j in d.moving]
            tracker.move(jobs_now)
            caps, notes = tracker.snapshot()
            warnings += [f"{phase_id}: {n}" for n in notes]
            bridges = [b for d in group for b in d.bridges]
            phase_gates = gates(jobs_now, self.graph, bridges, direction, config)
            back = rollback(caps, previous, direction)
            steps: list[Step] = []
            shares: tuple[PoolShare, ...] = ()
            if mode is not None:
                steps = phase_steps(mode, caps, previous)
                phase_gates += mode_gates(mode)
                back = back[:1] + mode_rollback(mode, caps, previous)
                shares = pool(mode, caps, direction)
                if mode == CoexistenceMode.SLURM_BRIDGE:
                    caps = []  # no node changes hands: the pool is the picture
            phases.append(
                Phase(
                    phase_id,
                    name,
                    kind,
                    units=tuple(d.unit.id for d in group),
                    jobs=tuple(jobs_now),
                    steps=tuple(steps),
                    capacity=tuple(caps),
                    gates=tuple(phase_gates),
                    rollback=tuple(back),
                    pool=shares,
                    why=tuple(text for _, text in chosen) if index == 0 else (),
                )
            )
            previous = {c.partition: c.target_nodes for c in caps}
        end = _end(self.decisions, tracker, config, self.source, warnings)
        if mode is not None:
            shares = pool(mode, end.capacity, direction)
            kept = () if mode == CoexistenceMode.SLURM_BRIDGE else end.capacity
            end = replace(end, capacity=kept, pool=shares)
        phases.append(end)
        return phases, warnings


def _one_nodeset_pilot(
    pilot: list[UnitDecision],
    waves: list[list[UnitDecision]],
    why: list[PilotReason],
    demands: Mapping[str, JobDemand],
    config: SiteConfig,
) -> tuple[list[UnitDecision], list[list[UnitDecision]], list[PilotReason]]:
    """Slinky pilots one NodeSet: the pilot keeps the units of one partition, the rest open wave 1.

    The partition is the first pilot unit's (the pilot is ordered lowest risk first); a unit whose
    jobs run in several partitions cannot be piloted on one NodeSet.
    """

    def partitions(d: UnitDecision) -> set[str]:
        return {demands[j].partition for j in d.moving if j in demands}

    if not pilot:
        return pilot, waves, why
    first = partitions(pilot[0])
    if len(first) != 1:
        return pilot, waves, why  # nothing narrower to pilot: say so through the unit's own lines
    (partition,) = first
    kept = [d for d in pilot if partitions(d) == first]
    moved = [d for d in pilot if partitions(d) != first]
    if not moved:
        return pilot, waves, why
    gone = {d.unit.id for d in moved}
    notes = [(unit, text) for unit, text in why if unit not in gone]
    one = len(moved) == 1
    notes.append(
        (
            None,
            f"Slinky pilots one NodeSet, for partition {partition}: {', '.join(d.unit.id for d in moved)} "
            f"{'runs' if one else 'run'} in other partitions too, so {'it moves' if one else 'they move'} "
            "in wave 1",
        )
    )
    size = max(1, config.thresholds.wave_max_units)
    rest = moved + [d for wave in waves for d in wave]
    return kept, [rest[i : i + size] for i in range(0, len(rest), size)], notes


def _weigh_by_usage(demands: Mapping[str, JobDemand], report: UsageReport) -> dict[str, JobDemand]:
    """Accounted demand for the jobs the dumps matched; the script estimate, flagged, for the others."""
    out: dict[str, JobDemand] = {}
    for job_id, need in demands.items():
        usage = report.match.of(job_id)
        if usage is not None:
            out[job_id] = accounted_demand(need, usage)
        elif report.match.credited_to(job_id) or report.match.did_not_run(job_id):
            out[job_id] = unaccounted_demand(need, report.match.credited_to(job_id))
        else:
            out[job_id] = need  # no dump covers it (a wrapper, a service, the other scheduler)
    return out


def _upkeep_only(decision: UnitDecision, patterns: Mapping[str, str]) -> bool:
    return all(patterns[j] == Pattern.MAINTENANCE for j in decision.moving)


def _schedule(
    movable: list[UnitDecision],
    config: SiteConfig,
    patterns: Mapping[str, str],
    hours: Mapping[str, float],
    blocked: Mapping[str, str],
) -> tuple[list[UnitDecision], list[list[UnitDecision]], list[str], list[PilotReason]]:
    """The pilot, the waves after it (lowest risk first), warnings, and why the pilot has its units.

    ``blocked`` units (a moving job that cannot run as it is) are never pilot units: they move in the waves.
    """
    limits = config.thresholds
    if not movable:
        return [], [], ["nothing moves: every job stays where it is or is already on the target"], []
    warnings: list[str] = []
    runnable = [d for d in movable if d.unit.id not in blocked]
    # The pilot proves real workloads; upkeep jobs are duplicated on both sides anyway.
    candidates = [
        d for d in runnable if d.risk.score <= limits.pilot_max_risk and not _upkeep_only(d, patterns)
    ]
    workload = [d for d in movable if not _upkeep_only(d, patterns)]
    pilot, why = _representative(candidates, workload, patterns, hours, limits.pilot_max_units)
    fallback = [d for d in workload if d.unit.id not in blocked] or runnable
    if not pilot and fallback:
        pilot = fallback[:1]
        warnings.append(
            f"no workload unit scores at or below pilot_max_risk ({limits.pilot_max_risk}); "
            f"the pilot takes the lowest-risk unit ({pilot[0].unit.id}, risk {pilot[0].risk.score})"
        )
        why = [(pilot[0].unit.id, f"{pilot[0].unit.id}: the lowest-risk unit of the workload that moves")]
    passed = [d.unit.id for d in movable if d.unit.id in blocked and not _upkeep_only(d, patterns)]
    if pilot:
        why += [(unit, blocked[unit]) for unit in passed]
    else:
        warnings.append(
            "no unit that moves can run as it is, so the plan has no pilot: fix what the lines below "
            "name, then plan again"
        )
        warnings += [blocked[unit] for unit in passed]
    rest = [d for d in movable if d not in pilot]
    size = max(1, limits.wave_max_units)
    waves = [rest[i : i + size] for i in range(0, len(rest), size)]
    return pilot, waves, warnings, why


def _representative(
    candidates: list[UnitDecision],
    workload: list[UnitDecision],
    patterns: Mapping[str, str],
    hours: Mapping[str, float],
    limit: int,
) -> tuple[list[UnitDecision], list[PilotReason]]:
    """Units that stand for the workload that moves: the lowest-risk unit of each of its largest patterns.

    Patterns are weighed by the node-hours of all the moving work (so the pilot proves what most of
    the move is made of); a unit stands for the pattern holding most of its own node-hours. When the
    workload has fewer patterns than the pilot has room, the lowest-risk units fill it up.
    """
    weight: dict[str, float] = defaultdict(float)
    for d in workload:
        for job in d.moving:
            if patterns[job] != Pattern.MAINTENANCE:
                weight[patterns[job]] += hours.get(job, 0.0)

    def main_pattern(d: UnitDecision) -> str:
        own: dict[str, float] = defaultdict(float)
        for job in d.moving:
            if patterns[job] != Pattern.MAINTENANCE:
                own[patterns[job]] += hours.get(job, 0.0) + 1e-9  # a job with no demand still counts
        return max(sorted(own), key=lambda p: own[p])

    chosen: list[UnitDecision] = []
    why: list[str] = []
    missed: list[str] = []
    total = sum(weight.values()) or 1.0
    for pattern in sorted(weight, key=lambda p: (-weight[p], p)):
        if len(chosen) >= limit:
            break
        percent = 100 * weight[pattern] / total
        share = f"{round(percent)}%" if percent >= 0.5 or not percent else "under 1%"
        pick = next((d for d in candidates if d not in chosen and main_pattern(d) == pattern), None)
        if pick is None:
            if percent:
                missed.append(f"{pattern} ({share} of the moving node-hours)")
            continue
        chosen.append(pick)
        why.append(
            f"{pick.unit.id}: {pattern}, {share} of the moving node-hours; "
            f"its lowest-risk unit (risk {pick.risk.score})"
        )
    for d in candidates:  # fewer patterns than room: the lowest-risk units fill the pilot
        if len(chosen) >= limit:
            break
        if d not in chosen:
            chosen.append(d)
            why.append(f"{d.unit.id}: {main_pattern(d)} again, a low-risk unit (risk {d.risk.score})")
    order = {id(d): i for i, d in enumerate(candidates)}
    ranked = sorted(zip(chosen, why, strict=True), key=lambda pair: order[id(pair[0])])
    notes: list[PilotReason] = [(d.unit.id, w) for d, w in ranked]
    if missed and chosen:
        notes.append(
            (
                None,
                f"no unit of {', '.join(missed)} scores at or below pilot_max_risk: they move in the waves",
            )
        )
    return [d for d, _ in ranked], notes


def _end(
    decisions: list[UnitDecision],
    tracker: CapacityTracker,
    config: SiteConfig,
    source: str,
    warnings: list[str],
) -> Phase:
    caps, notes = tracker.snapshot(final=True)
    warnings += [f"END: {n}" for n in notes]
    stays: list[tuple[str, str]] = []
    for decision in decisions:
        held = dict(decision.held)
        for job in decision.staying:
            stays.append((job, held.get(job, "stays by recommendation")))
    blocked = [d.unit.id for d in decisions if d.action == UnitAction.BLOCKED]
    limits = config.thresholds
    if stays or blocked:
        criteria = [
            "every wave passed its gates",
            f"{source} keeps the nodes its remaining jobs need (this phase's capacity table)",
            "shared file systems stay mounted on both schedulers for as long as both run",
        ]
        if blocked:
            criteria.append("blocked units (" + ", ".join(blocked) + ") have their dependency cycles fixed")
        return Phase(
            "END",
            HYBRID,
            PhaseKind.END_STATE,
            capacity=tuple(caps),
            exit_criteria=tuple(criteria),
            stays=tuple(stays),
        )
    criteria = [
        "every wave passed its gates",
        f"no job ran on {source} for a whole demand window ({limits.demand_window_hours} h)",
        "monitoring on the target covers every hook the scripts used",
        f"shared storage is unmounted from {source} last, after its final job",
    ]
    return Phase(
        "END", DECOMMISSION, PhaseKind.END_STATE, capacity=tuple(caps), exit_criteria=tuple(criteria)
    )


# ---------------------------------------------------------------------------
# plan.json


def plan_json(plan: Plan) -> str:
    """The stable JSON document; the same plan always gives the same bytes."""
    with paused_gc():  # the document is millions of small objects that all live until it is written
        return json_indented.dumps(_plan_dict(plan, streamed=True), end="\n")


def _plan_dict(plan: Plan, streamed: bool = False) -> dict[str, Any]:
    """The plan.json document; ``streamed`` leaves jobs and units as iterators, each entry made
    only when it is written, so that a site's worth of them is never in memory at once."""
    unit_of = {job: d.unit.id for d in plan.units for job in d.unit.jobs}
    phase_of = {job: p.id for p in plan.phases for job in p.jobs}
    demand_of = {d.job_id: d for d in plan.demands}
    source = plan.direction.source

    def job_entry(a: Assessment) -> dict[str, Any]:
        job = _job_dict(a, unit_of.get(a.job_id), phase_of.get(a.job_id), demand_of.get(a.job_id), source)
        # Present only when given, so that a plan from the scripts alone keeps the same bytes.
        if plan.usage is not None and "demand" in job:
            job["demand"]["accounting"] = job_accounting(plan.usage, job["id"])
        return job

    jobs = map(job_entry, plan.assessments)
    units = map(_unit_dict, plan.units)
    out: dict[str, Any] = {
        "schema": PLAN_SCHEMA,
        "direction": plan.direction,
        "site": plan.site,
        "source": plan.source,
        "target": plan.target,
        "thresholds": dict(plan.thresholds),
        "summary": _summary(plan),
        "jobs": jobs if streamed else list(jobs),
        "units": units if streamed else list(units),
        "phases": [_phase_dict(p) for p in plan.phases],
        "shared_filesystems": list(plan.shared_filesystems),
        "cycles": [list(c) for c in plan.cycles],
        "warnings": list(plan.warnings),
    }
    if plan.usage is not None:
        out["usage"] = usage_section(plan.usage)
    if plan.inventory:
        out["inventory"] = inventory_section(plan.inventory)
    if plan.coexistence is not None:  # absent when static partitioning was asked: today's bytes
        out["coexistence"] = decision_dict(plan.coexistence)
    return out


def _summary(plan: Plan) -> dict[str, Any]:
    actions: dict[str, int] = {}
    patterns: dict[str, int] = {}
    for a in plan.assessments:
        actions[a.recommendation.action] = actions.get(a.recommendation.action, 0) + 1
        patterns[a.pattern] = patterns.get(a.pattern, 0) + 1
    return {
        "jobs": len(plan.assessments),
        "units": len(plan.units),
        "by_action": dict(sorted(actions.items())),
        "by_pattern": dict(sorted(patterns.items())),
        "phases": [p.id for p in plan.phases],
        "end_state": plan.phases[-1].name if plan.phases else None,
        "demand": _demand_summary(plan),
    }


def _demand_summary(plan: Plan) -> dict[str, Any]:
    """The basis every job's figures share: one demand window, services on for all of it, batch jobs
    their runs in it; and how much of the node-hours rests on an assumption."""
    window = dict(plan.thresholds).get("demand_window_hours", 0)
    always = sum(d.node_hours for d in plan.demands if d.always_on)
    batch = sum(d.node_hours for d in plan.demands if not d.always_on)
    assumed = sum(d.node_hours for d in plan.demands if d.assumed)
    return {
        "window_hours": window,
        "node_hours": round(always + batch, 2),
        "always_on_node_hours": round(always, 2),
        "batch_node_hours": round(batch, 2),
        "assumed_node_hours": round(assumed, 2),
        "runs_assumed": sum(1 for d in plan.demands if "runs" in d.assumed),
    }


def _job_dict(
    a: Assessment, unit: str | None, phase: str | None, demand: JobDemand | None, source: Format
) -> dict[str, Any]:
    """``source``: the scheduler the plan moves from; its jobs get their Slurm allocation."""
    rec = a.recommendation
    out: dict[str, Any] = {
        "id": a.job_id,
        "pattern": a.pattern,
        "reasons": list(a.reasons),
        "action": rec.action,
        "reason": rec.reason,
        "rule": {"id": rec.rule.id, "source": rec.rule.source, "says": rec.rule.says},
        "thresholds": dict(rec.thresholds),
        "changes": [c.text for c in rec.changes],
        "unit": unit,
        "phase": phase,
    }
    if demand is not None:
        out["demand"] = {
            "partition": demand.partition,
            "nodes": demand.nodes,
            "node_hours": demand.node_hours,
            "gpu_hours": demand.gpu_hours,
            "basis": demand.basis,
            "runs": demand.runs,
            "runs_basis": demand.runs_basis,
        }
        if demand.node_load != demand.nodes:  # a share of a node, or array tasks packed together
            out["demand"]["node_load"] = demand.node_load
        if demand.assumed:  # allocation values no option or site value told
            out["demand"]["assumed"] = list(demand.assumed)
    if a.facts.allocation is not None and a.facts.format == source and a.facts.kind not in WRAPPER_KINDS:
        out["allocation"] = a.facts.allocation
    return out


def _unit_dict(d: UnitDecision) -> dict[str, Any]:
    return {
        "id": d.unit.id,
        "action": d.action,
        "jobs": list(d.unit.jobs),
        "order": list(d.unit.order),
        "formats": list(d.unit.formats),
        "moving": list(d.moving),
        "staying": list(d.staying),
        "already_there": list(d.already),
        "held": [{"job": j, "reason": r} for j, r in d.held],
        "bridges": list(d.bridges),
        "filesystems": list(d.unit.filesystems),
        "externals": list(d.unit.externals),
        "risk": {
            "score": d.risk.score,
            "reasons": list(d.risk.reasons),
            "factors": [{"points": f.points, "reason": f.reason} for f in d.risk.factors],
        },
    }


def _fields(obj: Step | Capacity) -> dict[str, Any]:
    """A step's or a capacity's fields as they are (their values are strings and numbers):
    ``asdict`` would deep-copy each, and a phase lists tens of thousands of job ids."""
    return {f.name: getattr(obj, f.name) for f in fields(obj)}


def _phase_dict(p: Phase) -> dict[str, Any]:
    return {
        "id": p.id,
        "name": p.name,
        "kind": p.kind,
        "units": list(p.units),
        "jobs": list(p.jobs),
        "steps": [_fields(s) | {"evidence": list(s.evidence)} for s in p.steps],
        "capacity": [_fields(c) for c in p.capacity],
        "gates": list(p.gates),
        "rollback": list(p.rollback),
        "exit_criteria": list(p.exit_criteria),
        "stays": [{"job": j, "reason": r} for j, r in p.stays],
        **({"why": list(p.why)} if p.why else {}),
    } | ({"pool": [pool_dict(s) for s in p.pool]} if p.pool else {})


__all__ = [
    "DECOMMISSION",
    "HYBRID",
    "NO_JOBS",
    "PHASE_KINDS",
    "PLAN_SCHEMA",
    "Phase",
    "PhaseKind",
    "Plan",
    "build_plan",
    "build_plan_and_graph",
    "plan_json",
]
