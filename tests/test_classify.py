"""Workload patterns and the seed rules behind each recommendation, in both directions."""

from __future__ import annotations

import random

import pytest
from ir_builders import (
    component,
    dep,
    env,
    k8s_job,
    launcher,
    pvc,
    read,
    slurm_job,
    submit,
    wrapper,
    write,
)

from migrate import ir
from migrate.plan.classify import Assessment, assess_job, assess_jobs, classify_job
from migrate.plan.facts import VOCABULARY, facts_of
from migrate.plan.rules import RULES, Recommendation
from migrate.site.config import SiteConfig, parse_site_config
from migrate.vocab import Action, Direction, Pattern

SITE = parse_site_config(
    {
        "filesystems": [{"prefix": "/fsx", "kind": "lustre", "pvc": "fsx-pvc"}],
        "partitions": {
            "gpu": {"nodes": 16, "gpus_per_node": 8, "queue": "gpu-queue", "node_selector": {"pool": "gpu"}},
            "cpu": {"nodes": 8},
        },
        "images": {"module:gromacs/2024": "registry/gromacs:2024", "conda:vision": "registry/vision:1"},
    }
)


def texts(rec: Recommendation) -> tuple[str, ...]:
    """The sentences of a recommendation's changes, as plan.json lists them."""
    return tuple(c.text for c in rec.changes)


def assess(job: ir.Job, direction: str = Direction.TO_KUBERNETES, config: SiteConfig = SITE) -> Assessment:
    return assess_job(job, direction, config)


def pretrain(nodes: int = 32, **extra: object) -> ir.Job:
    options: dict[str, object] = {
        "name": "llm13b-pretrain",
        "nodes": nodes,
        "gpus_per_node": 8,
        "hours": 48,
        "partition": "gpu",
        "exclusive": "node",
        "environment": env(FI_EFA_USE_DEVICE_RDMA="1", NCCL_DEBUG="WARN"),
        "launchers": [launcher("srun", "python", "train.py")],
    }
    options.update(extra)
    return slurm_job("training/pretrain.sbatch", **options)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------
# Patterns


