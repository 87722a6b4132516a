"""Every ``MIGRATE_*`` variable, defined once: who sets it, what it means, and its default.

The bash and Perl shims are written with placeholders that this table fills in: ``@{MIGRATE_X}``
becomes ``${MIGRATE_X:-default}`` (``${MIGRATE_X:-}`` where unset means absent) and
``@perl{MIGRATE_X}`` becomes ``$ENV{MIGRATE_X} || 'default'`` (``$ENV{MIGRATE_X} // ''``), so that
a default lives here and nowhere else. The Python writers name a variable through its entry
(``POD.NODES.name``). ``tests/test_job_variables.py`` checks that no other module spells one. The tool's own
``MIGRATE_CACHE_DIR`` is not a job's: ``migrate/scan/cache.py`` defines it (a warm scan loads no
translator module).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum


class SetBy(StrEnum):
    WRITER = "the writer, in the pod's env"
    SHIMS = "the entrypoint and shims, for each other"
    SITE = "the site or the user, to tune a default"
    SCRIPT = "the generated sbatch script"
    USER = "the user, before submitting"


@dataclass(frozen=True)
class Variable:
    name: str
    set_by: SetBy
    meaning: str
    default: str | None = None  # what the shims take when it is unset or empty; None: unset means absent


class POD:
    """The pods' variables (Slurm to Kubernetes), read by the entrypoint, srun shim and step service."""

    DIR = Variable(
        "MIGRATE_DIR", SetBy.WRITER, "where the entrypoint, shims and job script are", "/opt/migrate"
    )
    INDEX_FROM = Variable(
        "MIGRATE_INDEX_FROM", SetBy.WRITER, "the name of the variable that holds this pod's index"
    )
    NODES = Variable("MIGRATE_NODES", SetBy.WRITER, "the node count of this pod's component", "1")
    TASKS_PER_NODE = Variable("MIGRATE_TASKS_PER_NODE", SetBy.WRITER, "srun's tasks per pod by default", "1")
    TASK_LAYOUT = Variable(
        "MIGRATE_TASK_LAYOUT", SetBy.WRITER, "the job's tasks on each node where they differ (15,1)"
    )
    STEP_GPUS = Variable(
        "MIGRATE_STEP_GPUS", SetBy.WRITER, "a step's GPUs per node where --exclusive gave the job more"
    )
    NODE_CPUS = Variable(
        "MIGRATE_NODE_CPUS", SetBy.WRITER, "the job's CPUs on each node where they differ (15,1)"
    )
    NODE_OFFSET = Variable("MIGRATE_NODE_OFFSET", SetBy.WRITER, "the first node id of this component", "0")
    HET_GROUP = Variable("MIGRATE_HET_GROUP", SetBy.WRITER, "the hetjob component of this pod")
    HOSTS = Variable("MIGRATE_HOSTS", SetBy.WRITER, "the host names of the job's pods, in node order")
    HOST_PREFIX = Variable("MIGRATE_HOST_PREFIX", SetBy.WRITER, "host names as prefix + node index + suffix")
    HOST_SUFFIX = Variable("MIGRATE_HOST_SUFFIX", SetBy.WRITER, "see MIGRATE_HOST_PREFIX")
    ARRAY_RANGES = Variable(
        "MIGRATE_ARRAY_RANGES", SetBy.WRITER, "the array's start:step:count runs, mapped from the pod index"
    )
    JOB_UID = Variable("MIGRATE_JOB_UID", SetBy.WRITER, "what SLURM_JOB_ID says: the job's uid or name", "0")
    RESTARTS = Variable("MIGRATE_RESTARTS", SetBy.WRITER, "how often the job restarted", "0")
    TIME_LIMIT = Variable("MIGRATE_TIME_LIMIT", SetBy.WRITER, "the time limit in seconds")
    SRUN_MODE = Variable(
        "MIGRATE_SRUN_MODE",
        SetBy.WRITER,
        "local (the step service) or mpirun (an MPIJob's launcher)",
        "local",
    )
    SIGNAL = Variable("MIGRATE_SIGNAL", SetBy.WRITER, "--signal's signal")
    SIGNAL_LEAD = Variable("MIGRATE_SIGNAL_LEAD", SetBy.WRITER, "--signal's seconds before the limit", "60")
    SIGNAL_BATCH_ONLY = Variable(
        "MIGRATE_SIGNAL_BATCH_ONLY", SetBy.WRITER, "1: --signal=B:, the batch shell only", "0"
    )
    STDOUT = Variable("MIGRATE_STDOUT", SetBy.WRITER, "--output's pattern")
    STDERR = Variable("MIGRATE_STDERR", SetBy.WRITER, "--error's pattern")
    STDIN = Variable("MIGRATE_STDIN", SetBy.WRITER, "--input's file")
    OPEN_MODE = Variable("MIGRATE_OPEN_MODE", SetBy.WRITER, "--open-mode", "truncate")
    RESUBMIT_BY_SCHEDULE = Variable(
        "MIGRATE_RESUBMIT_BY_SCHEDULE", SetBy.WRITER, "1: a CronJob runs what the script resubmitted", "0"
    )
    JOBSET_INDEX = Variable("MIGRATE_JOBSET_INDEX", SetBy.WRITER, "a JobSet pod's replicated-job index")
    STEP_TOKEN = Variable("MIGRATE_STEP_TOKEN", SetBy.WRITER, "the job's secret the step service checks")
    STEP_PORT = Variable("MIGRATE_STEP_PORT", SetBy.SITE, "the step service's port", "6820")
    STEP_WAIT = Variable("MIGRATE_STEP_WAIT", SetBy.SITE, "seconds a step waits for a pod to serve", "600")
    RELEASE_WAIT = Variable("MIGRATE_RELEASE_WAIT", SetBy.SITE, "seconds the end of the job waits", "30")
    GROUP_NODEID = Variable("MIGRATE_GROUP_NODEID", SetBy.SHIMS, "this pod's node id in its component")
    NODE_INDEX = Variable(
        "MIGRATE_NODE_INDEX", SetBy.SHIMS, "this pod's node id in the job", "${SLURM_NODEID:-0}"
    )
    BATCH_HOST = Variable("MIGRATE_BATCH_HOST", SetBy.SHIMS, "the host of node 0, where the script runs")
    IN_STEP = Variable("MIGRATE_IN_STEP", SetBy.SHIMS, "1: inside a step started by the srun shim", "0")
    STDIN_TASK = Variable("MIGRATE_STDIN_TASK", SetBy.SHIMS, "the task that takes srun's stdin (--input=N)")
    POLL_SECONDS = Variable(
        "MIGRATE_POLL_SECONDS", SetBy.SITE, "submit.sh's wait between kubectl polls", "10"
    )


