"""A Ray cluster the batch script starts in its allocation, read as the RayJob KubeRay runs.

Ray's own recipe for Slurm (and the script ``migrate translate --to slurm`` writes
for a RayJob) starts ``ray start --head`` on node 0, ``ray start --address ...``
on the other nodes, waits, and runs a driver on node 0. KubeRay does each of
those itself: the head pod, one worker pod per other node, the workers waiting
for the head's GCS, the driver submitted as the RayJob's ``entrypoint`` once the
cluster is ready. So the script reads, statement by statement, as:

- the cluster's start-up (``ray start``, the node list, the head's address, the
  waits and sleeps around them): KubeRay's; the ``ray start`` options become the
  groups' ``rayStartParams`` where they are known before the script runs;
- the driver, the last program of the script: the entrypoint; a value it reads
  from the head's address is the ``RAY_ADDRESS`` the Ray job API gives it;
- statements before the driver that prepare its run: the entrypoint runs them
  first, once, on the head, where the batch shell ran them;
- assignments, exports, ``cd``, prints and software set-up, as for the other
  native shapes (:mod:`.native_shape`).

Anything else keeps the script emulated, and the shape says which statement.
Nothing is executed.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from migrate import ir

from ..shell.launchers import launcher_at
from ..shell.model import Command, CommandOrigin
from ..shell.reader import read_script
from . import native_shape
from .flavors import starts_ray
from .native_shape import Shape, Statement, Step, StepKind, body_start, unwrap_container
from .native_words import Ref, RefKind, Unknown, Variable, Words, expand, known, literal

GCS_PORT = "6379"  # KubeRay's head listens there; the workers and the job API find it there
# ray start options that take no value (KubeRay writes a "true" param as the bare flag)
SWITCHES = frozenset({"head", "block", "disable-usage-stats", "verbose", "no-monitor"})
# what KubeRay sets itself: the role, the head's address and port, blocking in the foreground
_KUBERAY_OWNS = frozenset({"head", "block", "address", "node-ip-address", "port", "redis-password"})
# commands a start-up loop may hold beside ray start, and a wait loop holds only
_WAITING = frozenset({":", "true", "sleep", "break", "continue", "seq", "test", "[", "[[", "echo", "printf"})
# srun options of a step on node 0 (the driver, the head): the RayJob runs them there
_NODE0_SRUN = frozenset({"nodes", "N", "ntasks", "n", "nodelist", "w", "overlap", "exact"})
# Why a start-up statement is not written: KubeRay does it (native_lws says it for a LeaderWorkerSet)
WAITS_FOR_HEAD = "waits for the head: KubeRay's workers wait for its GCS themselves"
KEEPS_NODE_PID = "keeps a started node's process id: KubeRay stops the pods itself"
PAUSE_AT_START = "a pause while the nodes start: KubeRay waits for the head itself"
STOPS_WITH_DRIVER = "KubeRay stops the cluster's pods when the driver ends"
_READY_CHECK = re.compile(r"ray\.nodes\(\)|ray\s+status|ray\.cluster_resources\(\)")
_NODE_LIST = re.compile(r"scontrol\s+show\s+hostnames?")
_ADDRESS_OF = re.compile(r"\bhostname\b")


@dataclass
class RayStart:
    """One ``ray start`` of the script: node 0's head or the other nodes' workers."""

    line: int
    head: bool
    params: dict[str, str] = field(default_factory=dict)  # the group's rayStartParams
    # (option, why) not written: its value is known when the job runs only
    unknown_options: list[tuple[str, str]] = field(default_factory=list)
    port: str | None = None


@dataclass
class RayShape:
    shape: Shape  # the variables, set-up, dropped statements and the driver (its step)
    head: RayStart | None = None
    workers: list[RayStart] = field(default_factory=list)
    plumbing: list[Statement] = field(default_factory=list)  # start-up statements KubeRay does itself
    head_values: set[str] = field(default_factory=set)  # variables that hold the head's address


def read_ray(job: ir.Job, constants: Mapping[str, str | Variable]) -> RayShape | None:
    """The script as a Ray cluster and its driver; None when it starts no Ray head."""
    if not starts_ray(job):  # a text search first: most scripts start no Ray
        return None
    assert job.script is not None
    ray = RayShape(Shape())
    shape = ray.shape
    shape.variables.update(known(constants))
    read = read_script(job.script.body)
    start = body_start(job.script)
    if read.problems:
        line, message = read.problems[0]
        shape.block(start + line, f"the script does not parse: {message}")
        return ray
    lines = job.script.body.splitlines()
    parts = list(read.parts)
    candidates: list[tuple[Statement, list[Command]]] = []
    for n, (rel, commands) in enumerate(parts):
        end = parts[n + 1][0] if n + 1 < len(parts) else len(lines)
        st = Statement(start + rel, native_shape._statement_text(lines, rel, end))
        top = [c for c in commands if c.captured_by is None and c.origin is CommandOrigin.BODY]
        if top:
            _statement(ray, st, top, candidates)
        if shape.blocker is not None:
            return ray
    if ray.head is None:
        shape.block(job.source.line or 1, "ray start --head runs inside control flow or a pipeline")
        return ray
    _driver(ray, candidates)
    return ray


def _statement(ray: RayShape, st: Statement, top: list[Command], candidates: list) -> None:
    shape = ray.shape
    starts = [c for c in top if _ray_start_words(shape, c) is not None]
    if starts:
        _starts(ray, st, top, starts)
        return
    if all(not c.words or _name(c) in _WAITING for c in top) and any(c.nested for c in top):
        shape.dropped.append((st, WAITS_FOR_HEAD))
        return
    ready = [c for c in top if _READY_CHECK.search(c.text)]
    if ready and len(top) - len(ready) == 1 and not any(c.nested for c in top):
        # "<wait for every node> && <driver>": the RayJob submits the driver once the cluster is ready
        candidates.append((st, [c for c in top if c not in ready]))
        return
    if len(top) == 1 and not top[0].nested:
        _single(ray, st, top[0], candidates)
        return
    names = {_name(c) for c in top}
    if names & (native_shape.SLURM_COMMANDS | {"srun"}):
        shape.block(st.line, "control flow or a pipeline around srun or a Slurm command")
        return
    candidates.append((st, top))


def _single(ray: RayShape, st: Statement, cmd: Command, candidates: list) -> None:
    shape = ray.shape
    if not cmd.words and any("$!" in a.raw for a in cmd.assignments):
        shape.dropped.append((st, KEEPS_NODE_PID))
        return
    if not cmd.words:
        native_shape._assign(shape, st, cmd.assignments, exported=False)
        _head_values(ray, st, cmd.text)
        return
    name = _name(cmd)
    if name in ("export", "declare", "typeset", "readonly") and not cmd.assignments:
        native_shape._export(shape, st, cmd)
        _head_values(ray, st, cmd.text)
        return
    if cmd.assignments:
        shape.block(st.line, "a command with its own environment assignments")
    elif name in native_shape.SLURM_COMMANDS:
        shape.block(st.line, f"{name} runs on Slurm only")
    elif cmd.background:
        shape.block(st.line, "a command left running in the background")
    elif name in native_shape.SHELL_OPTIONS:
        shape.dropped.append((st, "a shell setting of the batch script"))
    elif name in native_shape.ENVIRONMENT or name in ("source", "."):
        shape.dropped.append(
            (st, "software set-up: the image must carry it (PATH, libraries, the environment)")
        )
    elif name == "cd":
        native_shape._cd(shape, st, cmd)
    elif name == "sleep":
        shape.dropped.append((st, PAUSE_AT_START))
    elif name in ("wait", "kill", "exit"):
        shape.dropped.append((st, STOPS_WITH_DRIVER))
    elif name in native_shape.PRINTS and not native_shape._writes(cmd):
        shape.dropped.append((st, "prints to the job's output only"))
    else:
        candidates.append((st, [cmd]))


def _head_values(ray: RayShape, st: Statement, text: str) -> None:
    """Mark the variables an assignment gives the head's address (or the node list it is taken from)."""
    shape = ray.shape
    names = [n for n, v in shape.variables.items() if v.line == st.line and not v.constant]
    reads_head = any(re.search(rf"\${{?{re.escape(n)}\b", text) for n in ray.head_values)
    if _NODE_LIST.search(text) or _ADDRESS_OF.search(text) or reads_head:
        for n in names:
            var = shape.variables[n]
            ray.head_values.add(n)
            if var.computed and not _NODE_LIST.search(text):
                # node 0's name or address, or a word built on it ("$head_ip:$port"): the head's
                shape.variables[n] = Variable(
                    _on_head(text, shape.variables), exported=var.exported, line=var.line
                )


