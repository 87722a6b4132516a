"""How the two schedulers share the nodes while both run: static partitioning, Slinky, or slurm-bridge.

Nanobase AI's article answers "Can the same GPUs run both Slurm and Kubernetes
jobs?" with two ways: static node partitioning (simple, but capacity is fixed
per scheduler) or a bridging layer such as Slinky (one pool, a more complex
control plane). The choice here is made from what the site shows:

1. whether the static split would strand GPUs: in some phase one side's nodes
   sit idle while the other side has more demand than nodes (demand per phase
   against the inventory, the capacity tables of the partition plan);
2. the workload mix against the decision tables: whether jobs stay on both
   schedulers at the end (a hybrid end state keeps the sharing for good);
3. which pool-sharing mode fits: slurm-bridge gives every pod a whole node
   (no MIG or time-sliced nodes, no pods smaller than a node) and needs recent
   Slurm and Kubernetes releases; Slinky keeps ``sbatch`` for the teams that
   submit with it.

The simpler mode wins whenever the figures do not call for a shared pool.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from migrate import ir
from migrate.plan.classify import Assessment
from migrate.plan.demand import JobDemand
from migrate.plan.phases import Capacity
from migrate.plan.rules import SLURM_KUBERNETES_ARTICLE
from migrate.render import plural
from migrate.site.config import SiteConfig
from migrate.vocab import (
    AUTO_COEXISTENCE,
    COEXISTENCE_CHOICES,
    Action,
    CoexistenceMode,
    CoexistenceReason,
    Format,
)

# The article's answer the modes come from, cited by title and question.
SOURCE = f"{SLURM_KUBERNETES_ARTICLE}, FAQ “Can the same GPUs run both Slurm and Kubernetes jobs?”"

# A static split that leaves more than this share of the site's GPUs idle in some phase, while the
# other side queues, calls for a shared pool.
STRANDED_GPU_PCT = 10

# The releases slurm-bridge v1.2 states: its README's compatibility table (Kubernetes 1.35; its chart
# accepts 1.34) and its chart's minimum Slurm; slurm-operator's chart for Slurm beside its own slurmctld.
BRIDGE_MINIMUM = {"slurm": "25.11", "kubernetes": "1.35"}
OPERATOR_MINIMUM = {"slurm": "25.11", "kubernetes": "1.29"}


@dataclass(frozen=True, slots=True)
class Finding:
    reason: CoexistenceReason
    detail: str  # the figures behind it, in one sentence


@dataclass(frozen=True, slots=True)
class Rejection:
    mode: CoexistenceMode
    findings: tuple[Finding, ...]


@dataclass(frozen=True, slots=True)
class PhaseIdle:
    """GPUs idle at the end of one phase: under the static split, and if both sides drew from one pool."""

    phase: str
    split_idle_gpus: int
    pool_idle_gpus: int

    @property
    def stranded_gpus(self) -> int:
        return self.split_idle_gpus - self.pool_idle_gpus


@dataclass(frozen=True, slots=True)
class CoexistenceDecision:
    requested: str  # a mode, or auto
    mode: CoexistenceMode
    findings: tuple[Finding, ...]
    rejected: tuple[Rejection, ...]
    idle: tuple[PhaseIdle, ...]
    total_gpus: int
    teams: tuple[tuple[Format, int], ...]  # distinct accounts (Slurm) and namespaces (Kubernetes)
    versions: tuple[tuple[str, str], ...]  # as migrate.yaml states them
    hybrid_controller: bool  # Slinky against the site's own slurmctld
    warnings: tuple[str, ...] = ()


def check_choice(requested: str) -> str:
    if requested not in COEXISTENCE_CHOICES:
        raise ValueError(f"coexistence must be one of {', '.join(COEXISTENCE_CHOICES)}, not {requested!r}")
    return requested


def idle_per_phase(
    phases: Iterable[tuple[str, Sequence[Capacity]]], window_hours: int
) -> tuple[list[PhaseIdle], int]:
    """Idle GPUs per phase, split against pooled, from each phase's capacity table; and the GPUs there are.

    A side keeps busy at most the nodes it has: its demand over the window in
    node-hours, capped at its node count. One pool is capped only at the total.
    """
    out: list[PhaseIdle] = []
    total_gpus = 0
    for phase_id, caps in phases:
        split = pooled = 0.0
        total_gpus = 0
        for cap in caps:
            if not cap.gpus_per_node or not cap.total_nodes:
                continue
            total_gpus += cap.total_nodes * cap.gpus_per_node
            moved, left = cap.moved_node_hours / window_hours, cap.remaining_node_hours / window_hours
            busy_split = min(cap.target_nodes, moved) + min(cap.source_nodes, left)
            busy_pool = min(cap.total_nodes, moved + left)
            split += (cap.total_nodes - busy_split) * cap.gpus_per_node
            pooled += (cap.total_nodes - busy_pool) * cap.gpus_per_node
        out.append(PhaseIdle(phase_id, round(split), round(pooled)))
    return out, total_gpus


def teams_per_side(jobs: Iterable[ir.Job]) -> dict[Format, int]:
    """Who submits each way: Slurm accounts and Kubernetes namespaces, each a team."""
    names: dict[Format, set[str]] = {Format.SLURM: set(), Format.KUBERNETES: set()}
    for job in jobs:
        if job.source.format == Format.SLURM and job.placement.account:
            names[Format.SLURM].add(job.placement.account)
        elif job.source.format == Format.KUBERNETES and job.placement.namespace:
            names[Format.KUBERNETES].add(job.placement.namespace)
    return {side: len(found) for side, found in names.items()}


def _release(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split("."))


def _version_findings(config: SiteConfig, minimum: Mapping[str, str], what: str) -> list[Finding]:
    stated = {"slurm": config.versions.slurm, "kubernetes": config.versions.kubernetes}
    missing = [name for name, value in stated.items() if value is None]
    if missing:
        return [
            Finding(
                CoexistenceReason.VERSIONS_NOT_STATED,
                f"migrate.yaml states no {' or '.join(missing)} release (versions:); {what} needs "
                + " and ".join(f"{name} {minimum[name]} or newer" for name in missing),
            )
        ]
    old = [
        f"{name} {value} (needs {minimum[name]})"
        for name, value in stated.items()
        if value is not None and _release(value) < _release(minimum[name])
    ]
    if old:
        return [Finding(CoexistenceReason.VERSIONS_TOO_OLD, f"{what} needs newer releases: {', '.join(old)}")]
    return []


def _bridge_blockers(
    config: SiteConfig, assessments: Sequence[Assessment], demands: Mapping[str, JobDemand]
) -> list[Finding]:
    out: list[Finding] = []
    shared = [f"{name} ({part.gpu_sharing})" for name, part in config.partitions if part.gpu_sharing]
    if shared:
        out.append(
            Finding(
                CoexistenceReason.SHARED_GPU_NODES,
                "slurm-bridge allocates a whole node to each pod, so the GPU slices of "
                + ", ".join(shared)
                + " cannot be handed out",
            )
        )
    small = sorted(
        a.job_id
        for a in assessments
        if a.facts.format == Format.KUBERNETES
        and a.job_id in demands
        and demands[a.job_id].gpus_per_node
        and demands[a.job_id].node_load < 1
    )
    if small:
        out.append(
            Finding(
                CoexistenceReason.SUB_NODE_PODS,
                f"{plural(len(small), 'Kubernetes job')} {'needs' if len(small) == 1 else 'need'} "
                f"less than a GPU node (first: {small[0]}); "
                "slurm-bridge would give each pod a whole node",
            )
        )
    return out + _version_findings(config, BRIDGE_MINIMUM, "slurm-bridge")


def decide(
    requested: str,
    jobs: Sequence[ir.Job],
    assessments: Sequence[Assessment],
    demands: Mapping[str, JobDemand],
    phases: Sequence[tuple[str, Sequence[Capacity]]],
    config: SiteConfig,
    site_has_slurmctld: bool,
) -> CoexistenceDecision:
    """The mode for this site: ``requested`` unless it is auto; every finding behind it and the others."""
    idle, total_gpus = idle_per_phase(phases, config.thresholds.demand_window_hours)
    teams = teams_per_side(jobs)
    actions = {a.recommendation.action for a in assessments}
    mixed = Action.STAY in actions and bool(actions & {Action.MOVE, Action.MOVE_WITH_CHANGES})
    worst = max(idle, key=lambda p: (p.stranded_gpus, p.phase), default=None)
    stranded_pct = round(100 * worst.stranded_gpus / total_gpus) if worst and total_gpus else 0

    if not total_gpus:
        split = Finding(
            CoexistenceReason.NO_GPU_INVENTORY,
            "no partition in migrate.yaml or --inventory has nodes with GPUs: there is no pool to share",
        )
    elif worst is not None and stranded_pct > STRANDED_GPU_PCT:
        split = Finding(
            CoexistenceReason.SPLIT_STRANDS_GPUS,
            f"in {worst.phase} the static split leaves {worst.split_idle_gpus} of {total_gpus} GPUs idle, "
            f"{worst.stranded_gpus} ({stranded_pct}%) of them on one side while the other side queues "
            f"(above {STRANDED_GPU_PCT}%)",
        )
    else:
        shown = f"at most {worst.stranded_gpus} of {total_gpus} GPUs ({stranded_pct}%)" if worst else "none"
        split = Finding(
            CoexistenceReason.SPLIT_KEEPS_GPUS_BUSY,
            f"the static split strands {shown} in any phase (limit {STRANDED_GPU_PCT}%)",
        )
    mix = (
        Finding(
            CoexistenceReason.MIXED_WORKLOAD,
            "the decision tables keep some jobs on each scheduler: both run for good, so the sharing stays",
        )
        if mixed
        else Finding(
            CoexistenceReason.ONE_SCHEDULER_AT_END,
            "the decision tables move every job: one scheduler is left at the end",
        )
    )
    slurm_teams, kube_teams = teams[Format.SLURM], teams[Format.KUBERNETES]
    who = (
        Finding(
            CoexistenceReason.SLURM_TEAMS_LEAD,
            f"{plural(slurm_teams, 'team')} {'submits' if slurm_teams == 1 else 'submit'} with sbatch and "
            f"{kube_teams} with Kubernetes manifests: "
            "with Slinky the sbatch users change nothing",
        )
        if slurm_teams >= kube_teams
        else Finding(
            CoexistenceReason.KUBERNETES_TEAMS_LEAD,
            f"{plural(kube_teams, 'team')} {'submits' if kube_teams == 1 else 'submit'} Kubernetes manifests "
            f"and {slurm_teams} {'uses' if slurm_teams == 1 else 'use'} sbatch: "
            "with slurm-bridge the Kubernetes users keep their manifests and Slurm places them",
        )
    )
    bridge_blocked = _bridge_blockers(config, assessments, demands)
    operator_blocked = _version_findings(
        config, OPERATOR_MINIMUM, "slurm-operator against the site's slurmctld"
    )
    operator_blocked = [f for f in operator_blocked if f.reason == CoexistenceReason.VERSIONS_TOO_OLD]
    if not site_has_slurmctld:
        operator_blocked = []  # Slinky brings its own slurmctld, of a release it chooses

    simpler = Finding(
        CoexistenceReason.SIMPLER_CONTROL_PLANE,
        "static partitioning runs no extra control plane; "
        "a shared pool is worth it only when the split strands GPUs",
    )
    wants_pool = split.reason == CoexistenceReason.SPLIT_STRANDS_GPUS
    team_mode = (
        CoexistenceMode.SLINKY
        if who.reason == CoexistenceReason.SLURM_TEAMS_LEAD
        else CoexistenceMode.SLURM_BRIDGE
    )
    blockers = {CoexistenceMode.SLURM_BRIDGE: bridge_blocked, CoexistenceMode.SLINKY: operator_blocked}

    def supporting(mode: CoexistenceMode) -> list[Finding]:
        """The findings that speak for ``mode``; the others speak against it."""
        if mode == CoexistenceMode.PARTITION:
            return (
                [split, mix]
                if not wants_pool
                else ([mix] if mix.reason != CoexistenceReason.MIXED_WORKLOAD else [])
            )
        out = [split] if wants_pool else []
        out += [mix] if mix.reason == CoexistenceReason.MIXED_WORKLOAD else []
        return out + ([who] if team_mode == mode else [])

    def against(mode: CoexistenceMode) -> list[Finding]:
        if mode == CoexistenceMode.PARTITION:
            return [split] if wants_pool else []
        out = [] if wants_pool else [simpler]
        out += [] if team_mode == mode else [who]
        return out + blockers[mode]

    if requested != AUTO_COEXISTENCE:
        mode = CoexistenceMode(requested)
    elif not wants_pool or (bridge_blocked and operator_blocked):
        mode = CoexistenceMode.PARTITION
    elif bridge_blocked or (team_mode == CoexistenceMode.SLINKY and not operator_blocked):
        mode = CoexistenceMode.SLINKY
    else:
        mode = CoexistenceMode.SLURM_BRIDGE

    chosen = supporting(mode)
    warnings: list[str] = []
    if requested != AUTO_COEXISTENCE:
        chosen.insert(0, Finding(CoexistenceReason.REQUESTED, f"--coexistence {requested}"))
        warnings = [f"coexistence {mode}: asked for, though {f.detail}" for f in against(mode)]
    elif mode != CoexistenceMode.PARTITION and blockers[mode]:
        warnings = [f"coexistence {mode}: {f.detail}" for f in blockers[mode]]
    asked = Finding(CoexistenceReason.REQUESTED, f"--coexistence {requested}")
    rejected = [
        Rejection(
            other, tuple(against(other) or ([asked] if requested != AUTO_COEXISTENCE else supporting(mode)))
        )
        for other in CoexistenceMode
        if other != mode
    ]
    return CoexistenceDecision(
        requested=requested,
        mode=mode,
        findings=tuple(chosen),
        rejected=tuple(rejected),
        idle=tuple(idle),
        total_gpus=total_gpus,
        teams=tuple(sorted(teams.items())),
        versions=tuple(
            (name, value)
            for name, value in (("kubernetes", config.versions.kubernetes), ("slurm", config.versions.slurm))
            if value is not None
        ),
        hybrid_controller=site_has_slurmctld and mode == CoexistenceMode.SLINKY,
        warnings=tuple(warnings),
    )


def decision_dict(decision: CoexistenceDecision) -> dict[str, object]:
    """The ``coexistence`` part of plan.json."""

    def finding(f: Finding) -> dict[str, str]:
        return {"reason": f.reason, "detail": f.detail}

    return {
        "requested": decision.requested,
        "mode": decision.mode,
        "source": SOURCE,
        "reasons": [finding(f) for f in decision.findings],
        "rejected": [
            {"mode": r.mode, "reasons": [finding(f) for f in r.findings]} for r in decision.rejected
        ],
        "idle_gpus": [
            {
                "phase": p.phase,
                "split": p.split_idle_gpus,
                "pooled": p.pool_idle_gpus,
                "stranded": p.stranded_gpus,
            }
            for p in decision.idle
        ],
        "total_gpus": decision.total_gpus,
        "teams": {side.value: count for side, count in decision.teams},
        "versions": dict(decision.versions),
        "hybrid_controller": decision.hybrid_controller,
    }


__all__ = [
    "BRIDGE_MINIMUM",
    "OPERATOR_MINIMUM",
    "SOURCE",
    "STRANDED_GPU_PCT",
    "CoexistenceDecision",
    "Finding",
    "PhaseIdle",
    "Rejection",
    "check_choice",
    "decide",
    "decision_dict",
    "idle_per_phase",
    "teams_per_side",
]
