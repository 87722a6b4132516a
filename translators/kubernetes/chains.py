"""The engines a dependency chain can run on, by the name ``--workflow`` gives.

A chain renderer takes the translations, the dependency edges between them and
each job's folder, and returns the files to add at the root of the output
(relative path -> text). It may rewrite a job's own files (a JobFlow creates
the Volcano Job itself, so the job's file keeps a JobTemplate instead), and it
records on the dependent job how each dependency was carried: mapped,
approximated or dropped, with why.

Each engine is one declaration in ``ENGINES``. ``argo`` is written beside the
Argo reader (``translators/argo/writer.py``); it is the default.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from migrate.declared import Declared
from migrate.fidelity import Edge, Translation
from migrate.translators.argo import writer as argo

from . import flavor_registry, flavors, jobflow, submit

ChainRenderer = Callable[[list[Translation], list[Edge], dict[str, str]], dict[str, str]]

SCRIPT = "script"
JOBFLOW = "jobflow"
ARGO = "argo"
DEFAULT = ARGO


@dataclass(frozen=True)
class WorkflowEngine:
    """One engine: its ``--workflow`` name, the file at the output's root that runs the chains, what
    writes that file, and the flavor the chained jobs must be written as (None: any)."""

    name: str
    file: str
    render: ChainRenderer
    flavor: str | None = None


def _problem(engine: WorkflowEngine) -> str | None:
    if not engine.name or not engine.name.replace("-", "").isalnum():
        return "a --workflow name is letters, digits and dashes"
    if engine.flavor is not None and engine.flavor not in flavor_registry.names():
        return f"flavor {engine.flavor!r} is not a registered flavor"
    return None


ENGINES: Declared[WorkflowEngine] = Declared("workflow engine", _problem)
ENGINES.register(WorkflowEngine(ARGO, argo.WORKFLOW_FILE, argo.render_chain))
# A JobFlow creates the Volcano Jobs itself: the chained jobs are Volcano JobTemplates.
ENGINES.register(WorkflowEngine(JOBFLOW, jobflow.FILE, jobflow.render_chain, flavors.VOLCANO))
ENGINES.register(WorkflowEngine(SCRIPT, "submit.sh", submit.render_chain))


def workflows() -> tuple[str, ...]:
    """Every name ``--workflow`` accepts."""
    return tuple(sorted(ENGINES.table))


def renderers() -> dict[str, ChainRenderer]:
    return {name: engine.render for name, engine in ENGINES.table.items()}


def default_workflow() -> str:
    return DEFAULT


def engine(workflow: str | None) -> WorkflowEngine:
    """The engine ``workflow`` names (the default for None); an unknown name is a ValueError."""
    name = workflow or DEFAULT
    if name not in ENGINES.table:
        raise ValueError(f"unknown workflow {name!r}; expected one of {', '.join(workflows())}")
    return ENGINES.table[name]


def chain_file(workflow: str | None) -> str:
    """The file a chain on ``workflow`` is written to; an unknown name is a ValueError."""
    return engine(workflow).file


def chain_flavor(workflow: str | None) -> str | None:
    """The flavor the jobs of a chain must have for ``workflow`` (a JobFlow holds Volcano Jobs)."""
    return engine(workflow).flavor


def render(
    workflow: str | None, translations: list[Translation], edges: list[Edge], folders: dict[str, str]
) -> dict[str, str]:
    return engine(workflow).render(translations, edges, folders)


__all__ = [
    "ARGO",
    "ENGINES",
    "JOBFLOW",
    "SCRIPT",
    "ChainRenderer",
    "WorkflowEngine",
    "chain_file",
    "chain_flavor",
    "default_workflow",
    "engine",
    "render",
    "renderers",
    "workflows",
]
