"""RayJob (ray.io/v1): the Ray cluster a batch script starts, as KubeRay starts it, and its driver.

Native only (:mod:`.native_ray` reads the script): the head group is node 0,
one worker group holds the other nodes, each pod the node's resources, image,
mounts and devices as for the other kinds; KubeRay runs ``ray start`` in them
with the script's options as ``rayStartParams``. The driver is the
``entrypoint``, which the Ray job API runs on the cluster once it is ready, with
``RAY_ADDRESS`` set to the head's GCS address: a value the script built from the
head's address is taken from there. The statements that prepared the driver's
run come first in the entrypoint, as they ran first in the batch shell.
"""

from __future__ import annotations

import copy
import re
import shlex
from dataclasses import dataclass
from typing import Any

from migrate import ir

from . import flavors, native, pod_template, slurmenv
from .job_policy import JobPolicy
from .native_ray import GCS_PORT, RayShape, read_ray
from .native_words import Ref, RefKind, Unknown, literal
from .storage import Volume
from .translation_context import Context, Workload
from .yamlemit import Manifest

RAY_API = "ray.io/v1"
WORKER_GROUP = "workers"
NAME_MAX = 47  # KubeRay adds 6 characters for the RayCluster, whose names stop at 53
HEAD_ADDRESS = "${RAY_ADDRESS%:*}"  # the head's address in the entrypoint's shell (RAY_ADDRESS is ip:port)
_RAY_VERSION = re.compile(r"(?:^|/)ray(?:-ml)?:(\d+\.\d+\.\d+)")
_SHELLS = frozenset({"bash", "sh"})


@dataclass
class RayPlan(native.Plan):
    """A native plan whose pods run KubeRay's ray start, and whose driver is the entrypoint."""

    ray: RayShape | None = None

    def argv(self) -> list[str]:
        return []  # KubeRay's ray start is the container's command

    def program_reads(self) -> set[str]:
        return set()

    def plumbing(self) -> set[str]:
        return self.ray.head_values if self.ray is not None else set()

    def env(self) -> list[dict[str, Any]]:
        """The script's exported values every Ray node sees (ray start passes them to its workers)."""
        out = []
        for name, var in self.shape.variables.items():
            if var.exported and not var.computed and not _on_head(var.words):
                out.append(
                    {"name": name, "value": " ".join(self.render(w, in_args=False) for w in var.words)}
                )
        return out

    def entrypoint(self) -> str:
        """The driver as one shell line, after the exports built on the head's address and the set-up."""
        step = self.shape.step
        assert step is not None and self.ray is not None
        lines = [
            f"export {name}={self._shell(var.words[0])}"
            for name, var in self.shape.variables.items()
            if var.exported
            and not var.computed
            and var.words
            and _on_head(var.words)
            and not (name == "RAY_ADDRESS" and var.words[0][1:] == [f":{GCS_PORT}"])  # the job API's own
        ]
        setup = self.init_script()
        if setup:
            lines.extend(setup.rstrip("\n").splitlines())
        if self.shape.workdir:
            lines.insert(0, f"cd {shlex.quote(self.shape.workdir)}")
        argv = step.argv
        first = literal(argv[0]) if argv else None
        inline = literal(argv[2]) if len(argv) == 3 else None
        if first in _SHELLS and literal(argv[1]) == "-c" and inline is not None:
            lines.append(inline.strip())  # the entrypoint is a shell line already
        else:
            lines.append(" ".join(self._shell(w) for w in argv))
        return "\n".join(lines)

    def _shell(self, word: list[Any]) -> str:
        """One word for the entrypoint's shell: literals quoted, the head's address from RAY_ADDRESS."""
        if all(isinstance(s, str) for s in word):
            return shlex.quote("".join(word))
        out = []
        for seg in word:
            if isinstance(seg, Ref) and seg.kind is RefKind.HEAD:
                out.append(HEAD_ADDRESS)
            elif isinstance(seg, Ref):
                out.append(_double_quoted(self.slurm(seg.name, in_args=True, node0=True)))
            else:
                out.append(_double_quoted(seg))
        return '"' + "".join(out) + '"'


