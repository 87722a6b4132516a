"""Slurm's task layout over a job's nodes and a step's over the job's, as the sandbox (Slurm 22.05,
cons_tres) gave them: each row below was measured there with sbatch and srun."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from migrate.site.task_layout import dealt, job_layout, layout_text


@pytest.mark.parametrize(
    ("tasks", "nodes", "per_node", "capacity", "whole", "expected"),
    [
        (6, 2, None, 4, False, "4,2"),  # 4-CPU nodes, -n 6
        (3, 2, None, 4, False, "2,1"),  # -N 2 -n 3
        (7, 3, None, 4, False, "4,2,1"),  # -N 3 -n 7
        (9, 3, None, 4, False, "4(x2),1"),  # -n 9
        (16, 2, None, 16, False, "15,1"),  # 16-CPU nodes, -N 2 -n 16
        (6, 2, None, 16, False, "5,1"),  # -N 2 -n 6
        (20, 2, None, 16, False, "16,4"),  # -n 20
        (20, 3, None, 8, False, "8(x2),4"),  # -n 20 -c 2
        (7, 3, None, 8, False, "5,1(x2)"),  # -N 3 -n 7 -c 2
        (256, 2, None, 192, False, "192,64"),  # the issue's -n 256 on 192-CPU nodes
        (7, 3, None, 16, True, "3,2(x2)"),  # -N 3 -n 7 --exclusive: dealt in turn
        (16, 2, None, 16, True, "8(x2)"),  # -N 2 -n 16 --exclusive
        (6, 2, 4, 16, False, "4(x2)"),  # -N 2 -n 6 --ntasks-per-node=4: 4 on each
        (3, 2, None, None, False, "2,1"),  # the nodes' size unknown: dealt in turn
    ],
)
def test_the_jobs_layout_is_slurms(
    tasks: int, nodes: int, per_node: int | None, capacity: int | None, whole: bool, expected: str
) -> None:
    layout = job_layout(tasks, nodes, per_node, capacity, whole)
    even = -(-tasks // nodes) if per_node is None else per_node
    assert layout_text(layout or [even] * nodes) == expected


@pytest.mark.parametrize(
    ("tasks", "bounds", "expected"),
    [
        (6, (4, 4), (3, 3)),  # srun -n 6 in 4,4
        (5, (4, 2), (3, 2)),
        (5, (4, 2, 1), (2, 2, 1)),
        (4, (15, 1), (3, 1)),  # srun -n 4 in 15,1
        (18, (16, 4), (14, 4)),  # srun -n 18 in 16,4
        (7, (10, 2, 2), (3, 2, 2)),  # srun in 5,1,1 of -c 2: srun 22.05 counts one CPU a task
        (7, (5, 1, 1), (5, 1, 1)),  # srun -c 2 there
        (6, (3, 1, 1), (4, 1, 1)),  # beyond every node's CPUs: dealt over all (Slurm refuses)
    ],
)
def test_a_steps_tasks_are_dealt_in_turn_within_each_nodes_cpus(
    tasks: int, bounds: tuple[int, ...], expected: tuple[int, ...]
) -> None:
    assert dealt(tasks, bounds) == expected


def test_layout_text_is_slurms_compressed_spelling() -> None:
    assert layout_text((4, 4, 1)) == "4(x2),1"
    assert layout_text((1, 2, 2, 2)) == "1,2(x3)"
    assert layout_text((8,)) == "8"


@given(
    tasks=st.integers(1, 2000),
    nodes=st.integers(1, 16),
    capacity=st.one_of(st.none(), st.integers(1, 256)),
    whole=st.booleans(),
)
def test_a_layout_holds_every_task_once_and_gives_each_node_one(
    tasks: int, nodes: int, capacity: int | None, whole: bool
) -> None:
    layout = job_layout(tasks, nodes, None, capacity, whole)
    if not layout:
        return
    assert sum(layout) == tasks and len(layout) == nodes and min(layout) >= 1
    assert len(set(layout)) > 1  # () stands for an even one
    if capacity and not whole and capacity * nodes >= tasks:
        assert max(layout) <= capacity
        assert list(layout) == sorted(layout, reverse=True)  # node 0 filled first
