"""The site as a graph: jobs, storage, monitoring, images, modules, queues, dependencies.

``build_graph`` turns IR jobs into a networkx ``MultiDiGraph``. Node ids carry
their type as a prefix (see ``model``); every edge has a ``type`` and the
``evidence`` (file:line) it was read from. Edges are keyed by their type, so
one fact seen on several lines is one edge, with the first line as evidence.

The analyses (units, cycles, shared storage, centrality) live in
``analysis`` and the exports in ``export``; both are re-exported here
so that callers import one module.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import networkx as nx

from migrate import ir
from migrate.graph import model as gm
from migrate.graph.analysis import (
    Centrality,
    FilesystemUse,
    GraphAnalysis,
    MigrationUnit,
    analyze,
    centrality,
    dependency_cycles,
    filesystem_usage,
    migration_units,
    shared_filesystems,
)
from migrate.graph.deps import ResolvedDependencies, resolve_dependencies
from migrate.graph.export import to_graphml, to_json, to_node_link
from migrate.graph.flow import Flows, flows_of
from migrate.graph.helpers import HelperLink, helper_links
from migrate.graph.perf import paused_gc
from migrate.graph.storage import Location, StorageResolver
from migrate.names import is_placeholder
from migrate.site.config import SiteConfig
from migrate.vocab import Format

_ACCESS_EDGE = {ir.READ: gm.READS, ir.WRITE: gm.WRITES, ir.READ_WRITE: gm.READWRITE, ir.UNKNOWN: gm.USES}


def build_graph(jobs: Iterable[ir.Job], config: SiteConfig | None = None) -> nx.MultiDiGraph:
    """The dependency and resource graph of ``jobs``; the same jobs in any order give the same graph."""
    with paused_gc():
        graph, flows = _build(jobs, config or SiteConfig())
        add_flow_edges(graph, flows)
        return graph


def build_graph_and_flows(
    jobs: Iterable[ir.Job], config: SiteConfig | None = None
) -> tuple[nx.MultiDiGraph, Flows]:
    """The graph of ``jobs`` without its produces_for edges, and the flows those edges would be.

    What the plan works from: on a large site the producer -> consumer links
    outnumber every other edge many times over (see ``flow``), and the
    analyses need only the flows. ``add_flow_edges`` completes the graph.
    """
    with paused_gc():
        return _build(jobs, config or SiteConfig())


def _build(jobs: Iterable[ir.Job], config: SiteConfig) -> tuple[nx.MultiDiGraph, Flows]:
    ordered = _unique_sorted(jobs)
    graph = nx.MultiDiGraph()
    graph.graph.update(
        {"schema": gm.GRAPH_SCHEMA, "ir_version": ir.IR_VERSION, "site": config.site, "jobs": len(ordered)}
    )
    resolver = StorageResolver(config)
    locations: list[tuple[str, list[Location]]] = []
    for job in ordered:
        _add_job(graph, job)
        locs = resolver.locations(job)
        locations.append((job.id, locs))
        _add_storage(graph, job, locs)
        _add_monitoring(graph, job)
        _add_software(graph, job)
        _add_queues(graph, job, config)
    _add_dependencies(graph, resolve_dependencies(ordered))
    _add_helpers(graph, helper_links(ordered))
    _mark_unresolved(graph)
    return graph, flows_of(locations)


def release_graph(graph: nx.MultiDiGraph) -> None:
    """Empty a graph that is no longer needed, so that its memory goes back at once.

    A networkx graph refers to itself through its views: dropped, it waits for
    the cyclic collector, which may not run for a long while after a large
    build, and meanwhile the next step allocates as much again.
    """
    graph.clear()


def _unique_sorted(jobs: Iterable[ir.Job]) -> list[ir.Job]:
    seen: dict[str, ir.Job] = {}
    for job in sorted(jobs, key=lambda j: (j.id, j.source.path, j.source.line)):
        seen.setdefault(job.id, job)
    return list(seen.values())


def _add_node(graph: nx.MultiDiGraph, node: str, **attrs: Any) -> str:
    if node not in graph:
        graph.add_node(node, **{k: v for k, v in attrs.items() if v is not None})
    return node


def _add_edge(graph: nx.MultiDiGraph, u: str, v: str, key: str, **attrs: Any) -> None:
    # first evidence wins: jobs arrive sorted and their items sorted by line
    if graph.has_edge(u, v, key):
        return
    for name in [name for name, val in attrs.items() if val is None]:
        del attrs[name]
    graph.add_edge(u, v, key=key, **attrs)


def _add_job(graph: nx.MultiDiGraph, job: ir.Job) -> None:
    attrs: dict[str, Any] = {
        gm.Attr.TYPE: gm.JOB,
        gm.Attr.LABEL: job.name or job.id,
        # plain strings: GraphML writes no other string type
        gm.Attr.KIND: str(job.kind),
        gm.Attr.FORMAT: str(job.source.format),
        gm.Attr.NODES: job.total_nodes(),
        gm.Attr.GPUS: job.total_gpus(),
        gm.Attr.PATH: job.source.path,
        gm.Attr.LINE: job.source.line,
    }
    if job.array is not None:
        attrs[gm.Attr.ARRAY_SIZE] = job.array.count or len(job.array.indices)
    graph.add_node(gm.job_node(job.id), **attrs)


def _add_storage(graph: nx.MultiDiGraph, job: ir.Job, locs: list[Location]) -> None:
    merged: dict[str, list[Location]] = {}
    for loc in locs:
        merged.setdefault(loc.directory, []).append(loc)
    source = gm.job_node(job.id)
    for directory in sorted(merged):
        group = merged[directory]
        fs = group[0].filesystem
        fs_node = _add_node(
            graph,
            gm.node_id(gm.FILESYSTEM, fs.name),
            type=gm.FILESYSTEM,
            label=fs.name,
            prefix=fs.prefix,
            kind=str(fs.kind),  # plain: GraphML writes no other string type
            origin=str(fs.origin),
            claims=",".join(fs.claims) or None,
        )
        path_node = _add_node(
            graph, gm.node_id(gm.PATH, directory), type=gm.PATH, label=directory, filesystem=fs_node
        )
        _add_edge(graph, path_node, fs_node, gm.ON_FILESYSTEM, type=gm.ON_FILESYSTEM)
        first = min(group, key=lambda loc: (loc.line is None, loc.line or 0))
        edge_type = _ACCESS_EDGE[_merged_access(group)]
        _add_edge(
            graph,
            source,
            path_node,
            edge_type,
            type=edge_type,
            evidence=gm.evidence(job.source.path, first.line),
            origin=",".join(sorted({loc.origin for loc in group})),
            log=all(loc.log for loc in group),
        )


def _merged_access(group: list[Location]) -> str:
    accesses = {loc.access for loc in group}
    reads = bool(accesses & {ir.READ, ir.READ_WRITE})
    writes = bool(accesses & {ir.WRITE, ir.READ_WRITE})
    if reads and writes:
        return ir.READ_WRITE
    if writes:
        return ir.WRITE
    if reads:
        return ir.READ
    return ir.UNKNOWN


def _add_monitoring(graph: nx.MultiDiGraph, job: ir.Job) -> None:
    for hook in sorted(job.monitoring, key=lambda h: (h.kind, h.line or 0, h.detail)):
        node = _add_node(graph, gm.node_id(gm.MONITOR, hook.kind), type=gm.MONITOR, label=str(hook.kind))
        _add_edge(
            graph,
            gm.job_node(job.id),
            node,
            gm.REPORTS_TO,
            type=gm.REPORTS_TO,
            evidence=gm.evidence(job.source.path, hook.line),
            detail=hook.detail or None,
        )


def _add_software(graph: nx.MultiDiGraph, job: ir.Job) -> None:
    source = gm.job_node(job.id)
    image_lines: dict[str, int | None] = {}
    for comp in job.components:
        for container in comp.containers:
            image_lines.setdefault(container.image, container.line)
    for image in sorted(image_lines):
        node = _add_node(graph, gm.node_id(gm.IMAGE, image), type=gm.IMAGE, label=image)
        _add_edge(
            graph,
            source,
            node,
            gm.USES_IMAGE,
            type=gm.USES_IMAGE,
            evidence=gm.evidence(job.source.path, image_lines[image] or job.source.line),
        )
    # Modules and conda/venv/spack environments both need an image on Kubernetes.
    software = [(m, "module") for m in job.modules] + [
        (f"{kv.key}:{kv.value}", kv.key) for kv in job.software_envs
    ]
    for name, kind in sorted(set(software)):
        node = _add_node(graph, gm.node_id(gm.MODULE, name), type=gm.MODULE, label=name, software=kind)
        _add_edge(
            graph,
            source,
            node,
            gm.USES_MODULE,
            type=gm.USES_MODULE,
            evidence=gm.evidence(job.source.path, None),
        )


def _add_queues(graph: nx.MultiDiGraph, job: ir.Job, config: SiteConfig) -> None:
    source = gm.job_node(job.id)
    where = gm.evidence(job.source.path, job.source.line)
    for partition in sorted(set(job.placement.partitions)):
        mirror = config.partition(partition)
        node = _add_node(
            graph,
            gm.node_id(gm.QUEUE, partition),
            type=gm.QUEUE,
            label=partition,
            scheduler=str(Format.SLURM),
            mirror=mirror.queue if mirror is not None else None,
        )
        _add_edge(graph, source, node, gm.SUBMITS_TO, type=gm.SUBMITS_TO, evidence=where)
    if job.placement.queue:
        queue = job.placement.queue
        node = _add_node(
            graph,
            gm.node_id(gm.QUEUE, queue),
            type=gm.QUEUE,
            label=queue,
            scheduler=str(Format.KUBERNETES),
            mirror=config.partition_for_queue(queue),
        )
        _add_edge(graph, source, node, gm.SUBMITS_TO, type=gm.SUBMITS_TO, evidence=where)


def _mark_unresolved(graph: nx.MultiDiGraph) -> None:
    """Claims and job ids still to be filled in (``${FSX_CLAIM}``, ``$dep``) are references, not things."""
    # a path under a real file system with a variable in it (/fsx/$USER) is still that file system
    for node, data in graph.nodes(data=True):
        kind, name = gm.split_node(node)
        if kind in (gm.FILESYSTEM, gm.EXTERNAL) and is_placeholder(name):
            data[gm.Attr.UNRESOLVED] = True
    for _node, data in graph.nodes(data=True):
        fs = data.get(gm.Attr.FILESYSTEM)
        if data.get(gm.Attr.TYPE) == gm.PATH and fs in graph and graph.nodes[fs].get(gm.Attr.UNRESOLVED):
            data[gm.Attr.UNRESOLVED] = True


def _add_helpers(graph: nx.MultiDiGraph, links: list[HelperLink]) -> None:
    for link in links:
        _add_edge(
            graph,
            gm.job_node(link.user),
            gm.job_node(link.helper),
            gm.USES_HELPER,
            type=gm.USES_HELPER,
            role=link.role,
            note=link.evidence,
            evidence=gm.evidence(link.path, link.line),
        )


def _add_dependencies(graph: nx.MultiDiGraph, resolved: ResolvedDependencies) -> None:
    notes = dict(resolved.externals)
    for link in resolved.links:
        target = _target_node(graph, link.prerequisite, link.external, notes)
        _add_edge(
            graph,
            gm.job_node(link.dependent),
            target,
            f"{gm.DEPENDS_ON}:{link.dep_type}",
            type=gm.DEPENDS_ON,
            dep=str(link.dep_type),
            via=str(link.via),  # plain: GraphML writes no other string type
            evidence=gm.evidence(link.path, link.line),
            note=link.note or None,
        )
    for sub in resolved.submits:
        target = _target_node(graph, sub.child, sub.external, notes)
        _add_edge(
            graph,
            gm.job_node(sub.submitter),
            target,
            gm.SUBMITS,
            type=gm.SUBMITS,
            evidence=gm.evidence(sub.path, sub.line),
            note=sub.note or None,
        )
    for job_id, items in resolved.internal:
        graph.nodes[gm.job_node(job_id)][gm.Attr.INTERNAL_DEPENDENCIES] = "; ".join(items)
    for job_id in resolved.self_resubmit:
        graph.nodes[gm.job_node(job_id)][gm.Attr.SELF_RESUBMIT] = True


def _target_node(
    graph: nx.MultiDiGraph, job_id: str | None, external: str | None, notes: dict[str, str]
) -> str:
    if job_id is not None:
        return gm.job_node(job_id)
    label = external or "unknown"
    return _add_node(
        graph, gm.node_id(gm.EXTERNAL, label), type=gm.EXTERNAL, label=label, note=notes.get(label) or None
    )


def add_flow_edges(graph: nx.MultiDiGraph, flows: Flows) -> None:
    """The produces_for edges of ``flows``, added last as ``build_graph`` does."""
    with paused_gc():
        for link in flows.links():
            _add_edge(
                graph,
                gm.job_node(link.producer),
                gm.job_node(link.consumer),
                gm.PRODUCES_FOR,
                type=gm.PRODUCES_FOR,
                path=link.directory,
                evidence=gm.evidence(
                    graph.nodes[gm.job_node(link.producer)][gm.Attr.PATH], link.producer_line
                ),
                consumer_evidence=gm.evidence(
                    graph.nodes[gm.job_node(link.consumer)][gm.Attr.PATH], link.consumer_line
                ),
            )


__all__ = [
    "Centrality",
    "FilesystemUse",
    "Flows",
    "GraphAnalysis",
    "MigrationUnit",
    "add_flow_edges",
    "analyze",
    "build_graph",
    "build_graph_and_flows",
    "centrality",
    "dependency_cycles",
    "filesystem_usage",
    "migration_units",
    "release_graph",
    "shared_filesystems",
    "to_graphml",
    "to_json",
    "to_node_link",
]
