"""Readers and writers are found through the registry: a format added there is scanned and written
like the built-in ones, with no other change to the scan or to translation."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest

from migrate import ir
from migrate.diagnostics import Collector
from migrate.fidelity import Translation
from migrate.scan import files, scanner
from migrate.scan.results import ScanOptions
from migrate.translate import translate_jobs, writer_for
from migrate.translators import registry
from migrate.translators.interfaces import ReadContext
from migrate.vocab import Format, JobKind

TOY = "toy"  # a made-up format: a plain string where a real one has its member in vocab.Format
PREFIX = "#TOYJOB "


class ToyReader:
    """One job per file: ``#TOYJOB name=NAME``."""

    def sniff(self, text: str) -> bool:
        return text.startswith(PREFIX)

    def read(self, text: str, path: str, diags: Collector, context: ReadContext) -> list[ir.Job]:
        fields = dict(word.split("=", 1) for word in text.removeprefix(PREFIX).split() if "=" in word)
        name = fields.get("name", "toy")
        return [ir.Job(f"{path}#{name}", ir.SourceRef(path, TOY, 1), JobKind.SBATCH, name=name)]


def _write_toy_job(
    job: ir.Job, config: object, choice: str, *, name: str | None = None, **_: str
) -> Translation:
    line = {"job.toy": f"{PREFIX}name={job.name}\n"}
    source = job.source
    return Translation(job.id, source.path, source.line, TOY, "line", "the only one", name or "job", line)


def toy_writer() -> SimpleNamespace:
    """Writes a job back as its one line; has nothing to share, index or chain."""
    return SimpleNamespace(
        NAME_MAX=40,
        RESERVED=frozenset(),
        translate_job=_write_toy_job,
        translate_wrapper=lambda job, name: Translation(job.id, job.source.path, 1, TOY, "", "", name),
        render_shared=lambda translations, config: {},
        render_index=lambda paths: {},
        render_chain=lambda translations, edges, folders, workflow: {},
        chain_file=lambda workflow: "submit.toy",
        chain_flavor=lambda workflow: None,
    )


@pytest.fixture
def toy_format() -> Iterator[None]:
    """The toy reader and writer registered for one test; the registries as they were after it."""
    readers, writers = list(registry.READERS), dict(registry.WRITERS)
    registry.register_reader(registry.ReaderEntry(TOY, ToyReader))
    registry.register_writer(TOY, toy_writer)
    try:
        yield
    finally:
        registry.READERS[:] = readers
        registry.WRITERS.clear()
        registry.WRITERS.update(writers)


def _toy_folder(root: Path) -> Path:
    (root / "train.job").write_text(f"{PREFIX}name=train\n", encoding="utf-8")
    (root / "run.sbatch").write_text("#!/bin/bash\n#SBATCH -N 1\nsrun hostname\n", encoding="utf-8")
    return root


def test_a_registered_reader_is_asked_by_the_scan(tmp_path: Path, toy_format: None) -> None:
    result = scanner.scan([str(_toy_folder(tmp_path))], ScanOptions(cache=None))
    by_format = {job.source.format: job for job in result.jobs}
    assert set(by_format) == {TOY, Format.SLURM}
    assert by_format[TOY].name == "train" and by_format[TOY].source.path.endswith("train.job")


def test_a_registered_writer_is_used_by_translation(tmp_path: Path, toy_format: None) -> None:
    jobs = [j for j in scanner.scan([str(_toy_folder(tmp_path))], ScanOptions(cache=None)).jobs if j.name]
    toy_jobs = [j for j in jobs if j.source.format == TOY]
    result = translate_jobs(toy_jobs, to=TOY)
    assert result.tree.files["train/job.toy"] == f"{PREFIX}name=train\n"
    assert json.loads(result.tree.files["translation.json"])["target"] == TOY


def test_without_the_toy_reader_its_file_is_no_job(tmp_path: Path) -> None:
    """The fixture put the registries back: the file is only a job-like name without a job."""
    result = scanner.scan([str(_toy_folder(tmp_path))], ScanOptions(cache=None))
    assert {job.source.format for job in result.jobs} == {Format.SLURM}
    (toy,) = [f for f in result.files if f.path.endswith("train.job")]
    assert [d.code for d in toy.diagnostics] == ["FILE-NOT-A-JOB"]


def test_an_unknown_target_is_refused_with_the_known_ones() -> None:
    with pytest.raises(ValueError, match=r"^unknown target 'toy'; expected one of kubernetes, slurm$"):
        writer_for(TOY)


def test_every_reader_sniffs_a_yes_or_no() -> None:
    texts = ("", "#!/bin/bash\n#SBATCH -N 1\n", "apiVersion: batch/v1\nkind: Job\n", f"{PREFIX}name=x\n")
    for entry in registry.READERS:
        reader = entry.load()
        assert all(type(reader.sniff(text)) is bool for text in texts), entry


def test_a_reader_beside_another_never_decides_a_format() -> None:
    """The Argo reader reads the manifests the Kubernetes reader took; a script that only writes a
    Workflow to a file (no kubectl) is no job for either."""
    workflow = "apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nmetadata: {name: w}\n"
    assert files.sniff(workflow) == Format.KUBERNETES
    script = f"#!/bin/bash\ncat > wf.yaml <<EOF\n{workflow}EOF\n"
    assert registry.READERS[-1].load().sniff(script) and files.sniff(script) is None


_PROBE = """
import sys
from migrate.scan import scanner
from migrate.scan.results import ScanOptions
results = list(scanner.iter_scan([sys.argv[1]], ScanOptions(cache=sys.argv[2])))
assert len(results) == 2, results
print(sorted(m for m in sys.modules if m.startswith("migrate.translators.")))
"""


def test_a_scan_the_cache_answers_imports_no_reader(tmp_path: Path) -> None:
    """The registry names the readers; only reading a file imports them."""
    (tmp_path / "jobs").mkdir()
    command = [sys.executable, "-c", _PROBE, str(_toy_folder(tmp_path / "jobs")), str(tmp_path / "cache")]
    cold = subprocess.run(command, capture_output=True, text=True, timeout=120)
    warm = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert cold.returncode == 0 and warm.returncode == 0, cold.stderr + warm.stderr
    assert "migrate.translators.slurm.reader" in cold.stdout
    assert warm.stdout.strip() == "['migrate.translators.interfaces', 'migrate.translators.registry']"
