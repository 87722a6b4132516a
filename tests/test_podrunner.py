"""The pod runner itself: host names, DNS, volumes, the downward API, retries, late peers.

Hand-written manifests, each run as local pods (see tests/podrunner). The
tests skip, with the reason, where pods cannot run (not root, no unshare);
in CI they fail instead.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from podrunner import PodRunner, RunnerError
from podrunner.testing import require_pods, run_together
from podrunner.testing import run as run_pods

CONFIG = """
apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
data: {greeting: hello, "run.sh": "echo from-configmap\\n"}
---
apiVersion: v1
kind: Secret
metadata: {name: token}
data: {value: c2VjcmV0LXZhbHVl}
"""


def indexed_job(command: str, *, completions: int = 2, extra: str = "", backoff: int = 0) -> str:
    return f"""
apiVersion: batch/v1
kind: Job
metadata: {{name: demo, namespace: team}}
spec:
  completions: {completions}
  parallelism: {completions}
  completionMode: Indexed
  backoffLimit: {backoff}
  template:
    metadata:
      labels: {{app: demo}}
      annotations: {{note: "a b"}}
    spec:
      subdomain: demo
      restartPolicy: Never
      containers:
        - name: main
          image: ignored
          command: ["/bin/bash", "-c", {json.dumps(command)}]
{extra}
"""


@pytest.fixture(autouse=True)
def _pods() -> None:
    require_pods()


def test_every_pod_has_its_own_host_name_address_and_ports(tmp_path: Path) -> None:
    command = (
        "echo $(hostname) $(hostname -f) $(hostname -i) $HOSTNAME; "
        'python3 -c \'import socket; s=socket.socket(); s.bind(("0.0.0.0", 29500)); print("bound")\'; '
        "getent hosts demo-0.demo demo-1.demo | awk '{print $1, $2}' | sort -u"
    )
    result = run_pods(indexed_job(command), tmp_path)
    assert result.status == "Complete", result.describe()
    seen = {}
    for pod in result.pods:
        lines = pod.stdout.splitlines()
        host, fqdn, address, env_host = lines[0].split()
        assert host == env_host == pod.plan.hostname
        assert fqdn == f"{host}.demo.team.svc.cluster.local"
        assert address == pod.address and address.startswith("127.0.")
        assert lines[1] == "bound"  # the same port in every pod: each has its own network
        seen[host] = address
        assert {line.split()[0] for line in lines[2:]} == {p.address for p in result.pods}
    assert sorted(seen) == ["demo-0", "demo-1"] and len(set(seen.values())) == 2


def test_set_hostname_as_fqdn_puts_the_full_name_in_the_kernel(tmp_path: Path) -> None:
    text = indexed_job("hostname; hostname -s; echo $HOSTNAME", completions=1)
    text = text.replace("subdomain: demo", "subdomain: demo\n      setHostnameAsFQDN: true")
    result = run_pods(text, tmp_path)
    fqdn = "demo-0.demo.team.svc.cluster.local"
    assert result.pods[0].stdout.split() == [fqdn, "demo-0", fqdn]


def test_volumes_land_where_they_are_mounted(tmp_path: Path) -> None:
    command = (
        "cat /etc/cfg/greeting; echo; bash /opt/tools/run.sh; cat /run/secret/value; echo; "
        "grep -E ' /(scratch|dev/shm|fast) ' /proc/mounts | awk '{print $2, $3}' | sort; "
        "echo $JOB_COMPLETION_INDEX > /data/from-$JOB_COMPLETION_INDEX; "
        "ls /data | sort | tr '\\n' ' '; echo; "
        "touch /usr/written-by-pod; test -w /host/x || echo host-ro; "
        "echo $(id -un) $PWD"
    )
    extra = """          workingDir: /work/here
          volumeMounts:
            - {name: cfg, mountPath: /etc/cfg}
            - {name: tools, mountPath: /opt/tools}
            - {name: secret, mountPath: /run/secret, readOnly: true}
            - {name: data, mountPath: /data}
            - {name: scratch, mountPath: /scratch}
            - {name: fast, mountPath: /fast}
            - {name: host, mountPath: /host, readOnly: true}
      volumes:
        - {name: cfg, configMap: {name: settings, items: [{key: greeting, path: greeting}]}}
        - {name: tools, configMap: {name: settings, defaultMode: 0755}}
        - {name: secret, secret: {secretName: token}}
        - {name: data, persistentVolumeClaim: {claimName: shared-data}}
        - {name: scratch, emptyDir: {}}
        - {name: fast, emptyDir: {medium: Memory, sizeLimit: 64Mi}}
        - {name: host, hostPath: {path: /srv/models, type: Directory}}