@pytest.mark.parametrize(
    ("job", "pattern", "reason"),
    [
        (pretrain(), Pattern.LONG_TRAINING, "32 nodes > large_training_nodes (4)"),
        (
            slurm_job(
                "t/long.sbatch",
                name="vit",
                nodes=2,
                gpus_per_node=8,
                hours=96,
                launchers=[launcher("torchrun", "train.py")],
            ),
            Pattern.LONG_TRAINING,
            "2 nodes for 96 h >= long_training_hours (72)",
        ),
        (
            slurm_job(
                "t/vit.sbatch",
                name="vit",
                nodes=2,
                gpus_per_node=8,
                launchers=[launcher("torchrun", "train.py")],
            ),
            Pattern.SMALL_TRAINING,
            "launcher torchrun",
        ),
        (
            slurm_job("t/ft.sbatch", name="llama-sft", gpus_per_node=8, body="python run.py --peft lora\n"),
            Pattern.FINE_TUNING,
            "job mentions 'lora', 'peft', 'sft'",
        ),
        (
            slurm_job(
                "t/ft2.sbatch", name="x", gpus_per_node=8, launchers=[launcher("torchrun", "fine-tune.py")]
            ),
            Pattern.FINE_TUNING,
            "mentions fine-tuning",
        ),
        (
            slurm_job("s/lr.sbatch", name="lr-scan", gpus_per_node=1, array=20, body="python train.py\n"),
            Pattern.SWEEP,
            "array of 20",
        ),
        (
            slurm_job("s/agent.sbatch", name="a", gpus_per_node=1, body="wandb agent team/proj/abc\n"),
            Pattern.SWEEP,
            "sweep agent",
        ),
        (
            k8s_job(
                "k/sweep.yaml", name="vit-lr", indexed=12, gpus_per_pod=1, command=["python", "train.py"]
            ),
            Pattern.SWEEP,
            "array of 12",
        ),
        (
            slurm_job("d/tok.sbatch", name="tokenize-web", body="python tok.py\n"),
            Pattern.DATA_PREP,
            "name mentions 'tokenize'",
        ),
        (slurm_job("d/x.sbatch", name="x", array=64), Pattern.DATA_PREP, "CPU-only array of 64 tasks"),
        (
            k8s_job(
                "k/vllm.yaml", kind="Deployment", name="vllm", services=[ir.Service("vllm", ports=(8000,))]
            ),
            Pattern.SERVING,
            "listens on port 8000",
        ),
        (
            k8s_job("k/worker.yaml", kind="Deployment", name="queue-worker"),
            Pattern.GENERAL,
            "a long-running Deployment with no Service, port or server command: it serves no traffic",
        ),
        (
            k8s_job("k/svc.yaml", name="api", services=[ir.Service("api", ports=(80,))]),
            Pattern.SERVING,
            "listens on port 80",
        ),
        (
            slurm_job(
                "s/vllm.sbatch", name="x", gpus_per_node=2, body="vllm serve /fsx/models/m --port 8000\n"
            ),
            Pattern.SERVING,
            "inference server",
        ),
        (k8s_job("k/ray.yaml", kind="RayJob", name="embed-docs"), Pattern.BATCH_INFERENCE, "kind RayJob"),
        (
            slurm_job("e/eval.sbatch", name="eval", gpus_per_node=1, body="python eval.py\n"),
            Pattern.BATCH_INFERENCE,
            "name mentions 'eval'",
        ),
        (
            slurm_job("d/jl.sbatch", name="jl", body="jupyter lab --port 8888\n"),
            Pattern.INTERACTIVE,
            "job mentions 'jupyter'",
        ),
        (
            slurm_job("d/devbox.sh", name="dev", body="sleep infinity\n"),
            Pattern.INTERACTIVE,
            "keeps a session open",
        ),
        (
            slurm_job(
                "h/md.sbatch",
                name="md",
                nodes=16,
                modules=["gromacs/2024", "openmpi/4.1"],
                launchers=[launcher("mpirun", "gmx_mpi", "mdrun")],
            ),
            Pattern.HPC_MPI,
            "MPI without an ML framework: mpirun",
        ),
        (
            slurm_job(
                "h/nek.sbatch",
                name="nek5000",
                nodes=4,
                modules=["intel-oneapi-mpi"],
                launchers=[launcher("srun", "./nek5000")],
            ),
            Pattern.HPC_MPI,
            "MPI without an ML framework",
        ),
        (slurm_job("o/clean.sbatch", name="nightly-cleanup"), Pattern.MAINTENANCE, "name mentions 'cleanup'"),
        (
            slurm_job("o/x.sbatch", name="report", kind="scrontab", schedule="0 2 * * *"),
            Pattern.MAINTENANCE,
            "runs on a schedule (0 2 * * *)",
        ),
        (
            k8s_job("k/cron.yaml", kind="CronJob", name="models-to-s3", schedule="@daily"),
            Pattern.MAINTENANCE,
            "runs on a schedule",
        ),
        (
            wrapper("p/run.sh", submit("a.sbatch"), submit("b.sbatch")),
            Pattern.ORCHESTRATION,
            "wrapper script that submits 2 jobs",
        ),
        (
            slurm_job("x/plain.sbatch", name="x", body="python main.py\n"),
            Pattern.GENERAL,
            "a CPU job with no recognisable workload signal",
        ),
        (slurm_job("x/gpu.sbatch", name="x", gpus_per_node=1), Pattern.GENERAL, "a GPU job"),
    ],
)
def test_patterns(job: ir.Job, pattern: str, reason: str) -> None:
    found = classify_job(job, SITE)
    assert found.pattern == pattern
    assert any(reason in r for r in found.reasons), found.reasons


def test_mpi_with_an_ml_framework_is_training_not_hpc() -> None:
    nemo = slurm_job(
        "t/nemo.sbatch",
        name="nemo-pretrain",
        nodes=2,
        gpus_per_node=8,
        launchers=[launcher("srun", "python", "megatron_gpt_pretraining.py", mpi="pmix")],
    )
    assert classify_job(nemo).pattern == Pattern.SMALL_TRAINING


