"""Connected groups and run order over nodes numbered 0..n-1, on plain lists.

The analyses work on jobs tied by hundreds of thousands of links at large
sites; networkx graphs built only to ask for components and an order would
cost a dictionary per node and per edge. These helpers give the same answers
as ``nx.connected_components`` and ``nx.lexicographical_topological_sort`` of
``nx.condensation``, with ints in lists.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable


class Groups:
    """Union-find: which nodes are tied together, by any chain of ties."""

    def __init__(self, count: int) -> None:
        self._parent = list(range(count))

    def root(self, node: int) -> int:
        parent = self._parent
        root = node
        while parent[root] != root:
            root = parent[root]
        while parent[node] != root:  # shorten the path for the next look-up
            parent[node], node = root, parent[node]
        return root

    def tie(self, nodes: Iterable[int]) -> None:
        """Put all of ``nodes`` in one group."""
        first = None
        for node in nodes:
            root = self.root(node)
            if first is None:
                first = root
            elif root != first:
                self._parent[root] = first

    def members(self, count: int) -> list[list[int]]:
        """The groups of nodes 0..count-1, each sorted, ordered by their smallest node."""
        by_root: dict[int, list[int]] = {}
        for node in range(count):
            by_root.setdefault(self.root(node), []).append(node)
        return sorted(by_root.values(), key=lambda group: group[0])


def strongly_connected(successors: list[list[int]]) -> list[int]:
    """The strongly connected component of each node (Tarjan's algorithm, without recursion)."""
    count = len(successors)
    index = [-1] * count
    low = [0] * count
    on_stack = [False] * count
    component = [-1] * count
    stack: list[int] = []
    seen = found = 0
    for root in range(count):
        if index[root] != -1:
            continue
        index[root] = low[root] = seen
        seen += 1
        stack.append(root)
        on_stack[root] = True
        work = [(root, 0)]
        while work:
            node, next_child = work[-1]
            children = successors[node]
            if next_child < len(children):
                work[-1] = (node, next_child + 1)
                child = children[next_child]
                if index[child] == -1:
                    index[child] = low[child] = seen
                    seen += 1
                    stack.append(child)
                    on_stack[child] = True
                    work.append((child, 0))
                elif on_stack[child] and index[child] < low[node]:
                    low[node] = index[child]
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                if low[node] < low[parent]:
                    low[parent] = low[node]
            if low[node] == index[node]:
                while True:
                    member = stack.pop()
                    on_stack[member] = False
                    component[member] = found
                    if member == node:
                        break
                found += 1
    return component


def run_order(successors: list[list[int]], ranked: int) -> list[int]:
    """Nodes 0..ranked-1 in an order that respects every edge; nodes from ``ranked`` on are only waypoints.

    Nodes in a cycle come together, smallest first. Among groups ready to run,
    the one with the smallest node goes first; a group of waypoints only
    (no ranked node) goes as soon as it is ready, so that it never holds back
    the choice among ranked nodes.
    """
    component = strongly_connected(successors)
    groups = max(component, default=-1) + 1
    members: list[list[int]] = [[] for _ in range(groups)]
    for node in range(ranked):
        members[component[node]].append(node)  # ascending: nodes are visited in order
    after: list[list[int]] = [[] for _ in range(groups)]
    waiting = [0] * groups
    for node, children in enumerate(successors):
        here = component[node]
        for child in children:
            there = component[child]
            if there != here:
                after[here].append(there)
                waiting[there] += 1
    key = [group[0] if group else -1 for group in members]
    ready = [(key[g], g) for g in range(groups) if not waiting[g]]
    heapq.heapify(ready)
    order: list[int] = []
    while ready:
        _, group = heapq.heappop(ready)
        order.extend(members[group])
        for later in after[group]:
            waiting[later] -= 1
            if not waiting[later]:
                heapq.heappush(ready, (key[later], later))
    return order


__all__ = ["Groups", "run_order", "strongly_connected"]
