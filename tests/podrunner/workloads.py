"""The pods a controller creates for a workload object: names, host names, labels, injected env."""

from __future__ import annotations

import copy
import os
import shutil
import subprocess
import tempfile
import uuid
from typing import Any

from . import lws, ray
from .model import Group, PodPlan, Workload

CLUSTER_DOMAIN = "svc.cluster.local"
KINDS = {
    ("v1", "Pod"),
    ("kubeflow.org/v1", "MPIJob"),  # refused with the reason (plan)
    ("sagemaker.amazonaws.com/v1", "HyperPodPyTorchJob"),  # refused with the reason (plan)
    ("trainer.kubeflow.org/v1alpha1", "TrainJob"),
    ("kubeflow.org/v2beta1", "MPIJob"),
    ("batch/v1", "Job"),
    ("batch/v1", "CronJob"),
    ("jobset.x-k8s.io/v1alpha2", "JobSet"),
    ("kubeflow.org/v1", "PyTorchJob"),
    ("batch.volcano.sh/v1alpha1", "Job"),
    ("ray.io/v1", "RayJob"),  # its RayCluster, own or selected, is part of it (podrunner/ray.py)
    (lws.API, lws.KIND),
}


class Unsupported(ValueError):
    pass


def is_workload(doc: dict[str, Any]) -> bool:
    return (doc.get("apiVersion"), doc.get("kind")) in KINDS


def _meta(doc: dict[str, Any]) -> tuple[str, str]:
    meta = doc.get("metadata") or {}
    return str(meta["name"]), str(meta.get("namespace") or "default")


def _template_meta(template: dict[str, Any]) -> tuple[dict[str, str], dict[str, str]]:
    meta = template.get("metadata") or {}
    return dict(meta.get("labels") or {}), dict(meta.get("annotations") or {})


def _dns(hostname: str, subdomain: str | None, namespace: str) -> tuple[str, ...]:
    if not subdomain:
        return ()
    full = f"{hostname}.{subdomain}.{namespace}.{CLUSTER_DOMAIN}"
    return (full, f"{hostname}.{subdomain}.{namespace}.svc", f"{hostname}.{subdomain}")


def _job_pods(
    job_name: str,
    namespace: str,
    spec: dict[str, Any],
    uid: str,
    first_index: int,
    extra_labels: dict[str, str] | None = None,
    hostname_prefix: str | None = None,
) -> tuple[list[PodPlan], bool]:
    """The pods of one batch/v1 Job; also whether it is Indexed."""
    template = spec["template"]
    labels, annotations = _template_meta(template)
    completions = int(spec.get("completions", spec.get("parallelism", 1)) or 1)
    indexed = spec.get("completionMode") == "Indexed"
    pod_spec = template["spec"]
    subdomain = pod_spec.get("subdomain")
    pods: list[PodPlan] = []
    for i in range(completions):
        lab = {
            **labels,
            **(extra_labels or {}),
            "batch.kubernetes.io/controller-uid": uid,
            "batch.kubernetes.io/job-name": job_name,
            "controller-uid": uid,
            "job-name": job_name,
        }
        ann = dict(annotations)
        if indexed:
            lab["batch.kubernetes.io/job-completion-index"] = str(i)
            ann["batch.kubernetes.io/job-completion-index"] = str(i)
            hostname = f"{hostname_prefix or job_name}-{i}"
        else:
            hostname = f"{job_name}-{uuid.uuid4().hex[:5]}"
        hostname = pod_spec.get("hostname") or hostname
        env = {"JOB_COMPLETION_INDEX": str(i)} if indexed else {}
        pods.append(
            PodPlan(
                name=f"{hostname}-{uuid.uuid4().hex[:5]}" if indexed else hostname,
                hostname=hostname[:63],
                namespace=namespace,
                spec=copy.deepcopy(pod_spec),
                labels=lab,
                annotations=ann,
                subdomain=subdomain,
                index=first_index + i,
                completion_index=i if indexed else None,
                operator_env=env,
                uid=uid,
                dns_names=_dns(hostname, subdomain, namespace),
            )
        )
    return pods, indexed


# the kubelet restarts a bare pod's failed containers in place until they succeed (OnFailure): the
# runner's timeout ends such a pod
_IN_PLACE_RESTARTS = 10**6