def test_comments_in_the_body_are_not_evidence() -> None:
    job = slurm_job(
        "x/a.sbatch", name="x", body="# eval runs after training, see the wrapper\npython main.py\n"
    )
    assert classify_job(job).pattern == Pattern.GENERAL


def test_pods_are_not_nodes() -> None:
    # 16 pods of one GPU each fill two 8-GPU nodes, not sixteen
    job = k8s_job(
        "k/ddp.yaml",
        kind="PyTorchJob",
        name="ddp",
        components=[component("worker", replicas=16, gpus_per_pod=1)],
    )
    found = classify_job(job, SITE)
    assert found.pattern == Pattern.SMALL_TRAINING
    assert "2 nodes <= large_training_nodes (4)" in found.reasons


def test_every_pattern_is_known() -> None:
    assert len(set(Pattern)) == len(Pattern) == 13


# ---------------------------------------------------------------------------
# Recommendations to Kubernetes


def test_large_training_with_strict_needs_stays_on_slurm() -> None:
    rec = assess(pretrain()).recommendation
    assert rec.action == Action.STAY
    assert rec.rule.id == "large-training-on-slurm"
    assert "ParallelCluster vs Kubernetes" in rec.rule.source and "Nanobase" in rec.rule.source
    assert "training above 4 nodes" in rec.rule.says
    assert rec.thresholds == (("large_training_nodes", 4),)
    assert "exclusive nodes (node)" in rec.reason and "FI_EFA_USE_DEVICE_RDMA" in rec.reason
    assert texts(rec) == ()


def test_the_threshold_comes_from_the_site_config() -> None:
    roomy = parse_site_config({"thresholds": {"large_training_nodes": 64}})
    found = assess(pretrain(nodes=32), config=roomy)
    assert found.pattern == Pattern.SMALL_TRAINING
    assert found.recommendation.action == Action.MOVE_WITH_CHANGES
    assert found.recommendation.rule.says.startswith("training on up to 64 nodes")
    assert found.recommendation.thresholds == (("large_training_nodes", 64),)


def test_above_threshold_without_strict_needs_moves_with_changes() -> None:
    job = slurm_job(
        "t/loose.sbatch", name="train-loose", nodes=6, gpus_per_node=8, hours=4, body="python train.py\n"
    )
    rec = assess(job).recommendation
    assert (rec.action, rec.rule.id) == (Action.MOVE_WITH_CHANGES, "large-training-on-slurm")
    assert "no gang, topology or whole-node need" in rec.reason


def test_small_training_moves_with_changes() -> None:
    job = slurm_job(
        "t/vit.sbatch",
        name="vit",
        nodes=2,
        gpus_per_node=8,
        partition="gpu",
        launchers=[launcher("torchrun", "train.py")],
        software_envs=[("conda", "vision")],
        signal="USR1",
        requeue=True,
        storage=[read("/fsx/datasets/imagenet"), write("/lustre/runs/vit")],
        mail=True,
    )
    rec = assess(job).recommendation
    assert (rec.action, rec.rule.id) == (Action.MOVE_WITH_CHANGES, "mid-training-either")
    assert (
        rec.rule.source
        == "“AWS ParallelCluster vs Kubernetes: What Actually Works for Production AI”, decision tree, "
        "row 'training on 1-4 nodes'"
    )
    assert list(texts(rec)) == [
        "needs a container image for conda vision (migrate.yaml maps: registry/vision:1)",
        "gang scheduling via Kueue or Volcano (all pods start together)",
        "rendezvous through a PyTorchJob or a JobSet headless Service instead of the Slurm node list",
        "checkpoint on SIGTERM within terminationGracePeriodSeconds instead of --signal=USR1@300",
        "--requeue becomes backoffLimit and a podFailurePolicy",
        "mount /fsx through PVC fsx-pvc",
        "make /lustre mountable in pods (no PVC for it in migrate.yaml)",
        "mail notifications have no Kubernetes analogue: alert from monitoring instead",
    ]


