"""What Slurm gives a job, value by value, each with where it comes from.

The records ``migrate.site.allocation.allocate`` returns. Every value is a
``Sourced``: the value and its ``Provenance``, a source kind and a detail
such as ``--gres=gpu:8 (line 4)`` or ``DefMemPerCPU=4096 in slurm.conf line
3``. The kinds follow Slurm's order of precedence (``docs/allocation.md``).

Named tuples, not dataclasses: a site of 100,000 jobs builds a million of
them, and a tuple is made several times faster.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Generic, NamedTuple, TypeVar

from migrate.devices import short_name

T = TypeVar("T")


class Source(StrEnum):
    """Where a value of the allocation comes from, highest precedence first."""

    OPTION = "option"  # the job's own options (#SBATCH, the pod's requests)
    PARTITION = "partition"  # the partition's entry in migrate.yaml
    INVENTORY = "inventory"  # the node type from an inventory file (slurm.conf, ParallelCluster)
    SITE_DEFAULT = "site-default"  # DefMemPerCPU, DefaultTime ..., or Slurm's own default
    EXCLUSIVE = "exclusive"  # --exclusive: all CPUs, GRES and devices of each node
    INFERRED = "inferred"  # a hint in the script (GPUS_PER_NODE=8 feeding torchrun)
    ASSUMED = "assumed"  # nothing tells: a documented assumption


class Provenance(NamedTuple):
    source: Source
    detail: str

    def to_dict(self) -> dict[str, str]:
        return {"source": self.source.value, "detail": self.detail}


class Sourced(NamedTuple, Generic[T]):
    value: T
    provenance: Provenance

    @property
    def source(self) -> Source:
        return self.provenance.source

    @property
    def detail(self) -> str:
        return self.provenance.detail

    def to_dict(self) -> dict[str, Any]:
        value: Any = self.value
        if isinstance(value, tuple) and hasattr(value, "_asdict"):
            value = value._asdict()
        return {"value": value, **self.provenance.to_dict()}


class Device(NamedTuple):
    """A node device or GRES: a Kubernetes extended resource, or a Slurm GRES name ``gres:`` maps."""

    name: str
    quantity: int
    type: str | None = None


class NodeType(NamedTuple):
    """What one node of the partition holds; ``None`` where nobody says."""

    cpus: Sourced[int | None]
    mem_mb: Sourced[int | None]
    gpus: Sourced[int | None]
    gpu_type: Sourced[str | None]
    devices: tuple[Sourced[Device], ...] = ()


class FabricKind(StrEnum):
    """A fast network a script tunes for through its variables."""

    EFA = "efa"  # AWS Elastic Fabric Adapter: FI_PROVIDER=efa, FI_EFA_*
    INFINIBAND = "infiniband"  # NCCL_IB_*


class FabricUse(NamedTuple):
    """A variable that tunes a fast network: the job wants devices the pod must request."""

    kind: FabricKind
    variable: str  # FI_PROVIDER=efa
    line: int | None


class ComponentAllocation(NamedTuple):
    """One component (a hetjob part, or the whole job) as Slurm would allocate it."""

    name: str
    nodes: Sourced[int]
    nodes_max: int
    tasks: Sourced[int]
    tasks_per_node: Sourced[int]
    cpus_per_task: Sourced[int]
    cpus_per_node: Sourced[int]
    # MiB per node; None: not limited (Slurm does not count memory) or the node's size is unknown
    mem_per_node_mb: Sourced[int | None]
    gpus_per_node: Sourced[int]
    gpu_type: Sourced[str | None]
    gres: tuple[Sourced[Device], ...]  # other GRES the job asked for, per node
    devices: tuple[Sourced[Device], ...]  # node devices the job gets (EFA interfaces ...)
    whole_node: bool  # --exclusive: the nodes are the job's alone
    whole_node_memory: bool  # --mem=0, or no memory default: all of each node's memory
    node: NodeType | None  # the node type of the partition, when the site describes it
    fabric: tuple[FabricUse, ...]  # fast-network variables the script sets
    exceeds: tuple[str, ...]  # what the job asks beyond a node of its partition: Slurm would refuse it
    notes: tuple[str, ...]  # what the reader of the allocation should know (GPU count unknown ...)
    replicas: int = 1  # copies of the component (the replicas of a Kubernetes role)
    # A Kubernetes role: its pods, how many share a node, and the device resource ``gpus_per_node``
    # counts when that is not a GPU (aws.amazon.com/neuron); see ``pod_allocation``.
    pods: int = 0
    pods_per_node: Sourced[int] | None = None
    accelerator: str | None = None
    # the tasks on each node where Slurm does not give every node the same count (15,1); see
    # ``migrate.site.task_layout``. () where it does: ``tasks_per_node`` on every node.
    task_layout: tuple[int, ...] = ()

    @property
    def gpus(self) -> int:
        return self.gpus_per_node.value * self.nodes.value * self.replicas

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name}
        if self.replicas != 1:
            out["replicas"] = self.replicas
        if self.pods_per_node is not None:
            out["pods"] = self.pods
            out["pods_per_node"] = self.pods_per_node.to_dict()
        if self.accelerator:
            out["accelerator"] = self.accelerator
        for key in (
            "nodes",
            "tasks",
            "tasks_per_node",
            "cpus_per_task",
            "cpus_per_node",
            "mem_per_node_mb",
            "gpus_per_node",
            "gpu_type",
        ):
            out[key] = getattr(self, key).to_dict()
        if self.task_layout:
            out["task_layout"] = list(self.task_layout)
        if self.nodes_max != self.nodes.value:
            out["nodes_max"] = self.nodes_max
        out["whole_node"] = self.whole_node
        out["whole_node_memory"] = self.whole_node_memory
        if self.gres:
            out["gres"] = [g.to_dict() for g in self.gres]
        if self.devices:
            out["devices"] = [d.to_dict() for d in self.devices]
        if self.fabric:
            out["fabric"] = [f._asdict() for f in self.fabric]
        if self.exceeds:
            out["exceeds"] = list(self.exceeds)
        if self.notes:
            out["notes"] = list(self.notes)
        return out


class JobAllocation(NamedTuple):
    job_id: str
    partition: Sourced[str | None]
    time_limit_s: Sourced[int]
    components: tuple[ComponentAllocation, ...]
    notes: tuple[str, ...] = ()

    def total_nodes(self) -> int:
        return sum(c.nodes.value * c.replicas for c in self.components)

    def total_gpus(self) -> int:
        return sum(c.gpus for c in self.components)

    @property
    def assumed(self) -> tuple[str, ...]:
        """The values no source tells, by name: what plan.json flags as assumed."""
        found = ["time_limit"] if self.time_limit_s.source == Source.ASSUMED else []
        for comp in self.components:
            for key in ("nodes", "cpus_per_node", "mem_per_node_mb", "gpus_per_node"):
                if getattr(comp, key).source == Source.ASSUMED and key not in found:
                    found.append(key)
        return tuple(found)

    def summary(self) -> dict[str, Any]:
        """The job's allocation in a few values, each with its source (plan.json ``jobs[].allocation``).

        ``nodes`` counts every component; the per-node values are those of the main
        component (the one with the most GPUs, then nodes). ``details`` says where each
        value came from that the job's own options did not give.
        """
        main = max(self.components, key=lambda c: (c.gpus_per_node.value, c.nodes.value * c.replicas))
        nodes = Sourced(self.total_nodes(), main.nodes.provenance)
        values: list[tuple[str, Sourced[Any]]] = [
            ("partition", self.partition),
            ("nodes", nodes),
            ("cpus_per_node", main.cpus_per_node),
            ("mem_per_node_mb", main.mem_per_node_mb),
            ("gpus_per_node", main.gpus_per_node),
            ("time_limit_s", self.time_limit_s),
        ]
        out: dict[str, Any] = {key: {"value": v.value, "source": v.source.value} for key, v in values}
        if main.gpu_type.value:
            out["gpu_type"] = main.gpu_type.value
        # every component's: GPUs, and accelerators that are not GPUs by device name
        out["gpus"] = sum(c.gpus for c in self.components if not c.accelerator)
        accelerators: dict[str, int] = {}
        for comp in self.components:
            if comp.accelerator:
                name = short_name(comp.accelerator)
                accelerators[name] = accelerators.get(name, 0) + comp.gpus
        if accelerators:
            out["accelerators"] = accelerators
        if len(self.components) > 1:
            out["components"] = len(self.components)
        details = {key: v.detail for key, v in values if v.source != Source.OPTION and v.detail}
        if details:
            out["details"] = details
        return out

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "job": self.job_id,
            "partition": self.partition.to_dict(),
            "time_limit_s": self.time_limit_s.to_dict(),
            "components": [c.to_dict() for c in self.components],
        }
        if self.notes:
            out["notes"] = list(self.notes)
        return out


__all__ = [
    "ComponentAllocation",
    "Device",
    "FabricKind",
    "FabricUse",
    "JobAllocation",
    "NodeType",
    "Provenance",
    "Source",
    "Sourced",
]
