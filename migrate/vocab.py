"""The closed vocabularies every stage speaks: one definition each.

Each is a ``StrEnum``: a member is the string it stands for, so it compares
equal to that string, sorts like it, and is written to JSON, YAML comments and
messages exactly as the plain string was. Code compares members, never
spellings; the spellings live here and nowhere else.
"""

from __future__ import annotations

from enum import StrEnum


class Format(StrEnum):
    """The scheduler a file or a job is written for."""

    SLURM = "slurm"
    KUBERNETES = "kubernetes"
    UNKNOWN = "unknown"  # a scanned file no reader took

    @property
    def display_name(self) -> str:
        """The scheduler's name in a sentence: ``Slurm``, ``Kubernetes``."""
        return _DISPLAY_NAMES[self]


_DISPLAY_NAMES = {Format.SLURM: "Slurm", Format.KUBERNETES: "Kubernetes", Format.UNKNOWN: "unknown"}


class Direction(StrEnum):
    """Which way a plan moves jobs."""

    TO_KUBERNETES = "to_kubernetes"
    TO_SLURM = "to_slurm"

    @property
    def target(self) -> Format:
        return Format.KUBERNETES if self is Direction.TO_KUBERNETES else Format.SLURM

    @property
    def source(self) -> Format:
        return Format.SLURM if self is Direction.TO_KUBERNETES else Format.KUBERNETES

    @classmethod
    def of(cls, value: str) -> Direction:
        """``value`` as a direction, or a ValueError that names the choices."""
        try:
            return cls(value)
        except ValueError:
            raise ValueError(f"direction must be one of {', '.join(cls)}, not {value!r}") from None

    @classmethod
    def towards(cls, target: str) -> Direction:
        """The direction whose target is ``target`` (``kubernetes`` -> ``to_kubernetes``)."""
        return cls.TO_KUBERNETES if target == Format.KUBERNETES else cls.TO_SLURM


class Action(StrEnum):
    """What the plan does with one job."""

    MOVE = "move"
    MOVE_WITH_CHANGES = "move-with-changes"
    STAY = "stay"  # hybrid: keeps running on the scheduler it is on
    ALREADY_THERE = "already-there"  # the job already runs on the target scheduler


MOVES = frozenset((Action.MOVE, Action.MOVE_WITH_CHANGES))


class UnitAction(StrEnum):
    """What the plan does with one migration unit."""

    MOVE = "move"
    SPLIT = "split"  # part moves, part stays, bridged by shared storage
    STAY = "stay"
    ALREADY_THERE = "already-there"
    BLOCKED = "blocked"  # a dependency cycle: no order can run it


class Pattern(StrEnum):
    """The workload pattern of a job: the rows of the articles' decision tables."""

    LONG_TRAINING = "long-multinode-training"
    SMALL_TRAINING = "small-training"
    FINE_TUNING = "fine-tuning"
    SWEEP = "sweep"
    DATA_PREP = "data-preprocessing"
    SERVING = "inference-serving"
    BATCH_INFERENCE = "batch-inference"
    INTERACTIVE = "interactive"
    HPC_MPI = "hpc-mpi"
    MAINTENANCE = "maintenance"
    ORCHESTRATION = "orchestration"  # a wrapper that only submits other jobs
    HELPER = "job-helper"  # a long-running object only jobs use: rendezvous store, Ray cluster
    GENERAL = "general-batch"  # nothing recognisable: an ordinary batch job


TRAINING_PATTERNS = frozenset(
    (Pattern.LONG_TRAINING, Pattern.SMALL_TRAINING, Pattern.FINE_TUNING, Pattern.SWEEP)
)


