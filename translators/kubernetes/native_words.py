"""The words a batch script hands its step, as far as they can be known without running it.

A native translation writes the step's argv into the pod spec, so each word
the batch shell would expand must be known: a literal the script assigned, a
``SLURM_*`` value the workload gives (the node count, the pod's index), or the
address of node 0 (``$(hostname)`` expanded by the batch shell, which runs
there; ``scontrol show hostnames ... | head -n 1``). Anything else (a command's
output, a variable of the submitter's environment) cannot be written into a
manifest, and the expansion says why. Nothing is executed.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

from ..shell.lexer import WORD, lex


class RefKind(StrEnum):
    """What a value only the workload knows stands for."""

    SLURM = "slurm"  # a SLURM_* variable
    HEAD = "head"  # node 0's address


@dataclass(frozen=True)
class Ref:
    """A value only the workload knows: a SLURM_* variable (its name) or node 0's address."""

    kind: RefKind
    name: str = ""
    # what it stands for where a number must be known before the job runs ($((...)), srun's
    # --nodes): a LeaderWorkerSet's $(LWS_GROUP_SIZE) is the node count
    value: str | None = None


Segment = str | Ref
Words = list[list[Segment]]


class Unknown(Exception):
    """A word whose value the batch shell computes at run time; the message says what."""


@dataclass
class Variable:
    words: Words  # one word for a scalar, each item for an array
    array: bool = False
    exported: bool = False
    line: int = 0
    computed: str = ""  # why the value cannot be known ("" when it can)
    constant: bool = False  # a SLURM_* value of the job, not set by the script


def known(constants: Mapping[str, str | Variable]) -> dict[str, Variable]:
    """The job's values known before the script runs, as variables: a text, or a variable whose
    value the workload gives each pod (a reference)."""
    return {
        name: value if isinstance(value, Variable) else Variable([[value]], constant=True)
        for name, value in constants.items()
    }


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_HEAD = re.compile(
    r"\A\s*(?:hostname(?:\s+-[sfiI]|\s+--(?:short|fqdn|ip-address|all-ip-addresses))?"
    r"(?:\s*\|\s*awk\s+'\{print \$1\}')?"
    r"|scontrol\s+show\s+hostnames?\s+\S*SLURM_(?:JOB_)?NODELIST\S*\s*\|\s*head\s+(?:-n\s*1|-1))\s*\Z"
)
_SLURM = re.compile(r"SLURMD?_[A-Z0-9_]+\Z")


def _close(text: str, start: int, open_: str, close: str) -> int:
    """The index of the bracket closing the one at start - 1 (quotes skipped)."""
    depth, i, quote = 1, start, ""
    while i < len(text):
        c = text[i]
        if quote:
            if c == quote:
                quote = ""
            elif c == "\\" and quote == '"':
                i += 1
        elif c in "'\"":
            quote = c
        elif c == "\\":
            i += 1
        elif c == open_:
            depth += 1
        elif c == close:
            depth -= 1
            if depth == 0:
                return i
        i += 1
    raise Unknown("an unclosed expansion")


def _substitution(inner: str) -> Segment:
    if _HEAD.match(inner):
        return Ref(RefKind.HEAD)
    raise Unknown(f"$({inner.strip()[:60]}) is computed when the script runs")


def _lookup(name: str, variables: dict[str, Variable], default: str | None, quoted: bool) -> Words:
    var = variables.get(name)
    if var is not None:
        if var.computed:
            raise Unknown(f"${name} is {var.computed}")
        return [list(var.words[0])] if var.words else [[]]  # an array's first item, as bash gives it
    if _SLURM.match(name):
        return [[Ref(RefKind.SLURM, name)]]
    if default is not None:
        return expand(default, variables, quoted=quoted)
    raise Unknown(f"${name} comes from the submitter's environment or is unset")


def _parameter(body: str, variables: dict[str, Variable], quoted: bool) -> Words:
    """``${...}``: NAME, NAME:-default, NAME-default, NAME[@] / NAME[*] (arrays), NAME[0]."""
    positional = re.match(r"[0-9]+(?=:?-)", body)
    if positional:  # ${1:-default}: the script's arguments; a job submitted without them gets the default
        rest = body[positional.end() :]
        return expand(rest[2:] if rest.startswith(":-") else rest[1:], variables, quoted=quoted)
    m = _NAME.match(body)
    if not m:
        raise Unknown(f"${{{body}}} is not a plain parameter")
    name, rest = m.group(0), body[m.end() :]
    if rest in ("[@]", "[*]"):
        var = variables.get(name)
        if var is None or var.computed:
            raise Unknown(f"the array {name} is not set to known words")
        return [list(w) for w in var.words]
    for op in (":-", "-", ":="):
        if rest.startswith(op):
            return _lookup(name, variables, rest[len(op) :], quoted)
    if rest in ("", "[0]"):
        return _lookup(name, variables, None, quoted)
    raise Unknown(f"${{{body}}} changes the value when the script runs")


# A word with no quote, escape, expansion or blank: the word itself (what the loop below makes of it).
_AS_WRITTEN = re.compile(r"[^\\'\"`$\s]*\Z")


