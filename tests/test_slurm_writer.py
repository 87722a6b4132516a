"""The Slurm writer: one test per mapping, quoting proven with bash, goldens over the corpus.

Kubernetes inputs are written as manifests and read by the Kubernetes reader,
so each test goes through the same IR a real scan gives; sbatch scripts read and
written back are one case a line. Scripts are checked with the static check
(option table + ``bash -n``); ``test_slurm_sandbox.py`` runs them on a real Slurm.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import textwrap
from functools import partial
from pathlib import Path

import pytest
from conftest import CORPUS, GOLDEN, REPO
from golden import check_json
from hypothesis import given, settings
from hypothesis import strategies as st
from one_line import ABSENT, FLAG, sbatch_options, validate_all, validate_identity

from migrate import ir, slurmcheck
from migrate.diagnostics import CODES, Collector
from migrate.fidelity import Translation
from migrate.scan import scanner
from migrate.site.config import SiteConfig, load_site_config, parse_site_config
from migrate.translate import translate_jobs
from migrate.translators.kubernetes import reader as k8s_reader
from migrate.translators.slurm import directives, kube_steps, kubevars, quoting
from migrate.translators.slurm.writer import translate_job
from migrate.vocab import FidelityStatus

BASH = shutil.which("bash")
needs_bash = pytest.mark.skipif(BASH is None, reason="bash is needed to run the generated scripts")

SITE = parse_site_config(
    {
        "site": "testsite",
        "filesystems": [{"prefix": "/fsx", "kind": "lustre", "pvc": "fsx-pvc"}],
        "partitions": {
            "gpu": {
                "gpus_per_node": 8,
                "gpu_type": "a100",
                "queue": "gpu-queue",
                "node_selector": {"pool": "a100"},
            },
            "cpu": {"cpus_per_node": 64, "queue": "cpu-queue", "node_selector": {"pool": "cpu"}},
        },
    }
)
SAMPLE_SITE = load_site_config(CORPUS / "sample-site" / "migrate.yaml")
MAPPED, APPROXIMATED, DROPPED = FidelityStatus.MAPPED, FidelityStatus.APPROXIMATED, FidelityStatus.DROPPED

# One manifest read and written as sbatch for the test site, its expectations checked at once.
validate_manifest = partial(validate_all, read="kubernetes", config=SITE)


def manifest(tmp_path: Path, text: str, name: str = "job.yaml") -> list[ir.Job]:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return k8s_reader.read(path.read_text(encoding="utf-8"), str(path), Collector(str(path)))


def translate(
    tmp_path: Path, text: str, runtime: str = "pyxis", config: SiteConfig | None = SITE
) -> Translation:
    (job,) = [j for j in manifest(tmp_path, text) if j.kind not in ("ConfigMap",)]
    return translate_job(job, config, runtime)


def script(t: Translation, name: str = "job.sbatch") -> str:
    return t.files[name]


def entry(t: Translation, needle: str) -> tuple[str, str]:
    for e in t.fidelity.entries:
        if needle in e.item:
            return e.status, e.reason
    raise AssertionError(f"no fidelity entry mentions {needle!r}: {[e.item for e in t.fidelity.entries]}")


def codes(t: Translation) -> set[str]:
    return {d.code for d in t.diagnostics}


def statically_valid(text: str) -> None:
    result = slurmcheck.check_text(text)
    assert result.accepted, result.message


JOB = """
apiVersion: batch/v1
kind: Job
metadata: {name: pi, namespace: demo}
spec:
  backoffLimit: 2
  activeDeadlineSeconds: 5400
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: pi
          image: nvcr.io/nvidia/pytorch:24.03-py3
          command: ["python", "-c", "print('hi there')"]
          resources:
            requests: {cpu: "6", memory: 24Gi}
            limits: {memory: 24Gi, nvidia.com/gpu: 2}
"""


# ---------------------------------------------------------------------------
# Resources, time, retries, output


def test_job_resources_time_and_retries(tmp_path: Path) -> None:
    text = validate_manifest(
        JOB,
        path=str(tmp_path / "job.yaml"),
        sbatch={
            "job-name": "pi",
            "nodes": "1",
            "ntasks-per-node": "1",
            "cpus-per-task": "6",
            "mem": "24G",
            "gres": "gpu:2",
            "time": "01:30:00",
            "output": "%x-%j.out",
            "requeue": FLAG,
        },
        fidelity={"backoff limit 2": APPROXIMATED, "deadline 5400s": (MAPPED, "--time=01:30:00")},
        contains=["migrate_retry 2 srun"],
    ).text
    assert text.startswith("#!/bin/bash\n# Translated by migrate from ")
    assert f"{tmp_path / 'job.yaml'}:2" in text.splitlines()[1]
    statically_valid(text)


def test_what_the_site_bounds_and_the_pods_did_not_is_what_the_job_loses(tmp_path: Path) -> None:
    site = parse_site_config(
        {
            "partitions": {
                "gpu": {
                    "gpus_per_node": 8,
                    "cpus_per_node": 96,
                    "queue": "gpu-queue",
                    "default_time": "04:00:00",
                    "def_mem_per_cpu_mb": 2048,
                }
            }
        }
    )
    text = (
        JOB.replace("  activeDeadlineSeconds: 5400\n", "")
        .replace('{cpu: "6", memory: 24Gi}', '{cpu: "6"}')
        .replace("{memory: 24Gi, nvidia.com/gpu: 2}", "{nvidia.com/gpu: 2}")
        .replace(
            "metadata: {name: pi, namespace: demo}",
            "metadata:\n  name: pi\n  labels: {kueue.x-k8s.io/queue-name: gpu-queue}",
        )
    )
    t = translate(tmp_path, text, config=site)
    time = next(e for e in t.fidelity.entries if e.item == "no activeDeadlineSeconds")
    assert time.loses == "unlimited run time: Slurm stops the job after 04:00:00"
    memory = next(e for e in t.fidelity.entries if e.item.startswith("memory of"))
    assert memory.loses == "unbounded memory: 12288 MiB per node"  # DefMemPerCPU x 6 CPUs
    assert "DefMemPerCPU=2048" in memory.reason
    assert not [e for e in translate(tmp_path, JOB, config=site).fidelity.entries if e.loses]


def test_backoff_zero_is_no_requeue_without_retries() -> None:
    validate_manifest(
        JOB.replace("backoffLimit: 2", "backoffLimit: 0"),
        sbatch={"no-requeue": FLAG, "requeue": ABSENT},
        lacks=["migrate_retry"],
    )


def test_unset_backoff_uses_the_kubernetes_default() -> None:
    validate_manifest(
        JOB.replace("  backoffLimit: 2\n", ""),
        contains=["migrate_retry 6 srun"],
        fidelity={"backoffLimit unset (Kubernetes' default 6)": APPROXIMATED},
    )


def test_pods_that_take_whole_nodes_get_them_with_a_note() -> None:
    note = "# migrate: approximated: each pod takes a whole node; the node is the job's alone"
    validate_manifest(
        PYTORCHJOB.replace("nvidia.com/gpu: 4", "nvidia.com/gpu: 8"),
        sbatch={"nodes": "4"},
        contains=[f"{note}\n#SBATCH --exclusive"],
    )


def test_pods_that_share_a_node_are_packed_and_not_exclusive() -> None:
    """4 pods of 4 GPUs on 8-GPU nodes: 2 nodes of 2 tasks, each task its own 4 GPUs, as pods pack."""
    validate_manifest(
        PYTORCHJOB,
        sbatch={
            "nodes": "2",
            "ntasks-per-node": "2",
            "gpus-per-task": "4",
            "exclusive": ABSENT,
            "gres": ABSENT,
        },
    )


# ---------------------------------------------------------------------------
# Arrays


INDEXED = """
apiVersion: batch/v1
kind: Job
metadata: {name: shards}
spec:
  completions: 10
  parallelism: 3
  completionMode: Indexed
  backoffLimitPerIndex: 1
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: w
          image: busybox
          command: ["sh", "-c", "echo shard $JOB_COMPLETION_INDEX"]
          args: []
          env:
            - {name: SHARD, value: "part-$(JOB_COMPLETION_INDEX)"}