"""
    text = CONFIG + "---" + indexed_job(command, completions=1, extra=extra)
    claim = tmp_path / "claim"
    result = run_pods(text, tmp_path / "run", claims={"shared-data": claim})
    assert result.status == "Complete", result.describe()
    lines = result.pods[0].stdout.splitlines()
    assert lines[:3] == ["hello", "from-configmap", "secret-value"]
    mounts = dict(line.split() for line in lines[3:] if line.startswith("/"))
    assert mounts["/dev/shm"] == "tmpfs" and mounts["/fast"] == "tmpfs"  # 64Mi default; medium: Memory
    assert mounts["/scratch"] != "tmpfs"  # an emptyDir on the node's disk
    assert [line.strip() for line in lines[3:] if not line.startswith("/")] == [
        "from-0",
        "host-ro",
        "root /work/here",
    ]
    assert (claim / "from-0").read_text() == "0\n"  # the claim is the test's folder
    assert (tmp_path / "run" / "hostpath" / "srv" / "models").is_dir()
    assert not Path("/usr/written-by-pod").exists()  # the image folders are copy-on-write


def test_env_from_the_downward_api_and_references(tmp_path: Path) -> None:
    extra = """          env:
            - {name: POD_NAME, valueFrom: {fieldRef: {fieldPath: metadata.name}}}
            - {name: POD_NS, valueFrom: {fieldRef: {fieldPath: metadata.namespace}}}
            - {name: POD_IP, valueFrom: {fieldRef: {fieldPath: status.podIP}}}
            - name: INDEX
              valueFrom:
                fieldRef: {fieldPath: "metadata.labels['batch.kubernetes.io/job-completion-index']"}
            - {name: NOTE, valueFrom: {fieldRef: {fieldPath: "metadata.annotations['note']"}}}
            - {name: GREETING, valueFrom: {configMapKeyRef: {name: settings, key: greeting}}}
            - {name: TOKEN, valueFrom: {secretKeyRef: {name: token, key: value}}}
            - {name: BOTH, value: "$(GREETING)-$(INDEX)-$$(INDEX)"}
"""
    command = 'echo "$POD_NAME|$POD_NS|$POD_IP|$INDEX|$JOB_COMPLETION_INDEX|$NOTE|$GREETING|$TOKEN|$BOTH"'
    result = run_pods(CONFIG + "---" + indexed_job(command, extra=extra), tmp_path)
    assert result.status == "Complete", result.describe()
    for pod in result.pods:
        i = pod.plan.completion_index
        assert pod.stdout.strip().split("|") == [
            pod.plan.name, "team", pod.address, str(i), str(i), "a b", "hello", "secret-value",
            f"hello-{i}-$(INDEX)",
        ]  # fmt: skip
        assert pod.plan.name.startswith(f"demo-{i}-")


def test_a_failing_pod_is_retried_per_backoff_limit(tmp_path: Path) -> None:
    # fails until its third attempt, counted on the shared claim
    command = "n=$(($(cat /data/n 2>/dev/null || echo 0) + 1)); echo $n > /data/n; echo try $n; [ $n -ge 3 ]"
    extra = """          volumeMounts: [{name: data, mountPath: /data}]
      volumes: [{name: data, persistentVolumeClaim: {claimName: count}}]
