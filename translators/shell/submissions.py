"""Nested submissions: wrapper scripts that call sbatch, jobs that queue themselves again."""

from __future__ import annotations

import re
from collections.abc import Sequence

from migrate import ir

from . import slurm_cli
from .model import Command, Word
from .redact import redact

# $0, ${0}, $BASH_SOURCE, ${BASH_SOURCE[0]}, possibly inside $(readlink -f ...) or $(basename ...)
_SELF = re.compile(r"\$\{?0\}?(?![0-9])|\$\{?BASH_SOURCE\b")
_OWN_JOB = re.compile(r"\$\{?SLURM_(?:ARRAY_)?JOB_ID\}?\Z")
# ${dep:+--dependency=afterok:$dep}: an option given only when the variable is set
_CONDITIONAL = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*:\+(-.*)\}\Z", re.DOTALL)
_ALL_ARGUMENTS = frozenset({"$@", "${@}", "$*", "${*}"})


def _argv(values: Sequence[str]) -> list[str]:
    """sbatch's words with conditional options opened up and "$@" (unknowable) left out."""
    out: list[str] = []
    for value in values:
        m = _CONDITIONAL.match(value)
        if m:
            out.extend(m.group(1).split())
        elif value not in _ALL_ARGUMENTS:
            out.append(value)
    return out


def sbatch_call(cmd: Command, program: Sequence[Word]) -> tuple[ir.Submission, bool]:
    """The submission an sbatch call makes; True when it resubmits this very script."""
    values = _argv([w.value for w in program])
    options, first = slurm_cli.parse_options(values, 1, slurm_cli.table("sbatch"))
    line = program[0].line
    dependencies: list[ir.Dependency] = []
    kept: list[ir.KeyValue] = []
    for kv in options:
        if kv.key == "dependency":
            dependencies.extend(slurm_cli.parse_dependency(kv.value, line))
        else:
            kept.append(ir.KeyValue(kv.key, redact(kv.value)))
    script = values[first] if first < len(values) else None
    if script is None and not any(kv.key == "wrap" for kv in options) and _heredoc_script(cmd):
        kept.append(ir.KeyValue("script", "here-document"))
    submission = ir.Submission(
        script=script,
        options=tuple(kept),
        dependencies=tuple(dependencies),
        captures=cmd.captured_by,
        parsable=any(kv.key == "parsable" for kv in options),
        line=line,
    )
    return submission, bool(script and _SELF.search(script))


def _heredoc_script(cmd: Command) -> bool:
    return any(r.heredoc is not None or r.op == "<" for r in cmd.redirects)


def requeues_itself(program: Sequence[Word]) -> bool:
    """scontrol requeue[hold] $SLURM_JOB_ID: the job puts itself back in the queue."""
    values = [w.value for w in program]
    if len(values) < 3 or values[1] not in ("requeue", "requeuehold"):
        return False
    return any(_OWN_JOB.match(v) for v in values[2:] if not v.startswith("-"))
