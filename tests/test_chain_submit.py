"""submit.sh run against a stand-in kubectl: every job is applied only once what it depends on
ended as its dependency type asks, and what can never start is never applied.

The stand-in records each apply and answers the ``get ... -o jsonpath`` queries submit.sh
makes: a workload is pending until applied, running once applied (it has a startTime), and
ends (Complete or Failed, as the test chooses) on its third poll of conditions. No cluster is
involved; what differs from one is timing only.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from chain_entries import dependency_statuses

from migrate import api
from migrate.scan.results import ScanOptions

CHAINS = Path(__file__).resolve().parent.parent / "corpus" / "cases" / "slurm" / "chains"

# Started for every kubectl call (dozens of poll loops at once): no site packages, no YAML parser;
# the workload's kind and name are read from the top-level lines the writer emits.
_KUBECTL = """#!{python} -SE
import fcntl, json, os, re, sys

NOT_WORKLOADS = {{"ConfigMap", "PersistentVolumeClaim", "PersistentVolume", "Secret", "Service",
                 "LocalQueue", "ClusterQueue", "ResourceFlavor", "WorkloadPriorityClass", "PriorityClass",
                 "NetworkPolicy"}}
OK_CONDITION = {{"jobset": "Completed", "mpijob": "Succeeded", "pytorchjob": "Succeeded"}}
state_file = os.environ["KUBECTL_STATE"]
outcomes = json.loads(os.environ["KUBECTL_OUTCOMES"])
args = sys.argv[1:]
with open(state_file + ".lock", "w") as lock:
    fcntl.flock(lock, fcntl.LOCK_EX)
    state = json.load(open(state_file)) if os.path.exists(state_file) else {{"events": [], "objects": {{}}}}
    code = 0
    if args[0] == "apply":
        for i, arg in enumerate(args):
            if arg != "-f":
                continue
            for doc in open(args[i + 1]).read().split("\\n---\\n"):
                kind = re.search(r"^kind: (\\S+)$", doc, re.M)
                name = re.search(r"^metadata:\\n(?:  .*\\n)*?  name: (\\S+)$", doc, re.M)
                if kind and name and kind.group(1) not in NOT_WORKLOADS:
                    state["objects"][name.group(1)] = {{"polls": 0}}
                    state["events"].append(["applied", name.group(1)])
    elif args[:3] == ["create", "secret", "generic"]:
        value = next(a.split("=", 2)[2] for a in args if a.startswith("--from-literal=token="))
        state.setdefault("secrets", {{}})[args[3]] = value
        state["events"].append(["secret", args[3]])
    elif args[:2] == ["get", "secret"]:
        code = 0 if args[2] in state.get("secrets", {{}}) else 1
    elif args[0] == "get":
        name, query = args[2], args[-1]
        obj = state["objects"].get(name)
        if obj is None:
            sys.stderr.write(f"Error from server (NotFound): {{name}}\\n")
            code = 1
        elif "startTime" in query:  # asked only while no condition is true: it is running
            if not obj.get("started"):
                obj["started"] = True
                state["events"].append(["started", name])
            print("2026-01-01T00:00:00Z", end="")
        else:
            obj["polls"] += 1
            outcome = outcomes.get(name, "Complete")
            if obj["polls"] == 3:
                state["events"].append([outcome, name])
            if obj["polls"] >= 3:  # the condition type each controller sets on success
                done = OK_CONDITION.get(args[1], "Complete") if outcome == "Complete" else outcome
                print(done + " ", end="")
    json.dump(state, open(state_file, "w"))
