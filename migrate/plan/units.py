"""Per migration unit: what moves, what stays, what bridges the two, and how risky the move is.

A unit is one weakly connected group of jobs. Inside it, jobs tied by a
dependency (``depends_on``, ``submits``) must be on the same scheduler: a
Slurm ``afterok`` cannot wait for a Kubernetes Job. So when one job of such a
group stays (a large pretraining run), the movable jobs chained to it are held
back with it. Jobs tied only by data can be split across schedulers, bridged
by shared storage that both sides mount: the seeds' hybrid pattern (training
on Slurm writes a checkpoint a Kubernetes server reads).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import networkx as nx

from migrate.graph import model as gm
from migrate.graph.analysis import MigrationUnit
from migrate.graph.flow import Flows
from migrate.graph.order import Groups
from migrate.plan.changes import ChangeKind
from migrate.plan.classify import Assessment
from migrate.render import plural
from migrate.site.config import SiteConfig
from migrate.vocab import MOVES, Action, Direction, FilesystemOrigin, UnitAction


@dataclass(frozen=True, slots=True)
class RiskFactor:
    points: int  # what it adds to the score
    reason: str


@dataclass(frozen=True, slots=True)
class Risk:
    score: int  # 0 (trivial) .. 100
    factors: tuple[RiskFactor, ...]
    verdict: str = ""  # said instead of the factors when there are none: nothing moves, a cycle

    @property
    def reasons(self) -> tuple[str, ...]:
        """The factors as plan.json words them ("+5: 2 GPUs move"), or the verdict."""
        return tuple(f"+{f.points}: {f.reason}" for f in self.factors) or (self.verdict,)


@dataclass(frozen=True, slots=True)
class UnitDecision:
    unit: MigrationUnit
    action: UnitAction
    moving: tuple[str, ...]  # in the unit's topological order
    staying: tuple[str, ...]  # stay on the source scheduler, held jobs included
    already: tuple[str, ...]  # already on the target scheduler
    held: tuple[tuple[str, str], ...]  # movable job -> why it stays anyway
    bridges: tuple[str, ...]  # data links that end up crossing the scheduler boundary
    bridge_filesystems: tuple[str, ...]  # file-system node ids those links go through
    risk: Risk


def decide_units(
    graph: nx.MultiDiGraph,
    units: tuple[MigrationUnit, ...],
    assessments: Mapping[str, Assessment],
    direction: Direction,
    config: SiteConfig,
    fidelity: Mapping[str, tuple[int, int]] | None = None,
    flows: Flows | None = None,
) -> list[UnitDecision]:
    """``flows``: the data flows of a graph built without its produces_for edges (see ``graph.flow``)."""
    groups = _dependency_groups(graph)
    return [
        _decide(graph, unit, groups, assessments, direction, config, fidelity or {}, flows) for unit in units
    ]


def _dependency_groups(graph: nx.MultiDiGraph) -> dict[str, int]:
    """IR job id -> id of the group of jobs tied to it by dependencies or submissions."""
    jobs = sorted(node for node, kind in graph.nodes(data=gm.Attr.TYPE) if kind == gm.JOB)
    number = {node: i for i, node in enumerate(jobs)}
    tied = Groups(len(jobs))
    for u, v, kind in graph.edges(data=gm.Attr.TYPE):
        if kind in (gm.DEPENDS_ON, gm.SUBMITS) and u in number and v in number:
            tied.tie((number[u], number[v]))
    out: dict[str, int] = {}
    for i, group in enumerate(tied.members(len(jobs))):
        for job in group:
            out[gm.split_node(jobs[job])[1]] = i
    return out


def _decide(
    graph: nx.MultiDiGraph,
    unit: MigrationUnit,
    groups: dict[str, int],
    assessments: Mapping[str, Assessment],
    direction: Direction,
    config: SiteConfig,
    fidelity: Mapping[str, tuple[int, int]],
    flows: Flows | None,
) -> UnitDecision:
    action_of = {job: assessments[job].recommendation.action for job in unit.jobs}
    already = tuple(j for j in unit.order if action_of[j] == Action.ALREADY_THERE)
    if unit.cyclic:
        rest = tuple(j for j in unit.order if j not in already)
        cycle = tuple(
            (j, "part of a dependency cycle: fix the cycle first") for j in rest if action_of[j] in MOVES
        )
        return UnitDecision(
            unit, UnitAction.BLOCKED, (), rest, already, cycle, (), (), Risk(100, (), "dependency cycle")
        )
    anchors: dict[int, str] = {}
    for job in unit.order:
        if action_of[job] == Action.STAY:
            anchors.setdefault(groups[job], job)
    held: list[tuple[str, str]] = []
    moving: list[str] = []
    for job in unit.order:
        if action_of[job] not in MOVES:
            continue
        anchor = anchors.get(groups[job])
        if anchor is None:
            moving.append(job)
        else:
            held.append(
                (
                    job,
                    f"chained by dependencies to {anchor}, which stays; to move it, bridge the chain "
                    "(a workflow that submits to both schedulers, or a completion marker on shared storage)",
                )
            )
    held_ids = {j for j, _ in held}
    staying = tuple(j for j in unit.order if action_of[j] == Action.STAY or j in held_ids)
    bridges, bridge_fs = _bridges(graph, set(moving) | set(already), set(staying), flows)
    if moving and staying:
        action = UnitAction.SPLIT
    elif moving:
        action = UnitAction.MOVE
    elif staying:
        action = UnitAction.STAY
    else:
        action = UnitAction.ALREADY_THERE
    risk = unit_risk(graph, moving, bridges, unit, assessments, direction, config, fidelity)
    return UnitDecision(unit, action, tuple(moving), staying, already, tuple(held), bridges, bridge_fs, risk)


def _bridges(
    graph: nx.MultiDiGraph, on_target: set[str], on_source: set[str], flows: Flows | None
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """produces_for links whose two ends run on different schedulers once the unit has moved."""
    if not on_target or not on_source:
        return (), ()  # everything on one side: nothing can cross
    found: list[str] = []
    filesystems: set[str] = set()
    for job, consumer, path in _data_links(graph, on_target | on_source, flows):
        crosses = (job in on_target and consumer in on_source) or (job in on_source and consumer in on_target)
        if not crosses:
            continue
        fs = graph.nodes.get(gm.node_id(gm.PATH, path), {}).get(gm.Attr.FILESYSTEM)
        if fs:
            filesystems.add(str(fs))
        found.append(f"{job} -> {consumer} through {path}")
    return tuple(sorted(found)), tuple(sorted(filesystems))


def _data_links(
    graph: nx.MultiDiGraph, jobs: set[str], flows: Flows | None
) -> Iterator[tuple[str, str, str]]:
    """(producer, consumer, meeting directory) of the data links between ``jobs``, in no set order."""
    if flows is not None:
        for consumer in jobs:
            for producer, (path, _, _) in flows.links_to(flows.index[consumer]).items():
                if flows.jobs[producer] in jobs:
                    yield flows.jobs[producer], consumer, path
        return
    for job in jobs:
        for _, consumer_node, data in graph.out_edges(gm.job_node(job), data=True):
            consumer = gm.split_node(consumer_node)[1]
            if data.get(gm.Attr.TYPE) == gm.PRODUCES_FOR and consumer in jobs:
                yield job, consumer, str(data.get(gm.Attr.PATH, ""))


def unit_risk(
    graph: nx.MultiDiGraph,
    moving: list[str],
    bridges: tuple[str, ...],
    unit: MigrationUnit,
    assessments: Mapping[str, Assessment],
    direction: Direction,
    config: SiteConfig,
    fidelity: Mapping[str, tuple[int, int]],
) -> Risk:
    """A score out of 100 with the reasons behind it; only what moves carries risk."""
    if not moving:
        return Risk(0, (), "nothing moves")
    parts: list[RiskFactor] = []

    def add(points: int, cap: int, reason: str) -> None:
        if points > 0:
            parts.append(RiskFactor(min(points, cap), reason))

    facts = [assessments[j].facts for j in moving]
    dropped = sum(fidelity.get(j, (0, 0))[0] for j in moving)
    approximated = sum(fidelity.get(j, (0, 0))[1] for j in moving)
    # a dropped item is lost on the target; an approximated one is kept, close to the original
    add(dropped * 5, 25, f"translation drops {plural(dropped, 'item')}")
    add(approximated, 10, f"translation approximates {plural(approximated, 'item')} (none lost)")
    widest = max(f.nodes for f in facts)
    add(2 * (widest - 1), 15, f"jobs of up to {widest} nodes")
    gpus = sum(f.gpus for f in facts)
    add(10 if gpus >= 64 else 5 if gpus >= 8 else 0, 10, f"{gpus} GPUs move")
    gangs = sum(1 for f in facts if f.nodes > 1)
    add(
        5 * gangs,
        10,
        f"{plural(gangs, 'multi-node job')} {'needs' if gangs == 1 else 'need'} gang scheduling",
    )
    strict = sorted({need for f in facts for need in f.strict_placement})
    strict_jobs = sum(1 for f in facts if f.strict_placement)
    add(10 * strict_jobs, 20, f"{plural(strict_jobs, 'job')} with strict placement: {', '.join(strict[:3])}")
    add(
        5 * len(bridges),
        10,
        f"{plural(len(bridges), 'data link')} {'crosses' if len(bridges) == 1 else 'cross'} "
        "the scheduler boundary",
    )
    add(
        5 * len(unit.externals),
        10,
        f"{plural(len(unit.externals), 'dependency', 'dependencies')} on jobs outside the scan",
    )
    unmapped = _unmapped_filesystems(graph, moving, direction)
    add(5 * len(unmapped), 15, "no mount on the target for " + ", ".join(unmapped))
    hooks = sorted({h for j in moving for h in _hooks(graph, j)})
    add(3 * len(hooks), 9, "monitoring to rebuild: " + ", ".join(hooks))
    images = _images_to_build(moving, assessments, config, direction)
    add(5 * images, 15, f"{plural(images, 'job')} {'needs' if images == 1 else 'need'} a new container image")
    changes = {c.text for j in moving for c in assessments[j].recommendation.changes}
    add(len(changes), 10, f"{plural(len(changes), 'distinct change')} to make")
    score = min(100, sum(f.points for f in parts))
    return Risk(score, tuple(parts) or (RiskFactor(0, "a plain move"),))


def _unmapped_filesystems(graph: nx.MultiDiGraph, jobs: list[str], direction: Direction) -> list[str]:
    found: set[str] = set()
    for job in jobs:
        for _, path, kind in graph.out_edges(gm.job_node(job), data=gm.Attr.TYPE):
            if kind not in (gm.READS, gm.WRITES, gm.READWRITE, gm.USES):
                continue
            fs = graph.nodes[graph.nodes[path][gm.Attr.FILESYSTEM]]
            origin, claims = fs.get(gm.Attr.ORIGIN), fs.get(gm.Attr.CLAIMS)
            if (
                direction == Direction.TO_KUBERNETES
                and origin != FilesystemOrigin.PVC
                and not claims
                and fs.get(gm.Attr.KIND) != "local"
            ):
                found.add(str(fs[gm.Attr.LABEL]))
            if direction != Direction.TO_KUBERNETES and origin == FilesystemOrigin.PVC:
                found.add(str(fs[gm.Attr.LABEL]))
    return sorted(found)


def _hooks(graph: nx.MultiDiGraph, job: str) -> list[str]:
    return [
        str(graph.nodes[monitor][gm.Attr.LABEL])
        for _, monitor, kind in graph.out_edges(gm.job_node(job), data=gm.Attr.TYPE)
        if kind == gm.REPORTS_TO
    ]


def _images_to_build(
    jobs: list[str], assessments: Mapping[str, Assessment], config: SiteConfig, direction: Direction
) -> int:
    if direction != Direction.TO_KUBERNETES:
        return 0  # pyxis and Apptainer run the registry images pods already use
    return sum(
        1
        for job in jobs
        if any(c.kind == ChangeKind.NEW_IMAGE for c in assessments[job].recommendation.changes)
    )


__all__ = [
    "Risk",
    "RiskFactor",
    "UnitDecision",
    "decide_units",
    "unit_risk",
]