class JobKind(StrEnum):
    """``ir.Job.kind``: what a reader found. The Slurm reader's kinds, then one per Kubernetes workload."""

    SBATCH = "sbatch"
    SCRONTAB = "scrontab"
    WRAPPER = "wrapper"  # a script that submits other jobs
    SALLOC = "salloc"  # a helper that holds an interactive allocation open
    JOB = "Job"
    CRONJOB = "CronJob"
    JOBSET = "JobSet"
    VOLCANO_JOB = "VolcanoJob"
    VOLCANO_JOB_TEMPLATE = "VolcanoJobTemplate"
    VOLCANO_CRONJOB = "VolcanoCronJob"
    PYTORCH_JOB = "PyTorchJob"
    HYPERPOD_PYTORCH_JOB = "HyperPodPyTorchJob"
    TF_JOB = "TFJob"
    XGBOOST_JOB = "XGBoostJob"
    PADDLE_JOB = "PaddleJob"
    JAX_JOB = "JAXJob"
    MPI_JOB = "MPIJob"
    TRAIN_JOB = "TrainJob"
    RAY_JOB = "RayJob"
    RAY_CLUSTER = "RayCluster"
    RAY_SERVICE = "RayService"
    LEADER_WORKER_SET = "LeaderWorkerSet"
    NIM_SERVICE = "NIMService"
    DEPLOYMENT = "Deployment"
    STATEFUL_SET = "StatefulSet"
    POD = "Pod"
    KATIB_EXPERIMENT = "Experiment"  # a Katib hyperparameter search: trials of another kind


# Kinds that only submit other jobs: no work of their own.
WRAPPER_KINDS = frozenset((JobKind.WRAPPER,))
# What a workload kind is (serving, training, on a schedule ...) its declaration says
# (migrate/workloads.py); these are the kinds no workload declares.
# Searches whose trials are jobs of another kind: a sweep whatever the trials run, training too.
SWEEP_KINDS = frozenset((JobKind.KATIB_EXPERIMENT,))
# Scripts run on a schedule.
CRON_KINDS = frozenset((JobKind.SCRONTAB,))
# A script that holds an allocation open for a person.
INTERACTIVE_KINDS = frozenset((JobKind.SALLOC,))


class PlaceholderRole(StrEnum):
    """What a template placeholder left without a value stands for, so that no one reads it as a default."""

    NODES = "nodes"  # a replica, parallelism or node count
    GPUS = "gpus"  # a GPU request
    OTHER = "other"  # an image, a name, an argument ...


class ArgoKind(StrEnum):
    """The Argo Workflows objects the reader takes (group ``argoproj.io``)."""

    WORKFLOW = "Workflow"
    WORKFLOW_TEMPLATE = "WorkflowTemplate"
    CLUSTER_WORKFLOW_TEMPLATE = "ClusterWorkflowTemplate"
    CRON_WORKFLOW = "CronWorkflow"


class TaskResult(StrEnum):
    """The results an Argo ``depends`` expression may test (``task.Succeeded``)."""

    SUCCEEDED = "Succeeded"
    FAILED = "Failed"
    ERRORED = "Errored"
    SKIPPED = "Skipped"
    OMITTED = "Omitted"
    DAEMONED = "Daemoned"
    ANY_SUCCEEDED = "AnySucceeded"
    ALL_FAILED = "AllFailed"


class DependencyType(StrEnum):
    """How a job waits for another: Slurm's --dependency types, and dependsOn of the Kubernetes kinds."""

    AFTER = "after"  # the other job started (or was cancelled), plus an optional delay
    AFTERANY = "afterany"  # it ended, in any state
    AFTEROK = "afterok"  # it ended with exit code 0
    AFTERNOTOK = "afternotok"  # it ended in a failed state (non-zero exit, timeout, node failure)
    AFTERCORR = "aftercorr"  # element by element across two arrays
    AFTERBURSTBUFFER = "afterburstbuffer"
    SINGLETON = "singleton"  # one job of this name and user at a time
    DEPENDS_ON = "dependsOn"  # JobSet / JobFlow ordering, read from manifests


