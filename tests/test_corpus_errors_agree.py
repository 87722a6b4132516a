"""Over the whole corpus, every error the scan reports is one the real engine would also give.

An sbatch script's error at a ``#SBATCH`` line is submitted alone (that line under ``#!/bin/bash``)
to the project's Slurm sandbox with ``sbatch --test-only``: the controller refuses it. An error of
the whole file (DOS line breaks, no ``#!`` line, a byte order mark) is submitted as the file with
its other directives taken out (so that no partition or GRES of another site decides): refused; and
the same text with the flaw mended: accepted, so that the flaw is what sbatch refuses.

A manifest's error is checked against a YAML loader that is not the project's (PyYAML's safe
loader refuses the text, or its node graph shows the alias expansion the project's loader guards
against) or against the strict Kubernetes schemas and the project's CRD and Argo rules
(``validate_documents`` finds a problem at the same line).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from conftest import CORPUS, REPO
from test_sbatch_agreement import _controller_accepts
from test_slurm_sandbox import sandbox  # noqa: F401  (the session fixture, reused)

from migrate.diagnostics import ERROR, Diagnostic
from migrate.scan.scanner import scan
from migrate.translators.kubernetes.validate import validate_documents

# Errors of the whole file, with how to mend the text: what sbatch refuses is then gone.
_FILE_FLAWS = {
    "SLURM-DOS-LINE-BREAKS": lambda text: text.replace("\r\n", "\n"),
    "SLURM-NO-SHEBANG": lambda text: _with_shebang(text.lstrip("\ufeff")),
}


def _with_shebang(text: str) -> str:
    return text if text.startswith("#!") else "#!/bin/bash\n" + text


def _corpus_errors() -> dict[tuple[str, str], list[Diagnostic]]:
    """(format, path relative to the repository) -> the file's error diagnostics, for every file with one."""
    found: dict[tuple[str, str], list[Diagnostic]] = {}
    for result in scan([str(CORPUS)]).files:
        errors = [d for d in result.diagnostics if d.severity == ERROR]
        if errors:
            found[(str(result.format), str(Path(result.path).resolve().relative_to(REPO)))] = errors
    return found


ERRORS = _corpus_errors()


def test_the_corpus_has_errors_of_both_kinds_to_check() -> None:
    formats = {fmt for fmt, _ in ERRORS}
    assert {"slurm", "kubernetes"} <= formats, sorted(ERRORS)


def _without_directives(text: str) -> str:
    """The script with its #SBATCH lines taken out and a command at its end (a script of directives
    only would otherwise be refused as empty), in the file's own line breaks."""
    kept = "".join(line for line in text.splitlines(keepends=True) if not line.lstrip().startswith("#SBATCH"))
    return kept + "hostname" + ("\r\n" if "\r\n" in text else "\n")


@pytest.mark.slurm
def test_every_error_an_sbatch_script_gets_is_a_refusal_of_the_controller(
    sandbox: dict[str, str],  # noqa: F811
    tmp_path: Path,
) -> None:
    disagreements: list[str] = []
    checked = 0
    for (fmt, path), errors in sorted(ERRORS.items()):
        if fmt != "slurm":
            continue
        text = (REPO / path).read_bytes().decode("utf-8", errors="replace")
        lines = text.splitlines()
        for diag in errors:
            checked += 1
            where = f"{path}:{diag.line} {diag.code}"
            if diag.code in _FILE_FLAWS:
                bare = _without_directives(text)
                flawed_accepted, said = _controller_accepts(bare, tmp_path, sandbox)
                mended_accepted, said_mended = _controller_accepts(
                    _FILE_FLAWS[diag.code](bare), tmp_path, sandbox
                )
                if flawed_accepted or not mended_accepted:
                    disagreements.append(f"{where}: as it is: {said}; mended: {said_mended}")
                continue
            line = lines[(diag.line or 1) - 1]
            assert line.lstrip().startswith("#SBATCH"), f"{where}: not at a directive: {line!r}"
            accepted, said = _controller_accepts(f"#!/bin/bash\n{line}\nsrun true\n", tmp_path, sandbox)
            if accepted:
                disagreements.append(f"{where}: sbatch accepts {line!r}: {said}")
    assert checked >= 10
    assert disagreements == []


def _expanded_size(node: yaml.Node, seen: dict[int, int]) -> int:
    """How many nodes a composed node stands for once every alias is expanded (each shared node counted
    once per use), counted on PyYAML's own node graph."""
    if id(node) in seen:
        return seen[id(node)]
    size = 1
    if isinstance(node, yaml.SequenceNode):
        size += sum(_expanded_size(item, seen) for item in node.value)
    elif isinstance(node, yaml.MappingNode):
        size += sum(_expanded_size(k, seen) + _expanded_size(v, seen) for k, v in node.value)
    seen[id(node)] = size
    return size


def _refused_without_the_project_loader(code: str, text: str, path: str) -> bool:
    """PyYAML's safe loader refuses the text, or the schemas refuse the objects it loads; for the
    project loader's alias guard, the aliases do expand past 100,000 nodes (the API server's decoder
    refuses such "excessive aliasing" too)."""
    try:
        if code == "K8S-YAML-ALIAS-BOMB":
            return any(_expanded_size(node, {}) > 100_000 for node in yaml.compose_all(text) if node)
        documents = list(yaml.safe_load_all(text))
    except (yaml.YAMLError, RecursionError):
        return True
    return bool(validate_documents(documents, path))


def test_every_error_a_manifest_gets_is_a_refusal_of_another_loader_or_the_schemas() -> None:
    disagreements: list[str] = []
    checked = 0
    for (fmt, path), errors in sorted(ERRORS.items()):
        if fmt == "slurm":
            continue
        text = (REPO / path).read_text(encoding="utf-8")
        problems = [p for p in validate_documents(text, path) if p.rule != "yaml"]
        for diag in errors:
            checked += 1
            if diag.code.startswith("K8S-YAML-"):
                if not _refused_without_the_project_loader(diag.code, text, path):
                    disagreements.append(f"{path}:{diag.line} {diag.code}: PyYAML and the schemas accept it")
            elif diag.line not in {p.line for p in problems}:
                found = sorted((p.line or 0, p.message) for p in problems)
                disagreements.append(f"{path}:{diag.line} {diag.code}: {diag.message}; the schemas: {found}")
    assert checked >= 10
    assert disagreements == []
