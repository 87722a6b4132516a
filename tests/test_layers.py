"""The one-way rule: every module imports only from its own layer or the layers before it.

core -> site -> translators -> scan -> graph -> plan -> translate -> reports -> api -> cli
(see docs/architecture.md). Imports inside functions and under TYPE_CHECKING count too: a
lazy import from a later layer is still a dependency the wrong way.
"""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx
import pytest

REPO = Path(__file__).resolve().parent.parent
# Folder on disk -> the package it installs as (pyproject.toml's package-dir).
PACKAGE_DIRS = {
    "migrate": REPO / "migrate",
    "migrate.translators": REPO / "translators",
    "migrate.reports": REPO / "reports",
}

CORE = frozenset(
    {
        *("ir", "serialize", "diagnostics", "names", "secrets", "outputs", "fidelity", "json_indented"),
        *("render", "yamlload", "vocab", "devices", "declared", "workloads"),
    }
)
COMMANDS_BELOW_REPORTS = frozenset(("translate", "matrix", "slurmcheck", "init_config"))
LAYERS = (
    "core",
    "site",
    "translators",
    "scan",
    "graph",
    "plan",
    "translate",
    "reports",
    "api",
    "cli",
    "entrypoint",
)
MAX_TOP_MODULES = 22
TERMINAL_LIBRARIES = frozenset(("typer", "rich", "click"))
# Imported by every scan, the one the cache answers too: they name the readers and writers and
# import them only inside their loader functions, or for types.
REGISTRY = ("migrate.translators.registry", "migrate.translators.interfaces")


def modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for package, folder in PACKAGE_DIRS.items():
        for path in sorted(folder.rglob("*.py")):
            rel = path.relative_to(folder).with_suffix("").parts
            if package == "migrate" and rel[0] in ("translators", "reports"):
                continue  # not there in a checkout; named only for safety
            parts = rel[:-1] if rel[-1] == "__init__" else rel
            found[".".join((package, *parts))] = path
    return found


def layer_of(module: str) -> str:
    parts = module.split(".")
    if len(parts) == 1:
        return "core"  # the package itself: the version and the exit codes
    second = parts[1]
    if second in ("site", "translators", "scan", "graph", "plan", "reports"):
        return second
    if second in CORE:
        return "core"
    if second in COMMANDS_BELOW_REPORTS:
        return "translate"
    if second in ("api", "cli", "entrypoint"):
        return second
    raise AssertionError(f"{module}: no layer; add it to tests/test_layers.py and docs/architecture.md")


def imports_of(module: str, path: Path, known: dict[str, Path]) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    return imports_in(module, tree, path.name == "__init__.py", known)


def imports_in(module: str, tree: ast.Module, is_package: bool, known: dict[str, Path]) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "migrate")
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")
                if not is_package:
                    base = base[:-1]
                base = base[: len(base) - (node.level - 1)]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            if target.split(".")[0] != "migrate":
                continue
            for alias in node.names:
                candidate = f"{target}.{alias.name}"
                found.add(candidate if candidate in known else target)
    return {name for name in found if name in known and name != module}


@pytest.fixture(scope="module")
def import_graph() -> nx.DiGraph:
    known = modules()
    graph = nx.DiGraph()
    for module, path in known.items():
        graph.add_node(module)
        for target in imports_of(module, path, known):
            graph.add_edge(module, target)
    return graph


def test_every_module_has_a_layer(import_graph: nx.DiGraph) -> None:
    for module in import_graph:
        assert layer_of(module) in LAYERS


def test_no_import_from_a_later_layer(import_graph: nx.DiGraph) -> None:
    wrong = [
        f"{source} ({layer_of(source)}) imports {target} ({layer_of(target)})"
        for source, target in import_graph.edges
        if LAYERS.index(layer_of(target)) > LAYERS.index(layer_of(source))
    ]
    assert not wrong, "imports against the one-way rule:\n" + "\n".join(sorted(wrong))


def test_no_import_circles(import_graph: nx.DiGraph) -> None:
    circles = [sorted(c) for c in nx.strongly_connected_components(import_graph) if len(c) > 1]
    assert not circles, f"import circles: {circles}"


def test_the_top_of_the_package_stays_small() -> None:
    top = sorted(p.name for p in PACKAGE_DIRS["migrate"].glob("*.py"))
    assert len(top) <= MAX_TOP_MODULES, top


def test_only_the_command_line_uses_the_terminal() -> None:
    """typer and rich belong to cli.py and entrypoint.py; the library below returns data."""
    wrong = []
    for module, path in modules().items():
        if layer_of(module) in ("cli", "entrypoint"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module or ""]
            wrong += [f"{module} imports {n}" for n in names if n.split(".")[0] in TERMINAL_LIBRARIES]
    assert not wrong, "\n".join(wrong)


def test_the_registry_imports_no_reader_or_writer_when_it_loads() -> None:
    """Only its loader functions import the readers and writers; its other imports of translators/
    are for types (under ``TYPE_CHECKING``) or each other."""
    known = modules()
    for module in REGISTRY:
        path = known[module]
        tree = ast.parse(path.read_text(encoding="utf-8"))
        tree.body = [
            node
            for node in tree.body
            if not isinstance(node, ast.FunctionDef)
            and not (isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING")
        ]
        loaded = {m for m in imports_in(module, tree, path.name == "__init__.py", known) if m not in REGISTRY}
        assert all(layer_of(m) != "translators" for m in loaded), f"{module} imports {sorted(loaded)} at load"


def test_the_rule_sees_a_wrong_import(tmp_path: Path) -> None:
    """The checker itself: a core module importing the plan is caught."""
    bad = tmp_path / "ir.py"
    bad.write_text("from migrate.plan import planner\n", encoding="utf-8")
    known = {**modules(), "migrate.ir": bad}
    targets = imports_of("migrate.ir", bad, known)
    assert targets == {"migrate.plan.planner"}
    assert LAYERS.index(layer_of("migrate.plan.planner")) > LAYERS.index(layer_of("migrate.ir"))


def test_every_package_is_installed() -> None:
    """A package left out of pyproject.toml's list works in an editable install and is missing from a
    wheel (the README's quick start installs one)."""
    import tomllib

    listed = set(tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {name for name, path in modules().items() if path.name == "__init__.py"}
    assert found == listed, f"not installed: {sorted(found - listed)}; no folder: {sorted(listed - found)}"
