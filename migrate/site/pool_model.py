"""The node pools and queues Kubernetes manifests name: what ``migrate init`` makes partitions of.

``migrate.scan.node_pools`` reads them from the scanned files; ``pool_partitions`` builds
the starter configuration's partitions from them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

INSTANCE_TYPE_KEYS = ("node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type")
INSTANCE_FAMILY_KEY = "karpenter.k8s.aws/instance-family"
INSTANCE_SIZE_KEY = "karpenter.k8s.aws/instance-size"
NODEPOOL_KEY = "karpenter.sh/nodepool"  # the label Karpenter gives the nodes of a NodePool


@dataclass(frozen=True)
class NodePool:
    """A Karpenter NodePool: the instance types its requirements allow, and its resource limits."""

    name: str
    path: str
    line: int
    instance_types: tuple[str, ...]  # node.kubernetes.io/instance-type In, or family x size
    families: tuple[str, ...]  # karpenter.k8s.aws/instance-family In, when no type or size is said
    limits: tuple[tuple[str, int], ...]  # resource -> the most the pool may hold (spec.limits)


@dataclass(frozen=True)
class Flavor:
    """A Kueue ResourceFlavor: the node labels admission adds to the pods of the workloads it takes."""

    name: str
    path: str
    line: int
    labels: tuple[tuple[str, str], ...]


@dataclass
class NodePools:
    node_pools: list[NodePool] = field(default_factory=list)
    flavors: list[Flavor] = field(default_factory=list)
    # ClusterQueue -> its flavors in order, and the nominal quota of each (flavor, resource)
    cluster_queues: dict[str, list[str]] = field(default_factory=dict)
    quotas: dict[tuple[str, str], int] = field(default_factory=dict)  # (flavor, resource) -> total quota
    local_queues: dict[str, str] = field(default_factory=dict)  # LocalQueue -> ClusterQueue
    volcano_queues: list[str] = field(default_factory=list)


__all__ = [
    "INSTANCE_FAMILY_KEY",
    "INSTANCE_SIZE_KEY",
    "INSTANCE_TYPE_KEYS",
    "NODEPOOL_KEY",
    "Flavor",
    "NodePool",
    "NodePools",
]