def expand(raw: str, variables: dict[str, Variable], quoted: bool = False, split: bool = True) -> Words:
    """The words one shell word becomes (several when an unquoted or ``[@]`` expansion splits).

    ``split=False``: the value of an assignment, which bash does not split (its quotes still go)."""
    if _AS_WRITTEN.match(raw):  # most words: nothing to remove, expand or split
        return [[raw]] if raw else []
    words: Words = [[]]
    quote = '"' if quoted else ""
    i = 0
    touched = False  # an empty quoted word still makes a word

    def add(seg: Segment) -> None:
        if seg == "":
            return
        current = words[-1]
        if isinstance(seg, str) and current and isinstance(current[-1], str):
            current[-1] += seg
        else:
            current.append(seg)

    def add_words(found: Words, split: bool) -> None:
        for k, word in enumerate(found):
            if k:
                words.append([])
            for seg in word:
                if split and isinstance(seg, str) and seg.split() != [seg]:
                    parts = seg.split()
                    for n, part in enumerate(parts):
                        if n:
                            words.append([])
                        add(part)
                else:
                    add(seg)

    while i < len(raw):
        c = raw[i]
        if quote == "'":
            if c == "'":
                quote = ""
            else:
                add(c)
            i += 1
            continue
        if c == "\\":
            nxt = raw[i + 1 : i + 2]
            if quote == '"' and nxt not in ("$", "`", '"', "\\", "\n"):
                add(c)
            elif nxt != "\n":
                add(nxt)
            i += 2
            continue
        if c in "'\"" and (not quote or c == quote):
            touched = True
            quote = "" if quote else c
            i += 1
            continue
        if c == "`":
            end = raw.index("`", i + 1) if "`" in raw[i + 1 :] else len(raw)
            add_words([[_substitution(raw[i + 1 : end])]], False)
            i = end + 1
            continue
        if c == "$" and i + 1 < len(raw):
            nxt = raw[i + 1]
            if raw.startswith("$((", i):
                end = raw.find("))", i + 3)
                if end < 0:
                    raise Unknown("an unclosed arithmetic expansion")
                add(arithmetic(raw[i + 3 : end], variables))
                i = end + 2
                continue
            if nxt == "(":
                end = _close(raw, i + 2, "(", ")")
                add_words([[_substitution(raw[i + 2 : end])]], False)
                i = end + 1
                continue
            if nxt == "{":
                end = _close(raw, i + 2, "{", "}")
                add_words(
                    _parameter(raw[i + 2 : end], variables, bool(quote) or not split), split and not quote
                )
                i = end + 1
                continue
            m = _NAME.match(raw, i + 1)
            if m:
                add_words(_lookup(m.group(0), variables, None, bool(quote) or not split), split and not quote)
                i = m.end()
                continue
            if nxt in "@*#?$!0123456789":
                raise Unknown(f"${nxt} is the script's own run-time value")
        if not quote and split and c.isspace():
            if words[-1]:
                words.append([])
            i += 1
            continue
        add(c)
        i += 1
    if not words[-1] and (len(words) > 1 or not touched):
        words.pop()
    return words


_ARITH_NAME = re.compile(r"\$?\{?([A-Za-z_][A-Za-z0-9_]*)\}?")
_ARITH_OK = re.compile(r"[0-9+\-*/%() ]*\Z")


def arithmetic(expression: str, variables: dict[str, Variable]) -> str:
    """``$(( ... ))`` over integers whose names hold known numbers; Unknown otherwise."""

    def value(m: re.Match[str]) -> str:
        found = _lookup(m.group(1), variables, None, True)
        text = literal(found[0]) if found else None
        if text is None and found and len(found[0]) == 1 and isinstance(found[0][0], Ref):
            text = found[0][0].value  # a value the workload gives, whose number is known
        if text is None or not text.strip().lstrip("-").isdigit():
            raise Unknown(f"$(({expression.strip()})) uses ${m.group(1)}, known when the script runs")
        return f"({text.strip()})"

    numeric = _ARITH_NAME.sub(value, expression)
    if not _ARITH_OK.match(numeric):
        raise Unknown(f"$(({expression.strip()})) is computed when the script runs")
    try:  # integers and + - * / % only: bash's arithmetic, with / and % truncating toward zero
        return str(_evaluate(ast.parse(numeric.replace("/", "//"), mode="eval").body))
    except (SyntaxError, ZeroDivisionError, ValueError) as why:
        raise Unknown(f"$(({expression.strip()})) does not evaluate ({why})") from None


def _evaluate(node: ast.expr) -> int:
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_evaluate(node.operand)
    if isinstance(node, ast.BinOp):
        a, b = _evaluate(node.left), _evaluate(node.right)
        if isinstance(node.op, ast.Add):
            return a + b
        if isinstance(node.op, ast.Sub):
            return a - b
        if isinstance(node.op, ast.Mult):
            return a * b
        if isinstance(node.op, (ast.FloorDiv, ast.Mod)):
            quotient = abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1)
            return quotient if isinstance(node.op, ast.FloorDiv) else a - b * quotient
    raise ValueError("not integer arithmetic")


def array_items(value: str) -> list[str]:
    """The raw words of an array assignment's ``( ... )``."""
    inner = value.strip()
    if inner.startswith("(") and inner.endswith(")"):
        inner = inner[1:-1]
    return [t.text for t in lex(inner).tokens if t.kind == WORD]


def literal(word: list[Segment]) -> str | None:
    """The word's text when it holds no reference."""
    if all(isinstance(seg, str) for seg in word):
        return "".join(seg for seg in word if isinstance(seg, str))
    return None


__all__ = [
    "Ref",
    "Segment",
    "Unknown",
    "Variable",
    "Words",
    "arithmetic",
    "array_items",
    "expand",
    "known",
    "literal",
]