def bare_pod(doc: dict[str, Any]) -> Workload:
    """A Pod no controller owns: itself, its host name its own name; nothing recreates it."""
    name, namespace = _meta(doc)
    spec = doc.get("spec") or {}
    policy = spec.get("restartPolicy", "Always")
    if policy == "Always":
        raise Unsupported(
            f"Pod {name} has restartPolicy Always: the kubelet restarts it even when it succeeds"
        )
    labels = dict((doc.get("metadata") or {}).get("labels") or {})
    annotations = dict((doc.get("metadata") or {}).get("annotations") or {})
    hostname = str(spec.get("hostname") or name)[:63]
    subdomain = spec.get("subdomain")
    pod = PodPlan(
        name=name,
        hostname=hostname,
        namespace=namespace,
        spec=copy.deepcopy(spec),
        labels=labels,
        annotations=annotations,
        subdomain=subdomain,
        uid=str(uuid.uuid4()),
        dns_names=_dns(hostname, subdomain, namespace),
    )
    limit = _IN_PLACE_RESTARTS if policy == "OnFailure" else 0
    return Workload("Pod", name, [Group(name, [pod], 1, limit)], gang=False)


def batch_job(doc: dict[str, Any], spec: dict[str, Any] | None = None) -> Workload:
    name, namespace = _meta(doc)
    spec = spec if spec is not None else doc["spec"]
    uid = str(uuid.uuid4())
    pods, _ = _job_pods(name, namespace, spec, uid, 0)
    per_index = "backoffLimitPerIndex" in spec
    limit = int(spec.get("backoffLimitPerIndex", spec.get("backoffLimit", 6)))
    parallelism = int(spec.get("parallelism", 1) or 1)
    group = Group(name, pods, parallelism, limit, per_index)
    return Workload("Job", name, [group], gang=False)


def cron_job(doc: dict[str, Any]) -> Workload:
    name, namespace = _meta(doc)
    job_name = f"{name}-{uuid.uuid4().int % 10**8:08d}"
    template = doc["spec"]["jobTemplate"]
    job_doc = {"metadata": {"name": job_name, "namespace": namespace}, "spec": template["spec"]}
    workload = batch_job(job_doc)
    workload.kind = "CronJob"
    return workload


JOBSET = "jobset.sigs.k8s.io/"


def jobset(doc: dict[str, Any]) -> Workload:
    name, namespace = _meta(doc)
    spec = doc["spec"]
    network = spec.get("network") or {}
    dns = bool(network.get("enableDNSHostnames", True))
    subdomain = network.get("subdomain") or name
    js_uid = str(uuid.uuid4())
    groups: list[Group] = []
    index = 0
    global_index = 0
    for rjob in spec["replicatedJobs"]:
        rname = rjob["name"]
        replicas = int(rjob.get("replicas", 1))
        job_spec = copy.deepcopy(rjob["template"]["spec"])
        if dns:
            job_spec["completionMode"] = "Indexed"
            job_spec["template"].setdefault("spec", {})["subdomain"] = subdomain
        depends = tuple(d["name"] for d in rjob.get("dependsOn") or ())
        for j in range(replicas):
            job_name = f"{name}-{rname}-{j}"
            extra = {
                f"{JOBSET}jobset-name": name,
                f"{JOBSET}replicatedjob-name": rname,
                f"{JOBSET}replicatedjob-replicas": str(replicas),
                f"{JOBSET}job-index": str(j),
                f"{JOBSET}job-global-index": str(global_index),
                f"{JOBSET}restart-attempt": "0",
                f"{JOBSET}jobset-uid": js_uid,
                f"{JOBSET}job-key": uuid.uuid5(uuid.NAMESPACE_DNS, f"{namespace}/{job_name}").hex,
            }
            pods, _ = _job_pods(job_name, namespace, job_spec, str(uuid.uuid4()), index, extra)
            for p in pods:
                p.annotations.update(extra)  # JobSet puts its keys on both
                p.role = rname
            index += len(pods)
            global_index += 1
            limit = int(job_spec.get("backoffLimit", 6))
            parallelism = int(job_spec.get("parallelism", 1) or 1)
            groups.append(Group(job_name, pods, parallelism, limit, depends_on=depends, role=rname))
    restarts = int((spec.get("failurePolicy") or {}).get("maxRestarts", 0))
    return Workload("JobSet", name, groups, gang=True, restarts=restarts)


