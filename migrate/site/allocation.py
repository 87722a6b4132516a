"""What Slurm actually gives a job: the allocation model the plan and both writers read.

For each component: nodes, tasks, CPUs, memory, GPUs and their type, other
GRES and node devices, and for the job its partition and time limit. Each
value says where it comes from (``allocation_model.Source``), in Slurm's
order of precedence:

1. the job's own options (``#SBATCH``, or a pod's requests);
2. the partition: the one named, else the default one (``default: true`` in
   migrate.yaml, ``Default=YES`` in slurm.conf, the first ParallelCluster queue);
3. the node type of that partition (migrate.yaml, or an inventory file);
4. the site's defaults: ``DefMemPerCPU``/``DefMemPerNode``/``DefMemPerGPU``,
   ``DefCpuPerGPU``, ``DefaultTime`` and then ``MaxTime`` for a job without
   ``--time``, and Slurm's own (one node, one task, one CPU per task);
5. ``--exclusive``, which sbatch(1) of Slurm 22.05 defines as: "the job is
   allocated all CPUs and GRES on all nodes in the allocation, but is only
   allocated as much memory as it requested ... To request all the memory on
   a node, use --mem=0". So ``--exclusive --gres=gpu:2`` holds all of the
   node's GPUs, and its memory stays what was asked, or the site default
   (DefMemPerCPU x all the node's CPUs), or, with no memory default at all,
   the whole node;
6. hints in the script (``allocation_hints``), marked inferred, for what
   nothing above tells; they never outrank 1-5.

Where nothing tells (no time limit anywhere, no node size), the value says
so: ``assumed``, with the assumption in its detail. ``docs/allocation.md``
walks through an example per source.

Example::

    alloc = allocate(job, site_config)
    alloc.components[0].gpus_per_node   # Sourced(8, Provenance(Source.EXCLUSIVE, "--exclusive: all 8 ..."))
    alloc.time_limit_s.detail           # "no --time: MaxTime=2-00:00:00 of partition gpu (slurm.conf line 9)"
"""

from __future__ import annotations

import os
from dataclasses import fields

from migrate import ir
from migrate.site.allocation_model import Device, JobAllocation, NodeType, Provenance, Source, Sourced
from migrate.site.allocation_resources import (
    WHOLE_NODE_MODES,
    OptionDetails,
    OptionLines,
    OptionTexts,
    component,
    fabric_device,
    missing_fabric_devices,
)
from migrate.site.config import PartitionConfig, SiteConfig
from migrate.site.kube_component import kube_components
from migrate.site.kube_partition import Basis, kube_partition
from migrate.site.slurmtime import format_slurm_time

_NO_PARTITION = Provenance(
    Source.ASSUMED, "no --partition and no default partition in the site configuration"
)
_PARTITION_DEFAULTS = {f.name: f.default for f in fields(PartitionConfig)}


class _Site:
    """What the allocation reads of one site configuration, worked out once."""

    def __init__(self, config: SiteConfig) -> None:
        self.config = config
        # the file's name only: details read "partition gpu in migrate.yaml" wherever the file lives
        self.source = os.path.basename(config.source) if config.source else "migrate.yaml"
        self.known = {name for name, _ in config.partitions}
        self.default = config.default_partition()
        self.nodes: dict[str, NodeType | None] = {
            name: _node_type(name, part, self.source) for name, part in config.partitions
        }


_SITES: dict[int, tuple[SiteConfig, _Site]] = {}
# Without the header's lines the details of options depend only on the format: two shared makers.
_PLAIN = {False: OptionDetails.plain(manifest=False), True: OptionDetails.plain(manifest=True)}


def _site(config: SiteConfig) -> _Site:
    # One per configuration object: a plan or a translation allocates every job against the same one.
    held = _SITES.get(id(config))
    if held is not None and held[0] is config:
        return held[1]
    if len(_SITES) > 16:
        _SITES.clear()
    site = _Site(config)
    _SITES[id(config)] = (config, site)
    return site


def allocate(
    job: ir.Job,
    config: SiteConfig | None = None,
    lines: OptionLines | None = None,
    texts: OptionTexts | None = None,
) -> JobAllocation:
    """What Slurm allocates ``job``, value by value with its provenance.

    ``lines`` and ``texts`` map ``(long option, component)`` to the line of
    its directive and the option as written, when the caller read the
    header; details then cite them (``--gres=gpu:8 (line 4)``).
    """
    site = _site(config or SiteConfig())
    say = OptionDetails(job, lines, texts) if lines or texts else _PLAIN[job.source.format == "kubernetes"]
    name, partition = _partition(job, site, say)
    part = site.config.partition(name) if name else None
    node = site.nodes.get(name) if name else None
    if job.source.format == "kubernetes":
        label = f"partition {name}" if name else "the partition"
        components = kube_components(job, name, part, node, say, label, site.config.kubernetes)
    else:
        components = tuple(
            component(job, comp, index, name, part, node, say) for index, comp in enumerate(job.components)
        )
    notes: list[str] = []
    if name and part is None:
        notes.append(f"partition {name} is not in the site configuration: what its nodes hold is unknown")
    if len(job.placement.partitions) > 1 and name:
        notes.append(
            f"--partition names {len(job.placement.partitions)} partitions; planned in {name}, the first the "
            "site configuration knows (Slurm starts the job in whichever can run it first)"
        )
    return JobAllocation(job.id, partition, _time_limit(job, name, part, site, say), components, tuple(notes))