"""


def test_indexed_job_is_an_array_with_the_parallelism_limit() -> None:
    checked = validate_manifest(
        INDEXED,
        sbatch={"array": "0-9%3", "output": "%x-%A_%a.out"},
        contains=[
            'export JOB_COMPLETION_INDEX="$SLURM_ARRAY_TASK_ID"',
            'export SHARD=part-"${JOB_COMPLETION_INDEX}"',
            "migrate_retry 1 srun",  # backoffLimitPerIndex
        ],
    )
    assert checked.written.flavor == "sbatch-array"


def test_parallel_pods_of_a_plain_job_become_array_tasks() -> None:
    validate_manifest(
        JOB.replace("  backoffLimit: 2\n", "  backoffLimit: 2\n  parallelism: 4\n  completions: 8\n"),
        sbatch={"array": "0-7%4"},
        fidelity={"parallelism 4": APPROXIMATED},
    )


# ---------------------------------------------------------------------------
# Placement


def in_queue(queue: str) -> str:
    """The test job, submitted to a Kueue queue."""
    return JOB.replace(
        "metadata: {name: pi, namespace: demo}",
        f"metadata:\n  name: pi\n  labels: {{kueue.x-k8s.io/queue-name: {queue}}}",
    )


def on_nodes(selector: str, job: str = JOB) -> str:
    """The test job with a node selector (a YAML flow mapping)."""
    return job.replace(
        "      restartPolicy: Never\n", f"      restartPolicy: Never\n      nodeSelector: {selector}\n"
    )


def test_queue_maps_back_to_its_partition() -> None:
    validate_manifest(
        in_queue("gpu-queue"), sbatch={"partition": "gpu"}, fidelity={"queue gpu-queue": MAPPED}
    )


def test_unknown_queue_is_reported() -> None:
    validate_manifest(
        in_queue("nosuch"), fidelity={"queue nosuch": DROPPED}, writer_codes={"TO-SLURM-QUEUE-UNMAPPED"}
    )


def test_a_queue_no_partition_mirrors_is_unmapped_whatever_the_node_selector_says() -> None:
    """The partition comes from the node selector pool=queue-a100, not from the queue: the queue is lost."""
    config = ir.replace(
        SITE,
        partitions=(
            ("gpu", ir.replace(dict(SITE.partitions)["gpu"], node_selector=(("pool", "queue-a100"),))),
        ),
    )
    validate_manifest(
        on_nodes("{pool: queue-a100}", in_queue("nosuch")),
        config=config,
        sbatch={"partition": "gpu"},
        fidelity={"queue nosuch": DROPPED, "placement: partition gpu": MAPPED},
        writer_codes={"TO-SLURM-QUEUE-UNMAPPED"},
    )


def test_node_selector_names_a_partition_or_is_dropped() -> None:
    validate_manifest(
        on_nodes("{pool: cpu, disk: nvme}"),
        sbatch={"partition": "cpu"},
        fidelity={"nodeSelector disk=nvme": DROPPED},
        writer_codes={"TO-SLURM-NODE-SELECTOR"},
    )


def test_node_selector_becomes_a_constraint_when_the_site_names_the_feature() -> None:
    config = ir.replace(SITE, features=(("nvme", (("disk", "nvme"),)),))
    validate_manifest(
        on_nodes("{pool: cpu, disk: nvme}"), config=config, sbatch={"constraint": "nvme"}, writer_codes=()
    )


def test_gpu_product_label_picks_the_partition_of_that_model() -> None:
    text = on_nodes("{nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB}")
    validate_manifest(
        text, sbatch={"partition": "gpu", "gres": "gpu:2"}, fidelity={"partition gpu": APPROXIMATED}
    )
    validate_manifest(text, config=None, writer_codes={"TO-SLURM-GPU-TYPE", "TO-SLURM-NODE-SELECTOR"})


# ---------------------------------------------------------------------------
# Environment and secrets


ENV_JOB = """
apiVersion: v1
kind: Secret
metadata: {name: hf}
stringData: {token: super-secret-value-123}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
data: {project: "it's $(fun)"}
---
apiVersion: batch/v1
kind: Job
metadata: {name: envs}
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: c
          image: busybox
          command: ["printenv"]
          env:
            - {name: PLAIN, value: "a b $(PLAIN0)"}
            - name: HF_TOKEN
              valueFrom: {secretKeyRef: {name: hf, key: token}}
            - name: PROJECT
              valueFrom: {configMapKeyRef: {name: settings, key: project}}
            - name: NODE
              valueFrom: {fieldRef: {fieldPath: spec.nodeName}}
          envFrom:
            - secretRef: {name: s3}
              prefix: S3_
"""


def test_secrets_are_read_at_run_time_and_never_written() -> None:
    checked = validate_manifest(
        ENV_JOB,
        contains=[
            'HF_TOKEN=$(migrate_read "${MIGRATE_SECRETS_DIR:-$HOME/.migrate/secrets}" hf token) || exit 1',
            "migrate_env_dir",
            "S3_",
        ],
        lacks=["super-secret-value-123"],
        fidelity={"env HF_TOKEN": APPROXIMATED},
    )
    secret_diags = [d for d in checked.written.diagnostics if d.code == "TO-SLURM-SECRET"]
    assert any("$MIGRATE_SECRETS_DIR/hf/token" in d.message for d in secret_diags)


def test_config_map_values_in_the_same_file_are_inlined() -> None:
    validate_manifest(
        ENV_JOB,
        contains=["export PROJECT='it'\\''s $(fun)'", 'export NODE="$(hostname)"'],
        fidelity={"env PROJECT": MAPPED, "env NODE": APPROXIMATED},
    )


def test_pyxis_lets_the_job_env_win_over_the_image() -> None:
    validate_manifest(ENV_JOB, contains=["--container-env=PLAIN,HF_TOKEN,PROJECT,NODE"])


# ---------------------------------------------------------------------------
# Volumes and ConfigMap scripts


CM_JOB = """
apiVersion: v1
kind: ConfigMap
metadata: {name: scripts}
data:
  run.sh: |
    #!/bin/bash
    echo "it's $1" > /out/x
---
apiVersion: batch/v1
kind: Job
metadata: {name: cm}
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: c
          image: ghcr.io/org/tool:1
          command: ["/bin/bash", "/scripts/run.sh", "arg one"]
          volumeMounts:
            - {name: s, mountPath: /scripts}
            - {name: data, mountPath: /data}
            - {name: other, mountPath: /other}
            - {name: host, mountPath: /results}
      volumes:
        - {name: s, configMap: {name: scripts, defaultMode: 0755}}
        - {name: data, persistentVolumeClaim: {claimName: fsx-pvc}}
        - {name: other, persistentVolumeClaim: {claimName: unknown-claim}}
        - {name: host, hostPath: {path: /var/log/x}}
