"""The workload kinds, one declaration each: everything a stage needs to know about one kind.

A ``WorkloadKind`` says where a Kubernetes object of the kind keeps its pods and its job-level
fields (``Roles`` and the paths the reader walks), the schema ``migrate validate`` checks it with
and the name its operator accepts, how the Slurm writer lays its pods out (``launch`` and a few
overrides), how its runs are found in a usage dump, how the allocation model packs its pods, and
the facts the plan classes it by. The Kubernetes reader (``translators/kubernetes/kinds.py``),
the validator, the Slurm writer, the allocation model, usage matching, the IR's own questions
(is the job a long-running service?) and the plan read this registry, so a new kind is one
declaration and one ``register`` call (``registered`` for a while, as the tests do); see
docs/architecture.md. It sits in the core, beside the device table, because the IR and the site
ask about kinds below the translators.

Field names were checked against the upstream API types: batch/v1, jobset.x-k8s.io/v1alpha2,
batch.volcano.sh/v1alpha1 and flow.volcano.sh/v1alpha1, kubeflow.org/v1
(training-operator) and v2beta1 (mpi-operator), trainer.kubeflow.org/v1alpha1,
ray.io/v1, sagemaker.amazonaws.com/v1 (HyperPod training operator),
leaderworkerset.x-k8s.io/v1, apps.nvidia.com/v1alpha1 (NIM Operator), and Kueue's labels
and annotations.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum
from typing import NamedTuple

from migrate.declared import Declared
from migrate.vocab import CRON_KINDS, SWEEP_KINDS, JobKind

Path = tuple[str, ...]

# How the replica roles of a workload are laid out.
SINGLE = "single"  # one role at ``Roles.at``
NAMED_MAP = "named-map"  # a mapping role name -> role (Kubeflow replica specs)
NAMED_LIST = "named-list"  # a list of roles, each naming itself (JobSet, Volcano, Ray workers)


class Launch(StrEnum):
    """How the Slurm writer starts the program of a kind's pods (``translators/slurm/shape.py``)."""

    PLAIN = "plain"  # srun runs the container's program once per node
    TORCH = "torch"  # the pods form one distributed torch job: srun torchrun, c10d on the first node
    MPI = "mpi"  # an mpirun launcher role, when there is one, starts the ranks on the other roles' nodes
    RAY = "ray"  # a Ray head on the first node, workers on the others, then the entrypoint
    LWS = "lws"  # one LeaderWorkerSet group per allocation: the leader's program on its first task


class NameRule(NamedTuple):
    """What an object's name must be beyond a DNS-1123 subdomain: its format, length and why."""

    format: str  # subdomain | label | dns1035 (validate.py's formats)
    limit: int
    why: str


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
    # ir.Job.kind, and the name it is registered by; differs from ``kind`` where two groups share a
    # name. A kind registered later may be a plain string: the IR keeps it as it is.
    ir_kind: JobKind
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

    # migrate validate: the schema of the preferred version (a file under
    # translators/kubernetes/schemas/, or a path of its own), and the name the operator accepts.
    schema: str = ""
    name_rule: NameRule | None = None

    # The Slurm writer: how the pods start, and what the operator does that the script must.
    launch: Launch = Launch.PLAIN
    program_per_pod: bool = False  # the operator starts each pod's program once (PET_* rendezvous)
    default_retries: int | None = None  # the operator's retries when the object sets none

    # The allocation model: the role that only runs mpirun (no node on Slurm; the others' pods are
    # their slots in tasks), and why each pod is a node of its own, when it is.
    mpi_launcher: str = ""
    pod_per_node: str = ""

    # Usage matching: its runs show in ``kubectl get jobs``; a run record names only the submitter,
    # whose pods and GPUs are the job's (a RayJob's driver Job).
    job_history: bool = False
    sized_by_job: bool = False

    # The plan's class facts.
    serving: bool = False  # long-running: it stays on Kubernetes unless it serves nothing
    model_server: bool = False  # exists to serve a model over the network (serving by kind)
    training: bool = False  # a training operator's job: training whatever its name says
    batch_inference: bool = False  # what its jobs usually are, short of other evidence (RayJob)

    @property
    def name(self) -> str:
        return self.ir_kind

    @property
    def job_spec_pods(self) -> bool:
        """Its pods are those of one batch/v1 JobSpec (Job, CronJob): a non-indexed Job's are alike."""
        return any(r.job_spec is not None and r.replicas is None for r in self.roles)

    @property
    def replicas_are_jobs(self) -> bool:
        """Its replicas are Jobs of several pods each (JobSet): a pod's completion index is its place
        in its Job."""
        return any(r.job_spec is not None and r.replicas is not None for r in self.roles)


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
        training=True,
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
    """A Volcano JobSpec at ``spec``: the object's own, or a CronJob's job template. Its tasks may be
    an mpirun master and its workers."""
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
        launch=Launch.MPI,
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
_RAY_NODES = "a Ray cluster on Slurm runs one ray start per node"
KUBERNETES_DEFAULT_BACKOFF = 6  # batch/v1 Job backoffLimit when unset
# A CronJob's Jobs are named <name>-<11 characters>, within 63.
CRON_SUFFIX = 11
_CRON_NAME_MAX = 63 - CRON_SUFFIX


