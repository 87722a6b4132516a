"""What reading a command found, kept for the next time the same command is read.

Sites repeat commands across thousands of scripts (``module load cuda/12.1``,
``mkdir -p "$RUN_DIR"``, ``srun python train.py --data "$DATA"``), and reading one
(peeling its launcher layers, finding paths, hooks and software) costs far more
than copying what it gave. Only commands whose reading depends on nothing but
what the key holds are kept:

- eligible: no here-document, no assignment before the command, no word that
  declares variables, submits, traps, evals or starts a shell (those change or
  read the analysis' state, or read scripts inside), not a call of a function
  the script defined; ``export NAME=value ...`` with values written out; and
  ``NAME=value ...`` alone, without substitutions, quotes or arrays, naming no
  variable that holds job ids (so that it only tells the job-id flow that NAME
  holds none, which the caller repeats). What these two set in the script's
  variables is kept with their findings;
- the key: the text, where the command sits (nesting, depth, origin, background,
  the variable capturing it) and what the script set each variable it names to,
  then each variable those values name, and so on;
- kept only when the reading added no diagnostic, left the state as it was
  (but for the variables an export sets), and everything it found sits on the
  command's own lines, so that the findings of the same text at another line
  differ by where it starts alone.
"""

from __future__ import annotations

import re
from collections.abc import Container, Mapping
from typing import Any, NamedTuple

from migrate import ir

from .launchers import DECLARING, SHELLS
from .model import Command

