"""Reading Kubernetes manifests into IR jobs: every workload kind, the context objects, every K8S-* code."""

from __future__ import annotations

import copy
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from migrate import ir, workloads
from migrate.diagnostics import Collector, Diagnostic
from migrate.secrets import REDACTED
from migrate.serialize import job_from_dict, job_to_dict
from migrate.translators.kubernetes import kinds, manifest_pods, reader
from migrate.translators.kubernetes.quantities import parse_quantity, to_mib
from migrate.translators.shell.facts import BodyFacts

REPO = Path(__file__).resolve().parent.parent


def read(text: str, path: str = "m.yaml") -> tuple[list[ir.Job], list[Diagnostic]]:
    diags = Collector(path)
    jobs = reader.read(text, path, diags)
    for job in jobs:  # everything the reader builds survives the JSON round trip
        assert job_from_dict(job_to_dict(job)) == job
    assert not [d for d in diags.items if d.code == "INTERNAL-ERROR"]
    return jobs, diags.items


def one(text: str) -> tuple[ir.Job, list[Diagnostic]]:
    jobs, diags = read(text)
    assert len(jobs) == 1, diags
    return jobs[0], diags


def codes(diags: list[Diagnostic]) -> list[tuple[str, int | None]]:
    return [(d.code, d.line) for d in diags]


def raw(job: ir.Job, origin: str) -> ir.RawItem:
    found = [item for item in job.raw if item.origin == origin]
    assert found, [item.origin for item in job.raw]
    return found[0]


def pod(container: str = "", spec: str = "", indent: int = 4) -> str:
    """A pod template (metadata-free) with one container, indented for its place."""
    text = (
        "template:\n"
        "  spec:\n"
        "    restartPolicy: Never\n"
        f"{spec}"
        "    containers:\n"
        "      - name: main\n"
        "        image: busybox:1.36\n"
        f"{container}"
    )
    return "".join(" " * indent + line + "\n" for line in text.splitlines())


# ---------------------------------------------------------------------------
# sniff


@pytest.mark.parametrize(
    "text",
    [
        "apiVersion: batch/v1\nkind: Job\n",
        "\ufeff# comment\n---\nkind: Job\napiVersion: batch/v1\n",
        "kind: List\nitems: []\n",
        '{"apiVersion": "v1", "kind": "Pod"}',
        '"apiVersion": "batch/v1"\n"kind": "Job"\n',
        "{{- /* helm */ -}}\napiVersion: batch/v1\nkind: Job\n",
    ],
)
def test_sniff_yes(text: str) -> None:
    assert reader.sniff(text)


@pytest.mark.parametrize(
    "path",
    ["corpus/cases/broken/docker-compose.yml", "corpus/cases/broken/ci.yml"],
)
def test_sniff_rejects_compose_and_github_actions(path: str) -> None:
    assert not reader.sniff((REPO / path).read_text())


@pytest.mark.parametrize(
    "text",
    [
        "#!/bin/bash\n#SBATCH -N 2\nsrun hostname\n",
        "apiVersion: v2\nname: chart\nversion: 1.0.0\n",  # a Helm Chart.yaml: no kind
        "spec:\n  kind: Job\n  apiVersion: batch/v1\n",  # not top-level
        "",
    ],
)
def test_sniff_no(text: str) -> None:
    assert not reader.sniff(text)


def test_sniff_reads_only_the_head_of_a_huge_file() -> None:
    # Two million lines, then a manifest: the answer comes from the head, so a huge
    # file costs what a small one does and the manifest at its end is not seen.
    text = "x: 1\n" * 2_000_000 + "apiVersion: batch/v1\nkind: Job\n"
    assert not reader.sniff(text)
    assert reader.sniff(text[-40:])


# ---------------------------------------------------------------------------
# batch/v1 Job


BASIC_JOB = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: train
  namespace: ml
  labels:
    team: vision
  annotations:
    note: hello
spec:
  backoffLimit: 3
  activeDeadlineSeconds: 7200
  ttlSecondsAfterFinished: 600
  suspend: true
  template:
    spec:
      restartPolicy: OnFailure
      nodeSelector:
        nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3
      containers:
        - name: trainer
          image: nvcr.io/nvidia/pytorch:24.05-py3
          workingDir: /workspace
          command: ["torchrun", "--nproc_per_node=8", "train.py"]
          args: ["--epochs", "3"]
          resources:
            requests: {cpu: "32", memory: 256Gi}
            limits: {memory: 256Gi, nvidia.com/gpu: 8, vpc.amazonaws.com/efa: 4}
          securityContext:
            privileged: true
"""


def test_job_basic_fields() -> None:
    job, diags = one(BASIC_JOB)
    assert diags == []
    assert job.id == "m.yaml#Job/train"
    assert (job.kind, job.name, job.api_version) == ("Job", "train", "batch/v1")
    assert job.source == ir.SourceRef("m.yaml", "kubernetes", 1, 30, 0)
    assert job.time_limit_s == 7200
    assert job.hold is True
    assert job.failure.max_retries == 3
    assert job.failure.restart_policy == "OnFailure"
    assert job.placement.namespace == "ml"
    assert job.labels == (ir.KeyValue("team", "vision"),)
    assert job.annotations == (ir.KeyValue("note", "hello"),)
    (comp,) = job.components
    assert (comp.name, comp.replicas, comp.line) == ("main", 1, 10)
    res = comp.resources
    assert (res.cpus_per_node, res.mem_per_node_mb, res.gpus_per_node) == (32, 262144, 8)
    assert res.gpu_type == "NVIDIA-H100-80GB-HBM3"
    assert res.node_selector == (ir.KeyValue("nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3"),)
    assert res.generic == (ir.GenericResource("vpc.amazonaws.com/efa", 4),)
    assert job.total_gpus() == 8
    (container,) = comp.containers
    assert container == ir.Container(
        image="nvcr.io/nvidia/pytorch:24.05-py3",
        name="trainer",
        runtime="kubernetes",
        command=("torchrun", "--nproc_per_node=8", "train.py"),
        args=("--epochs", "3"),
        workdir="/workspace",
        line=21,
    )
    (launcher,) = comp.launchers
    assert launcher.name == "torchrun"
    assert launcher.options == (ir.KeyValue("nproc_per_node", "8"),)  # the shell analyzer's canonical keys
    assert launcher.program == ("train.py", "--epochs", "3")
    assert raw(job, "spec.ttlSecondsAfterFinished").value == "600"
    assert raw(job, "spec.template.spec.containers[0].securityContext").line == 29


def test_indexed_job_is_an_array() -> None:
    text = """\
