"""The Kubernetes kinds the reader knows: the workloads, and the objects read for their context.

Each workload kind is one declaration in the registry of ``migrate/workloads.py`` (where it keeps
its pods and its job-level fields, and what every other stage needs to know of it); the reader
walks its paths to fill the IR. Paths are tuples of mapping keys from the object root (or, inside
``Roles``, from one role). The tables here are the rest: the kinds read for context, the labels
and annotations with a meaning, the volumes operators add.
"""

from __future__ import annotations

from dataclasses import dataclass

from migrate import devices

# The reader's modules name the declarations' parts through this module.
from migrate.workloads import NAMED_MAP as NAMED_MAP
from migrate.workloads import PYTORCH_PORT_NAME as PYTORCH_PORT_NAME
from migrate.workloads import SINGLE as SINGLE
from migrate.workloads import Roles as Roles
from migrate.workloads import WorkloadKind as WorkloadKind
from migrate.workloads import workload_kind as workload_kind

# Non-workload kinds read for context, with what they tell us.
STORAGE = "storage"
SCRIPTS = "scripts"
SERVICE = "service"
AUTOSCALING = "autoscaling"
QUEUE = "queue"
PRIORITY = "priority"
NAMESPACE = "namespace"
SECRET = "secret"  # names only: values are never kept
MONITORING = "monitoring"
DEPENDENCIES = "dependencies"
DEVICES = "devices"  # DRA: claim templates and device classes the pods' resourceClaims name
NODES = "nodes"  # node pools: the instance types a cluster's nodes are made of (migrate init reads them)

CONTEXT_KINDS: dict[tuple[str, str], str] = {
    ("", "PersistentVolumeClaim"): STORAGE,
    ("", "PersistentVolume"): STORAGE,
    ("storage.k8s.io", "StorageClass"): STORAGE,
    ("", "ConfigMap"): SCRIPTS,
    ("", "Secret"): SECRET,
    ("", "Service"): SERVICE,
    ("autoscaling", "HorizontalPodAutoscaler"): AUTOSCALING,
    ("keda.sh", "ScaledObject"): AUTOSCALING,
    ("kueue.x-k8s.io", "LocalQueue"): QUEUE,
    ("kueue.x-k8s.io", "ClusterQueue"): QUEUE,
    ("kueue.x-k8s.io", "ResourceFlavor"): QUEUE,
    ("kueue.x-k8s.io", "Topology"): QUEUE,
    ("kueue.x-k8s.io", "AdmissionCheck"): QUEUE,
    ("kueue.x-k8s.io", "Cohort"): QUEUE,
    ("kueue.x-k8s.io", "WorkloadPriorityClass"): PRIORITY,
    ("scheduling.volcano.sh", "Queue"): QUEUE,
    ("scheduling.volcano.sh", "PodGroup"): QUEUE,
    ("scheduling.x-k8s.io", "PodGroup"): QUEUE,
    ("scheduling.k8s.io", "PriorityClass"): PRIORITY,
    ("", "Namespace"): NAMESPACE,
    ("apps", "DaemonSet"): MONITORING,
    ("monitoring.coreos.com", "ServiceMonitor"): MONITORING,
    ("monitoring.coreos.com", "PodMonitor"): MONITORING,
    ("monitoring.coreos.com", "PrometheusRule"): MONITORING,
    ("flow.volcano.sh", "JobFlow"): DEPENDENCIES,
    ("resource.k8s.io", "ResourceClaimTemplate"): DEVICES,
    ("resource.k8s.io", "ResourceClaim"): DEVICES,
    ("resource.k8s.io", "DeviceClass"): DEVICES,
    ("apps.nvidia.com", "NIMCache"): STORAGE,
    ("karpenter.sh", "NodePool"): NODES,
    ("karpenter.sh", "NodeClaim"): NODES,
    ("karpenter.k8s.aws", "EC2NodeClass"): NODES,  # a model downloaded once into a volume for NIMServices
}


@dataclass(frozen=True)
class InjectedVolume:
    """A volume an operator adds to a role's pods: manifests may mount it without declaring it."""

    name: str
    source_suffix: str  # the ConfigMap or Secret behind it is named "<workload's name><suffix>"


# Volumes each operator adds, by (group, kind, version) and role. MPI Operator v2beta1
# (pkg/controller/mpi_job_controller.go): the hostfile ConfigMap at /etc/mpi on the Launcher,
# the generated ssh key Secret on the Launcher and every Worker.
_MPI_SSH = InjectedVolume("ssh-auth", "-ssh")
INJECTED_VOLUMES: dict[tuple[str, str, str], dict[str, tuple[InjectedVolume, ...]]] = {
    ("kubeflow.org", "MPIJob", "v2beta1"): {
        "Launcher": (InjectedVolume("mpi-job-config", "-config"), _MPI_SSH),
        "Worker": (_MPI_SSH,),
    },
}