_KINDS: Declared[WorkloadKind] = Declared("workload kind", lambda workload: _problem(workload))


def _problem(workload: WorkloadKind) -> str | None:
    if not workload.versions or not workload.roles:
        return "a workload kind has at least one version and one role"
    if workload_kind(workload.group, workload.kind) is not None:
        return f"{workload.group or 'the core group'} already has a kind {workload.kind}"
    return None


# register(kind) makes a kind every stage knows: read, validated, written to Slurm, planned;
# registered(*kinds) registers some for a ``with`` block and restores the registry after it.
register = _KINDS.register
registered = _KINDS.registered


def workload_kinds() -> tuple[WorkloadKind, ...]:
    """Every registered kind, in the order registered."""
    return tuple(_KINDS.table.values())


def workload_kind(group: str, kind: str) -> WorkloadKind | None:
    """The declaration of the Kubernetes kind ``kind`` of ``group``."""
    return next((w for w in _KINDS.table.values() if w.group == group and w.kind == kind), None)


def declared(kind: str) -> WorkloadKind | None:
    """The declaration of an IR job's kind; None for the kinds no workload declares (sbatch ...)."""
    return _KINDS.table.get(kind)


def launch_of(kind: str) -> Launch:
    """How the Slurm writer starts the pods of an IR job's kind."""
    found = declared(kind)
    return found.launch if found is not None else Launch.PLAIN


def is_serving(kind: str) -> bool:
    """A long-running service (Deployment, StatefulSet, RayCluster) rather than a batch job."""
    found = declared(kind)
    return found is not None and found.serving


def is_model_server(kind: str) -> bool:
    found = declared(kind)
    return found is not None and found.model_server


def is_training(kind: str) -> bool:
    """A training operator's job, or a search whose trials train."""
    found = declared(kind)
    return kind in SWEEP_KINDS or (found is not None and found.training)


def on_schedule(kind: str) -> bool:
    """A kind that runs on a schedule: a scrontab entry, or a workload with a schedule (CronJob)."""
    found = declared(kind)
    return kind in CRON_KINDS or (found is not None and found.schedule is not None)


# The declarations, in the order the reader's table lists them.