apiVersion: batch/v1
kind: Job
metadata: {name: shards}
spec:
  completionMode: Indexed
  completions: 256
  parallelism: 32
  backoffLimitPerIndex: 2
  maxFailedIndexes: 5
  podFailurePolicy:
    rules:
      - action: FailIndex
        onExitCodes: {containerName: main, operator: In, values: [3]}
      - action: Ignore
        onPodConditions: [{type: DisruptionTarget}]
""" + pod('        args: ["--shard", "$(JOB_COMPLETION_INDEX)"]\n', indent=2)
    job, diags = one(text)
    assert diags == []
    assert job.array == ir.ArraySpec("0-255", tuple(range(256)), 256, 32)
    assert job.components[0].replicas == 1
    assert job.failure.retries_per_index == 2
    assert job.failure.max_failed_indexes == 5
    assert job.failure.rules == (
        "FailIndex on exit code In [3] in container main",
        "Ignore on pod condition DisruptionTarget",
    )


def test_indexed_job_without_parallelism_runs_one_index_at_a_time() -> None:
    text = "apiVersion: batch/v1\nkind: Job\nmetadata: {name: a}\nspec:\n  completionMode: Indexed\n"
    text += "  completions: 5000\n" + pod(indent=2)
    job, _ = one(text)
    assert job.array == ir.ArraySpec("0-4999", (), 5000, 1)  # too many indices to list


def test_non_indexed_parallel_job_has_replicas() -> None:
    text = "apiVersion: batch/v1\nkind: Job\nmetadata: {name: a}\nspec:\n  parallelism: 4\n  completions: 8\n"
    job, _ = one(text + pod(indent=2))
    assert job.array is None
    assert job.components[0].replicas == 4
    assert raw(job, "spec.completions").value == "8"


# ---------------------------------------------------------------------------
# Quantities


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("500m", Fraction(1, 2)),
        ("2", Fraction(2)),
        (2, Fraction(2)),
        (0.5, Fraction(1, 2)),
        ("16Gi", Fraction(16 * 2**30)),
        ("1G", Fraction(10**9)),
        ("1e3", Fraction(1000)),
        ("1E", Fraction(10**18)),
        ("1.5Ki", Fraction(1536)),
        (".5", Fraction(1, 2)),
        ("100u", Fraction(1, 10_000)),
        ("+3", Fraction(3)),
    ],
)
def test_parse_quantity(text: object, value: Fraction) -> None:
    assert parse_quantity(text) == value


@pytest.mark.parametrize("text", ["", "1.2.3", "16GB", "1e", "Gi", "2 Gi", "1e400", True, None, [], "-"])
def test_parse_quantity_rejects(text: object) -> None:
    assert parse_quantity(text) is None


def test_memory_rounds_up_to_whole_mib() -> None:
    assert to_mib(Fraction(10**9)) == 954


def quantity_job(resources: str) -> str:
    container = "        resources:\n" + "".join(f"          {line}\n" for line in resources.splitlines())
    return "apiVersion: batch/v1\nkind: Job\nmetadata: {name: q}\nspec:\n" + pod(container, indent=2)


def test_fractional_cpu_rounds_up_and_keeps_the_original() -> None:
    job, diags = one(quantity_job("requests: {cpu: 500m, memory: 1G}\nlimits: {cpu: '2', memory: 2Gi}"))
    assert diags == []
    res = job.components[0].resources
    assert (res.cpus_per_node, res.mem_per_node_mb) == (1, 2048)  # cpu request, memory limit
    assert raw(job, "spec.template.spec (pod total)").value == (
        "requests: cpu=500m memory=954Mi; limits: cpu=2 memory=2048Mi"
    )


def test_init_and_sidecar_containers_count_like_kubernetes() -> None:
    text = """\
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  initContainers:
    - {name: fetch, image: a, resources: {requests: {cpu: "8"}}}
    - {name: proxy, image: b, restartPolicy: Always, resources: {requests: {cpu: "1"}}}
  containers:
    - {name: x, image: c, resources: {requests: {cpu: "2"}}}
    - {name: y, image: d, resources: {requests: {cpu: "3"}}}
"""
    job, _ = one(text)
    assert job.components[0].resources.cpus_per_node == 8  # max(8, 1 + 2 + 3)
    assert [c.name for c in job.components[0].containers] == ["fetch", "proxy", "x", "y"]


def test_other_resources() -> None:
    job, diags = one(
        quantity_job(
            "limits: {nvidia.com/mig-1g.10gb: 2, hugepages-2Mi: 1Gi, ephemeral-storage: 100Gi, rdma/ib: 1}"
        )
    )
    assert diags == []
    res = job.components[0].resources
    assert (res.gpus_per_node, res.gpu_type, res.tmp_disk_mb) == (2, "mig-1g.10gb", 102400)
    assert res.generic == (ir.GenericResource("hugepages-2Mi", 512), ir.GenericResource("rdma/ib", 1))


def test_bad_quantities() -> None:
    _, diags = read(quantity_job("requests: {cpu: lots, memory: 16GB}\nlimits: {nvidia.com/gpu: 1.5}"))
    assert codes(diags) == [("K8S-BAD-QUANTITY", 12), ("K8S-BAD-QUANTITY", 12), ("K8S-BAD-QUANTITY", 13)]
    assert "cpu" in diags[0].message and "'lots'" in diags[0].message
    assert "whole numbers" in diags[2].message


# ---------------------------------------------------------------------------
# Environment, mounts, storage


ENV_JOB = """\
apiVersion: batch/v1
kind: Job
metadata: {name: env}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: main
          image: busybox
          env:
            - {name: LR, value: "0.1"}
            - {name: HF_TOKEN, value: hf_abcdefghijklmnop}
            - {name: API_KEY, value: "$(OTHER)"}
            - name: DB_PASSWORD
              valueFrom: {secretKeyRef: {name: db, key: password}}
            - name: MODE
              valueFrom: {configMapKeyRef: {name: settings, key: mode}}
            - name: NODE
              valueFrom: {fieldRef: {fieldPath: spec.nodeName}}
            - name: MEM
              valueFrom: {resourceFieldRef: {resource: limits.memory}}
            - {name: WANDB_PROJECT, value: demo}
            - {name: EPOCHS, value: 3}
          envFrom:
            - configMapRef: {name: common}
            - prefix: S3_
              secretRef: {name: s3}
