"""Which Kubernetes kind a job becomes, and why.

``auto`` looks at the workload: scrontab entries and self-resubmitting scripts
with ``--begin`` become CronJobs, heterogeneous jobs JobSets, arrays and
single-node jobs (Indexed) Jobs, multi-node torch launchers PyTorchJobs, MPI
launchers MPIJobs, other multi-node jobs JobSets. A requested flavor that
cannot express the job falls back to what ``auto`` would pick, with a reason
(``flavor_registry.choose``, which holds each flavor's declaration).
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

from migrate import ir

from ..shell.servers import server_in

AUTO = "auto"
JOB = "job"
JOBSET = "jobset"
VOLCANO = "volcano"
KUEUE = "kueue"
PYTORCHJOB = "pytorchjob"
MPIJOB = "mpijob"
CRONJOB = "cronjob"
SLURM_BRIDGE = "slurm-bridge"
RAYJOB = "rayjob"  # native only: the script starts a Ray cluster (native_ray)
LWS = "lws"  # native only: the script serves a model across nodes (native_lws)

TORCH_LAUNCHERS = frozenset(
    {"torchrun", "torch.distributed.run", "torch.distributed.launch", "accelerate", "deepspeed"}
)
MPI_LAUNCHERS = frozenset({"mpirun", "mpiexec", "orterun"})
_BEGIN_OPTION = re.compile(r"(?:--begin|-b)(?:[= ]|\Z)")
_NPROC = re.compile(r"--nproc[_-]per[_-]node(?:=(\S+))?\Z")


@dataclass(frozen=True)
class Choice:
    flavor: str  # what was built: job | jobset | volcano | pytorchjob | mpijob | cronjob
    kueue: bool  # admitted through Kueue (labels, suspend, queues)
    reason: str
    requested: str
    fell_back: bool = False
    cannot: str | None = None  # why the requested flavor cannot express the job, when it fell back
    bridge: bool = False  # scheduled by slurm-bridge (schedulerName and slurmjob annotations)

    @property
    def name(self) -> str:
        """The flavor as the user names it (``kueue`` for Kueue-wrapped output)."""
        if self.bridge:
            return SLURM_BRIDGE
        return KUEUE if self.kueue else self.flavor


_VARIABLE = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?\Z")


def _words(launcher: ir.Launcher, values: dict[str, str] | None = None) -> list[str]:
    """The program's first words; one held in a variable the script set to a literal is read through it
    (``export TORCHRUN=torchrun; srun ${TORCHRUN} ...``)."""
    out = []
    for word in launcher.program[:3]:
        m = _VARIABLE.match(word)
        if m and values and m.group(1) in values:
            out.extend(values[m.group(1)].split())
        else:
            out.append(word)
    return [posixpath.basename(w) for w in out[:3]]


def _literals(job: ir.Job, comp: ir.Component) -> dict[str, str]:
    return {
        e.name: e.value
        for e in (*job.environment, *comp.environment)
        if e.value is not None and e.secret is None and "$" not in e.value
    }


def torch_launcher(job: ir.Job) -> ir.Launcher | None:
    for comp in job.components:
        values = _literals(job, comp)
        for launcher in comp.launchers:
            words = _words(launcher, values)
            if launcher.name in TORCH_LAUNCHERS or (words and words[0] in TORCH_LAUNCHERS):
                return launcher
            if (
                len(words) >= 3
                and words[0].startswith("python")
                and words[1] == "-m"
                and words[2] in TORCH_LAUNCHERS
            ):
                return launcher
    return None


def nproc_per_node(launcher: ir.Launcher | None, gpus: int) -> str:
    """torchrun's --nproc_per_node when it is a number, else the GPUs per pod (or "auto")."""
    values: list[str] = [
        kv.value
        for kv in (launcher.options if launcher else ())
        if kv.key.lstrip("-").replace("_", "-") == "nproc-per-node"
    ]
    words = list(launcher.program) if launcher else []
    for i, word in enumerate(words):
        m = _NPROC.match(word)
        if m:
            values.append(m.group(1) or (words[i + 1] if i + 1 < len(words) else ""))
    for value in values:
        if value.isascii() and value.isdigit():
            return value
    return str(gpus) if gpus else "auto"