# ---------------------------------------------------------------------------
# Partition and node type


def _partition(job: ir.Job, site: _Site, say: OptionDetails) -> tuple[str | None, Sourced[str | None]]:
    named = job.placement.partitions
    if named:
        name = next((p for p in named if p in site.known), named[0])
        return name, Sourced(name, say.option("partition", 0, ",".join(named)))
    if job.source.format == "kubernetes":
        return _mirrored_partition(job, site)
    if site.default is not None:
        part = site.config.partition(site.default)
        where = part.origin("default") if part is not None else None
        detail = where or f"default: true for partition {site.default} in {site.source}"
        return site.default, Sourced(
            site.default, Provenance(Source.SITE_DEFAULT, f"no --partition: {detail}")
        )
    return None, Sourced(None, _NO_PARTITION)


def _mirrored_partition(job: ir.Job, site: _Site) -> tuple[str | None, Sourced[str | None]]:
    """A Kubernetes job runs where ``kube_partition`` places it: the one decision plan and writer read."""
    choice = kube_partition(job, site.config)
    return choice.name, Sourced(choice.name, Provenance(_CHOICE_SOURCES[choice.basis], choice.reason))


# How sure each basis of the choice is: the job's own queue or node pool is its option; a GPU model or
# count is read from what it asks; the default partition is the site's.
_CHOICE_SOURCES = {
    Basis.QUEUE: Source.OPTION,
    Basis.NODE_SELECTOR: Source.OPTION,
    Basis.GPU_MODEL: Source.INFERRED,
    Basis.GPU_COUNT: Source.INFERRED,
    Basis.DEVICE: Source.INFERRED,
    Basis.DEFAULT: Source.SITE_DEFAULT,
    Basis.NONE: Source.ASSUMED,
}


def _known(part: PartitionConfig, key: str) -> bool:
    if key in part.explicit or part.origin(key) is not None:
        return True
    # a configuration built in code says what differs from the defaults
    return not part.explicit and getattr(part, key) != _PARTITION_DEFAULTS[key]


def _about(name: str, part: PartitionConfig, key: str, source: str) -> Provenance:
    where = part.origin(key)
    if where is not None:
        return Provenance(Source.INVENTORY, where)
    return Provenance(Source.PARTITION, f"partition {name} in {source}")


def _node_type(name: str, part: PartitionConfig, source: str) -> NodeType | None:
    def value(key: str, got: object) -> Sourced[object]:
        if not _known(part, key):
            return Sourced(
                None, Provenance(Source.ASSUMED, f"partition {name}: {key} not in the site configuration")
            )
        return Sourced(got, _about(name, part, key, source))

    if not any(_known(part, key) for key in ("gpus_per_node", "cpus_per_node", "mem_gb")):
        return None
    mem = part.mem_gb * 1024 if part.mem_gb is not None else None
    devices = tuple(
        Sourced(Device(device, count), _about(name, part, "devices", source))
        for device, count in part.devices
    )
    return NodeType(
        cpus=value("cpus_per_node", part.cpus_per_node),  # type: ignore[arg-type]
        mem_mb=value("mem_gb", mem),  # type: ignore[arg-type]
        gpus=value("gpus_per_node", part.gpus_per_node),  # type: ignore[arg-type]
        gpu_type=value("gpu_type", part.gpu_type),  # type: ignore[arg-type]
        devices=devices,
    )


# ---------------------------------------------------------------------------
# Time limit


def _time_limit(
    job: ir.Job, name: str | None, part: PartitionConfig | None, site: _Site, say: OptionDetails
) -> Sourced[int]:
    if job.time_limit_s:
        return Sourced(job.time_limit_s, say.option("time", 0, format_slurm_time(job.time_limit_s)))
    label = f"partition {name}" if name else "no partition"
    asked = "--time=UNLIMITED" if say.given("time", 0) else "no --time"
    if part is not None and part.default_time_s:
        where = part.origin("default_time_s") or f"{label} in {site.source}"
        text = format_slurm_time(part.default_time_s)
        detail = f"{asked}: DefaultTime={text} of {label} ({where})"
        return Sourced(part.default_time_s, Provenance(Source.SITE_DEFAULT, detail))
    if part is not None and part.max_time_s:
        where = part.origin("max_time_s") or f"{label} in {site.source}"
        text = format_slurm_time(part.max_time_s)
        detail = f"{asked} and no DefaultTime: MaxTime={text} of {label} ({where})"
        return Sourced(part.max_time_s, Provenance(Source.SITE_DEFAULT, detail))
    hours = site.config.thresholds.default_job_hours
    where = (
        f"{label} has no DefaultTime or MaxTime the site configuration knows"
        if name
        else "no partition to take a DefaultTime or MaxTime from"
    )
    detail = f"{asked}, and {where}: {hours} h assumed (thresholds.default_job_hours)"
    return Sourced(hours * 3600, Provenance(Source.ASSUMED, detail))


def node_type(config: SiteConfig | None, partition: str | None) -> NodeType | None:
    """What one node of ``partition`` holds, as the allocation reads it (None: unknown)."""
    if config is None or not partition:
        return None
    return _site(config).nodes.get(partition)


__all__ = ["WHOLE_NODE_MODES", "allocate", "fabric_device", "missing_fabric_devices", "node_type"]
