"""The shape of a batch script: what runs once before its step, and what the step runs.

A native translation writes the job a Kubernetes engineer writes: each pod runs
the step's program itself (``torchrun ...``, ``mpirun ...``, one program per
task), with no copy of the script. That is possible when the script is, in
order:

- assignments and exports whose values are known (literals, ``SLURM_*``
  values, node 0's address), shell options, environment set-up the image
  carries (``module load``, ``conda activate``), a ``cd``, and lines that only
  print to the job's output: these become env, ``workingDir``, or nothing;
- statements that prepare the run (a ``mkdir``, a download, a data check, a
  ``python prepare.py``): they must run **once, before the step**, and go to
  an init step that runs once before the workers start;
- exactly one step: ``srun`` (or nothing) starting a launcher or a program;
- after it, nothing but lines that only print, ``wait`` and ``exit``.

Anything else (a second step, a statement after the step that writes, a Slurm
command, a value computed when the script runs, control flow around the
step) needs the script to run as it is: the shape says which statement, and
where, decided it. Nothing is executed.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from migrate import ir

from ..shell.containers import container_at
from ..shell.launchers import launcher_at
from ..shell.model import Command, CommandOrigin
from ..shell.reader import read_script
from .flavors import MPI_LAUNCHERS, TORCH_LAUNCHERS
from .native_words import Ref, RefKind, Unknown, Variable, Words, array_items, expand, known, literal

# Commands that only print to the job's output (without a redirection to a file).
PRINTS = frozenset(
    {
        "echo",
        "printf",
        "date",
        "hostname",
        "nvidia-smi",
        "env",
        "printenv",
        "pwd",
        "whoami",
        "uname",
        "free",
        "df",
        "lscpu",
        "which",
        "id",
        "ls",
        "true",
        ":",
        "sleep",
        "nproc",
        "rocm-smi",
        "hl-smi",
        "neuron-ls",
    }
)
SHELL_OPTIONS = frozenset({"set", "shopt", "ulimit", "umask", "trap"})
ENVIRONMENT = frozenset({"module", "ml", "conda", "spack", "micromamba", "mamba"})
SLURM_COMMANDS = frozenset(
    {
        "scontrol",
        "sbatch",
        "squeue",
        "sacct",
        "scancel",
        "sstat",
        "sattach",
        "salloc",
        "sinfo",
        "sprio",
        "sshare",
    }
)
# srun options that change nothing when one pod per node runs the program
_QUIET_SRUN = frozenset(
    {
        "label",
        "unbuffered",
        "kill-on-bad-exit",
        "cpu-bind",
        "export",
        "wait",
        "mpi",
        "gpus-per-task",
        "cpus-per-task",
        "gpu-bind",
        "distribution",
        "hint",
        "mem-bind",
        "output",
        "error",
        "job-name",
        "container-image",
        "container-mounts",
        "container-workdir",
        "container-name",
        "no-container-mount-home",
        "container-writable",
        "container-remap-root",
        "container-env",
        "ntasks-per-node",
        "nodes",
        "ntasks",
        "cpus-per-gpu",
        "mem",
        "gres",
        "gpus",
        "gpus-per-node",
        "exclusive",
        "overlap",
        "chdir",
    }
)


@dataclass(frozen=True)
class Statement:
    line: int
    text: str


class StepKind(StrEnum):
    """How a script's step starts its program, which decides the pods that run it."""

    TORCH = "torch"  # torchrun, deepspeed, accelerate: one launcher per node
    MPI = "mpi"  # mpirun, or srun --mpi
    TASKS = "tasks"  # srun's tasks, or a program outside srun
    PROGRAM = "program"  # the last command of a script without a launcher
    RAY = "ray"  # a Ray program on a cluster the script starts


# Steps whose program runs once per node, as a pod of its own.
PER_NODE_STEPS = frozenset((StepKind.TORCH, StepKind.TASKS))


@dataclass
class Step:
    line: int
    text: str
    kind: StepKind
    launcher: str  # torchrun | deepspeed | accelerate | mpirun | srun | the program's name
    argv: Words  # what each pod (or the MPI launcher) runs, expanded
    srun: dict[str, str]  # the srun options, as written (key: long name)
    background: bool = False
    under_srun: bool = False
    image: str | None = None  # the container image a runtime in the step names (apptainer exec IMG ...)