# Kubeflow Trainer's torch-distributed ClusterTrainingRuntime, as its manifests install it
# (manifests/base/runtimes/torch_distributed.yaml): one replicated job "node" of a "node" container,
# torchrun's PET_* values from its Torch plugin (pkg/runtime/framework/plugins/torch)
TRAINER_RUNTIMES = {"torch-distributed": {"numNodes": 1, "numProcPerNode": "auto"}}
TRAINER_PORT = 29500
_COMPLETION_INDEX = "metadata.annotations['batch.kubernetes.io/job-completion-index']"


def _trainer_nproc(wanted: Any, resources: dict[str, Any] | None) -> str:
    """The Torch plugin's PET_NPROC_PER_NODE: a number as given; ``auto`` stays auto with a GPU
    among the node's resources and is its CPUs (at least 1) without one."""
    if str(wanted) != "auto" or resources is None:
        return str(wanted)
    for table in (resources.get("limits"), resources.get("requests")):
        if table and not any("gpu" in str(name).lower() for name in table):
            cpu = str(table.get("cpu", "1"))
            cores = float(cpu[:-1]) / 1000 if cpu.endswith("m") else float(cpu)
            return str(max(1, int(cores)))
        if table:
            return "auto"
    return "1"


def trainjob(doc: dict[str, Any]) -> Workload:
    """A TrainJob on the torch-distributed runtime: the JobSet the Trainer makes of it, the trainer's
    image, command, env and resources in each node's container, with the Torch plugin's env."""
    name, namespace = _meta(doc)
    spec = doc.get("spec") or {}
    runtime_name = str((spec.get("runtimeRef") or {}).get("name"))
    if runtime_name not in TRAINER_RUNTIMES:
        raise Unsupported(f"TrainJob {name}: runtime {runtime_name!r} is not one the runner knows")
    runtime = TRAINER_RUNTIMES[runtime_name]
    trainer = spec.get("trainer") or {}
    nodes = int(trainer.get("numNodes") or runtime["numNodes"])
    container: dict[str, Any] = {"name": "node", "image": trainer.get("image", "")}
    for key in ("command", "args"):
        if trainer.get(key):
            container[key] = list(trainer[key])
    if trainer.get("resourcesPerNode"):
        container["resources"] = copy.deepcopy(trainer["resourcesPerNode"])
    nproc = _trainer_nproc(
        trainer.get("numProcPerNode", runtime["numProcPerNode"]), trainer.get("resourcesPerNode")
    )
    container["env"] = [
        *copy.deepcopy(trainer.get("env") or []),
        {"name": "PET_NNODES", "value": str(nodes)},
        {"name": "PET_NPROC_PER_NODE", "value": nproc},
        {"name": "PET_NODE_RANK", "valueFrom": {"fieldRef": {"fieldPath": _COMPLETION_INDEX}}},
        {"name": "PET_MASTER_ADDR", "value": f"{name}-node-0-0.{name}"},
        {"name": "PET_MASTER_PORT", "value": str(TRAINER_PORT)},
    ]
    container["ports"] = [{"containerPort": TRAINER_PORT}]
    labels = {"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}
    job_spec = {
        "parallelism": nodes,
        "completions": nodes,
        "backoffLimit": 0,
        "template": {
            "metadata": {"labels": labels},
            "spec": {"restartPolicy": "Never", "containers": [container]},
        },
    }
    jobset_doc = {
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"replicatedJobs": [{"name": "node", "replicas": 1, "template": {"spec": job_spec}}]},
    }
    workload = jobset(jobset_doc)
    workload.kind = "TrainJob"
    return workload


PYTORCH_PORT = "23456"


def _pytorch_port(replicas: dict[str, Any]) -> str:
    """The operator's MASTER_PORT: the Master's container port named pytorchjob-port, else its default."""
    master = replicas.get("Master") or replicas.get("Worker") or {}
    for container in master.get("template", {}).get("spec", {}).get("containers") or ():
        if container.get("name") == "pytorch":
            for port in container.get("ports") or ():
                if port.get("name") == "pytorchjob-port":
                    return str(port["containerPort"])
    return PYTORCH_PORT


