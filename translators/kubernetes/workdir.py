"""A pod's ``workingDir`` from a directory the job names with shell variables.

Kubernetes takes ``workingDir`` as written: no shell expands ``$CODE_DIR`` in
it. Where the job's directory comes from decides what a ``$`` in it means:

- ``--chdir``: sbatch takes the directory as written too, so it reaches the pod
  as it is; a ``$NAME`` in it is a template placeholder that no ``--set`` or
  ``--env-file`` value filled (those fill ``#SBATCH`` lines before reading), and
  the pod gets no ``workingDir``.
- a container's directory (``--container-workdir``, ``--pwd``, ``-w``): the
  script's shell expands it when the step starts, so its variables are filled in
  from the values the job sets before (the script's own assignments and
  exports, the pod's literal env). When one has no such value the pod gets no
  ``workingDir`` (it starts in the image's working directory).

Either way the fidelity log says what happened.
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


def placeholders(directory: str) -> list[str]:
    """The ``$NAME`` and ``${NAME}`` names in ``directory``, in order, each once."""
    return list(dict.fromkeys(m.group(1) or m.group(2) for m in _REFERENCE.finditer(directory)))


def chdir(ctx: Context, directory: str, line: int | None) -> str | None:
    """The ``workingDir`` for ``--chdir=directory``: as written, or none for an unfilled placeholder."""
    item = ctx.option("chdir", directory)
    names = placeholders(directory)
    if not names:
        ctx.fidelity.mapped(item, "workingDir", line)
        return directory
    written = ", ".join(f"${name}" for name in names)
    ctx.fidelity.approximated(
        item,
        f"no workingDir: {written} is a template placeholder with no value (give it with --set "
        f"{names[0]}=VALUE); sbatch would not expand it either; the pod starts in the image's "
        "working directory",
        line,
    )
    return None


def container_dir(
    ctx: Context, directory: str | None, env: Iterable[ir.EnvVar], line: int | None
) -> str | None:
    """The ``workingDir`` for a container's directory, which a shell expands: its variables filled in,
    or none when one has no value before the job runs."""
    if not directory or "$" not in directory:
        return directory
    value, missing = resolved(directory, static_values(env))
    item = f"working directory {directory}"
    if any(e.item == item for e in ctx.fidelity.entries):  # once, not once per component
        return value
    if value is not None:
        reason = f"workingDir {value}, the value the job sets: a pod's is not shell-expanded"
        ctx.fidelity.mapped(item, reason, line)
        return value
    unknown = ", ".join(missing) or "a shell expansion"
    ctx.fidelity.approximated(
        item,
        f"no workingDir: a pod's is not shell-expanded and {unknown} has no value before the job runs; "
        "the pod starts in the image's working directory",
        line,
    )
    return None


__all__ = ["chdir", "container_dir", "placeholders", "resolved", "static_values"]