# Known kinds outside Kubernetes' own groups that run nothing: ignored quietly (one info),
# not reported as unknown workloads. Unlisted kinds of the built-in groups are ignored too.
IGNORED_KINDS = frozenset(
    {
        ("cert-manager.io", "Certificate"),
        ("cert-manager.io", "Issuer"),
        ("cert-manager.io", "ClusterIssuer"),
        ("external-secrets.io", "ExternalSecret"),
        ("external-secrets.io", "SecretStore"),
        ("bitnami.com", "SealedSecret"),
        ("networking.istio.io", "VirtualService"),
        ("networking.istio.io", "DestinationRule"),
        ("networking.istio.io", "Gateway"),
        ("monitoring.coreos.com", "Prometheus"),
        ("monitoring.coreos.com", "Alertmanager"),
        ("argoproj.io", "Application"),
        ("argoproj.io", "AppProject"),
        ("kustomize.config.k8s.io", "Kustomization"),
    }
)

# Container kinds whose ``items`` are objects.
LIST_KINDS = frozenset({"List"})

# Labels and annotations with a meaning for the IR. Kueue reads most of them from labels
# (and older releases from annotations), so both places are searched.
QUEUE_KEYS = ("kueue.x-k8s.io/queue-name", "scheduling.volcano.sh/queue-name")
PRIORITY_KEYS = ("kueue.x-k8s.io/priority-class",)
MAX_EXEC_TIME_KEYS = ("kueue.x-k8s.io/max-exec-time-seconds",)
GANG_KEYS = ("kueue.x-k8s.io/pod-group-total-count",)
# Topology requests -> ir.Placement.topology keys. The writer maps them back.
TOPOLOGY_KEYS: dict[str, str] = {
    "alpha.jobset.sigs.k8s.io/exclusive-topology": "exclusive-topology",
    "alpha.jobset.sigs.k8s.io/node-selector": "jobset-node-selector",
    "kueue.x-k8s.io/podset-required-topology": "required-topology",
    "kueue.x-k8s.io/podset-preferred-topology": "preferred-topology",
    "kueue.x-k8s.io/podset-unconstrained-topology": "unconstrained-topology",
    "kueue.x-k8s.io/podset-slice-required-topology": "slice-required-topology",
    "kueue.x-k8s.io/podset-slice-size": "slice-size",
    "kueue.x-k8s.io/podset-group-name": "podset-group",
}
# What this tool labels the objects it writes with: a scan skips them (they are its own output).
MANAGED_BY_LABEL = "app.kubernetes.io/managed-by"
MANAGED_BY_VALUE = "migrate"
PROMETHEUS_SCRAPE = "prometheus.io/scrape"
PROMETHEUS_DETAIL_KEYS = ("prometheus.io/port", "prometheus.io/path")
# Annotations that only repeat the object (and may repeat secrets in it): not kept.
DROPPED_ANNOTATIONS = frozenset({"kubectl.kubernetes.io/last-applied-configuration"})

# Node labels that name the GPU model beside the devices' own (migrate/devices.py: node_label): the
# clouds' and Karpenter's.
CLOUD_GPU_LABELS = ("cloud.google.com/gke-accelerator", "karpenter.k8s.aws/instance-gpu-name")
HUGEPAGES_PREFIX = "hugepages-"
EPHEMERAL_STORAGE = "ephemeral-storage"

# Monitoring recognised by image name (sidecars, DaemonSets) and by environment variable prefix.
MONITORING_IMAGES: dict[str, str] = {
    "dcgm-exporter": "dcgm",
    "node-exporter": "node-exporter",
    "pushgateway": "prometheus-pushgateway",
    "otel-collector": "opentelemetry",
    "opentelemetry-collector": "opentelemetry",
    "fluent-bit": "logging",
    "datadog/agent": "datadog",
}
MONITORING_ENV_PREFIXES: dict[str, str] = {
    "WANDB_": "wandb",
    "MLFLOW_": "mlflow",
    "COMET_": "comet",
    "NEPTUNE_": "neptune",
    "DD_": "datadog",
}


def gpu_product_labels() -> tuple[str, ...]:
    """Every node label whose value names a GPU (or device) model."""
    return (*devices.node_labels(), *CLOUD_GPU_LABELS)


def split_api_version(api_version: str) -> tuple[str, str]:
    """'batch/v1' -> ('batch', 'v1'); 'v1' -> ('', 'v1')."""
    group, _, version = api_version.rpartition("/")
    return group, version


def injected_volumes(api_version: str, kind: str, role: str) -> tuple[InjectedVolume, ...]:
    """The volumes the operator of ``kind`` adds to the pods of ``role``."""
    group, version = split_api_version(api_version)
    return INJECTED_VOLUMES.get((group, kind, version), {}).get(role, ())


def context_role(group: str, kind: str) -> str | None:
    return CONTEXT_KINDS.get((group, kind))


def is_ignored(group: str, kind: str) -> bool:
    """A kind known to run nothing (see IGNORED_KINDS and the built-in groups)."""
    return (group, kind) in IGNORED_KINDS or is_builtin_group(group)


def is_builtin_group(group: str) -> bool:
    """Groups served by Kubernetes itself; their unlisted kinds are ignored, not unknown."""
    if group in ("", "apps", "batch", "policy", "autoscaling", "extensions"):
        return True
    return group.endswith(".k8s.io") and not group.endswith(".x-k8s.io")
