"""A workflow engine added in one declaration runs the dependency chains: --workflow takes it, the
translation writes its file and gives its chained jobs the flavor it holds; unregistered, it is unknown."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from migrate import api, cli
from migrate.fidelity import Edge, Translation
from migrate.scan.results import ScanOptions
from migrate.translators.kubernetes import chains


def _makefile(translations: list[Translation], edges: list[Edge], folders: dict[str, str]) -> dict[str, str]:
    """One make target per chained job: its prerequisites' targets first, then kubectl apply of its folder."""
    after: dict[str, list[str]] = {}
    for edge in edges:
        after.setdefault(folders[edge.dependent], []).append(folders[edge.prerequisite])
    chained = sorted({folders[e.dependent] for e in edges} | {folders[e.prerequisite] for e in edges})
    rules = [
        f"{name}: {' '.join(sorted(after.get(name, [])))}\n\tkubectl apply -f {name}/\n" for name in chained
    ]
    return {"Makefile": f"all: {' '.join(chained)}\n\n" + "\n".join(rules)}


# The whole toy engine: GNU make runs the chain, and the jobs are plain batch/v1 Jobs.
TOY = chains.WorkflowEngine("make", "Makefile", _makefile, flavor="job")

PREP = "#!/bin/bash\n#SBATCH --job-name=prep\nsrun python prep.py\n"
TRAIN = "#!/bin/bash\n#SBATCH --job-name=train\n#SBATCH --nodes=2\nsrun train\n"
SUBMIT = (
    "#!/bin/bash\nprep=$(sbatch --parsable prep.sbatch)\nsbatch --dependency=afterok:$prep train.sbatch\n"
)


@pytest.fixture
def toy() -> Iterator[chains.WorkflowEngine]:
    with chains.ENGINES.registered(TOY):
        yield TOY


def _chain(tmp_path: Path) -> Path:
    jobs = tmp_path / "jobs"
    jobs.mkdir()
    for name, text in (("prep.sbatch", PREP), ("train.sbatch", TRAIN), ("submit.sh", SUBMIT)):
        (jobs / name).write_text(text, encoding="utf-8")
    return jobs


def _translated(jobs: Path, out: Path, workflow: str) -> dict[str, object]:
    api.run_translate([str(jobs)], "kubernetes", str(out), workflow=workflow, options=ScanOptions(cache=None))
    document = json.loads((out / "translation.json").read_text(encoding="utf-8"))
    return {job["name"]: job["flavor"] for job in document["jobs"]}


def test_the_toy_engine_writes_its_file_and_its_jobs_take_its_flavor(
    toy: chains.WorkflowEngine, tmp_path: Path
) -> None:
    jobs = _chain(tmp_path)
    flavors = _translated(jobs, tmp_path / "out", "make")
    assert "train: prep\n\tkubectl apply -f train/" in (tmp_path / "out" / "Makefile").read_text()
    # a 2-node job is a JobSet where the engine asks nothing; the toy engine holds plain Jobs
    assert flavors["train"] == "job"
    assert _translated(jobs, tmp_path / "script", "script")["train"] == "jobset"


def test_the_cli_takes_the_toy_engine_and_forgets_it_once_unregistered(tmp_path: Path) -> None:
    jobs = _chain(tmp_path)

    def translate(out: str) -> Result:
        argv = ["translate", str(jobs), "--to", "kubernetes", "--workflow", "make"]
        argv += ["--out", str(tmp_path / out)]
        return CliRunner().invoke(cli.app, argv)

    with chains.ENGINES.registered(TOY):
        assert "make" in chains.workflows()
        done = translate("out")
        assert done.exit_code == 0, done.output
        assert (tmp_path / "out" / "Makefile").is_file()
    assert "make" not in chains.workflows()
    refused = translate("again")
    assert refused.exit_code == 2 and "unknown --workflow 'make'" in refused.output
    assert not (tmp_path / "again").exists()


def test_an_engine_needs_a_plain_name_and_a_registered_flavor() -> None:
    with pytest.raises(ValueError, match="letters, digits and dashes"):
        chains.ENGINES.register(chains.WorkflowEngine("make all", "Makefile", _makefile))
    with pytest.raises(ValueError, match="not a registered flavor"):
        chains.ENGINES.register(chains.WorkflowEngine("make", "Makefile", _makefile, flavor="toy"))
    with pytest.raises(ValueError, match="already registered"):
        chains.ENGINES.register(chains.WorkflowEngine("argo", "w.yaml", _makefile))