def _pytorch_env(spec: dict[str, Any], name: str, port: str, total: int, rank: int) -> dict[str, str]:
    """What training-operator v1.7+ sets in a pod (pkg/controller.v1/pytorch/envvar.go, elastic.go, after
    its defaulting): the Master's address, RANK, WORLD_SIZE (pods times nprocPerNode, 1 when that is not a
    number) and the PET_* node rank and processes only where the job has a Master; the elastic rendezvous
    on worker 0 and PET_NNODES min:max with an elasticPolicy, else PET_NNODES the pod count."""
    replicas = spec["pytorchReplicaSpecs"]
    nproc = str(spec.get("nprocPerNode") or "auto")
    env: dict[str, str] = {}
    if "Master" in replicas:
        master = f"{name}-master-0"
        env |= {
            "MASTER_PORT": port,
            "MASTER_ADDR": master,
            "PET_MASTER_PORT": port,
            "PET_MASTER_ADDR": master,
        }
        world = total * (int(nproc) if nproc.isdigit() else 1)
        env |= {"WORLD_SIZE": str(world), "RANK": str(rank), "PET_NPROC_PER_NODE": nproc}
        env["PET_NODE_RANK"] = str(rank)
    elastic = spec.get("elasticPolicy")
    if elastic is None:
        env["PET_NNODES"] = str(total)
        return env
    workers = int(replicas.get("Worker", {}).get("replicas", 1))
    low, high = elastic.get("minReplicas"), elastic.get("maxReplicas")
    low, high = low or high or workers, high or low or workers
    env["PET_RDZV_ENDPOINT"] = f"{name}-worker-0:{elastic.get('rdzvPort') or port}"
    env["PET_RDZV_BACKEND"] = str(elastic.get("rdzvBackend") or "c10d")
    env["PET_NNODES"] = f"{low}:{high}"
    if elastic.get("maxRestarts") is not None:
        env["PET_MAX_RESTARTS"] = str(elastic["maxRestarts"])
    return env


def pytorchjob(doc: dict[str, Any]) -> Workload:
    """Master and Workers, with the env the training operator sets in the ``pytorch`` container."""
    name, namespace = _meta(doc)
    spec = doc["spec"]
    replicas = spec["pytorchReplicaSpecs"]
    uid = str(uuid.uuid4())
    total = sum(int(r.get("replicas", 1)) for r in replicas.values())
    port = _pytorch_port(replicas)
    groups: list[Group] = []
    index = 0
    for role in ("Master", "Worker"):
        if role not in replicas:
            continue
        rspec = replicas[role]
        labels, annotations = _template_meta(rspec["template"])
        pods: list[PodPlan] = []
        for i in range(int(rspec.get("replicas", 1))):
            pod_name = f"{name}-{role.lower()}-{i}"
            rank = index
            env = {"PYTHONUNBUFFERED": "1", **_pytorch_env(spec, name, port, total, rank)}
            lab = {
                **labels,
                "training.kubeflow.org/job-name": name,
                "training.kubeflow.org/operator-name": "pytorchjob-controller",
                "training.kubeflow.org/replica-type": role.lower(),
                "training.kubeflow.org/replica-index": str(i),
            }
            if role == "Master":
                lab["training.kubeflow.org/job-role"] = "master"
            pods.append(
                PodPlan(
                    name=pod_name,
                    hostname=pod_name,
                    namespace=namespace,
                    spec=copy.deepcopy(rspec["template"]["spec"]),
                    labels=lab,
                    annotations=dict(annotations),
                    role=role,
                    index=index,
                    operator_env=env,
                    uid=uid,
                    # the operator's per-replica Service has the pod's name
                    dns_names=(pod_name, f"{pod_name}.{namespace}.{CLUSTER_DOMAIN}"),
                )
            )
            index += 1
        groups.append(Group(f"{name}-{role.lower()}", pods, len(pods), 0, role=role))
    run_policy = spec.get("runPolicy") or {}
    restarts = int(run_policy.get("backoffLimit", 0))
    # the operator's default cleanPodPolicy is None: once the Master succeeded, Workers still running
    # run to their end (a real torchrun Master ends only with them; stand-ins do not wait)
    keep = run_policy.get("cleanPodPolicy", "None") == "None"
    return Workload(
        "PyTorchJob", name, groups, gang=True, restarts=restarts, success="Master", keep_running=keep
    )


