"""trap: the signals a body handles and the handler it runs."""

from __future__ import annotations

from collections.abc import Sequence

from migrate.translators.slurm.options import SIGNAL_NUMBERS

from .model import Word


def trap(program: Sequence[Word]) -> tuple[Word | None, list[str]]:
    """The handler word and the normalized signal names of 'trap HANDLER SIG...'."""
    args = list(program[1:])
    while args and args[0].value.startswith("-") and args[0].value != "-":
        if args[0].value == "--":
            args = args[1:]
            break
        if args[0].value in ("-p", "-l", "-P"):
            return None, []  # listing, not setting
        args = args[1:]
    if len(args) < 2:
        return None, []  # 'trap SIG' resets, a bare 'trap' lists
    handler, names = args[0], args[1:]
    if handler.value == "-":
        return None, []
    return handler, [normalize(w.value) for w in names]


def normalize(name: str) -> str:
    upper = name.upper()
    if upper.isascii() and upper.isdigit():
        return SIGNAL_NUMBERS.get(int(upper), upper) if len(upper) < 4 else upper
    return upper[3:] if upper.startswith("SIG") else upper
