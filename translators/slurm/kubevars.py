"""Kubernetes' own ``$(VAR)`` expansion in command, args and env values, as shell text.

Kubernetes rewrites a container's ``command``, ``args`` and env values before
the program sees them: ``$(NAME)`` becomes the value of the container's env var
``NAME`` when one is defined (else it stays as written), and ``$$`` becomes a
single ``$``. The kubelet does this, not a shell, so the pieces are parsed here
the same way and written back for bash: literal text single-quoted, references
as ``"${NAME}"`` so that bash fills in the value the script exported.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Container
from dataclasses import dataclass

from .quoting import shell_word

_SHELL_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


@dataclass(frozen=True)
class Ref:
    """A ``$(NAME)`` that refers to a defined env var."""

    name: str


Part = str | Ref


def split(text: str, defined: Callable[[str], bool] | Container[str]) -> list[Part]:
    """``text`` as literal pieces and references, following the kubelet's expansion rules."""
    is_defined = defined if callable(defined) else defined.__contains__
    parts: list[Part] = []
    literal: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch != "$" or i + 1 >= n:
            literal.append(ch)
            i += 1
            continue
        nxt = text[i + 1]
        if nxt == "$":  # escaped operator
            literal.append("$")
            i += 2
            continue
        if nxt == "(":
            close = text.find(")", i + 2)
            if close < 0:  # incomplete reference: kept, and scanning goes on after "$("
                literal.append("$(")
                i += 2
                continue
            name = text[i + 2 : close]
            if is_defined(name) and _SHELL_NAME.match(name):
                if literal:
                    parts.append("".join(literal))
                    literal = []
                parts.append(Ref(name))
            else:
                literal.append(text[i : close + 1])  # unknown names stay as written
            i = close + 1
            continue
        literal.append("$" + nxt)
        i += 2
    if literal:
        parts.append("".join(literal))
    return parts


def expanded_literal(text: str, values: dict[str, str]) -> str:
    """The value the kubelet would produce when every reference has a known literal value."""
    return "".join(values[p.name] if isinstance(p, Ref) else p for p in split(text, values))


def shell_text(parts: list[Part], rename: Callable[[str], str] = lambda name: name) -> str:
    """One bash word for the pieces: literals single-quoted, references double-quoted."""
    if not parts:
        return "''"
    out = []
    for part in parts:
        if isinstance(part, Ref):
            out.append('"${' + rename(part.name) + '}"')
        else:
            out.append(shell_word(part))
    return "".join(out)


def has_refs(parts: list[Part]) -> bool:
    return any(isinstance(p, Ref) for p in parts)


__all__ = ["Part", "Ref", "expanded_literal", "has_refs", "shell_text", "split"]
