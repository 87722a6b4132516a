"""A model served across nodes: what each pod of the LeaderWorkerSet group runs, and why it can.

:mod:`.native_lws` reads the script; this module decides whether its group can
be written (``decide``, ``plan``), says what the leader and the workers run
(``LwsPlan``) and records where each statement and value went (``record``).
:mod:`.leaderworkerset` writes the manifests.

The group is one pod per node, node 0 its leader. The LeaderWorkerSet's
webhook puts ``LWS_LEADER_ADDRESS``, ``LWS_GROUP_SIZE`` and
``LWS_WORKER_INDEX`` first in every container's env, so the arguments and the
env read them as ``$(NAME)``: node 0's address, the node count and the node's
index are those, in every pod.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from typing import Any

from migrate import ir

from ..shell.servers import Server
from . import flavors, native, native_lws
from .native_lws import GROUP_SIZE, LEADER_ADDRESS, WORKER_INDEX, ServingShape
from .native_ray import GCS_PORT, SWITCHES, RayShape, RayStart
from .native_shape import StepKind, references
from .native_words import Ref, RefKind, Unknown, literal

NAME_MAX = 50  # the workers' StatefulSet <name>-0 leaves room for its controller-revision-hash label
_KUBELET_DOLLAR = re.compile(r"\$(?=[$(])")
_SHELLS = frozenset({"bash", "sh"})
# The server needs every node's GPUs: the leader waits until the workers have joined its Ray head.
_WAIT_FOR_WORKERS = (
    'until python3 -c \'import ray, sys; ray.init(address="auto", logging_level="ERROR"); '
    'sys.exit(sum(n["Alive"] for n in ray.nodes()) < int(sys.argv[1]))\' "$LWS_GROUP_SIZE"; do\n'
    "  sleep 5\n"
    "done"
)


@dataclass
class LwsPlan(native.Plan):
    """A native plan whose pods are one LeaderWorkerSet group: the leader is node 0."""

    serving: ServingShape | None = None
    port: int = 0
    port_given: bool = True  # False: the server's default port, which its command does not name

    @property
    def server(self) -> Server:
        assert self.serving is not None
        return self.serving.server

    @property
    def ray(self) -> RayShape | None:
        return self.serving.ray if self.serving is not None else None

    # --- values -------------------------------------------------------------
    def index_arg(self) -> str:
        return WORKER_INDEX

    def slurm(self, name: str, in_args: bool, node0: bool = False) -> str:
        if name in native_lws.NODE_COUNTS:
            return str(self.nodes) if node0 else GROUP_SIZE
        return super().slurm(name, in_args, node0)

    def env_entry(self, name: str, value: str) -> dict[str, Any]:
        if value in (WORKER_INDEX, GROUP_SIZE):  # the webhook's env comes first: an env value reads it
            return {"name": name, "value": value}
        return super().env_entry(name, value)

    def task_identity(self) -> set[str]:
        """None: a server takes its rank and its peers from its options, not from its task's Slurm
        identity as a training program may (the SLURM_* names its words hold still count)."""
        return set()

    def plumbing(self) -> set[str]:
        """The Ray start-up's node list and head address, which the pods do not need."""
        if self.ray is None:
            return set()
        exported = {n for n, v in self.shape.variables.items() if v.exported and not v.computed}
        return set(self.ray.head_values) - exported

    def summary(self) -> str | None:
        step = self.shape.step
        assert step is not None
        how = "on a Ray cluster the leader starts" if self.ray is not None else "in every pod"
        return (
            f"{self.server.name} at line {step.line} serves from {self.nodes} nodes as one LeaderWorkerSet "
            f"group, {how}"
        )

    # --- what the pods run ---------------------------------------------------
    def argv(self) -> list[str]:
        """The leader's command and arguments; the workers run the same unless a Ray cluster is there."""
        if self.ray is None:
            return super().argv()
        return ["/bin/bash", "-c", self.leader_script()]

    def worker_argv(self) -> list[str]:
        if self.ray is None:
            return self.argv()
        return ["/bin/bash", "-c", self.worker_script()]

    def leader_script(self) -> str:
        """The Ray head, the statements preparing the server's run, the wait for the workers, the server."""
        ray = self.ray
        step = self.shape.step
        assert ray is not None and ray.head is not None and step is not None
        lines = [_kubelet(" ".join(["ray start --head", f"--port={self.gcs_port()}", *_options(ray.head)]))]
        setup = self.init_script()
        if setup:
            lines.append(_kubelet(setup.rstrip("\n")))
        lines.append(_kubelet(_WAIT_FOR_WORKERS))
        lines.append(self._driver_line())
        return "\n".join(lines)

    def worker_script(self) -> str:
        """Join the leader's Ray head; again until it answers, as the workers may start before it."""
        ray = self.ray
        assert ray is not None and ray.workers
        join = " ".join(
            [
                f"ray start --address={LEADER_ADDRESS}:{self.gcs_port()} --block",
                *(_kubelet(option) for option in _options(ray.workers[0])),
            ]
        )
        return f"until {join}; do\n  sleep 5\ndone"

    def gcs_port(self) -> str:
        head = self.ray.head if self.ray is not None else None
        port = head.port if head is not None else None
        return port if port and port.isdigit() else GCS_PORT

    def _driver_line(self) -> str:
        """The server, in the leader's place (exec: it gets the pod's signals), or the shell line
        that starts it."""
        step = self.shape.step
        assert step is not None
        argv = step.argv
        first = literal(argv[0]) if argv else None
        inline = literal(argv[2]) if len(argv) == 3 else None
        if first in _SHELLS and literal(argv[1]) == "-c" and inline is not None:
            return _kubelet(inline.strip())  # a shell line already
        return "exec " + " ".join(self._shell_word(w) for w in argv)

    def _shell_word(self, word: list[Any]) -> str:
        """One word for the leader's shell: literals quoted (and kept from the kubelet), the group's
        values as the $(NAME) references the kubelet fills in."""
        if all(isinstance(s, str) for s in word):
            return _kubelet(shlex.quote("".join(word)))
        out = []
        for seg in word:
            if isinstance(seg, Ref):
                out.append(LEADER_ADDRESS if seg.kind is RefKind.HEAD else self.slurm(seg.name, in_args=True))
            else:
                out.append(_kubelet(re.sub(r'(["\\$`])', r"\\\1", seg)))
        return '"' + "".join(out) + '"'