VOLCANO_HOSTS_AT = "/etc/volcano"


def _volcano_names(name: str, task: dict[str, Any]) -> list[tuple[str, str]]:
    """(host name, subdomain) of a task's pods as Volcano's plugins list them: a template's own
    hostname stands for one pod."""
    spec = task["template"].get("spec") or {}
    subdomain = str(spec.get("subdomain") or name)
    if spec.get("hostname"):
        return [(str(spec["hostname"]), subdomain)]
    return [(f"{name}-{task['name']}-{i}", subdomain) for i in range(int(task.get("replicas", 1)))]


def _volcano_hosts(name: str, tasks: list[dict[str, Any]]) -> dict[str, str]:
    """Volcano's svc plugin ConfigMap (pkg/controllers/job/plugins/svc): per task the pods'
    ``host.subdomain`` names, one a line in ``<task>.host`` and comma-joined in ``VC_<TASK>_HOSTS``,
    and their count in ``VC_<TASK>_NUM``."""
    data: dict[str, str] = {}
    for task in tasks:
        hosts = [f"{host}.{subdomain}" for host, subdomain in _volcano_names(name, task)]
        key = str(task["name"]).replace("-", "_")
        data[f"{key}.host"] = "\n".join(hosts)
        data[f"VC_{key.upper()}_HOSTS"] = ",".join(hosts)
        data[f"VC_{key.upper()}_NUM"] = str(len(hosts))
    return data


def _volcano_ssh_config(name: str, tasks: list[dict[str, Any]]) -> str:
    """The ssh plugin's client config: no host key checks, and each pod's short name to its FQDN."""
    lines = ["StrictHostKeyChecking no", "UserKnownHostsFile /dev/null"]
    for task in tasks:
        for host, subdomain in _volcano_names(name, task):
            lines += [f"Host {host}", f"  HostName {host}.{subdomain}"]
    return "\n".join(lines) + "\n"


def _volcano_plugins(pod: PodPlan, name: str, plugins: dict[str, Any], data: dict[str, str]) -> None:
    """What the svc and ssh plugins add to every container of a pod: the hosts ConfigMap at
    /etc/volcano and its variables, the job's ssh keys and config at /root/.ssh."""
    containers = pod.spec.get("containers") or []
    if "svc" in plugins:
        volume = f"{name}-svc"
        pod.spec.setdefault("volumes", []).append({"name": volume, "configMap": {"name": volume}})
        for c in containers:
            c.setdefault("volumeMounts", []).append({"name": volume, "mountPath": VOLCANO_HOSTS_AT})
            c.setdefault("env", []).extend(
                {"name": key, "valueFrom": {"configMapKeyRef": {"name": volume, "key": key}}}
                for key in data
                if key.startswith("VC_")
            )
    if "ssh" in plugins:
        volume = f"{name}-ssh"
        items = [("id_rsa", "id_rsa"), ("id_rsa.pub", "id_rsa.pub"), ("id_rsa.pub", "authorized_keys")]
        secret = {
            "secretName": volume,
            "defaultMode": 0o600,
            "items": [{"key": k, "path": f".ssh/{p}"} for k, p in [*items, ("config", "config")]],
        }
        pod.spec.setdefault("volumes", []).append({"name": volume, "secret": secret})
        for c in containers:
            c.setdefault("volumeMounts", []).append(
                {"name": volume, "mountPath": "/root/.ssh", "subPath": ".ssh"}
            )


