"""ir.replace makes what dataclasses.replace makes, for every record the readers build."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import pytest
from conftest import CORPUS

from migrate import ir
from migrate.ir import replace
from migrate.scan import scanner
from migrate.scan.results import ScanOptions
from migrate.translators.shell.facts import BodyFacts
from migrate.vocab import Format, JobKind


def _records(value: Any) -> Iterator[Any]:
    """Every dataclass instance inside ``value``, ``value`` first."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        yield value
        for f in dataclasses.fields(value):
            yield from _records(getattr(value, f.name))
    elif isinstance(value, tuple | list):
        for item in value:
            yield from _records(item)


@pytest.fixture(scope="module")
def corpus_records() -> list[Any]:
    jobs = scanner.scan([str(CORPUS / "cases")], ScanOptions(cache=None)).jobs
    return list(_records(jobs))


def test_every_corpus_record_is_copied_as_dataclasses_copies_it(corpus_records: list[Any]) -> None:
    classes = {type(r) for r in corpus_records}
    assert ir.Job in classes and ir.Resources in classes and len(corpus_records) > 1000
    for record in corpus_records:
        first = dataclasses.fields(record)[0].name
        same = replace(record)
        assert same == record and same is not record and type(same) is type(record)
        changed = replace(record, **{first: getattr(record, first)})
        assert changed == dataclasses.replace(record, **{first: getattr(record, first)})


def test_the_changed_fields_change_and_the_original_stays() -> None:
    job = ir.Job(id="a", name="a", kind=JobKind.SBATCH, source=ir.SourceRef("f", Format.SLURM))
    other = replace(job, name="b", raw=(ir.RawItem("k", "v", 3),))
    assert (other.name, other.raw, other.id) == ("b", (ir.RawItem("k", "v", 3),), "a")
    assert job.name == "a" and job.raw == ()
    assert other == dataclasses.replace(job, name="b", raw=(ir.RawItem("k", "v", 3),))
    assert hash(replace(job)) == hash(job)


def test_a_frozen_record_with_a_dict_is_copied_and_stays_frozen() -> None:
    facts = BodyFacts(modules=("cuda",))
    copy = replace(facts, slurm_vars=("SLURM_JOB_ID",))
    assert copy == dataclasses.replace(facts, slurm_vars=("SLURM_JOB_ID",)) and facts.slurm_vars == ()
    with pytest.raises(dataclasses.FrozenInstanceError):
        copy.modules = ()  # type: ignore[misc]


def test_an_unknown_field_is_refused_as_dataclasses_refuses_it() -> None:
    with pytest.raises(TypeError, match="nosuch"):
        replace(ir.KeyValue("a", "b"), nosuch=1)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="nosuch"):
        replace(BodyFacts(), nosuch=1)  # type: ignore[call-arg]


def test_a_record_that_does_more_than_hold_its_fields_goes_through_its_init() -> None:
    seen: list[int] = []

    @dataclasses.dataclass(frozen=True, slots=True)
    class Checked:
        size: int

        def __post_init__(self) -> None:
            seen.append(self.size)

    assert replace(Checked(1), size=2) == Checked(2)
    assert seen == [1, 2, 2]


def test_a_record_with_a_field_of_its_base_class_is_copied_whole() -> None:
    @dataclasses.dataclass(frozen=True, slots=True)
    class Base:
        name: str

    @dataclasses.dataclass(frozen=True, slots=True)
    class Derived(Base):
        size: int = 0

    assert replace(Derived("a", 1), size=2) == Derived("a", 2)
    assert replace(Derived("a", 1), name="b") == Derived("b", 1)
