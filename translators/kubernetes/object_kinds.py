"""The names of the Kubernetes objects read beside the workloads, as ``kind:`` spells them.

Workloads are ``JobKind`` (``migrate.vocab``) and their fields are declared in
``migrate/workloads.py``; these are the objects around them that a scan reads for context
(storage, queues, monitoring, devices, node pools) and the ``List`` that holds
other objects. Code compares members of ``ObjectKind``, never the spellings.
"""

from __future__ import annotations

from enum import StrEnum


class ObjectKind(StrEnum):
    """A Kubernetes object that is not a workload, by its ``kind``."""

    LIST = "List"  # holds other objects in ``items``
    # storage
    PERSISTENT_VOLUME = "PersistentVolume"
    PERSISTENT_VOLUME_CLAIM = "PersistentVolumeClaim"
    STORAGE_CLASS = "StorageClass"
    NIM_CACHE = "NIMCache"  # a model downloaded once into a volume for NIMServices
    # configuration
    CONFIG_MAP = "ConfigMap"
    SECRET = "Secret"
    SERVICE = "Service"
    NAMESPACE = "Namespace"
    # autoscaling
    HORIZONTAL_POD_AUTOSCALER = "HorizontalPodAutoscaler"
    SCALED_OBJECT = "ScaledObject"  # KEDA
    # queues and priorities: Kueue, Volcano, the scheduler plugins
    LOCAL_QUEUE = "LocalQueue"
    CLUSTER_QUEUE = "ClusterQueue"
    RESOURCE_FLAVOR = "ResourceFlavor"
    QUEUE = "Queue"  # Volcano's
    POD_GROUP = "PodGroup"
    PRIORITY_CLASS = "PriorityClass"
    # monitoring
    DAEMON_SET = "DaemonSet"  # a node agent: monitoring when its image is a known exporter
    SERVICE_MONITOR = "ServiceMonitor"
    POD_MONITOR = "PodMonitor"
    # devices claimed through Dynamic Resource Allocation
    RESOURCE_CLAIM = "ResourceClaim"
    RESOURCE_CLAIM_TEMPLATE = "ResourceClaimTemplate"
    DEVICE_CLASS = "DeviceClass"
    # node pools
    NODE_POOL = "NodePool"  # Karpenter's


# Prometheus Operator objects that name the workloads to scrape.
PROMETHEUS_MONITORS = frozenset((ObjectKind.SERVICE_MONITOR, ObjectKind.POD_MONITOR))

__all__ = ["PROMETHEUS_MONITORS", "ObjectKind"]
