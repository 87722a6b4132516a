"""The part of the view model the graph picture is drawn from.

Units, their jobs and the phases come from plan.json (so the picture shows the
same units as the plan); storage, monitoring and the links themselves come from
the graph the plan was built on.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import networkx as nx

from migrate.graph import model as gm
from migrate.plan.planner import PhaseKind
from migrate.reports.plan_types import PlanDoc, Unit

# What a job box shows: where the job ends up once the plan has run.
MOVES = "move"
STAYS = "stay"
HELD = "held"  # movable, but chained to a job that stays
ALREADY = "already"
BLOCKED = "blocked"
EXTERNAL = "external"  # a prerequisite outside the scan

DEPENDENCY = "dependency"
SUBMITS = "submits"
DATA = "data"

_STORAGE_EDGES = frozenset((gm.READS, gm.WRITES, gm.READWRITE, gm.USES))
# Claims and job ids left as placeholders (${FSX_CLAIM}, $dep) are drawn as one group, not as things.
UNRESOLVED = "unresolved"
UNRESOLVED_LABEL = "unresolved references"


@dataclass(frozen=True)
class GraphJob:
    id: str
    label: str
    status: str
    phase: str | None


@dataclass(frozen=True)
class GraphEdge:
    before: str  # runs or writes first
    after: str
    kind: str  # dependency | submits | data


@dataclass(frozen=True)
class GraphUnit:
    id: str
    action: str
    risk: int
    phase: str | None  # the phase its moving jobs move in
    jobs: tuple[GraphJob, ...]  # in the unit's order, prerequisites outside the scan first
    edges: tuple[GraphEdge, ...]
    filesystems: tuple[str, ...]  # file-system node ids
    monitors: tuple[str, ...]  # monitor node ids


@dataclass(frozen=True)
class GraphStore:
    id: str
    label: str
    kind: str
    jobs: int
    units: int
    both_sides: bool  # the plan keeps it mounted on both schedulers


@dataclass(frozen=True)
class GraphMonitor:
    id: str
    label: str
    jobs: int
    units: int


@dataclass(frozen=True)
class GraphPhase:
    id: str
    kind: PhaseKind


@dataclass(frozen=True)
class GraphView:
    source: str
    target: str
    phases: tuple[GraphPhase, ...]  # in the plan's order: units are grouped by the phase they move in
    units: tuple[GraphUnit, ...]
    filesystems: tuple[GraphStore, ...]  # most used first
    monitors: tuple[GraphMonitor, ...]
    jobs: int
    links: int  # dependency, submit and data links between jobs

    @property
    def stores(self) -> int:
        """File systems drawn, without the group of unresolved references."""
        return sum(1 for s in self.filesystems if s.id != UNRESOLVED)

    @property
    def job_boxes(self) -> int:
        return sum(len(u.jobs) for u in self.units)


def graph_view(plan: PlanDoc, graph: nx.MultiDiGraph) -> GraphView:
    phase_of = {job["id"]: phase for job in plan["jobs"] if (phase := job["phase"])}
    fs_jobs: dict[str, set[str]] = defaultdict(set)
    mon_jobs: dict[str, set[str]] = defaultdict(set)
    fs_units: dict[str, set[str]] = defaultdict(set)
    mon_units: dict[str, set[str]] = defaultdict(set)
    units: list[GraphUnit] = []
    links = 0
    unresolved_refs: set[str] = set()  # the placeholders, as written
    unresolved_jobs: set[str] = set()
    unresolved_units: set[str] = set()

    def unresolved(node: str) -> bool:
        return node in graph and bool(graph.nodes[node].get(gm.Attr.UNRESOLVED))

    for unit in plan["units"]:
        status = _statuses(unit)
        members = set(unit["jobs"])
        jobs: list[GraphJob] = []
        externals: dict[str, GraphJob] = {}
        edges: list[GraphEdge] = []
        monitors: set[str] = set()
        for job in unit["order"]:
            node = gm.job_node(job)
            data = graph.nodes.get(node, {})
            jobs.append(GraphJob(job, str(data.get(gm.Attr.LABEL, job)), status[job], phase_of.get(job)))
            for _, other, kind in graph.out_edges(node, data=gm.Attr.TYPE) if node in graph else ():
                other_kind, other_id = gm.split_node(other)
                if kind == gm.REPORTS_TO:
                    monitors.add(other)
                    mon_jobs[other].add(job)
                elif kind in _STORAGE_EDGES:
                    fs = graph.nodes[other].get(gm.Attr.FILESYSTEM)
                    if fs and unresolved(str(fs)):
                        unresolved_refs.add(gm.split_node(str(fs))[1])
                        unresolved_jobs.add(job)
                    elif fs:
                        fs_jobs[str(fs)].add(job)
                elif kind in (gm.DEPENDS_ON, gm.SUBMITS, gm.PRODUCES_FOR) and unresolved(other):
                    unresolved_refs.add(other_id.removeprefix("unresolved:"))
                    unresolved_jobs.add(job)
                    unresolved_units.add(unit["id"])
                elif kind in (gm.DEPENDS_ON, gm.SUBMITS, gm.PRODUCES_FOR):
                    edge = _edge(job, other_kind, other_id, kind, members)
                    if edge is None:
                        continue
                    edges.append(edge)
                    if other_kind == gm.EXTERNAL:
                        label = str(graph.nodes[other].get(gm.Attr.LABEL, other_id))
                        externals.setdefault(other_id, GraphJob(other_id, label, EXTERNAL, None))
        unique = sorted(set(edges), key=lambda e: (e.before, e.after, e.kind))
        links += sum(1 for e in unique if e.before in members and e.after in members)
        unit_stores = [fs for fs in unit["filesystems"] if not unresolved(fs)]
        for fs in unit["filesystems"]:
            if unresolved(fs):
                unresolved_refs.add(gm.split_node(fs)[1])
                unresolved_units.add(unit["id"])
        for fs in unit_stores:
            fs_units[fs].add(unit["id"])
        if unit["id"] in unresolved_units:
            unit_stores.append(UNRESOLVED)
        for monitor in monitors:
            mon_units[monitor].add(unit["id"])
        moving_phases = sorted({phase_of[j] for j in unit["moving"] if j in phase_of})
        units.append(
            GraphUnit(
                id=unit["id"],
                action=unit["action"],
                risk=unit["risk"]["score"],
                phase=moving_phases[0] if moving_phases else None,
                jobs=tuple(sorted(externals.values(), key=lambda j: j.id)) + tuple(jobs),
                edges=tuple(unique),
                filesystems=tuple(unit_stores),
                monitors=tuple(sorted(monitors)),
            )
        )
    both = set(plan["shared_filesystems"])
    stores = [
        GraphStore(
            fs,
            str(graph.nodes[fs].get(gm.Attr.LABEL, fs)) if fs in graph else fs,
            str(graph.nodes[fs].get(gm.Attr.KIND, "unknown")) if fs in graph else "unknown",
            len(fs_jobs.get(fs, ())),
            len(fs_units[fs]),
            fs in both,
        )
        for fs in fs_units
    ]
    if unresolved_units:
        refs = ", ".join(sorted(ref.removeprefix("pvc:") for ref in unresolved_refs))
        stores.append(
            GraphStore(UNRESOLVED, UNRESOLVED_LABEL, refs, len(unresolved_jobs), len(unresolved_units), False)
        )
    monitors_out = [
        GraphMonitor(m, str(graph.nodes[m].get(gm.Attr.LABEL, m)), len(mon_jobs[m]), len(mon_units[m]))
        for m in mon_units
    ]
    return GraphView(
        source=plan["source"],
        target=plan["target"],
        phases=tuple(GraphPhase(p["id"], PhaseKind(p["kind"])) for p in plan["phases"]),
        units=tuple(units),
        filesystems=tuple(sorted(stores, key=lambda s: (-s.units, -s.jobs, s.id))),
        monitors=tuple(sorted(monitors_out, key=lambda m: (-m.units, -m.jobs, m.id))),
        jobs=len(plan["jobs"]),
        links=links,
    )


def _statuses(unit: Unit) -> dict[str, str]:
    held = {h["job"] for h in unit["held"]}
    out = {job: STAYS for job in unit["jobs"]}
    out |= {job: MOVES for job in unit["moving"]}
    out |= {job: ALREADY for job in unit["already_there"]}
    stay_as = BLOCKED if unit["action"] == "blocked" else STAYS
    for job in unit["staying"]:
        out[job] = HELD if job in held and stay_as == STAYS else stay_as
    return out


def _edge(job: str, other_kind: str, other: str, kind: str, members: set[str]) -> GraphEdge | None:
    """The link drawn in run order: a prerequisite before its dependent, a producer before its reader."""
    if other_kind == gm.JOB and other not in members:
        return None  # upkeep jobs read everyone's data but were kept out of their units
    if kind == gm.DEPENDS_ON:
        return GraphEdge(other, job, DEPENDENCY)
    if kind == gm.SUBMITS:
        return GraphEdge(job, other, SUBMITS)
    return GraphEdge(job, other, DATA)


__all__ = [
    "ALREADY",
    "BLOCKED",
    "DATA",
    "DEPENDENCY",
    "EXTERNAL",
    "HELD",
    "MOVES",
    "STAYS",
    "SUBMITS",
    "GraphEdge",
    "GraphJob",
    "GraphMonitor",
    "GraphPhase",
    "GraphStore",
    "GraphUnit",
    "GraphView",
    "graph_view",
]
