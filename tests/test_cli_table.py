"""The CLI's tables, written line by line, look as rich's table did when piped: the same bars,
padding and alignment, so that tools reading the piped output see no change."""

from __future__ import annotations

import io
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rich.cells import cell_len
from rich.console import Console
from rich.table import Table
from rich.text import Text

from migrate import cli
from migrate.scan import scanner
from migrate.scan.results import ScanOptions

COLUMNS = (("file", "left"), ("kind", "left"), ("nodes", "right"), ("note", "left"))


def _as_rich_wrote_it(
    columns: Sequence[tuple[str, str]], rows: Sequence[Sequence[str]], title: str | None, caption: str | None
) -> str:
    """The table the CLI printed before, through rich's layout (piped: nothing cut, never wrapped)."""
    out = io.StringIO()
    console = Console(file=out, highlight=False, soft_wrap=True, width=cli.PIPED_WIDTH)
    widths = [max([cell_len(n)] + [cell_len(r[i]) for r in rows]) for i, (n, _) in enumerate(columns)]
    table = Table(
        show_edge=False,
        pad_edge=False,
        title=title,
        title_justify="left",
        caption=caption,
        caption_justify="left",
    )
    for (name, justify), width in zip(columns, widths, strict=True):
        table.add_column(name, justify=justify, width=width, no_wrap=True, overflow="ellipsis")  # type: ignore[arg-type]
    for row in rows:
        table.add_row(*(Text(cell) for cell in row))
    console.print(table)
    return out.getvalue()


@pytest.fixture
def piped() -> Iterator[None]:
    cli._out.cache_clear()  # the console is made for the stdout of the moment
    yield
    cli._out.cache_clear()


CASES = {
    "plain": [["a/b/train.sbatch", "sbatch", "2", "srun"], ["", "sbatch", "12", ""]],
    "wide characters": [["作业/训练.sbatch", "sbatch", "1", "日本語"], ["x", "Job", "", "é"]],
    "no rows": [],
    "empty cells": [["", "", "", ""]],
    "control characters": [["a\rb\x07.sh", "sbatch", "1", "x\ty\x1b[31m"], ["tab\tin\tpath", "", "", ""]],
    "long cells": [["d/" * 80 + "f.yaml", "Job", "1234567", "x" * 300]],
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize(("title", "caption"), [(None, "paths relative to /site"), ("phases", None)])
def test_piped_tables_are_the_lines_rich_wrote(
    piped: None, capsys: pytest.CaptureFixture[str], name: str, title: str | None, caption: str | None
) -> None:
    rows = CASES[name]
    cli._print_table(COLUMNS, rows, fit=0, title=title, caption=caption)
    # rich measured a tab as one cell and then cut the cell it had widened: compared on what is printed
    printable = [[cli._printable(cell) for cell in row] for row in rows]
    assert capsys.readouterr().out == _as_rich_wrote_it(COLUMNS, printable, title, caption)


def test_control_codes_are_dropped_and_tabs_widened(piped: None, capsys: pytest.CaptureFixture[str]) -> None:
    cli._print_table(COLUMNS, [["a\rb.sh", "x\ty", "1", "bell\x07"]], caption=None)
    row = capsys.readouterr().out.splitlines()[2]
    assert row.split(" │ ") == ["ab.sh", "x       y", "    1", "bell"]


def test_cells_cut_at_their_end_keep_the_column_width() -> None:
    assert cli._cut_end("launcher-name", 6) == "launc…"
    assert cell_len(cli._cut_end("日本語のテキスト", 7)) <= 7
    assert cli._crop("abcdef", 4) == "abcd" and cli._crop("abc", 4) == "abc"


def _site(root: Path, count: int) -> list[str]:
    for i in range(count):
        # the unknown option on line 100: rich once printed "x.sbatch:100:" as an emoji
        text = (
            "#!/bin/bash\n"
            + "# notes\n" * 98
            + f"#SBATCH --frobnicate={i}\n#SBATCH --nodes=2\nsrun hostname\n"
        )
        (root / f"job{i}.sbatch").write_text(text)
    return [str(root)]


def test_a_large_scan_gives_its_counts_before_its_rows(
    piped: None, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    paths = _site(tmp_path, 3)
    views = scanner.overview(paths, ScanOptions(jobs=1))
    monkeypatch.setattr(cli, "SUMMARY_FIRST_FILES", 3)
    assert cli._print_scan_table(views, paths, True, False) == 3  # the errors, for --strict
    lines = capsys.readouterr().out.splitlines()
    assert lines[:4] == ["3 files: slurm 3", "3 jobs: sbatch 3", "3 diagnostics: SLURM-UNKNOWN-OPTION 3", ""]
    assert lines[4].startswith("file ") and "┃" in lines[4]
    assert f"{tmp_path / 'job0.sbatch'}:100: error: SLURM-UNKNOWN-OPTION: " in "\n".join(lines)
    monkeypatch.setattr(cli, "SUMMARY_FIRST_FILES", 4)
    cli._print_scan_table(views, paths, True, False)
    assert capsys.readouterr().out.startswith("file ")  # a small scan: the table first, as before


@given(st.lists(st.text(), min_size=1, max_size=6))
def test_lines_are_made_printable_as_each_line_would_be(lines: list[str]) -> None:
    """The diagnostics are written as one text of lines: the same as each line made printable."""
    lines = [line.replace("\n", "") for line in lines]
    assert cli._printable("\n".join(lines)).split("\n") == [cli._printable(line) for line in lines]
