"""Cluster inventory from the cluster's own files, merged into the partitions of ``migrate.yaml``.

Two kinds of file, told apart by content: a ``slurm.conf`` (``slurmconf``)
and an AWS ParallelCluster v3 cluster configuration (``pcluster``).
Each gives, per partition (a ParallelCluster queue is a Slurm partition), the
node count and what one node has: GPUs and their type, CPUs, memory.

Merging: a value written in ``migrate.yaml`` wins; a value it leaves out is
filled from the first inventory file that has it; a partition only the
inventory knows is added (without a Kubernetes queue: only ``migrate.yaml``
can say that). Every disagreement becomes a plan warning naming both sources.
Memory counts as agreeing within 10 %: ``RealMemory`` is what Slurm may hand
out, a little under what the machine has.

Example::

    inventory = parse_inventory(Path("slurm.conf").read_text(), "slurm.conf")
    config, warnings = merge_inventory(site_config, [inventory])
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import replace

from migrate.site.config import PartitionConfig, SiteConfig
from migrate.site.inventory_model import (
    PARALLELCLUSTER,
    SLURM_CONF,
    Inventory,
    InventoryError,
    InventoryPartition,
)
from migrate.site.pcluster import looks_like_parallelcluster, parse_parallelcluster
from migrate.site.slurmconf import looks_like_slurm_conf, parse_slurm_conf

FILLED = (
    "nodes",
    "gpus_per_node",
    "gpu_type",
    "cpus_per_node",
    "mem_gb",
    "default",
    "def_mem_per_cpu_mb",
    "def_mem_per_node_mb",
    "def_mem_per_gpu_mb",
    "def_cpu_per_gpu",
    "default_time_s",
    "max_time_s",
    "memory_scheduled",
    "devices",
)
MEMORY_TOLERANCE = 0.10


def parse_inventory(text: str, path: str) -> Inventory:
    """A slurm.conf or a ParallelCluster config, by content; ``InventoryError`` for anything else."""
    if looks_like_parallelcluster(text):
        return parse_parallelcluster(text, path)
    if looks_like_slurm_conf(text):
        return parse_slurm_conf(text, path)
    raise InventoryError(
        f"{path}: neither a slurm.conf (NodeName= and PartitionName= lines) nor an AWS ParallelCluster "
        "v3 configuration (Scheduling: SlurmQueues:)"
    )


def merge_inventory(config: SiteConfig, inventories: Sequence[Inventory]) -> tuple[SiteConfig, list[str]]:
    """``config`` with its partitions completed from the inventories, and the warnings that raised."""
    warnings = [f"inventory {inv.path}: {note}" for inv in inventories for note in inv.notes]
    if not inventories:
        return config, warnings
    claims: dict[str, list[tuple[str, InventoryPartition]]] = defaultdict(list)
    for inv in inventories:
        for part in inv.partitions:
            claims[part.name].append((inv.path, part))
    merged = dict(config.partitions)
    yaml_name = config.source or "migrate.yaml"
    for name in sorted(set(merged) | set(claims)):
        current = merged.get(name, PartitionConfig())
        given = _given(current) if name in merged else set()
        filled: dict[str, object] = {}
        origins = dict(current.origins)
        for key in FILLED:
            stated = [(path, v) for path, part in claims[name] if (v := _value(part, key)) is not None]
            if key in given:
                ours = getattr(current, key)
                for path, value in stated:
                    if not _agree(key, ours, value):
                        warnings.append(
                            f"partition {name}: {yaml_name} says {key} {ours}, {path} says {value}; "
                            f"keeping {yaml_name}'s"
                        )
                continue
            if not stated:
                continue
            first_path, first = stated[0]
            filled[key] = first
            origins[key] = _origin(claims[name], first_path, key)
            for path, value in stated[1:]:
                if not _agree(key, first, value):
                    warnings.append(
                        f"partition {name}: {first_path} says {key} {first}, {path} says {value}; "
                        f"using {first_path}'s (given first)"
                    )
        merged[name] = replace(current, **filled, origins=tuple(sorted(origins.items())))  # type: ignore[arg-type]
    appending = [i.job_file_append for i in inventories if i.job_file_append]
    appends = config.job_file_append or (appending[0] if appending else None)
    return replace(config, partitions=tuple(sorted(merged.items())), job_file_append=appends), warnings


def inventory_section(inventories: Sequence[Inventory]) -> list[dict[str, object]]:
    """The ``inventory`` part of plan.json: what each file said, before merging."""
    return [
        {
            "path": inv.path,
            "format": inv.format,
            "partitions": [
                {
                    "name": p.name,
                    "nodes": p.nodes,
                    "gpus_per_node": p.gpus_per_node,
                    "gpu_type": p.gpu_type,
                    "cpus_per_node": p.cpus_per_node,
                    "mem_gb": p.mem_gb,
                    "default": p.default,
                    "detail": p.detail,
                    **_site_defaults(p),
                }
                for p in inv.partitions
            ],
            "notes": list(inv.notes),
        }
        for inv in inventories
    ]


_DEFAULT_KEYS = (
    "def_mem_per_cpu_mb",
    "def_mem_per_node_mb",
    "def_mem_per_gpu_mb",
    "def_cpu_per_gpu",
    "default_time_s",
    "max_time_s",
    "memory_scheduled",
)


def _site_defaults(part: InventoryPartition) -> dict[str, object]:
    """The defaults and devices a file states (only those: a file without them keeps its entry)."""
    out: dict[str, object] = {
        key: getattr(part, key) for key in _DEFAULT_KEYS if getattr(part, key) is not None
    }
    if part.devices:
        out["devices"] = dict(part.devices)
    return out


def _origin(claims: list[tuple[str, InventoryPartition]], path: str, key: str) -> str:
    """Where the inventory file at ``path`` says ``key``: its own words, else the file."""
    for claim_path, part in claims:
        if claim_path == path:
            for name, where in part.origins:
                if name == key:
                    return where
    return path


def _given(part: PartitionConfig) -> set[str]:
    """Keys migrate.yaml wrote; for a config built in code, the ones that differ from the default."""
    if part.explicit:
        return set(part.explicit)
    blank = PartitionConfig()
    return {key for key in FILLED if getattr(part, key) != getattr(blank, key)}


def _value(part: InventoryPartition, key: str) -> object:
    value = getattr(part, key)
    if key in ("nodes", "default", "devices") and not value:
        return None  # a partition listing no nodes or devices, or not marked default, says nothing of it
    return value


def _agree(key: str, ours: object, theirs: object) -> bool:
    if isinstance(ours, str) and isinstance(theirs, str):
        return ours.lower() == theirs.lower()
    if key == "mem_gb" and isinstance(ours, int) and isinstance(theirs, int) and ours:
        return abs(ours - theirs) <= MEMORY_TOLERANCE * ours
    return ours == theirs


__all__ = [
    "PARALLELCLUSTER",
    "SLURM_CONF",
    "Inventory",
    "InventoryError",
    "InventoryPartition",
    "inventory_section",
    "merge_inventory",
    "parse_inventory",
]