"""


def test_config_map_script_is_written_out_and_mounted() -> None:
    checked = validate_manifest(
        CM_JOB,
        contains=[
            "printf '%s' '#!/bin/bash\necho \"it'\\''s $1\" > /out/x\n' > \"$MIGRATE_FILES/scripts/run.sh\"",
            "--container-image='ghcr.io#org/tool:1'",
            '--container-mounts="$MIGRATE_FILES/scripts":/scripts:ro,/fsx:/data,/var/log/x:/results',
            "/bin/bash /scripts/run.sh 'arg one'",
        ],
        fidelity={"unknown-claim": DROPPED},
        writer_codes={"TO-SLURM-VOLUME"},
    )
    statically_valid(checked.text)


PVC_JOB = """
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: fsx-pvc}
spec:
  accessModes: [ReadWriteMany]
  storageClassName: fsx-sc
  resources: {requests: {storage: 1200Gi}}
---
apiVersion: batch/v1
kind: Job
metadata: {name: pi}
spec:
  backoffLimit: 0
  activeDeadlineSeconds: 5400
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: pi
          image: nvcr.io/nvidia/pytorch:24.03-py3
          command: ["python", "/data/pi.py"]
          volumeMounts: [{name: data, mountPath: /data}]
      volumes: [{name: data, persistentVolumeClaim: {claimName: fsx-pvc}}]
"""


def test_a_claim_the_site_maps_to_a_file_system_loses_nothing(tmp_path: Path) -> None:
    """The PVC of the same file is the site's /fsx: mapped as a volume and as a claim, and --strict passes."""
    jobs = [j for j in manifest(tmp_path, PVC_JOB) if j.kind == "Job"]
    result = translate_jobs(jobs, to="slurm", config=SITE)
    (t,) = result.translations
    assert "/fsx:/data" in script(t)
    assert [e.item for e in t.fidelity.entries if e.status == FidelityStatus.DROPPED] == []
    assert entry(t, "PersistentVolumeClaim")[0] == FidelityStatus.MAPPED
    assert not result.strict
    unmapped = translate_jobs(jobs, to="slurm", config=None).translations[0]
    assert entry(unmapped, "PersistentVolumeClaim")[0] == FidelityStatus.DROPPED


def test_kubectls_copy_of_the_object_is_no_loss() -> None:
    """kubectl's last-applied annotation repeats the manifest: translating the manifest keeps it all."""
    text = JOB.replace(
        "metadata: {name: pi, namespace: demo}",
        "metadata:\n  name: pi\n  annotations:\n"
        '    kubectl.kubernetes.io/last-applied-configuration: \'{"kind": "Job"}\'',
    )
    validate_manifest(text, fidelity={"last-applied-configuration": MAPPED})


def test_without_a_runtime_the_script_path_is_rewritten() -> None:
    # /fsx is not at /data without a container
    text = validate_manifest(CM_JOB, runtime="none", fidelity={"volumeMount /data": APPROXIMATED}).text
    launch = next(line for line in text.splitlines() if line.startswith("srun "))
    assert launch == "srun /bin/bash \"$MIGRATE_FILES/scripts\"/run.sh 'arg one'"


def test_apptainer_runs_the_docker_image_with_binds() -> None:
    validate_manifest(
        CM_JOB.replace(
            "ghcr.io/org/tool:1", "ghcr.io/org/tool:1\n          resources: {limits: {nvidia.com/gpu: 1}}"
        ),
        runtime="apptainer",
        contains=[
            'apptainer exec --nv --bind "$MIGRATE_FILES/scripts":/scripts:ro --bind /fsx:/data',
            "docker://ghcr.io/org/tool:1 /bin/bash /scripts/run.sh 'arg one'",
        ],
    )


ENTRYPOINT_JOB = JOB.replace('command: ["python", "-c", "print(\'hi there\')"]', 'args: ["--flag", "x y"]')


def test_args_without_command_run_the_image_entrypoint() -> None:
    validate_manifest(ENTRYPOINT_JOB, contains=["--container-entrypoint --flag 'x y'"])
    validate_manifest(
        ENTRYPOINT_JOB, runtime="none", contains=["exit 1"], writer_codes={"TO-SLURM-NO-COMMAND"}
    )


def test_shifter_names_the_image_of_the_job_once_and_runs_each_step_in_it() -> None:
    text = validate_manifest(CM_JOB, runtime="shifter", sbatch={"image": "docker:ghcr.io/org/tool:1"}).text
    launch = next(line for line in text.splitlines() if line.startswith("srun "))
    assert launch.startswith("srun shifter --volume=")
    assert "--image" not in launch  # the job's image, from the SPANK option
    assert launch.endswith("/bin/bash /scripts/run.sh 'arg one'")
    assert slurmcheck.check_text(text).accepted  # a plugin option the reader knows


def test_shifter_takes_the_image_of_the_first_pods_as_the_jobs() -> None:
    first, second = "registry.example/train:1", "registry.example/eval:2"
    validate_manifest(
        PYTORCHJOB.replace(first, second, 1), runtime="shifter", sbatch={"image": f"docker:{second}"}
    )


def test_shifter_cannot_run_the_image_entrypoint() -> None:
    validate_manifest(ENTRYPOINT_JOB, runtime="shifter", writer_codes={"TO-SLURM-NO-COMMAND"})


def test_podman_hpc_runs_the_command_in_place_of_the_entrypoint_with_the_variables_it_needs() -> None:
    text = validate_manifest(PYTORCHJOB, runtime="podman-hpc", sbatch={"image": ABSENT}).text
    launch = next(line for line in text.splitlines() if line.startswith("srun "))
    assert "podman-hpc run --rm --gpu -e 'SLURM_*' -e 'MASTER_*'" in launch
    assert "--entrypoint= registry.example/train:1 " in launch
    assert launch.endswith("python train.py --epochs 3")
    validate_manifest(
        ENTRYPOINT_JOB,
        runtime="podman-hpc",
        contains=["nvcr.io/nvidia/pytorch:24.03-py3 --flag 'x y'"],  # the image's own entrypoint
        lacks=["--entrypoint"],
    )


# ---------------------------------------------------------------------------
# Distributed launchers


PYTORCHJOB = """
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: ddp}
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          containers:
            - name: pytorch
              image: registry.example/train:1
              command: ["python", "train.py", "--epochs", "3"]
              resources: {limits: {nvidia.com/gpu: 4, cpu: "32", memory: 200Gi}}
    Worker:
      replicas: 3
      template:
        spec:
          containers:
            - name: pytorch
              image: registry.example/train:1
              command: ["python", "train.py", "--epochs", "3"]
              resources: {limits: {nvidia.com/gpu: 4, cpu: "32", memory: 200Gi}}
"""


