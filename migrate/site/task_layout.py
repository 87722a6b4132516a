"""How Slurm lays a job's tasks out over its nodes, and a step's tasks over the job's.

Measured on Slurm 22.05 (select/cons_tres, CR_Core_Memory); ``docs/allocation.md``, "Tasks
per node":

- the job (``SLURM_TASKS_PER_NODE``): every node gets one task, then node 0 takes tasks up to
  what its CPUs hold (CPUs / ``--cpus-per-task``), then node 1, and so on: ``-N 2 -n 16`` on
  16-CPU nodes gives 15,1 and ``-n 256`` on 192-CPU nodes 192,64. ``--ntasks-per-node`` gives
  that many on every node; ``--exclusive`` (whole nodes) deals the tasks round-robin (3,2,2);
- a step (``srun -n K`` inside the job): its tasks are dealt round-robin over the nodes, none
  beyond the CPUs the job holds there (16,4 with ``-n 18`` gives 14,4); the step's own
  ``--cpus-per-task`` counts, not the job's, which srun 22.05 does not inherit.
"""

from __future__ import annotations


def job_layout(
    tasks: int | None,
    nodes: int,
    tasks_per_node: int | None,
    node_capacity: int | None,
    whole_nodes: bool,
) -> tuple[int, ...]:
    """The tasks on each node of the job; () where every node holds the same count.

    ``node_capacity``: the tasks a node's CPUs hold (None: the site does not say, and the tasks
    are dealt evenly, as Slurm deals them where the nodes hold them all at once).
    """
    if not tasks or nodes <= 1 or tasks <= nodes or tasks_per_node:
        return ()
    if whole_nodes or not node_capacity or node_capacity * nodes < tasks:
        layout = dealt(tasks, (None,) * nodes)
    else:
        counts = [1] * nodes
        left = tasks - nodes
        for k in range(nodes):
            more = min(left, node_capacity - 1)
            counts[k] += more
            left -= more
        layout = tuple(counts)
    return layout if len(set(layout)) > 1 else ()


def dealt(tasks: int, bounds: tuple[int | None, ...]) -> tuple[int, ...]:
    """``tasks`` dealt round-robin over nodes, each up to its bound (None: no bound); what is left
    once every node is full is dealt over all of them (Slurm would refuse such a step)."""
    counts = [0] * len(bounds)
    left = tasks
    while left:
        placed = False
        for k, bound in enumerate(bounds):
            if left and (bound is None or counts[k] < bound):
                counts[k] += 1
                left -= 1
                placed = True
        if not placed:
            for k in range(len(bounds)):
                share = left // len(bounds) + (1 if k < left % len(bounds) else 0)
                counts[k] += share
            left = 0
    return tuple(counts)


def layout_text(counts: tuple[int, ...] | list[int]) -> str:
    """Slurm's compressed spelling of a count per node: ``15,1``, ``4(x2),1``."""
    parts: list[str] = []
    k = 0
    while k < len(counts):
        run = 1
        while k + run < len(counts) and counts[k + run] == counts[k]:
            run += 1
        parts.append(f"{counts[k]}(x{run})" if run > 1 else str(counts[k]))
        k += run
    return ",".join(parts)
