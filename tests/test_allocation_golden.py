"""Golden files of what Slurm allocates each corpus job, with provenance, and of the allocation cases' plan.

``corpus/golden/allocation/<input>.json``: the allocation of every sbatch job of the corpus, against
the sample site's configuration, or for ``corpus/cases/allocation`` against its own ``migrate.yaml``
completed by its ``cluster/`` files (``conftest.site_for``). ``corpus/golden/plan/cases/allocation.json``
is the plan of those cases, and ``corpus/golden/plan/cases/allocation-kueue/`` the Kueue queues their
translation needs (quotas from the partitions' nodes).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import CORPUS, GOLDEN, REPO, site_for, site_of_cases
from golden import check_json, check_text

from migrate.diagnostics import Collector
from migrate.plan.planner import build_plan, plan_json
from migrate.scan import scanner
from migrate.site.allocation import allocate
from migrate.translate import translate_jobs
from migrate.translators.slurm import directives, reader
from migrate.vocab import Direction

ALLOCATION_GOLDEN = GOLDEN / "allocation"
INPUTS = [
    str(p.relative_to(REPO))
    for top in ("cases/slurm", "cases/allocation", "sample-site")
    for p in sorted((CORPUS / top).rglob("*"))
    if p.is_file() and not p.name.endswith((".yaml", ".yml", ".md")) and p.parent.name != "cluster"
]


def _as_written(spelled: str, value: str | None) -> str:
    if value is None:
        return spelled
    return f"{spelled}={value}" if spelled.startswith("--") else f"{spelled} {value}"


def allocations_of(rel: str) -> dict[str, object]:
    text = (REPO / rel).read_text(encoding="utf-8")
    header = directives.read_header(directives.split_lines(text), Collector(rel))
    lines = {(s.option.long, s.component): s.line for s in header.settings}
    texts = {(s.option.long, s.component): _as_written(s.spelled, s.value) for s in header.settings}
    out = []
    for job in reader.read(text, rel, Collector(rel)):
        if job.kind == "wrapper":
            continue
        # a scrontab entry's own #SCRON lines are not the file's header
        own = job.kind == "sbatch"
        out.append(allocate(job, site_for(rel), lines if own else None, texts if own else None).to_dict())
    return {"source": rel, "jobs": out}


@pytest.mark.parametrize("rel", INPUTS)
def test_allocation_golden(rel: str, in_repo: Path, update_golden: bool) -> None:
    golden = ALLOCATION_GOLDEN / (rel.removeprefix("corpus/") + ".json")
    check_json(golden, allocations_of(rel), update_golden)


def test_plan_of_the_allocation_cases(in_repo: Path, update_golden: bool) -> None:
    jobs = scanner.scan(["corpus/cases/allocation"]).jobs
    text = plan_json(build_plan(jobs, Direction.TO_KUBERNETES, site_of_cases("allocation")))
    check_text(GOLDEN / "plan" / "cases" / "allocation.json", text, update_golden)


def test_kueue_queues_of_the_allocation_cases(in_repo: Path, update_golden: bool) -> None:
    jobs = [j for j in scanner.scan(["corpus/cases/allocation"]).jobs if j.source.format == "slurm"]
    files = translate_jobs(jobs, flavor="kueue", config=site_of_cases("allocation")).tree.files
    queues = {rel: text for rel, text in files.items() if rel.startswith("kueue/")}
    assert queues, "the Kueue translation names no queue"
    for rel, text in sorted(queues.items()):
        check_text(GOLDEN / "plan" / "cases" / "allocation-kueue" / Path(rel).name, text, update_golden)


def test_no_stale_allocation_goldens(in_repo: Path, update_golden: bool) -> None:
    expected = {ALLOCATION_GOLDEN / (rel.removeprefix("corpus/") + ".json") for rel in INPUTS}
    stale = [p for p in ALLOCATION_GOLDEN.rglob("*.json") if p not in expected]
    if update_golden:
        for p in stale:
            p.unlink()
        return
    assert not stale, f"golden files without an input: {stale}"