"""
    enough = run_pods(indexed_job(command, completions=1, extra=extra, backoff=2), tmp_path / "a")
    assert enough.status == "Complete", enough.describe()
    assert [a.rc for a in enough.pods[0].attempts] == [1, 1, 0]
    assert [a.stdout for a in enough.pods[0].attempts] == ["try 1\n", "try 2\n", "try 3\n"]
    assert len({a.pod_name for a in enough.pods[0].attempts}) == 3  # restartPolicy Never: new pods
    short = run_pods(indexed_job(command, completions=1, extra=extra, backoff=1), tmp_path / "b")
    assert short.status == "Failed"
    assert [a.rc for a in short.pods[0].attempts] == [1, 1]


def test_a_suspended_job_runs_only_when_a_kueue_queue_admits_it(tmp_path: Path) -> None:
    """suspend: true makes no pods; the runner stands for Kueue only for a workload of a queue."""
    job = indexed_job("echo ran", completions=1).replace(
        "  completions: 1\n", "  completions: 1\n  suspend: true\n"
    )
    held = run_pods(job, tmp_path / "held")
    assert held.status == "Suspended" and held.pods == []
    queued = job.replace(
        "metadata: {name: demo, namespace: team}",
        "metadata: {name: demo, namespace: team, labels: {kueue.x-k8s.io/queue-name: default}}",
    )
    admitted = run_pods(queued, tmp_path / "admitted")
    assert admitted.status == "Complete", admitted.describe()
    assert [a.stdout for a in admitted.pods[0].attempts] == ["ran\n"]
    # as a Kueue user creates it (kubectl create): a generateName, which the API server completes
    generated = run_pods(queued.replace("{name: demo,", "{generateName: demo-,"), tmp_path / "generated")
    assert generated.status == "Complete", generated.describe()
    assert generated.name.startswith("demo-") and len(generated.name) == len("demo-") + 5


JOBSET = """
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: js}
spec:
  failurePolicy: {maxRestarts: 1}
  replicatedJobs:
    - name: node
      replicas: 2
      template:
        spec:
          parallelism: 1
          completions: 1
          backoffLimit: 0
          template:
            spec:
              restartPolicy: Never
              containers:
                - name: main
                  image: ignored
                  command: ["/bin/bash", "-c"]
                  args:
                    - |
                      echo $(hostname) $INDEX $RESTART
                      [ "$RESTART" = 1 ] || [ "$INDEX" = 0 ]
                  env:
                    - name: INDEX
                      valueFrom:
                        fieldRef: {fieldPath: "metadata.labels['jobset.sigs.k8s.io/job-index']"}
                    - name: RESTART
                      valueFrom:
                        fieldRef: {fieldPath: "metadata.annotations['jobset.sigs.k8s.io/restart-attempt']"}
"""


def test_a_jobset_restarts_as_a_whole_and_names_pods_by_job_index(tmp_path: Path) -> None:
    result = run_pods(JOBSET, tmp_path)
    assert result.status == "Complete", result.describe()
    assert result.restarts == 1
    first, second = result.pods
    assert [a.stdout.split()[:2] for a in second.attempts] == [["js-node-1-0", "1"], ["js-node-1-0", "1"]]
    assert second.attempts[0].rc == 1 and second.attempts[-1].rc == 0
    assert first.attempts[-1].stdout.split() == ["js-node-0-0", "0", "1"]


def test_a_late_pods_name_resolves_only_once_it_started(tmp_path: Path) -> None:
    command = (
        'if [ "$JOB_COMPLETION_INDEX" = 0 ]; then getent hosts demo-1.demo >/dev/null && echo early; '
        "until getent hosts demo-1.demo >/dev/null; do sleep 0.2; done; echo resolved; fi"
    )
    result = run_pods(indexed_job(command), tmp_path, start_delays={1: 1.5})
    assert result.status == "Complete", result.describe()
    assert result.pods[0].stdout.split() == ["resolved"]


def test_a_pytorchjob_gets_the_operators_env(tmp_path: Path) -> None:
    text = """
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: pt}
spec:
  nprocPerNode: "2"
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          containers:
            - name: pytorch
              image: x
              command: [bash, -c]
              args: ["$(SHOW); getent hosts pt-master-0 pt-worker-0 | wc -l"]
              env: [{name: SHOW, value: "echo $RANK $MASTER_ADDR $WORLD_SIZE $PET_NNODES $(hostname)"}]
    Worker:
      replicas: 1
      template:
        spec:
          containers: [{name: pytorch, image: x, command: [bash, -c, "echo $RANK; sleep 0.5"]}]
