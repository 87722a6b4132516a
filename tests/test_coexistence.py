"""How both schedulers share the nodes: the choice, its phases, and the Slinky objects it writes."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import CORPUS, REPO
from golden import check_text

from migrate import api, json_indented
from migrate.plan.coexistence import idle_per_phase
from migrate.plan.phases import Capacity
from migrate.plan.planner import build_plan, plan_json
from migrate.scan import scanner
from migrate.site.config import SiteConfigError, load_site_config, parse_site_config_text
from migrate.translators.kubernetes.validate import validate_object
from migrate.vocab import CoexistenceMode, CoexistenceReason

SITES = CORPUS / "coexistence"
GOLDEN = CORPUS / "golden" / "coexistence"
SLURM_CONF = "corpus/cluster/slurm.conf"


def _plan(site: str, mode: str = "auto", config_text: str | None = None) -> dict[str, Any]:
    folder = SITES / site
    jobs = scanner.scan([str(folder)]).jobs
    config = parse_site_config_text(config_text) if config_text else load_site_config(folder / "migrate.yaml")
    return json.loads(plan_json(build_plan(jobs, "to_kubernetes", config, coexistence=mode)))


def _reasons(entry: dict[str, Any]) -> set[str]:
    return {r["reason"] for r in entry["reasons"]}


# ---------------------------------------------------------------------------
# auto, on three small sites


def test_a_light_week_keeps_static_partitioning() -> None:
    doc = _plan("static")["coexistence"]
    assert doc["mode"] == CoexistenceMode.PARTITION
    assert _reasons(doc) == {CoexistenceReason.SPLIT_KEEPS_GPUS_BUSY, CoexistenceReason.MIXED_WORKLOAD}
    rejected = {r["mode"]: _reasons(r) for r in doc["rejected"]}
    assert CoexistenceReason.SIMPLER_CONTROL_PLANE in rejected[CoexistenceMode.SLINKY]
    assert all(p["stranded"] == 0 for p in doc["idle_gpus"])


def test_stranded_gpus_and_sbatch_teams_choose_slinky() -> None:
    doc = _plan("slinky")["coexistence"]
    assert doc["mode"] == CoexistenceMode.SLINKY
    assert _reasons(doc) >= {CoexistenceReason.SPLIT_STRANDS_GPUS, CoexistenceReason.SLURM_TEAMS_LEAD}
    # 200 four-hour sweep tasks get 2 of the 8 nodes while the 6-node training idles most of its 6
    [pilot] = [p for p in doc["idle_gpus"] if p["phase"] == "P1"]
    assert pilot["stranded"] * 100 > 10 * doc["total_gpus"]
    rejected = {r["mode"]: _reasons(r) for r in doc["rejected"]}
    assert CoexistenceReason.VERSIONS_NOT_STATED in rejected[CoexistenceMode.SLURM_BRIDGE]
    assert doc["hybrid_controller"] is True  # the site's own slurmctld stays


def test_stranded_gpus_and_kubernetes_teams_choose_slurm_bridge() -> None:
    plan = _plan("bridge")
    doc = plan["coexistence"]
    assert doc["mode"] == CoexistenceMode.SLURM_BRIDGE
    assert _reasons(doc) >= {CoexistenceReason.SPLIT_STRANDS_GPUS, CoexistenceReason.KUBERNETES_TEAMS_LEAD}
    assert doc["teams"] == {"kubernetes": 3, "slurm": 2}
    # no node changes hands: every phase after Phase 0 shows the one pool
    later = plan["phases"][1:]
    assert all(p["capacity"] == [] and p["pool"][0]["shared_nodes"] == 8 for p in later)
    steps = {s["name"] for s in plan["phases"][0]["steps"] if s["kind"] == "coexistence"}
    assert steps == {"slurm-bridge", "partition slurm-bridge", "managed namespaces"}


def test_mig_nodes_or_old_releases_rule_the_bridge_out() -> None:
    text = (SITES / "bridge" / "migrate.yaml").read_text()
    mig = text.replace("default: true,", "default: true, gpu_sharing: mig,")
    doc = _plan("bridge", config_text=mig)["coexistence"]
    assert doc["mode"] == CoexistenceMode.SLINKY
    rejected = {r["mode"]: _reasons(r) for r in doc["rejected"]}
    assert CoexistenceReason.SHARED_GPU_NODES in rejected[CoexistenceMode.SLURM_BRIDGE]
    old = text.replace('kubernetes: "1.35"', 'kubernetes: "1.31"')
    doc = _plan("bridge", config_text=old)["coexistence"]
    assert doc["mode"] == CoexistenceMode.SLINKY
    rejected = {r["mode"]: r for r in doc["rejected"]}
    [finding] = rejected[CoexistenceMode.SLURM_BRIDGE]["reasons"]
    assert finding["reason"] == CoexistenceReason.VERSIONS_TOO_OLD and "kubernetes 1.31" in finding["detail"]


def test_asking_for_the_bridge_on_old_releases_warns() -> None:
    old = (SITES / "bridge" / "migrate.yaml").read_text().replace('slurm: "25.11"', 'slurm: "24.05"')
    plan = _plan("bridge", "slurm-bridge", config_text=old)
    assert plan["coexistence"]["mode"] == CoexistenceMode.SLURM_BRIDGE
    assert any(w.startswith("coexistence slurm-bridge:") and "slurm 24.05" in w for w in plan["warnings"])


def test_versions_must_be_quoted_release_numbers() -> None:
    with pytest.raises(SiteConfigError, match="quote the release"):
        parse_site_config_text("versions: {kubernetes: 1.30}\n")
    with pytest.raises(SiteConfigError, match="release number"):
        parse_site_config_text('versions: {slurm: "latest"}\n')
    with pytest.raises(SiteConfigError, match="gpu_sharing"):
        parse_site_config_text("partitions:\n  gpu: {nodes: 2, gpu_sharing: halves}\n")


def test_idle_gpus_compare_the_split_with_one_pool() -> None:
    # 4 nodes of 8 GPUs: the target has 1 node and a week's demand of 3, the source 3 nodes and none
    caps = [Capacity("gpu", 4, 8, 3, 1, moved_node_hours=3 * 168, remaining_node_hours=0)]
    [idle], total = idle_per_phase([("P1", caps)], 168)
    assert total == 32
    assert (idle.split_idle_gpus, idle.pool_idle_gpus, idle.stranded_gpus) == (24, 8, 16)


def test_partition_keeps_the_plan_as_it_was() -> None:
    folder = CORPUS / "sample-site"
    jobs = scanner.scan([str(folder)]).jobs
    config = load_site_config(folder / "migrate.yaml")
    auto = json.loads(plan_json(build_plan(jobs, "to_kubernetes", config)))
    assert auto["coexistence"]["mode"] == CoexistenceMode.PARTITION
    del auto["coexistence"]
    text = plan_json(build_plan(jobs, "to_kubernetes", config, coexistence="partition"))
    assert text == json_indented.dumps(auto, end="\n")


def test_an_unknown_mode_is_a_usage_error() -> None:
    with pytest.raises(api.UsageError, match="coexistence must be one of"):
        api.run_plan([str(SITES / "static")], "kubernetes", coexistence="shared")


# ---------------------------------------------------------------------------
# Sample-site goldens per mode: plan.json's coexistence and phases, and the files under coexistence/


@pytest.mark.parametrize("mode", ["partition", "slinky", "slurm-bridge"])
def test_sample_site_golden(
    mode: str, tmp_path: Path, update_golden: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(REPO)
    run = api.run_plan(
        ["corpus/sample-site"], "kubernetes", out=str(tmp_path), inventory=[SLURM_CONF], coexistence=mode
    )
    doc = json.loads((tmp_path / "plan.json").read_text())
    part = {"coexistence": doc.get("coexistence"), "phases": doc["phases"], "warnings": doc["warnings"]}
    check_text(
        GOLDEN / f"sample-site.{mode}" / "plan-part.json", json_indented.dumps(part, end="\n"), update_golden
    )
    written = sorted(p.relative_to(tmp_path) for p in (tmp_path / "coexistence").rglob("*") if p.is_file())
    if mode == "partition":
        assert written == [] and run.plan.coexistence is None
    for rel in written:
        check_text(GOLDEN / f"sample-site.{mode}" / rel, (tmp_path / rel).read_text(), update_golden)


# ---------------------------------------------------------------------------
# The Slinky objects pass their schemas; broken ones do not


@pytest.fixture(scope="module")
def slinky_objects(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    out = tmp_path_factory.mktemp("slinky")
    api.run_plan(
        [str(CORPUS / "sample-site")],
        "kubernetes",
        out=str(out),
        inventory=[str(REPO / SLURM_CONF)],
        coexistence="slinky",
    )
    return [d for d in yaml.safe_load_all((out / "coexistence" / "slinky-objects.yaml").read_text()) if d]


def test_every_slinky_object_passes_its_schema(slinky_objects: list[dict[str, Any]]) -> None:
    kinds = sorted(o["kind"] for o in slinky_objects)
    assert kinds == ["Controller", "NodeSet", "NodeSet", "NodeSet", "NodeSet"]
    for obj in slinky_objects:
        assert validate_object(obj) == [], obj["metadata"]["name"]
    [controller] = [o for o in slinky_objects if o["kind"] == "Controller"]
    assert controller["spec"]["externalConfig"] == {"host": "10.20.0.10", "port": 6817}  # from slurm.conf
    h100 = next(o for o in slinky_objects if o["metadata"]["name"] == "slurm-worker-gpu-h100")
    assert h100["spec"]["slurmd"]["resources"]["limits"] == {"nvidia.com/gpu": 8, "vpc.amazonaws.com/efa": 32}
    assert h100["spec"]["extraConf"] == "Gres=gpu:h100:8"


def _mutated(objects: list[dict[str, Any]], kind: str, change: Any) -> dict[str, Any]:
    obj = copy.deepcopy(next(o for o in objects if o["kind"] == kind))
    change(obj["spec"])
    return obj


@pytest.mark.parametrize(
    ("kind", "change", "expected"),
    [
        ("NodeSet", lambda s: s.update(replicaCount=2), "replicaCount"),
        ("NodeSet", lambda s: s.update(replicas=-1), "replicas"),
        ("NodeSet", lambda s: s.update(replicas="two"), "replicas"),
        ("NodeSet", lambda s: s.pop("controllerRef"), "controllerRef"),
        ("NodeSet", lambda s: s.update(scalingMode="ReplicaSet"), "scalingMode"),
        ("NodeSet", lambda s: s["template"]["spec"].update(nodeSelectors={}), "nodeSelectors"),
        ("NodeSet", lambda s: s.update(partition={"enabled": True, "config": "A=1\nB=2"}), "partition"),
        ("Controller", lambda s: s.pop("externalConfig"), "externalConfig"),
        ("Controller", lambda s: (s.update(external=False), s.pop("slurmKeyRef")), "slurmKeyRef"),
        ("Controller", lambda s: s["externalConfig"].update(port=70000), "port"),
    ],
)
def test_a_broken_slinky_object_fails(
    slinky_objects: list[dict[str, Any]], kind: str, change: Any, expected: str
) -> None:
    obj = _mutated(slinky_objects, kind, change)
    problems = validate_object(obj)
    assert problems, f"{kind} with a broken {expected} passed"
    assert any(expected in p.render() for p in problems), [p.render() for p in problems]


def test_slinky_references_name_their_object_only(slinky_objects: list[dict[str, Any]]) -> None:
    """NodeSet ``spec.controllerRef`` and Controller ``spec.accountingRef`` have ``name`` only.

    SlinkyProject/slurm-operator ``config/crd/bases/slinky.slurm.net_nodesets.yaml`` and
    ``slinky.slurm.net_controllers.yaml``: the ``namespace`` went when cross-namespace
    references were disallowed, so the apiserver's strict field validation rejects it.
    """
    nodesets = [o for o in slinky_objects if o["kind"] == "NodeSet"]
    assert nodesets and all(o["spec"]["controllerRef"] == {"name": "slurm"} for o in nodesets)
    for kind, field in (("NodeSet", "controllerRef"), ("Controller", "accountingRef")):
        obj = _mutated(
            slinky_objects, kind, lambda s, f=field: s.update({f: {"name": "slurm", "namespace": "x"}})
        )
        [problem] = validate_object(obj)
        assert problem.path == f"spec.{field}.namespace", kind
        assert problem.message.startswith("unknown field 'namespace': ")
        assert "cross-namespace references" in problem.message


def test_an_external_controller_gets_only_values_the_chart_renders(tmp_path: Path) -> None:
    """With ``controller.external`` no clusterName, configFiles or partitions; slurm.conf is told instead.

    SlinkyProject/slurm-operator ``helm/slurm/templates/controller/controller-cr.yaml``: an external
    Controller carries only the auth refs, accountingRef, external and externalConfig, so those
    values would reach nothing. The written notes say what the site's slurm.conf must declare.
    """
    api.run_plan(
        [str(CORPUS / "sample-site")],
        "kubernetes",
        out=str(tmp_path),
        inventory=[str(REPO / SLURM_CONF)],
        coexistence="slinky",
    )
    folder = tmp_path / "coexistence"
    text = (folder / "slinky-values.yaml").read_text()
    [values] = [d for d in yaml.safe_load_all(text) if d]
    assert values["controller"]["external"] is True
    assert not {"clusterName", "configFiles", "partitions"} & set(values)
    assert "extraConfMap" not in values["controller"]
    declared = [
        "NodeSet=gpu-h100 Feature=gpu-h100",
        "PartitionName=gpu-h100 Nodes=<its bare-metal nodes>,gpu-h100",
    ]
    readme = (folder / "README.md").read_text()
    for line in declared:
        assert f"# {line}\n" in text  # the values file's header says it
        assert f"\n{line}\n" in readme  # and the README's slurm.conf section
    assert "renders no clusterName, configFiles or partitions" in readme
    assert "GresTypes=gpu" in text and "GresTypes=gpu" in readme
    conf = (folder / "slurm.conf.nodesets").read_text()
    assert "NodeSet=gpu-h100 Feature=gpu-h100\n" in conf and "GPUs need GresTypes=gpu" in conf
    hybrid = next(
        s
        for s in json.loads((tmp_path / "plan.json").read_text())["phases"][0]["steps"]
        if s["name"] == "hybrid mode"
    )
    assert "slurm.conf.nodesets" in hybrid["detail"] and "renders no clusterName" in hybrid["detail"]


@pytest.mark.parametrize("hybrid", [True, False])
def test_migrate_validate_passes_the_folder_migrate_plan_writes(tmp_path: Path, hybrid: bool) -> None:
    """``migrate validate coexistence/`` checks the values file as the slurm chart's values.

    The keys and types come from SlinkyProject/slurm-operator ``helm/slurm/values.yaml``; the
    objects beside it from ``config/crd/bases/slinky.slurm.net_{nodesets,controllers}.yaml``.
    """
    inventory = [str(REPO / SLURM_CONF)] if hybrid else []
    api.run_plan(
        [str(CORPUS / "sample-site")],
        "kubernetes",
        out=str(tmp_path),
        inventory=inventory,
        coexistence="slinky",
    )
    run = api.run_validate(str(tmp_path / "coexistence"))
    assert [p.render() for p in run.kubernetes.problems] == []
    assert run.ok and run.kubernetes.kinds["slurm chart values"] == 1
    assert run.kubernetes.kinds["slinky.slurm.net/v1beta1 NodeSet"] >= 2


# ---------------------------------------------------------------------------
# The slurm-bridge flavor


BRIDGE_SITE = parse_site_config_text(
    "partitions:\n"
    "  gpu: {nodes: 4, gpus_per_node: 8, gpu_type: h100, cpus_per_node: 96, mem_gb: 1024, default: true}\n"
    "filesystems:\n  - {prefix: /mnt/shared, kind: nfs, pvc: shared}\n"
    "defaults: {image: stand-in, namespace: run}\n"
)


def _bridge(text: str, name: str = "job.sbatch") -> Any:
    from migrate.diagnostics import Collector
    from migrate.translate import translate_jobs
    from migrate.translators.slurm import reader

    jobs = reader.read(text, name, Collector(name))
    return translate_jobs(jobs, flavor="slurm-bridge", config=BRIDGE_SITE).translations[0]


def _workload(translation: Any) -> dict[str, Any]:
    (text,) = translation.files.values()
    return next(d for d in yaml.safe_load_all(text) if d and d["kind"] in ("Job", "JobSet"))


def test_the_bridge_flavor_tells_slurm_the_allocation() -> None:
    t = _bridge(
        "#!/bin/bash\n#SBATCH --job-name=eval\n#SBATCH --account=nlp\n#SBATCH --qos=high\n"
        "#SBATCH --time=02:30:00\n#SBATCH --gres=gpu:h100:4\n#SBATCH --constraint=nvlink\n"
        "#SBATCH --licenses=matlab:2\nsrun python eval.py\n"
    )
    assert t.flavor == "slurm-bridge"
    job = _workload(t)
    got = {k.removeprefix("slurmjob.slinky.slurm.net/"): v for k, v in job["metadata"]["annotations"].items()}
    assert {k: got[k] for k in ("partition", "account", "qos", "timelimit", "gres", "constraints")} == {
        "partition": "gpu",  # the site's default partition: what Slurm would have used
        "account": "nlp",
        "qos": "high",
        "timelimit": "150",
        "gres": "gres/gpu:h100=4",
        "constraints": "nvlink",
    }
    assert got["licenses"] == "matlab:2" and got["exclusive"] == "false" and got["job-name"] == "eval"
    assert job["spec"]["template"]["spec"]["schedulerName"] == "slurm-bridge-scheduler"
    status = {e.item: e.status for e in t.fidelity.entries}
    assert status["--licenses=matlab:2"] == "mapped" and status["--gres=gpu:h100:4"] == "mapped"
    assert validate_object(job) == []


def test_a_torchrun_job_becomes_a_jobset_the_bridge_can_read() -> None:
    t = _bridge(
        "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --exclusive\n#SBATCH --gpus-per-node=8\n"
        "srun torchrun --nproc_per_node=8 train.py\n"
    )
    job = _workload(t)
    assert job["kind"] == "JobSet" and "exclusive" not in str(job["metadata"]["annotations"])
    pods = job["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    assert pods["schedulerName"] == "slurm-bridge-scheduler"
    entries = {e.item: e for e in t.fidelity.entries}
    assert (
        entries["--nodes=2"].status == "approximated"
        and "not allocated together" in entries["--nodes=2"].reason
    )
    assert entries["--exclusive"].status == "mapped"


def test_the_pod_runner_runs_the_bridge_flavor_like_the_others(tmp_path: Path) -> None:
    from podrunner.testing import require_pods
    from podrunner.testing import run as run_pods

    require_pods()
    text = (CORPUS / "cases" / "run" / "download_once.sbatch").read_text()
    t = _bridge(text, "download_once.sbatch")
    (manifests,) = t.files.values()
    shared = tmp_path / "shared"
    shared.mkdir()
    result = run_pods(manifests, tmp_path / "pods", claims={"shared": shared}, timeout=90)
    assert result.status == "Complete", result.describe()
    out = shared / "download-once"
    assert (out / "statements.log").read_text().splitlines()[:2] == ["download", "prepared 1000"]
    assert sorted(p.name for p in out.glob("step-*.env")) == [f"step-{i}.env" for i in range(8)]


@pytest.mark.parametrize("mode", ["partition", "slinky", "slurm-bridge"])
def test_sample_site_report_section(
    mode: str, tmp_path: Path, update_golden: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(REPO)
    api.run_report(
        ["corpus/sample-site"], "kubernetes", str(tmp_path), inventory=[SLURM_CONF], coexistence=mode
    )
    report = (tmp_path / "report.md").read_text()
    html = (tmp_path / "report.html").read_text()
    if mode == "partition":
        assert "## Coexistence" not in report and 'id="coexistence"' not in html
        return
    section = report[report.index("## Coexistence") : report.index("## Phases")]
    check_text(GOLDEN / f"sample-site.{mode}" / "report-section.md", section, update_golden)
    for line in section.splitlines():  # every file the section links was written beside it
        if line.startswith("- [coexistence/"):
            assert (tmp_path / line.split("](")[1].split(")")[0]).is_file()
    assert 'id="coexistence"' in html and f"<strong>{mode}</strong>" in html


def test_slinky_without_a_slurmctld_runs_its_own(tmp_path: Path) -> None:
    api.run_plan([str(CORPUS / "sample-site")], "slurm", out=str(tmp_path), coexistence="slinky")
    objects = [
        d for d in yaml.safe_load_all((tmp_path / "coexistence" / "slinky-objects.yaml").read_text()) if d
    ]
    [controller] = [o for o in objects if o["kind"] == "Controller"]
    assert "external" not in controller["spec"] and controller["spec"]["clusterName"] == "northwind-nw1"
    assert all(validate_object(o) == [] for o in objects)
    values = yaml.safe_load_all((tmp_path / "coexistence" / "slinky-values.yaml").read_text())
    [doc] = [d for d in values if d]
    assert doc["controller"] == {"extraConfMap": {"GresTypes": "gpu"}}
    assert all(doc["partitions"][name]["nodesets"] == [name] for name in doc["nodesets"])
    assert not (tmp_path / "coexistence" / "slurm.conf.nodesets").exists()


def _wide_pilot_plan(mode: str) -> dict[str, Any]:
    """The sample site with room for six units in the pilot: they span several partitions."""
    site = CORPUS / "sample-site"
    text = (site / "migrate.yaml").read_text() + "\nthresholds: {pilot_max_units: 6}\n"
    jobs = scanner.scan([str(site)]).jobs
    return json.loads(
        plan_json(build_plan(jobs, "to_kubernetes", parse_site_config_text(text), coexistence=mode))
    )


@pytest.mark.parametrize("source", ["static", "slinky", "bridge", "wide"])
def test_a_slinky_pilot_is_one_nodeset_for_one_partition(source: str) -> None:
    """The pilot grows one NodeSet next to the old cluster: its jobs run in one partition."""
    plan = _wide_pilot_plan("slinky") if source == "wide" else _plan(source, "slinky")
    demand = {j["id"]: j.get("demand", {}).get("partition") for j in plan["jobs"]}
    [pilot] = [p for p in plan["phases"] if p["kind"] == "pilot"]
    assert len({demand[j] for j in pilot["jobs"]}) == 1
    grown = [s["name"] for s in pilot["steps"] if s["kind"] == "coexistence"]
    assert len(grown) <= 1 and all(name.startswith("NodeSet ") for name in grown)
    assert sorted(j for p in plan["phases"] for j in p["jobs"]) == sorted(
        j["id"] for j in plan["jobs"] if j["phase"]
    )


@pytest.mark.parametrize(
    ("target", "submitted"), [("kubernetes", "Kubernetes manifests"), ("slurm", "sbatch scripts")]
)
def test_what_users_change_follows_the_direction(
    target: str, submitted: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from migrate.plan.planner import plan_json
    from migrate.reports.model_coexistence import coexistence

    monkeypatch.chdir(REPO)
    run = api.run_plan(["corpus/sample-site"], target, inventory=[SLURM_CONF])
    view = coexistence(json.loads(plan_json(run.plan)))
    assert view is not None
    [row] = [r for r in view.modes.rows if r[0] == "partition"]
    assert row[3] == f"the moved jobs' users submit {submitted} instead of {OTHER[target]}, wave by wave"


OTHER = {"kubernetes": "sbatch scripts", "slurm": "Kubernetes manifests"}
