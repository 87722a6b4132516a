"""Values for templates: ``--set NAME=VALUE`` and ``--env-file FILE``, filled in before a file is read.

Manifests are filled as ``envsubst`` fills them: ``$NAME`` and ``${NAME}``
anywhere in the text, for the names that have a value. Unlike envsubst, a
name without a value is left as written, so that the reader can report it
and read the field as unknown instead of as an empty string. sbatch scripts
are filled in their ``#SBATCH`` lines only (the body is the shell's to
expand at run time): ``${NAME}``, ``$NAME`` and ``<NAME>`` placeholders.

A value never holds a line break, so filling keeps every line where it was
and diagnostics keep pointing at the line the user wrote.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from migrate.vocab import Format

# Sorted (name, value) pairs: hashable, so they travel in ScanOptions and into the cache key.
Values = tuple[tuple[str, str], ...]

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_DOLLAR = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")
_ANGLE = re.compile(r"<([A-Za-z_][A-Za-z0-9_]*)>")
_EXPORT = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=(.*)$")
_SBATCH_LINE = re.compile(r"^#SBATCH\b")


@dataclass(frozen=True)
class TemplateInputs:
    """What a command was given to render templates with: values, and values files for helm."""

    values: Values = ()
    helm_values: tuple[str, ...] = ()


NO_TEMPLATE_INPUTS = TemplateInputs()


class ValuesError(ValueError):
    """A value that cannot be used; the message names the entry and says how to fix it."""


def parse_assignment(text: str, where: str) -> tuple[str, str]:
    """``NAME=VALUE`` as given to ``--set``."""
    name, sep, value = text.partition("=")
    if not sep or not _NAME.match(name):
        raise ValuesError(f"{where}: {text!r} is not NAME=VALUE (a name is letters, digits and _)")
    return name, _one_line(value, where)


def parse_env_file(text: str, where: str) -> dict[str, str]:
    """``NAME=value`` or ``export NAME=value`` lines (dotenv or a shell file), quotes as a shell reads them.

    Comments and blank lines are skipped, and so is any other line a shell
    file may hold (``set -a``, ``source x``, ``A=1 cmd``, which sets A for
    ``cmd`` only): only lines made of assignments give values.
    """
    found: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not _EXPORT.match(line) or line.lstrip().startswith("#"):
            continue
        try:
            words = shlex.split(line, comments=True)
        except ValueError as exc:
            raise ValuesError(f"{where}:{number}: {exc}") from None
        if words and words[0] == "export":
            words = words[1:]
        pairs = [word.partition("=") for word in words]
        if not pairs or any(not sep or not _NAME.match(name) for name, sep, _ in pairs):
            continue
        for name, _, value in pairs:
            found[name] = _one_line(value, f"{where}:{number}")
    return found


def _one_line(value: str, where: str) -> str:
    if "\n" in value or "\r" in value:
        raise ValuesError(f"{where}: a value must fit on one line (it is filled into a single line)")
    return value


def combine(env_files: Iterable[Mapping[str, str]], assignments: Iterable[tuple[str, str]]) -> Values:
    """The values in force: env files in order, then ``--set`` (the last one given wins)."""
    merged: dict[str, str] = {}
    for values in env_files:
        merged.update(values)
    merged.update(assignments)
    return tuple(sorted(merged.items()))


def fill(text: str, fmt: Format, values: Values) -> str:
    """The text with the given values filled in, as the format's template tool fills it."""
    if not values:
        return text
    table = dict(values)

    def dollar(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(2)
        return table.get(name, match.group(0))

    if fmt != Format.SLURM:
        return _DOLLAR.sub(dollar, text)

    def angle(match: re.Match[str]) -> str:
        return table.get(match.group(1), match.group(0))

    lines = text.split("\n")
    for index, line in enumerate(lines):
        if _SBATCH_LINE.match(line):
            lines[index] = _ANGLE.sub(angle, _DOLLAR.sub(dollar, line))
    return "\n".join(lines)


def names_in(text: str) -> list[str]:
    """The ``$NAME``/``${NAME}`` names a text holds, in the order first seen."""
    return list(dict.fromkeys(m.group(1) or m.group(2) for m in _DOLLAR.finditer(text)))


__all__ = [
    "NO_TEMPLATE_INPUTS",
    "TemplateInputs",
    "Values",
    "ValuesError",
    "combine",
    "fill",
    "names_in",
    "parse_assignment",
    "parse_env_file",
]
