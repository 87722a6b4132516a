"""Golden files over corpus/: the IR and the diagnostics of every input file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import GOLDEN, REPO, corpus_inputs, site_for
from golden import check_json

from migrate.diagnostics import CODES
from migrate.scan import files as scan_files
from migrate.scan.discover import Candidate
from migrate.scan.results import ScanOptions
from migrate.serialize import job_from_dict, job_to_dict

INPUTS = corpus_inputs()
SCAN_GOLDEN = GOLDEN / "scan"
# Codes that no corpus file can honestly produce; each has its own unit test.
NOT_IN_CORPUS = {
    "INTERNAL-ERROR": "tests/test_scan.py::test_reader_crash_is_a_diagnostic",
    "FILE-UNREADABLE": "tests/test_scan.py::test_unreadable_file",
    "FILE-SYMLINK-LOOP": "tests/test_discover.py::test_symlink_loop",
    "FILE-SYMLINK-OUTSIDE": "tests/test_discover.py::test_symlink_outside",
    "FILE-TOO-LARGE": "tests/test_scan.py::test_too_large",
    "SHELL-TOO-LONG": "tests/test_adversarial.py::test_huge_body_is_analysed_up_to_the_limit",
    "K8S-HELM-FAILED": "tests/test_charts.py::test_a_failing_helm_is_a_diagnostic",
    # a pass over all scanned files: one file alone never runs it
    "K8S-RAY-CLUSTER-UNRESOLVED": "tests/test_ray_refs.py::test_a_selector_that_matches_no_cluster",
}


def scan_one(rel: str) -> dict[str, object]:
    """One file read as the site whose config translates it reads it (its own SPANK options)."""
    path = REPO / rel
    options = ScanOptions(spank_options=site_for(rel).spank_options)
    result = scan_files.scan_file(Candidate(rel, rel, path.stat().st_size), options)
    if result is None:
        return {"path": rel, "format": None, "skipped": "not a job file"}
    return result.to_dict()


@pytest.mark.parametrize("rel", INPUTS)
def test_scan_golden(rel: str, in_repo: Path, update_golden: bool) -> None:
    actual = scan_one(rel)
    check_json(SCAN_GOLDEN / (rel.removeprefix("corpus/") + ".json"), actual, update_golden)


@pytest.mark.parametrize("rel", INPUTS)
def test_ir_round_trip(rel: str, in_repo: Path) -> None:
    path = REPO / rel
    result = scan_files.scan_file(Candidate(rel, rel, path.stat().st_size))
    for job in result.jobs if result else []:
        data = job_to_dict(job)
        assert job_from_dict(json.loads(json.dumps(data))) == job


def _codes_in(data: object, seen: set[str]) -> None:
    """Every diagnostic code anywhere in a golden document (scan or translation)."""
    if isinstance(data, dict):
        if isinstance(data.get("code"), str) and "severity" in data:
            seen.add(data["code"])
        for value in data.values():
            _codes_in(value, seen)
    elif isinstance(data, list):
        for value in data:
            _codes_in(value, seen)


def test_every_code_appears_in_a_golden(in_repo: Path) -> None:
    seen: set[str] = set()
    for golden in GOLDEN.rglob("*.json"):
        _codes_in(json.loads(golden.read_text(encoding="utf-8")), seen)
    missing = sorted(set(CODES) - seen - set(NOT_IN_CORPUS))
    assert not missing, f"diagnostic codes no golden file shows: {missing}"


def test_no_stale_goldens(in_repo: Path, update_golden: bool) -> None:
    expected = {SCAN_GOLDEN / (rel.removeprefix("corpus/") + ".json") for rel in INPUTS}
    stale = [p for p in SCAN_GOLDEN.rglob("*.json") if p not in expected]
    if update_golden:
        for p in stale:
            p.unlink()
        return
    assert not stale, f"golden files without an input: {stale}"
