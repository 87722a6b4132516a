"""The common job IR every reader produces and every writer consumes.

Plain frozen dataclasses, with slots: a site of 100,000 jobs holds millions of
them, and an object without a ``__dict__`` is a fraction of the size. Sequences
are tuples so that values stay hashable and immutable; key/value maps are
tuples of ``KeyValue`` so that order is kept.
Anything a reader sees that no typed field can hold goes into ``Job.raw`` with
its source line, so nothing is silently dropped.

Units are fixed to keep writers dumb: memory in MiB, durations in seconds.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

from migrate import workloads
from migrate.vocab import (
    ContainerRuntime,
    ContainerStage,
    DependencyType,
    EnvOrigin,
    Format,
    GresScope,
    JobKind,
    MountKind,
    PlaceholderRole,
    SecretKind,
    StorageVia,
)

IR_VERSION = "1"

# Storage access hints.
READ = "read"
WRITE = "write"
READ_WRITE = "readwrite"
UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True)
class KeyValue:
    key: str
    value: str


@dataclass(frozen=True, slots=True)
class SourceRef:
    """Where a job came from: file, line span and the scheduler it is written for."""

    path: str
    format: Format
    line: int = 1
    end_line: int | None = None
    document: int | None = None  # index of the YAML document in a multi-document file


@dataclass(frozen=True, slots=True)
class GenericResource:
    """A Slurm GRES or Kubernetes extended resource other than GPUs (e.g. nvme, efa)."""

    name: str
    count: int = 1
    type: str | None = None
    per: GresScope = GresScope.NODE


@dataclass(frozen=True, slots=True)
class GpuCount:
    """GPUs of one type in a request that names several (``--gpus-per-node=a100:1,v100:2``)."""

    type: str
    count: int


@dataclass(frozen=True, slots=True)
class Resources:
    """The resource request of one component.

    ``nodes x tasks_per_node = tasks``; whichever is missing is derived by the
    ``computed_*`` helpers so that writers never repeat the arithmetic.
    """

    nodes_min: int | None = None
    nodes_max: int | None = None
    tasks: int | None = None
    tasks_per_node: int | None = None
    cpus_per_task: int | None = None
    cpus_per_node: int | None = None  # Kubernetes pods request cpu per pod
    mem_per_node_mb: int | None = None  # 0 means "all memory of the node" (sbatch --mem=0)
    mem_per_cpu_mb: int | None = None
    mem_per_gpu_mb: int | None = None
    gpus: int | None = None  # total for the job/component
    gpus_per_node: int | None = None
    gpus_per_task: int | None = None
    gpu_type: str | None = None  # the one type the request names
    # Several types in one request, each with its count: all of them on each node (or task) at once.
    # The counts are in the scope of the GPU field the request set (gpus, gpus_per_node or
    # gpus_per_task), which holds their sum; gpu_type is then None.
    gpu_types: tuple[GpuCount, ...] = ()
    cpus_per_gpu: int | None = None
    # --ntasks-per-gpu, as given: the task and GPU counts above already hold what sbatch derives from it
    tasks_per_gpu: int | None = None
    generic: tuple[GenericResource, ...] = ()
    tmp_disk_mb: int | None = None
    exclusive: str | None = None  # "node" | "user" | "mcs" | "topo" | None
    constraint: str | None = None  # Slurm feature expression, kept verbatim
    node_selector: tuple[KeyValue, ...] = ()
    licenses: tuple[GenericResource, ...] = ()
    # The tasks on each node where Slurm gives the nodes different counts (15,1 for -N 2 -n 16 on
    # 16-CPU nodes): no reader sets it; a writer fills it in from the allocation.
    task_layout: tuple[int, ...] = ()

    def computed_nodes(self) -> int:
        if self.nodes_min:
            return self.nodes_min
        if self.tasks and self.tasks_per_node:
            return max(1, -(-self.tasks // self.tasks_per_node))
        return 1

    def computed_tasks_per_node(self) -> int:
        """The tasks of one node; where the nodes differ, of the fullest."""
        if self.task_layout:
            return max(self.task_layout)
        if self.tasks_per_node:
            return self.tasks_per_node
        if self.tasks:
            return max(1, -(-self.tasks // self.computed_nodes()))
        return 1

    def computed_tasks(self) -> int:
        if self.tasks:
            return self.tasks
        return self.computed_nodes() * self.computed_tasks_per_node()

    def computed_gpus_per_node(self) -> int:
        if self.gpus_per_node is not None:
            return self.gpus_per_node
        if self.gpus_per_task is not None:
            return self.gpus_per_task * self.computed_tasks_per_node()
        if self.gpus:
            return max(1, -(-self.gpus // self.computed_nodes()))
        return 0

    def computed_gpus(self) -> int:
        if self.gpus is not None:
            return self.gpus
        return self.computed_gpus_per_node() * self.computed_nodes()

    def gpu_counts(self, count: int) -> tuple[tuple[str | None, int], ...]:
        """The types that make up ``count`` GPUs of the request, each with its count: those of
        ``gpu_types`` when they add up to it, else ``count`` of ``gpu_type`` (None: any type)."""
        if self.gpu_types and sum(g.count for g in self.gpu_types) == count:
            return tuple((g.type, g.count) for g in self.gpu_types)
        return ((self.gpu_type, count),)


@dataclass(frozen=True, slots=True)
class Mount:
    """A path made visible inside a container or pod."""

    target: str
    source: str | None = None  # host path, PVC claim name, volume name
    kind: MountKind = MountKind.BIND
    read_only: bool = False
    line: int | None = None
    create: bool = False  # a host path the node makes when it is missing (hostPath DirectoryOrCreate)


@dataclass(frozen=True, slots=True)
class Container:
    image: str
    name: str | None = None
    runtime: ContainerRuntime | None = None
    command: tuple[str, ...] = ()
    args: tuple[str, ...] = ()
    workdir: str | None = None
    mounts: tuple[Mount, ...] = ()
    line: int | None = None
    stage: ContainerStage = ContainerStage.APP


@dataclass(frozen=True, slots=True)
class Launcher:
    """A parallel launcher found in a script body or a container command."""

    name: str  # srun | mpirun | mpiexec | torchrun | torch.distributed.run | deepspeed | accelerate
    options: tuple[KeyValue, ...] = ()
    program: tuple[str, ...] = ()  # what the launcher starts, as words
    line: int | None = None
    text: str = ""


@dataclass(frozen=True, slots=True)
class SecretRef:
    name: str
    key: str | None = None
    kind: SecretKind = SecretKind.SECRET


@dataclass(frozen=True, slots=True)
class EnvVar:
    """An environment variable; a literal value or a reference, never both."""

    name: str
    value: str | None = None
    secret: SecretRef | None = None
    origin: EnvOrigin = EnvOrigin.EXPORT
    line: int | None = None


@dataclass(frozen=True, slots=True)
class StoragePath:
    path: str
    access: str = UNKNOWN
    via: StorageVia = StorageVia.BODY
    line: int | None = None


@dataclass(frozen=True, slots=True)
class MonitoringHook:
    kind: str  # nvidia-smi | dcgm | prometheus-pushgateway | node-exporter-textfile | wandb | ...
    detail: str = ""
    line: int | None = None


@dataclass(frozen=True, slots=True)
class Dependency:
    """One dependency condition. ``targets`` are job ids, variable names or job names."""

    type: DependencyType
    targets: tuple[str, ...] = ()
    delay_s: int | None = None  # after:id+time
    status: str | None = None  # JobSet dependsOn status (Ready | Complete)
    any_of: bool = False  # joined with '?' (OR) rather than ',' (AND)
    line: int | None = None


@dataclass(frozen=True, slots=True)
class ArrayValue:
    """A value each task of a job array has its own of; the commands read it as ``$(name)``.

    With ``items``, task ``first + i`` gets ``items[i]``. Without, it is counted
    from the task's index: ``start`` for task ``first``, then ``step`` more for
    each index after, written with the printf ``format``.
    """

    name: str
    items: tuple[str, ...] = ()
    first: int = 0
    start: int = 0
    step: int = 1
    format: str = "%d"


@dataclass(frozen=True, slots=True)
class ArraySpec:
    """A job array. ``indices`` is the expanded list when it is small enough.

    ``values``: what each task gets of its own besides its index (an Argo fan-out's item).
    """

    spec: str
    indices: tuple[int, ...] = ()
    count: int = 0
    max_concurrent: int | None = None
    values: tuple[ArrayValue, ...] = ()


@dataclass(frozen=True, slots=True)
class SearchParameter:
    """One dimension of a hyperparameter search, its feasible space as written (numbers stay text)."""

    name: str
    type: str  # double | int | categorical | discrete
    min: str | None = None
    max: str | None = None
    step: str | None = None
    values: tuple[str, ...] = ()  # categorical and discrete: the feasible list
    distribution: str | None = None  # uniform | logUniform | normal | logNormal
    line: int | None = None


@dataclass(frozen=True, slots=True)
class TrialParameter:
    """A placeholder of the trial template and what fills it in each trial.

    ``reference``: a search parameter's name, or trial metadata such as ``${trialSpec.Name}``.
    ``variable``: where the placeholder stood in a command, argument or env value it became
    ``$(variable)``, a value each trial sets; None when no such use was found.
    """

    name: str
    reference: str
    variable: str | None = None
    description: str = ""
    line: int | None = None


@dataclass(frozen=True, slots=True)
class Objective:
    """What a search optimises: a metric the trials report, and when it is good enough."""

    type: str | None = None  # maximize | minimize
    goal: str | None = None
    metric: str | None = None
    additional_metrics: tuple[str, ...] = ()
    line: int | None = None


@dataclass(frozen=True, slots=True)
class Sweep:
    """A hyperparameter search run as trials of one workload (a Katib Experiment).

    The job's components are one trial's, ``Job.array`` counts the trials and how many run at
    once; ``trial_kind`` is the kind of the trial's workload (None: it could not be read).
    """

    trial_kind: JobKind | None
    algorithm: str = "random"
    settings: tuple[KeyValue, ...] = ()
    parameters: tuple[SearchParameter, ...] = ()
    trial_parameters: tuple[TrialParameter, ...] = ()
    objective: Objective | None = None
    max_failed_trials: int | None = None
    metrics_collector: str | None = None  # how the metrics are collected (StdOut, File ...)
    early_stopping: str | None = None  # the early stopping algorithm's name
    line: int | None = None


@dataclass(frozen=True, slots=True)
class Placement:
    partitions: tuple[str, ...] = ()
    queue: str | None = None  # Kubernetes queue (Kueue LocalQueue, Volcano queue)
    qos: str | None = None
    priority: str | None = None  # numeric Slurm priority or a PriorityClass name
    nice: int | None = None
    account: str | None = None
    namespace: str | None = None
    reservation: str | None = None
    nodelist: str | None = None
    exclude: str | None = None
    clusters: str | None = None
    topology: tuple[KeyValue, ...] = ()  # switches, segment, exclusive-topology, ...
    tolerations: tuple[KeyValue, ...] = ()
    affinity: str | None = None  # summary of required node affinity terms
    scheduler: str | None = None  # schedulerName (volcano, ...)


@dataclass(frozen=True, slots=True)
class Signal:
    name: str
    seconds_before: int = 60
    batch_only: bool = False  # 'B:' prefix: only the batch shell receives it
    reservation_too: bool = False  # 'R:' prefix


@dataclass(frozen=True, slots=True)
class FailurePolicy:
    requeue: bool | None = None
    max_retries: int | None = None  # backoffLimit, maxRetry, runPolicy.backoffLimit
    retries_per_index: int | None = None
    max_failed_indexes: int | None = None
    restart_policy: str | None = None  # Never | OnFailure | RestartJob ...
    signal: Signal | None = None
    no_kill: bool = False
    rules: tuple[str, ...] = ()  # podFailurePolicy / Volcano policies, summarised


@dataclass(frozen=True, slots=True)
class IOSpec:
    workdir: str | None = None
    stdout: str | None = None
    stderr: str | None = None
    stdin: str | None = None
    open_mode: str | None = None


@dataclass(frozen=True, slots=True)
class Mail:
    types: tuple[str, ...] = ()
    user: str | None = None


@dataclass(frozen=True, slots=True)
class Schedule:
    cron: str
    timezone: str | None = None
    concurrency: str | None = None
    line: int | None = None


@dataclass(frozen=True, slots=True)
class Service:
    """A long-running serving workload (Deployment, StatefulSet) or its Service."""

    name: str
    replicas: int | None = None
    ports: tuple[int, ...] = ()
    autoscaling: str | None = None  # e.g. "hpa 2-10 cpu 70%"
    addresses: tuple[
        str, ...
    ] = ()  # the Kubernetes Services that select its pods: the host names clients use
    # The labels of its pods, for the Services of other files that select them.
    pod_labels: tuple[KeyValue, ...] = ()


# A dependency target naming the job an earlier sbatch of the same wrapper submitted: this
# prefix and that sbatch's line (for ``dep=$jid`` chains the reader could follow).
SUBMITTED_AT = "submitted-at:"


def wrap_job_id(path: str, line: int | None) -> str:
    """The id of the job an ``sbatch --wrap`` command in the script at ``path`` submits."""
    return f"{path}@{line if line is not None else 0}"


_CALL = "#call:"


def submitted_job_id(job_id: str, wrapper: str, line: int | None) -> str:
    """The id of the job that one more ``sbatch`` call of the same script (``wrapper``, ``line``) submits."""
    return f"{job_id}{_CALL}{wrapper}:{line if line is not None else 0}"


def is_submitted_copy(job_id: str) -> bool:
    """Whether ``job_id`` is one more call's job (``submitted_job_id``), not the script's own."""
    return _CALL in job_id


def submission_order(job_id: str) -> tuple[str, int]:
    """A sort key that puts a script's own job first, then the jobs of its further calls by line."""
    if not is_submitted_copy(job_id):
        return job_id, -1
    base, _, call = job_id.partition(_CALL)
    line = call.rpartition(":")[2]
    return base, int(line) if line.isdigit() else 0


@dataclass(frozen=True, slots=True)
class Submission:
    """A nested ``sbatch`` call found in a wrapper script."""

    script: str | None
    options: tuple[KeyValue, ...] = ()
    dependencies: tuple[Dependency, ...] = ()
    captures: str | None = None  # variable receiving the job id (jid=$(sbatch --parsable ...))
    parsable: bool = False
    line: int | None = None
    # SBATCH_* variables sbatch sees at the call (exported before it, or set on its line), as written.
    environment: tuple[KeyValue, ...] = ()


@dataclass(frozen=True, slots=True)
class Unparsed:
    line: int
    reason: str


@dataclass(frozen=True, slots=True)
class ScriptInfo:
    """How much of a shell body was understood."""

    shell: str | None = None
    statements: int = 0
    understood: int = 0
    unparsed: tuple[Unparsed, ...] = ()
    slurm_vars: tuple[str, ...] = ()
    first_command_line: int | None = None
    body: str = ""  # the script text after the directives, for translation
    # The lines before the body as written (shebang, #SBATCH lines, the comments between them),
    # each with its newline; credentials in an --export list keep only their names. sbatch jobs only.
    header: str = ""


@dataclass(frozen=True, slots=True)
class RawItem:
    """Something read that no typed field holds; kept so that nothing is lost."""

    key: str
    value: str = ""
    line: int | None = None
    origin: str = ""  # where it was written: "#SBATCH", a YAML path, "shell" ...
    component: int = 0  # the hetjob component of a directive (0: the first, or the only one)


class UnregisteredRawKeyError(KeyError):
    """A reader gave a raw item a key its registry does not list (a programming error)."""


@dataclass(frozen=True)
class RawKeys:
    """The keys one reader gives the raw items it makes, each with what it holds.

    The reader's registry, as ``diagnostics.CODES`` is for codes: every writer that
    takes that reader's jobs has a row for each key (a test checks it), so no key
    falls through to a default.
    """

    meanings: dict[str, str]

    def item(self, key: str, value: str = "", line: int | None = None, origin: str = "") -> RawItem:
        if key not in self.meanings:
            raise UnregisteredRawKeyError(key)
        return RawItem(key, value, line, origin)


@dataclass(frozen=True, slots=True)
class Directive:
    """One option of a job file's ``#SBATCH`` (or ``#SCRON``) lines, as the user wrote it.

    The typed fields say what an option means; this says how it was written, so that
    a writer can name it in the user's own words (``-N 2``) and at its line.
    """

    option: str  # the long name (``nodes``); for an option sbatch does not know, as written without dashes
    # The spelling used (-N, --nodes, an abbreviation) and the value: ``-N 2``, ``--time=1:00:00``
    # (a long option's value after '=' however it was separated); an --export list names credentials only.
    text: str
    line: int
    component: int = 0  # the hetjob component (0 for the first and for jobs of one component)


@dataclass(frozen=True, slots=True)
class ConfigCredential:
    """A literal credential a reader took out of a ConfigMap: the variable that now stands for it."""

    variable: str
    key: str  # the ConfigMap key that held it


@dataclass(frozen=True, slots=True)
class ConfigMapData:
    """A ConfigMap of the job's own manifest file that the job mounts or reads variables from.

    ``data`` holds its keys without literal credentials: a script is rewritten to
    read each one from a variable, a credential-like key is left out; either way
    ``credentials`` names the variable.
    """

    name: str
    data: tuple[KeyValue, ...] = ()
    credentials: tuple[ConfigCredential, ...] = ()


@dataclass(frozen=True, slots=True)
class Component:
    """One homogeneous part of a job: a hetjob component, a replicated job, a role."""

    name: str = "main"
    replicas: int = 1
    # A JobSet's replicated Job runs this many pods (its parallelism); its job-index labels count Jobs.
    pods_per_job: int = 1
    resources: Resources = field(default_factory=Resources)
    containers: tuple[Container, ...] = ()
    launchers: tuple[Launcher, ...] = ()
    environment: tuple[EnvVar, ...] = ()
    line: int | None = None
    # the MASTER_PORT a training operator gives the pods: a port the manifest names (pytorchjob-port),
    # else the operator's default
    rendezvous_port: int | None = None


@dataclass(frozen=True, slots=True)
class Unresolved:
    """A template placeholder no value was given for (``--set``, ``--env-file``): the field is unknown."""

    name: str  # the variable: NUM_NODES
    role: PlaceholderRole = PlaceholderRole.OTHER
    field: str = ""  # where it stands, in the source's terms: spec.parallelism, --nodes
    line: int | None = None


@dataclass(frozen=True, slots=True)
class Job:
    id: str
    source: SourceRef
    kind: JobKind
    name: str | None = None
    api_version: str | None = None
    components: tuple[Component, ...] = (Component(),)
    time_limit_s: int | None = None
    time_min_s: int | None = None
    begin: str | None = None
    deadline: str | None = None
    hold: bool = False
    array: ArraySpec | None = None
    dependencies: tuple[Dependency, ...] = ()
    placement: Placement = field(default_factory=Placement)
    failure: FailurePolicy = field(default_factory=FailurePolicy)
    io: IOSpec = field(default_factory=IOSpec)
    mail: Mail | None = None
    environment: tuple[EnvVar, ...] = ()
    export: str | None = None  # sbatch --export policy (ALL, NONE, list)
    modules: tuple[str, ...] = ()
    software_envs: tuple[KeyValue, ...] = ()  # conda/venv/spack: kind -> name or path
    storage: tuple[StoragePath, ...] = ()
    monitoring: tuple[MonitoringHook, ...] = ()
    schedule: Schedule | None = None
    services: tuple[Service, ...] = ()
    submits: tuple[Submission, ...] = ()
    labels: tuple[KeyValue, ...] = ()
    annotations: tuple[KeyValue, ...] = ()
    script: ScriptInfo | None = None
    templated: bool = False
    unresolved: tuple[Unresolved, ...] = ()  # placeholders left without a value, fields read as unknown
    raw: tuple[RawItem, ...] = ()
    # What writers need from the job file beyond the typed fields, so that they never read it again:
    directives: tuple[Directive, ...] = ()  # sbatch and scrontab jobs: each option, in line order
    # The options a wrapper's sbatch call gives the job (its command line and SBATCH_* variables),
    # at the lines of ``submitted_by``; they outrank ``directives``, as in sbatch.
    submitted: tuple[Directive, ...] = ()
    submitted_by: str | None = None
    config_maps: tuple[ConfigMapData, ...] = ()  # Kubernetes jobs: the ConfigMaps of their file they use
    sweep: Sweep | None = None  # a hyperparameter search: the parameters each trial gets

    # Convenience views used by the graph, the plan and the writers.
    def total_nodes(self) -> int:
        return sum(c.resources.computed_nodes() * c.replicas for c in self.components)

    def total_gpus(self) -> int:
        return sum(c.resources.computed_gpus() * c.replicas for c in self.components)

    def launcher_names(self) -> tuple[str, ...]:
        seen: dict[str, None] = {}
        for comp in self.components:
            for launcher in comp.launchers:
                seen.setdefault(launcher.name, None)
        return tuple(seen)

    def images(self) -> tuple[str, ...]:
        seen: dict[str, None] = {}
        for comp in self.components:
            for container in comp.containers:
                seen.setdefault(container.image, None)
        return tuple(seen)


def serves_clients(job: Job) -> bool:
    """Whether clients reach the job's pods: a Service selects them or they serve a port of their own.

    Every long-running object gets a service entry; only a port or a Service address is for clients
    (an operator's own ports, such as Ray's, are never counted by the reader).
    """
    return any(service.ports or service.addresses for service in job.services)


def batch_groups(job: Job) -> bool:
    """A LeaderWorkerSet whose pods serve nothing: multi-host batch work in groups, not a service.

    It is translated to Slurm (one allocation per group) and the plan classes it by what it runs;
    a LeaderWorkerSet with a served port or a Service stays on Kubernetes as a service.
    """
    return workloads.launch_of(job.kind) == workloads.Launch.LWS and not serves_clients(job)


def long_running(job: Job) -> bool:
    """A kind that runs until deleted (Deployment, RayCluster ...), unless it is batch work in groups."""
    return workloads.is_serving(job.kind) and not batch_groups(job)


def runs_as_service(job: Job) -> bool:
    """A long-running kind, or a job with a service entry: on for as long as it exists."""
    return long_running(job) or (bool(job.services) and not batch_groups(job))


# -- copies with fields changed ---------------------------------------------------------
# ``dataclasses.replace`` walks a class's fields in Python and runs its frozen ``__init__`` (an
# ``object.__setattr__`` per field), and the readers copy a job, its components or its resources
# for most files they read. A record whose ``__init__`` is the one ``@dataclass`` wrote, with no
# ``__post_init__`` and no init-only or class-level pseudo-fields, holds its fields and nothing
# else: its copy is made by setting them directly. Any other class goes through dataclasses.

_T = TypeVar("_T")
_Copier = Callable[[Any, dict[str, Any]], Any]

# Per class, built on first use.
_COPIERS: dict[type, _Copier] = {}


def replace(obj: _T, /, **changes: Any) -> _T:
    """``dataclasses.replace(obj, **changes)``."""
    cls = obj.__class__
    try:
        copier = _COPIERS[cls]
    except KeyError:
        copier = _COPIERS[cls] = _copier(cls)
    return cast(_T, copier(obj, changes))


def _copier(cls: type) -> _Copier:
    if not _holds_only_its_fields(cls):
        return lambda obj, changes: dataclasses.replace(obj, **changes)
    names = [f.name for f in dataclasses.fields(cls)]
    if "__slots__" not in cls.__dict__:
        return _dict_copier(cls, frozenset(names))
    setters = slot_setters(cls)
    if setters is None:
        return lambda obj, changes: dataclasses.replace(obj, **changes)
    # straight-line code: a loop over the fields with getattr costs twice as much
    lines = ["def copy(obj, changes):", "    new = make(cls)"]
    lines += [f"    set_{name}(new, obj.{name})" for name in names]
    lines += [
        "    for name, value in changes.items():",
        "        setter = setters.get(name)",
        "        if setter is None:",
        "            raise unknown(name)",
        "        setter(new, value)",
        "    return new",
    ]
    scope: dict[str, Any] = {
        "make": object.__new__,
        "cls": cls,
        "setters": setters,
        "unknown": lambda name: _unknown(cls, name),
        **{f"set_{name}": setter for name, setter in setters.items()},
    }
    exec("\n".join(lines), scope)  # names are the class's own fields: identifiers
    return cast(_Copier, scope["copy"])


def _dict_copier(cls: type, names: frozenset[str]) -> _Copier:
    def copy(obj: Any, changes: dict[str, Any]) -> Any:
        for name in changes:
            if name not in names:
                raise _unknown(cls, name)
        new: Any = object.__new__(cls)
        held = new.__dict__  # updated in place: a frozen class's __setattr__ is not called
        held.update(obj.__dict__)
        held.update(changes)
        return new

    return copy


def slot_setters(cls: type) -> dict[str, Callable[[Any, Any], None]] | None:
    """How to set each field of a record that holds only its fields, each in a slot of its own
    class, in field order: a new ``object.__new__(cls)`` with every field set equals the record
    ``__init__`` makes. None for any other class."""
    if not _holds_only_its_fields(cls) or "__slots__" not in cls.__dict__:
        return None
    names = [f.name for f in dataclasses.fields(cls)]
    if any(name not in cls.__dict__ for name in names):  # a slot of a base class: set there
        return None
    return {name: cls.__dict__[name].__set__ for name in names}


def _holds_only_its_fields(cls: type) -> bool:
    if not dataclasses.is_dataclass(cls) or hasattr(cls, "__post_init__"):
        return False
    fields = dataclasses.fields(cls)
    if len(fields) != len(cls.__dataclass_fields__) or not all(f.init for f in fields):
        return False  # an InitVar or a ClassVar, or a field __init__ does not take
    init = cls.__dict__.get("__init__")
    # the __init__ @dataclass writes is compiled from a string; a hand-written one may do more
    return getattr(getattr(init, "__code__", None), "co_filename", None) == "<string>"


def _unknown(cls: type, name: str) -> TypeError:
    return TypeError(f"{cls.__name__}.__init__() got an unexpected keyword argument {name!r}")


__all__ = [
    "IR_VERSION",
    "ArraySpec",
    "ArrayValue",
    "Component",
    "ConfigCredential",
    "ConfigMapData",
    "Container",
    "Dependency",
    "Directive",
    "EnvVar",
    "FailurePolicy",
    "GenericResource",
    "GpuCount",
    "IOSpec",
    "Job",
    "KeyValue",
    "Launcher",
    "Mail",
    "MonitoringHook",
    "Mount",
    "Objective",
    "Placement",
    "RawItem",
    "RawKeys",
    "Resources",
    "Schedule",
    "ScriptInfo",
    "SearchParameter",
    "SecretRef",
    "Service",
    "Signal",
    "SourceRef",
    "StoragePath",
    "Submission",
    "Sweep",
    "TrialParameter",
    "Unparsed",
    "UnregisteredRawKeyError",
    "batch_groups",
    "long_running",
    "replace",
    "runs_as_service",
    "serves_clients",
    "slot_setters",
]