def test_pytorchjob_of_python_per_pod_is_one_task_per_pod_with_the_operators_ranks() -> None:
    """The operator starts ``python train.py`` once per pod and sets RANK/WORLD_SIZE: 4 processes, not 16."""
    text = validate_manifest(
        PYTORCHJOB.replace("nvidia.com/gpu: 4", "nvidia.com/gpu: 8"),
        sbatch={"nodes": "4", "ntasks-per-node": "1", "gres": "gpu:8"},
        contains=[
            'MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n1)',
            "srun --container-image='registry.example#train:1' bash -c 'export RANK=$SLURM_PROCID "
            "WORLD_SIZE=$SLURM_NTASKS PET_NODE_RANK=$SLURM_PROCID PET_NPROC_PER_NODE=auto "
            "PET_MASTER_ADDR=$MASTER_ADDR PET_MASTER_PORT=$MASTER_PORT PET_NNODES=$SLURM_NTASKS; exec",
        ],
        lacks=["torchrun", "LOCAL_RANK"],  # the operator sets none: a program would take it for torchrun's
    ).text
    assert text.rstrip().endswith("migrate-torch-env python train.py --epochs 3")


def test_the_operators_world_size_counts_nproc_per_node_and_only_a_master_gives_ranks() -> None:
    """training-operator v1.7+: WORLD_SIZE is pods times nprocPerNode where the job has a Master; a
    Worker-only elastic job's pods get no RANK, WORLD_SIZE or MASTER_ADDR, and PET_NNODES min:max."""
    with_nproc = PYTORCHJOB.replace(
        "spec:\n  pytorchReplicaSpecs:", 'spec:\n  nprocPerNode: "4"\n  pytorchReplicaSpecs:', 1
    )
    validate_manifest(with_nproc, contains=["WORLD_SIZE=$((SLURM_NTASKS * 4))", "PET_NPROC_PER_NODE=4 "])
    elastic = (CORPUS / "cases" / "kubernetes" / "pytorchjob_elastic.yaml").read_text(encoding="utf-8")
    validate_manifest(
        elastic,
        contains=[
            "bash -c 'export PET_RDZV_ENDPOINT=$MASTER_ADDR:$MASTER_PORT PET_RDZV_BACKEND=c10d "
            "PET_NNODES=2:6 PET_MAX_RESTARTS=20; unset MASTER_ADDR MASTER_PORT; exec"
        ],
        lacks=["RANK=", "WORLD_SIZE="],
    )


def test_pytorchjob_running_torchrun_keeps_one_agent_per_pod() -> None:
    validate_manifest(
        PYTORCHJOB.replace('["python", "train.py"', '["torchrun", "--nproc_per_node=4", "train.py"'),
        contains=[
            'torchrun --nnodes="$SLURM_NTASKS" --rdzv_id="$SLURM_JOB_ID" --rdzv_backend=c10d '
            '--rdzv_endpoint="$MASTER_ADDR:$MASTER_PORT" --nproc_per_node=4 train.py --epochs 3'
        ],
    )


TRAINJOB_TORCHRUN = """
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: js}
spec:
  replicatedJobs:
    - name: init
      replicas: 1
      template:
        spec:
          template:
            spec:
              containers:
                - {name: i, image: busybox, command: ["sh", "-c", "echo init"]}
    - name: trainer
      replicas: 1
      dependsOn: [{name: init, status: Complete}]
      template:
        spec:
          parallelism: 2
          completions: 2
          completionMode: Indexed
          template:
            spec:
              containers:
                - name: t
                  image: busybox
                  command: ["torchrun", "--nnodes=2", "--node_rank=$(JOB_COMPLETION_INDEX)",
                            "--master_addr=js-trainer-0-0.js", "--nproc_per_node=8", "train.py"]
"""


def test_jobset_depends_on_becomes_chained_scripts(tmp_path: Path) -> None:
    t = translate(tmp_path, TRAINJOB_TORCHRUN)
    assert sorted(t.files) == ["init.sbatch", "submit.sh", "trainer.sbatch"]
    submit = t.files["submit.sh"]
    assert "jid_js_init=$(sbatch --parsable init.sbatch)" in submit
    assert (
        'jid_js_trainer=$(sbatch --parsable --dependency="afterok:${jid_js_init}" trainer.sbatch)' in submit
    )
    trainer = t.files["trainer.sbatch"]
    assert sbatch_options(trainer)["nodes"] == "2"
    assert "--node_rank" not in trainer and "--master_addr" not in trainer and "--nproc_per_node=8" in trainer
    assert t.flavor == "sbatch-chain"
    assert entry(t, "js-trainer dependsOn js-init")[0] == FidelityStatus.MAPPED


MPIJOB = """
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata: {name: mpi}
spec:
  slotsPerWorker: 8
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template:
        spec:
          containers:
            - name: l
              image: registry.example/hpc:1
              command: ["mpirun", "--allow-run-as-root", "-np", "16", "-x", "OMP_NUM_THREADS=4",
                        "lmp", "-in", "in.lj"]
    Worker:
      replicas: 2
      template:
        spec:
          containers:
            - {name: w, image: registry.example/hpc:1, resources: {limits: {cpu: "64"}}}
"""


def test_mpijob_runs_its_ranks_with_srun_pmix() -> None:
    text = validate_manifest(
        MPIJOB,
        sbatch={"nodes": "2", "ntasks-per-node": "8", "cpus-per-task": "8"},
        contains=[
            "export OMP_NUM_THREADS=4",
            "srun --mpi=pmix --container-image='registry.example#hpc:1' --container-env=OMP_NUM_THREADS "
            "bash -c 'export OMPI_COMM_WORLD_RANK=$SLURM_PROCID",
        ],
        fidelity={"mpirun --allow-run-as-root": APPROXIMATED},
    ).text
    assert text.rstrip().endswith("migrate-mpi-env lmp -in in.lj")  # each rank sees what mpirun tells it


RAYJOB = """
apiVersion: ray.io/v1
kind: RayJob
metadata: {name: ray}
spec:
  entrypoint: python run.py --n 'x y'
  rayClusterSpec:
    headGroupSpec:
      rayStartParams: {num-cpus: "0"}
      template:
        spec:
          containers: [{name: h, image: rayproject/ray:2.30.0, resources: {limits: {cpu: "4"}}}]
    workerGroupSpecs:
      - groupName: w
        replicas: 2
        rayStartParams: {}
        template:
          spec:
            containers:
              - {name: w, image: rayproject/ray:2.30.0, resources: {limits: {cpu: "8", nvidia.com/gpu: 1}}}
"""


def test_rayjob_starts_a_ray_cluster_inside_the_allocation() -> None:
    checked = validate_manifest(
        RAYJOB,
        sbatch={"nodes": "3", "cpus-per-task": "8", "gres": "gpu:1"},
        fidelity={"Ray cluster": APPROXIMATED},
        lacks=["sleep 10"],
        contains=[
            # KubeRay's resources per role: the head's rayStartParams win over its CPU limit
            "ray start --head --port=6379 --block --num-cpus=0 &",
            'srun --nodes=2 --ntasks=2 -w "$(IFS=,; echo "${ray_nodes[*]:1:2}")"',
            'ray start --address="$RAY_ADDRESS" --block --num-cpus=8 --num-gpus=1 &',
            # no fixed wait: the workers wait for the head's port, the entrypoint for all 3 nodes
            "/dev/tcp/$ray_head_ip/6379",
            "' 3 &&",
            "bash -c 'python run.py --n '\\''x y'\\'''",
        ],
    )
    statically_valid(checked.text)


VOLCANO = """
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: vc}
spec:
  minAvailable: 3
  schedulerName: volcano
  tasks:
    - name: worker
      replicas: 3
      template:
        spec:
          containers: [{name: w, image: busybox, command: ["hostname"]}]
"""


