"""Files that are not manifests or not jobs raise nothing; manifests in kubectl here-documents are read."""

from __future__ import annotations

from pathlib import Path

from conftest import CORPUS

from migrate.scan import files, scanner
from migrate.translators.kubernetes import embedded
from migrate.vocab import Format

NOT_JOBS = CORPUS / "cases/notjobs"


def _scan(path: Path) -> list[str]:
    return [d.code for d in scanner.scan([str(path)]).diagnostics]


def test_dockerfile_makefile_and_docs_with_yaml_lines_are_not_manifests() -> None:
    for name in ("Dockerfile", "Makefile", "README.md"):
        text = (NOT_JOBS / name).read_text()
        assert "apiVersion:" in text and "kind:" in text  # they do look like manifests
        assert files.sniff(text) is None, name
        assert _scan(NOT_JOBS / name) == [], name


def test_other_language_tells_a_manifest_from_its_lookalikes() -> None:
    manifest = "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: a\n"
    assert embedded.other_language(manifest) is None
    assert embedded.other_language("FROM alpine\n" + manifest) == "a Dockerfile"
    assert embedded.other_language("all:\n\techo hi\n" + manifest) == "a Makefile"
    assert (
        embedded.other_language("Run:\n\n```yaml\n" + manifest + "```\n") == "a document with code snippets"
    )


def test_heredoc_manifests_keep_the_script_lines() -> None:
    path = CORPUS / "cases/kubernetes/deploy_eval.sh"
    result = scanner.scan([str(path)])
    (found,) = result.files
    assert found.format == Format.KUBERNETES
    (job,) = found.jobs
    lines = path.read_text().splitlines()
    assert lines[job.source.line - 1] == "apiVersion: batch/v1"
    assert job.total_gpus() == 2
    # the tab-stripped <<- document is read too, as the Job's context
    assert any(d.code == "K8S-IGNORED-KIND" and d.line == 31 for d in found.diagnostics)
    assert not [d for d in found.diagnostics if d.severity == "error"]


def test_heredoc_forms() -> None:
    script = "#!/bin/sh\nkubectl apply -f - <<'EOF'\napiVersion: v1\nkind: Pod\nEOF\necho done\n"
    assert embedded.heredoc_manifests(script) == "\n---\napiVersion: v1\nkind: Pod\n\n\n"
    not_fed = "#!/bin/sh\ncat <<EOF > job.yaml\napiVersion: v1\nkind: Pod\nEOF\n"
    assert embedded.heredoc_manifests(not_fed) is None
    assert files.sniff(not_fed) is None


def test_python_program_quoting_sbatch_lines_in_a_docstring_is_not_a_job() -> None:
    text = (NOT_JOBS / "launch_sweep.py").read_text()
    assert "#SBATCH --gpus=1" in text
    assert files.sniff(text) is None
    assert _scan(NOT_JOBS / "launch_sweep.py") == []


def test_python_job_script_is_a_job_whose_body_is_not_read_as_bash() -> None:
    path = CORPUS / "cases/slurm/preprocess_python.sbatch"
    result = scanner.scan([str(path)])
    assert [d.code for d in result.diagnostics] == ["SLURM-BODY-NOT-SHELL"]
    (job,) = result.jobs
    assert job.array is not None and job.array.count == 16
    assert job.components[0].resources.cpus_per_task == 32
    assert job.script is not None and job.script.shell == "python3" and job.script.statements == 0
    assert "from multiprocessing import Pool" in job.script.body