class MountKind(StrEnum):
    """``ir.Mount.kind``: what a path made visible in a container comes from."""

    BIND = "bind"  # a host path bound by a container runtime
    HOST_PATH = "hostPath"
    PVC = "pvc"
    CONFIG_MAP = "configMap"
    SECRET = "secret"
    EMPTY_DIR = "emptyDir"
    NFS = "nfs"
    CSI = "csi"
    GENERATED = "generated"  # a volume an operator adds to the pods it makes
    OTHER = "other"


class ContainerStage(StrEnum):
    """``ir.Container.stage``: when a pod's container runs (Kubernetes' init, sidecar and app containers)."""

    APP = "app"  # the pod's work
    INIT = "init"  # runs to its end, in order, before the app containers start
    SIDECAR = "sidecar"  # an init container with restartPolicy Always: starts first, runs beside the app


class ContainerRuntime(StrEnum):
    """``ir.Container.runtime``: what starts the container, named as its command is (what each one
    means to the readers and writers is its declaration in translators/runtimes.py)."""

    PYXIS = "pyxis"
    APPTAINER = "apptainer"
    SINGULARITY = "singularity"
    DOCKER = "docker"
    PODMAN = "podman"
    NVIDIA_DOCKER = "nvidia-docker"
    PODMAN_HPC = "podman-hpc"
    SARUS = "sarus"
    CH_RUN = "ch-run"
    ENROOT = "enroot"
    SHIFTER = "shifter"
    OCI_BUNDLE = "oci-bundle"  # sbatch --container: an OCI bundle the Slurm runtime starts
    KUBERNETES = "kubernetes"  # a pod's container: the cluster runs it


class SecretKind(StrEnum):
    """``ir.SecretRef.kind``: where a variable's withheld value lives."""

    SECRET = "secret"
    CONFIG_MAP = "configMap"
    FILE = "file"
    COMMAND = "command"  # the output of a command substitution
    LITERAL = "literal-in-script"  # a credential written in the script, kept out of the IR


class EnvOrigin(StrEnum):
    """``ir.EnvVar.origin``: how a variable was set."""

    EXPORT = "export"
    ASSIGN = "assign"  # a shell assignment without export
    SBATCH_EXPORT = "sbatch-export"  # sbatch --export=NAME=value
    ENV = "env"  # a container's env entry
    ENV_FROM = "envFrom"
    FIELD_REF = "fieldRef"  # the downward API: a pod field or a resource
    SECRET_LITERAL = "secret-literal"  # an entry that only provides a value the script reads


class StorageVia(StrEnum):
    """``ir.StoragePath.via``: where a path was seen."""

    BODY = "body"
    OUTPUT = "output"
    ERROR = "error"
    INPUT = "input"
    CHDIR = "chdir"
    MOUNT = "mount"  # a pod volume
    CONTAINER_MOUNT = "container-mount"
    ARGUMENT = "argument"  # a program's argument


class MonitoringKind(StrEnum):
    """The monitoring hooks the readers name themselves. ``ir.MonitoringHook.kind`` also holds a
    tool's own name (a profiler, an agent found by its image, a tracker), so the field stays a string."""

    NVIDIA_SMI = "nvidia-smi"
    DCGM = "dcgm"
    DCGM_EXPORTER = "dcgm-exporter"
    WANDB = "wandb"  # an experiment tracker, as are the next two
    TENSORBOARD = "tensorboard"
    CLEARML = "clearml"
    MAIL = "mail"
    SLACK_WEBHOOK = "slack-webhook"
    WEBHOOK = "webhook"  # another chat service's webhook
    PROMETHEUS_PUSHGATEWAY = "prometheus-pushgateway"
    NODE_EXPORTER_TEXTFILE = "node-exporter-textfile"  # a *.prom file for node-exporter
    PROMETHEUS_SCRAPE = "prometheus-scrape"  # a pod annotated prometheus.io/scrape


class GresScope(StrEnum):
    """``ir.GenericResource.per``: what the count of a generic resource is for."""

    NODE = "node"
    TASK = "task"
    JOB = "job"


