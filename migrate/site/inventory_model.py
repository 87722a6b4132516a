"""What an inventory file says about each partition, shared by the slurm.conf and ParallelCluster readers."""

from __future__ import annotations

from dataclasses import dataclass

SLURM_CONF = "slurm.conf"
PARALLELCLUSTER = "parallelcluster"


class InventoryError(ValueError):
    """The file cannot be used as an inventory; the message says why."""


@dataclass(frozen=True)
class InventoryPartition:
    name: str
    nodes: int
    gpus_per_node: int | None = None  # None: unknown (an instance type not in the table)
    gpu_type: str | None = None
    cpus_per_node: int | None = None
    mem_gb: int | None = None
    default: bool = False  # slurm.conf Default=YES: where jobs without -p go
    detail: str = ""  # where the numbers come from, for plan.json


@dataclass(frozen=True)
class Inventory:
    path: str
    format: str  # SLURM_CONF or PARALLELCLUSTER
    partitions: tuple[InventoryPartition, ...]
    notes: tuple[str, ...] = ()  # what the plan warns about: includes not followed, unknown types ...


__all__ = ["PARALLELCLUSTER", "SLURM_CONF", "Inventory", "InventoryError", "InventoryPartition"]