@dataclass
class Shape:
    variables: dict[str, Variable] = field(default_factory=dict)
    setup: list[Statement] = field(default_factory=list)  # once, before the step
    assignments: list[Statement] = field(default_factory=list)  # replayed before the set-up
    dropped: list[tuple[Statement, str]] = field(default_factory=list)
    workdir: str | None = None
    setup_workdir: str | None = None  # the folder of the cds before the first set-up statement
    step: Step | None = None
    blocker: tuple[int, str] | None = None  # (line, why) the script must run as it is

    def block(self, line: int, why: str) -> None:
        if self.blocker is None:
            self.blocker = (line, why)

    @property
    def exported(self) -> list[Variable]:
        return [v for v in self.variables.values() if v.exported]


def body_start(script: ir.ScriptInfo) -> int:
    """The file line of the body's first line."""
    return script.header.count("\n") + 1 if script.header else 1


def read_shape(job: ir.Job, constants: Mapping[str, str | Variable] | None = None) -> Shape:
    """``constants``: the SLURM_* values every pod shares (the node count ...), known before the script
    runs, so that ``$((SLURM_NNODES * 8))`` is a number."""
    shape = Shape()
    shape.variables.update(known(constants or {}))
    script = job.script
    if script is None or not script.body.strip():
        shape.block(job.source.line or 1, "no script body to read")
        return shape
    start = body_start(script)
    read = read_script(script.body)
    if read.problems:
        line, message = read.problems[0]
        shape.block(start + line, f"the script does not parse: {message}")
        return shape
    if read.too_deep:  # what the innermost substitutions run is not known, nor whether bash copes
        line, message = read.too_deep[0]
        shape.block(start + line, f"{message}: only the script itself does what it says")
        return shape
    lines = script.body.splitlines()
    parts = list(read.parts)
    for n, (rel, commands) in enumerate(parts):
        end = parts[n + 1][0] if n + 1 < len(parts) else len(lines)
        text = _statement_text(lines, rel, end)
        statement = Statement(start + rel, text)
        top = [c for c in commands if c.captured_by is None and c.origin is CommandOrigin.BODY]
        _statement(shape, statement, top)
        if shape.blocker is not None:
            return shape
    if shape.step is None:
        _program_step(shape)
    return shape


def _statement_text(lines: list[str], first: int, end: int) -> str:
    chunk = lines[first:end]
    while chunk and (not chunk[-1].strip() or chunk[-1].lstrip().startswith("#")):
        chunk.pop()
    return "\n".join(chunk)


def _statement(shape: Shape, st: Statement, top: list[Command]) -> None:
    if not top:
        return
    if any(c.nested for c in top):
        names = {c.name for c in top}
        if names & (SLURM_COMMANDS | {"srun"} | TORCH_LAUNCHERS | MPI_LAUNCHERS):
            shape.block(st.line, "control flow around a step or a Slurm command runs as the script says only")
        elif shape.step is not None:
            shape.block(st.line, "control flow after the step runs once after it: no native place for it")
        else:
            shape.setup.append(st)
        return
    if len(top) > 1:  # a pipeline or a list
        _compound(shape, st, top)
        return
    cmd = top[0]
    if not cmd.words:
        _assign(shape, st, cmd.assignments, exported=False)
        return
    name = os.path.basename(cmd.words[0].value)
    if name in ("export", "declare", "typeset", "readonly") and not cmd.assignments:
        _export(shape, st, cmd)
        return
    if cmd.assignments:  # NAME=value program ...: the program sees it
        shape.block(st.line, "a command with its own environment assignments")
        return
    if cmd.background and not _is_step(shape, cmd):
        shape.block(st.line, "a command left running in the background")
        return
    if _is_step(shape, cmd):
        _step(shape, st, cmd)
        return
    if shape.step is not None:
        _after(shape, st, cmd, name)
        return
    _before(shape, st, cmd, name)


def _compound(shape: Shape, st: Statement, top: list[Command]) -> None:
    if any(_is_step(shape, c) for c in top):
        shape.block(st.line, "the step is part of a pipeline or a list (its output or status is used)")
    elif any(c.name in SLURM_COMMANDS for c in top):
        shape.block(st.line, f"{_slurm_name(top)} runs on Slurm only")
    elif shape.step is not None:
        if all(c.name in PRINTS and not _writes(c) for c in top):
            shape.dropped.append((st, "prints to the job's output only"))
        else:
            shape.block(st.line, "runs once after the step: no native place for it")
    else:
        shape.setup.append(st)


def _slurm_name(top: list[Command]) -> str:
    return next(c.name for c in top if c.name in SLURM_COMMANDS)


def _writes(cmd: Command) -> bool:
    return any(r.target is not None and r.op in (">", ">>", ">|", "&>", "&>>", "<>") for r in cmd.redirects)