def test_fine_tuning_follows_the_mixed_workload_row() -> None:
    job = slurm_job(
        "t/ft.sbatch", name="llama-lora", gpus_per_node=8, containers=[ir.Container("nvcr.io/nemo:24.05")]
    )
    rec = assess(job).recommendation
    assert (rec.action, rec.rule.id) == (Action.MOVE, "mixed-to-kubernetes")
    assert "mixed training, fine-tuning and serving" in rec.rule.source
    assert texts(rec) == ()


def test_large_fine_tuning_with_strict_needs_stays() -> None:
    rec = assess(pretrain(name="llama70b-sft")).recommendation
    assert (rec.action, rec.rule.id) == (Action.STAY, "large-training-on-slurm")


def test_sweep_moves_with_kueue() -> None:
    job = slurm_job(
        "s/lr.sbatch", name="lr-sweep", gpus_per_node=1, array=20, array_throttle=4, body="python train.py\n"
    )
    rec = assess(job).recommendation
    assert (rec.action, rec.rule.id) == (Action.MOVE_WITH_CHANGES, "sweeps-on-kubernetes")
    assert "hyperparameter sweeps" in rec.rule.source
    assert "array of 20 becomes an Indexed Job (completions 20, parallelism 4)" in texts(rec)
    assert "trials must tolerate preemption under Kueue (checkpoint or keep them short)" in texts(rec)


def test_data_preprocessing_either() -> None:
    job = slurm_job(
        "d/tok.sbatch", name="tokenize", partition="cpu", containers=[ir.Container("registry/data:1")]
    )
    rec = assess(job).recommendation
    assert (rec.action, rec.rule.id) == (Action.MOVE_WITH_CHANGES, "data-prep-either")
    assert texts(rec) == ("partition cpu has no queue or node selector in migrate.yaml",)


def test_serving_on_slurm_moves_to_kubernetes() -> None:
    job = slurm_job(
        "s/vllm.sbatch",
        name="x",
        gpus_per_node=2,
        containers=[ir.Container("vllm/vllm-openai:0.5")],
        body="vllm serve m\n",
    )
    rec = assess(job).recommendation
    assert (rec.action, rec.rule.id) == (Action.MOVE_WITH_CHANGES, "serving-on-kubernetes")
    assert texts(rec) == ("a Deployment with a Service (and an autoscaler) instead of a batch job",)


def test_hpc_mpi_large_stays_small_moves() -> None:
    big = slurm_job(
        "h/md.sbatch",
        name="md",
        nodes=16,
        modules=["gromacs/2024"],
        launchers=[launcher("mpirun", "gmx_mpi")],
    )
    rec = assess(big).recommendation
    assert (rec.action, rec.rule.id) == (Action.STAY, "hpc-on-slurm")
    small = slurm_job(
        "h/md2.sbatch",
        name="md",
        nodes=2,
        modules=["gromacs/2024"],
        launchers=[launcher("mpirun", "gmx_mpi")],
    )
    rec = assess(small).recommendation
    assert (rec.action, rec.rule.id) == (Action.MOVE_WITH_CHANGES, "small-mpi-either")
    assert (
        texts(rec)[0] == "needs a container image for gromacs/2024 (migrate.yaml maps: registry/gromacs:2024)"
    )
    assert "MPI ranks started by an MPIJob (or Volcano's mpi plugin) instead of srun/mpirun" in texts(rec)
    strict = slurm_job(
        "h/md3.sbatch", name="md", nodes=2, exclusive="node", launchers=[launcher("mpirun", "lmp")]
    )
    assert assess(strict).recommendation.action == Action.STAY


def test_maintenance_tied_to_nodes_stays_otherwise_both_sides() -> None:
    burn = ir.replace(
        slurm_job("o/burn", name="gpu-burn", nodes=3, gpus_per_node=8),
        placement=ir.Placement(nodelist="gpu-[017-020]"),
    )
    rec = assess(burn).recommendation
    assert (rec.action, rec.rule.id) == (Action.STAY, "maintenance-both-sides")
    cron = slurm_job(
        "o/report", name="report", kind="scrontab", schedule="0 2 * * *", containers=[ir.Container("r/ops:1")]
    )
    rec = assess(cron).recommendation
    assert rec.action == Action.MOVE_WITH_CHANGES
    assert texts(rec) == (
        "schedule 0 2 * * * becomes a CronJob",
        "keep the Slurm copy while Slurm still runs jobs (upkeep is per cluster)",
    )