"""


def test_environment() -> None:
    job, diags = one(ENV_JOB)
    assert codes(diags) == [("K8S-SECRET-LITERAL", 13), ("K8S-BAD-TYPE", 24)]
    assert "HF_TOKEN" in diags[0].message and "hf_abc" not in diags[0].message
    env = {e.name: e for e in job.components[0].environment}
    assert env["LR"] == ir.EnvVar("LR", "0.1", origin="env", line=12)
    assert env["HF_TOKEN"].value == REDACTED
    assert env["API_KEY"].value == "$(OTHER)"  # a reference to another variable, not a credential
    assert env["DB_PASSWORD"].secret == ir.SecretRef("db", "password", "secret")
    assert env["DB_PASSWORD"].value is None
    assert env["MODE"].secret == ir.SecretRef("settings", "mode", "configMap")
    assert (env["NODE"].value, env["NODE"].origin) == ("spec.nodeName", "fieldRef")
    assert env["MEM"].value == "resource:limits.memory"
    assert env["EPOCHS"].value == "3"
    assert env["*"] == ir.EnvVar(
        "*", secret=ir.SecretRef("common", None, "configMap"), origin="envFrom", line=26
    )
    assert env["S3_*"].secret == ir.SecretRef("s3", None, "secret")
    assert job.monitoring == (ir.MonitoringHook("wandb", "WANDB_PROJECT", 9),)
    assert "hf_abc" not in str(job_to_dict(job))  # the literal credential is nowhere in the IR


MOUNT_JOB = """\
apiVersion: batch/v1
kind: Job
metadata: {name: mounts}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: main
          image: busybox
          volumeMounts:
            - {name: data, mountPath: /data, readOnly: true}
            - {name: ckpt, mountPath: /ckpt}
            - {name: host, mountPath: /fsx}
            - {name: shm, mountPath: /dev/shm}
            - {name: cfg, mountPath: /etc/cfg}
            - {name: creds, mountPath: /creds}
            - {name: nfs, mountPath: /home}
            - {name: csi, mountPath: /lustre}
            - {name: ghost, mountPath: /ghost}
      volumes:
        - {name: data, persistentVolumeClaim: {claimName: datasets}}
        - {name: ckpt, persistentVolumeClaim: {claimName: checkpoints}}
        - {name: host, hostPath: {path: /fsx, type: Directory}}
        - {name: shm, emptyDir: {medium: Memory}}
        - {name: cfg, configMap: {name: app-config}}
        - {name: creds, secret: {secretName: creds}}
        - {name: nfs, nfs: {server: nas1, path: /export/home, readOnly: true}}
        - {name: csi, csi: {driver: fsx.csi.aws.com}}
"""


def test_mounts_and_storage() -> None:
    job, diags = one(MOUNT_JOB)
    assert codes(diags) == [("K8S-MISSING-FIELD", 20)]
    assert "ghost" in diags[0].message
    mounts = job.components[0].containers[0].mounts
    assert [(m.target, m.source, m.kind, m.read_only) for m in mounts] == [
        ("/data", "datasets", "pvc", True),
        ("/ckpt", "checkpoints", "pvc", False),
        ("/fsx", "/fsx", "hostPath", False),
        ("/dev/shm", "Memory", "emptyDir", False),
        ("/etc/cfg", "app-config", "configMap", True),
        ("/creds", "creds", "secret", True),
        ("/home", "nas1:/export/home", "nfs", True),
        ("/lustre", "fsx.csi.aws.com", "csi", False),
        ("/ghost", "ghost", "other", False),
    ]
    assert [(s.path, s.access, s.via) for s in job.storage] == [
        ("pvc:datasets", ir.READ, "mount"),
        ("/data", ir.READ, "container-mount"),
        ("pvc:checkpoints", ir.READ_WRITE, "mount"),
        ("/ckpt", ir.READ_WRITE, "container-mount"),
        ("/fsx", ir.READ_WRITE, "mount"),
        ("nfs:nas1:/export/home", ir.READ, "mount"),
        ("/home", ir.READ, "container-mount"),
        ("csi:fsx.csi.aws.com", ir.READ_WRITE, "mount"),
        ("/lustre", ir.READ_WRITE, "container-mount"),
    ]
    assert raw(job, "spec.template.spec.volumes[2].hostPath.type").value == "Directory"


def test_pvc_in_the_same_file_describes_the_storage() -> None:
    pvc = "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: datasets}\nspec:\n"
    pvc += (
        "  accessModes: [ReadWriteMany]\n  storageClassName: fsx\n  resources: {requests: {storage: 10Ti}}\n"
    )
    jobs, diags = read(MOUNT_JOB + "---\n" + pvc)
    (info,) = [d for d in diags if d.code == "K8S-IGNORED-KIND"]
    assert info.line == 31
    assert "size=10Ti access=ReadWriteMany class=fsx" in info.message
    item = next(i for i in jobs[0].raw if i.key == "pvc")
    assert item.value == "datasets: size=10Ti access=ReadWriteMany class=fsx"


# ---------------------------------------------------------------------------
# Commands, scripts, launchers


def test_bash_c_script_goes_to_the_shell_analyzer(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[str, int]] = []

    def fake_analyze(body: str, start_line: int, diags: Collector) -> BodyFacts:
        seen.append((body, start_line))
        return BodyFacts(
            launchers=(ir.Launcher("srun", line=start_line),),
            modules=("cuda/12.2",),
            storage=(ir.StoragePath("/scratch/run", ir.WRITE, "body", start_line),),
            monitoring=(ir.MonitoringHook("nvidia-smi", line=start_line),),
            environment=(ir.EnvVar("OMP_NUM_THREADS", "8", line=start_line),),
            statements=3,
            understood=3,
        )

    monkeypatch.setattr(manifest_pods, "analyze", fake_analyze)
    container = (
        '        command: ["/bin/bash", "-lc"]\n        args:\n          - |\n            module load cuda\n'
    )
    job, _ = one("apiVersion: batch/v1\nkind: Job\nmetadata: {name: s}\nspec:\n" + pod(container, indent=2))
    assert seen == [("module load cuda\n", 14)]
    comp = job.components[0]
    assert [launcher.name for launcher in comp.launchers] == ["srun"]
    assert ir.EnvVar("OMP_NUM_THREADS", "8", line=14) in comp.environment
    assert job.modules == ("cuda/12.2",)
    assert ir.StoragePath("/scratch/run", ir.WRITE, "body", 14) in job.storage
    assert ir.MonitoringHook("nvidia-smi", line=14) in job.monitoring
    assert job.script is not None
    assert (job.script.shell, job.script.statements, job.script.body) == ("bash", 3, "module load cuda\n")


def test_launcher_in_a_shell_script() -> None:
    container = (
        '        command: ["sh", "-c"]\n'
        "        args:\n"
        "          - |\n"
        "            set -e\n"
        "            exec python -m torch.distributed.run \\\n"
        "              --nnodes=2 --nproc-per-node gpu train.py\n"
    )
    job, _ = one("apiVersion: batch/v1\nkind: Job\nmetadata: {name: s}\nspec:\n" + pod(container, indent=2))
    (launcher,) = job.components[0].launchers
    assert launcher.name == "torch.distributed.run"
    assert launcher.options == (ir.KeyValue("nnodes", "2"), ir.KeyValue("nproc_per_node", "gpu"))
    assert launcher.program == ("train.py",)
    assert launcher.line == 15


@pytest.mark.parametrize(
    ("argv", "name"),
    [
        ('["mpirun", "-np", "16", "--mca", "btl", "tcp", "./app"]', "mpirun"),
        ('["deepspeed", "--num_gpus", "8", "train.py"]', "deepspeed"),
        ('["accelerate", "launch", "--multi_gpu", "train.py"]', "accelerate"),
        ('["/usr/bin/python3", "-m", "torch.distributed.launch", "x.py"]', "torch.distributed.launch"),
    ],
)
def test_exec_form_launchers(argv: str, name: str) -> None:
    job, _ = one(
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: s}\nspec:\n"
        + pod(f"        command: {argv}\n", indent=2)
    )
    assert job.launcher_names() == (name,)


def test_configmap_script_mounted_by_the_job_is_analyzed() -> None:
    text = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: scripts}
data:
  run.sh: |
    #!/bin/bash
    torchrun --nnodes 1 --nproc_per_node 8 train.py
  settings.json: "{}"
---
apiVersion: batch/v1
kind: Job
metadata: {name: s}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: main
          image: busybox
          command: ["/bin/bash", "/scripts/run.sh"]
          args: ["--out", "/fsx/runs/a"]
          volumeMounts: [{name: s, mountPath: /scripts}]
      volumes: [{name: s, configMap: {name: scripts, defaultMode: 0755}}]
"""
    job, diags = one(text)
    assert codes(diags) == [("K8S-IGNORED-KIND", 1)]
    assert "scripts: run.sh" in diags[0].message
    (launcher,) = job.components[0].launchers
    assert (launcher.name, launcher.line) == ("torchrun", 7)
    assert job.script is not None and job.script.shell == "bash"
    assert job.script.body.startswith("#!/bin/bash\ntorchrun")
    # The argv is read too: /fsx/runs/a is storage, the script inside the ConfigMap mount is not.
    assert [(s.path, s.via) for s in job.storage] == [("/fsx/runs/a", "argument")]


