"""The Kubernetes writer: one test per mapping, the SLURM_* emulation run with bash, validity.

``validate_all`` is the sqlglot-style helper: one sbatch script, the expected
parts of the workload manifest per flavor (dict subsets; list items match by
position).
"""

from __future__ import annotations

import atexit
import re
import shutil
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import CORPUS
from hypothesis import given, settings
from hypothesis import strategies as st
from k8s_run import documents, find, literal_env, pod_specs, run_pod
from podrunner import RunResult
from podrunner import testing as pods
from podrunner.testing import require_pods

from migrate import ir
from migrate.diagnostics import CODES, Collector
from migrate.fidelity import Translation
from migrate.site.config import parse_site_config
from migrate.translate import translate_jobs
from migrate.translators.kubernetes import validate, yamlemit
from migrate.translators.kubernetes.writer import translate_job
from migrate.translators.slurm import reader
from migrate.vocab import FidelityStatus

BASH = shutil.which("bash")
needs_bash = pytest.mark.skipif(BASH is None, reason="bash is needed to run the entrypoint")

SITE = parse_site_config(
    {
        "site": "testsite",
        "filesystems": [
            {"prefix": "/fsx", "kind": "lustre", "pvc": "fsx-pvc"},
            {"prefix": "/scratch", "kind": "local"},
        ],
        "partitions": {
            "gpu": {
                "nodes": 4,
                "gpus_per_node": 8,
                "gpu_type": "a100",
                "cpus_per_node": 96,
                "mem_gb": 1024,
                "queue": "gpu-queue",
                "node_selector": {"pool": "a100"},
            },
            "cpu": {"nodes": 8, "cpus_per_node": 64, "mem_gb": 256, "queue": "cpu-queue"},
        },
        "images": {"module:gromacs/2024": "registry.example/gromacs:2024"},
        "defaults": {"image": "registry.example/base:1", "namespace": "batch"},
    }
)

WORKLOAD_KINDS = {"Job", "JobSet", "PyTorchJob", "MPIJob", "CronJob"}


_FILES = Path(tempfile.mkdtemp(prefix="k8s-writer-test-"))
atexit.register(shutil.rmtree, _FILES, True)


def read(text: str, name: str = "job.sbatch") -> ir.Job:
    """The job of an sbatch script, read from a real file as a scan would."""
    path = _FILES / name
    path.write_text(text)
    jobs = reader.read(text, str(path), Collector(str(path)))
    assert jobs, "the reader found no job"
    return jobs[0]


def translate(text: str, flavor: str = "auto", config: Any = SITE, style: str = "auto") -> Translation:
    return translate_job(read(text), config, flavor, style=style)


def manifest_of(text: str) -> str:
    """The one file a translation of one job writes."""
    (manifest,) = translate(text).files.values()
    return manifest


def workload(t: Translation) -> dict[str, Any]:
    (text,) = t.files.values()
    docs = documents(text)
    return next(d for d in docs if d["kind"] in WORKLOAD_KINDS or d["apiVersion"].startswith("batch.volcano"))


def assert_subset(expected: Any, actual: Any, where: str = "") -> None:
    if isinstance(expected, dict):
        assert isinstance(actual, dict), f"{where}: expected a mapping, got {actual!r}"
        for key, value in expected.items():
            assert key in actual, f"{where}.{key} missing (have {sorted(actual)})"
            assert_subset(value, actual[key], f"{where}.{key}")
    elif isinstance(expected, list):
        assert isinstance(actual, list) and len(actual) >= len(expected), f"{where}: {actual!r}"
        for i, value in enumerate(expected):
            assert_subset(value, actual[i], f"{where}[{i}]")
    else:
        assert expected == actual, f"{where}: expected {expected!r}, got {actual!r}"


def validate_all(
    text: str, expected: dict[str, dict[str, Any]], config: Any = SITE
) -> dict[str, Translation]:
    out = {}
    for flavor, subset in expected.items():
        t = translate(text, flavor, config)
        assert_subset(subset, workload(t), flavor)
        for rel, content in t.files.items():
            assert validate.validate_documents(content, rel) == []
        out[flavor] = t
    return out


def entry(t: Translation, prefix: str) -> Any:
    found = [e for e in t.fidelity.entries if e.item.startswith(prefix)]
    assert found, f"no fidelity entry for {prefix!r}: {[e.item for e in t.fidelity.entries]}"
    return found[0]


def codes(t: Translation) -> set[str]:
    return {d.code for d in t.diagnostics}


def container(t: Translation, pod: int = 0) -> dict[str, Any]:
    (text,) = t.files.values()
    return pod_specs([d for d in documents(text) if d["kind"] != "ConfigMap"])[pod]["containers"][0]


def pod(t: Translation, index: int = 0) -> dict[str, Any]:
    (text,) = t.files.values()
    return pod_specs([d for d in documents(text) if d["kind"] != "ConfigMap"])[index]


SINGLE = """#!/bin/bash
#SBATCH --job-name=single
#SBATCH --cpus-per-task=4
#SBATCH --mem=16G
#SBATCH --time=01:30:00
python run.py
"""


# ---------------------------------------------------------------------------
# flavors


def test_single_node_job_in_every_flavor_that_can_take_it() -> None:
    validate_all(
        SINGLE,
        {
            "auto": {
                "apiVersion": "batch/v1",
                "kind": "Job",
                "spec": {"backoffLimit": 0, "activeDeadlineSeconds": 5400},
            },
            "job": {"kind": "Job", "metadata": {"name": "single", "namespace": "batch"}},
            "jobset": {"kind": "JobSet", "spec": {"replicatedJobs": [{"name": "node", "replicas": 1}]}},
            "volcano": {"kind": "Job", "spec": {"minAvailable": 1, "schedulerName": "volcano"}},
            "kueue": {
                "kind": "Job",
                "spec": {"suspend": True},
                "metadata": {
                    "labels": {
                        "kueue.x-k8s.io/queue-name": "default",
                        "kueue.x-k8s.io/max-exec-time-seconds": "5400",
                    }
                },
            },
        },
    )


def test_auto_choices_and_reasons() -> None:
    torch = (
        "#!/bin/bash\n#SBATCH -N 2\n#SBATCH --gpus-per-node=8\nsrun torchrun --nproc_per_node=8 train.py\n"
    )
    mpi = "#!/bin/bash\n#SBATCH -N 2\n#SBATCH --ntasks-per-node=32\nmpirun -np 64 ./lmp\n"
    srun_mpi = "#!/bin/bash\n#SBATCH -N 2\nsrun --mpi=pmix ./cfd\n"
    plain = "#!/bin/bash\n#SBATCH -N 3\nsrun hostname\n"
    array = "#!/bin/bash\n#SBATCH --array=0-9\necho $SLURM_ARRAY_TASK_ID\n"
    het = "#!/bin/bash\n#SBATCH -N1\n#SBATCH hetjob\n#SBATCH -N2\nsrun hostname\n"
    assert translate(torch).flavor == "pytorchjob"
    assert translate(mpi).flavor == "mpijob"
    assert translate(srun_mpi).flavor == "mpijob"
    assert translate(plain).flavor == "jobset"
    assert translate(array).flavor == "job"
    assert translate(het).flavor == "jobset"
    assert "heterogeneous" in translate(het).flavor_reason


def test_a_flavor_that_cannot_express_the_job_falls_back_with_a_reason() -> None:
    t = translate("#!/bin/bash\n#SBATCH -N 2\nmpirun ./a.out\n", "pytorchjob")
    assert t.flavor == "mpijob"
    assert "TRANSLATE-FLAVOR-FALLBACK" in codes(t)
    assert entry(t, "--flavor pytorchjob").status == FidelityStatus.APPROXIMATED


def test_pytorchjob_master_workers_and_nproc() -> None:
    text = (
        "#!/bin/bash\n#SBATCH -N 4\n#SBATCH --gpus-per-node=8\n#SBATCH -p gpu\n"
        "srun torchrun --nnodes=$SLURM_NNODES --nproc_per_node=8 \\\n"
        "  --rdzv_endpoint=$MASTER_ADDR:29500 train.py\n"
    )
    ts = validate_all(
        text,
        {
            "pytorchjob": {
                "apiVersion": "kubeflow.org/v1",
                "spec": {
                    "nprocPerNode": "8",
                    "pytorchReplicaSpecs": {"Master": {"replicas": 1}, "Worker": {"replicas": 3}},
                },
            }
        },
    )
    t = ts["pytorchjob"]
    assert container(t)["name"] == "pytorch"
    assert entry(t, "launcher srun").status == FidelityStatus.MAPPED


def test_mpijob_launcher_runs_the_script_and_workers_sshd() -> None:
    text = "#!/bin/bash\n#SBATCH -n 64\n#SBATCH --ntasks-per-node=32\n#SBATCH -c 1\nmpirun -np 64 ./lmp\n"
    ts = validate_all(
        text,
        {
            "mpijob": {
                "apiVersion": "kubeflow.org/v2beta1",
                "spec": {
                    "slotsPerWorker": 32,
                    "mpiReplicaSpecs": {
                        "Launcher": {"replicas": 1},
                        "Worker": {
                            "replicas": 2,
                            "template": {"spec": {"containers": [{"command": ["/usr/sbin/sshd", "-De"]}]}},
                        },
                    },
                },
            }
        },
    )
    launcher = container(ts["mpijob"], 0)
    assert (launcher["command"], launcher["args"]) == (
        ["mpirun"],
        ["-np", "64", "./lmp"],
    )  # native: mpirun itself
    emulated = container(translate(text, "mpijob", style="emulate"), 0)
    assert emulated["command"] == ["/bin/bash", "/opt/migrate/entrypoint.sh"]
    assert literal_env(emulated)["MIGRATE_SRUN_MODE"] == "mpirun"