def _kubelet(text: str) -> str:
    """Text the kubelet passes on unchanged ('$(' and '$$' doubled): only our $(NAME) are its."""
    return _KUBELET_DOLLAR.sub("$$", text)


def _options(started: RayStart) -> list[str]:
    """A ``ray start``'s options as the script gave them, those the pods set themselves left out."""
    out = []
    for key, value in sorted(started.params.items()):
        out.append(f"--{key}" if key in SWITCHES and value == "true" else f"--{key}={shlex.quote(value)}")
    return out


def decide(
    job: ir.Job, choice: flavors.Choice, name: str, submitter: dict[str, str] | None = None
) -> tuple[native.Decision, native.Plan | None] | None:
    """Native or emulated for a script that serves a model across nodes; None when it serves none."""
    known = native_lws.constants({**native.constants(job, name), **(submitter or {})})
    serving = native_lws.read_serving(job, known)
    if serving is None:
        return None
    found, why = plan(job, choice, serving, name)
    return native.decision(serving.shape, found, why)


def plan(
    job: ir.Job, choice: flavors.Choice, serving: ServingShape, name: str
) -> tuple[LwsPlan | None, tuple[int, str]]:
    """The group's plan; None and (line, why) when the script needs to run as it is."""
    shape = serving.shape
    if shape.blocker is not None:
        return None, shape.blocker
    step = shape.step
    assert step is not None
    if choice.requested not in (flavors.AUTO, flavors.LWS, flavors.KUEUE):
        return None, (
            step.line,
            f"--flavor {choice.requested}: a model served across nodes is natively a LeaderWorkerSet",
        )
    blocked = _job_blocker(job, serving)
    if blocked is not None:
        return None, blocked
    comp = job.components[0]
    nodes = comp.resources.computed_nodes() * comp.replicas
    tpn = comp.resources.computed_tasks_per_node()
    if tpn > 1:
        return None, (step.line, f"{tpn} tasks per node: one pod per node runs one server")
    shaped = _ray_blocker(serving, nodes) if serving.ray is not None else _group_blocker(serving, nodes)
    if shaped is not None:
        return None, shaped
    try:
        port = native_lws.served_port(step.argv, serving.server)
    except Unknown as why:
        return None, (step.line, f"the server's port: {why}")
    out = LwsPlan(
        shape,
        flavors.LWS,
        name,
        nodes,
        tpn,
        comp.resources.computed_gpus_per_node(),
        LEADER_ADDRESS,
        LEADER_ADDRESS,
        cpus_per_task=comp.resources.cpus_per_task,
        serving=serving,
        port=port,
        port_given=_names_port(step.argv, serving.server),
    )
    try:
        out.argv()
        out.worker_argv()
        out.env()
    except Unknown as why:
        return None, (step.line, str(why))
    return out, (0, "")


