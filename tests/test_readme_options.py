"""The README's option table of every command lists exactly the options the command has."""

from __future__ import annotations

import re
from typing import Any

import pytest
import typer.main
from conftest import REPO

from migrate.cli import app

README = (REPO / "README.md").read_text(encoding="utf-8")
SECTION = re.compile(r"^### `migrate (\w+)[^\n]*\n(.*?)(?=^##)", re.M | re.S)
OPTION = re.compile(r"(?<![\w-])(--?[A-Za-z][\w-]*)")


def _commands() -> dict[str, Any]:
    return dict(typer.main.get_command(app).commands)  # type: ignore[attr-defined]


def _documented(command: str) -> set[str]:
    sections = {m.group(1): m.group(2) for m in SECTION.finditer(README + "\n##")}
    assert command in sections, f"README has no section for migrate {command}"
    cells = [line.split("|")[1] for line in sections[command].splitlines() if line.startswith("| `")]
    assert cells, f"README has no option table for migrate {command}"
    return {name for cell in cells for name in OPTION.findall(cell)}


@pytest.mark.parametrize("command", sorted(_commands()))
def test_readme_lists_every_option(command: str) -> None:
    options = {
        name
        for param in _commands()[command].params
        if param.param_type_name == "option"
        for name in (*param.opts, *param.secondary_opts)
        if name != "--help"
    }
    assert _documented(command) == options
