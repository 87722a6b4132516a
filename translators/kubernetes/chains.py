"""The engines a dependency chain can run on, by the name ``--workflow`` gives.

A chain renderer takes the translations, the dependency edges between them and
each job's folder, and returns the files to add at the root of the output
(relative path -> text). It may rewrite a job's own files (a JobFlow creates
the Volcano Job itself, so the job's file keeps a JobTemplate instead), and it
records on the dependent job how each dependency was carried: mapped,
approximated or dropped, with why.

``argo`` is written beside the Argo reader (``translators/argo/writer.py``);
it is the default.
"""

from __future__ import annotations

from collections.abc import Callable

from migrate.fidelity import Edge, Translation
from migrate.translators.argo import writer as argo

from . import jobflow, submit

ChainRenderer = Callable[[list[Translation], list[Edge], dict[str, str]], dict[str, str]]

SCRIPT = "script"
JOBFLOW = "jobflow"
ARGO = "argo"

_RENDERERS: dict[str, ChainRenderer] = {
    ARGO: argo.render_chain,
    JOBFLOW: jobflow.render_chain,
    SCRIPT: submit.render_chain,
}
_FILES = {ARGO: argo.WORKFLOW_FILE, JOBFLOW: jobflow.FILE, SCRIPT: "submit.sh"}
WORKFLOWS = tuple(sorted(_RENDERERS))  # every name --workflow accepts
DEFAULT = ARGO


def renderers() -> dict[str, ChainRenderer]:
    return dict(_RENDERERS)


def default_workflow() -> str:
    return DEFAULT


def chain_file(workflow: str | None) -> str:
    """The file a chain on ``workflow`` is written to; an unknown name is a ValueError."""
    name = workflow or DEFAULT
    if name not in _FILES:
        raise ValueError(f"unknown workflow {name!r}; expected one of {', '.join(WORKFLOWS)}")
    return _FILES[name]


def render(
    workflow: str | None, translations: list[Translation], edges: list[Edge], folders: dict[str, str]
) -> dict[str, str]:
    table = renderers()
    name = workflow or default_workflow()
    if name not in table:
        raise ValueError(f"--workflow {name} is not available here; use one of {', '.join(sorted(table))}")
    return table[name](translations, edges, folders)


__all__ = [
    "ARGO",
    "JOBFLOW",
    "SCRIPT",
    "WORKFLOWS",
    "ChainRenderer",
    "chain_file",
    "default_workflow",
    "render",
    "renderers",
]