sys.exit(code)
"""


@pytest.fixture(scope="module")
def translated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("chains") / "out"
    options = ScanOptions(cache=None)
    api.run_translate([str(CHAINS)], "kubernetes", str(out), workflow="script", options=options)
    return out


def run_submit(
    out: Path, tmp: Path, outcomes: dict[str, str], state: dict[str, Any] | None = None
) -> list[tuple[str, str]]:
    bin_dir = tmp / "bin"
    bin_dir.mkdir(exist_ok=True)
    kubectl = bin_dir / "kubectl"
    kubectl.write_text(_KUBECTL.format(python=sys.executable), encoding="utf-8")
    kubectl.chmod(0o755)
    env = {
        **os.environ,
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "KUBECTL_STATE": str(tmp / "state.json"),
        "KUBECTL_OUTCOMES": json.dumps(outcomes),
        "MIGRATE_POLL_SECONDS": "0.1",
    }
    done = subprocess.run(
        ["bash", str(out / "submit.sh")], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    final: dict[str, Any] = json.loads((tmp / "state.json").read_text(encoding="utf-8"))
    if state is not None:
        state.update(final)
    return [(what, name) for what, name in final["events"]]


def at(events: list[tuple[str, str]], what: str | tuple[str, ...], name: str) -> int:
    kinds = (what,) if isinstance(what, str) else what
    return next(i for i, (w, n) in enumerate(events) if w in kinds and n == name)


ENDED = ("Complete", "Failed")


def test_each_dependency_type_holds_when_everything_succeeds(translated: Path, tmp_path: Path) -> None:
    events = run_submit(translated, tmp_path, {})
    applied = {n for w, n in events if w == "applied"}
    for after_ok in (
        ("merge-bams", "align-reads"),
        ("qc-sample", "align-reads"),  # aftercorr: the whole array first
        ("sample-sheet", "merge-bams"),  # the --wrap step, between merge and calling
        ("call-variants", "sample-sheet"),
        ("archive-cohort", "call-variants"),  # afterany
        ("refresh-index-2", "refresh-index"),  # singleton: one refresh-index at a time
    ):
        dependent, prerequisite = after_ok
        assert at(events, "applied", dependent) > at(events, ENDED, prerequisite), after_ok
    # after: once merge-bams started, not once it ended
    assert at(events, "applied", "watch-merge") > at(events, "started", "merge-bams")
    # afternotok on a success: never applied, and submit.sh still finished
    assert "cohort-failed" not in applied
    assert {"align-reads", "sample-sheet", "archive-cohort", "watch-merge", "refresh-index"} <= applied


def test_a_failure_runs_afternotok_and_afterany_and_stops_afterok(translated: Path, tmp_path: Path) -> None:
    events = run_submit(translated, tmp_path, {"call-variants": "Failed"})
    assert at(events, "applied", "cohort-failed") > at(events, "Failed", "call-variants")
    assert at(events, "applied", "archive-cohort") > at(events, "Failed", "call-variants")


def test_a_job_that_never_runs_releases_nobody(translated: Path, tmp_path: Path) -> None:
    """merge-bams fails: everything after it in the chain is never applied, and submit.sh ends."""
    events = run_submit(translated, tmp_path, {"merge-bams": "Failed"})
    applied = {n for w, n in events if w == "applied"}
    assert not applied & {"sample-sheet", "call-variants", "cohort-failed", "archive-cohort"}
    assert {"watch-merge", "qc-sample"} <= applied  # after: merge-bams did start; aftercorr: align ok


def test_the_array_keeps_its_throttle(translated: Path) -> None:
    docs = list(yaml.safe_load_all((translated / "align-reads" / "job.yaml").read_text(encoding="utf-8")))
    job = next(d for d in docs if d and d["kind"] == "Job")
    assert (job["spec"]["completions"], job["spec"]["parallelism"]) == (32, 4)
    assert job["spec"]["completionMode"] == "Indexed"


def test_each_dependency_is_recorded(translated: Path) -> None:
    entries = dependency_statuses(translated)
    assert entries[("sample-sheet", "afterok on merge-bams")] == "approximated"
    assert entries[("refresh-index-2", "--dependency=singleton")] == "approximated"
    assert all(status != "dropped" for status in entries.values()), entries


# A Secret of the sample site's that exists before submit.sh runs (the cluster's state).
EXISTING_SECRETS = {"llm13b-pretrain-steps": "kept"}


@pytest.fixture(scope="module")
def sample_site(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Path, list[tuple[str, str]], dict[str, Any]]:
    """The sample site translated, and what its submit.sh did: (output, events, final state)."""
    out = tmp_path_factory.mktemp("sample-site") / "out"
    site = CHAINS.parents[2] / "sample-site"
    api.run_translate([str(site)], "kubernetes", str(out), workflow="script", options=ScanOptions(cache=None))
    run = out.parent / "run"
    run.mkdir()
    (run / "state.json").write_text(json.dumps({"events": [], "objects": {}, "secrets": EXISTING_SECRETS}))
    state: dict[str, Any] = {}
    events = run_submit(out, run, {}, state)
    return out, events, state


def test_the_sample_sites_data_pipeline_applies_in_order(
    sample_site: tuple[Path, list[tuple[str, str]], dict[str, Any]],
) -> None:
    """download -> dedup -> the --wrap shard list -> tokenize -> verify -> pretrain -> eval -> export."""
    _, events, _ = sample_site
    chain = ["dl-web-v3", "dedup-web-v3", "shardlist", "tok-web-v3", "tok-verify", "llm13b-pretrain"]
    chain += ["llm13b-eval", "llm13b-export"]
    for prerequisite, dependent in itertools.pairwise(chain):
        assert at(events, "applied", dependent) > at(events, ENDED, prerequisite), (prerequisite, dependent)


def test_a_singleton_script_submitted_three_times_runs_three_times_in_turn(tmp_path: Path) -> None:
    folder = tmp_path / "nightly"
    folder.mkdir()
    (folder / "refresh_index.sbatch").write_text(
        (CHAINS / "refresh_index.sbatch").read_text(encoding="utf-8")
    )
    (folder / "nightly.sh").write_text(
        "#!/bin/bash\n"
        "sbatch refresh_index.sbatch\n"
        "sbatch --time=30 refresh_index.sbatch\n"
        "sbatch refresh_index.sbatch\n",
        encoding="utf-8",
    )
    out = tmp_path / "out"
    api.run_translate(
        [str(folder)], "kubernetes", str(out), workflow="script", options=ScanOptions(cache=None)
    )
    runs = ["refresh-index", "refresh-index-2", "refresh-index-3"]
    assert sorted(p.name for p in out.iterdir() if p.is_dir()) == runs
    events = run_submit(out, tmp_path, {})
    applied = [n for w, n in events if w == "applied"]
    assert applied == runs
    for before, after in itertools.pairwise(runs):
        assert at(events, "applied", after) > at(events, ENDED, before)
    # each run keeps its own call's options: only the second was given --time=30
    deadlines = {}
    for name in runs:
        docs = yaml.safe_load_all((out / name / "job.yaml").read_text(encoding="utf-8"))
        job = next(d for d in docs if d and d["kind"] == "Job")
        deadlines[name] = job["spec"].get("activeDeadlineSeconds")
    assert deadlines == {"refresh-index": 10800, "refresh-index-2": 1800, "refresh-index-3": 10800}


def test_a_multi_pod_job_gets_its_random_step_token_before_it_is_applied(
    sample_site: tuple[Path, list[tuple[str, str]], dict[str, Any]],
) -> None:
    """Its pods share a token from the Secret <job>-steps: submit.sh makes it once, random, never written."""
    out, events, state = sample_site
    guarded = {p.parent.name for p in out.glob("*/*.yaml") if "name: MIGRATE_STEP_TOKEN" in p.read_text()}
    assert "llm13b-pretrain" in guarded
    made = {job for job in guarded if f"{job}-steps" not in EXISTING_SECRETS}
    for job in made:
        assert at(events, "secret", f"{job}-steps") < at(events, "applied", job)
    assert sorted(n for w, n in events if w == "secret") == sorted(f"{job}-steps" for job in made)
    assert state["secrets"]["llm13b-pretrain-steps"] == "kept"  # it existed: left as it is
    tokens = [t for name, t in state["secrets"].items() if name not in EXISTING_SECRETS]
    assert all(len(t) == 64 and int(t, 16) >= 0 for t in tokens)
    assert len(set(tokens)) == len(tokens)  # random: no two jobs share one
    for path in out.rglob("*"):
        if path.is_file():
            assert not any(t in path.read_text(errors="replace") for t in tokens)
