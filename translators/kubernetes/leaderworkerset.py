"""LeaderWorkerSet (leaderworkerset.x-k8s.io/v1) of a model served across nodes, and its Service.

Native only (:mod:`.lws` plans what the pods run): one group (``replicas: 1``)
of ``size`` pods, one per node of the Slurm job, each with the node's
resources, image, mounts and devices as for the other kinds. The leader is
node 0: it holds the server's port, and a Service selects it by the
controller's ``worker-index`` label so that clients reach the server. A pod
that fails recreates the whole group (``RecreateGroupOnPodRestart``): a
multi-node server cannot go on without one of its nodes.
"""

from __future__ import annotations

import copy
from typing import Any

from . import pod_template, slurmenv
from .job_policy import JobPolicy
from .lws import LwsPlan
from .storage import Volume
from .translation_context import Context, Workload
from .yamlemit import Manifest

API = "leaderworkerset.x-k8s.io/v1"
LABEL_PREFIX = "leaderworkerset.sigs.k8s.io/"
NAME_LABEL = LABEL_PREFIX + "name"  # the controller's labels on every pod of the set
WORKER_INDEX_LABEL = LABEL_PREFIX + "worker-index"  # 0 on each group's leader
PORT_NAME = "http"


def service_name(ctx: Context) -> str:
    """The clients' Service; the controller's own headless Service is named like the set."""
    return f"{ctx.name}-leader"


def build(
    ctx: Context, policy: JobPolicy, volumes: list[Volume], kueue: bool = False
) -> tuple[list[Manifest], Workload]:
    plan: LwsPlan = ctx.native
    comp = ctx.job.components[0]
    parts = pod_template.build(
        ctx, comp, 0, slurmenv.Topology(nodes=plan.nodes), policy, volumes, container_name="leader"
    )
    leader = parts.template
    leader["spec"].pop("restartPolicy", None)  # a StatefulSet's pods restart: Always, its only policy
    worker = copy.deepcopy(leader)
    _serve(leader["spec"]["containers"][0], plan)
    _run(worker["spec"]["containers"][0], "worker", plan.worker_argv())
    if plan.ray is not None:
        _run(leader["spec"]["containers"][0], "leader", plan.argv())
    spec: dict[str, Any] = {
        "replicas": 1,
        "leaderWorkerTemplate": {
            "size": plan.nodes,
            "restartPolicy": "RecreateGroupOnPodRestart",
            "leaderTemplate": leader,
            "workerTemplate": worker,
        },
    }
    meta = ctx.metadata()
    meta["labels"] = {**meta["labels"], **policy.labels}  # type: ignore[dict-item]
    if policy.annotations:
        meta["annotations"] = {**meta["annotations"], **policy.annotations}  # type: ignore[dict-item]
    manifest = Manifest({"apiVersion": API, "kind": "LeaderWorkerSet", "metadata": meta, "spec": spec})
    _notes(manifest, plan, parts.comments)
    return [manifest, _service(ctx, plan)], Workload(
        "leaderworkerset", ctx.name, ctx.namespace, "Available", "Failed"
    )


def _serve(container: dict[str, Any], plan: LwsPlan) -> None:
    """The leader serves: its port, and ready once the server listens (the Service waits for that)."""
    container["ports"] = [{"name": PORT_NAME, "containerPort": plan.port}]
    container["readinessProbe"] = {"tcpSocket": {"port": plan.port}, "periodSeconds": 10}


def _run(container: dict[str, Any], name: str, argv: list[str]) -> None:
    container["name"] = name
    container.pop("args", None)
    if argv[:2] == ["/bin/bash", "-c"]:
        container["command"], container["args"] = argv[:2], argv[2:]
    else:
        container["command"], container["args"] = argv[:1], argv[1:]
    if not container["args"]:
        container.pop("args")
    order = ("name", "image", "command", "args")  # the container's fields in their usual order
    items = sorted(container.items(), key=lambda kv: order.index(kv[0]) if kv[0] in order else len(order))
    container.clear()
    container.update(items)


def _service(ctx: Context, plan: LwsPlan) -> Manifest:
    body = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": ctx.metadata(service_name(ctx)),
        "spec": {
            "selector": {NAME_LABEL: ctx.name, WORKER_INDEX_LABEL: "0"},
            "ports": [{"name": PORT_NAME, "port": plan.port, "targetPort": plan.port, "protocol": "TCP"}],
        },
    }
    manifest = Manifest(body)
    manifest.note(
        ("spec", "selector"),
        f"the group's leader (worker index 0), where {plan.server.name} serves; the LeaderWorkerSet "
        f"controller makes its own headless Service {ctx.name} for the pods' host names",
    )
    return manifest


def _notes(manifest: Manifest, plan: LwsPlan, comments: dict[Any, list[str]]) -> None:
    base = ("spec", "leaderWorkerTemplate")
    manifest.note(
        (*base, "size"),
        f"one pod per node of the Slurm job; the leader is node 0. Every container gets LWS_LEADER_ADDRESS "
        f"(node 0's address), LWS_GROUP_SIZE ({plan.nodes}) and LWS_WORKER_INDEX (the node's index) first "
        "in its env",
    )
    manifest.note(
        (*base, "restartPolicy"),
        "a pod that fails starts the whole group again: the server cannot go on without one of its nodes",
    )
    if plan.ray is not None:
        manifest.note(
            (*base, "workerTemplate", "spec", "containers", 0, "args"),
            f"each worker joins the leader's Ray head at port {plan.gcs_port()}, again until the head "
            "answers (the workers may start first)",
        )
    for template in ("leaderTemplate", "workerTemplate"):
        for path, texts in comments.items():
            for text in texts:
                manifest.note((*base, template, *path), text)


__all__ = ["API", "NAME_LABEL", "WORKER_INDEX_LABEL", "build", "service_name"]
