"""The IR's closed sets hold vocabulary members, not bare strings, however a job was read.

A member compares equal to its spelling, so a field that slipped back to a plain
string would go unnoticed by every other test. These walk each job of the corpus
as the readers make it, as the scan cache serves it and as the IR loader reads
its JSON, and check the type of every field the IR types with a vocabulary.

That the members are written exactly as the strings were is what the goldens
check, byte for byte: the scan JSON of every corpus file (corpus/sample-site
included) in tests/test_golden_scan.py::test_scan_golden, the sample site's
plan JSON in tests/test_coexistence.py::test_sample_site_golden and the
translations in tests/test_translate.py.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import re
import types
import typing
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from conftest import CORPUS, GOLDEN

from migrate import ir
from migrate.graph import builder
from migrate.graph import model as gm
from migrate.scan import scanner
from migrate.scan.results import ScanOptions
from migrate.serialize import job_from_dict, job_to_dict
from migrate.vocab import (
    ContainerRuntime,
    DependencyType,
    EnvOrigin,
    GresScope,
    MountKind,
    SecretKind,
    StorageVia,
)

# The vocabularies the corpus must show at least once, so that the walk is known to reach them.
SEEN_IN_CORPUS = (ContainerRuntime, DependencyType, EnvOrigin, GresScope, MountKind, SecretKind, StorageVia)


def _enum_of(hint: Any) -> type[enum.Enum] | None:
    """The vocabulary a field's type names (``X`` or ``X | None``), or None."""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        found = [a for a in typing.get_args(hint) if isinstance(a, type) and issubclass(a, enum.Enum)]
        return found[0] if found else None
    return hint if isinstance(hint, type) and issubclass(hint, enum.Enum) else None


def _check(value: Any, seen: Counter[type], where: str) -> None:
    """Every vocabulary-typed field under ``value`` holds a member of its vocabulary."""
    if isinstance(value, tuple):
        for item in value:
            _check(item, seen, where)
        return
    if not dataclasses.is_dataclass(value) or isinstance(value, type):
        return
    hints = typing.get_type_hints(type(value), vars(ir))
    for f in dataclasses.fields(value):
        field_value = getattr(value, f.name)
        vocabulary = _enum_of(hints[f.name])
        if vocabulary is not None and field_value is not None:
            assert type(field_value) is vocabulary, (
                f"{where}: {type(value).__name__}.{f.name} is {field_value!r}, not a {vocabulary.__name__}"
            )
            seen[vocabulary] += 1
        _check(field_value, seen, where)


def _check_jobs(jobs: list[ir.Job]) -> Counter[type]:
    seen: Counter[type] = Counter()
    for job in jobs:
        _check(job, seen, job.id)
    missing = [v.__name__ for v in SEEN_IN_CORPUS if not seen[v]]
    assert not missing, f"no corpus job has a field of {missing}"
    return seen


@pytest.fixture(scope="module")
def corpus_jobs() -> list[ir.Job]:
    result = scanner.scan([str(CORPUS)], ScanOptions(jobs=1))
    return [job for f in result.files for job in f.jobs]


def test_a_scan_gives_members(corpus_jobs: list[ir.Job]) -> None:
    _check_jobs(corpus_jobs)


def test_the_ir_loader_gives_members(corpus_jobs: list[ir.Job]) -> None:
    loaded = [job_from_dict(json.loads(json.dumps(job_to_dict(job)))) for job in corpus_jobs]
    assert loaded == corpus_jobs
    _check_jobs(loaded)


def test_the_scan_cache_gives_members(tmp_path: Path) -> None:
    options = ScanOptions(jobs=1, cache=str(tmp_path / "cache"))
    scanner.scan([str(CORPUS)], options)  # fills the cache
    served = scanner.scan([str(CORPUS)], options)
    _check_jobs([job for f in served.files for job in f.jobs])


def test_the_scan_golden_reads_back_into_members() -> None:
    """A golden scan document (JSON written from members) read by the IR loader."""
    golden = GOLDEN / "scan" / "sample-site" / "training"
    jobs = [
        job_from_dict(data)
        for path in sorted(golden.rglob("*.json"))
        for data in json.loads(path.read_text(encoding="utf-8")).get("jobs", [])
    ]
    assert jobs
    seen: Counter[type] = Counter()
    for job in jobs:
        _check(job, seen, job.id)
    assert seen[MountKind] and seen[StorageVia] and seen[EnvOrigin]


