"""The phased plan: units, phase order, capacity arithmetic, chains kept whole, storage in Phase 0."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from conftest import CORPUS, REPO
from ir_builders import (
    container,
    dep,
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
from migrate.graph import model as gm
from migrate.graph.builder import build_graph
from migrate.plan.demand import cron_runs_per_day
from migrate.plan.planner import (
    DECOMMISSION,
    HYBRID,
    PLAN_SCHEMA,
    PhaseKind,
    Plan,
    build_plan,
    plan_json,
)
from migrate.site.config import SiteConfig, parse_site_config
from migrate.vocab import Direction

SITE = parse_site_config(
    {
        "filesystems": [
            {"prefix": "/fsx", "kind": "lustre", "pvc": "fsx-pvc"},
            {"prefix": "/lustre", "kind": "lustre"},
        ],
        "partitions": {
            "gpu": {"nodes": 40, "gpus_per_node": 8, "queue": "gpu-queue"},
            "cpu": {"nodes": 20, "queue": "cpu-queue"},
        },
        "thresholds": {"pilot_max_units": 2, "wave_max_units": 2},
    }
)


def site() -> list[ir.Job]:
    """An LLM pipeline whose pretraining stays on Slurm, serving on Kubernetes, and smaller movable work."""
    return [
        # pretraining: 32 exclusive nodes, stays; resumed by a wrapper that must stay with it
        slurm_job(
            "llm/pretrain.sbatch",
            name="pretrain",
            nodes=32,
            gpus_per_node=8,
            hours=48,
            exclusive="node",
            partition="gpu",
            launchers=[launcher("srun", "python", "train.py")],
            storage=[read("/fsx/tok/web", 10), write("/fsx/ckpt/llm", 11)],
        ),
        wrapper("llm/resume.sh", submit("pretrain.sbatch", "a", line=2)),
        # tokenization feeds pretraining through /fsx only: it can move, bridged by shared storage
        slurm_job(
            "llm/tokenize.sbatch",
            name="tokenize",
            partition="cpu",
            hours=4,
            array=10,
            storage=[write("/fsx/tok/web", 5)],
            containers=[ir.Container("registry/data:1")],
        ),
        # the server reads the checkpoint: already on Kubernetes
        k8s_job(
            "serve/vllm.yaml",
            kind="Deployment",
            name="vllm",
            mounts=[pvc("fsx-pvc", "/fsx", read_only=True)],
            storage=[read("/fsx/ckpt/llm/release", 20)],
        ),
        # a small chain: prep -> train -> eval, chained by a wrapper, all movable
        wrapper(
            "vision/run.sh",
            submit("prep.sbatch", "p", line=2),
            submit("train.sbatch", "t", [dep("afterok", "$p")], line=3),
            submit("eval.sbatch", None, [dep("afterok", "$t")], line=4),
        ),
        slurm_job(
            "vision/prep.sbatch",
            name="prep",
            partition="cpu",
            hours=2,
            storage=[write("/lustre/vision/prep", 3)],
        ),
        slurm_job(
            "vision/train.sbatch",
            name="train-vit",
            nodes=2,
            gpus_per_node=8,
            hours=12,
            partition="gpu",
            launchers=[launcher("torchrun", "train.py")],
            storage=[read("/lustre/vision/prep", 4), write("/fsx/ckpt/vision", 5)],
        ),
        slurm_job(
            "vision/eval.sbatch",
            name="eval-vit",
            gpus_per_node=1,
            hours=1,
            partition="gpu",
            body="python eval.py\n",
        ),
        # an independent low-risk job and an upkeep job
        slurm_job(
            "misc/report.sbatch",
            name="report",
            partition="cpu",
            hours=1,
            containers=[ir.Container("registry/r:1")],
        ),
        slurm_job(
            "ops/cleanup.sbatch",
            name="scratch-cleanup",
            partition="cpu",
            hours=1,
            storage=[read("/fsx/ckpt", 3)],
        ),
    ]


@pytest.fixture(scope="module")
def plan() -> Plan:
    return build_plan(site(), Direction.TO_KUBERNETES, SITE)


def phase(plan: Plan, phase_id: str) -> dict[str, object]:
    [found] = [p for p in plan.to_dict()["phases"] if p["id"] == phase_id]
    return found


def test_phase_order(plan: Plan) -> None:
    ids = [p.id for p in plan.phases]
    assert ids[0] == "P0" and plan.phases[0].name == PhaseKind.FOUNDATIONS
    assert ids[1] == "P1" and plan.phases[1].name == PhaseKind.PILOT
    assert ids[-1] == "END"
    assert ids[2:-1] == [f"W{i}" for i in range(1, len(ids) - 2)]


def test_every_phase_in_plan_json_says_its_kind(plan: Plan) -> None:
    phases = json.loads(plan_json(plan))["phases"]
    kinds = [p["kind"] for p in phases]
    assert kinds == ["foundations", "pilot", *["wave"] * (len(phases) - 3), "end"]
    assert [p.kind for p in plan.phases] == kinds


def test_units_and_what_moves(plan: Plan) -> None:
    units = {tuple(d.unit.jobs): d for d in plan.units}
    llm = units[("llm/pretrain.sbatch", "llm/resume.sh", "llm/tokenize.sbatch", "serve/vllm.yaml#0")]
    assert llm.action == "split"
    assert llm.moving == ("llm/tokenize.sbatch",)
    assert llm.staying == ("llm/resume.sh", "llm/pretrain.sbatch")
    assert llm.already == ("serve/vllm.yaml#0",)
    assert dict(llm.held)["llm/resume.sh"].startswith("chained by dependencies to llm/pretrain.sbatch")
    assert llm.bridges == (
        "llm/pretrain.sbatch -> serve/vllm.yaml#0 through /fsx/ckpt/llm",
        "llm/tokenize.sbatch -> llm/pretrain.sbatch through /fsx/tok/web",
    )
    vision = units[("vision/eval.sbatch", "vision/prep.sbatch", "vision/run.sh", "vision/train.sbatch")]
    assert vision.action == "move"
    assert vision.moving == (
        "vision/run.sh",
        "vision/prep.sbatch",
        "vision/train.sbatch",
        "vision/eval.sbatch",
    )
    every = sorted(j for d in plan.units for j in d.unit.jobs)
    assert every == sorted(j.id for j in site())


def test_each_moving_job_is_in_exactly_one_phase(plan: Plan) -> None:
    moving = sorted(j for d in plan.units for j in d.moving)
    placed = sorted(j for p in plan.phases for j in p.jobs)
    assert placed == moving


def test_dependency_chains_never_straddle_phases(plan: Plan) -> None:
    graph = build_graph(site(), SITE)
    phase_of = {j: p.id for p in plan.phases for j in p.jobs}
    side = {j: "moves" for j in phase_of}
    for d in plan.units:
        side |= {j: "stays" for j in d.staying} | {j: "already" for j in d.already}
    for u, v, kind in graph.edges(data="type"):
        if kind not in (gm.DEPENDS_ON, gm.SUBMITS) or not v.startswith("job:"):
            continue
        a, b = gm.split_node(u)[1], gm.split_node(v)[1]
        assert side[a] == side[b], (a, b)  # never one side moving and the other staying
        if side[a] == "moves":
            assert phase_of[a] == phase_of[b], (a, b)


def test_pilot_is_low_risk_and_skips_upkeep(plan: Plan) -> None:
    pilot = plan.phases[1]
    risks = {d.unit.id: d.risk.score for d in plan.units}
    assert 1 <= len(pilot.units) <= SITE.thresholds.pilot_max_units
    assert all(risks[u] <= SITE.thresholds.pilot_max_risk for u in pilot.units)
    assert "ops/cleanup.sbatch" not in pilot.jobs
    later = [u for p in plan.phases[2:-1] for u in p.units]
    assert [risks[u] for u in later] == sorted(risks[u] for u in later)
    assert all(len(p.units) <= SITE.thresholds.wave_max_units for p in plan.phases[2:-1])


def test_gates_and_rollback(plan: Plan) -> None:
    for p in plan.phases[1:-1]:
        assert p.gates[0].endswith("until 3 consecutive successful runs on Kubernetes")
        assert p.gates[1] == "run time on Kubernetes within 10% of the Slurm baseline"
        assert p.rollback[0].startswith("stop submitting these jobs to Kubernetes")
    vision_phase = next(p for p in plan.phases if "vision/train.sbatch" in p.jobs)
    assert any("/fsx/ckpt/vision" in g and "/lustre/vision/prep" in g for g in vision_phase.gates)


def test_capacity_arithmetic(plan: Plan) -> None:
    totals = {"gpu": 40, "cpu": 20}
    for p in plan.phases[1:]:
        for cap in p.capacity:
            assert cap.source_nodes + cap.target_nodes == totals[cap.partition]
            assert 0 <= cap.target_nodes <= cap.total_nodes
    end = {c.partition: c for c in plan.phases[-1].capacity}
    gpu = end["gpu"]
    # moved gpu node-hours: train 2 nodes x 12 h + eval 1 GPU of an 8-GPU node x 1 h (0.125, rounded to
    # 0.12) = 24.12; pretrain keeps 32 x 48 = 1536
    assert (gpu.moved_node_hours, gpu.remaining_node_hours) == (24.12, 1536.0)
    # share round(40 x 25 / 1561) = 1, raised to the largest moved gang (2 nodes)
    assert (gpu.target_nodes, gpu.source_nodes) == (2, 38)
    assert gpu.source_nodes >= 32  # the pretraining gang still fits on Slurm


def test_capacity_never_starves_the_source() -> None:
    tight = parse_site_config({"partitions": {"gpu": {"nodes": 34, "gpus_per_node": 8}}})
    big = {
        "nodes": 32,
        "hours": 1,
        "exclusive": "node",
        "launchers": [launcher("srun", "python", "train.py")],
    }
    mid = {"nodes": 4, "hours": 100, "launchers": [launcher("torchrun", "train.py")]}
    jobs = [
        slurm_job("a/big.sbatch", name="pretrain", gpus_per_node=8, partition="gpu", **big),  # type: ignore[arg-type]
        slurm_job("a/mid.sbatch", name="train-mid", gpus_per_node=8, partition="gpu", **mid),  # type: ignore[arg-type]
    ]
    result = build_plan(jobs, Direction.TO_KUBERNETES, tight)
    for p in result.phases[1:]:
        for cap in p.capacity:
            assert cap.source_nodes >= 32 and cap.source_nodes + cap.target_nodes == 34
    assert any(
        "the 32 the largest job left on the source needs: the target gets 2 nodes in this phase "
        "and the source keeps 32" in w
        for w in result.warnings
    )


def test_shared_storage_is_in_phase_zero(plan: Plan) -> None:
    steps = {s.name: s for s in plan.phases[0].steps if s.kind == "storage"}
    assert "mounted on both schedulers" in steps["/fsx"].detail and "PV/PVC fsx-pvc" in steps["/fsx"].detail
    assert "no claim for it in migrate.yaml" in steps["/lustre"].detail
    assert "fs:/fsx" in plan.shared_filesystems


def test_phase_zero_operators_follow_the_jobs(plan: Plan) -> None:
    operators = {s.name: s.evidence for s in plan.phases[0].steps if s.kind == "operator"}
    assert "vision/train.sbatch" in operators["Kubeflow training operator"]
    assert "vision/train.sbatch" in operators["NVIDIA GPU Operator"]
    assert "llm/tokenize.sbatch" in operators["Kueue"]  # an array
    assert "Argo Workflows or Volcano JobFlow" in operators
    assert "MPI Operator" not in operators  # no MPI job moves
    kinds = [s.kind for s in plan.phases[0].steps]
    assert kinds.index("operator") < kinds.index("storage") < kinds.index("coexistence")
    queues = {s.name: s.detail for s in plan.phases[0].steps if s.kind == "queue"}
    assert queues["gpu"].startswith("mirror partition gpu as Kueue queue gpu-queue")


def test_end_state_hybrid_lists_what_stays(plan: Plan) -> None:
    end = plan.phases[-1]
    assert end.name == HYBRID
    stays = dict(end.stays)
    assert stays["llm/pretrain.sbatch"] == "stays by recommendation"
    assert "chained by dependencies" in stays["llm/resume.sh"]


def test_end_state_decommission_when_everything_moves() -> None:
    jobs = [
        slurm_job("a.sbatch", name="report", partition="cpu", hours=1, containers=[ir.Container("r/x:1")])
    ]
    result = build_plan(jobs, Direction.TO_KUBERNETES, SITE)
    end = result.phases[-1]
    assert end.name == DECOMMISSION
    assert any("no job ran on Slurm for a whole demand window (168 h)" in c for c in end.exit_criteria)
    cpu = {c.partition: c for c in end.capacity}["cpu"]
    assert (cpu.target_nodes, cpu.source_nodes) == (20, 0)  # nothing left needs the Slurm side


def test_cycles_block_their_unit() -> None:
    jobs = [
        slurm_job("a", name="a", deps=[dep("afterok", "b")], containers=[ir.Container("r/x:1")]),
        slurm_job("b", name="b", deps=[dep("afterok", "a")], containers=[ir.Container("r/x:1")]),
    ]
    result = build_plan(jobs, Direction.TO_KUBERNETES)
    [unit] = result.units
    assert unit.action == "blocked" and unit.risk.score == 100
    assert result.cycles == (("a", "b"),)
    assert result.phases[-1].name == HYBRID
    assert any("dependency cycle" in w for w in result.warnings)


def test_risk_has_reasons_and_fidelity_counts() -> None:
    jobs = [
        slurm_job("x.sbatch", name="x", nodes=2, gpus_per_node=8, launchers=[launcher("torchrun", "t.py")])
    ]
    quiet = build_plan(jobs, Direction.TO_KUBERNETES).units[0].risk
    noisy = build_plan(jobs, Direction.TO_KUBERNETES, fidelity={"x.sbatch": (2, 3)}).units[0].risk
    assert 0 < quiet.score < noisy.score <= 100
    assert "+10: translation drops 2 items" in noisy.reasons
    assert "+3: translation approximates 3 items (none lost)" in noisy.reasons
    assert any("gang scheduling" in r for r in quiet.reasons)


def test_an_image_to_push_is_a_new_image_whatever_its_file_is_called() -> None:
    """The image part of the risk counts changes by kind: an image file heatmaps:1.0 still needs pushing."""
    image = "/fsx/enroot/heatmaps:1.0.sqsh"
    jobs = [
        slurm_job("x.sbatch", name="x", containers=[container(image, "python", "plot.py", runtime="pyxis")])
    ]
    result = build_plan(jobs, Direction.TO_KUBERNETES)
    assert (
        f"push image {image} to a registry as an OCI image"
        in result.assessments[0].recommendation.changes[0].text
    )
    assert "+5: 1 job needs a new container image" in result.units[0].risk.reasons
    assert [(s.name, s.detail) for s in result.phases[0].steps if s.kind == "image"] == [
        (image, f"push image {image} to a registry as an OCI image, before the first run on the target")
    ]


def test_pilot_falls_back_to_the_lowest_risk_unit() -> None:
    strict = parse_site_config({"thresholds": {"pilot_max_risk": 0}})
    jobs = [
        slurm_job("x.sbatch", name="x", nodes=2, gpus_per_node=8, launchers=[launcher("torchrun", "t.py")])
    ]
    result = build_plan(jobs, Direction.TO_KUBERNETES, strict)
    assert result.phases[1].jobs == ("x.sbatch",)
    assert any("the pilot takes the lowest-risk unit" in w for w in result.warnings)


def test_nothing_to_move() -> None:
    result = build_plan([k8s_job("k.yaml", kind="Deployment", name="web")], Direction.TO_SLURM)
    assert [p.id for p in result.phases] == ["P0", "END"]
    assert result.phases[-1].name == HYBRID
    assert result.warnings == ("nothing moves: every job stays where it is or is already on the target",)


def test_reverse_direction_serving_stays_and_batch_moves() -> None:
    jobs = [
        k8s_job("k/vllm.yaml", kind="Deployment", name="vllm"),
        k8s_job(
            "k/train.yaml", kind="PyTorchJob", name="bert", queue="gpu-queue", mounts=[pvc("fsx-pvc", "/fsx")]
        ),
    ]
    result = build_plan(jobs, Direction.TO_SLURM, SITE)
    actions = {a.job_id: a.recommendation.action for a in result.assessments}
    assert actions == {"k/vllm.yaml#0": "stay", "k/train.yaml#0": "move-with-changes"}
    operators = {s.name for s in result.phases[0].steps if s.kind == "operator"}
    assert "pyxis and enroot (or Apptainer)" in operators
    assert result.phases[1].jobs == ("k/train.yaml#0",)


def test_plan_json_is_stable_and_deterministic(plan: Plan) -> None:
    text = plan_json(plan)
    data = json.loads(text)
    assert data["schema"] == PLAN_SCHEMA
    assert set(data) == {
        "schema", "direction", "site", "source", "target", "thresholds", "summary",
        "jobs", "units", "phases", "shared_filesystems", "cycles", "warnings", "coexistence",
    }  # fmt: skip
    assert data["coexistence"]["requested"] == "auto"
    assert data["thresholds"]["large_training_nodes"] == 4
    job = next(j for j in data["jobs"] if j["id"] == "llm/pretrain.sbatch")
    assert job["action"] == "stay" and job["rule"]["id"] == "large-training-on-slurm" and job["phase"] is None
    assert job["demand"] == {
        "partition": "gpu",
        "nodes": 32,
        "node_hours": 1536.0,
        "gpu_hours": 12288.0,
        "basis": "48 h time limit",
        "runs": 1.0,
        "runs_basis": "one run per 168 h window assumed: no schedule or accounting says more",
        "assumed": ["runs"],
    }
    jobs = site()
    for seed in range(3):
        random.Random(seed).shuffle(jobs)
        assert plan_json(build_plan(jobs, Direction.TO_KUBERNETES, SITE)) == text


def test_plan_json_gives_each_risk_factor_its_points(plan: Plan) -> None:
    """``factors`` holds as numbers what ``reasons`` says in words; the score is their sum, capped."""
    units = json.loads(plan_json(plan))["units"]
    for unit in units:
        risk = unit["risk"]
        if risk["factors"]:
            assert [f"+{f['points']}: {f['reason']}" for f in risk["factors"]] == risk["reasons"]
            assert risk["score"] == min(100, sum(f["points"] for f in risk["factors"]))
        else:  # nothing moves, or a cycle blocks the unit
            assert risk["reasons"] in (["nothing moves"], ["dependency cycle"])
    assert any(len(u["risk"]["factors"]) > 1 for u in units)


def test_unknown_direction() -> None:
    with pytest.raises(ValueError, match="direction must be one of"):
        build_plan([], "up")


@pytest.mark.parametrize(
    ("cron", "runs"),
    [
        ("0 2 * * *", 1),
        ("*/15 * * * *", 96),
        ("15 */6 * * *", 4),
        ("0 5 * * 0", 1 / 7),
        ("@hourly", 24),
        ("@weekly", 1 / 7),
        ("0,30 8-17 * * 1-5", 20 * 5 / 7),
        ("0 4 * * MON", 1 / 7),  # a day name counts as one day
    ],
)
def test_cron_runs_per_day(cron: str, runs: float) -> None:
    assert cron_runs_per_day(cron) == pytest.approx(runs, abs=1e-3)


# ---------------------------------------------------------------------------
# The sample site in corpus/, through the real readers


SAMPLE = CORPUS / "sample-site"


@pytest.mark.skipif(
    not (SAMPLE / "migrate.yaml").is_file(), reason="the sample site is not in the corpus yet"
)
def test_sample_site_plan(monkeypatch: pytest.MonkeyPatch) -> None:
    from migrate.scan import scanner
    from migrate.site.config import load_site_config

    monkeypatch.chdir(REPO)
    jobs = scanner.scan([str(SAMPLE.relative_to(REPO))]).jobs
    config = load_site_config(SAMPLE / "migrate.yaml")
    result = build_plan(jobs, Direction.TO_KUBERNETES, config)
    actions = {Path(a.job_id.split("#")[0]).name: a.recommendation.action for a in result.assessments}
    assert actions["pretrain_llm13b.sbatch"] == "stay"
    assert actions["vllm-llm13b.yaml"] == "already-there"
    assert sorted(j for d in result.units for j in d.unit.jobs) == sorted(j.id for j in jobs)
    storage = {s.name for s in result.phases[0].steps if s.kind == "storage"}
    assert "/fsx" in storage
    totals = {name: part.nodes for name, part in config.partitions}
    for p in result.phases[1:]:
        for cap in p.capacity:
            assert cap.source_nodes + cap.target_nodes == totals[cap.partition]
    assert plan_json(result) == plan_json(build_plan(list(reversed(jobs)), Direction.TO_KUBERNETES, config))


def test_default_config_plans_without_a_site_file() -> None:
    result = build_plan(site(), Direction.TO_KUBERNETES, SiteConfig())
    assert result.phases[0].name == PhaseKind.FOUNDATIONS
    assert all(p.capacity == () for p in result.phases)  # no inventory, no capacity to shift


def test_a_slurm_job_without_partition_runs_in_the_default_partition() -> None:
    from migrate.plan.demand import UNASSIGNED, partition_of
    from migrate.site.config import parse_site_config_text

    config = parse_site_config_text(
        "partitions:\n"
        "  cpu: {nodes: 4, default: true, queue: cpu-queue}\n"
        "  gpu: {nodes: 2, queue: gpu-queue}\n"
    )
    assert partition_of(slurm_job("a.sbatch"), config) == "cpu"
    assert partition_of(slurm_job("b.sbatch", partition="gpu"), config) == "gpu"
    # a Kubernetes job that no queue or node selector places runs where Slurm would put it: the default
    assert partition_of(k8s_job("c.yaml", name="c"), config) == "cpu"
    without_default = _no_default()
    assert partition_of(k8s_job("c.yaml", name="c"), without_default) == UNASSIGNED
    assert partition_of(slurm_job("a.sbatch"), without_default) == UNASSIGNED


def _no_default() -> SiteConfig:
    return parse_site_config({"partitions": {"cpu": {"nodes": 4}}})


# ---------------------------------------------------------------------------
# Demand weighted by what Slurm allocates

CLOUD = parse_site_config(
    {
        "partitions": {
            "gpu": {
                "nodes": 16,
                "gpus_per_node": 8,
                "cpus_per_node": 192,
                "mem_gb": 2048,
                "default": True,
                "max_time": "2-00:00:00",
                "queue": "gpu-queue",
            },
            "cpu": {"nodes": 8, "gpus_per_node": 0, "cpus_per_node": 96, "queue": "cpu-queue"},
        },
    }
)


def _demand(jobs: list[ir.Job], config: SiteConfig = CLOUD) -> dict[str, dict[str, object]]:
    doc = json.loads(plan_json(build_plan(jobs, Direction.TO_KUBERNETES, config)))
    return {j["id"]: j["demand"] for j in doc["jobs"]}


def test_whole_node_job_without_gpu_option_or_time_counts_all_gpus_for_the_partition_max_time() -> None:
    job = slurm_job("llm/train.sbatch", nodes=4, exclusive="node")  # no -p, no GPU option, no --time
    demand = _demand([job])["llm/train.sbatch"]
    assert demand["partition"] == "gpu"  # the default partition
    assert demand["gpu_hours"] == 4 * 8 * 48  # 32 GPUs for MaxTime 2 days
    assert demand["node_hours"] == 4 * 48
    assert "MaxTime=2-00:00:00" in str(demand["basis"])
    assert demand["assumed"] == ["runs"]  # the time limit is the partition's; how often it runs, nobody says


def test_array_tasks_of_one_gpu_pack_onto_one_node() -> None:
    job = slurm_job("sweep/hp.sbatch", gpus_per_node=1, hours=2, partition="gpu", array=48, array_throttle=8)
    demand = _demand([job])["sweep/hp.sbatch"]
    assert demand["nodes"] == 1  # 8 tasks at a time of 1 GPU each: one 8-GPU node, not 8 nodes
    assert demand["node_load"] == 0.125
    assert demand["node_hours"] == 48 * 2 / 8
    assert demand["gpu_hours"] == 48 * 2


def test_an_assumed_basis_is_said_in_plan_json() -> None:
    site = parse_site_config({"partitions": {"cpu": {"nodes": 4, "default": True}}})
    demand = _demand([slurm_job("misc/x.sbatch")], site)["misc/x.sbatch"]
    assert demand["basis"] == "no time limit: 1 h assumed"
    assert demand["assumed"] == [
        "time_limit",
        "node_share",
        "runs",
    ]  # no time limit, node size, or runs known


def test_services_and_batch_jobs_share_one_stated_basis() -> None:
    """A week: a service is on for all of it, a batch job runs once unless its schedule says how often."""
    jobs = [
        k8s_job("serve/ui.yaml", kind="Deployment", name="ui"),
        k8s_job("batch/etl.yaml", name="etl", command=("python", "etl.py")),
        k8s_job("batch/nightly.yaml", kind="CronJob", name="nightly", schedule="0 2 * * *"),
    ]
    doc = json.loads(plan_json(build_plan(jobs, Direction.TO_SLURM, SITE)))
    need = {j["id"].split("/")[0]: j["demand"] for j in doc["jobs"]}
    assert need["serve"]["runs_basis"] == "always on: all 168 h of the window"
    assert "runs" not in need["serve"].get("assumed", [])
    etl = next(j["demand"] for j in doc["jobs"] if j["id"].startswith("batch/etl"))
    nightly = next(j["demand"] for j in doc["jobs"] if j["id"].startswith("batch/nightly"))
    assert etl["runs"] == 1.0 and "runs" in etl["assumed"] and "time_limit" in etl["assumed"]
    assert (
        nightly["runs"] == 7.0 and nightly["runs_basis"] == "schedule 0 2 * * *: 7 runs per 168 h (1 a day)"
    )
    assert "runs" not in nightly.get("assumed", [])
    summary = doc["summary"]["demand"]
    assert summary["window_hours"] == 168 and summary["runs_assumed"] == 1
    assert summary["node_hours"] == summary["always_on_node_hours"] + summary["batch_node_hours"]
    assert summary["assumed_node_hours"] == etl["node_hours"] + nightly["node_hours"] * (
        "time_limit" in nightly["assumed"]
    )


def test_the_pilot_stands_for_the_largest_workload_patterns() -> None:
    """Not just the lowest-risk units: the lowest-risk unit of each large pattern of the moving work."""
    from migrate.scan import scanner
    from migrate.site.config import load_site_config

    jobs = scanner.scan([str(SAMPLE)]).jobs
    config = load_site_config(SAMPLE / "migrate.yaml")
    doc = json.loads(plan_json(build_plan(jobs, Direction.TO_KUBERNETES, config)))
    pilot = next(p for p in doc["phases"] if p["kind"] == "pilot")
    patterns = {j["id"]: j["pattern"] for j in doc["jobs"]}
    in_pilot = {patterns[j] for j in pilot["jobs"]}
    moving_hours: dict[str, float] = {}
    for job in doc["jobs"]:
        if job["phase"] and patterns[job["id"]] != "maintenance":
            moving_hours[job["pattern"]] = moving_hours.get(job["pattern"], 0.0) + job["demand"]["node_hours"]
    # the largest pattern that has a unit under the risk limit is in the pilot, with its share said
    assert "sweep" in in_pilot
    assert any(line.startswith(tuple(pilot["units"])) and "sweep" in line for line in pilot["why"])
    # interactive sessions (no node-hours to speak of) no longer fill the pilot ahead of real work
    assert "interactive" not in in_pilot
    assert len(pilot["units"]) == config.thresholds.pilot_max_units
    # the pattern holding most of the move, with no low-risk unit, is named as moving in the waves
    biggest = max(moving_hours, key=lambda p: moving_hours[p])
    assert biggest in in_pilot or any(biggest in line and "waves" in line for line in pilot["why"])


def test_a_helper_is_up_for_the_hours_its_users_run_not_their_node_share() -> None:
    from migrate.plan.demand import JobDemand, helper_demand

    helper = JobDemand("h", "gpu", 2, 8, 336.0, 2688.0, "always on over the window", 2.0, run_hours=168.0)
    # a one-CPU pod on a 96-CPU node for an hour: 0.01 node-hours, yet one hour of the helper
    user = JobDemand("u", "gpu", 1, 0, 0.01, 0.0, "1 h", 0.0104, run_hours=1.0)
    up = helper_demand(helper, [user, user], 168)
    assert up.basis == "up while the 2 jobs that use it run: 2 h"
    assert (up.node_hours, up.gpu_hours) == (4.0, 32.0)


@pytest.mark.parametrize("direction", [Direction.TO_SLURM, Direction.TO_KUBERNETES])
def test_no_jobs_no_phases_and_no_end_state(direction: Direction) -> None:
    from migrate.plan.planner import NO_JOBS

    result = build_plan([], direction)
    doc = json.loads(plan_json(result))
    assert doc["phases"] == [] and doc["summary"]["end_state"] is None
    assert doc.get("coexistence") is None
    assert NO_JOBS in doc["warnings"]
