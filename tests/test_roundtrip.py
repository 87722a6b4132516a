"""sbatch -> IR -> Kubernetes -> IR -> sbatch keeps what a job asks for, or says why not.

Each sbatch script goes through the Kubernetes writer, the manifests are
written out and scanned again, the Slurm writer makes scripts of them, and
the Slurm reader reads those. Resources, array, time limit, dependencies and
the command (the script body) must come back the same; where they cannot, a
fidelity entry of one of the two translations must record it. Runs over the
corpus's sbatch scripts and over generated scripts.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import CORPUS, REPO, site_of_cases
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from migrate import ir
from migrate.diagnostics import Collector
from migrate.fidelity import Translation
from migrate.scan import scanner
from migrate.site.allocation import allocate
from migrate.site.config import SiteConfig, load_site_config
from migrate.translate import translate_jobs
from migrate.translators.slurm import options, reader
from migrate.vocab import FidelityStatus

SITE = load_site_config(CORPUS / "sample-site" / "migrate.yaml")
ENV_BLOCK = "# env of the Kubernetes manifest"


@dataclass
class Trip:
    before: ir.Job
    to_k8s: Translation
    back: Translation | None
    after: ir.Job | None


def round_trip(jobs: list[ir.Job], tmp: Path, site: SiteConfig = SITE) -> list[Trip]:
    # emulated: the script rides in the ConfigMap, and reads back with its #SBATCH lines
    k8s = translate_jobs(jobs, to="kubernetes", config=site, style="emulate")
    k8s.tree.commit(str(tmp / "k8s"))
    scanned = scanner.scan([str(tmp / "k8s")]).jobs
    slurm = translate_jobs(scanned, to="slurm", config=site)
    slurm.tree.commit(str(tmp / "slurm"))
    by_folder: dict[str, Translation] = {}
    for t in slurm.translations:
        folder = Path(t.source).relative_to(tmp / "k8s").parts[0]
        by_folder.setdefault(folder, t)
    trips = []
    for job, t in zip(jobs, k8s.translations, strict=True):
        back = by_folder.get(t.name)
        after = None
        if back is not None and "job.sbatch" in back.files:
            path = tmp / "slurm" / back.name / "job.sbatch"
            read = reader.read(path.read_text(encoding="utf-8"), str(path), Collector(str(path)))
            after = read[0] if read else None
        trips.append(Trip(job, t, back, after))
    return trips


def resources(job: ir.Job) -> list[dict[str, object]]:
    out = []
    for comp in job.components:
        r = comp.resources
        out.append(
            {
                "nodes": r.computed_nodes(),
                "tasks_per_node": r.computed_tasks_per_node(),
                "tasks": r.computed_tasks(),
                "cpus_per_task": r.cpus_per_task,
                "mem_per_node_mb": r.mem_per_node_mb,
                "mem_per_cpu_mb": r.mem_per_cpu_mb,
                "mem_per_gpu_mb": r.mem_per_gpu_mb,
                "gpus_per_node": r.computed_gpus_per_node(),
                "gpu_type": r.gpu_type,
            }
        )
    return out


def array(job: ir.Job) -> tuple[tuple[int, ...], int | None] | None:
    if job.array is None:
        return None
    limit = job.array.max_concurrent
    return job.array.indices, limit if limit and limit < job.array.count else None


def body_lines(job: ir.Job | None) -> list[str]:
    lines = (job.script.body if job and job.script else "").split("\n")
    if ENV_BLOCK in lines:  # exports the manifest added, in front of the unchanged body
        start = lines.index(ENV_BLOCK)
        end = lines.index("", start) if "" in lines[start:] else len(lines)
        lines = lines[:start] + lines[end + 1 :]
    return lines


def recorded(trip: Trip, *needles: str) -> bool:
    """A translation of the trip says, in a non-mapped fidelity entry, what happened to ``needles``."""
    for t in (trip.to_k8s, trip.back):
        for e in t.fidelity.entries if t else ():
            if e.status != FidelityStatus.MAPPED and any(n in e.item for n in needles):
                return True
    return False


def differences(trip: Trip) -> list[str]:
    """What changed on the way and is not recorded by a fidelity entry."""
    before, after = trip.before, trip.after
    if after is None:
        return [f"{before.id}: no script came back ({trip.back.flavor if trip.back else 'no translation'})"]
    problems = []
    if resources(before) != resources(after) and not recorded(
        trip, "--gres", "--gpus", "--mem", "--cpus", "--ntasks"
    ):
        problems.append(f"resources {resources(before)} -> {resources(after)}")
    if allocated(before, SITE) != allocated(after, SITE) and not recorded(
        trip, "--gres", "--gpus", "--mem", "--cpus", "--ntasks", "--exclusive", "--time"
    ):
        problems.append(f"allocation {allocated(before, SITE)} -> {allocated(after, SITE)}")
    if array(before) != array(after) and not recorded(trip, "--array"):
        problems.append(f"array {array(before)} -> {array(after)}")
    if before.time_limit_s != after.time_limit_s and not recorded(trip, "--time"):
        problems.append(f"time {before.time_limit_s} -> {after.time_limit_s}")
    kept = {(d.type, d.targets) for d in after.dependencies}
    for dep in before.dependencies:
        text = options.format_dependencies((dep,))
        if (dep.type, dep.targets) not in kept and not recorded(trip, "--dependency", text):
            problems.append(f"dependency {text} lost without a record")
    old, new = body_lines(before), body_lines(after)
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        # a credential the Kubernetes writer moved into a Secret leaves a '# migrate:' line behind
        if (
            tag == "replace"
            and all(": # migrate:" in line for line in new[j1:j2])
            and recorded(trip, "$", "secret")
        ):
            continue
        problems.append(f"body {tag} {old[i1:i2]} -> {new[j1:j2]}")
    return [f"{before.id}: {p}" for p in problems]


SBATCH_INPUTS = [
    str(p.relative_to(REPO))
    for top in ("cases/slurm", "sample-site")
    for p in sorted((CORPUS / top).rglob("*"))
    if p.is_file() and not p.name.endswith((".yaml", ".yml", ".md"))
]


def test_corpus_sbatch_scripts_survive_the_round_trip(in_repo: Path, tmp_path: Path) -> None:
    jobs = [
        j
        for j in scanner.scan(SBATCH_INPUTS).jobs
        if j.source.format == "slurm" and j.kind == "sbatch" and not j.templated
    ]
    assert len(jobs) > 40
    trips = round_trip(jobs, tmp_path)
    problems = [p for trip in trips for p in differences(trip)]
    assert problems == []
    same = sum(1 for t in trips if t.after is not None and resources(t.before) == resources(t.after))
    assert same == len(trips)  # every resource request comes back exactly


def allocated(job: ir.Job, site: SiteConfig) -> list[tuple[object, ...]]:
    """What Slurm gives the job: per component nodes, GPUs per node, CPUs and memory per node; the time."""
    alloc = allocate(job, site)
    per_component: list[tuple[object, ...]] = [
        (c.nodes.value, c.gpus_per_node.value, c.cpus_per_node.value, c.mem_per_node_mb.value)
        for c in alloc.components
    ]
    return [*per_component, ("time", alloc.time_limit_s.value)]


# The corpus's sbatch jobs that make no round trip, and why: nothing comes back to compare.
NO_ROUND_TRIP = {
    "templated": "envsubst/Jinja/placeholder templates: their values exist only once rendered",
    "wrapper": "wrappers submit other jobs and allocate nothing themselves",
    "scrontab": "scrontab entries come back as a scrontab file, compared by the scrontab tests",
    "salloc": "interactive allocations are not translated (no batch counterpart)",
}


@pytest.mark.parametrize(
    ("folder", "inputs"),
    [
        ("sample-site", SBATCH_INPUTS),
        (
            "allocation",
            sorted(str(p.relative_to(REPO)) for p in (CORPUS / "cases" / "allocation").glob("*.sbatch")),
        ),
    ],
)
def test_the_round_trip_keeps_what_slurm_allocates(
    folder: str, inputs: list[str], in_repo: Path, tmp_path: Path
) -> None:
    """sbatch -> Kubernetes -> sbatch: nodes, GPUs per node, CPUs, memory and time as Slurm allocates them."""
    site = site_of_cases(folder)
    scanned = [j for j in scanner.scan(inputs).jobs if j.source.format == "slurm"]
    jobs = [j for j in scanned if j.kind == "sbatch" and not j.templated]
    skipped = {("templated" if j.templated else j.kind) for j in scanned if j not in jobs}
    assert skipped <= set(NO_ROUND_TRIP), skipped
    trips = round_trip(jobs, tmp_path, site)
    changed = {
        t.before.id: (allocated(t.before, site), allocated(t.after, site) if t.after else None)
        for t in trips
        if t.after is None or allocated(t.before, site) != allocated(t.after, site)
    }
    assert changed == {}


def test_dependencies_on_old_job_ids_are_recorded(in_repo: Path, tmp_path: Path) -> None:
    jobs = scanner.scan(["corpus/cases/slurm/dep_after_delay.slurm"]).jobs
    (trip,) = round_trip(jobs, tmp_path)
    assert trip.after is not None and trip.after.dependencies == ()
    assert recorded(trip, "--dependency")


def test_singleton_comes_back_in_the_script(in_repo: Path, tmp_path: Path) -> None:
    jobs = scanner.scan(["corpus/cases/slurm/singleton_resume.sbatch"]).jobs
    (trip,) = round_trip(jobs, tmp_path)
    assert trip.after is not None
    assert [d.type for d in trip.after.dependencies] == ["singleton"]


# ---------------------------------------------------------------------------
# Generated scripts

_PARTITIONS = ("cpu", "gpu-a100", "gpu-h100", "debug")


@st.composite
def sbatch_scripts(draw: st.DrawFn) -> str:
    nodes = draw(st.integers(1, 4))
    lines = ["#!/bin/bash", f"#SBATCH --job-name=gen-{draw(st.integers(0, 999))}"]
    lines.append(f"#SBATCH --partition={draw(st.sampled_from(_PARTITIONS))}")
    lines.append(f"#SBATCH --nodes={nodes}")
    lines.append(f"#SBATCH --ntasks-per-node={draw(st.integers(1, 8))}")
    if draw(st.booleans()):
        lines.append(f"#SBATCH --cpus-per-task={draw(st.integers(1, 16))}")
    memory = draw(st.sampled_from(["", "mem", "mem-per-cpu"]))
    if memory == "mem":
        lines.append(f"#SBATCH --mem={draw(st.integers(1, 512))}G")
    elif memory == "mem-per-cpu":
        lines.append(f"#SBATCH --mem-per-cpu={draw(st.integers(256, 8192))}M")
    gpus = draw(st.integers(0, 8))
    if gpus:
        lines.append(draw(st.sampled_from([f"#SBATCH --gres=gpu:{gpus}", f"#SBATCH --gpus-per-node={gpus}"])))
    seconds = draw(st.integers(60, 3 * 86400))
    lines.append(f"#SBATCH --time={options.format_time(seconds - seconds % 60)}")
    if nodes == 1 and draw(st.booleans()):
        spec = draw(st.sampled_from(["0-9", "1,3,7,42", "0-20:5", "5-6"]))
        limit = draw(st.sampled_from(["", "%2", "%4"]))
        lines.append(f"#SBATCH --array={spec}{limit}")
    if draw(st.booleans()):
        lines.append(f"#SBATCH --dependency=afterok:{draw(st.integers(1, 99999))}")
    words = draw(st.lists(st.text("ab $'\"\\`()\n", max_size=6), max_size=3))
    printf = " ".join("'" + w.replace("'", "'\\''") + "'" for w in words)
    lines += ["", "set -eu", f"srun printf '%s\\n' {printf}".rstrip(), ""]
    return "\n".join(lines)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=sbatch_scripts())
def test_generated_scripts_survive_the_round_trip(
    tmp_path_factory: pytest.TempPathFactory, text: str
) -> None:
    tmp = tmp_path_factory.mktemp("trip")
    path = tmp / "gen.sbatch"
    path.write_text(text, encoding="utf-8")
    jobs = reader.read(text, str(path), Collector(str(path)))
    (trip,) = round_trip(jobs, tmp)
    assert differences(trip) == [], text
    assert re.search(r"^srun printf", trip.back.files["job.sbatch"] if trip.back else "", re.MULTILINE)
