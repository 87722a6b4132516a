"""The conversion matrix in docs/ is generated from the option table and the real translator."""

from __future__ import annotations

import builtins
import tempfile

import pytest
from conftest import REPO

from migrate import matrix
from migrate.translators.slurm.options import BY_LONG, OPTIONS, PLUGIN_OPTIONS


@pytest.fixture(scope="module")
def rows() -> list[matrix.Row]:
    return matrix.rows()


def test_docs_matrix_is_current(rows: list[matrix.Row]) -> None:
    generated = matrix.render_markdown(rows)
    committed = (REPO / "docs" / "conversion-matrix.md").read_text(encoding="utf-8")
    assert committed == generated, "docs/conversion-matrix.md is stale: python -m migrate.matrix > docs/..."


def test_every_option_is_accounted_for_in_every_flavor(rows: list[matrix.Row]) -> None:
    gaps = [
        (row.option.long, flavor)
        for row in rows
        for flavor, status in zip(matrix.flavor_bodies(), row.statuses, strict=True)
        if status == matrix.GAP
    ]
    assert not gaps, f"options a flavor records nothing for: {gaps}"
    assert len(rows) == len(OPTIONS) + len(PLUGIN_OPTIONS)


def test_status_is_read_from_the_translation() -> None:
    assert matrix.status_of(BY_LONG["time"], "job") == "mapped"
    assert matrix.status_of(BY_LONG["mail-type"], "job") == "dropped"
    assert matrix.status_of(BY_LONG["signal"], "kueue") == "approximated"


def test_the_matrix_writes_no_files(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each option's job is read from text: the writers need nothing but the IR."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"the matrix touched the file system: {args}")

    monkeypatch.setattr(builtins, "open", refuse)
    monkeypatch.setattr(tempfile, "mkdtemp", refuse)
    assert matrix.status_of(BY_LONG["time"], "jobset") == "mapped"
    assert matrix.status_of(BY_LONG["exclusive"], "job") == "approximated"