def _on_head(text: str, variables: dict[str, Variable]) -> Words:
    """The value of an assignment on the head's address: node 0's address, and a literal port after it."""
    port = re.search(r":\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?|:(\d+)", text)
    if port is None:
        return [[Ref(RefKind.HEAD)]]
    value = port.group(2)
    if value is None:
        var = variables.get(port.group(1))
        value = literal(var.words[0]) if var is not None and var.words and not var.computed else None
    return [[Ref(RefKind.HEAD), f":{value}"]] if value else [[Ref(RefKind.HEAD)]]


def _starts(ray: RayShape, st: Statement, top: list[Command], starts: list[Command]) -> None:
    shape = ray.shape
    others = [c for c in top if c not in starts and c.words and _name(c) not in _WAITING]
    if others:
        shape.block(st.line, f"ray start beside {_name(others[0])}: the start-up is not KubeRay's alone")
        return
    for cmd in starts:
        words = _ray_start_words(shape, cmd)
        assert words is not None
        started = _read_start(shape, st.line, words)
        if started.head:
            if ray.head is not None:
                shape.block(st.line, f"a second Ray head (the first at line {ray.head.line})")
                return
            ray.head = started
        else:
            ray.workers.append(started)
    ray.plumbing.append(st)


def _ray_start_words(shape: Shape, cmd: Command) -> list[str] | None:
    """The words after ``ray start`` when the command starts a Ray node (under srun or a runtime)."""
    words = [w.value for w in cmd.words]
    if not words:
        return None
    i = 0
    if os.path.basename(words[0]) == "srun":
        parsed = launcher_at(words, 0)
        if parsed is None or len(parsed.components) != 1:
            return None
        i = parsed.components[0].start
    rest = words[i:]
    raw = [w.raw for w in cmd.words][i:]
    try:
        program, _ = unwrap_container([expand(w, shape.variables)[0] for w in raw[:6]], cmd.line)
        skip = len(raw[:6]) - len(program)
    except (Unknown, IndexError):
        skip = 0
    rest = rest[skip:]
    if len(rest) >= 2 and os.path.basename(rest[0]) == "ray" and rest[1] == "start":
        return [w.raw for w in cmd.words][i + skip + 2 :]
    return None