# ---------------------------------------------------------------------------
# Placement, time limits, failure policies


def test_kueue_labels_and_pod_placement() -> None:
    text = """\
apiVersion: batch/v1
kind: Job
metadata:
  generateName: sweep-
  labels:
    kueue.x-k8s.io/queue-name: a100-queue
    kueue.x-k8s.io/priority-class: low
    kueue.x-k8s.io/max-exec-time-seconds: "3600"
spec:
  activeDeadlineSeconds: 7200
  template:
    metadata:
      annotations:
        kueue.x-k8s.io/podset-required-topology: cloud.provider.com/rack
        sidecar.istio.io/inject: "false"
    spec:
      restartPolicy: Never
      schedulerName: kai-scheduler
      priorityClassName: ignored-because-kueue-wins
      tolerations:
        - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}
        - {key: team, value: ml}
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
              - matchExpressions:
                  - {key: nvidia.com/gpu.product, operator: In, values: [NVIDIA-A100-SXM4-80GB]}
                  - {key: zone, operator: Exists}
      containers: [{name: main, image: busybox}]
"""
    job, diags = one(text)
    assert diags == []
    assert job.name == "sweep-"
    assert job.time_limit_s == 3600  # the Kueue limit is the tighter one
    assert (
        raw(job, "deadlines").value
        == "spec.activeDeadlineSeconds=7200, kueue.x-k8s.io/max-exec-time-seconds=3600"
    )
    placement = job.placement
    assert (placement.queue, placement.priority, placement.scheduler) == (
        "a100-queue",
        "low",
        "kai-scheduler",
    )
    assert placement.topology == (ir.KeyValue("required-topology", "cloud.provider.com/rack"),)
    assert placement.tolerations == (
        ir.KeyValue("nvidia.com/gpu", "Exists:NoSchedule"),
        ir.KeyValue("team", "Equal=ml"),
    )
    assert placement.affinity == "nvidia.com/gpu.product In (NVIDIA-A100-SXM4-80GB) and zone Exists"
    assert job.components[0].resources.gpu_type == "NVIDIA-A100-SXM4-80GB"
    assert raw(job, "spec.template.metadata.annotations.sidecar.istio.io/inject").value == "false"


def test_bad_kueue_time_label() -> None:
    text = "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: a\n  labels:\n"
    text += "    kueue.x-k8s.io/max-exec-time-seconds: one-hour\nspec:\n" + pod(indent=2)
    job, diags = one(text)
    assert codes(diags) == [("K8S-BAD-TYPE", 6)]
    assert job.time_limit_s is None


# ---------------------------------------------------------------------------
# Other workload kinds


def test_cronjob() -> None:
    text = """\
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly}
spec:
  schedule: "0 2 * * *"
  timeZone: Europe/Berlin
  concurrencyPolicy: Forbid
  suspend: false
  startingDeadlineSeconds: 300
  jobTemplate:
    metadata:
      labels: {kueue.x-k8s.io/queue-name: cpu-queue}
    spec:
      backoffLimit: 1
      activeDeadlineSeconds: 1800
""" + pod(indent=6)
    job, diags = one(text)
    assert diags == []
    assert job.kind == "CronJob"
    assert job.schedule == ir.Schedule("0 2 * * *", "Europe/Berlin", "Forbid", 5)
    assert (job.time_limit_s, job.failure.max_retries, job.hold) == (1800, 1, False)
    assert job.placement.queue == "cpu-queue"
    assert raw(job, "spec.startingDeadlineSeconds").value == "300"


JOBSET = """\
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: pretrain
  annotations:
    alpha.jobset.sigs.k8s.io/exclusive-topology: cloud.google.com/gke-nodepool
spec:
  failurePolicy:
    maxRestarts: 3
    rules:
      - action: FailJobSet
        onJobFailureReasons: [PodFailurePolicy]
        targetReplicatedJobs: [init]
  replicatedJobs:
    - name: init
      template:
        spec:
          backoffLimit: 0
          template:
            spec:
              restartPolicy: Never
              containers: [{name: fetch, image: tools}]
    - name: workers
      replicas: 2
      dependsOn:
        - {name: init, status: Complete}
      template:
        spec:
          parallelism: 4
          completions: 4
          activeDeadlineSeconds: 86400
          template:
            spec:
              restartPolicy: Never
              containers:
                - name: train
                  image: trainer
                  command: [torchrun, --nnodes=8, train.py]
                  resources: {limits: {nvidia.com/gpu: 8}}
"""


