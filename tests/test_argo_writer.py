"""Slurm chains as one Argo Workflow: order, conditions, fidelity, validation and the golden file."""

from __future__ import annotations

import contextlib
import itertools
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import CORPUS, GOLDEN, REPO
from golden import check_text

from migrate.diagnostics import Collector
from migrate.fidelity import Edge, Translation
from migrate.scan import scanner
from migrate.site.config import load_site_config
from migrate.translate import translate_jobs
from migrate.translators.argo import depends
from migrate.translators.argo.writer import WORKFLOW_FILE, render_chain
from migrate.translators.kubernetes import validate
from migrate.translators.slurm import reader as slurm_reader

SAMPLE = CORPUS / "sample-site"
GENOME = CORPUS / "cases" / "chains" / "genome_assembly"
# What the sample site's pipeline submits with --wrap between dedup and tokenize, as sbatch wraps it.
WRAP = (
    "#!/bin/sh\n#SBATCH -p cpu -A llm -t 5 -J shardlist\n"
    "ls /fsx/datasets/dedup/web-v3/bucket_*/part-*.parquet | sort > /fsx/datasets/dedup/web-v3/shards.txt\n"
)


def workflow(text: str) -> dict[str, Any]:
    docs = [d for d in yaml.safe_load_all(text) if d]
    assert len(docs) == 1
    return docs[0]


def tasks(wf: dict[str, Any]) -> dict[str, dict[str, Any]]:
    (dag,) = [t for t in wf["spec"]["templates"] if t["name"] == wf["spec"]["entrypoint"]]
    return {task["name"]: task for task in dag["dag"]["tasks"]}