register(
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
        name_rule=NameRule("subdomain", 63, "the name becomes the job-name label of its pods"),
        default_retries=KUBERNETES_DEFAULT_BACKOFF,
        job_history=True,
    )
)
register(
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
        name_rule=NameRule(
            "subdomain", _CRON_NAME_MAX, f"its Jobs are named <name>-<{CRON_SUFFIX} characters>"
        ),
        default_retries=KUBERNETES_DEFAULT_BACKOFF,
        job_history=True,
    )
)
register(
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
        schema="jobset.json",
        job_history=True,
    )
)
register(
    replace(
        _volcano("batch.volcano.sh", "Job", JobKind.VOLCANO_JOB),
        schema="volcano-job.json",
        name_rule=NameRule("subdomain", 63, "the Volcano webhook wants a qualified name"),
    )
)
# A JobFlow's building block: a Volcano JobSpec kept as a template.
register(
    replace(
        _volcano("flow.volcano.sh", "JobTemplate", JobKind.VOLCANO_JOB_TEMPLATE),
        schema="volcano-jobtemplate.json",
    )
)
# Volcano's CronJob (v1.13+): a Volcano Job on a schedule, read like batch/v1 CronJob.
register(
    replace(
        _volcano("batch.volcano.sh", "CronJob", JobKind.VOLCANO_CRONJOB, ("spec", "jobTemplate", "spec")),
        suspend=(("spec", "suspend"),),
        schedule=("spec", "schedule"),
        metadata=(("spec", "jobTemplate", "metadata"),),
        schema="volcano-cronjob.json",
        name_rule=NameRule(
            "subdomain", _CRON_NAME_MAX, f"its Volcano Jobs are named <name>-<{CRON_SUFFIX} characters>"
        ),
    )
)
register(
    replace(
        _kubeflow_v1(JobKind.PYTORCH_JOB, "pytorchReplicaSpecs", PYTORCH_DEFAULT_PORT),
        procs_per_pod=(("spec", "nprocPerNode"), ("spec", "elasticPolicy", "nProcPerNode")),
        schema="pytorchjob.json",
        name_rule=NameRule("dns1035", 63, "the training operator wants a DNS-1035 label"),
        launch=Launch.TORCH,
        program_per_pod=True,
    )
)
# SageMaker HyperPod's training operator: PyTorchJob-like, its replica specs a named list.
register(
    WorkloadKind(
        group="sagemaker.amazonaws.com",
        kind="HyperPodPyTorchJob",
        ir_kind=JobKind.HYPERPOD_PYTORCH_JOB,
        versions=("v1",),
        roles=(Roles(at=("spec", "replicaSpecs"), shape=NAMED_LIST, replicas=("replicas",)),),
        procs_per_pod=(("spec", "nprocPerNode"),),
        schema="hyperpod-pytorchjob.json",
        launch=Launch.TORCH,
        training=True,
    )
)
register(_kubeflow_v1(JobKind.TF_JOB, "tfReplicaSpecs"))
register(_kubeflow_v1(JobKind.XGBOOST_JOB, "xgbReplicaSpecs"))
register(_kubeflow_v1(JobKind.PADDLE_JOB, "paddleReplicaSpecs"))
register(_kubeflow_v1(JobKind.JAX_JOB, "jaxReplicaSpecs"))
# kubeflow.org/v1 (training-operator) and v2beta1 (mpi-operator) share the group and the shape.
register(
    replace(
        _kubeflow_v1(JobKind.MPI_JOB, "mpiReplicaSpecs"),
        versions=("v2beta1", "v1"),
        procs_per_pod=(("spec", "slotsPerWorker"),),
        procs_roles=("Worker",),
        schema="mpijob.json",
        launch=Launch.MPI,
        mpi_launcher="launcher",
        training=False,  # classed by what it runs: MPI without an ML framework is HPC
    )
)
register(
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
        schema="trainjob.json",
        name_rule=NameRule("dns1035", 63, "the TrainJob CRD wants an RFC 1035 label"),
        launch=Launch.TORCH,
        job_history=True,
        training=True,
    )
)
register(
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
        schema="rayjob.json",
        name_rule=NameRule(
            "dns1035", 47, "KubeRay adds 6 characters for the RayCluster, whose names stop at 53"
        ),
        launch=Launch.RAY,
        pod_per_node=_RAY_NODES,
        job_history=True,
        sized_by_job=True,
        batch_inference=True,
    )
)
register(
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
        pod_per_node=_RAY_NODES,
        serving=True,
    )
)
# Ray Serve applications (serveConfigV2) on a cluster the operator makes from rayClusterConfig.
register(
    WorkloadKind(
        group="ray.io",
        kind="RayService",
        ir_kind=JobKind.RAY_SERVICE,
        versions=("v1",),
        roles=_ray_roles(("spec", "rayClusterConfig")),
        own_ports=RAY_OWN_PORTS,
        serve_port=RAY_SERVE_PORT,
        serve_config=(("spec", "serveConfigV2"), ("spec", "serveConfig")),
        serving=True,
        model_server=True,
    )
)
# Groups of one leader and size-1 workers, ``replicas`` groups (multi-host inference).
register(
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
        schema="leaderworkerset.json",
        name_rule=NameRule(
            "dns1035",
            63,
            "the webhook wants a DNS-1035 label: the controller names its headless Service after it",
        ),
        launch=Launch.LWS,
        serving=True,
    )
)
# NVIDIA NIM Operator: one model server, its container's fields at spec.
register(
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
        serving=True,
        model_server=True,
    )
)
register(
    WorkloadKind(
        group="apps",
        kind="Deployment",
        ir_kind=JobKind.DEPLOYMENT,
        versions=("v1",),
        roles=(Roles(at=("spec",), replicas=("replicas",)),),
        serving=True,
    )
)
register(
    WorkloadKind(
        group="apps",
        kind="StatefulSet",
        ir_kind=JobKind.STATEFUL_SET,
        versions=("v1",),
        roles=(Roles(at=("spec",), replicas=("replicas",)),),
        name_rule=NameRule(
            "label",
            52,
            "pods get the label controller-revision-hash=<name>-<hash>, which must fit in 63 characters",
        ),
        serving=True,
    )
)
# A bare pod: its own template.
register(
    WorkloadKind(
        group="",
        kind="Pod",
        ir_kind=JobKind.POD,
        versions=("v1",),
        roles=(Roles(at=(), pod_template=()),),
    )
)

WORKLOAD_KINDS = workload_kinds()  # the built-in kinds; ``workload_kinds()`` also has those registered later