def test_jobset() -> None:
    job, diags = one(JOBSET)
    assert diags == []
    assert job.kind == "JobSet"
    assert [(c.name, c.replicas) for c in job.components] == [("init", 1), ("workers", 8)]
    assert job.total_gpus() == 64
    assert job.dependencies == (
        ir.Dependency("dependsOn", ("replicatedJob:init",), status="Complete", line=26),
    )
    assert (
        raw(job, "spec.replicatedJobs[1].dependsOn[0]").value
        == "workers waits for replicatedJob:init (Complete)"
    )
    assert job.time_limit_s == 86400
    assert job.failure.max_retries == 3
    assert job.failure.rules == ("FailJobSet on PodFailurePolicy for init",)
    assert job.placement.topology == (ir.KeyValue("exclusive-topology", "cloud.google.com/gke-nodepool"),)
    assert raw(job, "spec.replicatedJobs[0].template.spec.backoffLimit").value == "0"


VOLCANO = """\
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: lammps}
spec:
  schedulerName: volcano
  queue: hpc
  priorityClassName: hpc-high
  minAvailable: 5
  maxRetry: 3
  networkTopology: {mode: hard, highestTierAllowed: 2}
  plugins: {ssh: [], svc: []}
  policies:
    - {event: PodEvicted, action: RestartJob}
  tasks:
    - name: master
      replicas: 1
      policies:
        - {event: TaskCompleted, action: CompleteJob}
      template:
        spec:
          containers:
            - name: m
              image: lammps
              command: [/bin/sh, -c, "mpirun -np 256 lmp -in in.lj"]
    - name: worker
      replicas: 4
      dependsOn: {name: [master], iteration: any}
      template:
        spec:
          containers: [{name: w, image: lammps, resources: {requests: {cpu: "64"}}}]
"""


def test_volcano_job() -> None:
    job, diags = one(VOLCANO)
    assert diags == []
    assert (job.kind, job.id) == ("VolcanoJob", "m.yaml#VolcanoJob/lammps")
    assert [(c.name, c.replicas) for c in job.components] == [("master", 1), ("worker", 4)]
    assert job.launcher_names() == ("mpirun",)
    placement = job.placement
    assert (placement.queue, placement.priority, placement.scheduler) == ("hpc", "hpc-high", "volcano")
    assert placement.topology == (ir.KeyValue("network-topology", "hard tier<=2"),)
    assert job.failure.max_retries == 3
    assert job.failure.rules == ("master: CompleteJob on TaskCompleted", "RestartJob on PodEvicted")
    assert job.dependencies == (ir.Dependency("dependsOn", ("task:master",), any_of=True, line=27),)
    assert raw(job, "spec.minAvailable").key == "gang-size"
    assert raw(job, "spec.plugins").value == '{"ssh":[],"svc":[]}'


def test_volcano_jobflow_links_the_job_templates() -> None:
    template = "apiVersion: flow.volcano.sh/v1alpha1\nkind: JobTemplate\nmetadata: {{name: {}}}\nspec:\n"
    template += "  tasks:\n    - name: t\n      replicas: 1\n" + pod(indent=6)
    flow = """\
apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata: {name: pipeline}
spec:
  jobRetainPolicy: delete
  flows:
    - name: prep
    - name: train
      dependsOn: {targets: [prep]}
    - name: report
      dependsOn: {targets: [prep, train, elsewhere]}
"""
    text = "---\n".join([template.format("prep"), template.format("train"), template.format("report"), flow])
    jobs, diags = read(text)
    assert [j.kind for j in jobs] == ["VolcanoJobTemplate"] * 3
    assert [d.code for d in diags] == ["K8S-IGNORED-KIND"]
    assert "3 flows" in diags[0].message
    prep, train, report = jobs
    assert prep.dependencies == ()
    assert train.dependencies == (ir.Dependency("dependsOn", ("m.yaml#VolcanoJobTemplate/prep",), line=50),)
    assert report.dependencies[0].targets == (
        "m.yaml#VolcanoJobTemplate/prep",
        "m.yaml#VolcanoJobTemplate/train",
        "elsewhere",
    )


def test_pytorchjob() -> None:
    text = """\
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: bert}
spec:
  nprocPerNode: "4"
  elasticPolicy: {minReplicas: 2, maxReplicas: 6, rdzvBackend: c10d}
  runPolicy:
    activeDeadlineSeconds: 36000
    backoffLimit: 2
    suspend: true
    cleanPodPolicy: Running
    schedulingPolicy: {queue: research, minAvailable: 4, priorityClass: high}
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      restartPolicy: OnFailure
      template:
        spec:
          containers: [{name: pytorch, image: bert, resources: {limits: {nvidia.com/gpu: 4}}}]
    Worker:
      replicas: 3
      restartPolicy: OnFailure
      template:
        spec:
          containers: [{name: pytorch, image: bert, resources: {limits: {nvidia.com/gpu: 4}}}]
"""
    job, diags = one(text)
    assert diags == []
    assert [(c.name, c.replicas, c.resources.tasks_per_node) for c in job.components] == [
        ("Master", 1, 4),
        ("Worker", 3, 4),
    ]
    assert job.total_gpus() == 16
    assert (job.time_limit_s, job.failure.max_retries, job.hold) == (36000, 2, True)
    assert job.failure.restart_policy == "OnFailure"
    assert (job.placement.queue, job.placement.priority) == ("research", "high")
    assert raw(job, "spec.runPolicy.schedulingPolicy.minAvailable").value == "4"
    assert raw(job, "spec.elasticPolicy.minReplicas").value == "2"
    assert raw(job, "spec.runPolicy.cleanPodPolicy").value == "Running"


@pytest.mark.parametrize("version", ["v1", "v2beta1"])
def test_mpijob_both_versions(version: str) -> None:
    text = f"""\
apiVersion: kubeflow.org/{version}
kind: MPIJob
metadata: {{name: gromacs}}
spec:
  slotsPerWorker: 8
  runPolicy: {{backoffLimit: 1}}
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template:
        spec:
          containers: [{{name: l, image: g, command: [mpirun, -np, "16", gmx_mpi, mdrun]}}]
    Worker:
      replicas: 2
      template:
        spec:
          containers: [{{name: w, image: g, resources: {{limits: {{nvidia.com/gpu: 8}}}}}}]
"""
    job, diags = one(text)
    assert diags == []
    assert (job.kind, job.api_version) == ("MPIJob", f"kubeflow.org/{version}")
    launcher, worker = job.components
    assert (launcher.name, launcher.resources.tasks_per_node) == ("Launcher", None)
    assert (worker.name, worker.replicas, worker.resources.tasks_per_node) == ("Worker", 2, 8)
    assert launcher.launchers[0].options == (ir.KeyValue("np", "16"),)
    assert job.failure.max_retries == 1


