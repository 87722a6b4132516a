"""--workflow jobflow: the cohort pipeline as Volcano JobFlows, checked by the validator and run.

The run drives each JobFlow by the Volcano controller's rule (tests/podrunner/jobflow.py; not
Volcano itself) and runs every job it creates as local pods, with a job script that appends the
job's name to a shared file and exits as the test decides. Arrays run two elements.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from chain_entries import dependency_statuses, make_log_folders
from podrunner.jobflow import FlowRun, run_jobflow
from podrunner.testing import IMAGE_PATH, require_pods

from migrate import api
from migrate.scan.results import ScanOptions
from migrate.translators.kubernetes.validate import validate_tree

CHAINS = Path(__file__).resolve().parent.parent / "corpus" / "cases" / "slurm" / "chains"


@pytest.fixture(scope="module")
def translated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("jobflow") / "out"
    api.run_translate(
        [str(CHAINS)], "kubernetes", str(out), workflow="jobflow", options=ScanOptions(cache=None)
    )
    return out


def test_the_flows_validate_and_name_their_templates(translated: Path) -> None:
    report = validate_tree(translated)
    assert report.ok, [p for f in report.files for p in f.problems]
    flows = {d["metadata"]["name"]: d for d in yaml.safe_load_all((translated / "jobflow.yaml").read_text())}
    cohort = {
        f["name"]: (f.get("dependsOn") or {}).get("targets", [])
        for f in flows["align-reads-flow"]["spec"]["flows"]
    }
    assert cohort == {
        "align-reads": [],
        "merge-bams": ["align-reads"],
        "qc-sample": ["align-reads"],
        "sample-sheet": ["merge-bams"],
        "call-variants": ["sample-sheet"],
        "archive-cohort": ["call-variants"],
        "watch-merge": ["merge-bams"],
    }
    # afternotok cannot be a flow: the job stays an ordinary Volcano Job, applied by hand
    failed = [
        d for d in yaml.safe_load_all((translated / "cohort-failed" / "volcano-job.yaml").read_text()) if d
    ]
    assert [d["kind"] for d in failed][-1] == "Job"
    index = yaml.safe_load((translated / "kustomization.yaml").read_text())["resources"]
    assert "jobflow.yaml" in index and "merge-bams/volcano-job.yaml" in index
    assert "cohort-failed/volcano-job.yaml" not in index  # apply -k must not start it at once


def test_every_dependency_says_how_the_jobflow_carries_it(translated: Path) -> None:
    status = {k: v for k, v in dependency_statuses(translated).items() if not k[1].startswith("--")}
    assert status == {
        ("merge-bams", "afterok on align-reads"): "mapped",
        ("sample-sheet", "afterok on merge-bams"): "mapped",
        ("call-variants", "afterok on sample-sheet"): "mapped",
        ("qc-sample", "aftercorr on align-reads"): "approximated",
        ("archive-cohort", "afterany on call-variants"): "approximated",
        ("watch-merge", "after on merge-bams"): "approximated",
        ("refresh-index-2", "singleton on refresh-index"): "approximated",
        ("cohort-failed", "afternotok on call-variants"): "dropped",
    }
    doc = json.loads((translated / "translation.json").read_text(encoding="utf-8"))
    assert not any(
        "submit.sh" in e["reason"] for j in doc["jobs"] for e in j["fidelity"] if " on " in e["item"]
    )


def _script(name: str, code: int) -> str:
    # every pod of the job runs it (array elements, retries): the first one writes the name
    return (
        f"#!/bin/bash\nmkdir /lustre/seen.{name} 2>/dev/null && echo {name} >> /lustre/order\nexit {code}\n"
    )


def _run(out: Path, flow: str, tmp_path: Path, scripts: dict[str, str], **mounts: Any) -> list[FlowRun]:
    return run_jobflow(
        out, flow, tmp_path / "pods", scripts, image_env={"PATH": IMAGE_PATH}, timeout=20, **mounts
    )


def test_the_cohort_flow_runs_in_dependency_order(translated: Path, tmp_path: Path) -> None:
    require_pods()
    lustre = tmp_path / "lustre"
    lustre.mkdir()
    make_log_folders("/lustre", lustre, CHAINS)
    names = [
        "align-reads",
        "merge-bams",
        "qc-sample",
        "sample-sheet",
        "call-variants",
        "archive-cohort",
        "watch-merge",
    ]
    scripts = {n: _script(n, 1 if n == "call-variants" else 0) for n in names}
    runs = _run(translated, "align-reads-flow", tmp_path, scripts, host_paths={"/lustre": lustre})
    order = (lustre / "order").read_text().split()
    assert order == [r.flow for r in runs]
    for before, after in (
        ("align-reads", "merge-bams"),
        ("align-reads", "qc-sample"),
        ("merge-bams", "sample-sheet"),
        ("sample-sheet", "call-variants"),
        ("merge-bams", "watch-merge"),
    ):
        assert order.index(before) < order.index(after)
    assert {r.flow: r.status for r in runs}["call-variants"] == "Failed"
    # afterany became "after it completed": the archive never starts after a failed call
    assert "archive-cohort" not in order


@pytest.mark.parametrize("failing", [None, "shardlist"])
def test_the_sample_sites_data_pipeline_flow_runs_in_order(tmp_path: Path, failing: str | None) -> None:
    require_pods()
    out = tmp_path / "out"
    site = CHAINS.parents[2] / "sample-site"
    api.run_translate(
        [str(site)], "kubernetes", str(out), workflow="jobflow", options=ScanOptions(cache=None)
    )
    fsx = tmp_path / "fsx"
    fsx.mkdir()
    make_log_folders("/fsx", fsx, CHAINS.parents[2] / "sample-site")
    chain = ["dl-web-v3", "dedup-web-v3", "shardlist", "tok-web-v3", "tok-verify", "llm13b-pretrain"]
    chain += ["llm13b-eval", "llm13b-export"]
    scripts = {n: _script(n, 1 if n == failing else 0).replace("/lustre", "/fsx") for n in chain}
    runs = _run(out, "dl-web-v3-flow", tmp_path, scripts, claims={"fsx-pvc": fsx})
    if failing is not None:  # the --wrap step fails: no job after it is created
        ran = chain[: chain.index(failing) + 1]
        assert [(r.flow, r.status) for r in runs] == [(n, "Complete") for n in ran[:-1]] + [
            (failing, "Failed")
        ]
        assert (fsx / "order").read_text().split() == ran
        return
    # llm13b-pretrain's pods fail here: its workingDir is the literal $CODE_DIR of the script's
    # --chdir, which no pod has. The flow stops there, as Volcano's would: eval and export wait.
    assert [(r.flow, r.status) for r in runs] == [(n, "Complete") for n in chain[:5]] + [
        ("llm13b-pretrain", "Failed")
    ], runs
    assert (fsx / "order").read_text().split() == chain[:5]