def test_graph_attributes_are_named_and_plain(corpus_jobs: list[ir.Job]) -> None:
    """Every key is one of ``gm.Attr``; every value a type GraphML writes (never a vocabulary member)."""
    graph = builder.build_graph(corpus_jobs)
    keys = {v for k, v in vars(gm.Attr).items() if k.isupper()}
    items = [*(d for _, d in graph.nodes(data=True)), *(d for _, _, d in graph.edges(data=True))]
    assert items
    for data in items:
        assert set(data) <= keys, f"attribute keys not in graph.model.Attr: {set(data) - keys}"
        plain = {k: type(v) for k, v in data.items() if type(v) not in (str, int, float, bool)}
        assert not plain, f"values GraphML cannot write: {plain}"


# A closed set compared by its spelling: `x.kind == "mpi"`, `origin != "body"`, `kind in ("a", "b")`,
# `"head" == seg.kind`, `obj.get("kind") != "Service"`, `doc["kind"] == "List"`. The spellings belong
# to the vocabulary's own definition.
_FIELDS = r"(?:kind|origin|via|type|shape|role)"
_LITERAL_COMPARISON = re.compile(
    rf"\b{_FIELDS}\s*(?:==|!=)\s*[rbf]?[\"']"
    rf"|(?<!for )\b{_FIELDS}\s+(?:not\s+)?in\s*[(\[{{]\s*[rbf]?[\"']"
    rf"|[\"']\s*(?:==|!=)\s*(?:\w+\.)*{_FIELDS}\b"
    rf"|[\[(][\"']{_FIELDS}[\"'][\])]\s*(?:==|!=|(?:not\s+)?in)\s*[(\[{{]?\s*[rbf]?[\"']"
)
ROOT = Path(__file__).resolve().parent.parent
CODE = ("migrate", "translators", "reports")
# The modules that define vocabularies: their spellings are written there once.
DEFINE_VOCABULARIES = frozenset(("migrate/vocab.py",))


def literal_comparisons(root: Path) -> list[str]:
    """``file:line: text`` of every comparison of a vocabulary field with a string literal."""
    found = []
    for folder in CODE:
        for path in sorted((root / folder).rglob("*.py")):
            name = path.relative_to(root).as_posix()
            if name in DEFINE_VOCABULARIES:
                continue
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                code = line.split("#", 1)[0]
                if _LITERAL_COMPARISON.search(code):
                    found.append(f"{name}:{number}: {line.strip()}")
    return found


def test_closed_sets_are_compared_by_member() -> None:
    found = literal_comparisons(ROOT)
    assert not found, "compare a vocabulary member, not its spelling:\n" + "\n".join(found)


@pytest.mark.parametrize(
    "line",
    [
        'if step.kind == "mpi":',
        "if origin != 'body':",
        'if part.kind in ("word", "assignment"):',
        'if kind not in {"a"}:',
        'if "head" == seg.kind:',
        'if dep.type == "singleton":',
        'if obj.get("kind") != "Service":',
        'if doc["kind"] in ("ConfigMap", "Secret"):',
    ],
)
def test_the_check_sees_a_literal_comparison(tmp_path: Path, line: str) -> None:
    module = tmp_path / "translators" / "sample.py"
    module.parent.mkdir()
    module.write_text(
        f"def f(step, origin, part, kind, seg, dep):\n    {line}\n        pass\n", encoding="utf-8"
    )
    assert literal_comparisons(tmp_path) == [f"translators/sample.py:2: {line}"]


def test_the_check_passes_a_member_comparison(tmp_path: Path) -> None:
    module = tmp_path / "migrate" / "sample.py"
    module.parent.mkdir()
    module.write_text(
        "def f(step, kind):\n    if step.kind is StepKind.MPI or kind == StepKind.TASKS:\n        pass\n"
        '    for kind in ("containers", "initContainers"):  # a loop over keys, not a comparison\n'
        "        pass\n",
        encoding="utf-8",
    )
    assert literal_comparisons(tmp_path) == []
