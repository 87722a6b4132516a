"""The pods KubeRay makes for a RayJob: its Ray cluster (own ``rayClusterSpec`` or the RayCluster its
``clusterSelector`` names), and the job's entrypoint run on the head once the cluster is ready.

As KubeRay (ray-operator, controllers/ray/common/pod.go and rayjob_controller.go):

- the head pod ``<cluster>-head-xxxxx`` and worker pods ``<cluster>-<group>-worker-xxxxx``, each
  with its pod name as host name; the head Service ``<cluster>-head-svc`` names the head;
- the Ray container runs ``ulimit -n 65536; ray start ...`` with ``rayStartParams`` plus what
  KubeRay derives from the container's limits when the params do not say: ``--num-cpus`` (CPU
  limit, rounded up), ``--memory`` (memory limit in bytes), ``--num-gpus`` (the first limit whose
  name ends in ``gpu``); workers wait for the head's GCS first (KubeRay's ``wait-gcs-ready`` init
  container) and join at ``<cluster>-head-svc:6379``;
- a memory ``emptyDir`` at ``/dev/shm`` for Ray's object store;
- the env KubeRay adds (``RAY_CLUSTER_NAME``, ``RAY_PORT``, ``RAY_ADDRESS``, ``RAY_IP``/``FQ_RAY_IP``
  on workers, ...);
- KubeRay submits the job once the cluster is ``Ready`` (every pod up); the Ray job API then runs
  the entrypoint as a shell command on the head with ``RAY_ADDRESS`` set.

What differs: no submitter pod, no dashboard and no ``ray job submit`` (the test's Ray has no
dashboard): the head pod itself waits for all nodes to join and runs the entrypoint, which is
where the job API would run it; the head pod ends with the entrypoint, and the workload with it.
"""

from __future__ import annotations

import copy
import math
import shlex
import uuid
from typing import Any

from .model import Group, PodPlan, Workload

PORT = 6379
NAME_KEY = "ray.io/cluster"  # the one clusterSelector key KubeRay reads: the cluster's name
VALUED_BOOLEANS = ("log-color", "include-dashboard")
READY = (
    "import ray, sys, time\n"
    "ray.init(logging_level='ERROR')\n"
    "deadline = time.time() + 300\n"
    "while sum(n['Alive'] for n in ray.nodes()) < int(sys.argv[1]):\n"
    "    if time.time() > deadline:\n"
    "        sys.exit('the cluster did not become ready')\n"
    "    time.sleep(0.5)\n"
)


def _suffix(seed: str) -> str:
    return uuid.uuid5(uuid.NAMESPACE_DNS, seed).hex[:5]


def _cpu(value: Any) -> int:
    text = str(value)
    cores = float(text[:-1]) / 1000 if text.endswith("m") else float(text)
    return math.ceil(cores)


