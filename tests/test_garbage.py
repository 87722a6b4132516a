"""Stages that make objects by the hundred thousand collect cyclic garbage less often, and only
while they run."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from types import SimpleNamespace

import pytest

from migrate import ir
from migrate.fidelity import Translation
from migrate.scan import pool
from migrate.scan.garbage import FULL_COLLECTION_EVERY, YOUNG_COLLECTION_AFTER, collecting_less
from migrate.translate import translate_jobs
from migrate.translators import registry
from migrate.vocab import JobKind

TARGET = "thresholds"


def test_the_thresholds_are_raised_inside_and_restored_after() -> None:
    before = gc.get_threshold()
    with collecting_less():
        young, _, full = gc.get_threshold()
        assert (young, full) == (YOUNG_COLLECTION_AFTER, FULL_COLLECTION_EVERY)
        assert gc.get_freeze_count() > 0  # what existed before is left out of collections
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


@pytest.fixture
def seen_thresholds() -> Iterator[list[tuple[int, int, int]]]:
    """A writer that records the collector's thresholds as each job is translated."""
    seen: list[tuple[int, int, int]] = []

    def translate_job(
        job: ir.Job, config: object, choice: str, *, name: str = "job", **_: str
    ) -> Translation:
        seen.append(gc.get_threshold())
        return Translation(job.id, job.source.path, 1, TARGET, "", "", name, {"job.txt": "x\n"})

    writer = SimpleNamespace(
        NAME_MAX=40,
        RESERVED=frozenset(),
        translate_job=translate_job,
        render_shared=lambda translations, config: {},
        render_index=lambda paths: {},
        render_chain=lambda translations, edges, folders, workflow: {},
        chain_file=lambda workflow: "submit.txt",
        chain_flavor=lambda workflow: None,
    )
    writers = dict(registry.WRITERS)
    registry.register_writer(TARGET, lambda: writer)
    try:
        yield seen
    finally:
        registry.WRITERS.clear()
        registry.WRITERS.update(writers)


def test_translation_collects_less_often_while_it_writes(seen_thresholds: list[tuple[int, int, int]]) -> None:
    jobs = [
        ir.Job(f"j{n}", ir.SourceRef(f"j{n}.sh", "slurm", 1), JobKind.SBATCH, name=f"j{n}") for n in range(3)
    ]
    before = gc.get_threshold()
    translate_jobs(jobs, to=TARGET)
    assert [(young, full) for young, _, full in seen_thresholds] == [
        (YOUNG_COLLECTION_AFTER, FULL_COLLECTION_EVERY)
    ] * 3
    assert gc.get_threshold() == before


def test_what_a_window_of_files_leaves_alive_is_frozen() -> None:
    """The caches' new entries are left out of the collections that come after the window."""
    with collecting_less():
        before = gc.get_freeze_count()
        alive = [[n] for n in range(1000)]  # as the caches' new entries would be
        pool._compute_all(
            [pool.Miss("run.sbatch", b"#!/bin/bash\n#SBATCH -N 1\nsrun hostname\n", True, None)]
        )
        assert gc.get_freeze_count() >= before + len(alive)