def _double_quoted(text: str) -> str:
    return re.sub(r'(["\\$`])', r"\\\1", text)


def _on_head(words: list[list[Any]]) -> bool:
    return any(isinstance(seg, Ref) and seg.kind is RefKind.HEAD for w in words for seg in w)


def decide(
    job: ir.Job, choice: flavors.Choice, name: str, submitter: dict[str, str] | None = None
) -> tuple[native.Decision, native.Plan | None] | None:
    """Native or emulated for a script that starts a Ray cluster; None when it starts none."""
    ray = read_ray(job, {**native.constants(job, name), **(submitter or {})})
    if ray is None:
        return None
    found, why = plan(job, choice, ray, name)
    return native.decision(ray.shape, found, why)


def plan(
    job: ir.Job, choice: flavors.Choice, ray: RayShape, name: str
) -> tuple[RayPlan | None, tuple[int, str]]:
    """The RayJob's plan; None and (line, why) when the script needs to run as it is."""
    shape = ray.shape
    if shape.blocker is not None:
        return None, shape.blocker
    step = shape.step
    assert step is not None and ray.head is not None
    if choice.requested not in (flavors.AUTO, flavors.RAYJOB, flavors.KUEUE):
        return None, (ray.head.line, f"--flavor {choice.requested}: a Ray cluster's native form is a RayJob")
    if len(job.components) > 1:
        return None, (ray.head.line, "a heterogeneous job: its components share one script")
    for why, blocked in (
        ("--input: the entrypoint feeds the script's stdin from the file", job.io.stdin),
        ("--signal: the entrypoint sends the signal before the time limit", job.failure.signal is not None),
        ("the script submits jobs itself", bool(job.submits)),
    ):
        if blocked:
            return None, (0, why)
    if job.array is not None:
        return None, (ray.head.line, "an array of Ray clusters")
    comp = job.components[0]
    nodes = comp.resources.computed_nodes() * comp.replicas
    if nodes > 1 and not ray.workers:
        return None, (ray.head.line, f"only the head starts: the other {nodes - 1} nodes run no ray start")
    if nodes == 1 and ray.workers:
        return None, (ray.workers[0].line, "workers on a one-node allocation")
    for var_name, var in shape.variables.items():
        if var.exported and var.computed:
            return None, (var.line, f"the driver would not see ${var_name}, {var.computed}")
    setup_text = "\n".join(st.text for st in shape.setup)
    for value in sorted(ray.head_values):
        if re.search(rf"\${{?{re.escape(value)}\b", setup_text):
            return None, (
                shape.setup[0].line,
                f"a statement before the driver reads ${value}, the head's address",
            )
    tpn = comp.resources.computed_tasks_per_node()
    out = RayPlan(
        shape,
        flavors.RAYJOB,
        name,
        nodes,
        tpn,
        comp.resources.computed_gpus_per_node(),
        HEAD_ADDRESS,
        HEAD_ADDRESS,
        cpus_per_task=comp.resources.cpus_per_task,
        ray=ray,
    )
    try:
        out.entrypoint()
        out.env()
    except Unknown as why:
        return None, (step.line, str(why))
    return out, (0, "")