def volcano_job(doc: dict[str, Any]) -> Workload:
    """The pods of a Volcano Job, with what its env, svc and ssh plugins add."""
    name, namespace = _meta(doc)
    spec = doc["spec"]
    plugins = spec.get("plugins") or {}
    uid = str(uuid.uuid4())
    hosts = _volcano_hosts(name, spec["tasks"])
    objects: dict[tuple[str, str], dict[str, Any]] = {}
    if "svc" in plugins:
        objects[("ConfigMap", f"{name}-svc")] = {"data": hosts}
    if "ssh" in plugins:
        if shutil.which("ssh-keygen") is None:
            raise Unsupported("Volcano's ssh plugin needs ssh-keygen (openssh-client) for its keys")
        private, public = _ssh_keys()
        config = _volcano_ssh_config(name, spec["tasks"])
        objects[("Secret", f"{name}-ssh")] = {
            "stringData": {"id_rsa": private, "id_rsa.pub": public, "config": config}
        }
    groups: list[Group] = []
    index = 0
    for task in spec["tasks"]:
        tname = task["name"]
        labels, annotations = _template_meta(task["template"])
        pods: list[PodPlan] = []
        for i in range(int(task.get("replicas", 1))):
            pod_name = f"{name}-{tname}-{i}"
            pod_spec = copy.deepcopy(task["template"]["spec"])
            subdomain = name if "svc" in plugins else pod_spec.get("subdomain")
            env = {"VC_TASK_INDEX": str(i), "VK_TASK_INDEX": str(i)} if "env" in plugins else {}
            pod = PodPlan(
                name=pod_name,
                hostname=pod_name,
                namespace=namespace,
                spec=pod_spec,
                labels={**labels, "volcano.sh/job-name": name, "volcano.sh/task-spec": tname},
                annotations={
                    **annotations,
                    "volcano.sh/job-name": name,
                    "volcano.sh/task-spec": tname,
                    "volcano.sh/task-index": str(i),
                },
                subdomain=subdomain,
                role=tname,
                index=index,
                operator_env=env,
                uid=uid,
                dns_names=_dns(pod_name, subdomain, namespace),
            )
            _volcano_plugins(pod, name, plugins, hosts)
            pods.append(pod)
            index += 1
        groups.append(Group(f"{name}-{tname}", pods, len(pods), 0, role=tname))
    actions = {p.get("event"): p.get("action") for p in spec.get("policies") or ()}
    restarts = int(spec.get("maxRetry", 3)) if actions.get("PodFailed") == "RestartJob" else 0
    # a task whose completion completes the job (an MPI master beside workers serving sshd)
    ending = [
        t["name"]
        for t in spec["tasks"]
        if any(
            (p.get("event"), p.get("action")) == ("TaskCompleted", "CompleteJob")
            for p in t.get("policies") or ()
        )
    ]
    success = ending[0] if len(ending) == 1 else "all"
    return Workload(
        "VolcanoJob", name, groups, gang=True, restarts=restarts, success=success, objects=objects
    )


def _ssh_keys() -> tuple[str, str]:
    with tempfile.TemporaryDirectory() as tmp:
        key = os.path.join(tmp, "id")
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", key], check=True, timeout=30)
        with open(key) as private, open(key + ".pub") as public:
            return private.read(), public.read()


def _add_volume(pod: PodPlan, volume: dict[str, Any], mount_path: str) -> None:
    pod.spec.setdefault("volumes", []).append(volume)
    pod.spec["containers"][0].setdefault("volumeMounts", []).append(
        {"name": volume["name"], "mountPath": mount_path}
    )


