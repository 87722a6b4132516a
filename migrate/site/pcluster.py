"""Read the inventory out of an AWS ParallelCluster v3 cluster configuration (YAML).

Each ``Scheduling.SlurmQueues[]`` entry is a Slurm partition named by its
``Name``. Its nodes are the sum of ``MaxCount`` over its ``ComputeResources``
(``MaxCount`` is what the queue can grow to: the capacity; ``MinCount`` nodes
are merely kept running). What one node holds comes from the instance type
(``InstanceType``, or the first of ``Instances[].InstanceType``) through the
small table below; a type not in it is counted as nodes and named in a note as
"unknown instance type". ``DisableSimultaneousMultithreading`` halves the vCPUs.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from migrate.diagnostics import Collector
from migrate.site.inventory_model import PARALLELCLUSTER, Inventory, InventoryError, InventoryPartition
from migrate.vocab import Format
from migrate.yamlload import load_documents

DEFAULT_MAX_COUNT = 10  # ParallelCluster v3's default for ComputeResources[].MaxCount
_LOOKS_LIKE = re.compile(r"^Scheduling:", re.MULTILINE)


@dataclass(frozen=True)
class InstanceType:
    gpus: int
    gpu_type: str | None
    vcpus: int
    mem_gib: int


def _family(
    sizes: Mapping[str, tuple[int, int, int]], prefix: str, gpu_type: str | None
) -> dict[str, InstanceType]:
    return {
        f"{prefix}.{size}": InstanceType(gpus, gpu_type if gpus else None, vcpus, mem)
        for size, (gpus, vcpus, mem) in sizes.items()
    }


# Instance type -> GPUs, GPU type, vCPUs, memory (GiB), from the EC2 instance type pages.
# Trainium chips are not GPUs: trn1 nodes count 0 GPUs (their jobs ask for aws.amazon.com/neuron).
INSTANCE_TYPES: dict[str, InstanceType] = {
    "p5.48xlarge": InstanceType(8, "h100", 192, 2048),
    "p5e.48xlarge": InstanceType(8, "h200", 192, 2048),
    "p5en.48xlarge": InstanceType(8, "h200", 192, 2048),
    "p4d.24xlarge": InstanceType(8, "a100", 96, 1152),
    "p4de.24xlarge": InstanceType(8, "a100", 96, 1152),  # the 80 GB A100
    "trn1.2xlarge": InstanceType(0, None, 8, 32),
    "trn1.32xlarge": InstanceType(0, None, 128, 512),
    "trn1n.32xlarge": InstanceType(0, None, 128, 512),
    **_family(
        {
            "xlarge": (1, 4, 16),
            "2xlarge": (1, 8, 32),
            "4xlarge": (1, 16, 64),
            "8xlarge": (1, 32, 128),
            "16xlarge": (1, 64, 256),
            "12xlarge": (4, 48, 192),
            "24xlarge": (4, 96, 384),
            "48xlarge": (8, 192, 768),
        },
        "g5",
        "a10g",
    ),
    **_family(
        {
            "xlarge": (1, 4, 32),
            "2xlarge": (1, 8, 64),
            "4xlarge": (1, 16, 128),
            "8xlarge": (1, 32, 256),
            "16xlarge": (1, 64, 512),
            "12xlarge": (4, 48, 384),
            "24xlarge": (4, 96, 768),
            "48xlarge": (8, 192, 1536),
        },
        "g6e",
        "l40s",
    ),
    **_family(
        {
            "12xlarge": (0, 24, 768),
            "24xlarge": (0, 48, 768),
            "48xlarge": (0, 96, 768),
            "96xlarge": (0, 192, 768),
        },
        "hpc7a",
        None,
    ),
    **_family(
        {
            "large": (0, 2, 4),
            "xlarge": (0, 4, 8),
            "2xlarge": (0, 8, 16),
            "4xlarge": (0, 16, 32),
            "8xlarge": (0, 32, 64),
            "12xlarge": (0, 48, 96),
            "16xlarge": (0, 64, 128),
            "24xlarge": (0, 96, 192),
            "32xlarge": (0, 128, 256),
            "metal": (0, 128, 256),
        },
        "c6i",
        None,
    ),
}


def looks_like_parallelcluster(text: str) -> bool:
    return _LOOKS_LIKE.search(text) is not None and "SlurmQueues" in text


def parse_parallelcluster(text: str, path: str) -> Inventory:
    diags = Collector(path)
    documents = load_documents(text, diags)  # bounded: no alias bomb or deep nesting gets through
    if not documents:
        problem = diags.items[0].message if diags.items else "empty"
        raise InventoryError(f"{path}: not readable as YAML: {problem}")
    config = documents[0].data
    scheduling = config.get("Scheduling") if isinstance(config, dict) else None
    if not isinstance(scheduling, dict):
        raise InventoryError(f"{path}: no Scheduling section; is it a ParallelCluster v3 configuration?")
    scheduler = str(scheduling.get("Scheduler", Format.SLURM))
    if scheduler.lower() != Format.SLURM:
        raise InventoryError(f"{path}: Scheduler is {scheduler}, not slurm: no Slurm partitions to plan with")
    queues = scheduling.get("SlurmQueues")
    if not isinstance(queues, list):
        raise InventoryError(f"{path}: Scheduling.SlurmQueues is not a list of queues")
    notes: list[str] = []
    partitions = [_queue(q, i, notes) for i, q in enumerate(queues)]
    return Inventory(path, PARALLELCLUSTER, tuple(p for p in partitions if p is not None), tuple(notes))


def _queue(queue: object, index: int, notes: list[str]) -> InventoryPartition | None:
    where = f"SlurmQueues[{index}]"
    if not isinstance(queue, dict) or not isinstance(queue.get("Name"), str):
        notes.append(f"{where}: no Name; skipped")
        return None
    name = queue["Name"]
    resources = queue.get("ComputeResources")
    if not isinstance(resources, list) or not resources:
        notes.append(f"queue {name}: no ComputeResources; skipped")
        return None
    counted: list[tuple[int, InstanceType | None, str]] = []
    for position, resource in enumerate(resources):
        found = _compute_resource(resource, f"queue {name} ComputeResources[{position}]", notes)
        if found is not None:
            counted.append(found)
    if not counted:
        return None
    nodes = sum(count for count, _, _ in counted)
    known = [(count, kind) for count, kind, _ in counted if kind is not None]
    # One queue may mix instance types; plan with the one that has the most nodes.
    weights: Counter[InstanceType] = Counter()
    for count, kind in known:
        weights[kind] += count
    main = max(weights.items(), key=lambda kv: (kv[1], kv[0].gpus, kv[0].vcpus))[0] if weights else None
    if len(known) < len(counted):
        main = None  # an unknown type among them: what a node holds is not known for the queue
    if len({k.gpus for _, k in known}) > 1 and main is not None:
        notes.append(f"queue {name} mixes instance types with different GPU counts; planned as {main.gpus}")
    return InventoryPartition(
        name=name,
        nodes=nodes,
        gpus_per_node=main.gpus if main is not None else None,
        gpu_type=main.gpu_type if main is not None else None,
        cpus_per_node=main.vcpus if main is not None else None,
        mem_gb=main.mem_gib if main is not None else None,
        detail=", ".join(f"{label} x {count}" for count, _, label in counted) + " (MaxCount)",
    )


def _compute_resource(
    resource: object, where: str, notes: list[str]
) -> tuple[int, InstanceType | None, str] | None:
    """(MaxCount, what one node holds or None when the type is unknown, the instance type)."""
    if not isinstance(resource, dict):
        notes.append(f"{where}: not a mapping; skipped")
        return None
    instance = _instance_type(resource)
    if instance is None:
        notes.append(f"{where}: no InstanceType or Instances[].InstanceType; skipped")
        return None
    max_count = resource.get("MaxCount", DEFAULT_MAX_COUNT)
    if isinstance(max_count, bool) or not isinstance(max_count, int) or max_count < 0:
        notes.append(f"{where}: MaxCount {max_count!r} is not a count; skipped")
        return None
    kind = INSTANCE_TYPES.get(instance.lower())
    if kind is None:
        notes.append(f"{where}: unknown instance type {instance}: {max_count} node(s) counted, GPUs unknown")
    elif resource.get("DisableSimultaneousMultithreading") is True and not instance.startswith("hpc"):
        kind = InstanceType(kind.gpus, kind.gpu_type, kind.vcpus // 2, kind.mem_gib)  # hpc7a has no SMT
    return max_count, kind, instance


def _instance_type(resource: Mapping[str, Any]) -> str | None:
    single = resource.get("InstanceType")
    if isinstance(single, str) and single:
        return single
    flexible = resource.get("Instances")
    for entry in flexible if isinstance(flexible, list) else []:
        if isinstance(entry, dict) and isinstance(entry.get("InstanceType"), str):
            return str(entry["InstanceType"])  # ParallelCluster requires the same vCPUs and GPUs for all
    return None


__all__ = [
    "DEFAULT_MAX_COUNT",
    "INSTANCE_TYPES",
    "InstanceType",
    "looks_like_parallelcluster",
    "parse_parallelcluster",
]
