"""Native translations: the pods run the step's program itself, as a Kubernetes engineer writes it.

``--style native`` (or ``auto`` when the script allows it) reads the script's
shape (:mod:`.native_shape`) and writes, instead of the script and its shims:

- the step's launcher and its arguments as the container's ``command`` and
  ``args``, each value the batch shell would have expanded written out: the
  node count, ``--nproc_per_node``, node 0's address as the workload names it
  (the PyTorchJob's ``$(MASTER_ADDR)``, the JobSet's or Indexed Job's DNS name
  of pod 0), the node index as the field that holds it (``$(RANK)``, the
  JobSet job index, the completion index);
- the script's exported values as the container's env, and the ``SLURM_*``
  values the program reads as literals or pod fields;
- the statements that prepare the run in an init step that runs once before
  the workers start: an init container of the PyTorchJob's Master or the
  MPIJob's Launcher (the Workers' launchers wait at the rendezvous, or for
  mpirun, until it has run), a ``prepare`` replicated job the JobSet's nodes
  depend on, the init container of a single pod (of each array task, as each
  Slurm array task runs its own script).

Which targets are native: PyTorchJob and JobSet for torch launchers and one
program per node, MPIJob for MPI programs, Job for one pod or an array of
them. Everything else is emulated; :func:`decide` says why.
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass
from typing import Any

from migrate import ir
from migrate.site.task_layout import layout_text
from migrate.vocab import SecretKind

from ..shell.launchers import SHELLS
from ..shell.variables import slurm_variables
from . import flavors
from .native_shape import PER_NODE_STEPS, Shape, Statement, StepKind, read_shape, references
from .native_words import RefKind, Unknown, literal
from .slurmenv import JOB_ID_VARS, NAME_AS_JOB_ID

NATIVE = "native"
EMULATE = "emulate"
AUTO = "auto"
STYLES = (AUTO, NATIVE, EMULATE)

INIT_CONTAINER = "prepare"
NODE_RANK = "NODE_RANK"  # the JobSet pod's node index, from its job-index label
JOBSET_INDEX_LABEL = "jobset.sigs.k8s.io/job-index"
COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"
_KUBELET_DOLLAR = re.compile(r"\$(?=[$(])")
_SLURM_IN_TEXT = re.compile(r"SLURMD?_[A-Z0-9_]+")
_REFERENCE = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)")

# SLURM_* values that are the same in every pod of the job
_NODES = frozenset({"SLURM_NNODES", "SLURM_JOB_NUM_NODES"})
_TASKS = frozenset({"SLURM_NTASKS", "SLURM_NPROCS"})
_JOB_NAME = frozenset({"SLURM_JOB_NAME"})
_NODE_INDEX = frozenset({"SLURM_NODEID"})
TASK_IDENTITY = frozenset(
    {
        "SLURM_PROCID",
        "SLURM_LOCALID",
        "SLURM_NODEID",
        "SLURM_NTASKS",
        "SLURM_NNODES",
        "SLURM_JOB_ID",
        "SLURM_JOB_NAME",
    }
)
_TASK_INDEX = frozenset({"SLURM_PROCID"})


@dataclass
class Decision:
    style: str  # native | emulate
    reason: str
    line: int | None = None


@dataclass
class Plan:
    """What each pod of a native translation runs, for one workload kind."""

    shape: Shape
    target: str  # pytorchjob | jobset | job | mpijob
    name: str
    nodes: int
    tasks_per_node: int
    gpus_per_node: int
    head: str  # node 0's address, as args may hold it
    head_name: str  # node 0's address as a literal (for the init step)
    array_zero_based: bool = True
    cpus_per_task: int | None = None
    elastic: tuple[int, int] | None = None  # (min, max) pods: torchrun's rendezvous is the operator's

    # --- values -------------------------------------------------------------
    def index_arg(self) -> str:
        return {"pytorchjob": "$(RANK)", "jobset": f"$({NODE_RANK})", "job": "$(JOB_COMPLETION_INDEX)"}.get(
            self.target, "0"
        )

    def slurm(self, name: str, in_args: bool, node0: bool = False) -> str:
        """A SLURM_* value as the pod has it; raises Unknown when native cannot give it."""
        if name in _NODES:
            return str(self.nodes)
        if name in _TASKS:
            return str(self.nodes * self.tasks_per_node)
        if name == "SLURM_NTASKS_PER_NODE":
            return str(self.tasks_per_node)
        if name in _JOB_NAME or name in JOB_ID_VARS:
            return self.name
        if name in ("SLURM_GPUS_ON_NODE", "SLURM_GPUS_PER_NODE") and self.gpus_per_node:
            return str(self.gpus_per_node)
        if name == "SLURM_CPUS_PER_TASK" and self.cpus_per_task:
            return str(self.cpus_per_task)
        if name == "SLURM_LOCALID" and self.tasks_per_node == 1:
            return "0"
        if name in _NODE_INDEX or (name in _TASK_INDEX and self.tasks_per_node == 1):
            if node0 or (self.nodes == 1 and self.target != "job"):
                return "0"
            if not in_args and self.target == "pytorchjob":
                raise Unknown(
                    f"${name}: the PyTorchJob's pod rank ($RANK) is set by the operator after the env"
                )
            return self.index_arg()
        if name == "SLURM_ARRAY_TASK_ID" and self.target == "job" and self.array_zero_based:
            return "$(JOB_COMPLETION_INDEX)"
        raise Unknown(f"${name} has no native counterpart in a {self.target}")

    def render(self, word: list[Any], in_args: bool = True, node0: bool = False) -> str:
        out = []
        for seg in word:
            if isinstance(seg, str):
                out.append(_KUBELET_DOLLAR.sub("$$", seg))
            elif seg.kind is RefKind.HEAD:
                out.append(self.head_name if node0 else self.head)
            else:
                out.append(self.slurm(seg.name, in_args, node0))
        return "".join(out)

    # --- the container ------------------------------------------------------
    def argv(self) -> list[str]:
        step = self.shape.step
        assert step is not None
        words = [self.render(w) for w in step.argv]
        if step.kind is StepKind.MPI and step.launcher == "srun --mpi":
            words = ["mpirun", "-np", str(self.nodes * self.tasks_per_node), *words]
        if step.kind is StepKind.MPI and self.target == "mpijob":
            # ranks started over ssh see none of the pod's env: Open MPI passes what -x names
            words = [words[0], *(w for n in self.forwarded() for w in ("-x", n)), *words[1:]]
        if self.elastic is not None:
            words = _without_rendezvous(words)
        if self.target == "pytorchjob":
            prefix = [
                f"{n}={self.slurm(n, True)}"
                for n in sorted(self.program_reads() & (_NODE_INDEX | _TASK_INDEX))
            ]
            if prefix:
                words = ["env", *prefix, *words]
        return words

    def argv_as_written(self) -> list[str]:
        """The step's words as the pods would get them, rendezvous options included."""
        step = self.shape.step
        assert step is not None
        return [self.render(w) for w in step.argv]

    def forwarded(self) -> list[str]:
        """The env names mpirun must pass to the ranks it starts on the Workers."""
        return [e["name"] for e in self.env()]

    def program_reads(self) -> set[str]:
        """SLURM_* names the step's program reads at run time (inside a ``bash -c`` text, say)."""
        step = self.shape.step
        assert step is not None
        found: set[str] = set()
        first = literal(step.argv[0]) if step.argv else None
        inline = (
            first is not None
            and os.path.basename(first) in SHELLS
            and any(literal(w) in ("-c", "-lc", "-ec", "-xc") for w in step.argv[1:3])
        )
        if step.kind is StepKind.TASKS and step.under_srun and not inline:
            found |= self.task_identity()
        for word in step.argv:
            text = literal(word)
            if text is not None and "SLURM" in text:
                found |= {n for n in slurm_variables(text) if _SLURM_IN_TEXT.fullmatch(n)}
        return found

    def task_identity(self) -> set[str]:
        """What a program srun starts may read of its task itself (Lightning and DDP helpers do)."""
        return set(TASK_IDENTITY)

    def env(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        if self.target == "jobset":
            out.append(_field(NODE_RANK, f"metadata.labels['{JOBSET_INDEX_LABEL}']"))
        for name, var in self.shape.variables.items():
            if not var.exported or var.computed:
                continue
            if self.target == "pytorchjob" and name in ("MASTER_ADDR", "MASTER_PORT"):
                continue  # the operator's, from the Master's Service and its port pytorchjob-port
            value = " ".join(self.render(w, in_args=False) for w in var.words)
            out.append({"name": name, "value": value})
        reads = self.program_reads()
        if self.target == "pytorchjob":
            reads -= _NODE_INDEX | _TASK_INDEX
        for name in sorted(reads):
            if name not in {e["name"] for e in out}:
                out.append(self.env_entry(name, self.slurm(name, in_args=False)))
        return out

    def env_entry(self, name: str, value: str) -> dict[str, Any]:
        """An env entry; a pod index as the field that holds it (the controllers add their own index
        variables after the template's env, where a $(NAME) reference cannot see them)."""
        if value == "$(JOB_COMPLETION_INDEX)":
            return _field(name, f"metadata.annotations['{COMPLETION_INDEX}']")
        if value == f"$({NODE_RANK})":
            return _field(name, f"metadata.labels['{JOBSET_INDEX_LABEL}']")
        if value.startswith("$("):
            raise Unknown(f"${name}: {value} is not a field an env entry can read")
        return {"name": name, "value": value}

    def plumbing(self) -> set[str]:
        """Variables of a start-up the operator does itself (a Ray cluster's node list and head)."""
        return set()

    def summary(self) -> str | None:
        """What the pods run, in a sentence, when the kind says it its own way (the style's reason)."""
        return None

    def master_port(self) -> str | None:
        var = self.shape.variables.get("MASTER_PORT")
        if var is None or var.computed or not var.words:
            return None
        value = literal(var.words[0])
        return value if value and value.isdigit() else None

    # --- the init step ------------------------------------------------------
    def init_script(self) -> str | None:
        """The statements that run once before the step, with the variables they read set first."""
        shape = self.shape
        if not shape.setup:
            return None
        setup_lines = {st.line for st in shape.setup}
        # the script's own shell options (set -e ...), and the assignments the statements read
        lines = [
            st.text
            for st, _ in shape.dropped
            if st.text.split()[:1] == ["set"] and st.line < shape.setup[0].line
        ]
        needed = self._needed_assignments()
        for st in sorted([*needed, *shape.setup], key=lambda s: s.line):
            lines.append(st.text if st.line in setup_lines else self._assignment_text(st))
        return "\n".join(line for line in lines if line) + "\n"

    def _needed_assignments(self) -> list[Statement]:
        """The assignment statements the once-only statements depend on, transitively."""
        shape = self.shape
        wanted = set(_REFERENCE.findall("\n".join(st.text for st in shape.setup)))
        chosen: list[Statement] = []
        for st in reversed(shape.assignments):
            sets = {n for n, v in shape.variables.items() if v.line == st.line and not v.constant}
            if sets & wanted:  # a cd before them is the init container's workingDir
                chosen.append(st)
                wanted |= set(_REFERENCE.findall(st.text))
        return chosen

    def _assignment_text(self, st: Statement) -> str:
        """An assignment statement with its known values written out (node 0's view); else as written."""
        names = [n for n, v in self.shape.variables.items() if v.line == st.line]
        if not names or any(self.shape.variables[n].computed for n in names):
            return st.text
        out = []
        for n in names:
            var = self.shape.variables[n]
            try:
                values = [self.render(w, in_args=False, node0=True) for w in var.words]
            except Unknown:
                return st.text
            value = (
                f"({' '.join(shlex.quote(v) for v in values)})"
                if var.array
                else shlex.quote(values[0] if values else "")
            )
            out.append(f"{'export ' if var.exported and not var.array else ''}{n}={value}")
        return "\n".join(out)

    def init_env(self) -> list[dict[str, Any]]:
        """SLURM_* values the once-only statements read, as node 0 has them."""
        text = "\n".join(st.text for st in self.shape.setup)
        out = []
        for name in sorted(n for n in slurm_variables(text) if _SLURM_IN_TEXT.fullmatch(n)):
            try:
                out.append(self.env_entry(name, self.slurm(name, in_args=False, node0=True)))
            except Unknown:
                continue
        return out

    def init_container(self, container: dict[str, Any], start: str | None) -> dict[str, Any] | None:
        """``start``: the folder the job starts in. The set-up runs where the cds before it lead; the
        cds among it are in its script, in their place."""
        script = self.init_script()
        if script is None:
            return None
        init = {
            "name": INIT_CONTAINER,
            "image": container["image"],
            "command": ["/bin/bash", "-c", _KUBELET_DOLLAR.sub("$$", script)],
        }
        start = self.shape.setup_workdir or start
        if start:
            init["workingDir"] = start
        env = [
            e
            for e in container.get("env", ())
            if "valueFrom" in e or not str(e.get("value", "")).startswith("$(")
        ]
        env += [e for e in self.init_env() if e["name"] not in {x["name"] for x in env}]
        if env:
            init["env"] = env
        if container.get("resources"):  # a pod asks for the larger of its init and main containers
            init["resources"] = container["resources"]
        if container.get("volumeMounts"):
            init["volumeMounts"] = [m for m in container["volumeMounts"] if m.get("mountPath") != "/dev/shm"]
        return init


# torchrun options an elastic PyTorchJob's operator gives as PET_* env (PET_NNODES=min:max,
# PET_RDZV_ENDPOINT=worker 0's Service, PET_RDZV_BACKEND, PET_MAX_RESTARTS): the script's own would
# pin them; and the ones that take no value
_RENDEZVOUS = frozenset(
    {
        "nnodes",
        "rdzv_endpoint",
        "rdzv_backend",
        "rdzv_id",
        "rdzv_conf",
        "node_rank",
        "master_addr",
        "master_port",
        "max_restarts",
        "standalone",
    }
)
_TORCHRUN_SWITCHES = frozenset({"standalone", "no_python", "run_path", "module", "m"})


def _option(word: str) -> tuple[str, bool]:
    """A torchrun option's name (``--rdzv-id`` is ``rdzv_id``) and whether its value is in the word."""
    name, eq, _ = word.lstrip("-").partition("=")
    return name.replace("-", "_"), bool(eq)


def _without_rendezvous(words: list[str]) -> list[str]:
    """torchrun's words without the rendezvous options the elastic operator sets itself."""
    start = 3 if len(words) > 2 and words[1] == "-m" else 1
    out, i = words[:start], start
    while i < len(words) and words[i].startswith("-"):
        name, inline = _option(words[i])
        takes = not inline and name not in _TORCHRUN_SWITCHES and i + 1 < len(words)
        if name not in _RENDEZVOUS:
            out.extend(words[i : i + 1 + takes])
        i += 1 + takes
    return out + words[i:]


def max_restarts(words: list[str]) -> int | None:
    """torchrun's --max_restarts, when the script gives a number."""
    for i, word in enumerate(words):
        name, inline = _option(word) if word.startswith("--") else ("", False)
        if name == "max_restarts":
            value = word.partition("=")[2] if inline else (words[i + 1] if i + 1 < len(words) else "")
            return int(value) if value.isdigit() else None
    return None


def _field(name: str, path: str) -> dict[str, Any]:
    return {"name": name, "valueFrom": {"fieldRef": {"fieldPath": path}}}


def _unsupported(shape: Shape, plan: Plan) -> tuple[int, str] | None:
    """A value of the step or of the env that the target cannot give."""
    step = shape.step
    assert step is not None
    try:
        plan.argv()
        plan.env()
        for name in references(step.argv):
            plan.slurm(name, in_args=True)
    except Unknown as why:
        return step.line, str(why)
    return None


def constants(job: ir.Job, name: str) -> dict[str, str]:
    """The SLURM_* values that are the same in every pod of the job."""
    comp = job.components[0]
    res = comp.resources
    nodes = res.computed_nodes() * comp.replicas
    tpn = res.computed_tasks_per_node()
    out = {n: str(nodes) for n in _NODES}
    # as sbatch sets them (slurmenv.batch_task_counts): a job that asks for no tasks sees none
    if res.tasks or res.tasks_per_node:
        tasks = res.computed_tasks() if res.task_layout else nodes * tpn  # 15,1 counts 16
        out |= {n: str(tasks) for n in _TASKS}
    if res.tasks_per_node:
        out["SLURM_NTASKS_PER_NODE"] = str(tpn)
    out |= {n: name for n in _JOB_NAME | JOB_ID_VARS}
    # the batch shell runs on node 0 as task 0: what it expands into the step's words is node 0's
    out |= {"SLURM_NODEID": "0", "SLURM_PROCID": "0", "SLURM_LOCALID": "0"}
    gpus = res.computed_gpus_per_node()
    if gpus:
        out |= {"SLURM_GPUS_ON_NODE": str(gpus), "SLURM_GPUS_PER_NODE": str(gpus)}
    if res.cpus_per_task:
        out["SLURM_CPUS_PER_TASK"] = str(res.cpus_per_task)
    if res.cpus_per_gpu:
        out["SLURM_CPUS_PER_GPU"] = str(res.cpus_per_gpu)
    if res.tasks_per_gpu:
        out["SLURM_NTASKS_PER_GPU"] = str(res.tasks_per_gpu)
    if res.gpus_per_task:
        out["SLURM_GPUS_PER_TASK"] = str(res.gpus_per_task)
    if job.array is not None and job.array.count:
        out["SLURM_ARRAY_TASK_COUNT"] = str(job.array.count)
    return out


def decide(
    job: ir.Job, choice: flavors.Choice, style: str, name: str, submitter: dict[str, str] | None = None
) -> tuple[Decision, Plan | None]:
    """Native or emulated, and why; the plan when native. ``submitter``: the USER/HOME the site gives
    the pods for the script's ``$USER``/``$HOME`` (sbatch passes the submitter's)."""
    if style == EMULATE:
        return Decision(EMULATE, "--style emulate: the script runs unchanged with the Slurm shims"), None
    known = {**constants(job, name), **(submitter or {})}
    shape = read_shape(job, known)
    plan, why = _plan(job, choice, shape, name)
    return decision(shape, plan, why)


def decision(shape: Shape, plan: Plan | None, why: tuple[int, str]) -> tuple[Decision, Plan | None]:
    """The style a plan (or the reason there is none) gives, as the header and the table say it."""
    if plan is None:
        line, reason = why
        return Decision(EMULATE, f"{reason} (line {line})" if line else reason, line or None), None
    step = shape.step
    assert step is not None
    what = plan.summary() or {
        "mpijob": f"mpirun at line {step.line} runs in the Launcher",
        "rayjob": f"a Ray cluster of {plan.nodes} nodes as KubeRay starts it; the driver at line "
        f"{step.line} is the entrypoint",
    }.get(
        plan.target,
        f"{step.launcher} at line {step.line} runs in " + ("every pod" if plan.nodes > 1 else "the pod"),
    )
    return Decision(NATIVE, f"{what}; no wrapper, shims or step service", step.line), plan


def _plan(
    job: ir.Job, choice: flavors.Choice, shape: Shape, name: str
) -> tuple[Plan | None, tuple[int, str]]:
    if shape.blocker is not None:
        return None, shape.blocker
    step = shape.step
    assert step is not None
    if len(job.components) > 1:
        return None, (step.line, "a heterogeneous job: its components share one script")
    if choice.bridge:
        return None, (0, "slurm-bridge runs each pod as a Slurm job: the pods keep the Slurm environment")
    if job.templated and any("{{" in w or "${" in w for w in step.text.split()):
        return None, (step.line, "a template: the step's words are known once it is rendered (--set)")
    if job.io.stdin:
        return None, (0, "--input: the entrypoint feeds the script's stdin from the file")
    if job.failure.signal is not None:
        return None, (0, "--signal: the entrypoint sends the signal before the time limit")
    if job.submits:
        return None, (job.submits[0].line or 0, "the script submits jobs itself")
    comp = job.components[0]
    credentials = computed_credentials(job)
    for var_name, var in shape.variables.items():
        if var.exported and var.computed and var_name not in credentials:
            return None, (var.line, f"the program would not see ${var_name}, {var.computed}")
    images = {c.image for c in comp.containers if c.image}
    if len(images) > 1:
        return None, (step.line, f"{len(images)} container images: one pod runs one")
    nodes = comp.resources.computed_nodes() * comp.replicas
    tpn = comp.resources.computed_tasks_per_node()
    target = choice.flavor
    supported = {
        StepKind.TORCH: (flavors.PYTORCHJOB, flavors.JOBSET, flavors.JOB, flavors.CRONJOB),
        StepKind.TASKS: (flavors.PYTORCHJOB, flavors.JOBSET, flavors.JOB, flavors.CRONJOB),
        StepKind.MPI: (flavors.MPIJOB, flavors.JOB, flavors.CRONJOB),
        StepKind.PROGRAM: (flavors.JOB, flavors.CRONJOB),
    }[step.kind]
    if target == flavors.CRONJOB:
        if nodes > 1:
            return None, (step.line, "a CronJob of several pods")
        target = flavors.JOB  # a CronJob's job template: one pod, as a Job's
    if step.kind is StepKind.PROGRAM and nodes > 1:
        return None, (step.line, f"{step.launcher} outside srun runs on node 0 of {nodes} nodes only")
    if target not in supported:
        return None, (step.line, f"a {step.kind} step has no native form as a {choice.name}")
    if step.kind is StepKind.MPI and target == flavors.JOB and nodes > 1:
        return None, (step.line, "mpirun across nodes needs an MPIJob")
    layout = srun_layout(step.srun, nodes, tpn if step.kind is StepKind.MPI else 1)
    if layout is not None:
        return None, (step.line, layout)
    if comp.resources.task_layout and step.kind is not StepKind.PROGRAM:
        shown = layout_text(comp.resources.task_layout)
        why = f"Slurm lays the tasks out unevenly ({shown}): the pods of one template run one count"
        return None, (step.line, why)
    if step.kind in PER_NODE_STEPS and step.under_srun and tpn > 1:
        return None, (step.line, f"{tpn} tasks per node: one pod per node runs one program")
    if step.kind in PER_NODE_STEPS and not step.under_srun and nodes > 1:
        return None, (step.line, f"{step.launcher} outside srun runs on node 0 of {nodes} nodes only")
    if step.background and not any(d[1].startswith("the pods end") for d in shape.dropped):
        return None, (step.line, "the step runs in the background and nothing waits for it")
    array = job.array
    zero = True
    if array is not None:
        if nodes > 1:
            return None, (step.line, "an array of multi-node jobs")
        from .slurmenv import array_count, array_ranges

        zero = array_ranges(array) == [(0, 1, array_count(array))]
    gpus = comp.resources.computed_gpus_per_node()
    elastic = _elastic(comp.resources, step, target, nodes)
    head, head_name = _head(target, name, nodes, elastic is not None)
    plan = Plan(
        shape, target, name, nodes, tpn, gpus, head, head_name, zero, comp.resources.cpus_per_task, elastic
    )
    bad = _unsupported(shape, plan)
    if bad is not None:
        return None, bad
    if shape.setup and elastic is not None:
        return None, (
            shape.setup[0].line,
            "statements to run once before the step, in an elastic job of workers only",
        )
    if shape.setup and target == flavors.JOB and nodes > 1:
        return None, (
            shape.setup[0].line,
            "statements to run once before the step, in an Indexed Job of one pod per node",
        )
    return plan, (0, "")


def srun_layout(srun: dict[str, str], nodes: int, per_node: int) -> str | None:
    """Why the step's own -N/-n/--ntasks-per-node differ from one program per pod, if they do."""
    wanted = {
        "nodes": {str(nodes), f"{nodes}-{nodes}"},
        "ntasks": {str(nodes * per_node)},
        "ntasks-per-node": {str(per_node)},
    }
    for key, values in wanted.items():
        if key in srun and srun[key] not in values:
            return f"srun --{key}={srun[key]}: the step's tasks are not one program per pod of the job"
    return None


def computed_credentials(job: ir.Job) -> set[str]:
    """Exported credentials the script reads from a file or command: a Secret gives them to the pods."""
    return {
        e.name
        for e in (*job.environment, *(x for c in job.components for x in c.environment))
        if e.secret is not None and e.secret.kind == SecretKind.COMMAND
    }


def _elastic(res: ir.Resources, step: Any, target: str, nodes: int) -> tuple[int, int] | None:
    """A node range (``--nodes=2-4``) of a torchrun step in a PyTorchJob: its elastic policy's bounds."""
    if (
        target != flavors.PYTORCHJOB
        or step.kind is not StepKind.TORCH
        or step.launcher not in _ELASTIC_LAUNCHERS
    ):
        return None
    if res.nodes_max is None or res.nodes_max <= nodes:
        return None
    return nodes, res.nodes_max


_ELASTIC_LAUNCHERS = frozenset({"torchrun", "torch.distributed.run"})


def _head(target: str, name: str, nodes: int, elastic: bool = False) -> tuple[str, str]:
    if nodes == 1 and target != flavors.MPIJOB and not elastic:
        return "localhost", "localhost"
    if target == flavors.PYTORCHJOB:  # without a Master (elastic), the operator's MASTER_ADDR is worker 0
        return "$(MASTER_ADDR)", f"{name}-{'worker' if elastic else 'master'}-0"
    if target == flavors.JOBSET:
        host = f"{name}-node-0-0.{name}"
        return host, host
    if target == flavors.MPIJOB:
        host = f"{name}-worker-0.{name}"
        return host, host
    host = f"{name}-0.{name}"
    return host, host


def record(ctx: Any, plan: Plan) -> None:
    """Fidelity: where each statement of the script went."""
    shape = plan.shape
    step = shape.step
    assert step is not None
    in_env = {e["name"] for e in plan.env()}
    for name, var in shape.variables.items():
        item = f"env {name}"
        by_entrypoint = var.exported and not var.computed and plan.target == "rayjob" and name not in in_env
        if name in plan.plumbing() or by_entrypoint:
            continue  # the operator's start-up holds it, or the entrypoint sets it (rayjob.record says how)
        if var.exported and not var.computed:
            if name == "MASTER_ADDR" and plan.target == "pytorchjob":
                ctx.fidelity.mapped(item, "the operator's MASTER_ADDR (the Master pod's Service)", var.line)
            elif name == "MASTER_PORT" and plan.target == "pytorchjob":
                ctx.fidelity.mapped(
                    item,
                    "the Master container's port pytorchjob-port, which the operator sets as MASTER_PORT",
                    var.line,
                )
            else:
                ctx.fidelity.mapped(item, "container env", var.line)
        elif var.computed and not var.exported:
            ctx.fidelity.approximated(item, f"not in the pods' env: {var.computed}", var.line)
    for st in shape.setup:
        ctx.fidelity.mapped(f"statement: {short(st.text)}", _where_init(plan), st.line)
    for st, why in shape.dropped:
        ctx.fidelity.approximated(f"statement: {short(st.text)}", f"not run: {why}", st.line)
    if shape.workdir:
        ctx.fidelity.mapped(f"cd {shape.workdir}", "workingDir", None)


def record_job_id(ctx: Any) -> None:
    """Native pods do not pose as Slurm: the job id a script reads is written as the job's name."""
    script = ctx.job.script
    for id_var in sorted(JOB_ID_VARS & set(script.slurm_vars if script is not None else ())):
        ctx.fidelity.approximated(
            f"${id_var}",
            f"written as the job's name, {ctx.name}: {NAME_AS_JOB_ID}",
        )


def _where_init(plan: Plan) -> str:
    return {
        "pytorchjob": "runs once, in the Master's init container, before its launcher starts; the Workers' "
        "launchers wait at the rendezvous",
        "mpijob": "runs once, in the Launcher's init container, before mpirun starts the ranks",
        "jobset": "runs once, in the prepare replicated job, which the nodes' job depends on (Complete)",
        "rayjob": "runs once, in the entrypoint on the head, before the driver",
        "lws": "runs once, in the leader after the Ray head has started, before the server",
    }.get(plan.target, "runs in the pod's init container, before the program (once per array task)")


def short(text: str) -> str:
    first = text.strip().splitlines()[0] if text.strip() else ""
    return first[:80]


__all__ = [
    "AUTO",
    "EMULATE",
    "NATIVE",
    "STYLES",
    "Decision",
    "Plan",
    "computed_credentials",
    "decide",
    "decision",
    "record",
    "short",
    "srun_layout",
]