def templates(wf: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {t["name"]: t for t in wf["spec"]["templates"]}


def entries(t: Translation, needle: str) -> list[tuple[str, str]]:
    """The workflow's entries for an item (the wrapper's own entry says where the order came from)."""
    return [
        (e.status, e.reason)
        for e in t.fidelity.entries
        if e.item.startswith(needle) and e.reason.startswith("workflow.yaml: depends")
    ]


def sample_chain() -> tuple[list[Translation], list[Edge]]:
    jobs = {j.source.path.rsplit("/", 1)[-1]: j for j in scanner.scan([str(SAMPLE / "data")]).jobs}
    (wrapped,) = slurm_reader.read(WRAP, str(SAMPLE / "pipelines" / "llm13b_pipeline.sh"), Collector("-"))
    order = [
        jobs["download_web.sbatch"],
        jobs["dedup_minhash.sbatch"],
        wrapped,
        jobs["tokenize_shards.sbatch"],
        jobs["verify_tokenized.sbatch"],
    ]
    result = translate_jobs(order, config=load_site_config(str(SAMPLE / "migrate.yaml")))
    ts = result.translations
    return ts, [Edge(after.job_id, before.job_id, "afterok") for before, after in itertools.pairwise(ts)]


def test_the_sample_sites_data_pipeline_runs_in_its_order_with_the_wrap_step() -> None:
    ts, edges = sample_chain()
    out = render_chain(ts, edges, {t.job_id: t.name for t in ts})
    wf = workflow(out[WORKFLOW_FILE])
    found = tasks(wf)
    names = [t.name for t in ts]
    assert names == ["dl-web-v3", "dedup-web-v3", "shardlist", "tok-web-v3", "tok-verify"]
    for before, after in itertools.pairwise(names):
        expr = depends.parse(found[after]["depends"])
        # the job waits for the one before it to succeed, and for its own ConfigMap to be applied
        assert f"{before}.Succeeded" in depends.render_expr(expr).split(" && ")
        assert (after, "afterok") and entries(ts[names.index(after)], f"afterok on {before}")[0][
            0
        ] == "mapped"
    assert "depends" not in found["dl-web-v3"] or "Succeeded" in found["dl-web-v3"]["depends"]
    for name in names:
        resource = templates(wf)[name]["resource"]
        assert resource["action"] == "create"
        created = yaml.safe_load(resource["manifest"])
        assert created["kind"] == "Job" and created["metadata"]["name"] == name
        completions = created["spec"].get("completions", 1)
        assert resource["successCondition"] == f"status.succeeded > {completions - 1}"
        # the Job's own Failed condition: an array fails on one failed element, whatever backoffLimit says
        failed = [r.strip() for r in resource["failureCondition"].split(",")]
        assert failed == [f"status.conditions.{i}.type == Failed" for i in range(3)]
    assert validate.validate_object(wf) == []


def test_the_tokenize_array_keeps_its_throttle_inside_the_workflow() -> None:
    ts, edges = sample_chain()
    wf = workflow(render_chain(ts, edges, {t.job_id: t.name for t in ts})[WORKFLOW_FILE])
    created = yaml.safe_load(templates(wf)["tok-web-v3"]["resource"]["manifest"])
    written = yaml.safe_load_all(next(t for t in ts if t.name == "tok-web-v3").files["job.yaml"])
    job = next(d for d in written if d and d["kind"] == "Job")
    assert created["spec"]["parallelism"] == job["spec"]["parallelism"] < created["spec"]["completions"]


@pytest.fixture(scope="module")
def genome() -> Any:
    with contextlib.chdir(REPO):  # paths relative to the repository: the golden holds no checkout path
        return translate_jobs(scanner.scan([str(GENOME.relative_to(REPO))]).jobs, workflow="argo")


def test_each_slurm_dependency_type_becomes_its_depends_term(genome: Any) -> None:
    assert "submit.sh" not in genome.tree.files
    wf = workflow(genome.tree.files[WORKFLOW_FILE])
    found = tasks(wf)

    def terms(name: str) -> set[str]:
        return {t for t in found[name]["depends"].split(" && ") if "configmap" not in t}

    assert terms("assemble") == {"trim-lanes.Succeeded"}
    assert terms("polish") == {"assemble.Succeeded"}
    assert terms("notify-failure") == {"(assemble.Failed || assemble.Errored)"}
    assert terms("cleanup") == {
        "(polish.Succeeded || polish.Failed || polish.Errored)",
        "(asm-monitor.Succeeded || asm-monitor.Failed || asm-monitor.Errored)",
    }
    by_name = {t.name: t for t in genome.translations}
    assert entries(by_name["notify-failure"], "afternotok on assemble")[0][0] == "mapped"
    # after (the start) has no Argo form: the monitor waits for the end, and says so
    ((status, reason),) = entries(by_name["asm-monitor"], "after on assemble")
    assert status == "approximated" and "started" in reason
    assert validate.validate_object(wf) == []


def test_the_array_of_the_chain_keeps_parallelism_four(genome: Any) -> None:
    wf = workflow(genome.tree.files[WORKFLOW_FILE])
    created = yaml.safe_load(templates(wf)["trim-lanes"]["resource"]["manifest"])
    assert (created["spec"]["completions"], created["spec"]["parallelism"]) == (16, 4)
    assert templates(wf)["trim-lanes"]["resource"]["successCondition"] == "status.succeeded > 15"


def test_the_translation_json_lists_the_workflow(genome: Any) -> None:
    import json

    document = json.loads(genome.tree.files["translation.json"])
    cleanup = next(j for j in document["jobs"] if j["name"] == "cleanup")
    assert WORKFLOW_FILE in cleanup["outputs"]
    assert any(e["item"].startswith("afterany on polish") for e in cleanup["fidelity"])


def test_the_workflow_golden(genome: Any, in_repo: Path, update_golden: bool) -> None:
    check_text(
        GOLDEN / "workflow" / "genome_assembly.argo.yaml", genome.tree.files[WORKFLOW_FILE], update_golden
    )


def test_singleton_jobs_share_one_mutex(tmp_path: Path) -> None:
    for n in (1, 2):
        (tmp_path / f"resume{n}.sbatch").write_text(
            "#!/bin/bash\n#SBATCH -J resume\n#SBATCH --dependency=singleton\n#SBATCH -t 10\n"
            "srun ./train --resume\n"
        )
    result = translate_jobs(scanner.scan([str(tmp_path)]).jobs, workflow="argo")
    wf = workflow(result.tree.files[WORKFLOW_FILE])
    mutexes = {
        name: t.get("synchronization", {}).get("mutexes")
        for name, t in templates(wf).items()
        if "resource" in t
    }
    jobs = {k: v for k, v in mutexes.items() if "configmap" not in k}
    assert len(jobs) == 2 and len({str(v) for v in jobs.values()}) == 1 and None not in jobs.values()
    assert validate.validate_object(wf) == []


def test_an_unknown_workflow_choice_is_refused() -> None:
    with pytest.raises(ValueError, match="workflow"):
        translate_jobs([], workflow="airflow")


# validation: mutations of a valid workflow


@pytest.fixture(scope="module")
def valid(genome: Any) -> dict[str, Any]:
    return workflow(genome.tree.files[WORKFLOW_FILE])


def _mutated(wf: dict[str, Any], change: Any) -> dict[str, Any]:
    copy = yaml.safe_load(yaml.safe_dump(wf))
    change(copy)
    return copy


def _dag(wf: dict[str, Any]) -> list[dict[str, Any]]:
    return wf["spec"]["templates"][0]["dag"]["tasks"]


def _waiting(wf: dict[str, Any]) -> dict[str, Any]:
    """The first task that waits for another."""
    return next(t for t in _dag(wf) if t.get("depends"))


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        (lambda wf: wf["spec"].update(entrypiont="chain"), "entrypiont"),
        (lambda wf: _dag(wf)[1].update(dependson=["x"]), "dependson"),
        (lambda wf: _dag(wf)[1].update(depends="nosuch.Succeeded"), "'nosuch' is not a task"),
        (lambda wf: _dag(wf)[1].update(depends="assemble-configmap-0.Completed"), "Completed"),
        (lambda wf: _waiting(wf).update(dependencies=["trim-lanes"]), "both 'depends' and 'dependencies'"),
        (lambda wf: wf["spec"]["templates"][1].update(container={"image": "x"}), "exactly one of"),
        (lambda wf: wf["spec"]["templates"][1]["resource"].update(action="run"), "action"),
        (lambda wf: _dag(wf)[1].update(template="nosuch"), "'nosuch' is not defined"),
        (lambda wf: wf["spec"].update(entrypoint="nosuch"), "entrypoint 'nosuch'"),
    ],
)
def test_a_broken_workflow_fails_validation(valid: dict[str, Any], change: Any, needle: str) -> None:
    problems = validate.validate_object(_mutated(valid, change))
    assert problems, "the mutation went through"
    assert any(needle in p.message or needle in p.path for p in problems), [p.render() for p in problems]


