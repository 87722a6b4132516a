"""The one table of Kubernetes kinds: where each workload keeps its pods and its job-level fields.

The reader walks these paths to fill the IR; the writer will walk the same
paths to place IR fields. Paths are tuples of mapping keys from the object
root (or, inside ``Roles``, from one role). Field names were checked against
the upstream API types: batch/v1, jobset.x-k8s.io/v1alpha2,
batch.volcano.sh/v1alpha1 and flow.volcano.sh/v1alpha1, kubeflow.org/v1
(training-operator) and v2beta1 (mpi-operator), trainer.kubeflow.org/v1alpha1,
ray.io/v1, sagemaker.amazonaws.com/v1 (HyperPod training operator),
leaderworkerset.x-k8s.io/v1, apps.nvidia.com/v1alpha1 (NIM Operator), and Kueue's labels
and annotations.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from migrate.vocab import SERVING_KINDS, JobKind

Path = tuple[str, ...]

# How the replica roles of a workload are laid out.
SINGLE = "single"  # one role at ``Roles.at``
NAMED_MAP = "named-map"  # a mapping role name -> role (Kubeflow replica specs)
NAMED_LIST = "named-list"  # a list of roles, each naming itself (JobSet, Volcano, Ray workers)


@dataclass(frozen=True)
class Roles:
    """Where one set of replica roles lives and how a role is shaped.

    Paths other than ``at`` are relative to one role.
    """

    at: Path
    shape: str = SINGLE
    name_key: str = "name"  # NAMED_LIST: the key that names each role
    default_name: str = "main"  # SINGLE: the component's name
    replicas: Path | None = None  # pods (or Jobs, for JobSet) of this role
    min_replicas: Path | None = None  # elastic bounds, e.g. Ray worker groups
    max_replicas: Path | None = None
    pod_template: Path | None = ("template",)  # metadata + spec of the role's pods
    # the template the role's pods use when ``pod_template`` is absent (LeaderWorkerSet's leaders)
    template_fallback: Path | None = None
    # pods per replica: the number here less ``group_less`` (a LeaderWorkerSet's size-1 workers per
    # group); the role is left out when that is 0. ``group_default``: the number when it is absent.
    group_size: Path | None = None
    group_less: int = 0
    group_default: int = 1
    job_spec: Path | None = None  # a batch/v1 JobSpec wrapping the pod template
    indexed_array: bool = False  # the JobSpec's Indexed completions are a job array (Job, CronJob)
    container: Path | None = None  # the role holds a single container's fields (TrainJob trainer)
    container_resources: Path = ("resources",)  # in ``container``: where its resources are
    # in ``container``: the image as {repository, tag} (NIMService) instead of one string
    image_parts: Path | None = None
    restart_policy: Path | None = None  # a per-role restart policy (Kubeflow replica specs)
    depends_on: Path | None = None  # per-role dependencies on sibling roles
    dependency_prefix: str = ""  # how sibling targets are qualified in ir.Dependency.targets
    gang: Path | None = None  # per-role minimum of pods started together
    retries: Path | None = None  # per-role retry budget
    policies: Path | None = None  # per-role event -> action rules (Volcano)
    optional: bool = False  # absent roles are fine (RayJob on an existing cluster, no Ray workers)


@dataclass(frozen=True)
class WorkloadKind:
    """A kind that runs pods: one ir.Job per object.

    Every job-level field lists the paths where it may be found; all are read.
    For time limits the tightest value wins; for the others the first found.
    """

    group: str  # apiVersion group; "" for the core group
    kind: str
    ir_kind: JobKind  # ir.Job.kind; differs from ``kind`` where two groups share a name
    versions: tuple[str, ...]  # known versions, the preferred one first
    roles: tuple[Roles, ...]
    time_limit: tuple[Path, ...] = ()  # seconds
    retries: tuple[Path, ...] = ()
    suspend: tuple[Path, ...] = ()  # -> ir.Job.hold
    ttl: tuple[Path, ...] = ()  # ttlSecondsAfterFinished, kept as a raw item
    queue: tuple[Path, ...] = ()
    priority: tuple[Path, ...] = ()
    gang: tuple[Path, ...] = ()  # minimum pods scheduled together (kept as a raw item)
    scheduler: tuple[Path, ...] = ()
    network_topology: tuple[Path, ...] = ()  # {mode: hard|soft, highestTierAllowed} (Volcano)
    policies: tuple[Path, ...] = ()  # Volcano-style event -> action rules
    procs_per_pod: tuple[Path, ...] = ()  # processes per pod (nprocPerNode, slotsPerWorker)
    procs_roles: tuple[str, ...] = ()  # roles the procs apply to; empty = all roles
    entrypoint: Path | None = None  # a shell command line run by the operator (RayJob)
    schedule: Path | None = None  # CronJob: schedule, timeZone, concurrencyPolicy are its siblings
    # More metadata whose labels and annotations count as the object's (a CronJob's job template).
    metadata: tuple[Path, ...] = ()
    # Ports the operator's own processes listen on (Ray's GCS, dashboard ...): not for clients.
    own_ports: frozenset[int] = frozenset()
    # The MASTER_PORT the operator sets in every pod where no container names its port (PyTorchJob).
    master_port: int | None = None
    # A port that is for clients only when the object serves (Ray Serve's HTTP port), and the
    # fields whose presence says it serves; a ``serve run`` / ``serve deploy`` command says so too.
    serve_port: int | None = None
    serve_config: tuple[Path, ...] = ()
    # Ports of the Service the operator makes for the object (NIMService's spec.expose).
    service_ports: tuple[Path, ...] = ()
    # Pod labels the operator sets to the object's name, for the Services that select its pods.
    name_labels: tuple[str, ...] = ()
    # Other labels the operator sets on some of its pods, which a Service may select them by (a
    # LeaderWorkerSet's leaders: worker index 0).
    member_labels: tuple[tuple[str, str], ...] = ()

    @property
    def serving(self) -> bool:
        """A long-running service (Deployment, StatefulSet, RayCluster) rather than a batch job."""
        return self.ir_kind in SERVING_KINDS


_RUN_POLICY = ("spec", "runPolicy")
_SCHEDULING_POLICY = (*_RUN_POLICY, "schedulingPolicy")


def _kubeflow_v1(kind: JobKind, replica_specs: str, master_port: int | None = None) -> WorkloadKind:
    """training-operator jobs share one shape: <x>ReplicaSpecs plus runPolicy."""
    return WorkloadKind(
        master_port=master_port,
        group="kubeflow.org",
        kind=kind,
        ir_kind=kind,
        versions=("v1",),
        roles=(
            Roles(
                at=("spec", replica_specs),
                shape=NAMED_MAP,
                replicas=("replicas",),
                restart_policy=("restartPolicy",),
            ),
        ),
        # runPolicy since training-operator v1.3; the spec-level spellings are older.
        time_limit=((*_RUN_POLICY, "activeDeadlineSeconds"), ("spec", "activeDeadlineSeconds")),
        retries=((*_RUN_POLICY, "backoffLimit"), ("spec", "backoffLimit")),
        suspend=((*_RUN_POLICY, "suspend"),),
        ttl=((*_RUN_POLICY, "ttlSecondsAfterFinished"), ("spec", "ttlSecondsAfterFinished")),
        queue=((*_SCHEDULING_POLICY, "queue"),),
        priority=((*_SCHEDULING_POLICY, "priorityClass"),),
        gang=((*_SCHEDULING_POLICY, "minAvailable"),),
    )


_VOLCANO_TASKS = Roles(
    at=("spec", "tasks"),
    shape=NAMED_LIST,
    replicas=("replicas",),
    depends_on=("dependsOn",),
    dependency_prefix="task:",
    gang=("minAvailable",),
    retries=("maxRetry",),
    policies=("policies",),
)


def _volcano(group: str, kind: str, ir_kind: JobKind, spec: Path = ("spec",)) -> WorkloadKind:
    """A Volcano JobSpec at ``spec``: the object's own, or a CronJob's job template."""
    return WorkloadKind(
        group=group,
        kind=kind,
        ir_kind=ir_kind,
        versions=("v1alpha1",),
        roles=(replace(_VOLCANO_TASKS, at=(*spec, "tasks")),),
        retries=((*spec, "maxRetry"),),
        ttl=((*spec, "ttlSecondsAfterFinished"),),
        queue=((*spec, "queue"),),
        priority=((*spec, "priorityClassName"),),
        gang=((*spec, "minAvailable"),),
        scheduler=((*spec, "schedulerName"),),
        network_topology=((*spec, "networkTopology"),),
        policies=((*spec, "policies"),),
    )


# Ray's own ports on the head: GCS, dashboard, client server, metrics, dashboard agent.
# The training operator's MASTER_PORT: the Master container's port of this name, else its default.
PYTORCH_PORT_NAME = "pytorchjob-port"
PYTORCH_DEFAULT_PORT = 23456
RAY_OWN_PORTS = frozenset({6379, 8265, 10001, 8080, 52365})
RAY_SERVE_PORT = 8000  # Ray Serve's HTTP proxy, unless its config says otherwise


def _ray_roles(cluster: Path) -> tuple[Roles, ...]:
    return (
        Roles(at=(*cluster, "headGroupSpec"), default_name="head", optional=True),
        Roles(
            at=(*cluster, "workerGroupSpecs"),
            shape=NAMED_LIST,
            name_key="groupName",
            replicas=("replicas",),
            min_replicas=("minReplicas",),
            max_replicas=("maxReplicas",),
            optional=True,
        ),
    )


_JOB_ROLE = Roles(at=("spec",), job_spec=(), indexed_array=True)

WORKLOAD_KINDS: tuple[WorkloadKind, ...] = (
    WorkloadKind(
        group="batch",
        kind="Job",
        ir_kind=JobKind.JOB,
        versions=("v1",),
        roles=(_JOB_ROLE,),
        time_limit=(("spec", "activeDeadlineSeconds"),),
        retries=(("spec", "backoffLimit"),),
        suspend=(("spec", "suspend"),),
        ttl=(("spec", "ttlSecondsAfterFinished"),),
    ),
    WorkloadKind(
        group="batch",
        kind="CronJob",
        ir_kind=JobKind.CRONJOB,
        versions=("v1",),
        roles=(Roles(at=("spec", "jobTemplate", "spec"), job_spec=(), indexed_array=True),),
        time_limit=(("spec", "jobTemplate", "spec", "activeDeadlineSeconds"),),
        retries=(("spec", "jobTemplate", "spec", "backoffLimit"),),
        suspend=(("spec", "suspend"),),
        ttl=(("spec", "jobTemplate", "spec", "ttlSecondsAfterFinished"),),
        schedule=("spec", "schedule"),
        metadata=(("spec", "jobTemplate", "metadata"),),
    ),
    WorkloadKind(
        group="jobset.x-k8s.io",
        kind="JobSet",
        ir_kind=JobKind.JOBSET,
        versions=("v1alpha2",),
        roles=(
            Roles(
                at=("spec", "replicatedJobs"),
                shape=NAMED_LIST,
                replicas=("replicas",),
                job_spec=("template", "spec"),
                pod_template=("template", "spec", "template"),
                depends_on=("dependsOn",),
                dependency_prefix="replicatedJob:",
            ),
        ),
        retries=(("spec", "failurePolicy", "maxRestarts"),),
        suspend=(("spec", "suspend"),),
        ttl=(("spec", "ttlSecondsAfterFinished"),),
    ),
    _volcano("batch.volcano.sh", "Job", JobKind.VOLCANO_JOB),
    # A JobFlow's building block: a Volcano JobSpec kept as a template.
    _volcano("flow.volcano.sh", "JobTemplate", JobKind.VOLCANO_JOB_TEMPLATE),
    # Volcano's CronJob (v1.13+): a Volcano Job on a schedule, read like batch/v1 CronJob.
    replace(
        _volcano("batch.volcano.sh", "CronJob", JobKind.VOLCANO_CRONJOB, ("spec", "jobTemplate", "spec")),
        suspend=(("spec", "suspend"),),
        schedule=("spec", "schedule"),
        metadata=(("spec", "jobTemplate", "metadata"),),
    ),
    replace(
        _kubeflow_v1(JobKind.PYTORCH_JOB, "pytorchReplicaSpecs", PYTORCH_DEFAULT_PORT),
        procs_per_pod=(("spec", "nprocPerNode"), ("spec", "elasticPolicy", "nProcPerNode")),
    ),
    # SageMaker HyperPod's training operator: PyTorchJob-like, its replica specs a named list.
    WorkloadKind(
        group="sagemaker.amazonaws.com",
        kind="HyperPodPyTorchJob",
        ir_kind=JobKind.HYPERPOD_PYTORCH_JOB,
        versions=("v1",),
        roles=(Roles(at=("spec", "replicaSpecs"), shape=NAMED_LIST, replicas=("replicas",)),),
        procs_per_pod=(("spec", "nprocPerNode"),),
    ),
    _kubeflow_v1(JobKind.TF_JOB, "tfReplicaSpecs"),
    _kubeflow_v1(JobKind.XGBOOST_JOB, "xgbReplicaSpecs"),
    _kubeflow_v1(JobKind.PADDLE_JOB, "paddleReplicaSpecs"),
    _kubeflow_v1(JobKind.JAX_JOB, "jaxReplicaSpecs"),
    # kubeflow.org/v1 (training-operator) and v2beta1 (mpi-operator) share the group and the shape.
    replace(
        _kubeflow_v1(JobKind.MPI_JOB, "mpiReplicaSpecs"),
        versions=("v2beta1", "v1"),
        procs_per_pod=(("spec", "slotsPerWorker"),),
        procs_roles=("Worker",),
    ),
    WorkloadKind(
        group="trainer.kubeflow.org",
        kind="TrainJob",
        ir_kind=JobKind.TRAIN_JOB,
        versions=("v1alpha1",),
        roles=(
            Roles(
                at=("spec", "trainer"),
                default_name="trainer",
                replicas=("numNodes",),
                pod_template=None,
                container=(),
                container_resources=("resourcesPerNode",),
            ),
        ),
        time_limit=(("spec", "activeDeadlineSeconds"),),
        suspend=(("spec", "suspend"),),
        procs_per_pod=(("spec", "trainer", "numProcPerNode"),),
    ),
    WorkloadKind(
        group="ray.io",
        kind="RayJob",
        ir_kind=JobKind.RAY_JOB,
        versions=("v1",),
        roles=_ray_roles(("spec", "rayClusterSpec")),
        time_limit=(("spec", "activeDeadlineSeconds"),),
        retries=(("spec", "backoffLimit"),),
        suspend=(("spec", "suspend"),),
        ttl=(("spec", "ttlSecondsAfterFinished"),),
        entrypoint=("spec", "entrypoint"),
    ),
    WorkloadKind(
        group="ray.io",
        kind="RayCluster",
        ir_kind=JobKind.RAY_CLUSTER,
        versions=("v1",),
        roles=_ray_roles(("spec",)),
        suspend=(("spec", "suspend"),),
        own_ports=RAY_OWN_PORTS,
        serve_port=RAY_SERVE_PORT,
        name_labels=("ray.io/cluster",),
    ),
    # Ray Serve applications (serveConfigV2) on a cluster the operator makes from rayClusterConfig.
    WorkloadKind(
        group="ray.io",
        kind="RayService",
        ir_kind=JobKind.RAY_SERVICE,
        versions=("v1",),
        roles=_ray_roles(("spec", "rayClusterConfig")),
        own_ports=RAY_OWN_PORTS,
        serve_port=RAY_SERVE_PORT,
        serve_config=(("spec", "serveConfigV2"), ("spec", "serveConfig")),
    ),
    # Groups of one leader and size-1 workers, ``replicas`` groups (multi-host inference).
    WorkloadKind(
        group="leaderworkerset.x-k8s.io",
        kind="LeaderWorkerSet",
        ir_kind=JobKind.LEADER_WORKER_SET,
        versions=("v1",),
        roles=(
            Roles(
                at=("spec",),
                default_name="leader",
                replicas=("replicas",),
                pod_template=("leaderWorkerTemplate", "leaderTemplate"),
                template_fallback=("leaderWorkerTemplate", "workerTemplate"),
            ),
            Roles(
                at=("spec",),
                default_name="worker",
                replicas=("replicas",),
                pod_template=("leaderWorkerTemplate", "workerTemplate"),
                group_size=("leaderWorkerTemplate", "size"),
                group_less=1,
            ),
        ),
        name_labels=("leaderworkerset.sigs.k8s.io/name",),
        member_labels=(("leaderworkerset.sigs.k8s.io/worker-index", "0"),),
    ),
    # NVIDIA NIM Operator: one model server, its container's fields at spec.
    WorkloadKind(
        group="apps.nvidia.com",
        kind="NIMService",
        ir_kind=JobKind.NIM_SERVICE,
        versions=("v1alpha1",),
        roles=(
            Roles(
                at=("spec",),
                default_name="nim",
                replicas=("replicas",),
                pod_template=None,
                container=(),
                image_parts=("image",),
            ),
        ),
        service_ports=(("spec", "expose", "service", "port"),),
    ),
    WorkloadKind(
        group="apps",
        kind="Deployment",
        ir_kind=JobKind.DEPLOYMENT,
        versions=("v1",),
        roles=(Roles(at=("spec",), replicas=("replicas",)),),
    ),
    WorkloadKind(
        group="apps",
        kind="StatefulSet",
        ir_kind=JobKind.STATEFUL_SET,
        versions=("v1",),
        roles=(Roles(at=("spec",), replicas=("replicas",)),),
    ),
    # A bare pod: its own template.
    WorkloadKind(
        group="",
        kind="Pod",
        ir_kind=JobKind.POD,
        versions=("v1",),
        roles=(Roles(at=(), pod_template=()),),
    ),
)

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

# Resources that are GPUs, and node labels that name the GPU model.
GPU_RESOURCES = frozenset({"nvidia.com/gpu", "amd.com/gpu", "gpu.intel.com/i915", "gpu.intel.com/xe"})
MIG_RESOURCE_PREFIX = "nvidia.com/mig-"  # nvidia.com/mig-1g.10gb: a GPU slice
GPU_PRODUCT_LABELS = (
    "nvidia.com/gpu.product",
    "cloud.google.com/gke-accelerator",
    "karpenter.k8s.aws/instance-gpu-name",
    "amd.com/gpu.product-name",
)
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


def split_api_version(api_version: str) -> tuple[str, str]:
    """'batch/v1' -> ('batch', 'v1'); 'v1' -> ('', 'v1')."""
    group, _, version = api_version.rpartition("/")
    return group, version


_WORKLOADS = {(w.group, w.kind): w for w in WORKLOAD_KINDS}


def workload_kind(group: str, kind: str) -> WorkloadKind | None:
    return _WORKLOADS.get((group, kind))


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