@pytest.mark.parametrize(
    ("kind", "specs", "roles"),
    [
        ("TFJob", "tfReplicaSpecs", ("PS", "Worker")),
        ("XGBoostJob", "xgbReplicaSpecs", ("Master", "Worker")),
        ("PaddleJob", "paddleReplicaSpecs", ("Worker",)),
        ("JAXJob", "jaxReplicaSpecs", ("Worker",)),
    ],
)
def test_other_training_operator_kinds(kind: str, specs: str, roles: tuple[str, ...]) -> None:
    text = f"apiVersion: kubeflow.org/v1\nkind: {kind}\nmetadata: {{name: t}}\nspec:\n  {specs}:\n"
    for role in roles:
        text += f"    {role}:\n      replicas: 2\n" + pod(indent=6)
    job, diags = one(text)
    assert diags == []
    assert job.kind == kind
    assert [(c.name, c.replicas) for c in job.components] == [(role, 2) for role in roles]


def test_raycluster_is_a_service_whose_own_ports_are_for_no_client() -> None:
    text = """\
apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: shared}
spec:
  headGroupSpec:
    template:
      spec:
        containers: [{name: head, image: ray, ports: [{containerPort: 8265}]}]
  workerGroupSpecs:
    - groupName: cpu
      replicas: 3
      template:
        spec:
          containers: [{name: w, image: ray}]
"""
    job, diags = one(text)
    assert diags == []
    assert [(c.name, c.replicas) for c in job.components] == [("head", 1), ("cpu", 3)]
    # Ray's own dashboard port is for no client; the operator labels the pods with the cluster's name
    labels = (ir.KeyValue("ray.io/cluster", "shared"),)
    assert job.services == (ir.Service("shared", 4, (), pod_labels=labels),)


def test_trainjob() -> None:
    text = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: sft
  labels: {kueue.x-k8s.io/queue-name: h100}
spec:
  runtimeRef: {name: torch-distributed}
  trainer:
    image: llm-train:1
    command: [torchrun]
    args: [sft.py]
    numNodes: 2
    numProcPerNode: 8
    resourcesPerNode:
      limits: {nvidia.com/gpu: 8, memory: 1Ti}
    env:
      - {name: WANDB_API_KEY, valueFrom: {secretKeyRef: {name: wandb, key: key}}}
"""
    job, diags = one(text)
    assert diags == []
    (comp,) = job.components
    assert (comp.name, comp.replicas, comp.line) == ("trainer", 2, 8)
    assert (comp.resources.gpus_per_node, comp.resources.tasks_per_node) == (8, 8)
    assert comp.resources.mem_per_node_mb == 1024 * 1024
    assert comp.containers[0].image == "llm-train:1"
    assert job.launcher_names() == ("torchrun",)
    assert job.placement.queue == "h100"
    assert raw(job, "spec.runtimeRef").value == '{"name":"torch-distributed"}'


def test_rayjob() -> None:
    text = """\
apiVersion: ray.io/v1
kind: RayJob
metadata: {name: caption}
spec:
  entrypoint: python caption.py --shards 64
  submissionMode: K8sJobMode
  shutdownAfterJobFinishes: true
  activeDeadlineSeconds: 21600
  backoffLimit: 1
  rayClusterSpec:
    headGroupSpec:
      rayStartParams: {num-cpus: "0"}
      template:
        spec:
          containers: [{name: head, image: ray:2.30, resources: {requests: {cpu: "4"}}}]
    workerGroupSpecs:
      - groupName: gpu
        replicas: 4
        minReplicas: 1
        maxReplicas: 8
        template:
          spec:
            containers: [{name: w, image: ray:2.30, resources: {limits: {nvidia.com/gpu: 1}}}]
"""
    job, diags = one(text)
    assert diags == []
    assert [(c.name, c.replicas) for c in job.components] == [("head", 1), ("gpu", 4)]
    assert (job.time_limit_s, job.failure.max_retries) == (21600, 1)
    assert job.script is not None and job.script.body == "python caption.py --shards 64"
    assert job.script.first_command_line == 5
    assert raw(job, "spec.submissionMode").value == "K8sJobMode"
    assert raw(job, "spec.rayClusterSpec.workerGroupSpecs[0]").value == "gpu: 1-8 replicas"


def test_rayjob_on_an_existing_cluster_has_no_missing_fields() -> None:
    job, diags = one(
        "apiVersion: ray.io/v1\nkind: RayJob\nmetadata: {name: r}\nspec:\n  entrypoint: echo\n"
        "  clusterSelector: {ray.io/cluster: shared}\n"
    )
    assert diags == []
    assert job.components == (ir.Component(),)


SERVING = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: vllm}
spec:
  replicas: 2
  selector: {matchLabels: {app: vllm}}
  template:
    metadata:
      labels: {app: vllm}
      annotations: {prometheus.io/scrape: "true", prometheus.io/port: "8000"}
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai
          ports: [{containerPort: 8000, name: http}]
          resources: {limits: {nvidia.com/gpu: 8}}
        - name: exporter
          image: nvcr.io/nvidia/k8s/dcgm-exporter:3.3.5
---
apiVersion: v1
kind: Service
metadata: {name: vllm}
spec:
  selector: {app: vllm}
  ports: [{port: 80, targetPort: 8000}]
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: vllm}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: vllm}
  minReplicas: 2
  maxReplicas: 10
  metrics:
    - type: Resource
      resource: {name: cpu, target: {type: Utilization, averageUtilization: 70}}
"""


def test_deployment_with_service_and_hpa() -> None:
    job, diags = one(SERVING)
    assert [d.code for d in diags] == ["K8S-IGNORED-KIND", "K8S-IGNORED-KIND"]
    assert job.services == (
        ir.Service(
            "vllm",
            2,
            (8000, 80),
            "hpa 2-10 cpu 70%",
            addresses=("vllm",),
            pod_labels=(ir.KeyValue("app", "vllm"),),  # for Services kept in other files
        ),
    )
    assert job.monitoring == (
        ir.MonitoringHook("dcgm", "nvcr.io/nvidia/k8s/dcgm-exporter:3.3.5", 17),
        ir.MonitoringHook("prometheus-scrape", "port=8000", 10),
    )