@pytest.mark.parametrize(
    ("schedule", "ok"),
    [
        ({"schedules": ["0 1 * * *"]}, True),
        ({"schedule": "0 1 * * *"}, True),
        ({}, False),
        ({"schedule": "0 1 * * *", "schedules": ["0 2 * * *"]}, False),
    ],
)
def test_a_cron_workflow_has_one_way_of_saying_its_schedule(schedule: dict[str, Any], ok: bool) -> None:
    cron = {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "CronWorkflow",
        "metadata": {"name": "c"},
        "spec": {
            **schedule,
            "workflowSpec": {
                "entrypoint": "m",
                "templates": [{"name": "m", "container": {"image": "busybox"}}],
            },
        },
    }
    assert (validate.validate_object(cron) == []) is ok


def test_the_corpus_workflows_validate_except_the_broken_ones() -> None:
    report = validate.validate_tree(CORPUS / "cases" / "argo")
    bad = sorted({Path(p.file or "").name for p in report.problems})
    assert bad == ["depends_broken.yaml", "workflowtemplate_ref_run.yaml"]


def test_the_whole_output_tree_validates(genome: Any, tmp_path: Path) -> None:
    genome.tree.commit(str(tmp_path / "out"))
    report = validate.validate_tree(tmp_path / "out")
    assert [p.render() for p in report.problems] == []
    assert report.kinds.get("argoproj.io/v1alpha1 Workflow") == 1