def launches_torch(launcher: ir.Launcher) -> bool:
    """Whether one launcher line starts a torch launcher (by its first words, without the script's
    variables: ``torch_launcher`` reads those)."""
    words = [w.rsplit("/", 1)[-1] for w in launcher.program[:3]]
    return (
        launcher.name in TORCH_LAUNCHERS
        or bool(words and words[0] in TORCH_LAUNCHERS)
        or (len(words) == 3 and words[1] == "-m" and words[2] in TORCH_LAUNCHERS)
    )


def launches_mpi(launcher: ir.Launcher) -> bool:
    """Whether one launcher line starts mpirun (or mpiexec, orterun)."""
    words = [w.rsplit("/", 1)[-1] for w in launcher.program[:1]]
    return launcher.name in MPI_LAUNCHERS or bool(words and words[0] in MPI_LAUNCHERS)


def mpi_launcher(job: ir.Job) -> ir.Launcher | None:
    for comp in job.components:
        values = _literals(job, comp)
        for launcher in comp.launchers:
            words = _words(launcher, values)
            if launcher.name in MPI_LAUNCHERS or (words and words[0] in MPI_LAUNCHERS):
                return launcher
            if launcher.name == "srun" and any(
                kv.key.lstrip("-") == "mpi" and kv.value != "none" for kv in launcher.options
            ):
                return launcher
    return None


def self_resubmit_begin(job: ir.Job) -> str | None:
    """The ``--begin`` of a script that submits itself again, if it does."""
    stem = posixpath.basename(job.source.path)
    for sub in job.submits:
        script = (sub.script or "").strip("\"'")
        if (
            script in ("$0", "${0}", "$BASH_SOURCE", "${BASH_SOURCE[0]}")
            or posixpath.basename(script) == stem
        ):
            for kv in sub.options:
                if kv.key.lstrip("-") in ("begin", "b"):
                    return kv.value
    return None


def auto(job: ir.Job) -> tuple[str, str]:
    if job.schedule is not None:
        return CRONJOB, f"scrontab entry ({job.schedule.cron})"
    begin = self_resubmit_begin(job)
    if begin is not None:
        return CRONJOB, f"the script resubmits itself with --begin={begin}: a recurring schedule"
    if len(job.components) > 1:
        return JOBSET, f"heterogeneous job with {len(job.components)} components: one replicated job each"
    if job.array is not None:
        return JOB, f"job array ({job.array.spec}): an Indexed Job"
    nodes = job.total_nodes()
    if nodes <= 1:
        return JOB, "single node: a Job with one pod"
    torch = torch_launcher(job)
    if torch is not None:
        return PYTORCHJOB, f"{nodes} nodes with the {torch.name} launcher: a PyTorchJob (Master + Workers)"
    mpi = mpi_launcher(job)
    if mpi is not None:
        return MPIJOB, f"{nodes} nodes with {mpi.name} (MPI): an MPIJob (Launcher + Workers)"
    return JOBSET, f"{nodes} nodes: a JobSet with one pod per node and stable host names"


def starts_ray(job: ir.Job) -> bool:
    """Whether the script starts a Ray head (a text search: native_ray reads it)."""
    body = job.script.body if job.script is not None else ""
    return "ray start" in body and "--head" in body


def serves_across_nodes(job: ir.Job) -> bool:
    """Whether a multi-node script names a model server (a text search: native_lws reads it)."""
    body = job.script.body if job.script is not None else ""
    return job.total_nodes() > 1 and server_in(body) is not None


__all__ = [
    "Choice",
    "auto",
    "launches_mpi",
    "launches_torch",
    "mpi_launcher",
    "nproc_per_node",
    "self_resubmit_begin",
    "serves_across_nodes",
    "starts_ray",
    "torch_launcher",
]