def _bytes(value: Any) -> int:
    text = str(value)
    units = {"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40, "k": 10**3, "M": 10**6, "G": 10**9}
    for unit, factor in units.items():
        if text.endswith(unit):
            return int(float(text[: -len(unit)]) * factor)
    return int(float(text))


def start_params(params: dict[str, Any], container: dict[str, Any]) -> dict[str, str]:
    """rayStartParams with what KubeRay derives from the Ray container's limits."""
    out = {str(k): str(v) for k, v in (params or {}).items()}
    limits = (container.get("resources") or {}).get("limits") or {}
    if "num-cpus" not in out and limits.get("cpu"):
        out["num-cpus"] = str(_cpu(limits["cpu"]))
    if "memory" not in out and limits.get("memory"):
        out["memory"] = str(_bytes(limits["memory"]))
    if "num-gpus" not in out:
        for key, value in limits.items():
            if str(key).endswith("gpu") and int(value):
                out["num-gpus"] = str(int(value))
                break
    return out


def _flags(params: dict[str, str]) -> str:
    words = []
    for key, value in params.items():
        if value.lower() in ("true", "false") and key not in VALUED_BOOLEANS:
            if value.lower() == "true":
                words.append(f"--{key}")
        else:
            words.append(f"--{key}={value}")
    return " ".join(shlex.quote(w) for w in words)


def _ray_pod(
    name: str,
    cluster: str,
    namespace: str,
    template: dict[str, Any],
    group: str,
    index: int,
    env: dict[str, str],
    script: str,
    dns: tuple[str, ...] = (),
) -> PodPlan:
    spec = copy.deepcopy(template["spec"])
    container = spec["containers"][0]
    container["command"] = ["/bin/bash", "-lc", "--"]
    container["args"] = [script]
    # KubeRay's object store volume
    spec.setdefault("volumes", []).append({"name": "shared-mem", "emptyDir": {"medium": "Memory"}})
    container.setdefault("volumeMounts", []).append({"name": "shared-mem", "mountPath": "/dev/shm"})
    labels = dict((template.get("metadata") or {}).get("labels") or {})
    labels.update({"ray.io/cluster": cluster, "ray.io/group": group, "ray.io/is-ray-node": "yes"})
    labels["ray.io/node-type"] = "head" if group == "headgroup" else "worker"
    return PodPlan(
        name=name,
        hostname=name,
        namespace=namespace,
        spec=spec,
        labels=labels,
        role="head" if group == "headgroup" else group,
        index=index,
        operator_env={"RAY_CLUSTER_NAME": cluster, "RAY_CLOUD_INSTANCE_ID": name, "RAY_NODE_TYPE_NAME": group,
                      "RAY_PORT": str(PORT), "RAY_USAGE_STATS_KUBERAY_IN_USE": "1", **env,
                      # not KubeRay's: the runner's cluster DNS is a hosts file, which gRPC's own
                      # resolver (c-ares, asking DNS servers) does not read; the system's does
                      "GRPC_DNS_RESOLVER": "native"},
        dns_names=(name, *dns),
    )  # fmt: skip


def cluster_pods(cluster: str, namespace: str, spec: dict[str, Any], entrypoint: str | None) -> list[Group]:
    """The cluster's pods; with an entrypoint, the head runs it once every node has joined."""
    service = f"{cluster}-head-svc"
    fqdn = f"{service}.{namespace}.svc.cluster.local"
    head_spec = spec["headGroupSpec"]
    head_container = head_spec["template"]["spec"]["containers"][0]
    head_params = start_params(head_spec.get("rayStartParams") or {}, head_container)
    workers = spec.get("workerGroupSpecs") or []
    nodes = 1 + sum(int(w.get("replicas", 1)) for w in workers)
    head_start = f"ray start --head --port={PORT} {_flags(head_params)}"
    if entrypoint is None:
        head_script = f"ulimit -n 65536; {head_start} --block"
    else:
        head_script = "\n".join(
            [
                f"ulimit -n 65536; {head_start} || exit 1",
                f"python3 -c {shlex.quote(READY)} {nodes} || exit 1",
                f'RAY_ADDRESS="$(hostname -i):{PORT}" /bin/bash -c {shlex.quote(entrypoint)}',
            ]
        )
    head_name = f"{cluster}-head-{_suffix(cluster + 'head')}"
    head = _ray_pod(
        head_name, cluster, namespace, head_spec["template"], "headgroup", 0,
        {"RAY_ADDRESS": f"127.0.0.1:{PORT}"}, head_script, (service, fqdn),
    )  # fmt: skip
    groups = [Group(f"{cluster}-head", [head], 1, 0, role="head")]
    index = 1
    for worker in workers:
        group = str(worker.get("groupName", "workergroup"))
        container = worker["template"]["spec"]["containers"][0]
        params = start_params(worker.get("rayStartParams") or {}, container)
        script = (
            # (this Ray's health-check may hang when the GCS was not up yet: each try is bounded)
            f"until timeout 10 ray health-check --address {fqdn}:{PORT} >/dev/null 2>&1; do sleep 1; done\n"
            f"ulimit -n 65536; ray start --address={fqdn}:{PORT} --block {_flags(params)}"
        )
        pods = []
        for i in range(int(worker.get("replicas", 1))):
            name = f"{cluster}-{group}-worker-{_suffix(f'{cluster}{group}{i}')}"
            env = {"RAY_ADDRESS": f"{fqdn}:{PORT}", "RAY_IP": service, "FQ_RAY_IP": fqdn}
            pods.append(_ray_pod(name, cluster, namespace, worker["template"], group, index, env, script))
            index += 1
        groups.append(Group(f"{cluster}-{group}", pods, len(pods), 0, role=group))
    return groups


def rayjob(doc: dict[str, Any], docs: list[dict[str, Any]]) -> Workload:
    meta = doc.get("metadata") or {}
    name, namespace = str(meta["name"]), str(meta.get("namespace") or "default")
    spec = doc["spec"]
    selector = spec.get("clusterSelector") or {}
    if selector:
        wanted = selector.get(NAME_KEY)
        found = [
            d for d in docs
            if d.get("kind") == "RayCluster" and (d.get("metadata") or {}).get("name") == wanted
            and str((d.get("metadata") or {}).get("namespace") or "default") == namespace
        ]  # fmt: skip
        if wanted is None or len(found) != 1:
            raise ValueError(f"RayJob {name}: clusterSelector {selector} names no RayCluster here")
        cluster, cluster_spec = str(wanted), found[0]["spec"]
    else:
        cluster, cluster_spec = f"{name}-{_suffix(name)}", spec["rayClusterSpec"]
    groups = cluster_pods(cluster, namespace, cluster_spec, str(spec["entrypoint"]))
    return Workload("RayJob", name, groups, gang=True, success="head")


__all__ = ["cluster_pods", "rayjob", "start_params"]
