"""The truth site in corpus/cases/truth-site: names, helpers, non-jobs, through the real readers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import CORPUS, GOLDEN, REPO
from golden import check_text

from migrate import ir
from migrate.plan.planner import Plan, build_plan, plan_json
from migrate.site.config import load_site_config
from migrate.translate import translate_jobs
from migrate.vocab import Direction, Format, Pattern

SITE = CORPUS / "cases" / "truth-site"


@pytest.fixture(scope="module")
def jobs() -> list[ir.Job]:
    from migrate.scan import scanner

    here = Path.cwd()
    import os

    os.chdir(REPO)
    try:
        return scanner.scan([str(SITE.relative_to(REPO))]).jobs
    finally:
        os.chdir(here)


@pytest.fixture(scope="module")
def plan(jobs: list[ir.Job]) -> Plan:
    return build_plan(jobs, Direction.TO_KUBERNETES, load_site_config(SITE / "migrate.yaml"))


@pytest.fixture(scope="module")
def plan_data(plan: Plan) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(plan_json(plan))
    return data


def _job(data: dict[str, Any], file_name: str) -> dict[str, Any]:
    found = [j for j in data["jobs"] if j["id"].split("#")[0].endswith("/" + file_name)]
    assert len(found) == 1, file_name
    return found[0]


def test_plan_golden(plan: Plan, update_golden: bool) -> None:
    check_text(GOLDEN / "plan" / "truth-site.to-kubernetes.json", plan_json(plan), update_golden)


def test_dotted_job_file_names_keep_their_whole_name(jobs: list[ir.Job]) -> None:
    config = load_site_config(SITE / "migrate.yaml")
    dotted = [j for j in jobs if j.source.path.endswith(("my.jax.v2.sbatch", "1.data-preprocessing.sbatch"))]
    result = translate_jobs(dotted, Format.KUBERNETES, config=config, style="emulate")  # SLURM_JOB_NAME
    names = {Path(t.job_id).name: t.name for t in result.translations}
    assert names == {
        "my.jax.v2.sbatch": "my-jax-v2",
        "1.data-preprocessing.sbatch": "job-1-data-preprocessing",
    }
    jax = next(t for t in result.translations if t.name == "my-jax-v2")
    text = "\n".join(jax.files.values())
    assert "name: SLURM_JOB_NAME\n" in text
    assert "value: my.jax.v2.sbatch" in text


def test_a_job_file_loses_only_a_known_extension() -> None:
    from migrate.names import job_file_name, job_file_stem

    assert job_file_stem("a/b/my.jax.v2.sbatch") == "my.jax.v2"
    assert job_file_stem("x/train.sbatch.j2") == "train"
    assert job_file_stem("x/run.v1") == "run.v1"
    assert job_file_name("a/b/my.jax.v2.sbatch") == "my.jax.v2.sbatch"


def test_helpers_belong_to_the_jobs_that_use_them(plan_data: dict[str, Any]) -> None:
    etcd = _job(plan_data, "etcd.yaml")
    ray = _job(plan_data, "raycluster.yaml")
    for helper, user in ((etcd, "elastic-pytorchjob.yaml"), (ray, "rayjob-tune.yaml")):
        assert helper["pattern"] == Pattern.HELPER, helper["reasons"]
        assert helper["unit"] == _job(plan_data, user)["unit"]
        assert helper["demand"]["node_hours"] < plan_data["thresholds"]["demand_window_hours"]
    assert "elastic-imagenet" in " ".join(etcd["reasons"])
    assert _job(plan_data, "ray_submit.sbatch")["unit"] == ray["unit"]
    serving = _job(plan_data, "vllm.yaml")
    assert serving["pattern"] == Pattern.SERVING
    assert "serves clients through Service vllm-chat" in serving["reasons"]


def test_a_helper_whose_service_is_kept_in_another_file_is_still_a_helper(plan_data: dict[str, Any]) -> None:
    """rdzv-service.yaml selects the pods of etcd-store.yaml: the jobs name the Service, not the store."""
    store = _job(plan_data, "etcd-store.yaml")
    assert store["pattern"] == Pattern.HELPER, store["reasons"]
    assert "the rendezvous store of elastic-bert" in store["reasons"][0]
    assert store["unit"] == _job(plan_data, "elastic-bert.yaml")["unit"]


def test_a_service_of_another_file_reaches_only_the_pods_it_selects(tmp_path: Path) -> None:
    from migrate.scan import scanner

    for name in ("etcd-store.yaml", "rdzv-service.yaml"):
        (tmp_path / name).write_text((SITE / "rendezvous-apart" / name).read_text())
    (store,) = scanner.scan([str(tmp_path)]).jobs
    assert store.services[0].addresses == ("rdzv",) and 2379 in store.services[0].ports
    other = (SITE / "rendezvous-apart" / "rdzv-service.yaml").read_text().replace("training", "serving")
    (tmp_path / "rdzv-service.yaml").write_text(other)  # another namespace: not the store's Service
    (alone,) = scanner.scan([str(tmp_path)]).jobs
    assert alone.services[0].addresses == ()


@pytest.mark.parametrize(
    ("file_name", "why"),
    [
        ("node-setup.sh", 'node setup: its only Slurm use is sbatch --wrap "sleep 10"'),
        ("build_image.sbatch", "an image build"),
        ("run_unit_tests.sbatch", "a test harness: runs pytest"),
    ],
)
def test_setup_builds_and_test_harnesses_are_upkeep_not_pilot(
    plan_data: dict[str, Any], file_name: str, why: str
) -> None:
    job = _job(plan_data, file_name)
    assert job["pattern"] == Pattern.MAINTENANCE
    assert any(r.startswith(why) for r in job["reasons"]), job["reasons"]
    assert job["phase"] != "P1"
    pilot = next(p for p in plan_data["phases"] if p["id"] == "P1")
    patterns = {j["id"]: j["pattern"] for j in plan_data["jobs"]}
    assert all(patterns[j] != Pattern.MAINTENANCE for j in pilot["jobs"])
    assert _job(plan_data, "my.jax.v2.sbatch")["phase"] == "P1"


def test_each_diagnostic_is_counted_once_with_its_own_severity() -> None:
    from migrate.reports.model_scan import diagnostics_table, severity_counts
    from migrate.reports.view import DiagnosticGroup, DiagnosticItem

    items = (
        DiagnosticItem("a.sbatch:1", "error", "m"),
        DiagnosticItem("b.sbatch:2", "warning", "m"),
        DiagnosticItem("c.sbatch:3", "warning", "m"),
    )
    groups = (DiagnosticGroup("SLURM-UNKNOWN-OPTION", "error", "meaning", items),)
    assert severity_counts(groups) == (("error", 1), ("warning", 2), ("info", 0))
    rows = [row[:3] for row in diagnostics_table(groups).rows]
    assert rows == [("SLURM-UNKNOWN-OPTION", "error", "1"), ("SLURM-UNKNOWN-OPTION", "warning", "2")]


def test_the_workload_mix_counts_a_held_job_where_the_tables_do() -> None:
    from migrate.reports import fmt
    from migrate.reports.model_plan import dispositions, mix

    rule = {"id": "orchestration-workflow", "says": "s", "source": "s"}
    job = {
        "id": "w.sh",
        "pattern": "orchestration",
        "action": "move-with-changes",
        "rule": rule,
        "reason": "r",
        "thresholds": {},
        "demand": {"node_hours": 0.0, "gpu_hours": 0.0},
    }
    unit = {"id": "U001", "moving": [], "staying": ["w.sh"], "already_there": []}
    plan: Any = {"jobs": [job], "units": [unit], "source": "Slurm", "target": "Kubernetes"}
    assert dispositions(plan)["w.sh"] == "stay"
    assert [(row.outcome, row.jobs) for row in mix(plan, fmt.Relative.common(["w.sh"]))] == [("stay", 1)]


def test_outputs_cite_the_articles_and_say_what_is_dropped(plan_data: dict[str, Any]) -> None:
    text = json.dumps(plan_data, ensure_ascii=False)
    for internal in ("seeds/", "DESIGN.md", "seeds'", "capacity below"):
        assert internal not in text
    assert "AWS ParallelCluster vs Kubernetes: What Actually Works for Production AI" in text
    for unit in plan_data["units"]:
        for factor in unit["risk"]["factors"]:
            assert "drops 0" not in factor["reason"]
    images = [s for s in plan_data["phases"][0]["steps"] if s["kind"] == "image"]
    assert images and all(s["name"] in s["detail"] and s["detail"] != s["name"] for s in images)
    assert "registry.example.internal/base/cuda:12.4" in [s["name"] for s in images]


def test_placeholders_are_one_group_of_unresolved_references(
    jobs: list[ir.Job], plan_data: dict[str, Any]
) -> None:
    from migrate.graph.builder import build_graph
    from migrate.reports.model_graph import UNRESOLVED, UNRESOLVED_LABEL, graph_view
    from migrate.reports.model_plan import units_table

    graph = build_graph(jobs, load_site_config(SITE / "migrate.yaml"))
    view = graph_view(plan_data, graph)
    stores = {s.id: s for s in view.filesystems}
    assert set(stores) == {"fs:/fsx", UNRESOLVED}
    group = stores[UNRESOLVED]
    assert group.label == UNRESOLVED_LABEL
    assert group.kind == "$dep, ${FSX_CLAIM}, __PVC_NAME__"
    boxes = [j.label for u in view.units for j in u.jobs]
    assert not any("$dep" in label for label in boxes)
    cells = [row[8] for row in units_table(plan_data).rows]
    assert "unresolved references: ${FSX_CLAIM}, __PVC_NAME__" in cells
    assert not any(cell.startswith("pvc:") for cell in cells)


def test_a_label_is_cut_after_a_whole_word() -> None:
    from migrate.reports.svg_canvas import fit

    assert fit("1.data-preprocessing.sbatch", 17 * 11.5 * 0.6, 11.5).endswith(("-…", ".…"))
    assert fit("short", 200) == "short"


def test_report_golden(tmp_path: Path, update_golden: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    from migrate import __version__, api

    monkeypatch.chdir(REPO)
    rel = str(SITE.relative_to(REPO))
    api.run_report([rel], "kubernetes", str(tmp_path / "out"), config=f"{rel}/migrate.yaml")
    text = (tmp_path / "out" / "report.md").read_text(encoding="utf-8").replace(__version__, "VERSION")
    check_text(GOLDEN / "report" / "truth-site.report.md", text, update_golden)