def test_multi_node_job_flavor_is_an_indexed_job_with_a_headless_service() -> None:
    t = translate("#!/bin/bash\n#SBATCH -N 3\n#SBATCH --job-name=sim\nsrun ./sim\n", "job")
    docs = documents(t.files["job.yaml"])
    job, service = find(docs, "Job"), find(docs, "Service")
    assert_subset(
        {
            "completionMode": "Indexed",
            "completions": 3,
            "parallelism": 3,
            "template": {"spec": {"subdomain": "sim"}},
        },
        job["spec"],
    )
    assert service["metadata"]["name"] == "sim"
    assert service["spec"]["clusterIP"] == "None"
    assert entry(t, "multi-node job").status == FidelityStatus.APPROXIMATED


def test_volcano_gang_policies_plugins_and_queue() -> None:
    text = "#!/bin/bash\n#SBATCH -N 4\n#SBATCH -p gpu\n#SBATCH --requeue\nsrun ./sim\n"
    validate_all(
        text,
        {
            "volcano": {
                "apiVersion": "batch.volcano.sh/v1alpha1",
                "spec": {
                    "minAvailable": 4,
                    "queue": "gpu-queue",
                    "policies": [{"event": "PodEvicted", "action": "RestartJob"}],
                    "plugins": {"svc": [], "env": []},
                    "tasks": [{"name": "node", "replicas": 4}],
                },
            }
        },
    )


def test_jobset_hetjob_one_replicated_job_per_component() -> None:
    text = (
        "#!/bin/bash\n#SBATCH --job-name=rl\n#SBATCH -N1 --gres=gpu:4 -p gpu\n#SBATCH hetjob\n"
        "#SBATCH -N 2 --ntasks-per-node=4 -p cpu\n"
        "srun --het-group=0 python learner.py : --het-group=1 python actor.py\n"
    )
    ts = validate_all(
        text,
        {
            "auto": {
                "kind": "JobSet",
                "spec": {
                    "replicatedJobs": [{"name": "het0", "replicas": 1}, {"name": "het1", "replicas": 2}]
                },
            }
        },
    )
    env1 = literal_env(container(ts["auto"], 1))
    assert env1["MIGRATE_HET_GROUP"] == "1"
    assert env1["SLURM_JOB_NODELIST_HET_GROUP_1"] == "rl-het1-0-0.rl,rl-het1-1-0.rl"


