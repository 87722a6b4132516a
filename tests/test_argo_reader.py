"""The Argo reader: depends expressions, DAG and steps order, fan-out, schedules, templateRef."""

from __future__ import annotations

import pytest
from conftest import CORPUS

from migrate import ir
from migrate.diagnostics import Collector
from migrate.scan import scanner
from migrate.scan.results import ScanOptions
from migrate.translators.argo import depends, reader
from migrate.vocab import DependencyType


def read(text: str) -> tuple[list[ir.Job], Collector]:
    diags = Collector("wf.yaml")
    return reader.read(text, "wf.yaml", diags), diags


def by_name(jobs: list[ir.Job]) -> dict[str, ir.Job]:
    return {job.name or "": job for job in jobs}


def deps(job: ir.Job) -> list[tuple[str, tuple[str, ...], bool]]:
    return [(d.type, d.targets, d.any_of) for d in job.dependencies]


# depends expressions


def test_and_binds_tighter_than_or() -> None:
    expr = depends.parse("a || b && c")
    assert expr == depends.Or(
        (depends.Operand("a"), depends.And((depends.Operand("b"), depends.Operand("c"))))
    )
    assert depends.render_expr(depends.parse("(a || b) && !c.Failed")) == "(a || b) && !c.Failed"


@pytest.mark.parametrize(
    "text",
    ["a.Completed", "a &&", "(a || b", "a b", "&& a", "a.Succeeded)", "a $ b"],
)
def test_what_argo_refuses_is_a_syntax_error(text: str) -> None:
    with pytest.raises(depends.DependsSyntaxError):
        depends.parse(text)


@pytest.mark.parametrize(
    ("text", "expected", "exact"),
    [
        ("a", [("afterok", ("a",), False)], True),
        ("a.Succeeded", [("afterok", ("a",), False)], True),
        ("a.Failed", [("afternotok", ("a",), False)], True),
        ("a.Failed || a.Errored", [("afternotok", ("a",), False)], True),
        ("a.Succeeded || a.Failed || a.Errored", [("afterany", ("a",), False)], True),
        ("a.Succeeded || a.Failed", [("afterany", ("a",), False)], True),
        ("a.Succeeded && b.Failed", [("afterok", ("a",), False), ("afternotok", ("b",), False)], True),
        ("a.Succeeded || b.Succeeded", [("afterok", ("a", "b"), True)], True),
        ("a.Daemoned", [("after", ("a",), False)], False),
        ("a.AnySucceeded", [("afterany", ("a",), False)], False),
        ("a.AllFailed", [("afternotok", ("a",), False)], False),
        ("!a.Succeeded", [("afterany", ("a",), False)], False),
        ("a.Skipped", [("afterany", ("a",), False)], False),
        ("a.Failed || b.Succeeded", [("afterany", ("a", "b"), False)], False),
    ],
)
def test_each_term_gets_the_slurm_type_of_its_results(
    text: str, expected: list[tuple[str, tuple[str, ...], bool]], exact: bool
) -> None:
    found = depends.to_slurm(depends.parse(text))
    assert [(d.type, d.tasks, d.any_of) for d in found] == expected
    assert all(d.exact for d in found) is exact
    assert all(d.why for d in found if not d.exact)


def test_condition_writes_each_slurm_type_back() -> None:
    assert depends.condition(DependencyType.AFTER_OK, "x") == "x.Succeeded"
    assert depends.condition(DependencyType.AFTER_NOT_OK, "x") == "(x.Failed || x.Errored)"
    for dep_type in ("afterok", "afternotok", "afterany"):
        back = depends.to_slurm(depends.parse(depends.condition(dep_type, "x")))
        assert [(d.type, d.exact) for d in back] == [(dep_type, True)]  # the round trip is exact


# DAG, steps, fan-out


DAG = """\
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: wf}
spec:
  entrypoint: main
  parallelism: 4
  templates:
  - name: main
    dag:
      tasks:
      - {name: a, template: pod}
      - {name: b, template: pod, dependencies: [a], continueOn: {failed: true}}
      - {name: c, template: pod, depends: "a.Succeeded && (b.Failed || b.Errored)"}
      - {name: d, template: pod, depends: "c || zz", withItems: [1, 2, 3, 4, 5, 6]}
  - name: pod
    retryStrategy: {limit: 4}
    activeDeadlineSeconds: 600
    container:
      image: busybox
      command: [sh, -c, "echo hi"]
      resources: {limits: {nvidia.com/gpu: 2, memory: 1Gi}}
"""