def test_orchestration_becomes_a_workflow() -> None:
    rec = assess(
        wrapper("p/run.sh", submit("a.sbatch", "a"), submit("b.sbatch", None, [dep("afterok", "$a")]))
    ).recommendation
    assert (rec.action, rec.rule.id) == (Action.MOVE_WITH_CHANGES, "orchestration-workflow")
    assert texts(rec) == (
        "the submit chain becomes a JobSet with dependsOn or a workflow (Argo Workflows, JobFlow)",
    )


def test_dependency_and_placement_changes() -> None:
    job = slurm_job(
        "x/dep.sbatch",
        name="post",
        containers=[ir.Container("/fsx/containers/tools.sqsh")],
        deps=[dep("afterok", "123"), dep("aftercorr", "124"), dep("singleton")],
        constraint="h100&ib",
        topology=[("switches", "1")],
        licenses=["matlab"],
        monitoring=["nvidia-smi", "node-exporter-textfile"],
    )
    changes = texts(assess(job).recommendation)
    for expected in (
        "push image /fsx/containers/tools.sqsh to a registry as an OCI image",
        "dependency chain needs JobSet dependsOn or a workflow engine (Argo, Volcano JobFlow)",
        "aftercorr (index-by-index) has no Kubernetes analogue: merge the two arrays or use a workflow",
        "singleton has no Kubernetes analogue: serialise through a one-at-a-time queue or a workflow",
        "topology-aware placement via Kueue TAS or the JobSet exclusive-topology annotation",
        "node features 'h100&ib' become a node selector or affinity",
        "licenses matlab become a Kueue resource quota",
        "GPU telemetry from the DCGM exporter and Prometheus instead of per-job nvidia-smi/dcgmi",
        "node-exporter textfile metrics need a pushgateway or a metrics endpoint from the pod",
    ):
        assert expected in changes


def test_sqsh_image_mapped_in_site_config() -> None:
    config = parse_site_config({"images": {"/fsx/containers/t.sqsh": "registry/t:1"}})
    job = slurm_job("x/a.sbatch", name="x", containers=[ir.Container("/fsx/containers/t.sqsh")])
    assert texts(assess(job, config=config).recommendation) == (
        "use registry image registry/t:1 for /fsx/containers/t.sqsh (migrate.yaml images)",
    )


def test_plain_containerised_job_moves_as_is() -> None:
    job = slurm_job("x/a.sbatch", name="x", containers=[ir.Container("registry/app:1")])
    rec = assess(job).recommendation
    assert (rec.action, texts(rec), rec.rule.id) == (Action.MOVE, (), "general-either")


# ---------------------------------------------------------------------------
# Recommendations to Slurm


def test_serving_stays_on_kubernetes_when_moving_to_slurm() -> None:
    server = k8s_job(
        "k/vllm.yaml", kind="Deployment", name="vllm", services=[ir.Service("vllm", ports=(8000,))]
    )
    rec = assess(server, Direction.TO_SLURM).recommendation
    assert (rec.action, rec.rule.id) == (Action.STAY, "serving-on-kubernetes")


def test_a_long_running_worker_is_not_serving_and_stays_on_kubernetes() -> None:
    """No Service, port or server command: not serving traffic, but it never ends, so no Slurm job."""
    worker = assess(k8s_job("k/worker.yaml", kind="Deployment", name="queue-worker"), Direction.TO_SLURM)
    assert worker.pattern == Pattern.GENERAL
    assert "serves no traffic" in worker.reasons[0]
    rec = worker.recommendation
    assert (rec.action, rec.rule.id) == (Action.STAY, "long-running-on-kubernetes")
    assert "hybrid" in rec.reason


