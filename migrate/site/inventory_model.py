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
    # The site's defaults for jobs that do not ask (see ``PartitionConfig``): MiB, CPUs, seconds.
    def_mem_per_cpu_mb: int | None = None
    def_mem_per_node_mb: int | None = None
    def_mem_per_gpu_mb: int | None = None
    def_cpu_per_gpu: int | None = None
    default_time_s: int | None = None
    max_time_s: int | None = None
    memory_scheduled: bool | None = None
    devices: tuple[tuple[str, int], ...] = ()  # node devices: vpc.amazonaws.com/efa -> 32
    # key -> where in the file it was read ("slurm.conf line 12 (NodeName=gpu-[001-016])")
    origins: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Inventory:
    path: str
    format: str  # SLURM_CONF or PARALLELCLUSTER
    partitions: tuple[InventoryPartition, ...]
    notes: tuple[str, ...] = ()  # what the plan warns about: includes not followed, unknown types ...
    # The controller's settings (ClusterName, SlurmctldHost, SlurmctldPort, AuthType ...) -> (value, line):
    # what an operator running Slurm in Kubernetes against this controller must match.
    controller: tuple[tuple[str, tuple[str, int]], ...] = ()
    # Where JobFileAppend=1 is set ("slurm.conf line 7"): jobs without --open-mode append to their
    # output files; None, Slurm's default, truncates them.
    job_file_append: str | None = None


__all__ = ["PARALLELCLUSTER", "SLURM_CONF", "Inventory", "InventoryError", "InventoryPartition"]
