"""The engines a dependency chain can run on, by the name ``--workflow`` gives.

A chain renderer takes the translations, the dependency edges between them and
each job's folder, and returns the files to add at the root of the output
(relative path -> text). It may rewrite a job's own files (a JobFlow creates
the Volcano Job itself, so the job's file keeps a JobTemplate instead), and it
records on the dependent job how each dependency was carried: mapped,
approximated or dropped, with why.

``argo`` is written beside the Argo reader as
``translators/argo/writer.py: render_chain``; it joins the table once that
module exists, and is then the default for a chain of more than one job.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from migrate.fidelity import Edge, Translation

from . import jobflow, submit

ChainRenderer = Callable[[list[Translation], list[Edge], dict[str, str]], dict[str, str]]

SCRIPT = "script"
JOBFLOW = "jobflow"
ARGO = "argo"
_ARGO_MODULE = "migrate.translators.argo.writer"

_BUILT_IN: dict[str, ChainRenderer] = {SCRIPT: submit.render_chain, JOBFLOW: jobflow.render_chain}
WORKFLOWS = (ARGO, JOBFLOW, SCRIPT)  # every name --workflow accepts, available or not


def renderers() -> dict[str, ChainRenderer]:
    """The chain renderers this installation has: the built-in ones, and Argo when it is there."""
    table = dict(_BUILT_IN)
    try:
        argo = importlib.import_module(_ARGO_MODULE)
    except ImportError:
        return table
    render = getattr(argo, "render_chain", None)
    if callable(render):
        table[ARGO] = render
    return table


def default_workflow() -> str:
    return ARGO if ARGO in renderers() else SCRIPT


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
    "default_workflow",
    "render",
    "renderers",
]