def test_a_ray_cluster_is_a_service_as_the_slurm_writer_treats_it() -> None:
    """The plan and the Slurm writer share one set of long-running kinds: a RayCluster stays on Kubernetes,
    classed by what it runs when it serves no traffic."""
    found = assess(k8s_job("k/ray.yaml", kind="RayCluster", name="embeddings"), Direction.TO_SLURM)
    assert found.pattern == Pattern.BATCH_INFERENCE
    assert "a long-running RayCluster with no Service, port or server command" in found.reasons[0]
    rec = found.recommendation
    assert (rec.action, rec.rule.id) == (Action.STAY, "long-running-on-kubernetes")


def test_long_lived_interactive_service_stays_on_kubernetes() -> None:
    notebook = k8s_job("k/jl.yaml", kind="StatefulSet", name="jupyterhub-user")
    found = assess(notebook, Direction.TO_SLURM)
    assert found.pattern == Pattern.INTERACTIVE
    assert found.recommendation.action == Action.STAY


def test_large_kubernetes_training_moves_to_slurm() -> None:
    job = k8s_job(
        "k/ptj.yaml",
        kind="PyTorchJob",
        name="bert",
        queue="gpu-queue",
        components=[
            component("master", gpus_per_pod=8, mounts=[pvc("fsx-pvc", "/fsx")]),
            component("worker", replicas=7, gpus_per_pod=8),
        ],
        environment=(ir.EnvVar("HF_TOKEN", secret=ir.SecretRef("hf", "token")),),
    )
    found = assess(job, Direction.TO_SLURM)
    assert found.pattern == Pattern.LONG_TRAINING
    rec = found.recommendation
    assert (rec.action, rec.rule.id) == (Action.MOVE_WITH_CHANGES, "large-training-on-slurm")
    assert texts(rec) == (
        "run image registry.example.com/app:1 through pyxis/enroot or Apptainer",
        "claim fsx-pvc is /fsx on Slurm nodes",
        "8 pods become one allocation of 8 nodes, started with srun",
    )


def test_kubernetes_batch_to_slurm_changes() -> None:
    sweep = k8s_job(
        "k/sweep.yaml",
        name="vit-lr",
        indexed=12,
        gpus_per_pod=1,
        command=["python", "train.py"],
        queue="mystery-queue",
        mounts=[pvc("scratch-pvc", "/scratch")],
        environment=(ir.EnvVar("WANDB_API_KEY", secret=ir.SecretRef("wandb")),),
    )
    rec = assess(sweep, Direction.TO_SLURM).recommendation
    assert (rec.action, rec.rule.id) == (Action.MOVE_WITH_CHANGES, "sweeps-on-kubernetes")
    assert texts(rec) == (
        "run image registry.example.com/app:1 through pyxis/enroot or Apptainer",
        "claim scratch-pvc has no Slurm path in migrate.yaml filesystems",
        "secrets wandb must reach the job another way (a file readable only by its user)",
        "Indexed Job of 12 becomes a job array (--array=0-11)",
        "queue mystery-queue has no partition in migrate.yaml",
    )
    cron = k8s_job("k/cron.yaml", kind="CronJob", name="models-to-s3", schedule="@daily")
    assert "schedule @daily becomes a scrontab entry" in texts(
        assess(cron, Direction.TO_SLURM).recommendation
    )
    ray = k8s_job("k/ray.yaml", kind="RayJob", name="embed")
    assert "start the Ray head and workers inside the allocation" in texts(
        assess(ray, Direction.TO_SLURM).recommendation
    )
    mpi = k8s_job(
        "k/mpi.yaml",
        kind="MPIJob",
        name="lammps",
        components=[component("launcher"), component("worker", replicas=4)],
    )
    found = assess(mpi, Direction.TO_SLURM)
    assert (found.pattern, found.recommendation.rule.id) == (Pattern.HPC_MPI, "hpc-on-slurm")
    flow = k8s_job("k/flow.yaml", name="train", deps=[dep("dependsOn", "prep")], gpus_per_pod=8)
    assert "dependsOn becomes --dependency=afterok between sbatch jobs (or steps of one script)" in (
        texts(assess(flow, Direction.TO_SLURM).recommendation)
    )


