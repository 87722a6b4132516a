"""--workflow argo: the cohort pipeline and the sample site's data pipeline as Argo Workflows, run.

The run drives the Workflow's DAG by the Argo controller's rules (tests/podrunner/argo.py; not
Argo itself) and runs every job its tasks create as local pods, with a job script that writes
"start <job>" and "end <job>" lines to a shared file and exits as the test decides. Each task's
result comes from the success and failure conditions the writer gave its template, evaluated on
the status the job's controller would show. Arrays run two elements unless a test says more.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from chain_entries import dependency_statuses, make_log_folders
from podrunner.argo import TaskRun, run_workflow
from podrunner.selector import SelectorError, judge
from podrunner.selector import parse as parse_condition
from podrunner.testing import IMAGE_PATH, require_pods

from migrate import api
from migrate.scan.results import ScanOptions
from migrate.translators.argo import depends
from migrate.translators.argo import validate as argo_validate
from migrate.translators.kubernetes.validate import validate_object, validate_tree

CHAINS = Path(__file__).resolve().parent.parent / "corpus" / "cases" / "slurm" / "chains"
SITE = CHAINS.parents[2] / "sample-site"
COHORT = [
    "align-reads",
    "merge-bams",
    "qc-sample",
    "sample-sheet",
    "call-variants",
    "cohort-failed",
    "archive-cohort",
    "watch-merge",
    "refresh-index",
    "refresh-index-2",
]
# what each job waits for, as run_cohort.sh and the scripts say (after and aftercorr: the whole job)
WAITS = {
    "merge-bams": [("afterok", "align-reads")],
    "qc-sample": [("aftercorr", "align-reads")],
    "sample-sheet": [("afterok", "merge-bams")],
    "call-variants": [("afterok", "sample-sheet")],
    "cohort-failed": [("afternotok", "call-variants")],
    "archive-cohort": [("afterany", "call-variants")],
    "watch-merge": [("after", "merge-bams")],
}
DATA_PIPELINE = ["dl-web-v3", "dedup-web-v3", "shardlist", "tok-web-v3", "tok-verify"]


def _translate(source: Path, out: Path, workflow: str) -> Path:
    api.run_translate(
        [str(source)],
        "kubernetes",
        str(out),
        workflow=workflow,
        options=ScanOptions(cache=None),
        style="emulate",  # the tests stand in for each job's script
    )
    return out


@pytest.fixture(scope="module")
def translated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _translate(CHAINS, tmp_path_factory.mktemp("argo") / "out", "argo")


def _workflow(out: Path) -> dict[str, Any]:
    return next(d for d in yaml.safe_load_all((out / "workflow.yaml").read_text()) if d)


def test_the_workflow_validates_and_reads_back_as_the_slurm_types(translated: Path) -> None:
    report = validate_tree(translated)
    assert report.ok, [p for f in report.files for p in f.problems]
    wf = _workflow(translated)
    assert list(argo_validate.rules(wf)) == [] and validate_object(wf) == []
    tasks = {t["name"]: t for t in wf["spec"]["templates"][0]["dag"]["tasks"]}
    read = {}
    for name in COHORT:
        found = depends.to_slurm(depends.parse(tasks[name]["depends"]))
        read[name] = sorted((str(d.type), t) for d in found for t in d.tasks if t in COHORT)
    # the project's own reading of what it wrote: after waits for the end, aftercorr for success
    as_read = {"after": "afterany", "aftercorr": "afterok"}
    assert {n: w for n, w in read.items() if w} == {
        n: [(as_read.get(t, t), p) for t, p in w] for n, w in WAITS.items()
    }
    templates = {t["name"]: t for t in wf["spec"]["templates"]}
    assert [templates[n].get("synchronization") for n in ("refresh-index", "refresh-index-2")] == [
        {"mutexes": [{"name": "refresh-index-singleton"}]}
    ] * 2
    for template in templates.values():  # every condition is one Argo's label-selector parser takes
        resource = template.get("resource") or {}
        parse_condition(resource.get("successCondition", ""))
        parse_condition(resource.get("failureCondition", ""))


def test_every_dependency_says_how_the_workflow_carries_it(translated: Path) -> None:
    status = {k: v for k, v in dependency_statuses(translated).items() if not k[1].startswith("--")}
    assert status == {
        ("merge-bams", "afterok on align-reads"): "mapped",
        ("sample-sheet", "afterok on merge-bams"): "mapped",
        ("call-variants", "afterok on sample-sheet"): "mapped",
        ("cohort-failed", "afternotok on call-variants"): "mapped",
        ("archive-cohort", "afterany on call-variants"): "mapped",
        ("qc-sample", "aftercorr on align-reads"): "approximated",
        ("watch-merge", "after on merge-bams"): "approximated",
        # a mutex: one at a time, but not in the order of submission
        ("refresh-index", "singleton"): "approximated",
        ("refresh-index-2", "singleton"): "approximated",
        ("refresh-index-2", "singleton on refresh-index"): "approximated",
    }
    doc = json.loads((translated / "translation.json").read_text(encoding="utf-8"))
    reasons = [e["reason"] for j in doc["jobs"] for e in j["fidelity"] if e["item"].startswith("singleton")]
    assert reasons and not any("waits for" in r for r in reasons), reasons  # no depends orders them


def test_the_driver_reads_conditions_as_argo_does() -> None:
    failed = {"status": {"succeeded": 3, "conditions": [{"type": "FailureTarget"}, {"type": "Failed"}]}}
    assert judge("status.succeeded > 2", "", failed) == "Succeeded"
    assert judge("status.succeeded > 3", "", failed) is None  # Argo keeps waiting
    assert judge("status.succeeded > 2, status.active > 0", "", failed) is None  # every success requirement
    either = "status.conditions.0.type == Failed, status.conditions.1.type == Failed"
    assert judge("status.succeeded > 2", either, failed) == "Failed"  # any failure one, and before success
    assert judge("", "", {}) == "Succeeded"  # no condition: done once created
    assert judge("", "status.failed > 0", {"status": {}}) == "Succeeded"  # a missing count matches no '>'
    assert judge("status.phase != Running", "", {"status": {}}) == "Succeeded"  # '!=' holds for a missing key
    phase = {"status": {"state": {"phase": "Aborted"}}}
    assert judge("", "status.state.phase in (Failed,Aborted)", phase) == "Failed"
    for refused in ("status.conditions.#(type==Failed)", "status.failed > many", "status.phase in Failed"):
        with pytest.raises(SelectorError):
            parse_condition(refused)


def _script(name: str, code: int, fail_index: int | None = None, pause: float = 0.2) -> str:
    """Every pod writes its start and end; the array element ``fail_index`` (or all) exits ``code``."""
    exit_line = f"exit {code}"
    if fail_index is not None:
        exit_line = f'[ "${{SLURM_ARRAY_TASK_ID:-0}}" = {fail_index} ] && exit {code}; exit 0'
    return (
        f'#!/bin/bash\necho "start {name}" >> /lustre/order\nsleep {pause}\n'
        f'echo "end {name}" >> /lustre/order\n{exit_line}\n'
    )


def _run(out: Path, tmp_path: Path, scripts: dict[str, str], **options: Any) -> dict[str, TaskRun]:
    runs = run_workflow(
        out / "workflow.yaml",
        tmp_path / "pods",
        scripts,
        image_env={"PATH": IMAGE_PATH},
        timeout=20,
        **options,
    )
    return {r.task: r for r in runs}


def _lines(path: Path) -> list[tuple[str, str]]:
    return [(word, name) for word, name in (line.split() for line in path.read_text().splitlines())]


def _span(lines: list[tuple[str, str]], name: str) -> tuple[int, int]:
    """The positions of a job's first start and last end in the shared file."""
    at = [i for i, (_, n) in enumerate(lines) if n == name]
    return at[0], at[-1]


