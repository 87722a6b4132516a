"""Where a Kubernetes job runs on Slurm: partition, node features, GPU model.

The partition is the allocation's (``migrate.site.kube_partition`` decides it
once for the plan and this writer: the queue's mirror, the node pool, the GPU
model or count, else the default partition). Node labels that are
not a partition's become ``--constraint`` features when the config has a
``features`` table (feature -> node selector), else they are dropped with a
diagnostic: Slurm has no node labels to select on.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from migrate import ir
from migrate.site.config import PartitionConfig, SiteConfig
from migrate.site.kube_partition import Basis, kube_partition
from migrate.site.kube_partition import gpu_partition as site_gpu_partition
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
    """The partition whose GPU model a node label value (``nvidia.com/gpu.product``) names."""
    return site_gpu_partition(ctx.config, product) if ctx.config is not None else None


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
    out = Placement()
    selector = list(dict.fromkeys((kv.key, kv.value) for res in resources for kv in res.node_selector))
    gpu_types = [res.gpu_type for res in resources if res.gpu_type]
    choice = kube_partition(ctx.job, ctx.config or SiteConfig())
    out.partition, out.basis, out.reason = choice.name, choice.basis, choice.reason
    if choice.basis in (Basis.GPU_MODEL, Basis.GPU_COUNT, Basis.DEVICE):
        out.status = FidelityStatus.APPROXIMATED
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
