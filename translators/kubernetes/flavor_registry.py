"""The Kubernetes output flavors, one declaration each.

A ``Flavor`` holds what the rest of the program needs to know about one
``--flavor``: the object it writes and the file it goes to, the function that
builds it, why it cannot take a job, whether slurm-bridge can schedule it,
the script the conversion matrix tries it with, what it does with the
script's launchers, and, for the kinds only a native reading of the script
makes, how that reading is recorded. ``choose`` (and through it the CLI's and
``translate_jobs``' check of the name), the writer (``writer.translate_job``)
and the conversion matrix (``migrate.matrix``) read this registry.

Some behaviour stays with the module that owns it and is keyed by the name:
the job policy's Kueue and Volcano queues (``job_policy.py``) and how the
native reading lays a step out in each kind (``native.py``); a new flavor
gets the plain Job's handling there, and the emulated style.

A flavor that picks another (``auto``, ``kueue``, ``slurm-bridge``) has a
``pick`` instead of a builder: it gets what ``auto`` would write, and why.

Adding a flavor is one declaration and one ``register`` call (or ``registered``
for a while, as the tests do); see docs/architecture.md.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol

from migrate import ir
from migrate.declared import Declared

from . import batchjob, cron, jobset, kinds, leaderworkerset, lws, rayjob, training, volcano
from .flavors import (
    AUTO,
    CRONJOB,
    JOB,
    JOBSET,
    KUEUE,
    LWS,
    MPIJOB,
    PYTORCHJOB,
    RAYJOB,
    SLURM_BRIDGE,
    VOLCANO,
    Choice,
    auto,
    launches_mpi,
    launches_torch,
    mpi_launcher,
    self_resubmit_begin,
    serves_across_nodes,
    starts_ray,
    torch_launcher,
)
from .job_policy import JobPolicy
from .storage import Volume
from .translation_context import Context, Workload
from .yamlemit import Manifest


class Builder(Protocol):
    """Writes the job's workload: its manifests (ConfigMap, Service, the object) and what to wait on."""

    def __call__(
        self, ctx: Context, policy: JobPolicy, volumes: list[Volume], kueue: bool = False
    ) -> tuple[list[Manifest], Workload]: ...


# A flavor that picks another: (job, what auto picks, why) -> the choice.
Pick = Callable[[ir.Job, str, str], Choice]


@dataclass(frozen=True)
class NativeOnly:
    """A kind only a native reading of the script makes: its shape decides, not ``--flavor``."""

    reads_as: str  # what the script must read as, in choose's reason
    name_max: int  # the object's name limit (its operator names children after it)
    reason: str  # the flavor's reason when the native reading makes it
    what: str  # what an emulated script does not read as, when --flavor asks for the kind
    record: Callable[[Context, Any], None]  # the fidelity entries of the native plan


def _takes_any(job: ir.Job) -> str | None:
    return None


def _no_note(launcher: ir.Launcher) -> str | None:
    return None


@dataclass(frozen=True)
class Output:
    """What a flavor writes: the file in the job's folder, the object in it and the function that builds
    it. The object is one the Kubernetes reader knows (kinds.py), so that what is written reads back."""

    file_name: str
    api_version: str
    kind: str
    build: Builder


@dataclass(frozen=True)
class Flavor:
    """One ``--flavor``: what it writes and when it cannot."""

    name: str
    output: Output | None = None  # None for a flavor that picks another
    cannot: Callable[[ir.Job], str | None] = _takes_any  # why it cannot express the job; None: it can
    schedules: bool = False  # it takes a scrontab entry (it has a schedule)
    bridged: bool = False  # slurm-bridge's scheduler reads it as its pods' owner
    pick: Pick | None = None  # it picks another flavor from what auto picks (auto, kueue, slurm-bridge)
    matrix_body: str = ""  # the script body the conversion matrix tries it with; "": not in the matrix
    native_only: NativeOnly | None = None
    # what the object does with a launcher line of an emulated script (mapped), when not the shims' srun
    launcher_note: Callable[[ir.Launcher], str | None] = _no_note
    resubmit_note: str = ""  # what becomes of a script's sbatch of itself, when the object repeats it


_FLAVORS: Declared[Flavor] = Declared("flavor", lambda flavor: _problem(flavor))
_REGISTRY = _FLAVORS.table


def flavors() -> tuple[Flavor, ...]:
    """Every registered flavor, in the order ``--flavor`` lists them."""
    return tuple(_REGISTRY.values())


def names() -> tuple[str, ...]:
    return tuple(_REGISTRY)


def get(name: str) -> Flavor:
    if name not in _REGISTRY:
        raise ValueError(f"unknown flavor {name!r}; expected one of {', '.join(_REGISTRY)}")
    return _REGISTRY[name]