def test_the_cohort_workflow_runs_in_dependency_order(translated: Path, tmp_path: Path) -> None:
    require_pods()
    lustre = tmp_path / "lustre"
    lustre.mkdir()
    make_log_folders("/lustre", lustre, CHAINS)
    # the singleton group's jobs run long enough to overlap, were there no mutex
    scripts = {
        n: _script(n, 1 if n == "call-variants" else 0, pause=0.5 if "refresh" in n else 0.1) for n in COHORT
    }
    runs = _run(translated, tmp_path, scripts, host_paths={"/lustre": lustre})
    results = {n: runs[n].result for n in COHORT}
    # afternotok and afterany both run after the failed call; every other job succeeded
    assert results == {n: "Failed" if n == "call-variants" else "Succeeded" for n in COHORT}
    lines = _lines(lustre / "order")
    for job, waits in WAITS.items():
        for _, before in waits:  # every pod of the job it waits for had ended before its first pod
            assert _span(lines, before)[1] < _span(lines, job)[0], (before, job, lines)
    # the singleton group's jobs never overlap, whichever takes the mutex first
    first, second = sorted((_span(lines, "refresh-index"), _span(lines, "refresh-index-2")))
    assert first[1] < second[0], lines
    jobs = [runs[n].job for n in ("call-variants", "cohort-failed")]
    assert [j.status if j else None for j in jobs] == ["Failed", "Complete"]  # what the pods did