# ---------------------------------------------------------------------------
# Across the board


def test_jobs_already_on_the_target_are_marked() -> None:
    assert assess(pretrain(), Direction.TO_SLURM).recommendation.action == Action.ALREADY_THERE
    rec = assess(k8s_job("k/a.yaml", name="a"), Direction.TO_KUBERNETES).recommendation
    assert (rec.action, rec.rule.id, rec.reason) == (
        Action.ALREADY_THERE,
        "already-on-target",
        "already runs on Kubernetes",
    )


def test_unknown_direction_is_an_error() -> None:
    with pytest.raises(ValueError, match="direction must be one of to_kubernetes, to_slurm"):
        assess(pretrain(), "sideways")


def test_every_rule_cites_a_source() -> None:
    for rule_id, (source, says, names) in RULES.items():
        assert source and says, rule_id
        for name in names:
            assert hasattr(SiteConfig().thresholds, name)
    seeded = [rid for rid, (source, _, _) in RULES.items() if "article on" in source or "”" in source]
    assert len(seeded) >= 9


def test_assess_jobs_is_sorted_and_deterministic() -> None:
    jobs = [
        pretrain(),
        slurm_job("a/x.sbatch", name="x"),
        k8s_job("k/vllm.yaml", kind="Deployment", name="vllm"),
        slurm_job("d/tok.sbatch", name="tokenize", array=8),
    ]
    first = assess_jobs(jobs, Direction.TO_KUBERNETES, SITE)
    assert [a.job_id for a in first] == sorted(j.id for j in jobs)
    for seed in range(3):
        shuffled = jobs[:]
        random.Random(seed).shuffle(shuffled)
        again = assess_jobs(shuffled, Direction.TO_KUBERNETES, SITE)
        assert [(a.job_id, a.pattern, a.reasons, a.recommendation) for a in again] == [
            (a.job_id, a.pattern, a.reasons, a.recommendation) for a in first
        ]
    assert all(a.reasons for a in first)
    assert {a.recommendation.action for a in first} <= {
        Action.MOVE,
        Action.MOVE_WITH_CHANGES,
        Action.STAY,
        Action.ALREADY_THERE,
    }


@pytest.mark.parametrize(
    ("job", "pattern"),
    [
        # "serving" in a registry path does not make a batch job a server
        (
            k8s_job(
                "k/ray.yaml", kind="RayJob", name="llm-batch-generate", image="registry/serving/vllm:0.5"
            ),
            Pattern.BATCH_INFERENCE,
        ),
        (k8s_job("k/embed.yaml", name="embed-docs", indexed=8, gpus_per_pod=1), Pattern.BATCH_INFERENCE),
        (
            slurm_job(
                "e/harness.sbatch", name="harness", gpus_per_node=8, array=6, body="python -m lm_eval\n"
            ),
            Pattern.SWEEP,
        ),
        (slurm_job("x/gpu-array.sbatch", name="x", gpus_per_node=1, array=4), Pattern.SWEEP),
        (
            slurm_job("o/nccl_allreduce_test.sbatch", name="nccl-allreduce", nodes=8, gpus_per_node=8),
            Pattern.MAINTENANCE,
        ),
        (slurm_job("o/t.sbatch", name="t", body="srun all_reduce_perf -b 8 -e 8G\n"), Pattern.MAINTENANCE),
        (slurm_job("d/download_web.sbatch", name="download-web"), Pattern.DATA_PREP),
    ],
)
def test_pattern_edge_cases(job: ir.Job, pattern: str) -> None:
    assert classify_job(job, SITE).pattern == pattern


def test_facts_keep_only_the_words_rules_look_for() -> None:
    body = "python train.py --data /fsx/shards/webtext --lr 3e-4 --run-name quux\n"
    job = slurm_job("llm/pretrain_xyz.sbatch", name="zeta-train", body=body, modules=["cleanup/1.0"])
    facts = facts_of(job, SITE)
    assert facts.command_words == {"train", "shards"}
    assert facts.identity_words == {"train", "pretrain", "cleanup"}
    assert facts.words() <= VOCABULARY