# Words that make the reading touch more than the command itself.
_BARRED = DECLARING | SHELLS | {"sbatch", "trap", "eval", "scontrol"}
_NAMED = re.compile(r"\$\{?[#!]?([A-Za-z_][A-Za-z0-9_]*)")
_LITERAL_ASSIGNMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=[^$`()\\'\"]*\Z")
_PLAIN_ASSIGNMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=[^`()\\'\"]+\Z")
# The analysis' lists a command's reading appends to, and the types they may hold here.
FINDINGS = ("launchers", "modules", "software", "env", "storage", "monitoring", "raw")
_LINED = (ir.Launcher, ir.EnvVar, ir.StoragePath, ir.MonitoringHook, ir.RawItem)
_UNLINED = (ir.KeyValue, str)
MAX_KEPT = 12288  # about 8 MB at most

Key = tuple[Any, ...]
Findings = tuple[tuple[str, tuple[Any, ...]], ...]  # (list name, what was appended to it)
Tables = tuple[dict[str, str], dict[str, tuple[str, ...]], dict[str, str]]  # known, arrays, path_vars
ABSENT = None  # a variable not in a table
Sets = tuple[tuple[str, str | None, tuple[str, ...] | None, str | None], ...]  # name, then each table's


class Kept(NamedTuple):
    line: int  # the command's line when it was read
    findings: Findings
    sets: Sets  # what it left in the variable tables for the names it sets
    # The findings moved to each other line the command was recalled at; None when no finding
    # has a line (they stand as they are at any line). Similar scripts put a command at a few lines.
    moved: dict[int, Findings] | None


_KEPT: dict[Key, Kept] = {}


def key(
    cmd: Command,
    depth: int,
    known: Mapping[str, str],
    arrays: Mapping[str, tuple[str, ...]],
    path_vars: Mapping[str, str],
    job_ids: Container[str] = (),
) -> Key | None:
    """The key of an eligible command; None when its reading must run. ``job_ids``: the variables
    that hold job ids."""
    if not cmd.words:
        if assigned_names(cmd) is None:
            return None
        if "$" in cmd.text and any(name in job_ids for name in _NAMED.findall(cmd.text)):
            return None
    elif cmd.assignments:
        return None
    exporting = bool(cmd.words) and cmd.words[0].value == "export" and exported_names(cmd) is not None
    for word in cmd.words[1:] if exporting else cmd.words:
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


def assigned_names(cmd: Command) -> tuple[str, ...] | None:
    """The names ``A=1 B=$X`` sets: a command of assignments alone, none with a substitution, a
    quote or an array; None for any other command."""
    if cmd.words or not cmd.assignments:
        return None
    names: list[str] = []
    for word in cmd.assignments:
        m = _PLAIN_ASSIGNMENT.match(word.raw)
        if m is None:
            return None
        names.append(m.group(1))
    return tuple(names)


def exported_names(cmd: Command) -> tuple[str, ...] | None:
    """The names ``export A=1 B=x`` sets, every value written out; None for any other export."""
    names: list[str] = []
    for word in cmd.words[1:]:
        m = _LITERAL_ASSIGNMENT.match(word.raw)
        if m is None:
            return None
        names.append(m.group(1))
    return tuple(names)


def snapshot(tables: Tables) -> Tables:
    known, arrays, path_vars = tables
    return dict(known), dict(arrays), dict(path_vars)


def sets_of(cmd: Command, before: Tables, after: Tables) -> Sets | None:
    """What the command left in the variable tables for the names it may set; None when it changed
    any other variable (or sets none and changed any)."""
    if not cmd.words:
        allowed = set(assigned_names(cmd) or ())
    else:
        allowed = set(exported_names(cmd) or ()) if cmd.words[0].value == "export" else set()
    known, arrays, path_vars = after
    changed = _changed(before[0], known) | _changed(before[1], arrays) | _changed(before[2], path_vars)
    if changed - allowed:
        return None
    return tuple((n, known.get(n), arrays.get(n), path_vars.get(n)) for n in sorted(allowed))


def _changed(old: Mapping[str, Any], new: Mapping[str, Any]) -> set[str]:
    if old == new:
        return set()
    return {n for n in old.keys() | new.keys() if old.get(n, ABSENT) != new.get(n, ABSENT)}


def keep(k: Key, cmd: Command, found: Findings, sets: Sets) -> None:
    """Keep ``found`` when every item in it is of a known kind and sits on the command's lines."""
    first, last = cmd.line, cmd.line + cmd.text.count("\n")
    lined = False  # a finding with a line: recalled at another line, the findings move
    for _, items in found:
        for item in items:
            if isinstance(item, _LINED):
                if item.line is None or not first <= item.line <= last:
                    return
                lined = True
            elif not isinstance(item, _UNLINED):
                return
    if len(_KEPT) >= MAX_KEPT:
        _KEPT.clear()
    _KEPT[k] = Kept(cmd.line, found, sets, {} if lined else None)


def recall(k: Key, line: int) -> tuple[Findings, Sets] | None:
    """What the command of key ``k`` found and set, for the same command starting at ``line``."""
    kept = _KEPT.get(k)
    if kept is None:
        return None
    if kept.moved is None or kept.line == line:
        return kept.findings, kept.sets
    found = kept.moved.get(line)
    if found is None:
        if len(kept.moved) >= _MOVED_MAX:
            kept.moved.clear()
        found = kept.moved[line] = _moved(kept.findings, line - kept.line)
    return found, kept.sets


_MOVED_MAX = 8  # lines kept per command


def _moved(findings: Findings, by: int) -> Findings:
    return tuple(
        (
            name,
            tuple(
                ir.replace(i, line=i.line + by) if isinstance(i, _LINED) and i.line is not None else i
                for i in items
            ),
        )
        for name, items in findings
    )


def apply(sets: Sets, tables: Tables) -> None:
    """Leave each variable the recalled command set as it left it."""
    known, arrays, path_vars = tables
    for name, value, items, path in sets:
        _put(known, name, value)
        _put(arrays, name, items)
        _put(path_vars, name, path)


def _put(table: dict[str, Any], name: str, value: Any) -> None:
    if value is ABSENT:
        table.pop(name, None)
    else:
        table[name] = value


def clear() -> None:
    _KEPT.clear()


__all__ = [
    "FINDINGS",
    "MAX_KEPT",
    "Findings",
    "Key",
    "Sets",
    "Tables",
    "apply",
    "assigned_names",
    "clear",
    "exported_names",
    "keep",
    "key",
    "recall",
    "sets_of",
    "snapshot",
]