def _read_start(shape: Shape, line: int, raw: list[str]) -> RayStart:
    """``ray start`` options as rayStartParams; the ones KubeRay sets, or known only at run time, left out."""
    started = RayStart(line, head="--head" in raw)
    i = 0
    while i < len(raw):
        word = raw[i]
        i += 1
        if not word.startswith("--"):
            continue
        key, eq, value = word[2:].partition("=")
        if not eq and key not in SWITCHES and i < len(raw) and not raw[i].startswith("--"):
            value, i = raw[i], i + 1
        elif not eq:
            value = "true"
        try:
            found = expand(value, shape.variables, split=False)
            text = literal(found[0]) if found else ""
        except Unknown as why:
            text, reason = None, str(why)
        else:
            reason = "a value known on the node only"
        if key == "port":
            started.port = text
        if key in _KUBERAY_OWNS:
            continue
        if text is None:
            started.unknown_options.append((f"--{key}", reason))
            continue
        started.params[key] = text
    return started


def _driver(ray: RayShape, candidates: list[tuple[Statement, list[Command]]]) -> None:
    """The last program is the driver; the programs before it prepare its run."""
    shape = ray.shape
    if not candidates:
        shape.block(ray.head.line if ray.head else 0, "no driver: nothing runs on the Ray cluster")
        return
    last, commands = candidates[-1]
    later = [st for st in ray.plumbing if st.line > last.line]
    if later:
        shape.block(later[0].line, "ray start after the driver")
        return
    for st, _ in candidates[:-1]:
        shape.setup.append(st)
    if len(commands) != 1 or commands[0].nested:
        shape.block(last.line, "the last statement is not one program")
        return
    cmd = commands[0]
    if native_shape._writes(cmd) or any(r.op.startswith("<") for r in cmd.redirects):
        shape.block(last.line, "the driver's input or output is redirected to a file")
        return
    words = [w.value for w in cmd.words]
    first = 0
    if os.path.basename(words[0]) == "srun":
        parsed = launcher_at(words, 0)
        if parsed is None or len(parsed.components) != 1:
            shape.block(last.line, "a heterogeneous srun (several components)")
            return
        comp = parsed.components[0]
        odd = sorted(
            k
            for kv in comp.options
            if (k := kv.key.lstrip("-")) not in _NODE0_SRUN and k not in native_shape._QUIET_SRUN
        )
        if odd:
            shape.block(last.line, f"srun --{odd[0]} runs the driver somewhere else than on the head")
            return
        first = comp.start
    argv: Words = []
    for word in cmd.words[first:]:
        try:
            argv.extend(expand(word.raw, shape.variables))
        except Unknown as why:
            shape.block(last.line, f"the driver's argument {word.value!r}: {why}")
            return
    program, image = unwrap_container(argv, last.line)
    if not program or literal(program[0]) is None:
        shape.block(last.line, "the driver's program is known at run time only")
        return
    name = os.path.basename(literal(program[0]) or "")
    shape.step = Step(last.line, last.text, StepKind.RAY, name, program, {}, image=image)


def _name(cmd: Command) -> str:
    return os.path.basename(cmd.words[0].value) if cmd.words else ""


__all__ = [
    "GCS_PORT",
    "KEEPS_NODE_PID",
    "PAUSE_AT_START",
    "STOPS_WITH_DRIVER",
    "SWITCHES",
    "WAITS_FOR_HEAD",
    "RayShape",
    "RayStart",
    "read_ray",
]
