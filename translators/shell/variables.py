"""Which SLURM_* (and SLURMD_*) variables a body reads.

Reads are ``$SLURM_X``, ``${SLURM_X...}`` anywhere outside comments (inside
double quotes, substitutions, here-documents and ``bash -c`` strings too),
bare names inside arithmetic ``$(( ))`` / ``(( ))`` and array subscripts,
``os.environ["SLURM_X"]`` / ``getenv("SLURM_X")`` in inline code, and nsys's
``%q{SLURM_X}`` output patterns.
"""

from __future__ import annotations

import re

_NAME = r"SLURMD?_[A-Za-z0-9_]+"
_REFERENCE = re.compile(rf"\$\{{?[#!]?({_NAME})")
_ENV_CALL = re.compile(rf"(?:getenv|environ(?:\.get)?|ENV)\s*[(\[]\s*['\"]({_NAME})")
_NSYS_PATTERN = re.compile(rf"%q\{{({_NAME})\}}")
_SUBSCRIPT = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*\[([^\]]*)\]")
_BARE = re.compile(rf"(?<![A-Za-z0-9_$])({_NAME})")


def slurm_variables(code: str) -> set[str]:
    """Names read in code (comments already blanked out)."""
    if "SLURM" not in code:
        return set()
    found = {m.group(1) for m in _REFERENCE.finditer(code)}
    if "env" in code or "ENV" in code:  # in each spelling _ENV_CALL reads; most code holds none
        found.update(m.group(1) for m in _ENV_CALL.finditer(code))
    found.update(m.group(1) for m in _NSYS_PATTERN.finditer(code))
    for inner in _arithmetic(code):
        found.update(b.group(1) for b in _BARE.finditer(inner))
    for m in _SUBSCRIPT.finditer(code):
        found.update(b.group(1) for b in _BARE.finditer(m.group(1)))
    return found


def _arithmetic(code: str) -> list[str]:
    """The text of each ``(( ... ))``, up to the first ``))``.

    With str.find and a stop once no ``))`` follows: a regular expression tries every
    unclosed ``((`` against the whole rest of the text, which is quadratic.
    """
    inner = []
    at = 0
    while (start := code.find("((", at)) >= 0:
        end = code.find("))", start + 2)
        if end < 0:
            break
        inner.append(code[start + 2 : end])
        at = end + 2
    return inner
