"""The pilot takes only units whose moving jobs can run as they are, and says why it passed others over."""

from __future__ import annotations

from dataclasses import replace

from ir_builders import k8s_job

from migrate import ir
from migrate.diagnostics import Diagnostic
from migrate.plan.facts import facts_of
from migrate.plan.planner import PhaseKind, Plan, build_plan
from migrate.plan.runnable import error_diagnostics, why_not_runnable
from migrate.site.config import parse_site_config
from migrate.vocab import Direction

SITE = parse_site_config(
    {
        "partitions": {
            "gpu": {
                "nodes": 4,
                "gpus_per_node": 8,
                "queue": "gpu-queue",
                "cpus_per_node": 96,
                "mem_gb": 1024,
            },
            "cpu": {"nodes": 8, "cpus_per_node": 64, "mem_gb": 256, "default": True},
        },
        "thresholds": {"pilot_max_units": 4, "wave_max_units": 4},
    }
)
TOKENIZE = ("python", "tokenize.py", "--shards", "64")


def _jobs() -> list[ir.Job]:
    def job(name: str, **kw: object) -> ir.Job:
        return k8s_job(f"jobs/{name}.yaml", name=name, command=TOKENIZE, **kw)  # type: ignore[arg-type]

    return [
        job("tokenize-broken"),
        replace(job("tokenize-templated"), templated=True, unresolved=(ir.Unresolved("SHARDS", line=9),)),
        job("tokenize-too-big", gpus_per_pod=16, queue="gpu-queue"),
        job("tokenize-good"),
    ]


ERROR = Diagnostic("K8S-BAD-QUANTITY", "error", "memory 12XB is no quantity", "jobs/tokenize-broken.yaml", 14)


def _plan() -> Plan:
    return build_plan(_jobs(), Direction.TO_SLURM, SITE, diagnostics=[ERROR])


def test_the_pilot_takes_only_jobs_that_can_run() -> None:
    plan = _plan()
    moving = {j for d in plan.units for j in d.moving}
    assert len(moving) == 4  # all of them move ...
    pilot = next(p for p in plan.phases if p.kind is PhaseKind.PILOT)
    assert pilot.jobs == ("jobs/tokenize-good.yaml#0",)  # ... only one can run as it is


def test_the_pilot_says_why_it_passed_a_unit_over() -> None:
    pilot = next(p for p in _plan().phases if p.kind is PhaseKind.PILOT)
    passed = [line for line in pilot.why if "passed over for the pilot" in line]
    assert len(passed) == 3
    text = "\n".join(passed)
    assert "1 error diagnostic (K8S-BAD-QUANTITY at jobs/tokenize-broken.yaml:14)" in text
    assert "placeholder left without a value (SHARDS)" in text
    assert "asks more than a node of partition gpu has" in text and "16 GPUs per node" in text


def test_a_service_the_slurm_writer_leaves_on_kubernetes_cannot_run_there() -> None:
    served = k8s_job(
        "jobs/tokenize-api.yaml",
        name="tokenize-api",
        command=TOKENIZE,
        services=[ir.Service(name="tokenize-api", ports=(8080,))],
    )
    why = why_not_runnable(served, facts_of(served, SITE), Direction.TO_SLURM)
    assert why == "a Job with a service: the Slurm translation writes no script for it"
    assert why_not_runnable(_jobs()[-1], facts_of(_jobs()[-1], SITE), Direction.TO_SLURM) is None


def test_no_unit_can_run_gives_waves_and_no_pilot() -> None:
    broken = _jobs()[0]
    plan = build_plan([broken], Direction.TO_SLURM, SITE, diagnostics=[ERROR])
    assert [p.kind for p in plan.phases] == ["foundations", "wave", "end"]
    assert any("no unit that moves can run as it is" in w for w in plan.warnings)
    assert any("K8S-BAD-QUANTITY" in w for w in plan.warnings)


def test_an_error_belongs_to_the_document_that_holds_its_line() -> None:
    first = replace(k8s_job("all.yaml", name="a", doc=0), source=ir.SourceRef("all.yaml", "kubernetes", 1))
    second = replace(
        k8s_job("all.yaml", name="b", doc=1), source=ir.SourceRef("all.yaml", "kubernetes", 30, document=1)
    )
    found = error_diagnostics(
        [first, second],
        [
            Diagnostic("K8S-BAD-TYPE", "error", "x", "all.yaml", 41),
            Diagnostic("K8S-BAD-TYPE", "warning", "y", "all.yaml", 5),
            Diagnostic("K8S-YAML-ERROR", "error", "z", "all.yaml", None),
        ],
    )
    assert [d.message for d in found[second.id]] == ["x", "z"]
    assert [d.message for d in found[first.id]] == ["z"]
