"""Where a Kubernetes job runs on Slurm: partition, node features, GPU model.

The site config's partitions carry their Kubernetes mirror (``queue`` and
``node_selector``) and their GPU model, so the mapping is read backwards: a
queue, a node selector or a GPU model names a partition. Node labels that are
not a partition's become ``--constraint`` features when the config has a
``features`` table (feature -> node selector), else they are dropped with a
diagnostic: Slurm has no node labels to select on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from migrate import ir
from migrate.devices import gres_for
from migrate.site.config import PartitionConfig
from migrate.site.pod_allocation import pod_devices
from migrate.vocab import FidelityStatus

from .context import Context

# Node labels that name the GPU model; the reader turns them into Resources.gpu_type.
GPU_LABELS = frozenset(
    {
        "nvidia.com/gpu.product",
        "cloud.google.com/gke-accelerator",
        "karpenter.k8s.aws/instance-gpu-name",
        "amd.com/gpu.product-name",
    }
)
# Labels every node has; selecting on them is about the pod, not the hardware.
_HOST_LABELS = frozenset({"kubernetes.io/os", "kubernetes.io/arch", "beta.kubernetes.io/os"})


class Basis(StrEnum):
    """What named the partition of a placement."""

    QUEUE = "queue"  # the job's queue is the partition's mirror
    NODE_SELECTOR = "node-selector"  # the job's node selector is the partition's node pool
    GPU_MODEL = "gpu-model"  # a partition has the GPU model the job asks for
    GPU_COUNT = "gpu-count"  # the first partition with enough GPUs per node
    DEVICE = "device"  # the only partitions whose nodes have the accelerator device the pods ask for
    DEFAULT = "default"  # nothing named one: the cluster's default partition


@dataclass
class Placement:
    partition: str | None = None
    basis: Basis = Basis.DEFAULT
    reason: str = ""
    status: FidelityStatus = FidelityStatus.MAPPED  # of the partition choice
    features: list[str] = field(default_factory=list)
    unmapped: list[tuple[str, str]] = field(default_factory=list)  # node selector pairs left over
    gpu_type_dropped: str | None = None


def _partitions(ctx: Context) -> tuple[tuple[str, PartitionConfig], ...]:
    return ctx.config.partitions if ctx.config is not None else ()


def _feature_table(ctx: Context) -> tuple[tuple[str, tuple[tuple[str, str], ...]], ...]:
    """``features`` of the site config: node feature -> the node labels that select it."""
    return ctx.config.features if ctx.config is not None else ()


def gpu_partition(ctx: Context, product: str) -> str | None:
    """The partition whose GPU model a node label value (``nvidia.com/gpu.product``) names.

    The site config's ``gpu_products`` (GRES type -> label value) is read backwards first;
    without an entry, a partition's GPU type found inside the label value counts (a100 in
    NVIDIA-A100-SXM4-80GB).
    """
    if ctx.config is None:
        return None
    wanted = product.lower()
    types = [t.lower() for t, label in ctx.config.gpu_products if label.lower() == wanted]
    for name, part in _partitions(ctx):
        if part.gpu_type and part.gpu_type.lower() in types:
            return name
    for name, part in _partitions(ctx):
        if part.gpu_type and part.gpu_type.lower() in wanted:
            return name
    return None


def _by_device(ctx: Context, resources: list[ir.Resources], out: Placement) -> None:
    """A partition whose nodes hold the accelerator (Neuron, Gaudi, TPU) the pods ask for."""
    wanted = [
        d.resource for res in resources for d in pod_devices(res) if d.accelerator and not res.gpus_per_node
    ]
    for resource in dict.fromkeys(wanted):
        gres = gres_for(resource, ctx.config.gres if ctx.config is not None else ())
        for name, config in _partitions(ctx):
            if any(device in (resource, gres) for device, _ in config.devices):
                out.partition, out.basis, out.status = name, Basis.DEVICE, FidelityStatus.APPROXIMATED
                out.reason = f"the nodes of partition {name} have the {resource} devices the pods ask for"
                return


def account(ctx: Context) -> str | None:
    """The Slurm account whose namespace (site config ``accounts``) the job runs in."""
    namespace = ctx.job.placement.namespace
    if ctx.config is None or not namespace:
        return None
    return next((acct for acct, ns in ctx.config.accounts if ns == namespace), None)


def qos(ctx: Context) -> str | None:
    """The QOS whose priority class (site config ``qos``) the job asks for."""
    priority = ctx.job.placement.priority
    if ctx.config is None or not priority:
        return None
    return next((name for name, cls in ctx.config.qos if cls == priority), None)


def decide(ctx: Context, resources: list[ir.Resources]) -> Placement:
    """The partition and features for a job whose nodes ask for ``resources``."""
    job = ctx.job
    out = Placement()
    selector = list(dict.fromkeys((kv.key, kv.value) for res in resources for kv in res.node_selector))
    gpu_types = [res.gpu_type for res in resources if res.gpu_type]
    queue = job.placement.queue
    if queue:
        mirror = ctx.config.partition_for_queue(queue) if ctx.config is not None else None
        if mirror:
            out.partition, out.basis = mirror, Basis.QUEUE
            out.reason = f"queue {queue} is partition {mirror}'s mirror in the site config"
    if out.partition is None:
        for name, config in _partitions(ctx):
            if config.node_selector and set(config.node_selector) <= set(selector):
                out.partition, out.basis = name, Basis.NODE_SELECTOR
                shown = ",".join(f"{k}={v}" for k, v in config.node_selector)
                out.reason = f"node selector {shown} is partition {name}'s node pool"
                break
    if out.partition is None and gpu_types:
        part_name = gpu_partition(ctx, gpu_types[0])
        if part_name:
            out.partition, out.basis, out.status = part_name, Basis.GPU_MODEL, FidelityStatus.APPROXIMATED
            out.reason = f"GPU model {gpu_types[0]} is served by partition {part_name}"
    if out.partition is None:
        _by_device(ctx, resources, out)
    if out.partition is None and any(res.computed_gpus_per_node() for res in resources):
        wanted = max(res.computed_gpus_per_node() for res in resources)
        for name, config in _partitions(ctx):
            if config.gpus_per_node >= wanted:
                out.partition, out.basis, out.status = name, Basis.GPU_COUNT, FidelityStatus.APPROXIMATED
                out.reason = f"the first partition of the site config with {wanted} GPUs per node"
                break
    chosen = dict(_partitions(ctx)).get(out.partition or "")
    explained = set(chosen.node_selector) if chosen else set()
    for feature, wanted_pairs in _feature_table(ctx):
        if wanted_pairs and set(wanted_pairs) <= set(selector) and not set(wanted_pairs) <= explained:
            out.features.append(feature)
            explained |= set(wanted_pairs)
    for key, value in selector:
        if (key, value) in explained or key in _HOST_LABELS:
            continue
        if key in GPU_LABELS and out.partition is not None and gpu_partition(ctx, value) == out.partition:
            continue  # the partition is that GPU model
        out.unmapped.append((key, value))
    if gpu_types and (out.partition is None or gpu_partition(ctx, gpu_types[0]) != out.partition):
        out.gpu_type_dropped = gpu_types[0]
    return out


__all__ = ["GPU_LABELS", "Basis", "Placement", "account", "decide", "gpu_partition", "qos"]