def native_only(name: str | None) -> NativeOnly | None:
    """How the kind ``name`` is made when only a native reading makes it; None for the others."""
    flavor = _REGISTRY.get(name or "")
    return flavor.native_only if flavor is not None else None


def output(name: str) -> Output:
    """What the flavor ``name`` writes (``Choice.flavor`` names one that writes)."""
    out = get(name).output
    if out is None:
        raise ValueError(f"flavor {name!r} picks another flavor and writes nothing itself")
    return out


def _problem(flavor: Flavor) -> str | None:
    out = flavor.output
    if (out is None) == (flavor.pick is None):
        return "a flavor either writes an object (output) or picks another flavor (pick)"
    if out is None:
        return None
    if not out.file_name.endswith(".yaml") or out.file_name == "kustomization.yaml":
        return f"{out.file_name} is not a manifest file name of its own"
    if any(f.output is not None and f.output.file_name == out.file_name for f in _REGISTRY.values()):
        return f"another flavor writes {out.file_name}"
    group, version = kinds.split_api_version(out.api_version)
    known = kinds.workload_kind(group, out.kind)
    if known is None or version not in known.versions:
        return f"the Kubernetes reader does not know {out.api_version} {out.kind} (kinds.py)"
    return None


def register(flavor: Flavor) -> Flavor:
    """Make ``flavor`` a ``--flavor`` choice everywhere: choose, the writer, the matrix."""
    return _FLAVORS.register(flavor)


def registered(*added: Flavor) -> AbstractContextManager[None]:
    """The flavors registered for the block; the registry as it was afterwards."""
    return _FLAVORS.registered(*added)


_NO_SCHEDULE = "a scrontab entry needs a schedule, which only a CronJob has"


def choose(job: ir.Job, requested: str) -> Choice:
    """The flavor ``job`` gets when ``requested`` is asked for, and why (a fallback says why not)."""
    flavor = get(requested)
    picked, why = auto(job)
    if flavor.pick is not None:
        return flavor.pick(job, picked, why)
    problem = _NO_SCHEDULE if job.schedule is not None and not flavor.schedules else flavor.cannot(job)
    only = flavor.native_only
    if problem is None and only is not None:  # the native reading decides; emulated, auto's pick
        return Choice(picked, False, f"--flavor {requested}: {why} unless {only.reads_as}", requested)
    if problem is None:
        return Choice(requested, False, f"--flavor {requested}", requested)
    return Choice(
        picked,
        False,
        f"--flavor {requested} cannot express this job ({problem}); {why}",
        requested,
        fell_back=True,
        cannot=problem,
    )


# The declarations, in the order --flavor lists them.


def _auto(job: ir.Job, picked: str, why: str) -> Choice:
    return Choice(picked, False, why, AUTO)


register(Flavor(AUTO, pick=_auto))

_ONE_STEP = "srun python train.py"


def _job_cannot(job: ir.Job) -> str | None:
    if len(job.components) > 1:
        return "a Job has one pod template; this heterogeneous job has several components"
    return None


_JOB = Output("job.yaml", "batch/v1", "Job", batchjob.build)
register(Flavor(JOB, _JOB, _job_cannot, bridged=True, matrix_body=_ONE_STEP))


def _jobset_cannot(job: ir.Job) -> str | None:
    if job.array is not None:
        return "a job array needs an Indexed Job (a JobSet would run only its first task)"
    return None


_JOBSET = Output("jobset.yaml", "jobset.x-k8s.io/v1alpha2", "JobSet", jobset.build)
register(Flavor(JOBSET, _JOBSET, _jobset_cannot, bridged=True, matrix_body=_ONE_STEP))


def _build_volcano(
    ctx: Context, policy: JobPolicy, volumes: list[Volume], kueue: bool = False
) -> tuple[list[Manifest], Workload]:
    return volcano.build(ctx, policy, volumes)  # Kueue admits a Job instead (see _kueue)


_VOLCANO = Output("volcano-job.yaml", "batch.volcano.sh/v1alpha1", "Job", _build_volcano)
register(Flavor(VOLCANO, _VOLCANO, matrix_body=_ONE_STEP))


def _kueue(job: ir.Job, picked: str, why: str) -> Choice:
    base = picked if picked != VOLCANO else JOB
    return Choice(base, True, f"Kueue admits the {base}: {why}", KUEUE)


register(Flavor(KUEUE, pick=_kueue, matrix_body=_ONE_STEP))


def _launched(
    launcher: Callable[[ir.Job], ir.Launcher | None], missing: str, kind: str
) -> Callable[[ir.Job], str | None]:
    """A training operator's job: one launcher it runs, in one homogeneous component."""

    def cannot(job: ir.Job) -> str | None:
        if launcher(job) is None:
            return missing
        if len(job.components) > 1 or job.array is not None:
            return f"{kind} has no heterogeneous components or arrays"
        return None

    return cannot


