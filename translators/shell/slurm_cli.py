"""Command-line options of ``srun`` and ``sbatch`` as written in a script body.

Which options take a value comes from the project's one sbatch table
(``translators.slurm.options``); srun shares almost all of them, and the few
it adds or spells differently are listed here. Options are returned under
their long name, so ``-N2``, ``-N 2`` and ``--nodes=2`` all read as
``nodes=2``; options without a value get an empty value.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from migrate import ir
from migrate.translators.slurm import options as sbatch_options
from migrate.vocab import DependencyType

REQUIRED = sbatch_options.REQUIRED
OPTIONAL = sbatch_options.OPTIONAL
NONE = sbatch_options.NONE

# srun options that sbatch lacks or reads differently: long -> (short, argument kind)
_SRUN_ONLY: dict[str, tuple[str | None, str]] = {
    "mpi": (None, REQUIRED),
    "het-group": (None, REQUIRED),
    "pack-group": (None, REQUIRED),
    "cpu-bind": (None, REQUIRED),
    "cpu_bind": (None, REQUIRED),
    "mem_bind": (None, REQUIRED),
    "accel-bind": (None, REQUIRED),
    "label": ("l", NONE),
    "multi-prog": (None, NONE),
    "overlap": (None, NONE),
    "exact": (None, NONE),
    "whole": (None, NONE),
    "pty": (None, OPTIONAL),
    "kill-on-bad-exit": ("K", OPTIONAL),
    "relative": ("r", REQUIRED),
    "unbuffered": ("u", NONE),
    "bcast": (None, OPTIONAL),
    "bcast-exclude": (None, REQUIRED),
    "task-prolog": (None, REQUIRED),
    "task-epilog": (None, REQUIRED),
    "prolog": (None, REQUIRED),
    "epilog": (None, REQUIRED),
    "send-libs": (None, OPTIONAL),
    "slurmd-debug": (None, REQUIRED),
    "wait": ("W", REQUIRED),  # seconds to wait after the first task ends (a flag in sbatch)
    "immediate": ("I", OPTIONAL),
    "jobid": (None, REQUIRED),
    "disable-status": ("X", NONE),
    "no-allocate": ("Z", NONE),
    "threads": ("T", REQUIRED),
    "preserve-env": ("E", NONE),
    "external-launcher": (None, NONE),
    "x11": (None, OPTIONAL),
    "quit-on-interrupt": (None, NONE),
    "ntasks-per-gpu-bind": (None, REQUIRED),
}


class Table:
    """Long names with their argument kind, short letters, getopt-style prefix lookup."""

    def __init__(self, long: dict[str, str], short: dict[str, str], short_kind: dict[str, str]) -> None:
        self.long = long
        self.short = short  # letter -> long name
        self.short_kind = short_kind  # letter -> argument kind
        self._sorted = sorted(long)

    def lookup(self, name: str) -> tuple[str, str] | None:
        kind = self.long.get(name)
        if kind is not None:
            return name, kind
        matches = [n for n in self._sorted if n.startswith(name)] if name else []
        if len(matches) == 1:
            return matches[0], self.long[matches[0]]
        return None


@lru_cache(maxsize=2)
def table(command: str) -> Table:
    """The option table of 'sbatch' or 'srun'."""
    long = {o.long: o.arg for o in sbatch_options.BY_LONG.values()}
    short = {letter: o.long for letter, o in sbatch_options.BY_SHORT.items()}
    if command == "srun":
        for name, (letter, kind) in _SRUN_ONLY.items():
            long[name] = kind
            if letter:
                short[letter] = name
    short_kind = {letter: long[name] for letter, name in short.items()}
    return Table(long, short, short_kind)


def parse_options(
    words: Sequence[str], start: int, tab: Table, stop: frozenset[str] = frozenset()
) -> tuple[list[ir.KeyValue], int]:
    """Read options from words[start:]; return them and the index of the first operand."""
    out: list[ir.KeyValue] = []
    i = start
    n = len(words)
    while i < n:
        word = words[i]
        if word in stop:
            break
        if word == "--":
            i += 1
            break
        if word.startswith("--") and len(word) > 2:
            name, eq, value = word[2:].partition("=")
            found = tab.lookup(name)
            long, kind = found if found else (name, NONE)
            if eq:
                out.append(ir.KeyValue(long, value))
            elif kind == REQUIRED and i + 1 < n:
                out.append(ir.KeyValue(long, words[i + 1]))
                i += 1
            else:
                out.append(ir.KeyValue(long, ""))
        elif word.startswith("-") and len(word) > 1:
            i += _short_cluster(words, i, tab, out)
        else:
            break
        i += 1
    return out, i


def _short_cluster(words: Sequence[str], i: int, tab: Table, out: list[ir.KeyValue]) -> int:
    """Read '-N2', '-N 2' or '-lK'; return how many extra words were used."""
    word = words[i]
    j = 1
    while j < len(word):
        letter = word[j]
        long = tab.short.get(letter, letter)
        kind = tab.short_kind.get(letter, NONE)
        rest = word[j + 1 :]
        if kind == REQUIRED:
            if rest:
                out.append(ir.KeyValue(long, rest[1:] if rest.startswith("=") else rest))
                return 0
            if i + 1 < len(words):
                out.append(ir.KeyValue(long, words[i + 1]))
                return 1
            out.append(ir.KeyValue(long, ""))
            return 0
        if kind == OPTIONAL:
            out.append(ir.KeyValue(long, rest[1:] if rest.startswith("=") else rest))
            return 0
        out.append(ir.KeyValue(long, ""))
        j += 1
    return 0


def parse_dependency(text: str, line: int | None) -> tuple[ir.Dependency, ...]:
    """Parse a --dependency value with the sbatch table's parser, tolerating odd targets.

    Wrapper scripts write targets the strict parser refuses (``$(cat jid)``,
    ``${ids[0]}``); those are kept verbatim rather than dropped.
    """
    try:
        deps = sbatch_options.parse_dependency(text)
    except ValueError:
        deps = _loose_dependency(text)
    return tuple(ir.replace(d, line=line) for d in deps)


def _loose_dependency(text: str) -> tuple[ir.Dependency, ...]:
    any_of = "?" in text and "," not in text
    out: list[ir.Dependency] = []
    for term in text.split("?" if any_of else ","):
        if not term:
            continue
        if term.lower() == DependencyType.SINGLETON:
            out.append(ir.Dependency(type=DependencyType.SINGLETON, any_of=any_of))
            continue
        kind, colon, rest = term.partition(":")
        if not colon:
            out.append(ir.Dependency(type=DependencyType.AFTERANY, targets=(term,), any_of=any_of))
            continue
        out.append(
            ir.Dependency(
                type=_loose_type(kind), targets=tuple(t for t in rest.split(":") if t), any_of=any_of
            )
        )
    return tuple(out)


def _loose_type(kind: str) -> DependencyType:
    """A type sbatch knows, else afterany: a type set at run time (``$kind:$jid``) still orders the jobs."""
    try:
        return DependencyType(kind.lower())
    except ValueError:
        return DependencyType.AFTERANY
