"""The MIGRATE_* variables have one definition (translators/job_variables.py) that fills the shims."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from conftest import REPO

from migrate.translators import job_variables
from migrate.translators.job_variables import BY_NAME, POD, VARIABLES, bash_value, fill
from migrate.translators.kubernetes import shims, slurmenv, step_service, submit

NAME = re.compile(r"MIGRATE_[A-Z][A-Z0-9_]*")
PLACEHOLDER = re.compile(r"@(?:perl)?\{MIGRATE_[A-Z_]+\}")  # filled from the table
SOURCES = [
    p for folder in ("migrate", "translators", "reports") for p in sorted((REPO / folder).rglob("*.py"))
]
DEFINITION = REPO / "translators" / "job_variables.py"
# The tool's own variable, not a job's: the scan cache defines it (a warm scan loads no translator
# module), and the command line's help names it (it loads no library module before a command runs).
_THE_TOOLS_OWN = {("cache.py", "MIGRATE_CACHE_DIR"), ("cli.py", "MIGRATE_CACHE_DIR")}


def _declared(name: str) -> bool:
    return name in BY_NAME or name.startswith(job_variables.SLURM.SECRET_PREFIX.name)


def _code_strings(path: Path) -> list[tuple[int, str]]:
    """The string constants of a module that are not docstrings (f-string parts included)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
    ]


def test_no_module_but_the_definition_spells_a_variable_in_its_code() -> None:
    """Python names a variable through its entry, shell texts through placeholders. The shims' plain
    ``$MIGRATE_X`` reads (after a placeholder's test) are names the table declares, checked below."""
    spelled = [
        f"{path.relative_to(REPO)}:{line}: {found}"
        for path in SOURCES
        if path not in (DEFINITION, REPO / "translators" / "kubernetes" / "shims.py")
        for line, text in _code_strings(path)
        for found in NAME.findall(PLACEHOLDER.sub("", text))
        if (path.name, found) not in _THE_TOOLS_OWN
    ]
    assert spelled == []


@pytest.mark.parametrize("name", sorted(shims.files()))
def test_every_variable_a_shim_reads_is_declared_and_read_with_its_default(name: str) -> None:
    text = shims.files()[name]
    assert "@{" not in text and "@perl{" not in text  # every placeholder filled
    undeclared = sorted({n for n in NAME.findall(text) if not _declared(n)})
    assert undeclared == []
    for var, default in re.findall(r"\$\{(MIGRATE_[A-Z_]+):-((?:[^{}]|\$\{[^}]*\})*)\}", text):
        assert default == (BY_NAME[var].default or ""), f"{name}: ${{{var}:-{default}}}"
    for var, default in re.findall(r"\$ENV\{(MIGRATE_[A-Z_]+)\} (?:\|\||//) ('[^']*'|\d+)", text):
        assert default.strip("'") == (BY_NAME[var].default or ""), f"{name}: $ENV{{{var}}} || {default}"


def test_the_shims_source_reads_no_variable_with_a_default_of_its_own() -> None:
    source = (REPO / "translators" / "kubernetes" / "shims.py").read_text(encoding="utf-8")
    assert re.findall(r"\$\{MIGRATE_[A-Z_]+:-|\$ENV\{MIGRATE_[A-Z_]+\} (?:\|\||//)", source) == []


def test_a_placeholder_takes_the_tables_default_and_an_unknown_name_is_refused() -> None:
    assert fill("n=@{MIGRATE_NODES}; p=@perl{MIGRATE_STEP_PORT}; t=@perl{MIGRATE_STEP_TOKEN}") == (
        "n=${MIGRATE_NODES:-1}; p=$ENV{MIGRATE_STEP_PORT} || 6820; t=$ENV{MIGRATE_STEP_TOKEN} // ''"
    )
    assert bash_value(POD.HOSTS) == "${MIGRATE_HOSTS:-}"
    with pytest.raises(KeyError):
        fill("@{MIGRATE_NO_SUCH_THING}")


def test_the_writers_values_agree_with_the_shims_defaults() -> None:
    assert POD.DIR.default == slurmenv.MOUNT_DIR
    assert str(step_service.STEP_PORT) == POD.STEP_PORT.default
    assert bash_value(POD.POLL_SECONDS) in submit._PRELUDE


def test_every_name_is_declared_once_and_prefixed() -> None:
    names = [v.name for v in VARIABLES]
    assert len(names) == len(set(names))
    assert all(NAME.fullmatch(n) or n == job_variables.SLURM.SECRET_PREFIX.name for n in names)