def mpijob(doc: dict[str, Any]) -> Workload:
    """Launcher and Workers as the MPI operator (v2beta1, Open MPI) makes them: hostfile, ssh keys, env."""
    if shutil.which("ssh-keygen") is None:
        raise Unsupported("an MPIJob needs ssh-keygen (openssh-client) for its keys")
    name, namespace = _meta(doc)
    spec = doc["spec"]
    slots = int(spec.get("slotsPerWorker", 1))
    replicas = spec["mpiReplicaSpecs"]
    workers = int(replicas["Worker"].get("replicas", 1))
    uid = str(uuid.uuid4())
    hostfile = "".join(f"{name}-worker-{i}.{name}.{namespace}.svc slots={slots}\n" for i in range(workers))
    private, public = _ssh_keys()
    objects = {
        ("ConfigMap", f"{name}-config"): {"data": {"hostfile": hostfile}},
        ("Secret", f"{name}-ssh"): {"stringData": {"ssh-privatekey": private, "ssh-publickey": public}},
    }
    ssh = {
        "name": "ssh-auth",
        "secret": {
            "secretName": f"{name}-ssh",
            "defaultMode": 0o600,
            "items": [
                {"key": "ssh-privatekey", "path": "id_rsa"},
                {"key": "ssh-publickey", "path": "id_rsa.pub"},
                {"key": "ssh-publickey", "path": "authorized_keys"},
            ],
        },
    }
    groups: list[Group] = []
    index = 0
    for role in ("Launcher", "Worker"):
        rspec = replicas[role]
        labels, annotations = _template_meta(rspec["template"])
        pods: list[PodPlan] = []
        for i in range(int(rspec.get("replicas", 1))):
            pod_name = f"{name}-launcher" if role == "Launcher" else f"{name}-worker-{i}"
            pod_spec = copy.deepcopy(rspec["template"]["spec"])
            subdomain = name if role == "Worker" else None
            env = {"K_MPI_JOB_ROLE": role.lower()}
            pod = PodPlan(
                name=pod_name,
                hostname=pod_name,
                namespace=namespace,
                spec=pod_spec,
                labels={
                    **labels,
                    "training.kubeflow.org/job-name": name,
                    "training.kubeflow.org/job-role": role.lower(),
                },
                annotations=dict(annotations),
                subdomain=subdomain,
                role=role,
                index=index,
                operator_env=env,
                uid=uid,
                dns_names=_dns(pod_name, subdomain, namespace),
                node=i if role == "Worker" else -1,  # the ranks run on the Workers
            )
            _add_volume(pod, copy.deepcopy(ssh), "/root/.ssh")
            if role == "Launcher":
                _add_volume(
                    pod, {"name": "mpi-job-config", "configMap": {"name": f"{name}-config"}}, "/etc/mpi"
                )
                env.update(
                    {
                        "OMPI_MCA_orte_keep_fqdn_hostnames": "true",
                        "OMPI_MCA_orte_default_hostfile": "/etc/mpi/hostfile",
                        "OMPI_MCA_orte_set_default_slots": str(slots),
                        # the operator's images turn host key checks off in their ssh_config
                        "OMPI_MCA_plm_rsh_args": "-o ConnectionAttempts=10 -o StrictHostKeyChecking=no "
                        "-o UserKnownHostsFile=/dev/null -o LogLevel=ERROR",
                    }
                )
            pods.append(pod)
            index += 1
        groups.append(Group(f"{name}-{role.lower()}", pods, len(pods), 0, role=role))
    restarts = int((spec.get("runPolicy") or {}).get("backoffLimit", 0))
    return Workload("MPIJob", name, groups, gang=True, restarts=restarts, success="Launcher", objects=objects)


def plan(doc: dict[str, Any], docs: list[dict[str, Any]] | None = None) -> Workload:
    """The pods of one workload; ``docs``: the other manifests (a RayJob's selected RayCluster)."""
    api, kind = doc.get("apiVersion"), doc.get("kind")
    if (api, kind) == ("ray.io/v1", "RayJob"):
        try:
            return ray.rayjob(doc, docs or [])
        except ValueError as exc:
            raise Unsupported(str(exc)) from exc
    if (api, kind) == ("v1", "Pod"):
        return bare_pod(doc)
    if kind == "TrainJob":
        return trainjob(doc)
    if (api, kind) == ("kubeflow.org/v1", "MPIJob"):
        # the training operator's v1 Launcher starts ranks by `kubectl exec` into the Workers
        # (/etc/mpi/kubexec.sh as Open MPI's rsh agent), which pods of the runner cannot do
        raise Unsupported("a kubeflow.org/v1 MPIJob's Launcher reaches its Workers by kubectl exec")
    if kind == "HyperPodPyTorchJob":
        # what the HyperPod training operator and hyperpodrun give the pods is not published
        raise Unsupported("the HyperPod training operator's pod environment is not known to the runner")
    if kind == "MPIJob":
        return mpijob(doc)
    if (api, kind) == ("batch/v1", "Job"):
        return batch_job(doc)
    if (api, kind) == ("batch/v1", "CronJob"):
        return cron_job(doc)
    if kind == "JobSet":
        return jobset(doc)
    if kind == "PyTorchJob":
        return pytorchjob(doc)
    if (api, kind) == ("batch.volcano.sh/v1alpha1", "Job"):
        return volcano_job(doc)
    if (api, kind) == (lws.API, lws.KIND):
        return lws.leaderworkerset(doc)
    raise Unsupported(f"{api} {kind} is not a workload the runner knows")


def fresh_names(pod: PodPlan) -> None:
    """A new pod for a retry (restartPolicy Never): same host name, new pod name."""
    if pod.name != pod.hostname:
        pod.name = f"{pod.hostname}-{uuid.uuid4().hex[:5]}"


__all__ = ["Unsupported", "fresh_names", "is_workload", "plan"]