def _job_blocker(job: ir.Job, serving: ServingShape) -> tuple[int, str] | None:
    """What of the job itself a LeaderWorkerSet group cannot hold."""
    shape = serving.shape
    step = shape.step
    assert step is not None
    if len(job.components) > 1:
        return step.line, "a heterogeneous job: its components share one script"
    if job.array is not None:
        return step.line, "an array of multi-node servers"
    if job.templated and any("{{" in w or "${" in w for w in step.text.split()):
        return step.line, "a template: the step's words are known once it is rendered (--set)"
    for why, found in (
        ("--input: the entrypoint feeds the script's stdin from the file", job.io.stdin),
        ("--signal: the entrypoint sends the signal before the time limit", job.failure.signal is not None),
        ("the script submits jobs itself", bool(job.submits)),
    ):
        if found:
            return 0, why
    credentials = native.computed_credentials(job)
    for var_name, var in shape.variables.items():
        if var.exported and var.computed and var_name not in credentials:
            return var.line, f"the server would not see ${var_name}, {var.computed}"
    images = {c.image for c in job.components[0].containers if c.image}
    if len(images) > 1:
        return step.line, f"{len(images)} container images: one pod runs one"
    return None


def _group_blocker(serving: ServingShape, nodes: int) -> tuple[int, str] | None:
    """Every node runs the server: one srun step of one task per node, nothing to run before it."""
    shape = serving.shape
    step = shape.step
    assert step is not None
    if step.kind is not StepKind.TASKS or not step.under_srun:
        where = "outside srun" if not step.under_srun else f"under {step.launcher}"
        return step.line, f"{serving.server.name} {where} runs on node 0 of {nodes} nodes only"
    layout = native.srun_layout(step.srun, nodes, 1)
    if layout is not None:
        return step.line, layout
    if shape.setup:
        return shape.setup[0].line, (
            "a statement to run once before the servers start: a LeaderWorkerSet group's pods start together"
        )
    if step.background and not any(why.startswith("the pods end") for _, why in shape.dropped):
        return step.line, "the server runs in the background and nothing waits for it"
    return None


def _ray_blocker(serving: ServingShape, nodes: int) -> tuple[int, str] | None:
    """A Ray cluster on every node, the server its driver on node 0."""
    ray = serving.ray
    assert ray is not None and ray.head is not None
    if not ray.workers:
        return ray.head.line, f"only the head starts: the other {nodes - 1} nodes run no ray start"
    setup_text = "\n".join(st.text for st in serving.shape.setup)
    for value in sorted(ray.head_values):
        if re.search(rf"\${{?{re.escape(value)}\b", setup_text):
            return serving.shape.setup[
                0
            ].line, f"a statement before the server reads ${value}, the head's address"
    return None


