"""A pod's ``workingDir`` from a directory the job names with shell variables.

Kubernetes takes ``workingDir`` as written: no shell expands ``$CODE_DIR`` in
it. A directory that names variables (``--chdir``, ``--container-workdir``,
``--pwd``, ``-w``) is resolved from the values the job sets before its steps
run (the script's own assignments and exports, the pod's literal env); when
one of them has no such value, the pod gets no ``workingDir`` (it starts in
the image's working directory) and the fidelity log says so.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from migrate import ir

from .translation_context import Context

_REFERENCE = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")
# Values a shell computes when the script runs: not known before.
_RUN_TIME = ("$", "`")


def static_values(env: Iterable[ir.EnvVar]) -> dict[str, str]:
    """Names the job sets to one literal value (a name set to two different values is left out)."""
    values: dict[str, str] = {}
    twice: set[str] = set()
    for var in env:
        if var.value is None or var.secret is not None or any(c in var.value for c in _RUN_TIME):
            twice.add(var.name)
            continue
        if values.get(var.name, var.value) != var.value:
            twice.add(var.name)
        values[var.name] = var.value
    return {name: value for name, value in values.items() if name not in twice}


def resolved(directory: str, values: dict[str, str]) -> tuple[str | None, list[str]]:
    """``directory`` with its variables filled in, and the names without a value (then None)."""
    names = [m.group(1) or m.group(2) for m in _REFERENCE.finditer(directory)]
    missing = [n for n in dict.fromkeys(names) if n not in values]
    if missing or "$" in _REFERENCE.sub("", directory):
        return None, missing
    return _REFERENCE.sub(lambda m: values[m.group(1) or m.group(2)], directory), []


def known(directory: str, env: Iterable[ir.EnvVar]) -> str | None:
    """``directory`` with its variables filled in, or None when one has no value before the job runs."""
    return directory if "$" not in directory else resolved(directory, static_values(env))[0]


def working_dir(
    ctx: Context, directory: str | None, env: Iterable[ir.EnvVar], line: int | None, item: str = ""
) -> str | None:
    """The ``workingDir`` to write for ``directory`` (None: none); one that names variables is
    recorded as ``item``."""
    if not directory or "$" not in directory:
        return directory
    value, missing = resolved(directory, static_values(env))
    item = item or f"working directory {directory}"
    recorded = any(e.item == item for e in ctx.fidelity.entries)  # once, not once per component
    if recorded:
        return value
    if value is not None:
        ctx.fidelity.mapped(
            item, f"workingDir {value}, the value the job sets: a pod's is not shell-expanded", line
        )
        return value
    unknown = ", ".join(missing) or "a shell expansion"
    ctx.fidelity.approximated(
        item,
        f"no workingDir: a pod's is not shell-expanded and {unknown} has no value before the job runs; "
        "the pod starts in the image's working directory",
        line,
    )
    return None


__all__ = ["known", "resolved", "static_values", "working_dir"]