"""
    result = run_pods(text, tmp_path)
    assert result.status == "Complete", result.describe()
    assert result.pods[0].stdout.split() == ["0", "pt-master-0", "4", "2", "pt-master-0", "2"]


def test_what_the_runner_cannot_run_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(RunnerError, match="one workload"):
        PodRunner(tmp_path).run(
            "apiVersion: serving.kserve.io/v1beta1\nkind: InferenceService\nmetadata: {name: r}\n"
        )
    # KubeRay finds a RayJob's cluster by the ray.io/cluster key alone
    selected = (
        "apiVersion: ray.io/v1\nkind: RayJob\nmetadata: {name: r}\n"
        "spec: {clusterSelector: {pool: a}, entrypoint: x}\n"
    )
    with pytest.raises(RunnerError, match="names no RayCluster"):
        PodRunner(tmp_path).run(selected)
    # kinds whose controllers do what pods here cannot, or what is not published: refused with why
    legacy = "apiVersion: kubeflow.org/v1\nkind: MPIJob\nmetadata: {name: m}\nspec: {}\n"
    with pytest.raises(RunnerError, match="kubectl exec"):
        PodRunner(tmp_path).run(legacy)
    hyperpod = "apiVersion: sagemaker.amazonaws.com/v1\nkind: HyperPodPyTorchJob\nmetadata: {name: h}\n"
    with pytest.raises(RunnerError, match="HyperPod"):
        PodRunner(tmp_path).run(hyperpod)


def test_a_jobset_starts_a_replicated_job_after_the_one_it_depends_on(tmp_path: Path) -> None:
    text = """
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: chain}
spec:
  replicatedJobs:
    - name: first
      replicas: 1
      template:
        spec:
          template:
            spec:
              containers: [{name: c, image: x, command: [bash, -c, "sleep 0.5; date +%s.%N"]}]
    - name: second
      replicas: 1
      dependsOn: [{name: first, status: Complete}]
      template:
        spec:
          template:
            spec:
              containers: [{name: c, image: x, command: [bash, -c, "date +%s.%N"]}]
"""
    result = run_pods(text, tmp_path)
    assert result.status == "Complete", result.describe()
    first, second = (float(p.stdout) for p in result.pods)
    assert second > first


def test_a_leader_worker_set_gets_the_controllers_names_labels_and_env(tmp_path: Path) -> None:
    """Pods <lws>-<group> and <lws>-<group>-<index>; the webhook's env first, so $(VAR) sees it."""
    show = (
        "echo $HOSTNAME $LWS_LEADER_ADDRESS $LWS_GROUP_SIZE $LWS_WORKER_INDEX $RANK $GROUP; "
        "sleep 0.5; getent hosts $LWS_LEADER_ADDRESS | wc -l"
    )
    text = f"""
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {{name: lw, namespace: ml}}
spec:
  replicas: 2
  leaderWorkerTemplate:
    size: 2
    workerTemplate:
      spec:
        containers:
          - name: main
            image: x
            command: [bash, -c, {json.dumps(show)}]
            env:
              - {{name: LWS_WORKER_INDEX, value: "9"}}
              - {{name: RANK, value: "$(LWS_WORKER_INDEX)"}}
              - name: GROUP
                valueFrom:
                  fieldRef: {{fieldPath: "metadata.labels['leaderworkerset.sigs.k8s.io/group-index']"}}
"""
    result = run_pods(text, tmp_path)
    assert result.status == "Complete", result.describe()
    seen = sorted(pod.stdout.split() for pod in result.pods)
    assert seen == [
        ["lw-0", "lw-0.lw.ml", "2", "0", "0", "0", "1"],
        ["lw-0-1", "lw-0.lw.ml", "2", "1", "1", "0", "1"],
        ["lw-1", "lw-1.lw.ml", "2", "0", "0", "1", "1"],
        ["lw-1-1", "lw-1.lw.ml", "2", "1", "1", "1", "1"],
    ]
    assert len({pod.address for pod in result.pods}) == 4


def test_workloads_run_together_in_one_cluster_network(tmp_path: Path) -> None:
    """Two Jobs at once: each pod resolves and reaches the other workload's pods, as in one namespace."""
    serve = (
        'python3 -c \'import socket; s=socket.socket(); s.bind(("0.0.0.0", 29500)); s.listen(); '
        "c, _ = s.accept(); print(c.recv(100).decode())'"
    )
    call = (
        "until getent hosts server-0.server >/dev/null; do sleep 0.1; done; "
        "python3 -c 'import socket, time\nfor _ in range(100):\n  try: s=socket.create_connection("
        '("server-0.server", 29500)); break\n  except OSError: time.sleep(0.1)\ns.sendall(b"hello")\''
    )
    texts = [indexed_job(command, completions=1).replace("demo", name) for name, command in
             (("server", serve), ("client", call))]  # fmt: skip
    server, client = run_together(texts, tmp_path)
    assert (server.status, client.status) == ("Complete", "Complete"), server.describe() + client.describe()
    assert server.pods[0].stdout == "hello\n"
    assert server.pods[0].address != client.pods[0].address


