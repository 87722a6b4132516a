"""Data flows kept apart from the graph: the same links, units, run order and decisions as the edges give."""

from __future__ import annotations

import random

import networkx as nx
import pytest
from ir_builders import dep, launcher, read, slurm_job, synthetic_site, touch, write

from migrate import ir
from migrate.graph import model as gm
from migrate.graph.builder import add_flow_edges, analyze, build_graph, build_graph_and_flows, to_json
from migrate.graph.order import Groups, run_order
from migrate.plan.classify import assess_jobs
from migrate.plan.units import decide_units
from migrate.site.config import SiteConfig
from migrate.vocab import Direction

DIRECTORIES = (
    "/fsx/shared",
    "/fsx/shared/tok",
    "/fsx/shared/tok/v1",
    "/fsx/ckpt",
    "/fsx/ckpt/run-$SLURM_JOB_ID",
    "/fsx/ckpt/run-$SLURM_JOB_ID/last.pt",
    "/fsx/ckpt/sweeps",
    "/lustre/proj/a",
    "/lustre/proj/a/out.bin",
    "/lustre/proj/b",
)


def crowded_site(jobs: int, seed: int) -> list[ir.Job]:
    """Jobs reading and writing a few shared directories: many links, cycles, links at several depths."""
    rng = random.Random(seed)
    train = launcher("torchrun", "train.py")
    out: list[ir.Job] = []
    for n in range(jobs):
        storage = []
        for line in range(rng.randint(0, 4)):
            access = rng.choice((read, write, touch))
            storage.append(access(rng.choice(DIRECTORIES), rng.choice((None, 3 + line, 300 + line))))
        deps = [dep("afterok", f"j{rng.randrange(jobs):03d}")] if rng.random() < 0.1 else []
        if n % 7:
            out.append(slurm_job(f"j{n:03d}", name=f"job{n}", storage=storage, deps=deps))
        else:  # a long pretraining run: stays on Slurm, so its units split
            big = {"nodes": 32, "gpus_per_node": 8, "hours": 48, "exclusive": "node", "launchers": [train]}
            out.append(slurm_job(f"j{n:03d}", name=f"pretrain{n}", storage=storage, deps=deps, **big))
    rng.shuffle(out)
    return out


def reference_units(
    graph: nx.MultiDiGraph, detached: set[str]
) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    """(jobs, run order) of each unit, straight from the edges with networkx."""
    loose = {gm.job_node(j) for j in detached}
    jobs = sorted(n for n, kind in graph.nodes(data="type") if kind == gm.JOB)
    tied, before = nx.Graph(), nx.DiGraph()
    tied.add_nodes_from(jobs)
    before.add_nodes_from(jobs)
    for u, v, kind in graph.edges(data="type"):
        if kind not in gm.UNIT_EDGE_TYPES or v not in tied or u not in tied:
            continue
        if kind == gm.PRODUCES_FOR and (u in loose or v in loose):
            continue
        tied.add_edge(u, v)
        before.add_edge(*((v, u) if kind == gm.DEPENDS_ON else (u, v)))
    condensed = nx.condensation(before)
    members: dict[int, list[str]] = {}
    for job, scc in condensed.graph["mapping"].items():
        members.setdefault(scc, []).append(job)
    order = [
        job
        for scc in nx.lexicographical_topological_sort(condensed, key=lambda s: min(members[s]))
        for job in sorted(members[scc])
    ]
    units = sorted((sorted(c) for c in nx.connected_components(tied)), key=lambda c: c[0])
    return [
        (
            tuple(gm.split_node(j)[1] for j in unit),
            tuple(gm.split_node(j)[1] for j in order if j in set(unit)),
        )
        for unit in units
    ]


@pytest.mark.parametrize("seed", range(6))
def test_flows_tie_units_as_the_edges_do(seed: int) -> None:
    jobs = crowded_site(60, seed)
    full = build_graph(jobs)
    graph, flows = build_graph_and_flows(jobs)
    assert not any(kind == gm.PRODUCES_FOR for _, _, kind in graph.edges(data="type"))
    detached = {f"j{n:03d}" for n in range(0, 60, 17)}
    expected = analyze(full, detached)
    assert analyze(graph, detached, flows) == expected
    assert [(u.jobs, u.order) for u in expected.units] == reference_units(full, detached)


@pytest.mark.parametrize("seed", range(3))
def test_flows_decide_units_as_the_edges_do(seed: int) -> None:
    jobs = crowded_site(40, seed) + synthetic_site(4)
    config = SiteConfig()
    full = build_graph(jobs, config)
    graph, flows = build_graph_and_flows(jobs, config)
    assessed = {a.job_id: a for a in assess_jobs(jobs, Direction.TO_KUBERNETES, config)}
    units = analyze(full).units
    from_edges = decide_units(full, units, assessed, Direction.TO_KUBERNETES, config)
    assert decide_units(graph, units, assessed, Direction.TO_KUBERNETES, config, flows=flows) == from_edges
    assert any(d.bridges for d in from_edges)  # the crowded site has links across the boundary


def test_flow_edges_complete_the_graph() -> None:
    jobs = crowded_site(50, 1) + synthetic_site(3)
    graph, flows = build_graph_and_flows(jobs)
    add_flow_edges(graph, flows)
    assert to_json(graph) == to_json(build_graph(jobs))


def test_links_keep_the_deepest_meeting_point() -> None:
    jobs = [
        slurm_job("a", storage=[write("/fsx/prep/coco/train", 3)]),
        slurm_job("b", storage=[read("/fsx/prep", 4), read("/fsx/prep/coco", 9)]),
    ]
    _, flows = build_graph_and_flows(jobs)
    [link] = flows.links()
    assert (link.producer, link.consumer, link.directory) == ("a", "b", "/fsx/prep/coco")
    assert (link.producer_line, link.consumer_line) == (3, 9)


# ---------------------------------------------------------------------------
# Components and run order on plain lists


@pytest.mark.parametrize("seed", range(20))
def test_run_order_matches_networkx(seed: int) -> None:
    rng = random.Random(seed)
    nodes = rng.randint(1, 30)
    edges = [(rng.randrange(nodes), rng.randrange(nodes)) for _ in range(rng.randint(0, 60))]
    successors: list[list[int]] = [[] for _ in range(nodes)]
    for u, v in edges:
        successors[u].append(v)
    graph = nx.DiGraph()
    graph.add_nodes_from(range(nodes))
    graph.add_edges_from(edges)
    condensed = nx.condensation(graph)
    members = condensed.graph["mapping"]
    first = {scc: min(n for n, s in members.items() if s == scc) for scc in condensed}
    expected = [
        n
        for scc in nx.lexicographical_topological_sort(condensed, key=first.__getitem__)
        for n in sorted(n for n, s in members.items() if s == scc)
    ]
    assert run_order(successors, nodes) == expected
    groups = Groups(nodes)
    for u, v in edges:
        groups.tie((u, v))
    undirected = graph.to_undirected()
    assert groups.members(nodes) == sorted(sorted(c) for c in nx.connected_components(undirected))


def test_waypoints_order_like_the_links_they_stand_for() -> None:
    # 0 and 1 write where 2 and 3 read (through waypoint 4); 3 also writes what 0 reads (waypoint 5)
    successors = [[4], [4], [], [5], [2, 3], [0]]
    links = [[2, 3], [2, 3], [], [0]]
    assert run_order(successors, 4) == run_order(links, 4) == [1, 0, 3, 2]  # 0 and 3 wait for 1