def _names_port(argv: list[list[Any]], server: Server) -> bool:
    words = [literal(w) or "" for w in argv]
    return any(w == o or w.startswith(o + "=") for w in words for o in server.port_options)


def record(ctx: Any, plan_: LwsPlan) -> None:
    """Fidelity: the group, the server and its port, the values the group gives, the Ray start-up."""
    native.record(ctx, plan_)
    step = plan_.shape.step
    assert step is not None
    port = f"port {plan_.port}" + ("" if plan_.port_given else f" ({plan_.server.name}'s default)")
    ctx.fidelity.mapped(
        f"server: {native.short(step.text)}",
        f"one LeaderWorkerSet group of {plan_.nodes} pods, node 0 the leader; {port} is the leader's "
        f"containerPort and Service {ctx.name}-leader's, which clients reach",
        step.line,
    )
    ctx.fidelity.approximated(
        "the job's end",
        "the group serves until the LeaderWorkerSet is deleted; a pod that fails recreates the whole "
        "group (restartPolicy RecreateGroupOnPodRestart), where Slurm ended the job",
        None,
    )
    for name in sorted(references(step.argv)):
        if name in native_lws.NODE_COUNTS:
            ctx.fidelity.mapped(f"${name}", f"{GROUP_SIZE}, the group's size", step.line)
        elif name in native_lws.NODE_INDEXES:
            ctx.fidelity.approximated(
                f"${name}",
                f"{WORKER_INDEX}, each pod's index in the group. On Slurm the batch shell expands it to "
                "node 0's 0 before srun starts the step, so every node got 0",
                step.line,
            )
    for name, var in plan_.shape.variables.items():
        on_head = any(isinstance(seg, Ref) and seg.kind is RefKind.HEAD for w in var.words for seg in w)
        if on_head and not var.exported and name not in plan_.plumbing():
            ctx.fidelity.mapped(f"{name}=", f"node 0's address: the leader's, {LEADER_ADDRESS}", var.line)
    if plan_.ray is not None:
        _record_ray(ctx, plan_)


def _record_ray(ctx: Any, plan_: LwsPlan) -> None:
    ray = plan_.ray
    assert ray is not None and ray.head is not None
    ctx.fidelity.mapped(
        "ray start (head)",
        f"the leader runs ray start --head --port={plan_.gcs_port()} "
        + " ".join(_options(ray.head))
        + ", waits until the group's workers have joined, then the server",
        ray.head.line,
    )
    ctx.fidelity.mapped(
        "ray start (workers)",
        f"each worker runs ray start --address={LEADER_ADDRESS}:{plan_.gcs_port()} --block "
        + " ".join(_options(ray.workers[0])),
        ray.workers[0].line,
    )
    for started in (ray.head, *ray.workers[:1]):
        for option, why in started.unknown_options:
            ctx.fidelity.approximated(
                f"ray start {option}", f"{why}: not given, ray start counts what the pod has", started.line
            )
    for started in ray.workers[1:]:
        if started.params != ray.workers[0].params:
            ctx.fidelity.approximated(
                "ray start (workers)",
                f"line {started.line} starts workers with other options; the workers take those of "
                f"line {ray.workers[0].line}",
                started.line,
            )
    for st in ray.plumbing:
        ctx.fidelity.mapped(
            f"statement: {native.short(st.text)}", "the leader and the workers start Ray themselves", st.line
        )
    for name in sorted(plan_.plumbing()):
        var = plan_.shape.variables.get(name)
        ctx.fidelity.mapped(
            f"{name}=",
            f"the node list or the head's address: the workers join the leader at {LEADER_ADDRESS}",
            var.line if var is not None else None,
        )


__all__ = ["NAME_MAX", "LwsPlan", "decide", "plan", "record"]
