"""A flavor added in one declaration is a --flavor choice everywhere: choose, the writer, the CLI, the
matrix; the built-in flavors are declared the same way."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from migrate import cli, ir, matrix
from migrate.diagnostics import Collector
from migrate.translate import translate_jobs
from migrate.translators.kubernetes import batchjob, flavor_registry, kinds, validate
from migrate.translators.kubernetes import reader as k8s_reader
from migrate.translators.kubernetes.flavor_registry import Flavor, Output
from migrate.translators.slurm import reader as slurm_reader
from migrate.translators.slurm.options import BY_LONG
from migrate.vocab import Format, JobKind


def _one_node(job: ir.Job) -> str | None:
    return None if job.total_nodes() <= 1 else "a toy job runs on one node"


# The whole toy flavor: a plain batch/v1 Job under a file name of its own, for single-node jobs.
TOY = Flavor(
    "toy",
    Output("toy-job.yaml", "batch/v1", "Job", batchjob.build),
    _one_node,
    matrix_body="srun python train.py",
)

SCRIPT = "#!/bin/bash\n#SBATCH --job-name=toy-train\n#SBATCH --time=10:00\nsrun python train.py\n"
WIDE = "#!/bin/bash\n#SBATCH --job-name=wide\n#SBATCH --nodes=4\nsrun python train.py\n"


@pytest.fixture
def toy() -> Iterator[Flavor]:
    with flavor_registry.registered(TOY):
        yield TOY


def _jobs(text: str, name: str = "train.sbatch") -> list[ir.Job]:
    return slurm_reader.read(text, name, Collector())


def test_the_toy_flavor_is_chosen_written_and_valid(toy: Flavor, tmp_path: Path) -> None:
    result = translate_jobs(_jobs(SCRIPT), to=Format.KUBERNETES, flavor="toy")
    (t,) = result.translations
    assert (t.flavor, t.flavor_reason, t.fallback) == ("toy", "--flavor toy", None)
    assert list(t.files) == ["toy-job.yaml"]
    assert t.style == "emulate"  # the native reading lays steps out only in the kinds it knows
    assert f"{t.name}/toy-job.yaml" in result.tree.files
    docs = list(yaml.safe_load_all(t.files["toy-job.yaml"]))
    assert [(d["apiVersion"], d["kind"]) for d in docs][-1] == ("batch/v1", "Job")
    for rel, text in result.tree.files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    report = validate.validate_tree(tmp_path)
    assert report.ok, [p.render() for p in report.problems]
    assert [Path(f.path).name for f in report.files if f.skipped] == ["kustomization.yaml"]
    assert report.kinds.get("batch/v1 Job") == 1
    (back,) = k8s_reader.read(t.files["toy-job.yaml"], "toy-job.yaml", Collector())
    assert (back.kind, back.total_nodes()) == (JobKind.JOB, 1)


def test_what_the_toy_flavor_cannot_take_falls_back_with_its_reason(toy: Flavor) -> None:
    (t,) = translate_jobs(_jobs(WIDE), to=Format.KUBERNETES, flavor="toy").translations
    assert t.fallback == "a toy job runs on one node"
    assert t.flavor == "jobset"
    assert "jobset.yaml" in t.files


def test_the_cli_takes_the_toy_flavor(toy: Flavor, tmp_path: Path) -> None:
    script = tmp_path / "train.sbatch"
    script.write_text(SCRIPT, encoding="utf-8")
    out = tmp_path / "out"
    args = ["translate", str(script), "--to", "kubernetes", "--flavor", "toy", "--out", str(out), "--strict"]
    done = CliRunner().invoke(cli.app, args)
    assert done.exit_code == 0, done.output
    assert [p.name for p in out.glob("*/*.yaml")] == ["toy-job.yaml"]


def test_the_matrix_has_a_toy_column(toy: Flavor) -> None:
    assert list(matrix.flavor_bodies())[-1] == "toy"
    (row,) = matrix.rows([BY_LONG["time"]])
    assert len(row.statuses) == len(matrix.flavor_bodies())
    assert row.statuses[-1] == matrix.status_of(BY_LONG["time"], "job") != matrix.GAP
    (header,) = [line for line in matrix.render_markdown([row]).splitlines() if line.startswith("| option |")]
    assert header.split(" | ")[-2] == "toy"


def test_unregistered_the_toy_flavor_is_unknown_everywhere() -> None:
    assert "toy" not in flavor_registry.names()
    with pytest.raises(ValueError, match="unknown flavor 'toy'"):
        translate_jobs(_jobs(SCRIPT), to=Format.KUBERNETES, flavor="toy")
    assert "toy" not in matrix.flavor_bodies()
    with flavor_registry.registered(TOY):
        assert flavor_registry.names()[-1] == "toy"
    assert flavor_registry.names() == flavor_registry.FLAVORS


@pytest.mark.parametrize(
    ("flavor", "problem"),
    [
        (Flavor("job", Output("other.yaml", "batch/v1", "Job", batchjob.build)), "already registered"),
        (
            Flavor("toy", Output("job.yaml", "batch/v1", "Job", batchjob.build)),
            "another flavor writes job.yaml",
        ),
        (Flavor("toy", Output("toy.yaml", "example.com/v1", "Toy", batchjob.build)), "does not know"),
        (Flavor("toy", Output("kustomization.yaml", "batch/v1", "Job", batchjob.build)), "file name"),
        (Flavor("toy"), "either writes an object"),
    ],
)
def test_a_flavor_that_would_not_read_back_or_would_clash_is_refused(flavor: Flavor, problem: str) -> None:
    with pytest.raises(ValueError, match=problem), flavor_registry.registered(flavor):
        pass
    assert flavor_registry.names() == flavor_registry.FLAVORS


def test_every_built_in_flavor_is_declared_once_and_named_in_the_cli_help() -> None:
    written = [f.output for f in flavor_registry.flavors() if f.output is not None]
    assert len({o.file_name for o in written}) == len(written)
    read_back = [kinds.workload_kind(kinds.split_api_version(o.api_version)[0], o.kind) for o in written]
    assert None not in read_back
    help_text = cli.FlavorOption.__metadata__[0].help
    assert all(name in help_text for name in flavor_registry.FLAVORS)