def test_volcano_gang_is_one_allocation_of_its_replicas() -> None:
    # pods that ask for nothing: one per node assumed, never the whole node
    validate_manifest(
        VOLCANO, sbatch={"nodes": "3", "exclusive": ABSENT}, fidelity={"spec.minAvailable": MAPPED}
    )


CRONJOB = """
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly}
spec:
  schedule: "30 2 * * *"
  timeZone: Europe/Berlin
  concurrencyPolicy: Forbid
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers: [{name: c, image: busybox, command: ["date"]}]
"""


def test_cronjob_becomes_a_scrontab_entry_and_a_script(tmp_path: Path) -> None:
    t = translate(tmp_path, CRONJOB)
    assert sorted(t.files) == ["job.sbatch", "scrontab"]
    entry_text = t.files["scrontab"]
    assert "#SCRON --job-name=nightly" in entry_text
    assert "30 2 * * * bash $HOME/migrate-jobs/nightly/job.sbatch" in entry_text
    assert slurmcheck.check_scrontab(entry_text).accepted
    assert entry(t, "timeZone")[0] == FidelityStatus.APPROXIMATED
    assert entry(t, "concurrencyPolicy Forbid")[0] == FidelityStatus.MAPPED
    assert t.flavor == "scrontab"


def test_serving_workloads_stay_on_kubernetes(tmp_path: Path) -> None:
    text = """
    apiVersion: apps/v1
    kind: Deployment
    metadata: {name: api}
    spec:
      replicas: 2
      selector: {matchLabels: {app: api}}
      template:
        metadata: {labels: {app: api}}
        spec:
          containers: [{name: c, image: nginx}]
    """
    checked = validate_manifest(text, fidelity={"Deployment api": DROPPED}, writer_codes={"TO-SLURM-SERVING"})
    assert checked.written.files == {}


# ---------------------------------------------------------------------------
# Fidelity coverage and options


def test_every_env_var_mount_and_raw_item_has_an_entry(tmp_path: Path) -> None:
    for text in (ENV_JOB, CM_JOB, INDEXED, JOB):
        jobs = [j for j in manifest(tmp_path, text) if j.kind == "Job"]
        t = translate_job(jobs[0], SITE, "pyxis")
        items = " | ".join(e.item for e in t.fidelity.entries)
        for comp in jobs[0].components:
            for var in comp.environment:
                if var.origin in ("env", "fieldRef"):
                    assert f"env {var.name}" in items
            for container in comp.containers:
                for mount in container.mounts:
                    assert f"volumeMount {mount.target}" in items
        for item in jobs[0].raw:
            assert any((item.origin or item.key) in e.item for e in t.fidelity.entries), item
        assert all(e.reason for e in t.fidelity.entries)


def test_every_emitted_option_is_in_the_option_table(in_repo: Path) -> None:
    jobs = [
        j
        for j in scanner.scan(["corpus/cases/kubernetes", "corpus/sample-site"]).jobs
        if j.source.format == "kubernetes"
    ]
    result = translate_jobs(jobs, to="slurm", config=SAMPLE_SITE)
    scripts = {p: text for p, text in result.tree.files.items() if p.endswith(".sbatch")}
    assert len(scripts) > 30
    for path, text in scripts.items():
        result_ = slurmcheck.check_text(text, path)
        assert result_.accepted, (path, result_.message)


def test_translation_tree_and_top_level_submit(in_repo: Path) -> None:
    prep = ir.Job(
        "a.sbatch#prep",
        ir.SourceRef("a.sbatch", "slurm"),
        "sbatch",
        name="prep",
        script=ir.ScriptInfo(body="true\n"),
    )
    train = ir.Job(
        "b.sbatch#train",
        ir.SourceRef("b.sbatch", "slurm"),
        "sbatch",
        name="train",
        dependencies=(ir.Dependency("afterok", ("prep",)),),
        script=ir.ScriptInfo(body="true\n"),
    )
    result = translate_jobs([train, prep], to="slurm")
    files = result.tree.files
    assert sorted(files) == ["prep/job.sbatch", "submit.sh", "train/job.sbatch", "translation.json"]
    submit = files["submit.sh"]
    assert submit.index("jid_prep=$(sbatch --parsable prep/job.sbatch)") < submit.index(
        'jid_train=$(sbatch --parsable --dependency="afterok:${jid_prep}" train/job.sbatch)'
    )
    assert result.tree.modes["submit.sh"] == 0o755
    assert '"target": "slurm"' in files["translation.json"]


def test_volcano_jobflow_is_chained_by_submit_sh(in_repo: Path) -> None:
    jobs = scanner.scan(["corpus/cases/kubernetes/volcano_jobflow.yaml"]).jobs
    result = translate_jobs(jobs, to="slurm", config=SAMPLE_SITE)
    submit = result.tree.files["submit.sh"]
    assert "--dependency=" in submit


# ---------------------------------------------------------------------------
# Quoting: what bash hands the program is byte for byte what the manifest said

_PIECES = st.sampled_from(
    [
        "$(E0)",
        "$(E1)",
        "$$",
        "$(",
        "$(NOPE)",
        "$$(E0)",
        "`id`",
        "$(id)",
        "'",
        '"',
        "\\",
        "\n",
        "!",
        "*",
        " ",
        "~",
        "=",
        "%",
    ]
)
_TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\0"), max_size=12)
_WORDS = st.lists(_TEXT | _PIECES, max_size=4).map("".join)


def kubelet_expand(text: str, env: dict[str, str]) -> str:
    """The kubelet's expansion, written from its rules: $$ -> $, $(NAME) -> value when NAME is defined."""
    out, i = "", 0
    while i < len(text):
        if text.startswith("$$", i):
            out, i = out + "$", i + 2
        elif text.startswith("$(", i) and ")" in text[i + 2 :]:
            name = text[i + 2 : text.index(")", i + 2)]
            out += env.get(name, f"$({name})")
            i += len(name) + 3
        elif text[i] == "$" and i + 1 < len(text):
            out, i = out + text[i : i + 2], i + 2
        else:
            out, i = out + text[i], i + 1
    return out


def fake_srun(tmp: Path) -> Path:
    folder = tmp / "bin"
    folder.mkdir(exist_ok=True)
    srun = folder / "srun"
    srun.write_text('#!/bin/bash\nwhile [[ ${1:-} == -* ]]; do shift; done\nexec "$@"\n')
    srun.chmod(srun.stat().st_mode | stat.S_IXUSR)
    return folder