def test_a_call_that_succeeds_leaves_the_failure_marker_unrun(translated: Path, tmp_path: Path) -> None:
    require_pods()
    lustre = tmp_path / "lustre"
    lustre.mkdir()
    make_log_folders("/lustre", lustre, CHAINS)
    wanted = ["sample-sheet", "call-variants", "cohort-failed", "archive-cohort"]
    scripts = {n: _script(n, 0, pause=0) for n in COHORT}
    runs = _run(
        translated, tmp_path, scripts, target="cohort-failed archive-cohort", host_paths={"/lustre": lustre}
    )
    assert {n: runs[n].result for n in wanted} == {
        "sample-sheet": "Succeeded",
        "call-variants": "Succeeded",
        "cohort-failed": "Omitted",  # afternotok: its depends can no longer hold
        "archive-cohort": "Succeeded",
    }
    started = [n for word, n in _lines(lustre / "order") if word == "start"]
    assert "cohort-failed" not in started and "archive-cohort" in started
    assert not {"qc-sample", "watch-merge", "refresh-index"} & set(runs)  # outside the target


def test_one_failed_array_element_fails_the_array_and_what_waits_for_it_never_runs(
    translated: Path, tmp_path: Path
) -> None:
    require_pods()
    lustre = tmp_path / "lustre"
    lustre.mkdir()
    make_log_folders("/lustre", lustre, CHAINS)
    scripts = {n: _script(n, 1, fail_index=7, pause=0) for n in COHORT}
    # all 32 elements run: the Job's own status has to say that one failed element fails the array
    runs = _run(
        translated,
        tmp_path,
        scripts,
        target="merge-bams qc-sample",
        max_replicas=32,
        host_paths={"/lustre": lustre},
    )
    align = runs["align-reads"]
    assert align.result == "Failed", align.job.describe() if align.job else align
    assert (runs["merge-bams"].result, runs["qc-sample"].result) == ("Omitted", "Omitted")
    started = [n for word, n in _lines(lustre / "order") if word == "start"]
    assert started == ["align-reads"] * 32  # the other elements ran on, as a Slurm array's do


@pytest.fixture(scope="module")
def site_argo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _translate(SITE, tmp_path_factory.mktemp("site-argo") / "out", "argo")


@pytest.mark.parametrize("failing", [None, "shardlist"])
def test_the_sample_sites_data_pipeline_workflow_runs_in_order(
    site_argo: Path, tmp_path: Path, failing: str | None
) -> None:
    require_pods()
    fsx = tmp_path / "fsx"
    fsx.mkdir()
    make_log_folders("/fsx", fsx, CHAINS.parents[2] / "sample-site")
    scripts = {
        n: _script(n, 1 if n == failing else 0, pause=0).replace("/lustre", "/fsx") for n in DATA_PIPELINE
    }
    runs = _run(site_argo, tmp_path, scripts, target="tok-verify", claims={"fsx-pvc": fsx})
    ran = DATA_PIPELINE if failing is None else DATA_PIPELINE[: DATA_PIPELINE.index(failing) + 1]
    started = [n for word, n in _lines(fsx / "order") if word == "start"]
    assert list(dict.fromkeys(started)) == ran
    expected = {n: "Succeeded" for n in ran} | {n: "Omitted" for n in DATA_PIPELINE if n not in ran}
    if failing:
        expected[failing] = "Failed"  # the --wrap step: what comes after it never starts
    assert {n: runs[n].result for n in DATA_PIPELINE} == expected
