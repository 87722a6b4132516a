"""The pods a LeaderWorkerSet controller (leaderworkerset.x-k8s.io/v1) creates, as the runner plans them.

``replicas`` groups of ``leaderWorkerTemplate.size`` pods: the leader ``<name>-<group>``
(from ``leaderTemplate``, else ``workerTemplate``) and the workers ``<name>-<group>-<index>``,
index 1 .. size-1. Each pod's host name is its name and its subdomain the headless Service
``<name>`` (``networkConfig.subdomainPolicy: UniquePerReplica``: the leader's name), so
``<pod>.<subdomain>.<namespace>`` resolves. The pod webhook labels every pod with the
set's name and the group's and the pod's index, annotates the group's size (and on a
worker the leader's name), and puts ``LWS_LEADER_ADDRESS``, ``LWS_GROUP_SIZE`` and
``LWS_WORKER_INDEX`` first in every container's env, replacing the container's own
entries of those names, so that the container's values can refer to them with ``$(VAR)``.

Declared difference: the controller runs the pods through StatefulSets, which start a pod
again whenever its program ends (and, under ``RecreateGroupOnPodRestart``, recreate the
whole group when one fails). The runner runs each pod to its exit, once: the workload is
complete when every pod of every group exited 0, and failed when one did not.
"""

from __future__ import annotations

import copy
import hashlib
import uuid
from typing import Any

from .model import Group, PodPlan, Workload

API = "leaderworkerset.x-k8s.io/v1"
KIND = "LeaderWorkerSet"
PREFIX = "leaderworkerset.sigs.k8s.io/"
CLUSTER_DOMAIN = "svc.cluster.local"


def _meta(doc: dict[str, Any]) -> tuple[str, str]:
    meta = doc.get("metadata") or {}
    return str(meta["name"]), str(meta.get("namespace") or "default")


def _with_lws_env(spec: dict[str, Any], env: dict[str, str]) -> dict[str, Any]:
    """The webhook's order: its variables first, then the container's own other entries."""
    spec = copy.deepcopy(spec)
    for key in ("initContainers", "containers"):
        for container in spec.get(key) or ():
            own = [e for e in container.get("env") or () if e.get("name") not in env]
            container["env"] = [{"name": k, "value": v} for k, v in env.items()] + own
    return spec


def leaderworkerset(doc: dict[str, Any]) -> Workload:
    name, namespace = _meta(doc)
    spec = doc["spec"]
    replicas = int(spec.get("replicas", 1))
    template = spec["leaderWorkerTemplate"]
    size = int(template.get("size", 1))
    workers = template["workerTemplate"]
    leaders = template.get("leaderTemplate") or workers
    unique = (spec.get("networkConfig") or {}).get("subdomainPolicy") == "UniquePerReplica"
    groups: list[Group] = []
    index = 0
    for group in range(replicas):
        leader = f"{name}-{group}"
        subdomain = leader if unique else name
        key = hashlib.sha1(f"{namespace}/{leader}".encode()).hexdigest()
        env = {
            "LWS_LEADER_ADDRESS": f"{leader}.{subdomain}.{namespace}",
            "LWS_GROUP_SIZE": str(size),
        }
        pods: list[PodPlan] = []
        for worker in range(size):
            pod_template = leaders if worker == 0 else workers
            meta = pod_template.get("metadata") or {}
            pod_name = leader if worker == 0 else f"{leader}-{worker}"
            labels = {
                **(meta.get("labels") or {}),
                f"{PREFIX}name": name,
                f"{PREFIX}group-index": str(group),
                f"{PREFIX}worker-index": str(worker),
                f"{PREFIX}group-key": key,
            }
            annotations = {**(meta.get("annotations") or {}), f"{PREFIX}size": str(size)}
            if worker:
                annotations[f"{PREFIX}leader-name"] = leader
            full = f"{pod_name}.{subdomain}.{namespace}"
            pods.append(
                PodPlan(
                    name=pod_name,
                    hostname=pod_name,
                    namespace=namespace,
                    spec=_with_lws_env(pod_template["spec"], {**env, "LWS_WORKER_INDEX": str(worker)}),
                    labels=labels,
                    annotations=annotations,
                    subdomain=subdomain,
                    role="leader" if worker == 0 else "worker",
                    index=index,
                    uid=str(uuid.uuid4()),
                    # the headless Service's records; a pod's resolver also finds <pod>.<subdomain>.<ns>
                    dns_names=(f"{full}.{CLUSTER_DOMAIN}", f"{full}.svc", full, f"{pod_name}.{subdomain}"),
                )
            )
            index += 1
        # every pod of a group starts at once (startupPolicy LeaderCreated); none is retried
        groups.append(Group(leader, pods, parallelism=size, backoff_limit=0, role=leader))
    return Workload(KIND, name, groups, gang=False)


__all__ = ["API", "KIND", "leaderworkerset"]