@needs_bash
@settings(max_examples=60, deadline=None)
@given(args=st.lists(_WORDS, max_size=5), e0=_WORDS, e1=_WORDS)
def test_arguments_reach_the_program_byte_for_byte(
    tmp_path_factory: pytest.TempPathFactory, args: list[str], e0: str, e1: str
) -> None:
    tmp = tmp_path_factory.mktemp("quote")
    env_defs: dict[str, str] = {}
    for name, raw in (("E0", e0), ("E1", e1)):
        env_defs[name] = kubelet_expand(raw, env_defs)  # an env value sees the variables before it
    job = ir.Job(
        "q",
        ir.SourceRef("q.yaml", "kubernetes"),
        "Job",
        name="q",
        components=(
            ir.Component(
                containers=(
                    ir.Container(
                        "busybox", runtime="kubernetes", command=("printf", "%s\\0"), args=tuple(args)
                    ),
                ),
                environment=(ir.EnvVar("E0", e0, origin="env"), ir.EnvVar("E1", e1, origin="env")),
            ),
        ),
        failure=ir.FailurePolicy(max_retries=0),
    )
    text = translate_job(job, None, "none").files["job.sbatch"]
    path = tmp / "job.sbatch"
    path.write_text(text, encoding="utf-8")
    env = {"PATH": f"{fake_srun(tmp)}:{os.environ['PATH']}", "LC_ALL": "C.UTF-8"}
    done = subprocess.run([BASH or "bash", str(path)], env=env, capture_output=True, timeout=20, check=False)
    assert done.returncode == 0, done.stderr
    expected = b"".join(kubelet_expand(a, env_defs).encode("utf-8") + b"\0" for a in args)
    if not args:
        expected = b"\0"  # printf with its format only
    assert done.stdout == expected


@given(
    value=st.text(
        st.characters(blacklist_categories=("Cs",), blacklist_characters="\0\r\n"), min_size=1, max_size=30
    )
)
def test_directive_values_read_back_as_written(value: str) -> None:
    line = f"#SBATCH --job-name={quoting.directive_word(value)}"
    words, error, _ = directives.tokenize(line[len("#SBATCH") :], 1)
    assert error is None
    assert [w.text for w in words] == [f"--job-name={value}"]


def test_kubevars_follow_the_kubelet() -> None:
    parts = kubevars.split("a$$b$(X)c$(Y)$(", {"X"})
    assert parts == ["a$b", kubevars.Ref("X"), "c$(Y)$("]
    assert kubevars.shell_text(parts) == "'a$b'\"${X}\"'c$(Y)$('"


def test_quoting_refuses_what_cannot_be_carried() -> None:
    assert quoting.shell_word("a b\0c") == "'a b'"  # cut at the NUL, as execve() does
    with pytest.raises(quoting.UnquotableError):
        quoting.directive_word("a\nb")
    assert quoting.shell_word("") == "''"
    assert quoting.command_words(["time", "x"]) == "'time' x"


# ---------------------------------------------------------------------------
# sbatch scripts written back: the options from the IR, spelled the long way


@pytest.mark.parametrize(
    ("source", "written"),
    [
        ("#SBATCH --nodes=2-4", None),
        ("#SBATCH -N 2", "#SBATCH --nodes=2"),
        (
            "#SBATCH -J train -p gpu -A proj",
            "#SBATCH --job-name=train\n#SBATCH --partition=gpu\n#SBATCH --account=proj",
        ),
        ("#SBATCH --time=1-02:03:04", None),
        ("#SBATCH -t 90", "#SBATCH --time=01:30:00"),
        ("#SBATCH --time=UNLIMITED", None),  # kept as written
        ("#SBATCH --mem=64G", None),
        ("#SBATCH --mem=100000", "#SBATCH --mem=100000M"),
        ("#SBATCH --mem=0", "#SBATCH --mem=0M"),  # all of the node's memory
        ("#SBATCH --gres=gpu:a100:4,nvme:1", None),
        ("#SBATCH --gpus-per-node=a100:4", "#SBATCH --gres=gpu:a100:4"),
        ("#SBATCH -G 16", "#SBATCH --gpus=16"),
        ("#SBATCH --gpus=a100:2,v100:1", None),
        ("#SBATCH --tres-per-task=cpu=4,gres/gpu:1", "#SBATCH --cpus-per-task=4\n#SBATCH --gpus-per-task=1"),
        (
            "#SBATCH -N 3 --exclusive --gres=gpu:8",
            "#SBATCH --nodes=3\n#SBATCH --gres=gpu:8\n#SBATCH --exclusive",
        ),
        ("#SBATCH --exclusive=user", None),
        ("#SBATCH -L matlab:2", "#SBATCH --licenses=matlab:2"),
        ("#SBATCH --constraint='a100&ib'", "#SBATCH --constraint=a100&ib"),
        ("#SBATCH --array=0-15:4%2", None),
        ("#SBATCH --dependency=singleton", None),
        ("#SBATCH --dependency=afterok:1", ""),  # submit.sh passes it, with the new job id
        ("#SBATCH --no-requeue -H", "#SBATCH --hold\n#SBATCH --no-requeue"),
        ("#SBATCH --signal=B:USR1@300", None),
        ("#SBATCH --mail-type=END --mail-type=FAIL", "#SBATCH --mail-type=END,FAIL"),
        ("#SBATCH --export=ALL,CKPT=/fsx/ckpt,HOME", None),
        ("#SBATCH --job-name='my job'", '#SBATCH --job-name="my job"'),
        (
            r"#SBATCH --container-image=nvcr.io\#nvidia/pytorch:24.03-py3",
            '#SBATCH --container-image="nvcr.io#nvidia/pytorch:24.03-py3"',
        ),
        ("#SBATCH --wckey=projA", None),  # no typed field: kept as written
        ("#SBATCH --parsable", ""),  # sbatch takes it on its command line only
        (
            "#SBATCH -N 1\n#SBATCH hetjob\n#SBATCH -N 2 -c 4",
            "#SBATCH --nodes=1\n#SBATCH hetjob\n#SBATCH --nodes=2\n#SBATCH --cpus-per-task=4",
        ),
    ],
)
def test_sbatch_options_are_written_back(source: str, written: str | None) -> None:
    validate_identity(source, written)


def test_ntasks_per_gpu_is_written_back() -> None:
    validate_all("#SBATCH -N 2 --gpus-per-node=4 --ntasks-per-gpu=2", sbatch={"ntasks-per-gpu": "2"})


# ---------------------------------------------------------------------------
# Goldens: corpus/golden/to-slurm/<input>.json (pytest --update-golden rewrites them)

TO_SLURM_GOLDEN = GOLDEN / "to-slurm"
KUBERNETES_INPUTS = [
    str(p.relative_to(REPO))
    for top in ("cases/kubernetes", "cases/argo", "sample-site")
    for p in sorted((CORPUS / top).rglob("*"))
    if p.is_file()
    and (p.suffix in (".yaml", ".yml") or top == "cases/kubernetes")
    and p.name != "migrate.yaml"
]
VARIANTS = {
    "apptainer": ("apptainer", SAMPLE_SITE),
    "none": ("none", SAMPLE_SITE),
    "no-site-config": ("pyxis", None),
}


def golden_of(rel: str) -> dict[str, object]:
    jobs = scanner.scan([rel]).jobs
    out = []
    for job in jobs:
        t = translate_job(job, SAMPLE_SITE, "pyxis")
        item: dict[str, object] = {
            "job": job.id,
            "flavor": t.flavor,
            "flavor_reason": t.flavor_reason,
            "files": dict(sorted(t.files.items())),
            "fidelity": t.fidelity.to_list(),
            "diagnostics": [d.to_dict() for d in t.diagnostics],
            "variants": {},
        }
        for variant, (runtime, config) in VARIANTS.items():
            v = translate_job(job, config, runtime)
            item["variants"][variant] = {  # type: ignore[index]
                "counts": v.fidelity.counts(),
                "diagnostics": [d.to_dict() for d in v.diagnostics if d.code.startswith("TO-SLURM-")],
            }
        out.append(item)
    return {"source": rel, "jobs": out}


