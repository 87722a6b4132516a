"""The IR is the whole contract between readers and writers.

A writer gets everything it needs from the job it is given: it never opens the
file the job came from, so the same IR gives the same output wherever the file
is, or when it is gone. Neither writer imports the other format's reader.
"""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import pytest
from conftest import CORPUS
from test_layers import imports_of, modules

from migrate import ir
from migrate.scan import scanner
from migrate.scan.results import ScanOptions
from migrate.translate import translate_jobs, writer_for
from migrate.vocab import Format

# What each writer must not import: the reading side of the other format (its option table and
# the shared shell helpers are fine).
OTHER_READERS = {
    Format.KUBERNETES: ("migrate.translators.slurm.reader", "migrate.translators.slurm.directives"),
    Format.SLURM: (
        "migrate.translators.kubernetes.reader",
        "migrate.translators.kubernetes.manifest_",
        "migrate.yamlload",
    ),
}
# Calls that read a file.
FILE_CALLS = frozenset({"open", "read_text", "read_bytes", "getsize", "scandir", "listdir", "stat"})


def _scan(root: Path) -> list[ir.Job]:
    return scanner.scan([str(root)], ScanOptions(cache=None)).jobs


def _translate_both_ways(jobs: list[ir.Job]) -> dict[str, dict[str, str]]:
    return {to: translate_jobs(jobs, to=to).tree.files for to in (Format.KUBERNETES, Format.SLURM)}


def test_translations_do_not_need_the_source_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for top in ("cases", "sample-site", "adversarial"):
        shutil.copytree(CORPUS / top, tmp_path / "corpus" / top)
    monkeypatch.chdir(tmp_path)  # relative paths, as the CLI is used
    jobs = _scan(Path("corpus"))
    assert {j.source.format for j in jobs} == {"slurm", "kubernetes"} and len(jobs) > 100
    present = _translate_both_ways(jobs)
    shutil.rmtree(tmp_path / "corpus")
    absent = _translate_both_ways(jobs)
    for to in present:
        changed = sorted(
            p for p in present[to].keys() | absent[to].keys() if present[to].get(p) != absent[to].get(p)
        )
        assert not changed, f"to {to}: outputs that change when the source files are gone: {changed[:10]}"


def _module_of(target: str) -> str:
    return str(writer_for(target).__name__)


def _reached_by(writer: str) -> set[str]:
    known = modules()
    seen: set[str] = set()
    todo = [writer]
    while todo:
        module = todo.pop()
        if module in seen:
            continue
        seen.add(module)
        todo.extend(imports_of(module, known[module], known))
    return seen


@pytest.mark.parametrize("to", [Format.KUBERNETES, Format.SLURM])
def test_no_writer_imports_the_other_formats_reader(to: str) -> None:
    wrong = sorted(m for m in _reached_by(_module_of(to)) if m.startswith(OTHER_READERS[to]))
    assert not wrong, f"the {to} writer reaches {wrong}"


@pytest.mark.parametrize("to", [Format.KUBERNETES, Format.SLURM])
def test_no_writer_reads_a_file(to: str) -> None:
    known = modules()
    calls = []
    for module in sorted(_reached_by(_module_of(to))):
        if module.startswith("migrate.site"):
            continue  # the site configuration: loaded by the caller, imported for its types
        tree = ast.parse(known[module].read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                name = (
                    node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
                )
                if name in FILE_CALLS:
                    calls.append(f"{module}:{node.lineno} {name}()")
    assert not calls, f"the {to} writer reads files: {calls}"
