"""Read the inventory out of an AWS ParallelCluster v3 cluster configuration (YAML).

Each ``Scheduling.SlurmQueues[]`` entry is a Slurm partition named by its
``Name``. Its nodes are the sum of ``MaxCount`` over its ``ComputeResources``
(``MaxCount`` is what the queue can grow to: the capacity; ``MinCount`` nodes
are merely kept running). What one node holds comes from the instance type
(``InstanceType``, or the first of ``Instances[].InstanceType``) through the
small table below; a type not in it is counted as nodes and named in a note as
"unknown instance type". ``DisableSimultaneousMultithreading`` halves the vCPUs.
The first queue is Slurm's default partition (ParallelCluster writes it with
``Default=YES``); a compute resource with ``Efa: {Enabled: true}`` gives its
nodes the instance type's EFA interfaces as ``vpc.amazonaws.com/efa`` devices;
``SlurmSettings.EnableMemoryBasedScheduling`` (false unless set) says whether
Slurm counts memory.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from migrate.diagnostics import Collector
from migrate.render import plural
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
    efa: int = 0  # EFA network interfaces the instance supports (the vpc.amazonaws.com/efa devices)
    neuron: int = 0  # Trainium/Inferentia devices (the aws.amazon.com/neuron devices of the Neuron plugin)


def _family(
    sizes: Mapping[str, tuple[int, int, int, int]], prefix: str, gpu_type: str | None
) -> dict[str, InstanceType]:
    return {
        f"{prefix}.{size}": InstanceType(gpus, gpu_type if gpus else None, vcpus, mem, efa)
        for size, (gpus, vcpus, mem, efa) in sizes.items()
    }


# Instance type -> GPUs, GPU type, vCPUs, memory (GiB), EFA interfaces, from the EC2 instance
# type pages. Trainium chips are not GPUs: trn1 nodes count 0 GPUs (their jobs ask for
# aws.amazon.com/neuron).
INSTANCE_TYPES: dict[str, InstanceType] = {
    "p5.48xlarge": InstanceType(8, "h100", 192, 2048, 32),
    "p5e.48xlarge": InstanceType(8, "h200", 192, 2048, 32),
    "p5en.48xlarge": InstanceType(8, "h200", 192, 2048, 16),
    "p4d.24xlarge": InstanceType(8, "a100", 96, 1152, 4),
    "p4de.24xlarge": InstanceType(8, "a100", 96, 1152, 4),  # the 80 GB A100
    "trn1.2xlarge": InstanceType(0, None, 8, 32, neuron=1),
    "trn1.32xlarge": InstanceType(0, None, 128, 512, 8, neuron=16),
    "trn1n.32xlarge": InstanceType(0, None, 128, 512, 16, neuron=16),
    **_family(
        {
            "xlarge": (1, 4, 16, 0),
            "2xlarge": (1, 8, 32, 0),
            "4xlarge": (1, 16, 64, 0),
            "8xlarge": (1, 32, 128, 1),
            "16xlarge": (1, 64, 256, 1),
            "12xlarge": (4, 48, 192, 1),
            "24xlarge": (4, 96, 384, 1),
            "48xlarge": (8, 192, 768, 1),
        },
        "g5",
        "a10g",
    ),
    **_family(
        {
            "xlarge": (1, 4, 32, 0),
            "2xlarge": (1, 8, 64, 0),
            "4xlarge": (1, 16, 128, 0),
            "8xlarge": (1, 32, 256, 1),
            "16xlarge": (1, 64, 512, 1),
            "12xlarge": (4, 48, 384, 1),
            "24xlarge": (4, 96, 768, 2),
            "48xlarge": (8, 192, 1536, 4),
        },
        "g6e",
        "l40s",
    ),
    **_family(
        {
            "12xlarge": (0, 24, 768, 2),
            "24xlarge": (0, 48, 768, 2),
            "48xlarge": (0, 96, 768, 2),
            "96xlarge": (0, 192, 768, 2),
        },
        "hpc7a",
        None,
    ),
    **_family(
        {
            "large": (0, 2, 4, 0),
            "xlarge": (0, 4, 8, 0),
            "2xlarge": (0, 8, 16, 0),
            "4xlarge": (0, 16, 32, 0),
            "8xlarge": (0, 32, 64, 0),
            "12xlarge": (0, 48, 96, 0),
            "16xlarge": (0, 64, 128, 0),
            "24xlarge": (0, 96, 192, 0),
            "32xlarge": (0, 128, 256, 1),
            "metal": (0, 128, 256, 1),
        },
        "c6i",
        None,
    ),
}
EFA_RESOURCE = "vpc.amazonaws.com/efa"  # the extended resource the EFA device plugin advertises


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
    memory = _memory_scheduling(scheduling, path)
    partitions = [_queue(q, i, notes, path, memory) for i, q in enumerate(queues)]
    return Inventory(path, PARALLELCLUSTER, tuple(p for p in partitions if p is not None), tuple(notes))


def _memory_scheduling(scheduling: Mapping[str, Any], path: str) -> tuple[bool, str]:
    """Whether Slurm counts memory: SlurmSettings.EnableMemoryBasedScheduling, false unless set."""
    settings = scheduling.get("SlurmSettings")
    value = settings.get("EnableMemoryBasedScheduling") if isinstance(settings, dict) else None
    if value is True:
        return True, f"EnableMemoryBasedScheduling: true in {path}"
    return False, f"EnableMemoryBasedScheduling {'false' if value is False else 'not set (false)'} in {path}"


def _queue(
    queue: object, index: int, notes: list[str], path: str, memory: tuple[bool, str]
) -> InventoryPartition | None:
    where = f"SlurmQueues[{index}]"
    if not isinstance(queue, dict) or not isinstance(queue.get("Name"), str):
        notes.append(f"{where}: no Name; skipped")
        return None
    name = queue["Name"]
    resources = queue.get("ComputeResources")
    if not isinstance(resources, list) or not resources:
        notes.append(f"queue {name}: no ComputeResources; skipped")
        return None
    counted: list[tuple[int, InstanceType | None, str, bool]] = []
    for position, resource in enumerate(resources):
        found = _compute_resource(resource, f"queue {name} ComputeResources[{position}]", notes)
        if found is not None:
            counted.append(found)
    if not counted:
        return None
    nodes = sum(count for count, _, _, _ in counted)
    known = [(count, kind) for count, kind, _, _ in counted if kind is not None]
    # One queue may mix instance types; plan with the one that has the most nodes.
    weights: Counter[InstanceType] = Counter()
    for count, kind in known:
        weights[kind] += count
    main = max(weights.items(), key=lambda kv: (kv[1], kv[0].gpus, kv[0].vcpus))[0] if weights else None
    if len(known) < len(counted):
        main = None  # an unknown type among them: what a node holds is not known for the queue
    if len({k.gpus for _, k in known}) > 1 and main is not None:
        notes.append(f"queue {name} mixes instance types with different GPU counts; planned as {main.gpus}")
    label = next((lab for _, kind, lab, _ in counted if kind == main), "")
    origins = {"nodes": f"queue {name} in {path} (MaxCount)"}
    if main is not None:
        origins |= dict.fromkeys(
            ("gpus_per_node", "gpu_type", "cpus_per_node", "mem_gb"), f"{label} of queue {name} in {path}"
        )
    if index == 0:
        origins["default"] = f"the first queue of {path} (ParallelCluster's default partition)"
    origins["memory_scheduled"] = memory[1]
    efa = _efa_devices(counted, main, name, path)
    if efa:
        origins["devices"] = efa[1]
    return InventoryPartition(
        name=name,
        nodes=nodes,
        gpus_per_node=main.gpus if main is not None else None,
        gpu_type=main.gpu_type if main is not None else None,
        cpus_per_node=main.vcpus if main is not None else None,
        mem_gb=main.mem_gib if main is not None else None,
        default=index == 0,  # Slurm's default partition is the first queue of the configuration
        detail=", ".join(f"{lab} x {count}" for count, _, lab, _ in counted) + " (MaxCount)",
        memory_scheduled=memory[0],
        devices=((EFA_RESOURCE, main.efa),) if efa and main is not None else (),
        origins=tuple(sorted(origins.items())),
    )


def _efa_devices(
    counted: list[tuple[int, InstanceType | None, str, bool]],
    main: InstanceType | None,
    name: str,
    path: str,
) -> tuple[int, str] | None:
    """The EFA interfaces of the queue's main instance type, when its compute resource enables EFA."""
    for _, kind, label, enabled in counted:
        if kind is None or kind != main or not kind.efa:
            continue
        if enabled:  # without Efa.Enabled the interfaces are not attached: no devices
            return kind.efa, f"{label} ({kind.efa} EFA interfaces) with Efa.Enabled in queue {name} of {path}"
        return None
    return None


def _compute_resource(
    resource: object, where: str, notes: list[str]
) -> tuple[int, InstanceType | None, str, bool] | None:
    """(MaxCount, what one node holds or None when the type is unknown, the instance type, EFA enabled)."""
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
        notes.append(
            f"{where}: unknown instance type {instance}: {plural(max_count, 'node')} counted, GPUs unknown"
        )
    elif resource.get("DisableSimultaneousMultithreading") is True and not instance.startswith("hpc"):
        kind = InstanceType(
            kind.gpus, kind.gpu_type, kind.vcpus // 2, kind.mem_gib, kind.efa
        )  # hpc7a: no SMT
    efa = resource.get("Efa")
    return max_count, kind, instance, isinstance(efa, dict) and efa.get("Enabled") is True


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
    "EFA_RESOURCE",
    "INSTANCE_TYPES",
    "InstanceType",
    "looks_like_parallelcluster",
    "parse_parallelcluster",
]