class FilesystemOrigin(StrEnum):
    """How the storage graph knows a file system (a file-system node's ``origin``)."""

    SITE_CONFIG = "site-config"  # declared in migrate.yaml
    WELL_KNOWN = "well-known"  # a prefix sites use for shared storage (/fsx, /lustre ...)
    PVC = "pvc"  # a claim no declared file system maps
    NFS = "nfs"  # an NFS export a pod mounts
    TOP_LEVEL = "top-level"  # the first component of a path nothing else explains


class FilesystemKind(StrEnum):
    """The kinds of file system the plan knows what to do with. A site's migrate.yaml may name
    others (``kind`` is free text there), so the field that holds one stays a string."""

    LUSTRE = "lustre"
    GPFS = "gpfs"
    WEKA = "weka"
    NFS = "nfs"
    LOCAL = "local"  # node-local (per-node NVMe): nothing carries over from one job to the next
    UNKNOWN = "unknown"


class FidelityStatus(StrEnum):
    """What a translation did with one source item."""

    MAPPED = "mapped"
    APPROXIMATED = "approximated"
    DROPPED = "dropped"


class CoexistenceMode(StrEnum):
    """How the two schedulers share the nodes while both run."""

    PARTITION = "partition"  # static partitioning: a node belongs to one scheduler at a time
    SLINKY = "slinky"  # slurm-operator: Slurm runs inside Kubernetes as NodeSets
    SLURM_BRIDGE = "slurm-bridge"  # Slurm schedules Kubernetes pods on nodes both share


AUTO_COEXISTENCE = "auto"  # not a mode: the plan chooses one from the site
COEXISTENCE_CHOICES = (*(m.value for m in CoexistenceMode), AUTO_COEXISTENCE)
SHARED_POOL_MODES = frozenset((CoexistenceMode.SLINKY, CoexistenceMode.SLURM_BRIDGE))


class CoexistenceReason(StrEnum):
    """Why a coexistence mode was chosen or rejected; the plan's sentences only explain these."""

    REQUESTED = "requested"  # named with --coexistence
    NO_GPU_INVENTORY = "no-gpu-inventory"  # no partition with nodes and GPUs: nothing to share
    SPLIT_KEEPS_GPUS_BUSY = "split-keeps-gpus-busy"
    SPLIT_STRANDS_GPUS = "split-strands-gpus"  # one side idles while the other queues
    MIXED_WORKLOAD = "mixed-workload"  # jobs stay on both schedulers at the end
    ONE_SCHEDULER_AT_END = "one-scheduler-at-end"
    SLURM_TEAMS_LEAD = "slurm-teams-lead"  # more teams submit with sbatch than with kubectl
    KUBERNETES_TEAMS_LEAD = "kubernetes-teams-lead"
    SHARED_GPU_NODES = "shared-gpu-nodes"  # MIG or time-sliced nodes: the bridge gives a pod a whole node
    SUB_NODE_PODS = "sub-node-pods"  # pods that need less than a node: the bridge gives each a whole node
    VERSIONS_TOO_OLD = "versions-too-old"
    VERSIONS_NOT_STATED = "versions-not-stated"
    SIMPLER_CONTROL_PLANE = "simpler-control-plane"


__all__ = [
    "AUTO_COEXISTENCE",
    "COEXISTENCE_CHOICES",
    "CRON_KINDS",
    "INTERACTIVE_KINDS",
    "MOVES",
    "SHARED_POOL_MODES",
    "SWEEP_KINDS",
    "TRAINING_PATTERNS",
    "WRAPPER_KINDS",
    "Action",
    "ArgoKind",
    "CoexistenceMode",
    "CoexistenceReason",
    "ContainerRuntime",
    "ContainerStage",
    "DependencyType",
    "Direction",
    "EnvOrigin",
    "FidelityStatus",
    "FilesystemKind",
    "FilesystemOrigin",
    "Format",
    "GresScope",
    "JobKind",
    "MonitoringKind",
    "MountKind",
    "Pattern",
    "PlaceholderRole",
    "SecretKind",
    "StorageVia",
    "TaskResult",
    "UnitAction",
]