def test_scrontab_entry_becomes_a_cronjob() -> None:
    jobs = reader.read(
        "#SCRON -p cpu -t 00:10:00\n0 2 * * * /home/ops/cleanup.sh\n", "crontab", Collector("c")
    )
    t = translate_job(jobs[0], SITE, "auto")
    cron = workload(t)
    assert cron["kind"] == "CronJob"
    assert cron["spec"]["schedule"] == "0 2 * * *"
    assert cron["spec"]["concurrencyPolicy"] == "Forbid"
    pod_container = cron["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]
    assert pod_container["command"] == ["/home/ops/cleanup.sh"]  # native: the entry's command itself
    emulated = translate_job(jobs[0], SITE, "auto", style="emulate")
    assert "cleanup.sh" in find(documents(emulated.files["cronjob.yaml"]), "ConfigMap")["data"]["job.sh"]


def test_self_resubmitting_script_with_begin_becomes_a_cronjob() -> None:
    text = "#!/bin/bash\n#SBATCH -J nightly\n./report.sh\nsbatch --begin=now+1day $0\n"
    t = translate(text)
    assert t.flavor == "cronjob"
    assert workload(t)["spec"]["schedule"] == "0 0 * * *"
    assert literal_env(container(t))["MIGRATE_RESUBMIT_BY_SCHEDULE"] == "1"


# ---------------------------------------------------------------------------
# one test per mapping


def test_gpus_with_a_type_through_the_partition_node_pool() -> None:
    t = translate("#!/bin/bash\n#SBATCH -p gpu\n#SBATCH --gres=gpu:a100:4\npython x.py\n")
    c = container(t)
    assert c["resources"]["limits"]["nvidia.com/gpu"] == "4"
    assert c["resources"]["requests"] == c["resources"]["limits"]
    assert pod(t)["nodeSelector"] == {"pool": "a100"}
    assert entry(t, "--gres=gpu:a100:4").status == FidelityStatus.MAPPED


def test_gpu_type_without_a_mapping_gets_a_placeholder_and_a_diagnostic() -> None:
    t = translate("#!/bin/bash\n#SBATCH --gpus-per-node=h100:2\npython x.py\n", config=None)
    assert pod(t)["nodeSelector"]["nvidia.com/gpu.product"].startswith("REPLACE-ME")
    assert "TRANSLATE-GPU-TYPE" in codes(t)
    assert entry(t, "--gpus-per-node").status == FidelityStatus.APPROXIMATED


def test_mig_slices_become_mig_resources() -> None:
    t = translate("#!/bin/bash\n#SBATCH --gres=gpu:1g.10gb:1\npython x.py\n")
    assert container(t)["resources"]["limits"]["nvidia.com/mig-1g.10gb"] == "1"


def test_other_gres_is_dropped_without_an_extended_resource() -> None:
    t = translate("#!/bin/bash\n#SBATCH --gres=nvme:1\npython x.py\n")
    assert entry(t, "--gres=nvme").status == FidelityStatus.DROPPED
    assert "TRANSLATE-GRES-UNMAPPED" in codes(t)


def test_other_gres_maps_to_the_extended_resource_the_site_names() -> None:
    class WithGres:  # a config that already has the (proposed) gres mapping
        def __getattr__(self, name: str) -> Any:
            if name == "gres":
                return (("efa", "vpc.amazonaws.com/efa"),)
            return getattr(SITE, name)

    job = read("#!/bin/bash\n#SBATCH --gres=efa:4\npython x.py\n")
    t = translate_job(job, WithGres(), "job")  # type: ignore[arg-type]
    assert container(t)["resources"]["limits"]["vpc.amazonaws.com/efa"] == "4"


def test_cpus_are_cpus_per_task_times_tasks_per_node() -> None:
    t = translate("#!/bin/bash\n#SBATCH --ntasks-per-node=4\n#SBATCH --cpus-per-task=8\nsrun ./a\n")
    assert container(t)["resources"]["requests"]["cpu"] == "32"
    assert entry(t, "--cpus-per-task=8").status == FidelityStatus.MAPPED


@pytest.mark.parametrize(
    ("options", "memory"),
    [
        ("#SBATCH --mem=64G", "64Gi"),
        ("#SBATCH -c 4\n#SBATCH --mem-per-cpu=2000", "8000Mi"),
        ("#SBATCH --gpus-per-node=2\n#SBATCH --mem-per-gpu=40G", "80Gi"),
    ],
)
def test_memory_per_node_per_cpu_per_gpu(options: str, memory: str) -> None:
    t = translate(f"#!/bin/bash\n{options}\npython x.py\n")
    assert container(t)["resources"]["limits"]["memory"] == memory


def test_mem_zero_requests_the_node_memory_from_the_inventory() -> None:
    t = translate("#!/bin/bash\n#SBATCH -p gpu\n#SBATCH --mem=0\npython x.py\n")
    # the node's 1024Gi less the 5% the node keeps for the kubelet: what a pod can be given
    assert container(t)["resources"]["limits"]["memory"] == "972Gi"
    assert entry(t, "--mem=0").status == FidelityStatus.APPROXIMATED
    assert entry(t, "--mem=0").loses == "52Gi of memory per node"
    unknown = translate("#!/bin/bash\n#SBATCH --mem=0\npython x.py\n", config=None)
    assert "memory" not in container(unknown)["resources"]["limits"]
    assert "TRANSLATE-WHOLE-NODE-UNKNOWN" in codes(unknown)


def test_exclusive_whole_node_gpus_and_one_pod_per_node() -> None:
    t = translate("#!/bin/bash\n#SBATCH -p gpu\n#SBATCH -N 2\n#SBATCH --exclusive\nsrun ./a\n", "jobset")
    js = workload(t)
    rjob = js["spec"]["replicatedJobs"][0]
    assert rjob["template"]["metadata"]["annotations"]["alpha.jobset.sigs.k8s.io/exclusive-topology"] == (
        "kubernetes.io/hostname"
    )
    assert container(t)["resources"]["limits"]["nvidia.com/gpu"] == "8"
    assert "podAntiAffinity" in pod(t)["affinity"]
    assert entry(t, "--exclusive").status == FidelityStatus.APPROXIMATED


def test_constraint_placeholder_label_and_or_affinity() -> None:
    t = translate("#!/bin/bash\n#SBATCH --constraint=ib&nvlink\npython x.py\n")
    assert pod(t)["nodeSelector"] == {"migrate.io/feature-ib": "true", "migrate.io/feature-nvlink": "true"}
    assert "TRANSLATE-CONSTRAINT" in codes(t)
    either = translate("#!/bin/bash\n#SBATCH --constraint=[rack1|rack2]\npython x.py\n")
    terms = pod(either)["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert len(terms["nodeSelectorTerms"]) == 2
    assert entry(either, "--constraint").status == FidelityStatus.APPROXIMATED


def test_time_becomes_active_deadline_or_kueue_max_exec_time() -> None:
    ts = validate_all(
        "#!/bin/bash\n#SBATCH -t 2-00:00:00\npython x.py\n",
        {
            "job": {"spec": {"activeDeadlineSeconds": 172800}},
            "kueue": {"metadata": {"labels": {"kueue.x-k8s.io/max-exec-time-seconds": "172800"}}},
        },
    )
    assert "activeDeadlineSeconds" not in workload(ts["kueue"])["spec"]


def test_requeue_ignores_disruptions_with_a_checkpoint_note() -> None:
    t = translate("#!/bin/bash\n#SBATCH --requeue\npython x.py\n")
    spec = workload(t)["spec"]
    assert spec["backoffLimit"] == 0
    assert spec["podFailurePolicy"]["rules"][0] == {
        "action": "Ignore",
        "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}],
    }
    assert "checkpoint" in entry(t, "--requeue").reason
    assert "checkpoint" in t.files["job.yaml"]
    no = translate("#!/bin/bash\n#SBATCH --no-requeue\npython x.py\n")
    assert workload(no)["spec"]["podFailurePolicy"]["rules"][0]["action"] == "FailJob"


def test_signal_sets_the_grace_period_and_the_entrypoint_timer() -> None:
    t = translate("#!/bin/bash\n#SBATCH -t 60\n#SBATCH --signal=B:USR1@300\npython x.py\n")
    assert pod(t)["terminationGracePeriodSeconds"] == 300
    env = literal_env(container(t))
    assert (env["MIGRATE_SIGNAL"], env["MIGRATE_SIGNAL_LEAD"], env["MIGRATE_SIGNAL_BATCH_ONLY"]) == (
        "USR1",
        "300",
        "1",
    )
    assert entry(t, "--signal").status == FidelityStatus.APPROXIMATED


def test_account_becomes_a_label_or_the_mapped_namespace() -> None:
    t = translate("#!/bin/bash\n#SBATCH --account=proj123\npython x.py\n")
    assert workload(t)["metadata"]["labels"]["migrate.io/account"] == "proj123"
    assert entry(t, "--account").status == FidelityStatus.APPROXIMATED

    class WithAccounts:
        def __getattr__(self, name: str) -> Any:
            return (("proj123", "team-a"),) if name == "accounts" else getattr(SITE, name)

    mapped = translate_job(read("#!/bin/bash\n#SBATCH --account=proj123\npython x.py\n"), WithAccounts())  # type: ignore[arg-type]
    assert workload(mapped)["metadata"]["namespace"] == "team-a"
    assert entry(mapped, "--account").status == FidelityStatus.MAPPED


def test_qos_becomes_a_kueue_priority_class_or_a_label() -> None:
    t = translate("#!/bin/bash\n#SBATCH -q high\npython x.py\n", "kueue")
    assert workload(t)["metadata"]["labels"]["kueue.x-k8s.io/priority-class"] == "high"
    assert "kueue/priority-high.yaml" in t.shared
    plain = translate("#!/bin/bash\n#SBATCH -q high\npython x.py\n", "job")
    assert "priorityClassName" not in pod(plain)  # an unknown class would make the API reject the pods
    assert "TRANSLATE-QOS-UNMAPPED" in codes(plain)


def test_partition_becomes_a_node_pool_or_a_queue() -> None:
    t = translate("#!/bin/bash\n#SBATCH --partition=gpu\npython x.py\n", "job")
    assert pod(t)["nodeSelector"] == {"pool": "a100"}
    assert entry(t, "--partition=gpu").status == FidelityStatus.MAPPED
    k = translate("#!/bin/bash\n#SBATCH -p gpu\npython x.py\n", "kueue")
    assert workload(k)["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "gpu-queue"
    docs = documents(k.shared["kueue/gpu-queue.yaml"])
    assert [d["kind"] for d in docs] == ["ResourceFlavor", "ClusterQueue", "LocalQueue"]
    assert docs[0]["spec"]["nodeLabels"] == {"pool": "a100"}
    for rel, content in k.shared.items():
        assert validate.validate_documents(content, rel) == []
    unknown = translate("#!/bin/bash\n#SBATCH -p nowhere\npython x.py\n")
    assert "TRANSLATE-PARTITION-UNMAPPED" in codes(unknown)


def test_chdir_becomes_working_dir() -> None:
    t = translate("#!/bin/bash\n#SBATCH --chdir=/fsx/run1\npython x.py\n")
    assert container(t)["workingDir"] == "/fsx/run1"
    assert entry(t, "--chdir").status == FidelityStatus.MAPPED


def test_output_on_shared_storage_is_teed_else_pod_log_only() -> None:
    native = translate("#!/bin/bash\n#SBATCH --output=/fsx/logs/%x-%j.out\npython x.py\n")
    assert "env" not in container(native) and "pod log only" in entry(native, "--output").reason
    t = translate("#!/bin/bash\n#SBATCH --output=/fsx/logs/%x-%j.out\npython x.py\n", style="emulate")
    assert literal_env(container(t))["MIGRATE_STDOUT"] == "/fsx/logs/%x-%j.out"
    assert "tee" in entry(t, "--output").reason
    local = translate("#!/bin/bash\n#SBATCH --output=out.%j\npython x.py\n", style="emulate")
    assert "MIGRATE_STDOUT" not in literal_env(container(local))
    assert entry(local, "--output").status == FidelityStatus.APPROXIMATED


def test_mail_is_dropped_with_a_note() -> None:
    t = translate("#!/bin/bash\n#SBATCH --mail-type=END,FAIL\n#SBATCH --mail-user=a@b.c\npython x.py\n")
    assert entry(t, "--mail-type").status == FidelityStatus.DROPPED
    assert entry(t, "--mail-user").status == FidelityStatus.DROPPED


def test_dependency_is_recorded_for_the_submit_script() -> None:
    t = translate("#!/bin/bash\n#SBATCH --dependency=afterok:123\npython x.py\n")
    assert "submit.sh" in entry(t, "--dependency=afterok:123").reason
    js = translate("#!/bin/bash\n#SBATCH -N 2\n#SBATCH --dependency=afterany:123\nsrun x\n", "jobset")
    assert "dependsOn" in entry(js, "--dependency").reason
    # aftercorr: submit.sh waits for the whole array, not element by element
    corr = translate("#!/bin/bash\n#SBATCH --dependency=aftercorr:123\npython x.py\n")
    assert entry(corr, "--dependency").status == FidelityStatus.APPROXIMATED
    assert "whole array" in entry(corr, "--dependency").reason
    burst = translate("#!/bin/bash\n#SBATCH --dependency=afterburstbuffer:123\npython x.py\n")
    assert entry(burst, "--dependency").status == FidelityStatus.DROPPED


def test_array_throttle_becomes_parallelism() -> None:
    t = translate("#!/bin/bash\n#SBATCH --array=0-99%10\necho $SLURM_ARRAY_TASK_ID\n")
    spec = workload(t)["spec"]
    assert (spec["completions"], spec["parallelism"], spec["completionMode"]) == (100, 10, "Indexed")
    assert spec["backoffLimitPerIndex"] == 0  # array tasks fail independently


def test_an_array_written_in_brackets_is_an_indexed_job_of_its_tasks() -> None:
    # sbatch takes --array=[0-2] and runs three tasks; the pods must be three as well
    t = translate("#!/bin/bash\n#SBATCH --array=[0-2]\necho $SLURM_ARRAY_TASK_ID\n")
    spec = workload(t)["spec"]
    assert (spec["completions"], spec["completionMode"]) == (3, "Indexed")
    assert "SLURM-BAD-VALUE" not in codes(t)


def test_a_shifter_image_is_the_image_of_the_pods_as_a_pyxis_one_is() -> None:
    t = translate(
        "#!/bin/bash\n#SBATCH --image=docker:nersc/pytorch:24.06.01\nsrun shifter python train.py\n"
    )
    assert container(t)["image"] == "nersc/pytorch:24.06.01"
    assert entry(t, "container image").status == FidelityStatus.MAPPED
    step = translate("#!/bin/bash\nsrun shifter --image=nersc/app:1 python t.py\n")
    assert container(step)["image"] == "nersc/app:1"


def test_begin_is_dropped_for_a_plain_job() -> None:
    t = translate("#!/bin/bash\n#SBATCH --begin=now+1hour\npython x.py\n")
    assert entry(t, "--begin").status == FidelityStatus.DROPPED


def test_licenses_are_dropped_without_a_kueue_resource() -> None:
    t = translate("#!/bin/bash\n#SBATCH --licenses=matlab:2\npython x.py\n")
    assert entry(t, "--licenses").status == FidelityStatus.DROPPED
    assert "TRANSLATE-LICENSE" in codes(t)


def test_raw_directives_get_the_option_tables_note() -> None:
    t = translate("#!/bin/bash\n#SBATCH --gres-flags=enforce-binding\n#SBATCH --reboot\npython x.py\n")
    assert entry(t, "--gres-flags").status == FidelityStatus.DROPPED
    assert "topology manager" in entry(t, "--gres-flags").reason
    assert entry(t, "--reboot").status == FidelityStatus.DROPPED


def test_every_directive_of_a_real_script_has_an_entry(tmp_path: Path) -> None:
    script = tmp_path / "kitchen.sbatch"
    script.write_text(
        "#!/bin/bash\n#SBATCH -J k\n#SBATCH -N 2\n#SBATCH --ntasks-per-node=2\n#SBATCH -c 4\n"
        "#SBATCH --mem=8G\n#SBATCH -t 10\n#SBATCH -p gpu\n#SBATCH -A acct\n#SBATCH --qos=normal\n"
        "#SBATCH --hint=nomultithread\n#SBATCH --wckey=w1\n#SBATCH --comment=hello\n"
        "#SBATCH --open-mode=append\n"
        "#SBATCH --frobnicate=3\nsrun ./a\n"
    )
    job = reader.read(script.read_text(), str(script), Collector(str(script)))[0]
    t = translate_job(job, SITE)
    lines = {e.line for e in t.fidelity.entries if e.line is not None}
    assert set(range(2, 16)) <= lines, sorted(lines)
    assert workload(t)["metadata"]["annotations"]["migrate.io/comment"] == "hello"
    assert entry(t, "--frobnicate").status == FidelityStatus.DROPPED
    header = find(documents(t.files["jobset.yaml"]), "ConfigMap")["data"]["job.sh"]
    assert header.startswith("#!/bin/bash\n#SBATCH -J k\n")  # the original file, header kept


# ---------------------------------------------------------------------------
# images, storage, secrets


def test_image_from_pyxis_then_site_then_placeholder() -> None:
    pyxis = translate(
        "#!/bin/bash\n#SBATCH -J p\nsrun --container-image=nvcr.io#nvidia/pytorch:24.03-py3 python x.py\n",
        style="emulate",
    )
    assert container(pyxis)["image"] == "nvcr.io/nvidia/pytorch:24.03-py3"
    assert entry(pyxis, "srun --container-image").status == FidelityStatus.APPROXIMATED
    module = translate("#!/bin/bash\n#SBATCH -J g\nmodule load gromacs/2024\ngmx mdrun\n")
    assert container(module)["image"] == "registry.example/gromacs:2024"
    default = translate("#!/bin/bash\n#SBATCH -J d\npython x.py\n")
    assert container(default)["image"] == "registry.example/base:1"
    none = translate("#!/bin/bash\n#SBATCH -J n\npython x.py\n", config=None)
    assert container(none)["image"] == "REPLACE-ME/image:tag"
    assert "TRANSLATE-IMAGE-PLACEHOLDER" in codes(none)


def test_storage_paths_become_volumes_at_the_same_path() -> None:
    t = translate("#!/bin/bash\n#SBATCH -J s\npython train.py --data /fsx/data --out /gpfs/proj/out\n")
    mounts = {m["mountPath"]: m["name"] for m in container(t)["volumeMounts"]}
    volumes = {v["name"]: v for v in pod(t)["volumes"]}
    assert volumes[mounts["/fsx"]]["persistentVolumeClaim"] == {"claimName": "fsx-pvc"}
    assert volumes[mounts["/gpfs"]]["hostPath"]["path"] == "/gpfs"
    assert "TRANSLATE-HOSTPATH" in codes(t)
    claim = documents(t.shared["storage/batch/fsx-pvc.yaml"])[0]
    assert claim["kind"] == "PersistentVolumeClaim"


def test_secrets_come_from_secret_refs_never_literals() -> None:
    text = "#!/bin/bash\n#SBATCH -J w\nexport WANDB_API_KEY=abcd1234efgh5678ijkl\npython x.py\n"
    t = translate(text)
    env = {e["name"]: e for e in container(t)["env"]}
    assert env["WANDB_API_KEY"]["valueFrom"]["secretKeyRef"]["key"] == "WANDB_API_KEY"
    assert "abcd1234efgh5678ijkl" not in t.files["job.yaml"]
    assert "TRANSLATE-SECRET" in codes(t)


# ---------------------------------------------------------------------------
# SLURM_* emulation, run with bash


ECHO_TASK = '#!/bin/bash\necho "task=$SLURM_ARRAY_TASK_ID id=$SLURM_JOB_ID"\n'


@needs_bash
@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("0-3", [0, 1, 2, 3]),
        ("1-9:2", [1, 3, 5, 7, 9]),
        ("1,3,7,42", [1, 3, 7, 42]),
        ("1-1000:4%10", [1, 5, 9, 13]),  # the first few of 250
        ("0-2,10-20:5", [0, 1, 2, 10, 15, 20]),
    ],
)
def test_array_task_id_in_every_pod(spec: str, expected: list[int], tmp_path: Path) -> None:
    t = translate(f"#!/bin/bash\n#SBATCH --array={spec}\necho $SLURM_ARRAY_TASK_ID\n")
    (text,) = t.files.values()
    for index, task in enumerate(expected):
        result = run_pod(text, tmp_path, {"JOB_COMPLETION_INDEX": str(index)}, script=ECHO_TASK)
        assert result.returncode == 0, result.stderr
        assert result.stdout.strip() == f"task={task} id=uid-123-{task}"


def test_array_of_multi_node_jobs_uses_consecutive_indices(tmp_path: Path) -> None:
    require_pods()
    t = translate("#!/bin/bash\n#SBATCH --array=5,9\n#SBATCH -N 2\n#SBATCH -J arr\nsrun ./a\n", "job")
    (text,) = t.files.values()
    assert workload(t)["spec"]["completions"] == 4
    script = "#!/bin/bash\nsrun bash -c 'echo $SLURM_ARRAY_TASK_ID $SLURM_NODEID $SLURM_JOB_NODELIST'\n"
    result = pods.run(text, tmp_path, script=script)
    assert result.status == "Complete", result.describe()
    batch = [p for p in result.pods if p.stdout]  # the first pod of each array task runs the script
    assert [p.plan.completion_index for p in batch] == [0, 2]
    assert sorted(batch[0].stdout.splitlines()) == ["5 0 arr-0.arr,arr-1.arr", "5 1 arr-0.arr,arr-1.arr"]
    assert sorted(batch[1].stdout.splitlines()) == ["9 0 arr-2.arr,arr-3.arr", "9 1 arr-2.arr,arr-3.arr"]


TORCH = """#!/bin/bash
#SBATCH -J seg
#SBATCH -N 4
#SBATCH --gpus-per-node=8
head=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n1)
echo "head=$head master=$MASTER_ADDR nnodes=$SLURM_NNODES node=$SLURM_NODEID"
srun torchrun --nnodes=$SLURM_NNODES --nproc_per_node=8 --rdzv_endpoint=$head:29500 train.py
"""


@pytest.mark.parametrize(
    ("flavor", "first"), [("job", "seg-0.seg"), ("jobset", "seg-node-0-0.seg"), ("volcano", "seg-node-0.seg")]
)
def test_torchrun_rendezvous_is_the_first_pods_dns_name(flavor: str, first: str, tmp_path: Path) -> None:
    require_pods()
    t = translate(TORCH, flavor, style="emulate")
    (text,) = t.files.values()
    fake = tmp_path / "fake" / "torchrun"
    fake.parent.mkdir(parents=True)
    fake.write_text('#!/bin/bash\necho "torchrun $* rank=$SLURM_PROCID node=$SLURM_NODEID"\n')
    fake.chmod(0o755)
    path = f"{fake.parent}:{pods.IMAGE_PATH}"
    result = pods.run(
        text, tmp_path / "run", script=TORCH, image_env={"PATH": path}, image_dirs=(str(fake.parent),)
    )
    assert result.status == "Complete", result.describe()
    lines = result.pods[0].stdout.splitlines()
    # the script ran on node 0 only; MASTER_ADDR is the script's to set, as under sbatch
    assert lines[0] == f"head={first} master= nnodes=4 node=0"
    assert all(p.stdout == "" for p in result.pods[1:])
    steps = sorted(lines[1:], key=lambda line: line.split()[-1])
    assert len(steps) == 4  # a launcher starts once per node, not once per task
    for node, line in enumerate(steps):
        assert line.startswith("torchrun --nnodes=4 --nproc_per_node=8 ")
        assert f"--rdzv_endpoint={first}:29500" in line and line.endswith(f"node={node}")


def test_pytorchjob_keeps_the_operators_master_addr(tmp_path: Path) -> None:
    require_pods()
    t = translate(TORCH, "pytorchjob", style="emulate")
    (text,) = t.files.values()
    script = "#!/bin/bash\nsrun bash -c 'echo $MASTER_ADDR $SLURM_NODEID $SLURM_JOB_NODELIST $RANK'\n"
    result = pods.run(text, tmp_path, script=script)
    assert result.status == "Complete", result.describe()
    lines = sorted(result.pods[0].stdout.splitlines(), key=lambda line: line.split()[1])
    assert [line.split()[1] for line in lines] == ["0", "1", "2", "3"]
    for node, line in enumerate(lines):
        master, _, nodelist, rank = line.split()
        assert (master, rank) == ("seg-master-0", str(node))  # the operator's, in every pod
        assert nodelist.split(",")[:2] == ["seg-master-0", "seg-worker-0"]


def test_srun_shim_runs_one_process_per_local_task(tmp_path: Path) -> None:
    require_pods()
    script = (
        "#!/bin/bash\nsrun bash -c 'echo rank=$SLURM_PROCID local=$SLURM_LOCALID of=$SLURM_NTASKS "
        "node=$SLURM_NODEID' | sort\n"
        "srun -N1 -n1 bash -c 'echo only-node-$SLURM_NODEID of $SLURM_NNODES'\n"
        "srun -n 3 bash -c 'echo n3=$SLURM_PROCID node=$SLURM_NODEID of $SLURM_NNODES' | sort\n"
        "module load gcc 2>/dev/null; echo after-module $SLURM_NNODES\n"
    )
    result = _two_nodes_of_two_tasks_running(script, tmp_path)
    assert result.pods[0].stdout.splitlines() == [
        "rank=0 local=0 of=4 node=0",
        "rank=1 local=1 of=4 node=0",
        "rank=2 local=0 of=4 node=1",
        "rank=3 local=1 of=4 node=1",
        # a step sees its own node count in SLURM_NNODES (srun -n 1 in a two-node job: 1), the batch
        # script the job's (the corpus case slurm/jobscript on the sandbox)
        "only-node-0 of 1",
        "n3=0 node=0 of 2",
        "n3=1 node=0 of 2",
        "n3=2 node=1 of 2",
        "after-module 2",
    ]
    assert result.pods[1].stdout == ""


def test_srun_shim_runs_the_het_group_in_its_pods(tmp_path: Path) -> None:
    require_pods()
    text = "#!/bin/bash\n#SBATCH -N1\n#SBATCH hetjob\n#SBATCH -N1\nsrun --het-group=0 a : --het-group=1 b\n"
    manifest = manifest_of(text)
    script = (
        "#!/bin/bash\nsrun --het-group=0 bash -c 'echo learner $(hostname -s)' : "
        "--het-group=1 bash -c 'echo actor $(hostname -s)'\n"
        "srun bash -c 'echo group0-default $(hostname -s)'\n"
        # without --het-group, the parts of `srun a : b` go to the components in turn, as under Slurm
        "srun bash -c 'echo part0 $(hostname -s)' : bash -c 'echo part1 $(hostname -s)' | sort\n"
    )
    result = pods.run(manifest, tmp_path, script=script)
    assert result.status == "Complete", result.describe()
    out = result.pods[0].stdout.splitlines()
    learner, actor = (p.plan.hostname for p in result.pods)
    assert "het1" in actor
    assert sorted(out[:2]) == [f"actor {actor}", f"learner {learner}"]
    assert out[2:] == [f"group0-default {learner}", f"part0 {learner}", f"part1 {actor}"]


def test_a_hetjobs_batch_script_and_steps_see_their_components_nodes_as_slurm_gives_them(
    tmp_path: Path,
) -> None:
    """On the sandbox (Slurm 22.05), a hetjob's batch script sees component 0's nodes as the job's
    (SLURM_JOB_NODELIST, SLURM_NNODES) and no unsuffixed SLURM_CPUS_PER_TASK; a step of component 1
    sees that component's nodes, its --ntasks-per-node and its nodes' GPUs; the pre-20.02 names
    (SLURM_*_PACK_GROUP_*) are set beside the new ones."""
    require_pods()
    text = (
        "#!/bin/bash\n#SBATCH -N1 -n1 -c 4\n#SBATCH packjob\n"
        "#SBATCH -N2 --ntasks-per-node=1 --gpus-per-node=2 -c 8\nsrun --pack-group=1 b\n"
    )
    manifest = manifest_of(text)
    show = (
        'echo "$0 nodes=$SLURM_JOB_NODELIST n=$SLURM_NNODES cpt=${SLURM_CPUS_PER_TASK-unset} '
        "tpn=${SLURM_NTASKS_PER_NODE-unset} gpus=${SLURM_GPUS_ON_NODE-none} "
        'pack=$SLURM_JOB_NODELIST_PACK_GROUP_1"'
    )
    script = f"#!/bin/bash\nbash -c '{show}' batch\nsrun --pack-group=1 bash -c '{show}' step1 | sort\n"
    result = pods.run(manifest, tmp_path, script=script)
    assert result.status == "Complete", result.describe()
    first, *others = (f"{p.plan.hostname}.job" for p in result.pods)  # the job's subdomain: job
    group1 = ",".join(others)
    out = result.pods[0].stdout.splitlines()
    assert out == [
        f"batch nodes={first} n=1 cpt=unset tpn=unset gpus=none pack={group1}",
        f"step1 nodes={group1} n=2 cpt=unset tpn=1 gpus=2 pack={group1}",
        f"step1 nodes={group1} n=2 cpt=unset tpn=1 gpus=2 pack={group1}",
    ]


def test_every_part_of_a_het_step_sees_the_whole_step_as_slurm_tells_it(tmp_path: Path) -> None:
    """Measured on the sandbox (Slurm 22.05), components of 1 and 2 nodes: in `srun --het-group=0 a :
    --het-group=1 b` every task is told the whole step (NTASKS 3, NNODES 3, the job's three nodes);
    a step of component 1 alone, that component (2 tasks on 2 nodes)."""
    require_pods()
    text = "#!/bin/bash\n#SBATCH -N1 -n1\n#SBATCH hetjob\n#SBATCH -N2 --ntasks-per-node=1\nsrun a : b\n"
    manifest = manifest_of(text)
    show = 'echo "$X $SLURM_PROCID n=$SLURM_NTASKS/$SLURM_STEP_NUM_TASKS"'
    show = show[:-1] + ' nodes=$SLURM_NNODES/$SLURM_JOB_NUM_NODES"'
    script = (
        f"#!/bin/bash\nX=g1 srun --het-group=1 bash -c '{show}' | sort\n"
        f"X=het srun --het-group=0 bash -c '{show}' : --het-group=1 bash -c '{show}' | sort\n"
    )
    result = pods.run(manifest, tmp_path, script=script)
    assert result.status == "Complete", result.describe()
    assert result.pods[0].stdout.splitlines() == [
        "g1 0 n=2/2 nodes=2/2",
        "g1 1 n=2/2 nodes=2/2",
        "het 0 n=3/3 nodes=3/3",
        "het 1 n=3/3 nodes=3/3",
        "het 2 n=3/3 nodes=3/3",
    ]


# ---------------------------------------------------------------------------
# the step service: a token the job's pods share, and a NetworkPolicy around its port

TWO_NODES = "#!/bin/bash\n#SBATCH -J {name}\n#SBATCH -N 2\nsrun hostname > /fsx/{name}.out\n"


@pytest.mark.parametrize("flavor", ["job", "jobset", "volcano", "pytorchjob", "kueue"])
def test_a_multi_pod_jobs_pods_share_a_step_token_and_a_policy_guards_the_port(flavor: str) -> None:
    t = translate(TWO_NODES.format(name="guarded"), flavor, style="emulate")
    (text,) = t.files.values()
    docs = documents(text)
    ref = {"secretKeyRef": {"name": "guarded-steps", "key": "token"}}
    templates = pod_specs([d for d in docs if d["kind"] != "ConfigMap"])
    assert templates
    for spec in templates:
        env = spec["containers"][0]["env"]
        assert [e.get("valueFrom") for e in env if e["name"] == "MIGRATE_STEP_TOKEN"] == [ref]
    assert "Secret" not in {d["kind"] for d in docs}  # its value is random: never written
    kinds = [d["kind"] for d in docs]
    policy = docs[kinds.index("NetworkPolicy")]
    assert kinds.index("NetworkPolicy") == len(docs) - 2  # just before the workload: there when pods start
    assert policy["apiVersion"] == "networking.k8s.io/v1" and policy["metadata"]["name"] == "guarded-steps"
    assert policy["metadata"]["namespace"] == "batch"
    own = {"matchLabels": {"migrate.io/job": "guarded"}}
    for spec_parent in _pod_templates(docs):
        labels = spec_parent["metadata"]["labels"]
        assert own["matchLabels"].items() <= labels.items()  # the policy selects every pod of the job
    assert policy["spec"] == {
        "podSelector": own,
        "policyTypes": ["Ingress"],
        "ingress": [
            {"from": [{"podSelector": own}]},
            {
                "ports": [
                    {"protocol": "TCP", "port": 1, "endPort": 6819},
                    {"protocol": "TCP", "port": 6821, "endPort": 65535},
                    {"protocol": "UDP", "port": 1, "endPort": 65535},
                    {"protocol": "SCTP", "port": 1, "endPort": 65535},
                ]
            },
        ],
    }
    assert validate.validate_documents(text) == []
    (diag,) = [d for d in t.diagnostics if d.code == "TRANSLATE-SECRET"]
    assert "'guarded-steps'" in diag.message and "openssl rand -hex 32" in diag.message
    assert entry(t, "step service").status == FidelityStatus.APPROXIMATED


def _pod_templates(docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every object with a pod spec under ``spec`` and its metadata (the pod templates)."""
    found: list[dict[str, Any]] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if isinstance(node.get("spec"), dict) and "containers" in node["spec"]:
                found.append(node)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk([d for d in docs if d["kind"] not in ("ConfigMap", "NetworkPolicy")])
    return found


@pytest.mark.parametrize(
    ("text", "flavor"),
    [
        ("#!/bin/bash\n#SBATCH -J one\nsrun hostname\n", "job"),
        ("#!/bin/bash\n#SBATCH -J arr\n#SBATCH --array=0-3\nsrun hostname\n", "job"),
        ("#!/bin/bash\n#SBATCH -J mpi\n#SBATCH -N 2\nmpirun ./a\n", "mpijob"),
    ],
)
def test_a_job_without_a_step_service_gets_no_token_and_no_policy(text: str, flavor: str) -> None:
    for style in ("emulate", "auto"):
        t = translate(text, flavor, style=style)
        (manifest,) = t.files.values()
        assert "MIGRATE_STEP_TOKEN" not in {e["name"] for e in container(t).get("env", [])}
        assert "NetworkPolicy" not in {d["kind"] for d in documents(manifest)}
        assert not any("-steps" in d.message for d in t.diagnostics)


def test_a_step_from_another_jobs_pod_is_refused_while_the_jobs_own_run(tmp_path: Path) -> None:
    """Two jobs side by side: a pod of b sends a step to a pod of a, which refuses it (b's token is not
    a's) and runs nothing; a's own steps run before and after. The pod runner enforces no
    NetworkPolicy: the token alone keeps b out here."""
    require_pods()
    texts = [
        next(iter(translate(TWO_NODES.format(name=n), "job", style="emulate").files.values()))
        for n in ("a", "b")
    ]
    wait_for = "for i in $(seq 200); do [ -e /fsx/{0} ] && break; sleep 0.1; done\n"
    script_a = (
        "#!/bin/bash\nsrun -N2 bash -c 'echo own $SLURMD_NODENAME' | sort\ntouch /fsx/a-ready\n"
        + wait_for.format("b-done")
        + "srun -w a-1.a bash -c 'echo still $SLURMD_NODENAME'\n"
    )
    intruder = 'perl "$MIGRATE_DIR/bin/migrate-stepd" run a-1.a 0 1 touch /fsx/pwned'
    script_b = (
        "#!/bin/bash\n" + wait_for.format("a-ready") + f"{intruder} 2>/fsx/b-refused; echo rc=$?\n"
        "srun -w b-1.b bash -c 'echo own $SLURMD_NODENAME'\ntouch /fsx/b-done\n"
    )
    claim = tmp_path / "claim"
    a, b = pods.run_together(
        texts, tmp_path / "run", scripts=[script_a, script_b], claims={"fsx-pvc": claim}, timeout=40
    )
    assert a.status == "Complete", a.describe()
    assert b.status == "Complete", b.describe()
    assert a.pods[0].stdout.splitlines() == ["own a-0.a", "own a-1.a", "still a-1.a"]
    assert b.pods[0].stdout.splitlines() == ["rc=1", "own b-1.b"]
    assert "refused the request: the request carries another token" in (claim / "b-refused").read_text()
    assert not (claim / "pwned").exists()
    assert "refused a request from" in a.pods[1].stderr  # the pod of a says so in its log


@needs_bash
def test_sbatch_inside_the_pod_fails_loudly(tmp_path: Path) -> None:
    t = translate("#!/bin/bash\n#SBATCH -J chain\n./step.sh\nsbatch next.sbatch\n")
    assert entry(t, "sbatch next.sbatch").status == FidelityStatus.DROPPED
    assert "TRANSLATE-SUBMIT-IN-POD" in codes(t)
    (manifest,) = t.files.values()
    result = run_pod(manifest, tmp_path, {}, "#!/bin/bash\nsbatch next.sbatch\n")
    assert result.returncode == 1
    assert "cannot submit" in result.stderr


@needs_bash
def test_output_tee_keeps_the_file_with_expanded_patterns(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    site = parse_site_config({"filesystems": [{"prefix": str(logs), "pvc": "logs"}]})
    t = translate(f"#!/bin/bash\n#SBATCH -J tee\n#SBATCH -o {logs}/%x-%j.out\necho hello\n", config=site)
    (manifest,) = t.files.values()
    result = run_pod(manifest, tmp_path / "pod", {}, "#!/bin/bash\necho hello\n")
    assert result.stdout == "hello\n"
    for _ in range(50):  # the tee runs in a process substitution; give it a moment to flush
        if (logs / "tee-uid-123.out").exists() and (logs / "tee-uid-123.out").read_text():
            break
        time.sleep(0.05)
    assert (logs / "tee-uid-123.out").read_text() == "hello\n"


@needs_bash
def test_signal_is_sent_before_the_time_limit(tmp_path: Path) -> None:
    t = translate("#!/bin/bash\n#SBATCH -t 1\n#SBATCH --signal=B:USR1@58\nsleep 100\n")
    (manifest,) = t.files.values()
    script = (
        "#!/bin/bash\ntrap 'echo got-usr1; exit 0' USR1\nfor i in $(seq 100); do sleep 0.1; done\necho no\n"
    )
    result = run_pod(manifest, tmp_path, {}, script)
    assert result.stdout.strip() == "got-usr1"  # 60s limit - 58s lead: after about 2 seconds


# ---------------------------------------------------------------------------
# quoting, names, validity


@needs_bash
def test_a_hostile_job_name_is_data_not_yaml_or_shell(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    name = f"x$(touch {marker})\"'`id`\n- evil: true"
    job = ir.Job(
        id="j",
        source=ir.SourceRef("j.sbatch", "slurm"),
        kind="sbatch",
        name=name,
        io=ir.IOSpec(stdout=str(tmp_path / "%x.out")),
        storage=(ir.StoragePath(str(tmp_path)),),
        script=ir.ScriptInfo(body="echo ok\n"),
    )
    t = translate_job(job, None)
    (manifest,) = t.files.values()
    docs = documents(manifest)
    assert literal_env(container(t))["SLURM_JOB_NAME"] == name
    assert all("evil" not in d for d in docs)
    assert validate.validate_documents(manifest) == []
    run_pod(manifest, tmp_path / "pod", {}, "#!/bin/bash\necho $SLURM_JOB_NAME >/dev/null\n")
    assert not marker.exists()


@settings(max_examples=200, deadline=None)
@given(
    st.recursive(
        st.one_of(st.text(), st.integers(), st.booleans(), st.none()),
        lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(), inner, max_size=3)),
        max_leaves=12,
    ),
    st.text(),
)
def test_emitter_round_trips_any_value_and_comment(value: Any, comment: str) -> None:
    manifest = yamlemit.Manifest({"apiVersion": "v1", "kind": "X", "data": value})
    manifest.note(("data",), comment)
    assert yaml.safe_load(yamlemit.dump(manifest)) == {"apiVersion": "v1", "kind": "X", "data": value}


def test_every_code_used_by_the_writer_is_registered() -> None:
    src = Path(__file__).resolve().parent.parent / "translators" / "kubernetes"
    used = {m for f in src.glob("*.py") for m in re.findall(r'"(TRANSLATE-[A-Z-]+)"', f.read_text())}
    assert used and used <= set(CODES)


@settings(max_examples=60, deadline=None)
@given(
    name=st.one_of(st.none(), st.text(max_size=80)),
    nodes=st.integers(min_value=1, max_value=40),
    tasks=st.one_of(st.none(), st.integers(min_value=1, max_value=200)),
    array=st.one_of(st.none(), st.lists(st.integers(min_value=0, max_value=5000), min_size=1, max_size=30)),
    env=st.dictionaries(
        st.from_regex(r"[A-Z_][A-Z0-9_]{0,10}", fullmatch=True), st.text(max_size=30), max_size=4
    ),
    flavor=st.sampled_from(["auto", "job", "jobset", "volcano", "kueue", "pytorchjob", "mpijob", "cronjob"]),
)
def test_any_job_translates_to_loadable_valid_yaml(
    name: str | None, nodes: int, tasks: int | None, array: list[int] | None, env: dict[str, str], flavor: str
) -> None:
    spec = None
    if array is not None:
        indices = tuple(sorted(set(array)))
        spec = ir.ArraySpec(",".join(map(str, indices)), indices=indices, count=len(indices))
    job = ir.Job(
        id="j",
        source=ir.SourceRef("nowhere/j.sbatch", "slurm"),
        kind="sbatch",
        name=name,
        components=(ir.Component(resources=ir.Resources(nodes_min=nodes, tasks=tasks)),),
        array=spec,
        environment=tuple(ir.EnvVar(k, v, origin="sbatch-export") for k, v in env.items()),
        script=ir.ScriptInfo(body="echo hi\n"),
    )
    t = translate_job(job, SITE, flavor)
    for rel, text in t.files.items():
        assert documents(text)
        assert validate.validate_documents(text, rel) == []


# ---------------------------------------------------------------------------
# What Slurm gives the job: the allocation sizes the pods

CLOUD = parse_site_config(
    {
        "partitions": {
            "p5": {
                "nodes": 16,
                "gpus_per_node": 8,
                "gpu_type": "h100",
                "cpus_per_node": 192,
                "mem_gb": 2048,
                "default": True,
                "queue": "p5-queue",
                "node_selector": {"node.kubernetes.io/instance-type": "p5.48xlarge"},
                "tolerations": [{"key": "aws.amazon.com/efa", "operator": "Exists", "effect": "NoSchedule"}],
                "devices": {"vpc.amazonaws.com/efa": 32},
            },
            "cpu": {
                "nodes": 8,
                "gpus_per_node": 0,
                "cpus_per_node": 192,
                "mem_gb": 768,
                "queue": "cpu-queue",
            },
        },
        "defaults": {"image": "registry.example/base:1"},
    }
)
WHOLE_NODES = """#!/bin/bash
#SBATCH --nodes=4
#SBATCH --exclusive
GPUS_PER_NODE=8
export FI_PROVIDER=efa
srun torchrun --nnodes 4 --nproc_per_node $GPUS_PER_NODE train.py
"""


def test_whole_node_job_on_the_default_partition_gets_the_nodes_gpus_cpus_memory_and_devices() -> None:
    t = translate(WHOLE_NODES, "jobset", CLOUD)
    resources = container(t)["resources"]
    assert resources["requests"] == {
        "cpu": "190",  # 192 less the 2 the node keeps for the kubelet
        "memory": "1945Gi",  # the whole node's memory (no default), less 5%
        "nvidia.com/gpu": "8",
        "vpc.amazonaws.com/efa": "32",
    }
    assert "cpu" not in resources["limits"]  # a whole-node pod has no CPU limit by default
    spec = pod(t)
    assert spec["nodeSelector"] == {"node.kubernetes.io/instance-type": "p5.48xlarge"}
    assert {"key": "aws.amazon.com/efa", "operator": "Exists", "effect": "NoSchedule"} in spec["tolerations"]
    assert entry(t, "allocation: 192 CPUs per node").loses == "2 CPUs per node"
    assert "TRANSLATE-FABRIC-DEVICE" not in codes(t)


def test_cpu_limits_always_keeps_the_limit_of_whole_node_pods() -> None:
    config = replace(CLOUD, kubernetes=replace(CLOUD.kubernetes, cpu_limits="always"))
    assert container(translate(WHOLE_NODES, "jobset", config))["resources"]["limits"]["cpu"] == "190"


def test_tasks_that_do_not_fit_one_node_spread_over_pods() -> None:
    t = translate("#!/bin/bash\n#SBATCH -p cpu -n 384\nsrun ./mpi_app\n", "jobset", CLOUD)
    rjob = workload(t)["spec"]["replicatedJobs"][0]
    assert rjob["replicas"] == 2  # one pod per node, as Slurm would use two 192-CPU nodes
    assert container(t)["resources"]["requests"]["cpu"] == "190"
    env = {e["name"]: e.get("value") for e in container(t)["env"]}
    assert (env["SLURM_JOB_NUM_NODES"], env["SLURM_NTASKS"], env["MIGRATE_TASKS_PER_NODE"]) == (
        "2",
        "384",
        "192",
    )
    assert "SLURM_NTASKS_PER_NODE" not in env  # sbatch sets it only with --ntasks-per-node


def test_fabric_variables_without_a_device_name_the_key_to_add() -> None:
    t = translate(WHOLE_NODES.replace("#SBATCH --exclusive", "#SBATCH -p cpu --exclusive"), "jobset", CLOUD)
    (diag,) = [d for d in t.diagnostics if d.code == "TRANSLATE-FABRIC-DEVICE"]
    assert "add partitions.cpu.devices: {vpc.amazonaws.com/efa: N}" in diag.message
    assert entry(t, "efa tuning: FI_PROVIDER=efa").loses == "the node's efa devices"


def test_kueue_quota_of_the_default_partition_comes_from_its_nodes() -> None:
    result = translate_jobs([read(WHOLE_NODES)], flavor="kueue", config=CLOUD)
    (queue,) = [text for rel, text in result.tree.files.items() if rel.startswith("kueue/")]
    cluster_queue = next(d for d in documents(queue) if d["kind"] == "ClusterQueue")
    quota = {
        r["name"]: r["nominalQuota"]
        for r in cluster_queue["spec"]["resourceGroups"][0]["flavors"][0]["resources"]
    }
    assert quota == {
        "cpu": str(16 * 190),
        "memory": f"{16 * 1945}Gi",
        "nvidia.com/gpu": "128",
        "vpc.amazonaws.com/efa": str(16 * 32),
    }


def test_a_job_given_less_than_its_allocation_fails_strict() -> None:
    assert translate_jobs([read(WHOLE_NODES)], flavor="jobset", config=CLOUD).strict is True
    small = "#!/bin/bash\n#SBATCH -p p5 -c 4 --mem=8G --gpus-per-node=1\nsrun ./a\n"
    assert translate_jobs([read(small)], flavor="jobset", config=CLOUD).strict is False


# Execution: the batch script on node 0, /dev/shm, host names


def _pod_spec(t: Translation, pod: int = 0) -> dict[str, Any]:
    (text,) = t.files.values()
    return pod_specs([d for d in documents(text) if d["kind"] != "ConfigMap"])[pod]


def _shm(t: Translation) -> dict[str, Any] | None:
    return next((v for v in _pod_spec(t).get("volumes", []) if v["name"] == "dshm"), None)


def test_pods_with_several_processes_get_a_sized_memory_backed_dev_shm() -> None:
    several = "#!/bin/bash\n#SBATCH -N 2\n#SBATCH --ntasks-per-node=4\n#SBATCH --mem=64G\nsrun ./a\n"
    shm = _shm(translate(several, "jobset"))
    assert shm == {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "32Gi"}}
    torch = "#!/bin/bash\n#SBATCH -N 2\nsrun torchrun --nproc_per_node=4 train.py\n"
    assert _shm(translate(torch, "jobset"))["emptyDir"]["sizeLimit"] == "16Gi"  # no memory limit
    assert _shm(translate("#!/bin/bash\n#SBATCH -N 2\nsrun ./a\n", "jobset")) is None  # one process per pod
    site = parse_site_config({"defaults": {"shm_size": "8Gi"}})
    assert _shm(translate(several, "jobset", site))["emptyDir"]["sizeLimit"] == "8Gi"
    gpu = "#!/bin/bash\n#SBATCH --gres=gpu:1\npython x.py\n"
    assert _shm(translate(gpu))["emptyDir"]["medium"] == "Memory"


def test_multi_pod_jobs_run_the_script_on_node_0_with_resolvable_host_names() -> None:
    text = "#!/bin/bash\n#SBATCH -N 3\n#SBATCH -J two\nsrun hostname\n"
    for flavor in ("job", "jobset", "volcano"):
        t = translate(text, flavor, style="emulate")
        assert _pod_spec(t)["setHostnameAsFQDN"] is True, flavor
        entry = next(e for e in t.fidelity.entries if e.item == "batch script")
        assert entry.status == FidelityStatus.MAPPED and "once, in the pod of node 0" in entry.reason
        configmap = find(documents(next(iter(t.files.values()))), "ConfigMap")
        assert "stepd" in configmap["data"]
    torch = translate(text.replace("srun hostname", "srun torchrun train.py"), "pytorchjob", style="emulate")
    assert torch.flavor == "pytorchjob"
    assert "setHostnameAsFQDN" not in _pod_spec(torch)  # the operator's replica Services
    single = translate("#!/bin/bash\n#SBATCH -J one\nhostname\n")
    assert "setHostnameAsFQDN" not in _pod_spec(single)
    assert not any(e.item == "batch script" for e in single.fidelity.entries)
    long_name = translate(text.replace("-J two", "-J " + "x" * 40), "jobset", style="emulate")
    assert "setHostnameAsFQDN" not in _pod_spec(long_name)
    entry = next(e for e in long_name.fidelity.entries if e.item == "hostname")
    assert entry.status == FidelityStatus.APPROXIMATED


def test_the_mpijob_launcher_starts_mpi_over_ssh_not_srun() -> None:
    t = translate(
        "#!/bin/bash\n#SBATCH -N 2\n#SBATCH --ntasks-per-node=4\nmpirun -np 8 ./a\n",
        "mpijob",
        style="emulate",
    )
    spec = workload(t)["spec"]["mpiReplicaSpecs"]
    env = {e["name"]: e.get("value") for e in spec["Launcher"]["template"]["spec"]["containers"][0]["env"]}
    assert (env["OMPI_MCA_plm"], env["OMPI_MCA_ras"], env["HYDRA_BOOTSTRAP"]) == ("rsh", "^slurm", "ssh")
    worker_env = spec["Worker"]["template"]["spec"]["containers"][0]["env"]
    assert "OMPI_MCA_plm" not in {e["name"] for e in worker_env}


def test_the_pod_sees_its_gpus_in_cuda_visible_devices_as_slurm_sets_them(tmp_path: Path) -> None:
    """corpus/cases/slurm/gpus_from_visible_devices.sbatch counts the job's GPUs from
    CUDA_VISIBLE_DEVICES, which Slurm sets and the device plugin does not: the emulated pod sets it,
    as the container sees its GPUs (0..N-1)."""
    source = CORPUS / "cases" / "slurm" / "gpus_from_visible_devices.sbatch"
    t = translate(source.read_text(), style="emulate")
    (manifest,) = t.files.values()
    script = (
        '#!/bin/bash\nIFS=, read -ra gpus <<< "$CUDA_VISIBLE_DEVICES"\n'
        'echo "${#gpus[@]} $CUDA_VISIBLE_DEVICES"\n'
    )
    done = run_pod(manifest, tmp_path, {}, script=script)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["4", "0,1,2,3"]
    cpu_only = translate("#!/bin/bash\n#SBATCH -N 1\npython x.py\n", style="emulate")
    assert "CUDA_VISIBLE_DEVICES" not in {e["name"] for e in container(cpu_only)["env"]}


@pytest.mark.parametrize(
    "step",
    [
        "srun shifter python train.py --epochs 2",
        "srun shifter --image=docker:nersc/pytorch:24.06.01 python train.py --epochs 2",
        "srun podman-hpc run --rm --gpu --nccl nersc/pytorch:24.06.01 python train.py --epochs 2",
        "srun sarus run --mpi nersc/pytorch:24.06.01 python train.py --epochs 2",
        "srun ch-run -w nersc/pytorch:24.06.01 -- python train.py --epochs 2",
    ],
)
def test_a_native_pod_runs_the_program_a_container_runtime_starts_without_the_runtime(step: str) -> None:
    header = "#!/bin/bash\n#SBATCH -N 2\n#SBATCH --ntasks-per-node=1\n"
    if "shifter" in step:  # its image is the job's, given to its SPANK plugin
        header += "#SBATCH --image=docker:nersc/pytorch:24.06.01\n"
    t = translate(header + step + "\n", style="native")
    assert t.style == "native"
    spec = container(t)
    assert spec["image"] == "nersc/pytorch:24.06.01"
    words = [*spec.get("command", []), *spec.get("args", [])]
    assert words[-4:] == ["python", "train.py", "--epochs", "2"]
    assert not {"shifter", "podman-hpc", "sarus", "ch-run", "run", "--gpu"} & set(words)


@needs_bash
@pytest.mark.parametrize(
    ("runtime", "words"),
    [
        ("shifter", "shifter --image=docker:nersc/app:1 --volume=/a:/b -e X=1 --module gpu"),
        ("shifter", "shifter"),
        ("podman-hpc", "podman-hpc --squash-dir /sq run --rm -it --gpu -v /a:/b -e X=1 --mpi nersc/app:1"),
        ("podman-hpc", "podman-hpc shared-run --nccl -w /b nersc/app:1"),
        ("sarus", "sarus run --mpi -m --mount=type=bind,source=/a,destination=/b -w /b load/app:1"),
        ("ch-run", "ch-run -w -b /a:/b --set-env=/ch/env -c /b /var/tmp/app --"),
    ],
)
def test_an_emulated_pod_runs_what_a_container_runtime_starts(
    tmp_path: Path, runtime: str, words: str
) -> None:
    script = f"#!/bin/bash\n#SBATCH --ntasks=2\n#SBATCH --image=nersc/app:1\nsrun {words} echo 'a b' c\n"
    t = translate(script, style="emulate")
    (manifest,) = t.files.values()
    configmap = find(documents(manifest), "ConfigMap")
    assert set(configmap["data"]) & {"shifter", "podman-hpc", "sarus", "ch-run"} == {runtime}
    result = run_pod(manifest, tmp_path, {}, script)
    assert result.stdout.splitlines() == ["a b c", "a b c"], result.stderr


@needs_bash
def test_a_runtime_verb_with_no_program_fails_in_the_pod(tmp_path: Path) -> None:
    script = "#!/bin/bash\n#SBATCH --ntasks=1\npodman-hpc pull nersc/app:1\n"
    (manifest,) = translate(script, style="emulate").files.values()
    result = run_pod(manifest, tmp_path, {}, script)
    assert result.returncode == 1 and "no equivalent inside a Kubernetes pod" in result.stderr


def test_a_login_shell_script_still_finds_the_shims(tmp_path: Path) -> None:
    """``#!/bin/bash -l`` reads the image's profile, and Debian's sets PATH anew: srun must still be
    the shim (the host's real srun would look for a controller), in the batch pod and in the steps."""
    require_pods()
    text = "#!/bin/bash -l\n#SBATCH -J login\n#SBATCH -N 2\nsrun hostname\n"
    (manifest,) = translate(text, "jobset", style="emulate").files.values()
    script = "#!/bin/bash -l\nsrun -N2 bash -c 'echo step $SLURM_NODEID' | sort\ntype -t scontrol\n"
    result = pods.run(manifest, tmp_path, script=script)
    assert result.status == "Complete", result.describe()
    assert result.pods[0].stdout.splitlines() == ["step 0", "step 1", "function"]


def test_srun_options_with_a_separate_value_are_not_the_program(tmp_path: Path) -> None:
    """Which srun options take a value comes from srun's option table: ``--jobid 42`` (a step in another
    job's allocation, as site scripts attach to a running job) and ``--het-group 0`` do not run ``42``."""
    (manifest,) = translate("#!/bin/bash\n#SBATCH -N 1\nsrun hostname\n", style="emulate").files.values()
    script = "#!/bin/bash\nsrun --jobid 42 --overlap echo one\nsrun --mem-per-cpu 2G -Q --exact echo two\n"
    done = run_pod(manifest, tmp_path, {}, script=script)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["one", "two"]


@pytest.mark.parametrize(
    ("flavor", "said"),
    [("job", "uid"), ("jobset", "uid"), ("pytorchjob", "job's name"), ("mpijob", "job's name")],
)
def test_the_job_id_a_script_reads_is_named_for_what_the_pods_carry(flavor: str, said: str) -> None:
    """A Job's and a JobSet's pods carry their job's uid; a PyTorchJob's and an MPIJob's only its
    name, which a rerun under the same name sees again: a path built from it is then reused."""
    launch = "mpirun -np 2 ./solver" if flavor == "mpijob" else "srun torchrun --nproc_per_node=2 train.py"
    t = translate(
        "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=1\n"
        f"mkdir -p /fsx/ckpt/$SLURM_JOB_ID\n{launch}\n",
        flavor=flavor,
        style="emulate",
    )
    assert t.flavor == flavor
    entry = next(e for e in t.fidelity.entries if e.item == "$SLURM_JOB_ID")
    assert said in entry.reason, entry.reason
    assert ("rerun" in entry.reason) == (said == "job's name")


def test_a_native_job_says_the_job_id_it_writes_is_the_jobs_name() -> None:
    """Native pods do not pose as Slurm: $SLURM_JOB_ID is written as the job's name, which a rerun
    sees again; the record says so instead of passing it over."""
    t = translate(
        "#!/bin/bash\n#SBATCH -J sft\n#SBATCH --gpus-per-node=8\n"
        "torchrun --standalone --nproc_per_node=8 sft.py --output_dir /fsx/ckpt/sft-$SLURM_JOB_ID\n",
        style="native",
    )
    assert t.style == "native", t.style_reason
    assert "/fsx/ckpt/sft-sft" in next(iter(t.files.values()))
    entry = next(e for e in t.fidelity.entries if e.item == "$SLURM_JOB_ID")
    assert entry.status == FidelityStatus.APPROXIMATED and "rerun" in entry.reason, entry


def test_srun_hands_its_stdin_to_every_task_in_every_pod(tmp_path: Path) -> None:
    """`srun bash -s <<EOF` (a node check, a setup script) runs the here-document in every task, as
    srun's default --input=all does; --input=N gives it to task N only."""
    require_pods()
    script = (
        "#!/bin/bash\n"
        "srun bash -s <<'CHECK'\necho \"all $SLURM_PROCID on $SLURM_NODEID\"\nCHECK\n"
        "srun --input=3 bash -s <<'CHECK'\necho \"one $SLURM_PROCID\"\nCHECK\n"
        "echo none | srun -i none cat\n"
    )
    result = _two_nodes_of_two_tasks_running(script, tmp_path)
    said = sorted(line for p in result.pods for line in p.stdout.splitlines())
    assert said == ["all 0 on 0", "all 1 on 0", "all 2 on 1", "all 3 on 1", "one 3"], result.describe()


def _two_nodes_of_two_tasks_running(script: str, tmp_path: Path) -> RunResult:
    """A Job of two pods with two tasks each, running ``script`` as its batch script."""
    (manifest,) = translate(
        "#!/bin/bash\n#SBATCH -N 2\n#SBATCH --ntasks-per-node=2\nsrun ./a\n", "job"
    ).files.values()
    result = pods.run(manifest, tmp_path, script=script)
    assert result.status == "Complete", result.describe()
    return result


def test_the_pod_has_tmpdir_as_slurmd_gives_it(tmp_path: Path) -> None:
    """slurmd sets TMPDIR=/tmp when the submitter's environment has none: `STAGE=$TMPDIR/x` under
    `set -u` runs on Slurm, and so it must in the pod."""
    t = translate("#!/bin/bash\n#SBATCH -J stage\nset -u\necho stage=$TMPDIR/particles\n", "job")
    (text,) = t.files.values()
    result = run_pod(text, tmp_path, {}, script="#!/bin/bash\nset -u\necho stage=$TMPDIR/particles\n")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "stage=/tmp/particles"


def test_slurm_commands_the_pods_cannot_answer_are_recorded_at_their_lines() -> None:
    """No controller answers in a pod: `sacct`, `scontrol show node` (in a here-document that every
    node's shell reads too) are recorded dropped; the host list the scontrol shim gives is not."""
    t = translate(
        "#!/bin/bash\n#SBATCH -N 2\n#SBATCH -J hc\n"
        "nodes=$(scontrol show hostnames $SLURM_JOB_NODELIST)\n"
        "sacct -j $SLURM_JOB_ID -o State\n"
        "srun bash -s <<'EOF'\n"
        "gpus=$(scontrol show node $(hostname -s) | grep -c gpu)\n"
        "[ $gpus -gt 0 ] || sudo /usr/bin/scontrol update nodename=$(hostname -s) state=drain\n"
        "EOF\n",
        "job",
        style="emulate",
    )
    found = {(e.item, e.line) for e in t.fidelity.entries if e.item.startswith("command ")}
    assert found == {
        ("command sacct -j $SLURM_JOB_ID", 5),
        ("command scontrol show node", 7),
        ("command scontrol update nodename=$(hostname -s)", 8),
    }, found
    assert all(
        e.status == FidelityStatus.DROPPED for e in t.fidelity.entries if e.item.startswith("command ")
    )


def test_a_native_rayjob_says_the_job_id_it_writes_is_the_jobs_name() -> None:
    """A RayJob's entrypoint given `$SLURM_JOB_ID` gets the job's name, and the record says so, as
    for every native kind."""
    text = (CORPUS / "cases" / "run" / "native_ray.sbatch").read_text()
    text = text.replace('ray_probe.py "$out"', 'ray_probe.py "$out/$SLURM_JOB_ID"')
    assert "$SLURM_JOB_ID" in text
    t = translate(text)
    assert (t.flavor, t.style) == ("rayjob", "native"), t.style_reason
    entry = next(e for e in t.fidelity.entries if e.item == "$SLURM_JOB_ID")
    assert "rerun" in entry.reason and "native-ray" in entry.reason, entry


def test_ntasks_per_gpu_is_in_the_pods_env_as_sbatch_sets_it() -> None:
    """On the sandbox, -N 2 --gpus-per-node=4 --ntasks-per-gpu=2 gives the batch script
    SLURM_NTASKS_PER_GPU=2 beside SLURM_NTASKS=16 (and no SLURM_NTASKS_PER_NODE)."""
    text = "#!/bin/bash\n#SBATCH -N 2 --gpus-per-node=4 --ntasks-per-gpu=2\nsrun python train.py\n"
    t = translate(text, "jobset")
    (spec, *_) = pod_specs(workload(t))
    env = literal_env(spec["containers"][0])
    assert env.get("SLURM_NTASKS_PER_GPU") == "2"
    assert env.get("SLURM_NTASKS") == "16"
    assert "SLURM_NTASKS_PER_NODE" not in env


def test_a_native_step_gets_ntasks_per_gpu_written_out() -> None:
    text = (
        "#!/bin/bash\n#SBATCH -N 1 --gpus-per-node=4 --ntasks-per-gpu=1\n"
        "torchrun --nproc_per_node=4 train.py --per-gpu $SLURM_NTASKS_PER_GPU\n"
    )
    t = translate(text, "job", style="native")
    assert t.style == "native", t.style_reason
    (spec, *_) = pod_specs(workload(t))
    assert spec["containers"][0]["args"][-2:] == ["--per-gpu", "1"]