def _assign(shape: Shape, st: Statement, words: tuple[object, ...], exported: bool) -> None:
    for word in words:
        raw = getattr(word, "raw", str(word))
        name, _, value = raw.partition("=")
        append = name.endswith("+")
        name = name.rstrip("+")
        if append:
            shape.block(st.line, f"{name}+= appends when the script runs")
            return
        var = shape.variables.get(name)
        was_exported = bool(var and var.exported)
        if value.startswith("("):
            try:
                words_: Words = [w for item in array_items(value) for w in expand(item, shape.variables)]
                new = Variable(words_, array=True, exported=exported or was_exported, line=st.line)
            except Unknown as why:
                new = Variable(
                    [], array=True, exported=False, line=st.line, computed=f"set at line {st.line}: {why}"
                )
        else:
            try:
                found = expand(value, shape.variables, split=False)
                new = Variable([found[0] if found else []], exported=exported or was_exported, line=st.line)
            except Unknown as why:
                new = Variable(
                    [],
                    exported=exported or was_exported,
                    line=st.line,
                    computed=f"set at line {st.line}: {why}",
                )
        shape.variables[name] = new
    shape.assignments.append(st)


def _export(shape: Shape, st: Statement, cmd: Command) -> None:
    words = cmd.words[1:]
    flags = [w for w in words if w.value.startswith("-")]
    if cmd.words[0].value != "export" and not any("x" in f.value for f in flags):
        _assign(shape, st, tuple(w for w in words if not w.value.startswith("-")), exported=False)
        return
    for word in words:
        if word.value.startswith("-"):
            continue
        if "=" in word.raw:
            _assign(shape, st, (word,), exported=True)
            continue
        var = shape.variables.get(word.value)
        if var is None:
            shape.variables[word.value] = Variable([], exported=True, line=st.line, computed="exported unset")
        else:
            var.exported = True
    if st not in shape.assignments:
        shape.assignments.append(st)


def _program(shape: Shape, cmd: Command) -> list[str] | None:
    """The command's words as the batch shell gives them, with references spelled ``${NAME}``."""
    out: list[str] = []
    for word in cmd.words:
        try:
            found = expand(word.raw, shape.variables)
        except Unknown:
            return None
        for w in found:
            out.append("".join(seg if isinstance(seg, str) else f"${{{seg.name or 'HEAD'}}}" for seg in w))
    return out


def _is_step(shape: Shape, cmd: Command) -> bool:
    words = _program(shape, cmd) or [w.value for w in cmd.words]
    if not words:
        return False
    name = os.path.basename(words[0])
    return name == "srun" or name in MPI_LAUNCHERS or launcher_at(words, 0) is not None


def _expanded(shape: Shape, line: int, cmd: Command, what: str) -> Words | None:
    """The command's words as the batch shell expands them; None (and the blocker) when one is unknown."""
    argv: Words = []
    for word in cmd.words:
        try:
            argv.extend(expand(word.raw, shape.variables))
        except Unknown as why:
            shape.block(line, f"{what} {word.value!r}: {why}")
            return None
    return argv


def _step(shape: Shape, st: Statement, cmd: Command) -> None:
    if shape.step is not None:
        shape.block(st.line, f"a second step (the first is at line {shape.step.line})")
        return
    if _writes(cmd) or any(r.op in ("<", "<>") for r in cmd.redirects):
        shape.block(st.line, "the step's input or output is redirected to a file")
        return
    if any(r.heredoc is not None or r.op.startswith("<<") for r in cmd.redirects):
        shape.block(st.line, "the step reads a here-document on its standard input")
        return
    argv = _expanded(shape, st.line, cmd, "the step's argument")
    if argv is None:
        return
    text_words = ["".join(_shown(s) for s in w) for w in argv]
    srun: dict[str, str] = {}
    start = 0
    if os.path.basename(text_words[0]) == "srun":
        parsed = launcher_at(text_words, 0)
        if parsed is None or len(parsed.components) != 1:
            shape.block(st.line, "a heterogeneous srun (several components)")
            return
        comp = parsed.components[0]
        srun = {kv.key.lstrip("-"): kv.value for kv in comp.options}
        odd = sorted(k for k in srun if k not in _QUIET_SRUN)
        if odd:
            shape.block(
                st.line, f"srun --{odd[0]} places the step on part of the allocation or changes how it runs"
            )
            return
        start = comp.start
        if start >= len(argv):
            shape.block(st.line, "srun without a program")
            return
    program, image = unwrap_container(argv[start:], st.line)
    words = ["".join(s if isinstance(s, str) else "${X}" for s in w) for w in program]
    kind, launcher = _kind(words, srun)
    shape.step = Step(st.line, st.text, kind, launcher, program, srun, cmd.background, start > 0, image)