def test_statefulset_claim_templates_are_pvcs() -> None:
    text = """\
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: triton}
spec:
  replicas: 3
  serviceName: triton
  template:
    spec:
      containers:
        - name: t
          image: triton
          volumeMounts: [{name: cache, mountPath: /models}]
  volumeClaimTemplates:
    - metadata: {name: cache}
      spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 200Gi}}}
"""
    job, diags = one(text)
    assert diags == []
    assert job.services[0].replicas == 3
    assert job.components[0].containers[0].mounts[0].kind == "pvc"
    assert job.storage[0].path == "pvc:cache"
    assert raw(job, "spec.volumeClaimTemplates[0].spec").line == 15


def test_bare_pod() -> None:
    text = "apiVersion: v1\nkind: Pod\nmetadata: {name: check}\nspec:\n  restartPolicy: Never\n"
    text += "  activeDeadlineSeconds: 600\n  hostNetwork: true\n  containers: [{name: c, image: perftest}]\n"
    job, diags = one(text)
    assert diags == []
    assert (job.kind, job.time_limit_s, job.failure.restart_policy) == ("Pod", 600, "Never")
    assert raw(job, "spec.hostNetwork").value == "true"


def test_list_items_and_duplicate_names() -> None:
    item = "  - apiVersion: batch/v1\n    kind: Job\n    metadata: {name: same}\n    spec:\n" + pod(indent=6)
    jobs, diags = read("apiVersion: v1\nkind: List\nitems:\n" + item + item + "  - 42\n")
    assert [j.id for j in jobs] == ["m.yaml#Job/same", "m.yaml#Job/same~2"]
    assert [j.source.line for j in jobs] == [4, 14]
    assert codes(diags) == [("K8S-NOT-AN-OBJECT", 24)]


def test_daemonset_monitoring_applies_to_the_jobs_of_the_file() -> None:
    daemonset = """\
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: dcgm-exporter}
spec:
  template:
    spec:
      containers: [{name: e, image: nvcr.io/nvidia/k8s/dcgm-exporter:3.3.5}]
---
"""
    job, diags = one(daemonset + BASIC_JOB)
    assert codes(diags) == [("K8S-IGNORED-KIND", 1)]
    assert "monitoring agent: dcgm" in diags[0].message
    assert job.monitoring[0].kind == "dcgm"


# ---------------------------------------------------------------------------
# Every K8S-* code, with its line


def test_yaml_error_keeps_the_other_documents() -> None:
    broken = "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: [broken\n"
    jobs, diags = read(broken + "---\n" + BASIC_JOB)
    assert [j.name for j in jobs] == ["train"]
    assert jobs[0].source.line == 6 and jobs[0].source.document == 1
    assert [d.code for d in diags] == ["K8S-YAML-ERROR"]


def test_alias_bomb_and_deep_nesting_through_the_reader() -> None:
    bomb = (REPO / "corpus/cases/broken/alias_bomb.yaml").read_text()
    _, diags = read(bomb)
    _, deep = read("apiVersion: v1\nkind: ConfigMap\ndata: " + "[" * 10_000 + "]" * 10_000 + "\n")
    assert codes(diags) == [("K8S-YAML-ALIAS-BOMB", 11)]
    assert codes(deep) == [("K8S-YAML-TOO-DEEP", 3)]


def test_helm_template() -> None:
    text = (REPO / "corpus/cases/broken/helm_training_job.yaml").read_text()
    jobs, diags = read(text)
    assert jobs == []
    assert codes(diags) == [("K8S-YAML-ERROR", 1), ("K8S-TEMPLATED", 1)]
    assert diags[0].severity == "warning"


def test_helm_template_that_parses_is_still_read() -> None:
    text = BASIC_JOB.replace("  name: train\n", '  name: "{{ .Release.Name }}-train"\n')
    text = text.replace("namespace: ml", 'namespace: "{{ .Values.ns }}"')
    jobs, diags = read(text)
    assert codes(diags) == [("K8S-TEMPLATED", 4)]
    assert jobs[0].templated


def test_envsubst_placeholders_outside_shell_and_env_references() -> None:
    text = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: train
  labels: {kueue.x-k8s.io/queue-name: "${QUEUE}"}
spec:
  template:
    spec:
      containers:
        - name: main
          image: busybox
          command: [sh, -c, "echo ${HOME} $(date)"]
          env: [{name: A, value: "$(B)"}]
          resources: {limits: {nvidia.com/gpu: "${GPUS}"}}