_PYTORCHJOB = Output("pytorchjob.yaml", "kubeflow.org/v1", "PyTorchJob", training.build_pytorch)
_NO_TORCH = "no torchrun/torch.distributed.run/accelerate/deepspeed launcher in the script"
_TORCH = _launched(torch_launcher, _NO_TORCH, "a PyTorchJob")
_TORCH_NOTE = (
    "PyTorchJob: srun starts it once in every pod (launchers start once per node) with the operator's "
    "MASTER_ADDR/PET_* rendezvous"
)
register(
    Flavor(
        PYTORCHJOB,
        _PYTORCHJOB,
        _TORCH,
        matrix_body="srun torchrun --nproc_per_node=8 train.py",
        launcher_note=lambda launcher: _TORCH_NOTE if launches_torch(launcher) else None,
    )
)

_MPIJOB = Output("mpijob.yaml", "kubeflow.org/v2beta1", "MPIJob", training.build_mpi)
_MPI = _launched(mpi_launcher, "no mpirun/mpiexec or srun --mpi launcher in the script", "an MPIJob")


def _mpi_note(launcher: ir.Launcher) -> str | None:
    if launches_mpi(launcher) or launcher.name == "srun":
        return (
            "MPIJob: runs in the Launcher pod and reaches the Workers through the operator's hostfile "
            "(srun becomes mpirun there)"
        )
    return None


register(Flavor(MPIJOB, _MPIJOB, _MPI, matrix_body="srun --mpi=pmix ./simulate", launcher_note=_mpi_note))


def _cronjob_cannot(job: ir.Job) -> str | None:
    if job.schedule is None and self_resubmit_begin(job) is None:
        return "the job has no schedule (not a scrontab entry or a self-resubmitting script)"
    return None


# Not in the matrix: it takes scrontab entries and self-resubmitting scripts, handled as a Job's options.
_CRONJOB = Output("cronjob.yaml", "batch/v1", "CronJob", cron.build)
_NEXT_RUN = "the CronJob schedule starts the next run; the sbatch shim does nothing"
register(Flavor(CRONJOB, _CRONJOB, _cronjob_cannot, schedules=True, bridged=True, resubmit_note=_NEXT_RUN))


def _slurm_bridge(job: ir.Job, picked: str, why: str) -> Choice:
    if _REGISTRY[picked].bridged:
        return Choice(picked, False, f"slurm-bridge schedules the {picked}: {why}", SLURM_BRIDGE, bridge=True)
    # other kinds' pods cannot be scheduled: what auto would make a PyTorchJob or an MPIJob is a JobSet
    reason = (
        f"slurm-bridge schedules a JobSet ({why}, but the bridge reads only Jobs, JobSets, "
        "LeaderWorkerSets and PodGroups as a pod's owner)"
    )
    return Choice(JOBSET, False, reason, SLURM_BRIDGE, bridge=True)


register(Flavor(SLURM_BRIDGE, pick=_slurm_bridge, matrix_body=_ONE_STEP))


def _unless(reads: Callable[[ir.Job], bool], missing: str) -> Callable[[ir.Job], str | None]:
    """A flavor that takes only the scripts that read as something: ``missing`` for the others."""
    return lambda job: None if reads(job) else missing


_RAY_ONLY = NativeOnly(
    "the script reads as a Ray cluster",
    rayjob.NAME_MAX,  # KubeRay names the RayCluster after it, with a suffix
    "the script starts a Ray cluster and runs a driver on it: a RayJob",
    "a Ray cluster and its driver",
    rayjob.record,
)
_RAYJOB = Output("rayjob.yaml", "ray.io/v1", "RayJob", rayjob.build)
register(
    Flavor(RAYJOB, _RAYJOB, _unless(starts_ray, "no ray start --head in the script"), native_only=_RAY_ONLY)
)

_LWS_ONLY = NativeOnly(
    "the script reads as a multi-node server",
    lws.NAME_MAX,  # the workers' StatefulSet is <name>-0
    "the script serves a model across its nodes: a LeaderWorkerSet group, its leader behind a Service",
    "a model server across nodes",
    lws.record,
)
_LWS = Output("leaderworkerset.yaml", "leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet", leaderworkerset.build)
_SERVES = _unless(serves_across_nodes, "no model server started across several nodes in the script")
register(Flavor(LWS, _LWS, _SERVES, native_only=_LWS_ONLY))

FLAVORS = names()  # the built-in flavors; ``names()`` also has those registered later

__all__ = [
    "FLAVORS",
    "Builder",
    "Flavor",
    "NativeOnly",
    "Output",
    "choose",
    "flavors",
    "get",
    "names",
    "native_only",
    "output",
    "register",
    "registered",
]