@pytest.mark.parametrize("rel", KUBERNETES_INPUTS)
def test_to_slurm_golden(rel: str, in_repo: Path, update_golden: bool) -> None:
    check_json(TO_SLURM_GOLDEN / (rel.removeprefix("corpus/") + ".json"), golden_of(rel), update_golden)


def test_every_to_slurm_code_appears_in_a_golden(in_repo: Path) -> None:
    seen: set[str] = set()
    for golden in TO_SLURM_GOLDEN.rglob("*.json"):
        seen |= set(re.findall(r'"code": "(TO-SLURM-[A-Z-]+)"', golden.read_text(encoding="utf-8")))
    assert sorted(c for c in CODES if c.startswith("TO-SLURM-") and c not in seen) == []


def test_same_input_gives_the_same_bytes(in_repo: Path) -> None:
    jobs = scanner.scan(["corpus/cases/kubernetes", "corpus/sample-site/k8s-batch"]).jobs
    a = translate_jobs(jobs, to="slurm", config=SAMPLE_SITE).tree.files
    b = translate_jobs(jobs, to="slurm", config=SAMPLE_SITE).tree.files
    assert a == b


_NAMES = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=20)


@settings(max_examples=80, deadline=None)
@given(
    name=_NAMES,
    kind=st.sampled_from(
        ["Job", "CronJob", "JobSet", "PyTorchJob", "MPIJob", "RayJob", "VolcanoJob", "Pod", "LeaderWorkerSet"]
    ),
    replicas=st.lists(st.integers(0, 5), min_size=1, max_size=3),
    cpus=st.none() | st.integers(0, 300),
    mem=st.none() | st.integers(0, 4_000_000),
    gpus=st.none() | st.integers(0, 16),
    words=st.lists(_NAMES, max_size=4),
    deadline=st.none() | st.integers(0, 10**7),
    count=st.none() | st.integers(1, 5000),
)
def test_the_writer_never_raises_and_its_options_parse(
    name: str,
    kind: str,
    replicas: list[int],
    cpus: int | None,
    mem: int | None,
    gpus: int | None,
    words: list[str],
    deadline: int | None,
    count: int | None,
) -> None:
    resources = ir.Resources(cpus_per_node=cpus, mem_per_node_mb=mem, gpus_per_node=gpus)
    container = ir.Container("img", runtime="kubernetes", command=tuple(words[:1]), args=tuple(words[1:]))
    components = tuple(
        ir.Component(name=f"r{i}", replicas=n, resources=resources, containers=(container,), line=i + 1)
        for i, n in enumerate(replicas)
    )
    array = ir.ArraySpec(f"0-{count - 1}", tuple(range(count)), count, 3) if count else None
    job = ir.Job(
        "x",
        ir.SourceRef("x.yaml", "kubernetes"),
        kind,
        name=name,
        components=components,
        time_limit_s=deadline,
        array=array,
        schedule=ir.Schedule("*/5 * * * *") if kind == "CronJob" else None,
    )
    for runtime in ("pyxis", "apptainer", "shifter", "podman-hpc", "none"):
        t = translate_job(job, SITE, runtime)
        for path, text in t.files.items():
            if path.endswith(".sbatch"):
                problems = [p for p in slurmcheck.header_problems(text, path) if "template" not in p]
                assert problems == [], text


def test_a_name_of_line_breaks_falls_back_to_the_folder_name() -> None:
    # '\x85' is a line break to str.splitlines: the directive would carry an empty name.
    from migrate import ir as _ir
    from migrate.translate import translate_jobs as _translate

    container = _ir.Container(image="busybox", command=("true",))
    job = _ir.Job(
        "m.yaml#Job/x",
        _ir.SourceRef("m.yaml", "kubernetes"),
        "Job",
        name="\x85",
        api_version="batch/v1",
        components=(_ir.Component(containers=(container,)),),
    )
    (t,) = _translate([job], to="slurm").translations
    script = t.files["job.sbatch"]
    assert f"#SBATCH --job-name={t.name}" in script


def test_a_blank_name_is_kept_as_written() -> None:
    from migrate import ir as _ir
    from migrate.translate import translate_jobs as _translate

    container = _ir.Container(image="busybox", command=("true",))
    job = _ir.Job(
        "m.yaml#Job/y",
        _ir.SourceRef("m.yaml", "kubernetes"),
        "Job",
        name=" ",
        api_version="batch/v1",
        components=(_ir.Component(containers=(container,)),),
    )
    (t,) = _translate([job], to="slurm").translations
    assert f"--job-name={t.name}" not in t.files["job.sbatch"]


JOBSET_INDICES = """
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: idx}
spec:
  replicatedJobs:
    - name: node
      replicas: 3
      template:
        spec:
          parallelism: 2
          completions: 2
          completionMode: Indexed
          template:
            spec:
              restartPolicy: Never
              containers:
                - name: main
                  image: registry.example/tools:1
                  command: ["/bin/bash", "-c", 'echo "$JOB $POD"']
                  env:
                    - name: JOB
                      valueFrom: {fieldRef: {fieldPath: "metadata.labels['jobset.sigs.k8s.io/job-index']"}}
                    - name: POD
                      valueFrom:
                        fieldRef:
                          fieldPath: "metadata.annotations['batch.kubernetes.io/job-completion-index']"
"""


@needs_bash
def test_each_srun_task_sees_its_own_pods_indices(tmp_path: Path) -> None:
    """3 Jobs of 2 pods: task i is Job i // 2, pod i % 2, as the JobSet's labels said."""
    text = validate_manifest(
        JOBSET_INDICES, runtime="none", sbatch={"nodes": "6"}, fidelity={"env JOB": MAPPED, "env POD": MAPPED}
    ).text
    # srun stand-in: run the step once per task with the task's SLURM_PROCID, in order
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "srun").write_text(
        '#!/bin/bash\nfor i in 0 1 2 3 4 5; do SLURM_PROCID=$i "$@" || exit 1; done\n', encoding="utf-8"
    )
    (fake / "srun").chmod(0o755)
    job = tmp_path / "job.sbatch"
    job.write_text(text, encoding="utf-8")
    env = {**os.environ, "PATH": f"{fake}:{os.environ['PATH']}"}
    done = subprocess.run([BASH or "bash", str(job)], env=env, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:-1] == ["0 0", "0 1", "1 0", "1 1", "2 0", "2 1"]


MPI_LAUNCHER_ENV = """
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata: {name: sweep}
spec:
  slotsPerWorker: 2
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template:
        spec:
          containers:
            - name: launcher
              image: registry.example/mpi:4.1
              env:
                - {name: RUN_MODE, value: sweep}
              command: [mpirun, -np, "4", -x, RUN_MODE, -x, RUN_TAG=a, python3, hello.py]
    Worker:
      replicas: 2
      template:
        spec:
          containers:
            - {name: worker, image: registry.example/mpi:4.1, command: [/usr/sbin/sshd, -De]}
"""


def test_mpirun_x_of_a_launcher_variable_passes_its_value(tmp_path: Path) -> None:
    """``-x NAME`` hands the ranks the Launcher's own NAME: the batch script sets it, as mpirun's part."""
    text = script(translate(tmp_path, MPI_LAUNCHER_ENV, runtime="none"))
    srun = text.index("srun --mpi=pmix")
    assert "export RUN_MODE=sweep\n" in text[:srun] and "export RUN_TAG=a\n" in text[:srun]


