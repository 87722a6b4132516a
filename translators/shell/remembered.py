"""What reading a command found, kept for the next time the same command is read.

Sites repeat commands across thousands of scripts (``module load cuda/12.1``,
``mkdir -p "$RUN_DIR"``, ``srun python train.py --data "$DATA"``), and reading one
(peeling its launcher layers, finding paths, hooks and software) costs far more
than copying what it gave. Only commands whose reading depends on nothing but
what the key holds are kept:

- eligible: no assignment, no here-document, no word that declares variables,
  submits, traps, evals or starts a shell (those change or read the analysis'
  state, or read scripts inside), not a call of a function the script defined;
- the key: the text, where the command sits (nesting, depth, origin, background,
  the variable capturing it) and what the script set each variable it names to,
  then each variable those values name, and so on;
- kept only when the reading added no diagnostic, left the state as it was, and
  everything it found sits on the command's own lines, so that the findings of
  the same text at another line differ by where it starts alone.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from migrate import ir

from .launchers import DECLARING, SHELLS
from .model import Command

# Words that make the reading touch more than the command itself.
_BARRED = DECLARING | SHELLS | {"sbatch", "trap", "eval", "scontrol"}
_NAMED = re.compile(r"\$\{?[#!]?([A-Za-z_][A-Za-z0-9_]*)")
# The analysis' lists a command's reading appends to, and the types they may hold here.
FINDINGS = ("launchers", "modules", "software", "env", "storage", "monitoring", "raw")
_LINED = (ir.Launcher, ir.EnvVar, ir.StoragePath, ir.MonitoringHook, ir.RawItem)
_UNLINED = (ir.KeyValue, str)
MAX_KEPT = 16384  # about 10 MB at most

Key = tuple[Any, ...]
Findings = tuple[tuple[str, tuple[Any, ...]], ...]  # (list name, what was appended to it)

_KEPT: dict[Key, tuple[int, Findings]] = {}  # key -> (the line it was read at, its findings)


def key(
    cmd: Command,
    depth: int,
    known: Mapping[str, str],
    arrays: Mapping[str, tuple[str, ...]],
    path_vars: Mapping[str, str],
) -> Key | None:
    """The key of an eligible command; None when its reading must run."""
    if cmd.assignments or not cmd.words:
        return None
    for word in cmd.words:
        if word.value in _BARRED:
            return None
    for r in cmd.redirects:
        if r.heredoc is not None:
            return None
    state: list[tuple[str, str | None, tuple[str, ...] | None, str | None]] = []
    if "$" in cmd.text:
        # the variables the text names, then those their values name (values are used as written)
        pending = _NAMED.findall(cmd.text)
        seen: set[str] = set()
        while pending:
            name = pending.pop()
            if name in seen:
                continue
            seen.add(name)
            value, items, path = known.get(name), arrays.get(name), path_vars.get(name)
            state.append((name, value, items, path))
            for held in (value, path, *(items or ())):
                if held and "$" in held:
                    pending.extend(_NAMED.findall(held))
        state.sort()
    return (cmd.text, cmd.nested, cmd.background, cmd.origin, cmd.captured_by, depth, tuple(state))


def keep(k: Key, cmd: Command, found: Findings) -> None:
    """Keep ``found`` when every item in it is of a known kind and sits on the command's lines."""
    first, last = cmd.line, cmd.line + cmd.text.count("\n")
    for _, items in found:
        for item in items:
            if isinstance(item, _LINED):
                if item.line is None or not first <= item.line <= last:
                    return
            elif not isinstance(item, _UNLINED):
                return
    if len(_KEPT) >= MAX_KEPT:
        _KEPT.clear()
    _KEPT[k] = (cmd.line, found)


def recall(k: Key, line: int) -> Findings | None:
    """What the command of key ``k`` found, for the same command starting at ``line``."""
    kept = _KEPT.get(k)
    if kept is None:
        return None
    at, found = kept
    if at == line:
        return found
    moved = line - at
    return tuple(
        (
            name,
            tuple(
                replace(i, line=i.line + moved) if isinstance(i, _LINED) and i.line is not None else i
                for i in items
            ),
        )
        for name, items in found
    )


def clear() -> None:
    _KEPT.clear()


__all__ = ["FINDINGS", "MAX_KEPT", "Findings", "Key", "clear", "keep", "key", "recall"]