class SLURM:
    """The generated sbatch scripts' variables (Kubernetes to Slurm)."""

    FILES_DIR = Variable(
        "MIGRATE_FILES_DIR",
        SetBy.USER,
        "where inlined ConfigMap files go",
        "$SLURM_SUBMIT_DIR/.migrate-files",
    )
    CONFIG_DIR = Variable(
        "MIGRATE_CONFIG_DIR", SetBy.USER, "ConfigMaps provisioned as files", "$HOME/.migrate/configmaps"
    )
    SECRETS_DIR = Variable(
        "MIGRATE_SECRETS_DIR", SetBy.USER, "Secrets provisioned as files", "$HOME/.migrate/secrets"
    )
    FILES = Variable("MIGRATE_FILES", SetBy.SCRIPT, "this job's inlined files, on every node")
    SCRATCH = Variable("MIGRATE_SCRATCH", SetBy.SCRIPT, "emptyDir volumes, node-local")
    LWS_GROUP = Variable("MIGRATE_LWS_GROUP", SetBy.SCRIPT, "a LeaderWorkerSet group's index", "0")
    SECRET_PREFIX = Variable("MIGRATE_SECRET_", SetBy.USER, "a concealed value: MIGRATE_SECRET_<NAME>")


VARIABLES: tuple[Variable, ...] = (
    *(v for v in vars(POD).values() if isinstance(v, Variable)),
    *(v for v in vars(SLURM).values() if isinstance(v, Variable)),
)
BY_NAME = {v.name: v for v in VARIABLES}

_PLACEHOLDER = re.compile(r"@(perl)?\{(MIGRATE_[A-Z_]+)\}")


def bash_value(variable: Variable) -> str:
    """The variable as bash reads it, with its default."""
    return f"${{{variable.name}:-{variable.default or ''}}}"


def _perl_value(variable: Variable) -> str:
    if variable.default is None:  # unset means absent: a value of 0 stays 0
        return f"$ENV{{{variable.name}}} // ''"
    default = variable.default
    return f"$ENV{{{variable.name}}} || {default if default.isdigit() else repr(default)}"


def fill(text: str) -> str:
    """A shim's text with its placeholders filled from the table (an unknown name is a KeyError)."""
    return _PLACEHOLDER.sub(
        lambda m: (_perl_value if m.group(1) else bash_value)(BY_NAME[m.group(2)]),
        text,
    )