def test_a_dag_becomes_one_job_per_task_with_typed_dependencies() -> None:
    jobs, diags = read(DAG)
    named = by_name(jobs)
    assert sorted(named) == ["wf-a", "wf-b", "wf-c", "wf-d"]
    assert deps(named["wf-a"]) == []
    # continueOn.failed adds Failed to the bare expansion: a failed a still lets b run
    assert deps(named["wf-b"]) == [("afterany", ("wf-a",), False)]
    assert deps(named["wf-c"]) == [("afterok", ("wf-a",), False), ("afternotok", ("wf-b",), False)]
    assert deps(named["wf-d"]) == [("afterok", ("wf-c",), False)]
    assert [d.code for d in diags.items] == ["ARGO-DEPENDS-UNKNOWN-TASK"]
    job = named["wf-d"]
    assert job.array == ir.ArraySpec("0-5", (0, 1, 2, 3, 4, 5), 6, 4)
    assert job.failure.max_retries == 4 and job.time_limit_s == 600
    assert job.components[0].resources.gpus_per_node == 2
    assert job.script is not None and "echo hi" in job.script.body


STEPS = """\
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: st-}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {name: one, template: pod}
    - - {name: two, template: pod}
      - {name: three, template: inner}
    - - {name: four, template: pod}
  - name: inner
    steps:
    - - {name: x, template: pod}
    - - {name: y, template: pod, withSequence: {count: "5"}}
  - name: pod
    container: {image: busybox, command: ["true"]}
"""


def test_steps_groups_wait_for_the_group_before_and_nested_steps_chain_through() -> None:
    jobs, diags = read(STEPS)
    named = by_name(jobs)
    assert sorted(named) == ["st-four", "st-one", "st-three-x", "st-three-y", "st-two"]
    assert deps(named["st-two"]) == [("afterok", ("st-one",), False)]
    assert deps(named["st-three-x"]) == [("afterok", ("st-one",), False)]
    assert deps(named["st-three-y"]) == [("afterok", ("st-three-x",), False)]
    # the last group waits for what ends the groups before: two, and the inner steps' last job
    assert deps(named["st-four"]) == [("afterok", ("st-two", "st-three-y"), False)]
    assert named["st-three-y"].array == ir.ArraySpec("0-4", (0, 1, 2, 3, 4), 5, None)
    assert diags.items == []


def test_with_param_is_an_array_of_unknown_size() -> None:
    text = DAG.replace("withItems: [1, 2, 3, 4, 5, 6]", 'withParam: "{{tasks.c.outputs.result}}"')
    jobs, diags = read(text)
    job = by_name(jobs)["wf-d"]
    assert job.array is not None and job.array.count == 0 and job.array.max_concurrent == 4
    assert "ARGO-FANOUT-UNKNOWN" in [d.code for d in diags.items]


def test_a_self_calling_template_stops() -> None:
    text = STEPS.replace('{name: y, template: pod, withSequence: {count: "5"}}', "{name: y, template: inner}")
    jobs, _ = read(text)
    assert "st-three-x" in by_name(jobs)


# schedules and templateRef


@pytest.mark.parametrize(
    ("schedule", "cron", "extra"),
    [
        ('schedule: "5 4 * * *"', "5 4 * * *", []),
        ('schedules: ["0 1 * * *", "0 13 * * *"]', "0 1 * * *", ["0 13 * * *"]),
    ],
)
def test_cron_workflows_of_v3_and_v4_have_their_schedule(schedule: str, cron: str, extra: list[str]) -> None:
    text = f"""\
apiVersion: argoproj.io/v1alpha1
kind: CronWorkflow
metadata: {{name: nightly}}
spec:
  {schedule}
  timezone: UTC
  workflowSpec:
    entrypoint: run
    templates:
    - name: run
      container: {{image: busybox, command: [date]}}
"""
    (job,), _ = read(text)
    assert job.schedule is not None and (job.schedule.cron, job.schedule.timezone) == (cron, "UTC")
    assert [r.value for r in job.raw if r.key == "argo-schedule"] == extra


def test_template_refs_are_resolved_across_the_scanned_files() -> None:
    folder = CORPUS / "cases" / "argo"
    alone = scanner.scan([str(folder / "templateref_pipeline.yaml")], ScanOptions(jobs=1))
    assert [d.code for f in alone.files for d in f.diagnostics].count("ARGO-TEMPLATEREF-UNRESOLVED") == 3
    together = scanner.scan([str(folder)], ScanOptions(jobs=1))
    (result,) = [f for f in together.files if f.path.endswith("templateref_pipeline.yaml")]
    named = by_name(result.jobs)
    assert sorted(named) == ["llm-sft-download", "llm-sft-sft", "llm-sft-tokenize"]
    assert named["llm-sft-download"].images() == ("registry.ml.example.net/platform/hf-download:1.8",)
    assert deps(named["llm-sft-tokenize"]) == [("afterok", ("llm-sft-download",), False)]
    # the cluster template is in no scanned file: still reported, once
    assert [d.code for d in result.diagnostics] == ["ARGO-TEMPLATEREF-UNRESOLVED"]


def test_arguments_fill_the_input_parameters() -> None:
    jobs = scanner.scan([str(CORPUS / "cases" / "argo" / "steps_parallel_groups.yaml")]).jobs
    job = by_name(jobs)["wgs-qc-run-2291-kraken"]
    assert job.script is not None and job.script.body.startswith("kraken2 --threads 8")
