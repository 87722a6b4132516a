"""What the plan needs to know from the graph: cycles, migration units, shared storage, hubs.

Pure functions over a graph from ``graph.build_graph``. Every result is sorted so
that the same jobs, read in any order, give the same answer; each analysis is
linear or near-linear in the graph size (no all-pairs paths, no betweenness).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

import networkx as nx

from migrate.graph import model as gm
from migrate.graph.flow import Flows
from migrate.graph.order import Groups, run_order
from migrate.graph.perf import paused_gc

STORAGE_EDGE_TYPES = frozenset((gm.READS, gm.WRITES, gm.READWRITE, gm.USES))
CENTRAL_NODE_TYPES = (gm.FILESYSTEM, gm.PATH, gm.MONITOR)


@dataclass(frozen=True, slots=True)
class MigrationUnit:
    """Jobs tied by dependencies, wrapper submissions or data flow: they move together."""

    id: str
    jobs: tuple[str, ...]  # IR job ids, sorted
    order: tuple[str, ...]  # prerequisites and producers first
    formats: tuple[str, ...]  # Format values: both means the unit already spans schedulers
    filesystems: tuple[str, ...]  # file-system node ids the unit touches
    externals: tuple[str, ...]  # external node ids it depends on (old job ids, unscanned scripts)
    cyclic: bool = False


@dataclass(frozen=True, slots=True)
class FilesystemUse:
    node: str
    label: str
    kind: str  # lustre, nfs, local ... from migrate.yaml or the well-known prefix
    units: tuple[str, ...]
    jobs: int
    formats: tuple[str, ...]

    @property
    def shared(self) -> bool:
        """Used by more than one unit: must stay mounted on both schedulers while they coexist."""
        return len(self.units) > 1


@dataclass(frozen=True, slots=True)
class Centrality:
    """How many jobs and units lean on a storage or monitoring node; score = jobs / all jobs."""

    node: str
    type: str
    label: str
    jobs: int
    units: int
    score: float


@dataclass(frozen=True, slots=True)
class GraphAnalysis:
    cycles: tuple[tuple[str, ...], ...]
    units: tuple[MigrationUnit, ...]
    filesystems: tuple[FilesystemUse, ...]
    centrality: tuple[Centrality, ...]

    @property
    def shared_filesystems(self) -> tuple[FilesystemUse, ...]:
        return tuple(fs for fs in self.filesystems if fs.shared)

    def unit_by_job(self) -> dict[str, str]:
        """IR job id -> unit id."""
        return {job: unit.id for unit in self.units for job in unit.jobs}


def analyze(
    graph: nx.MultiDiGraph, detached: Iterable[str] = (), flows: Flows | None = None
) -> GraphAnalysis:
    """Every analysis at once, sharing one pass over the edges. See ``migration_units`` for ``detached``.

    ``flows`` are the data flows of a graph built without its produces_for
    edges (``graph.build_graph_and_flows``); they tie units as those edges would.
    """
    with paused_gc():
        return _analyze(graph, frozenset(detached), flows)


def _analyze(graph: nx.MultiDiGraph, detached: frozenset[str], flows: Flows | None) -> GraphAnalysis:
    index = _EdgeIndex.of(graph)
    cycles = _cycles(index)
    units = _units(graph, index, cycles, detached, flows)
    return GraphAnalysis(
        cycles=tuple(tuple(c) for c in cycles),
        units=tuple(units),
        filesystems=tuple(_filesystem_usage(graph, index, units)),
        centrality=tuple(_centrality(graph, index, units, CENTRAL_NODE_TYPES)),
    )


def job_ids(graph: nx.MultiDiGraph) -> list[str]:
    return sorted(gm.split_node(n)[1] for n, kind in graph.nodes(data=gm.Attr.TYPE) if kind == gm.JOB)


def dependency_cycles(graph: nx.MultiDiGraph) -> list[list[str]]:
    """One cycle (as IR job ids, smallest first) per strongly connected group of depends_on edges.

    Listing every elementary cycle can be exponential; one witness per group is
    what a user needs to break it.
    """
    return _cycles(_EdgeIndex.of(graph))


def migration_units(graph: nx.MultiDiGraph, detached: Iterable[str] = ()) -> list[MigrationUnit]:
    """Weakly connected components over depends_on, submits and produces_for between jobs.

    Every job is in exactly one unit. Units are numbered by their smallest job
    id, so the numbering does not depend on the order jobs were read in.

    ``detached`` names jobs (IR ids) whose data flow must not glue units
    together: a cleanup or backup job reads the checkpoints of every team, and
    would otherwise merge unrelated pipelines into one unit. Their
    produces_for edges stay in the graph; their dependencies still count.
    """
    index = _EdgeIndex.of(graph)
    return _units(graph, index, _cycles(index), frozenset(detached))


def filesystem_usage(graph: nx.MultiDiGraph, units: list[MigrationUnit] | None = None) -> list[FilesystemUse]:
    """Each file system with the units and jobs using it; shared ones first, then by name."""
    index = _EdgeIndex.of(graph)
    return _filesystem_usage(
        graph, index, units if units is not None else _units(graph, index, _cycles(index))
    )


def shared_filesystems(
    graph: nx.MultiDiGraph, units: list[MigrationUnit] | None = None
) -> list[FilesystemUse]:
    return [fs for fs in filesystem_usage(graph, units) if fs.shared]


def centrality(
    graph: nx.MultiDiGraph,
    units: list[MigrationUnit] | None = None,
    node_types: tuple[str, ...] = CENTRAL_NODE_TYPES,
) -> list[Centrality]:
    """Storage and monitoring nodes by the share of jobs that use them, most central first.

    A degree measure over jobs (a file system counts the jobs on any of its
    paths): betweenness would cost O(nodes x edges) and rank the same hubs.
    """
    index = _EdgeIndex.of(graph)
    units = units if units is not None else _units(graph, index, _cycles(index))
    return _centrality(graph, index, units, node_types)


# ---------------------------------------------------------------------------
# One pass over the edges feeds every analysis.


@dataclass(frozen=True, slots=True)
class _EdgeIndex:
    jobs: tuple[str, ...]  # job node ids, sorted
    links: tuple[tuple[str, str, str], ...]  # (u, v, type) of unit edges between jobs, sorted
    storage: tuple[tuple[str, str, str], ...]  # (job, path node, file-system node)
    reports: tuple[tuple[str, str], ...]  # (job, monitor node)
    externals: tuple[tuple[str, str], ...]  # (job, external node)

    @classmethod
    def of(cls, graph: nx.MultiDiGraph) -> _EdgeIndex:
        kinds: dict[str, str] = dict(graph.nodes(data=gm.Attr.TYPE, default=""))
        filesystem_of: dict[str, str] = dict(graph.nodes(data=gm.Attr.FILESYSTEM, default=""))
        unit_types = frozenset(gm.UNIT_EDGE_TYPES)
        links, storage, reports, externals = [], [], [], []
        for u, v, kind in graph.edges(data=gm.Attr.TYPE):
            if kinds[u] != gm.JOB:
                continue
            target = kinds[v]
            if kind in unit_types:
                if target == gm.JOB:
                    links.append((u, v, kind))
                elif target == gm.EXTERNAL:
                    externals.append((u, v))
            elif kind in STORAGE_EDGE_TYPES:
                storage.append((u, v, filesystem_of[v]))
            elif kind == gm.REPORTS_TO:
                reports.append((u, v))
        return cls(
            jobs=tuple(sorted(n for n, k in kinds.items() if k == gm.JOB)),
            links=tuple(sorted(links)),
            storage=tuple(storage),
            reports=tuple(reports),
            externals=tuple(externals),
        )


def _cycles(index: _EdgeIndex) -> list[list[str]]:
    deps = nx.DiGraph()
    deps.add_edges_from((u, v) for u, v, kind in index.links if kind == gm.DEPENDS_ON)
    cycles: list[list[str]] = []
    for component in nx.strongly_connected_components(deps):
        members = sorted(component)
        if len(members) < 2 and not deps.has_edge(members[0], members[0]):
            continue
        sub = nx.DiGraph()
        sub.add_nodes_from(members)
        sub.add_edges_from(sorted(deps.subgraph(members).edges()))
        found = [u for u, _ in nx.find_cycle(sub, source=members[0])]
        start = found.index(min(found))
        cycles.append([gm.split_node(n)[1] for n in found[start:] + found[:start]])
    return sorted(cycles)


def _units(
    graph: nx.MultiDiGraph,
    index: _EdgeIndex,
    cycles: list[list[str]],
    detached: frozenset[str] = frozenset(),
    flows: Flows | None = None,
) -> list[MigrationUnit]:
    loose = {gm.job_node(job) for job in detached}
    number = {job: i for i, job in enumerate(index.jobs)}
    count = len(index.jobs)
    groups = Groups(count)
    successors: list[list[int]] = [[] for _ in range(count)]  # who runs after whom
    for u, v, kind in index.links:
        if kind == gm.PRODUCES_FOR and (u in loose or v in loose):
            continue
        source, target = number[u], number[v]
        groups.tie((source, target))
        if kind == gm.DEPENDS_ON:
            successors[target].append(source)  # the prerequisite runs first
        else:
            successors[source].append(target)  # producer / submitter first
    if flows is not None:
        _tie_flows(flows, number, loose, groups, successors)
    components = groups.members(count)
    width = max(3, len(str(len(components))))
    unit_of = [0] * count
    for i, comp in enumerate(components):
        for job in comp:
            unit_of[job] = i
    # Jobs in a cycle (dependency or data) stay together, by id.
    orders: list[list[int]] = [[] for _ in components]
    for job in run_order(successors, count):
        orders[unit_of[job]].append(job)
    cyclic_jobs = {job for cycle in cycles for job in cycle}
    filesystems: list[set[str]] = [set() for _ in components]
    externals: list[set[str]] = [set() for _ in components]
    for node, _, fs in index.storage:
        filesystems[unit_of[number[node]]].add(fs)
    for node, external in index.externals:
        externals[unit_of[number[node]]].add(external)
    formats: dict[str, str] = dict(graph.nodes(data=gm.Attr.FORMAT, default=""))
    names = [gm.split_node(node)[1] for node in index.jobs]
    units: list[MigrationUnit] = []
    for i, comp in enumerate(components):
        ids = tuple(names[job] for job in comp)
        units.append(
            MigrationUnit(
                id=f"U{i + 1:0{width}d}",
                jobs=ids,
                order=tuple(names[job] for job in orders[i]),
                formats=tuple(sorted({formats[index.jobs[job]] for job in comp})),
                filesystems=tuple(sorted(filesystems[i])),
                externals=tuple(sorted(externals[i])),
                cyclic=any(job in cyclic_jobs for job in ids),
            )
        )
    return units


def _tie_flows(
    flows: Flows,
    number: dict[str, int],
    loose: set[str],
    groups: Groups,
    successors: list[list[int]],
) -> None:
    """The data flow between jobs, one meeting at a time: its writers run before its readers.

    Each meeting becomes a waypoint node that its writers lead to and that leads
    to its readers, which orders and groups jobs exactly as the writer -> reader
    links would, without listing them.
    """
    nodes = [gm.job_node(job) for job in flows.jobs]
    kept = [number[node] if node not in loose else None for node in nodes]
    for meeting in flows.meetings():
        writers = [job for job in (kept[w] for w in meeting.writers) if job is not None]
        readers = [job for job in (kept[r] for r in meeting.readers) if job is not None]
        if not writers or not readers:
            continue
        groups.tie(writers + readers)
        waypoint = len(successors)
        successors.append(readers)
        for writer in writers:
            successors[writer].append(waypoint)


def _filesystem_usage(
    graph: nx.MultiDiGraph, index: _EdgeIndex, units: list[MigrationUnit]
) -> list[FilesystemUse]:
    unit_by_job = {gm.job_node(job): unit.id for unit in units for job in unit.jobs}
    jobs_on: dict[str, set[str]] = defaultdict(set)
    for job, _, fs in index.storage:
        if job in unit_by_job:
            jobs_on[fs].add(job)
    formats: dict[str, str] = dict(graph.nodes(data=gm.Attr.FORMAT, default=""))
    out = [
        FilesystemUse(
            node=fs,
            label=str(graph.nodes[fs].get(gm.Attr.LABEL, fs)),
            kind=str(graph.nodes[fs].get(gm.Attr.KIND, "unknown")),
            units=tuple(sorted({unit_by_job[j] for j in users})),
            jobs=len(users),
            formats=tuple(sorted({formats[j] for j in users})),
        )
        for fs, users in jobs_on.items()
    ]
    return sorted(out, key=lambda f: (-len(f.units), -f.jobs, f.node))


def _centrality(
    graph: nx.MultiDiGraph, index: _EdgeIndex, units: list[MigrationUnit], node_types: tuple[str, ...]
) -> list[Centrality]:
    unit_by_job = {gm.job_node(job): unit.id for unit in units for job in unit.jobs}
    total = max(1, len(unit_by_job))
    users: dict[str, set[str]] = defaultdict(set)
    for job, path, fs in index.storage:
        users[path].add(job)
        users[fs].add(job)
    for job, monitor in index.reports:
        users[monitor].add(job)
    out = [
        Centrality(
            node=node,
            type=str(graph.nodes[node][gm.Attr.TYPE]),
            label=str(graph.nodes[node].get(gm.Attr.LABEL, node)),
            jobs=len(jobs),
            units=len({unit_by_job[j] for j in jobs if j in unit_by_job}),
            score=round(len(jobs) / total, 4),
        )
        for node, jobs in users.items()
        if graph.nodes[node].get(gm.Attr.TYPE) in node_types
    ]
    return sorted(out, key=lambda c: (-c.jobs, -c.units, c.node))


__all__ = [
    "CENTRAL_NODE_TYPES",
    "Centrality",
    "FilesystemUse",
    "GraphAnalysis",
    "MigrationUnit",
    "analyze",
    "centrality",
    "dependency_cycles",
    "filesystem_usage",
    "job_ids",
    "migration_units",
    "shared_filesystems",
]