WORKDIR_JOB = """
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: wd}
spec:
  pytorchReplicaSpecs:
    Worker:
      replicas: {n}
      template:
        spec:
          nodeSelector: {pool: cpu}
          containers:
            - name: pytorch
              image: registry.example/tools:1
              workingDir: /shared/runs/wd
              command: [python, train.py]
              resources: {requests: {cpu: "16"}}
"""


@pytest.mark.parametrize(
    ("pods", "made"), [(1, "mkdir -p /shared/runs/wd"), (8, "--ntasks-per-node=1 --ntasks=3 mkdir")]
)
def test_a_working_folder_is_made_as_a_container_runtime_makes_it(
    tmp_path: Path, pods: int, made: str
) -> None:
    """Without a runtime, srun --chdir to a missing folder starts in /tmp: the script makes it first,
    once on every node the pods share (8 pods of 16 CPUs: 3 to a 64-CPU node of 62 for pods, 3 nodes)."""
    text = script(translate(tmp_path, WORKDIR_JOB.replace("{n}", str(pods)), runtime="none"))
    lines = text.splitlines()
    step = next(i for i, line in enumerate(lines) if "--chdir=/shared/runs/wd" in line)
    assert any(made in line for line in lines[:step]), text


@pytest.mark.parametrize(
    ("ports", "expected"),
    [("", 23456), ("ports: [{name: pytorchjob-port, containerPort: 29400}]", 29400)],
)
def test_a_pytorchjobs_master_port_is_the_operators(ports: str, expected: int) -> None:
    """The training operator gives every pod the Master's port pytorchjob-port as MASTER_PORT, else
    23456 (the reverse sweep ran python per pod with MASTER_PORT 29500 under sbatch, 23456 in pods)."""
    master = '              command: ["python", "train.py", "--epochs", "3"]\n'
    manifest = PYTORCHJOB.replace(master, master + f"              {ports}\n", 1)
    ports_seen = {"components.*.rendezvous_port": [expected, expected]}
    validate_manifest(manifest, ir=ports_seen, contains=[f"MASTER_PORT={expected}\n"])


# A PyTorchJob whose Master prepares the output folder in an init container, as the operator's users
# write it: the same program on both roles, so one 2-node torch job with the init step on node 0.
INIT_PTJ = """\
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: vit}
spec:
  pytorchReplicaSpecs:
    Master:
      restartPolicy: Never
      replicas: 1
      template:
        spec:
          initContainers:
          - {name: prepare, image: registry.example/cuda:12, command: [/bin/bash, -c, "mkdir -p /out/vit"]}
          - name: agent
            image: registry.example/log-agent:1
            restartPolicy: Always
            command: [agent, --follow]
          containers:
          - name: pytorch
            image: registry.example/cuda:12
            command: [torchrun, --nproc_per_node, "2", train.py]
    Worker:
      replicas: 1
      template:
        spec:
          containers:
          - name: pytorch
            image: registry.example/cuda:12
            command: [torchrun, --nproc_per_node, "2", train.py]
"""


def test_an_init_container_runs_before_the_program_on_its_pods_node_and_never_replaces_it() -> None:
    text = validate_manifest(
        INIT_PTJ,
        sbatch={"nodes": "2", "hetjob": ABSENT},
        fidelity={
            "container prepare": (FidelityStatus.MAPPED, kube_steps.INIT_STEP),
            "container agent": FidelityStatus.DROPPED,
            "container pytorch": FidelityStatus.MAPPED,
        },
    ).text
    steps = [line for line in text.splitlines() if line.startswith("srun ")]
    assert len(steps) == 2, text
    assert "--nodes=1 --ntasks=1 --relative=0" in steps[0]
    assert steps[0].endswith("'mkdir -p /out/vit' || exit $?")
    assert "torchrun" in steps[1] and not any("agent --follow" in step for step in steps)


# Every pod of a Job of two parallel pods on one node each fetches its shard first.
INIT_EVERY_POD = """\
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: shards}
spec:
  replicatedJobs:
  - name: worker
    template:
      spec:
        parallelism: 2
        completions: 2
        template:
          spec:
            initContainers:
            - {name: fetch, image: registry.example/tools:1, command: [/bin/sh, -c, "cp /data/in /tmp/in"]}
            containers:
            - {name: main, image: registry.example/tools:1, command: [/bin/sh, -c, "wc -l /tmp/in"]}
"""


def test_the_init_container_every_pod_has_runs_once_a_task() -> None:
    text = validate_manifest(INIT_EVERY_POD, sbatch={"nodes": "2"}).text
    steps = [line for line in text.splitlines() if line.startswith("srun ")]
    assert len(steps) == 2 and "--relative" not in steps[0], text
    assert steps[0].endswith("'cp /data/in /tmp/in' || exit $?") and "wc -l" in steps[1]


def test_a_directory_or_create_host_path_is_made_on_every_node_and_a_directory_is_not() -> None:
    """The kubelet makes a hostPath of type DirectoryOrCreate; pyxis would refuse to mount a missing one."""
    made = INIT_EVERY_POD.replace(
        "            containers:\n",
        "            volumes:\n"
        "            - {name: logs, hostPath: {path: /var/log/shards, type: DirectoryOrCreate}}\n"
        "            containers:\n",
    ).replace(
        'command: [/bin/sh, -c, "wc -l /tmp/in"]}',
        'command: [/bin/sh, -c, "wc -l /tmp/in"],\n'
        "               volumeMounts: [{name: logs, mountPath: /logs}]}",
    )
    validate_manifest(
        made,
        contains=["srun --ntasks-per-node=1 --ntasks=2 mkdir -p /var/log/shards"],
        fidelity={"DirectoryOrCreate": FidelityStatus.MAPPED},
    )
    validate_manifest(made.replace("DirectoryOrCreate", "Directory"), lacks=["mkdir -p /var/log/shards"])


def test_a_pods_slurm_variables_are_left_to_slurm(tmp_path: Path) -> None:
    """A pod written from an sbatch script carries SLURM_* stand-ins; under sbatch they would override
    Slurm's own (srun reads SLURM_JOB_ID as --jobid: "Invalid numeric value"), so none is exported."""
    t = translate(
        tmp_path,
        """
        apiVersion: batch/v1
        kind: Job
        metadata: {name: tok}
        spec:
          completions: 2
          parallelism: 2
          completionMode: Indexed
          template:
            spec:
              restartPolicy: Never
              containers:
                - name: main
                  image: tools:1
                  command: ["python", "tok.py"]
                  env:
                    - {name: SLURM_JOB_ID, value: tok}
                    - {name: SLURM_NTASKS, value: "2"}
                    - {name: RAYON_NUM_THREADS, value: "8"}
                    - name: SLURM_PROCID
                      valueFrom:
                        fieldRef:
                          fieldPath: "metadata.annotations['batch.kubernetes.io/job-completion-index']"
        """,
    )
    text = script(t)
    assert "export RAYON_NUM_THREADS=8" in text
    assert not re.search(r"export SLURM_|SLURM_(JOB_ID|NTASKS|PROCID)=", text), text
    for name in ("SLURM_JOB_ID", "SLURM_NTASKS", "SLURM_PROCID"):
        assert entry(t, f"env {name}") == (
            FidelityStatus.DROPPED,
            "Slurm sets it in every job and step; the pod's value stood in for it",
        )
