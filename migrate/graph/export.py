"""Export the graph for people who want their own tools: GraphML and node-link JSON.

Both exports list nodes and edges sorted by id, so the same input always
gives byte-identical files (a diff between two scans shows only what changed).
"""

from __future__ import annotations

import json
from typing import IO, Any

import networkx as nx


def sorted_copy(graph: nx.MultiDiGraph) -> nx.MultiDiGraph:
    """The same graph with nodes, edges and attributes inserted in sorted order."""
    out = nx.MultiDiGraph()
    out.graph.update(sorted(graph.graph.items()))
    for node in sorted(graph.nodes):
        out.add_node(node, **dict(sorted(graph.nodes[node].items())))
    for u, v, key, data in sorted(graph.edges(keys=True, data=True), key=lambda e: (e[0], e[1], e[2])):
        out.add_edge(u, v, key=key, **dict(sorted(data.items())))
    return out


def to_graphml(graph: nx.MultiDiGraph, path_or_buffer: str | IO[bytes]) -> None:
    """Write GraphML; read it back with ``nx.read_graphml(path, force_multigraph=True)``."""
    nx.write_graphml(sorted_copy(graph), path_or_buffer, named_key_ids=True)


def to_node_link(graph: nx.MultiDiGraph) -> dict[str, Any]:
    """networkx node-link data (``edges="links"``), nodes and links sorted."""
    ordered = sorted_copy(graph)
    nodes = [{"id": node, **data} for node, data in ordered.nodes(data=True)]
    links = [
        {"source": u, "target": v, "key": key, **data}
        for u, v, key, data in ordered.edges(keys=True, data=True)
    ]
    return {
        "directed": True,
        "multigraph": True,
        "graph": dict(ordered.graph),
        "nodes": nodes,
        "links": links,
    }


def to_json(graph: nx.MultiDiGraph, indent: int | None = 2) -> str:
    """Node-link JSON text; ``nx.node_link_graph(json.loads(text), edges="links")`` reads it back."""
    return json.dumps(to_node_link(graph), indent=indent, sort_keys=True, ensure_ascii=False) + "\n"


__all__ = ["sorted_copy", "to_graphml", "to_json", "to_node_link"]
