"""The Slurm partition a Kubernetes workload runs in: decided once, read by the plan and the Slurm writer.

The site configuration's partitions carry their Kubernetes mirror (``queue``
and ``node_selector``) and their GPU model, so the mapping is read backwards,
first match wins:

1. the job's queue is a partition's mirror;
2. the job's node selector holds a partition's node selector (its node pool);
3. a node label naming the GPU model (``nvidia.com/gpu.product``) names a
   partition of that GPU type (``gpu_products`` read backwards, else the type
   found in the label value);
4. the pods ask for a non-GPU accelerator (Neuron, Gaudi, TPU): a partition whose nodes hold it;
5. the pods ask for GPUs: the first partition with as many GPUs per node;
6. nothing names one: the default partition (``default: true``), as Slurm
   places a job that names none.

Example::

    choice = kube_partition(job, config)
    choice.name, choice.basis, choice.reason   # "cpu", Basis.DEFAULT, "no queue or node selector ..."
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from migrate import ir
from migrate.devices import gres_for
from migrate.site.config import SiteConfig
from migrate.site.pod_allocation import pod_devices


class Basis(StrEnum):
    """What named the partition."""

    QUEUE = "queue"  # the job's queue is the partition's mirror
    NODE_SELECTOR = "node-selector"  # the job's node selector is the partition's node pool
    GPU_MODEL = "gpu-model"  # a partition has the GPU model the job asks for
    GPU_COUNT = "gpu-count"  # the first partition with enough GPUs per node
    DEVICE = "device"  # a partition whose nodes hold the accelerator device (Neuron, Gaudi, TPU) asked for
    DEFAULT = "default"  # nothing named one: the cluster's default partition
    NONE = "none"  # nothing named one and the site has no default partition


# Bases where the job itself names the partition; the others are the site's choice for it.
NAMED = frozenset({Basis.QUEUE, Basis.NODE_SELECTOR})


@dataclass(frozen=True, slots=True)
class PartitionChoice:
    name: str | None
    basis: Basis
    reason: str

    @property
    def exact(self) -> bool:
        """The job's own queue or node pool named it (not a GPU model, a count or the default)."""
        return self.basis in NAMED


def gpu_partition(config: SiteConfig, product: str) -> str | None:
    """The partition whose GPU model a node label value (``nvidia.com/gpu.product``) names.

    ``gpu_products`` (GRES type -> label value) is read backwards first; without an entry, a
    partition's GPU type found inside the label value counts (a100 in NVIDIA-A100-SXM4-80GB).
    """
    wanted = product.lower()
    types = [t.lower() for t, label in config.gpu_products if label.lower() == wanted]
    for name, part in config.partitions:
        if part.gpu_type and part.gpu_type.lower() in types:
            return name
    for name, part in config.partitions:
        if part.gpu_type and part.gpu_type.lower() in wanted:
            return name
    return None


def _by_device(resources: list[ir.Resources], config: SiteConfig) -> PartitionChoice | None:
    """The first partition whose nodes hold the non-GPU accelerator the pods ask for."""
    wanted = [
        d.resource for res in resources for d in pod_devices(res) if d.accelerator and not res.gpus_per_node
    ]
    for resource in dict.fromkeys(wanted):
        gres = gres_for(resource, config.gres)
        for name, part in config.partitions:
            if any(device in (resource, gres) for device, _ in part.devices):
                why = f"the nodes of partition {name} have the {resource} devices the pods ask for"
                return PartitionChoice(name, Basis.DEVICE, why)
    return None


def kube_partition(job: ir.Job, config: SiteConfig) -> PartitionChoice:
    """The partition ``job`` (a Kubernetes workload) runs in on Slurm, and why."""
    resources = [c.resources for c in job.components]
    queue = job.placement.queue
    if queue:
        mirror = config.partition_for_queue(queue)
        if mirror is not None:
            return PartitionChoice(
                mirror, Basis.QUEUE, f"queue {queue} is partition {mirror}'s mirror in the site config"
            )
    selector = {(kv.key, kv.value) for res in resources for kv in res.node_selector}
    for name, part in config.partitions:
        if part.node_selector and set(part.node_selector) <= selector:
            shown = ",".join(f"{k}={v}" for k, v in part.node_selector)
            return PartitionChoice(
                name, Basis.NODE_SELECTOR, f"node selector {shown} is partition {name}'s node pool"
            )
    gpu_types = [res.gpu_type for res in resources if res.gpu_type]
    if gpu_types:
        named = gpu_partition(config, gpu_types[0])
        if named is not None:
            return PartitionChoice(
                named, Basis.GPU_MODEL, f"GPU model {gpu_types[0]} is served by partition {named}"
            )
    device = _by_device(resources, config)
    if device is not None:
        return device
    wanted = max((res.computed_gpus_per_node() for res in resources), default=0)
    if wanted:
        for name, part in config.partitions:
            if part.gpus_per_node >= wanted:
                return PartitionChoice(
                    name,
                    Basis.GPU_COUNT,
                    f"the first partition of the site config with {wanted} GPUs per node",
                )
    default = config.default_partition()
    if default is not None:
        return PartitionChoice(
            default,
            Basis.DEFAULT,
            "no queue, node selector or GPU that a partition mirrors: the site config's default "
            f"partition (default: true for {default})",
        )
    return PartitionChoice(
        None,
        Basis.NONE,
        "no queue, node selector or GPU that a partition mirrors, and no default partition in the site config",  # noqa: E501
    )


__all__ = ["NAMED", "Basis", "PartitionChoice", "gpu_partition", "kube_partition"]