def build(
    ctx: Context, policy: JobPolicy, volumes: list[Volume], kueue: bool = False
) -> tuple[list[Manifest], Workload]:
    plan_: RayPlan = ctx.native
    ray = plan_.ray
    assert ray is not None and ray.head is not None
    comp = ctx.job.components[0]
    topo = slurmenv.Topology(nodes=plan_.nodes)
    parts = pod_template.build(ctx, comp, 0, topo, policy, volumes, container_name="ray-head")
    head = parts.template
    head_spec = head["spec"]
    head_spec.pop("restartPolicy", None)  # KubeRay restarts a Ray node's pod as it sees fit
    container = head_spec["containers"][0]
    container.pop("command", None)
    cluster: dict[str, Any] = {}
    version = _RAY_VERSION.search(container["image"])
    if version:
        cluster["rayVersion"] = version.group(1)
    cluster["headGroupSpec"] = {"rayStartParams": dict(sorted(ray.head.params.items())), "template": head}
    if plan_.nodes > 1:
        worker = copy.deepcopy(head)
        worker["spec"]["containers"][0]["name"] = "ray-worker"
        replicas = plan_.nodes - 1
        params = ray.workers[0].params
        cluster["workerGroupSpecs"] = [
            {
                "groupName": WORKER_GROUP,
                "replicas": replicas,
                "minReplicas": replicas,
                "maxReplicas": replicas,
                "rayStartParams": dict(sorted(params.items())),
                "template": worker,
            }
        ]
    spec: dict[str, Any] = {"entrypoint": plan_.entrypoint(), "shutdownAfterJobFinishes": True}
    if policy.active_deadline is not None:
        spec["activeDeadlineSeconds"] = policy.active_deadline
    if policy.backoff_limit:
        spec["backoffLimit"] = policy.backoff_limit
    if kueue or policy.suspend:
        spec["suspend"] = True
    spec["rayClusterSpec"] = cluster
    meta = ctx.metadata()
    meta["labels"] = {**meta["labels"], **policy.labels}  # type: ignore[dict-item]
    if policy.annotations:
        meta["annotations"] = {**meta["annotations"], **policy.annotations}  # type: ignore[dict-item]
    manifest = Manifest({"apiVersion": RAY_API, "kind": "RayJob", "metadata": meta, "spec": spec})
    manifest.note(
        ("spec", "entrypoint"),
        f"the driver of line {plan_.shape.step.line if plan_.shape.step else '?'}: the Ray job API runs it "
        "once every node has joined, with RAY_ADDRESS set to the head's GCS address",
    )
    manifest.note(
        ("spec", "rayClusterSpec"),
        f"node 0 is the head, the other {plan_.nodes - 1} nodes the workers: KubeRay runs ray start in "
        f"each pod (GCS port {GCS_PORT}) and the workers wait for the head",
    )
    base = ("spec", "rayClusterSpec", "headGroupSpec", "template")
    for path, texts in parts.comments.items():
        for text in texts:
            manifest.note((*base, *path), text)
    return [manifest], Workload(
        "rayjob", ctx.name, ctx.namespace, "Complete", "Failed", ".status.jobDeploymentStatus"
    )


def record(ctx: Context, plan_: RayPlan) -> None:
    """Fidelity: the cluster's start-up is KubeRay's; each ray start option where it went."""
    native.record(ctx, plan_)
    ray = plan_.ray
    assert ray is not None and ray.head is not None
    for started in (ray.head, *ray.workers[:1]):
        role = "head" if started.head else "workers"
        pods = "the head pod" if started.head else "each worker pod"
        ctx.fidelity.mapped(
            f"ray start ({role})",
            f"KubeRay's ray start in {pods}; options as rayStartParams "
            + (", ".join(f"{k}={v}" for k, v in sorted(started.params.items())) or "(none)"),
            started.line,
        )
        if started.port and started.port != GCS_PORT:
            ctx.fidelity.approximated(
                f"ray start --port={started.port}", f"KubeRay's head listens on {GCS_PORT}", started.line
            )
        for option, why in started.unknown_options:
            ctx.fidelity.approximated(
                f"ray start {option} ({role})",
                f"{why}: KubeRay derives it from the pod's limits",
                started.line,
            )
    for started in ray.workers[1:]:
        if started.params != ray.workers[0].params:
            ctx.fidelity.approximated(
                "ray start (workers)",
                f"line {started.line} starts workers with other options; one worker group takes those of "
                f"line {ray.workers[0].line}",
                started.line,
            )
    for st in ray.plumbing:
        ctx.fidelity.mapped(
            f"statement: {native.short(st.text)}", "KubeRay starts the Ray nodes itself", st.line
        )
    for name in sorted(ray.head_values):
        var = plan_.shape.variables.get(name)
        if var is not None and var.exported and not var.computed:
            ctx.fidelity.approximated(
                f"env {name}",
                "set in the entrypoint from RAY_ADDRESS (the head's GCS address), for the driver only; the "
                "workers' tasks do not see it",
                var.line,
            )


__all__ = ["RAY_API", "RayPlan", "build", "plan", "record"]