def test_a_bare_pod_runs_once_under_its_own_name(tmp_path: Path) -> None:
    """No controller: the pod is the manifest's, its host name its name; restartPolicy Never is one
    attempt, and Always (a pod that never ends) is refused."""
    text = """
apiVersion: v1
kind: Pod
metadata: {name: probe, namespace: infra}
spec:
  restartPolicy: Never
  containers: [{name: c, image: x, command: [bash, -c, "echo $(hostname) $HOSTNAME; exit 3"]}]
"""
    result = run_pods(text, tmp_path)
    assert result.status == "Failed", result.describe()
    (pod,) = result.pods
    assert (pod.plan.name, pod.stdout.split(), len(pod.attempts)) == ("probe", ["probe", "probe"], 1)
    with pytest.raises(RunnerError, match="restartPolicy Always"):
        PodRunner(tmp_path / "always").run(text.replace("Never", "Always"))


def test_volcanos_svc_and_ssh_plugins_give_hosts_and_keys(tmp_path: Path) -> None:
    """The svc plugin's /etc/volcano/<task>.host and VC_<TASK>_HOSTS/NUM; the ssh plugin's keys and
    config at /root/.ssh, with which the master reaches a worker's sshd by its listed name."""
    ssh = "ssh -o BatchMode=yes -o ConnectTimeout=5 $(head -n 1 /etc/volcano/worker.host) hostname"
    master = (
        "cat /etc/volcano/worker.host | tr '\\n' ' '; echo; "
        "echo $VC_WORKER_HOSTS $VC_WORKER_NUM $VC_TASK_INDEX; "
        f"for _ in $(seq 50); do {ssh} 2>/dev/null && break; sleep 0.2; done"
    )
    text = f"""
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {{name: vj, namespace: hpc}}
spec:
  minAvailable: 3
  plugins: {{ssh: [], svc: [], env: []}}
  tasks:
    - name: master
      replicas: 1
      policies: [{{event: TaskCompleted, action: CompleteJob}}]
      template:
        spec:
          containers: [{{name: m, image: x, command: [bash, -c, {json.dumps(master)}]}}]
    - name: worker
      replicas: 2
      template:
        spec:
          containers: [{{name: w, image: x, command: [/usr/sbin/sshd, -D, -e]}}]
"""
    result = run_pods(text, tmp_path, timeout=60)
    lines = result.pods[0].stdout.splitlines()
    assert lines[:2] == ["vj-worker-0.vj vj-worker-1.vj", "vj-worker-0.vj,vj-worker-1.vj 2 0"], (
        result.describe()
    )
    assert lines[2:] == ["vj-worker-0"], result.describe()


def test_a_trainjob_on_the_torch_runtime_gets_the_trainers_pods_and_env(tmp_path: Path) -> None:
    """The JobSet the Trainer makes of a TrainJob: pods <job>-node-0-<i> with the trainer's command
    and env, and the Torch plugin's PET_* (the node rank the completion index, rank 0 the master)."""
    show = (
        "echo $(hostname) $PET_NNODES $PET_NPROC_PER_NODE $PET_NODE_RANK $PET_MASTER_ADDR "
        "$PET_MASTER_PORT $MINE"
    )
    text = f"""
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {{name: tj, namespace: llm}}
spec:
  runtimeRef: {{name: torch-distributed}}
  trainer:
    image: x
    command: [bash, -c]
    args: [{json.dumps(show + "; getent hosts $PET_MASTER_ADDR | wc -l")}]
    numNodes: 2
    numProcPerNode: 4
    env: [{{name: MINE, value: own}}]
"""
    result = run_pods(text, tmp_path)
    assert result.status == "Complete", result.describe()
    seen = sorted(pod.stdout.split() for pod in result.pods)
    assert seen == [
        ["tj-node-0-0", "2", "4", "0", "tj-node-0-0.tj", "29500", "own", "1"],
        ["tj-node-0-1", "2", "4", "1", "tj-node-0-0.tj", "29500", "own", "1"],
    ]
    unknown = text.replace("torch-distributed", "deepspeed-distributed")
    with pytest.raises(RunnerError, match="deepspeed-distributed"):
        PodRunner(tmp_path / "unknown").run(unknown)
