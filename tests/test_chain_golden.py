"""Goldens of the chain files each engine writes for the cohort pipeline, and of how each
dependency was carried (corpus/golden/chains/; pytest --update-golden rewrites them)."""

from __future__ import annotations

from pathlib import Path

import pytest
from chain_entries import dependency_statuses
from golden import check_json, check_text

from migrate import api
from migrate.scan.results import ScanOptions

REPO = Path(__file__).resolve().parent.parent
CHAINS = REPO / "corpus" / "cases" / "slurm" / "chains"
GOLDEN = REPO / "corpus" / "golden" / "chains"
CHAIN_FILES = {"script": "submit.sh", "jobflow": "jobflow.yaml"}


@pytest.mark.parametrize("workflow", sorted(CHAIN_FILES))
def test_chain_golden(workflow: str, tmp_path: Path, update_golden: bool, in_repo: Path) -> None:
    out = tmp_path / "out"
    api.run_translate(
        ["corpus/cases/slurm/chains"],
        "kubernetes",
        str(out),
        workflow=workflow,
        options=ScanOptions(cache=None),
    )
    name = CHAIN_FILES[workflow]
    check_text(GOLDEN / f"cohort.{name}", (out / name).read_text(encoding="utf-8"), update_golden)
    statuses = {f"{job}: {item}": status for (job, item), status in sorted(dependency_statuses(out).items())}
    check_json(GOLDEN / f"cohort.{workflow}.dependencies.json", statuses, update_golden)