"""
    job, diags = one(text)
    assert codes(diags) == [("K8S-TEMPLATED", 5)]  # no K8S-BAD-QUANTITY for ${GPUS}
    assert job.templated


@pytest.mark.parametrize(
    "text",
    [
        # Kubernetes' own $(VAR) references, shell syntax, Argo's parameters: not templates
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
        '    - {name: c, image: i, args: ["--shard", "$(JOB_COMPLETION_INDEX)"]}\n',
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
        '    - {name: c, image: i, command: [bash, -c], args: ["echo ${X:-1}"]}\n',
        "apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nmetadata: {name: w}\nspec:\n"
        '  args: ["{{inputs.parameters.stage}}"]\n',
    ],
)
def test_not_templates(text: str) -> None:
    _, diags = read(text)
    assert "K8S-TEMPLATED" not in [d.code for d in diags]


def test_not_an_object() -> None:
    _, diags = read("--- just text\n---\n- a\n- b\n---\nfoo: bar\n---\n42\n")
    assert codes(diags) == [
        ("K8S-NOT-AN-OBJECT", 1),
        ("K8S-NOT-AN-OBJECT", 3),
        ("K8S-NOT-AN-OBJECT", 6),
        ("K8S-NOT-AN-OBJECT", 8),
    ]


def test_missing_fields() -> None:
    no_template = "apiVersion: batch/v1\nkind: Job\nmetadata: {name: a}\nspec:\n  backoffLimit: 1\n"
    _, diags = read(no_template)
    assert codes(diags) == [("K8S-MISSING-FIELD", 4)]
    assert "spec.template" in diags[0].message
    _, diags = read("kind: Job\nmetadata: {name: a}\nspec:\n" + pod(indent=2))
    assert codes(diags) == [("K8S-MISSING-FIELD", 1)]
    assert "apiVersion" in diags[0].message
    _, diags = read("apiVersion: batch/v1\nkind: Job\nspec:\n" + pod(indent=2))
    assert codes(diags) == [("K8S-MISSING-FIELD", 1)]
    _, diags = read("apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {name: a}\nspec: {}\n")
    assert codes(diags) == [("K8S-MISSING-FIELD", 4)]
    _, diags = read(
        "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: a}\nspec:\n  jobTemplate:\n"
        "    spec:\n" + pod(indent=6)
    )
    assert codes(diags) == [("K8S-MISSING-FIELD", 4)]
    assert "schedule" in diags[0].message


def test_bad_types_with_their_lines() -> None:
    text = (REPO / "corpus/cases/broken/job_wrong_type.yaml").read_text()
    job, diags = one(text)
    assert codes(diags) == [("K8S-BAD-TYPE", 7)]
    assert "spec.parallelism" in diags[0].message and "'four'" in diags[0].message
    assert job.array is not None and job.array.count == 4
    text = (
        'apiVersion: batch/v1\nkind: Job\nmetadata: {name: a}\nspec:\n  backoffLimit: "2"\n  template: oops\n'
    )
    job, diags = one(text)
    assert sorted(codes(diags)) == [("K8S-BAD-TYPE", 5), ("K8S-BAD-TYPE", 6)]
    assert job.failure.max_retries == 2  # a quoted number: reported, the intent kept
    _, diags = read(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
        '    - {name: c, image: i, command: "python x.py", args: [--n, 4]}\n'
    )
    assert codes(diags) == [("K8S-BAD-TYPE", 6), ("K8S-BAD-TYPE", 6)]


def test_ignored_and_unknown_kinds() -> None:
    text = (REPO / "corpus/cases/kubernetes/tekton_taskrun.yaml").read_text()
    text += "---\napiVersion: v1\nkind: ServiceAccount\nmetadata: {name: runner}\n"
    text += "---\napiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData: {token: hunter2}\n"
    jobs, diags = read(text)
    assert jobs == []
    assert [(d.code, d.severity) for d in diags] == [
        ("K8S-UNKNOWN-KIND", "warning"),
        ("K8S-IGNORED-KIND", "info"),
        ("K8S-IGNORED-KIND", "info"),
    ]
    assert "TaskRun/build-trainer-image-" in diags[0].message
    assert "hunter2" not in " ".join(d.message for d in diags)


def test_crlf_manifest_reads_like_lf() -> None:
    lf_job, _ = one(BASIC_JOB)
    crlf_job, diags = one(BASIC_JOB.replace("\n", "\r\n"))
    assert diags == []
    assert crlf_job == lf_job


# ---------------------------------------------------------------------------
# The kinds table


def test_every_workload_kind_has_a_role_and_a_version() -> None:
    seen = set()
    for workload in workloads.workload_kinds():
        assert workload.roles and workload.versions
        assert (workload.group, workload.kind) not in seen
        seen.add((workload.group, workload.kind))
        assert kinds.context_role(workload.group, workload.kind) is None


@pytest.mark.parametrize(
    ("group", "expected"),
    [
        ("", True),
        ("batch", True),
        ("storage.k8s.io", True),
        ("kueue.x-k8s.io", False),
        ("argoproj.io", False),
    ],
)
def test_builtin_groups(group: str, expected: bool) -> None:
    assert kinds.is_builtin_group(group) is expected


# ---------------------------------------------------------------------------
# Never raise


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=300))
def test_arbitrary_text_never_raises(text: str) -> None:
    diags = Collector("x.yaml")
    reader.read(text, "x.yaml", diags)
    reader.sniff(text)
    assert not [d for d in diags.items if d.code == "INTERNAL-ERROR"]


_BASES = [yaml.safe_load_all(text) for text in (BASIC_JOB, JOBSET, VOLCANO, ENV_JOB, MOUNT_JOB, SERVING)]
BASE_OBJECTS = [obj for docs in _BASES for obj in docs]

_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**40), max_value=2**40),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from(["500m", "1e3", "16Gi", "$(X)", "${X}", "{{ .Values.x }}", "Indexed", "-1", "Always"]),
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=6,
)


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(node, dict):
        for key, value in node.items():
            found.extend(_paths(value, (*prefix, key)))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found.extend(_paths(value, (*prefix, index)))
    return found


def _replace(root: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    node = root
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return root


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_mutated_manifests_never_raise(data: st.DataObject) -> None:
    obj = copy.deepcopy(data.draw(st.sampled_from(BASE_OBJECTS)))
    for _ in range(data.draw(st.integers(min_value=1, max_value=4))):
        paths = _paths(obj)
        path = data.draw(st.sampled_from(paths))
        obj = _replace(obj, path, data.draw(_VALUES))
    text = yaml.safe_dump(obj, sort_keys=False)
    diags = Collector("x.yaml")
    jobs = reader.read(text, "x.yaml", diags)
    assert not [d for d in diags.items if d.code == "INTERNAL-ERROR"], diags.items
    for job in jobs:
        assert job_from_dict(job_to_dict(job)) == job


def test_corpus_manifests_read_without_internal_errors() -> None:
    folders = [REPO / "corpus/cases/kubernetes", REPO / "corpus/cases/broken", REPO / "corpus/sample-site"]
    files = [p for folder in folders if folder.is_dir() for p in sorted(folder.rglob("*")) if p.is_file()]
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        if not reader.sniff(text):
            continue
        read(text, str(path.relative_to(REPO)))


# ---------------------------------------------------------------------------
# ConfigMaps the jobs use, for the writers


CONFIG_MAPS = """
apiVersion: v1
kind: ConfigMap
metadata: {name: runner}
data:
  run.sh: |
    #!/bin/bash
    export OPENAI_API_KEY=sk-abcdefghijklmnopqrstuvwxyz012345
    python serve.py
  DB_PASSWORD: hunter2hunter2
  MODE: fast
---
apiVersion: v1
kind: ConfigMap
metadata: {name: runner, namespace: other}
data: {MODE: slow}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: unused}
data: {A: b}
---
apiVersion: batch/v1
kind: Job
metadata: {name: cm, namespace: team}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: c
          image: python:3.11
          command: ["bash", "/scripts/run.sh"]
          envFrom: [{configMapRef: {name: runner}}]
          volumeMounts: [{name: s, mountPath: /scripts}]
      volumes: [{name: s, configMap: {name: runner}}]
---
apiVersion: batch/v1
kind: Job
metadata: {name: plain}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: busybox, command: ["true"]}]
"""


def test_config_maps_a_job_uses_are_kept_without_credentials() -> None:
    jobs, _ = read(CONFIG_MAPS)
    cm_job, plain = jobs
    assert plain.config_maps == ()
    (runner,) = cm_job.config_maps  # the one its namespace sees; the unused one is left out
    data = dict((kv.key, kv.value) for kv in runner.data)
    assert runner.name == "runner" and set(data) == {"run.sh", "MODE"} and data["MODE"] == "fast"
    assert "sk-abcdefghij" not in data["run.sh"] and "python serve.py" in data["run.sh"]
    assert [c.key for c in runner.credentials] == ["run.sh", "DB_PASSWORD"]
    assert runner.credentials[1] == ir.ConfigCredential("DB_PASSWORD", "DB_PASSWORD")
