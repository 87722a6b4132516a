"""Template placeholders in a translated script: read from the environment sbatch runs in.

A manifest's ``${IMAGE_URI}`` that no value was given for would reach the
script inside single quotes, where bash expands nothing: the job would pull an
image literally named ``${IMAGE_URI}``. Here each such placeholder is opened
to the shell (``'x${A}y'`` becomes ``'x'"${A}"'y'``), so that it takes the
value of the variable in the environment sbatch exports to the job
(``A=... sbatch job.sbatch``), and a guard at the top stops the job at once,
with the fix, when it is unset. Comments are left as they are.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_REFERENCE = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")


def open_to_shell(body: list[str], names: Iterable[str]) -> tuple[list[str], list[str]]:
    """The body with the named placeholders expandable, and the names that occurred, in order."""
    wanted = set(names)
    if not wanted:
        return body, []
    text = "\n".join(body)
    out: list[str] = []
    found: dict[str, None] = {}
    quote = ""  # the quote we are inside: "'", '"' or ""
    index = 0
    while index < len(text):
        char = text[index]
        if quote == "'":
            match = _REFERENCE.match(text, index) if char == "$" else None
            name = (match.group(1) or match.group(2)) if match else None
            if match and name in wanted:
                out.append(f"'\"${{{name}}}\"'")
                found[name] = None
                index = match.end()
                continue
            if char == "'":
                quote = ""
        elif char == "\\" and quote != "'":
            out.append(text[index : index + 2])
            index += 2
            continue
        elif char in "'\"" and quote in ("", char):
            quote = "" if quote else char
        elif char == "#" and not quote and (index == 0 or text[index - 1] in " \t\n;"):
            end = text.find("\n", index)
            end = len(text) if end < 0 else end
            out.append(text[index:end])
            index = end
            continue
        out.append(char)
        index += 1
    return "".join(out).split("\n"), list(found)


def guards(names: Iterable[str], script: str) -> list[str]:
    """One line per placeholder that stops the job when its variable is unset, saying how to set it."""
    return [
        f': "${{{name}:?is a template placeholder with no value: run {name}=VALUE sbatch {script}, '
        f'or translate again with --set {name}=VALUE}}"'
        for name in names
    ]


__all__ = ["guards", "open_to_shell"]