def _shown(seg: str | Ref) -> str:
    """A word's part as srun's options are compared: a value the workload gives by its known number."""
    if isinstance(seg, str):
        return seg
    return seg.value or "${X}"


def unwrap_container(argv: Words, line: int) -> tuple[Words, str | None]:
    """The program a container runtime starts (``apptainer exec IMG prog ...``), and the image: the
    pod is the container, so its command is the program itself."""
    words = ["".join(s if isinstance(s, str) else "${X}" for s in w) for w in argv]
    if not words:
        return argv, None
    started = container_at(words, 0, line, lambda text: text)
    if started is None or started.program >= len(words):
        return argv, None
    return argv[started.program :], started.container.image if started.container else None


def _kind(words: list[str], srun: dict[str, str]) -> tuple[StepKind, str]:
    name = os.path.basename(words[0])
    parsed = launcher_at(words, 0)
    if name in MPI_LAUNCHERS:
        return StepKind.MPI, "mpirun"
    if srun.get("mpi", "none") not in ("none", ""):
        return StepKind.MPI, "srun --mpi"
    if parsed is not None and parsed.name in TORCH_LAUNCHERS:
        return StepKind.TORCH, parsed.name
    return StepKind.TASKS, name


def _before(shape: Shape, st: Statement, cmd: Command, name: str) -> None:
    if name in SLURM_COMMANDS:
        shape.block(st.line, f"{name} runs on Slurm only")
    elif name in SHELL_OPTIONS:
        shape.dropped.append((st, "a shell setting of the batch script; the pods run the step directly"))
    elif name in ENVIRONMENT or name in ("source", "."):
        # a value the step needs from it is unknown here, and blocks the step's expansion
        shape.dropped.append(
            (st, "software set-up: the image must carry it (PATH, libraries, the environment)")
        )
    elif name == "cd":
        _cd(shape, st, cmd)
    elif name == "exit":
        shape.block(st.line, "exit before the step")
    elif name in PRINTS and not _writes(cmd):
        shape.dropped.append((st, "prints to the job's output only"))
    else:
        shape.setup.append(st)


def _cd(shape: Shape, st: Statement, cmd: Command) -> None:
    if len(cmd.words) != 2:
        shape.block(st.line, "cd without one folder")
        return
    try:
        (word,) = expand(cmd.words[1].raw, shape.variables)
    except (Unknown, ValueError) as why:
        shape.block(st.line, f"cd to a folder known at run time only ({why})")
        return
    folder = literal(word)
    if folder is None or not folder.startswith("/"):
        shape.block(st.line, "cd to a folder that is not an absolute literal path")
        return
    if shape.setup:
        shape.setup.append(st)  # the set-up after it runs there too
    else:
        shape.setup_workdir = folder
    shape.workdir = folder
    shape.assignments.append(st)


def _after(shape: Shape, st: Statement, cmd: Command, name: str) -> None:
    if name == "wait" or (name == "exit" and len(cmd.words) <= 2):
        shape.dropped.append((st, "the pods end when the step ends"))
    elif name in PRINTS and not _writes(cmd):
        shape.dropped.append((st, "prints to the job's output only"))
    else:
        shape.block(st.line, f"{name} runs once after the step: no native place for it")


def _program_step(shape: Shape) -> None:
    """No srun and no launcher: the last statement that is not set-up-only runs as the program."""
    if not shape.setup:
        shape.block(0, "no step: the script runs nothing but shell statements")
        return
    last = shape.setup.pop()
    read = read_script(last.text)
    cmds = [c for c in read.commands if c.captured_by is None and c.origin is CommandOrigin.BODY]
    stdin = any(r.op.startswith("<") for r in cmds[0].redirects) if len(cmds) == 1 else False
    if len(cmds) != 1 or cmds[0].nested or _writes(cmds[0]) or cmds[0].background or stdin:
        shape.block(last.line, "the last statement is not one program")
        return
    cmd = cmds[0]
    words = _expanded(shape, last.line, cmd, "the program's argument")
    if words is None:
        return
    argv, image = unwrap_container(words, last.line)
    if not argv or literal(argv[0]) is None:
        shape.block(last.line, "the program's name is known at run time only")
        return
    name = os.path.basename(literal(argv[0]) or "")
    shape.step = Step(last.line, last.text, StepKind.PROGRAM, name, argv, {}, image=image)


def references(words: Words) -> set[str]:
    return {seg.name for w in words for seg in w if isinstance(seg, Ref) and seg.kind is RefKind.SLURM}


__all__ = ["Shape", "Statement", "Step", "body_start", "read_shape", "references"]
