"""Argo ``depends`` expressions: parsed, turned into Slurm dependency types, and written back.

The grammar is Argo's: operands ``task`` or ``task.Result``, operators ``!``,
``&&`` (binds tighter) and ``||``, and parentheses. A bare ``task`` stands for
``task.Succeeded || task.Skipped || task.Daemoned``. Slurm can only say "after
all of these" (``,``) or "after any of these" (``?``), each with a type per
task, so the expression is cut into its top-level AND terms; a term that is an
OR of one task's results gets the type of that set of results (``fields``),
an OR over several tasks of one type becomes a ``?`` list, and anything else
(a negation, an AND inside an OR) has no Slurm form: it is waited for with
``afterany`` on every task it names and reported.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from migrate.vocab import DependencyType, TaskResult

from . import fields

_TOKEN = re.compile(r"\s*(?:(\(|\)|&&|\|\||!)|([A-Za-z0-9][-A-Za-z0-9_]*(?:\.[A-Za-z]+)?))")


class DependsSyntaxError(ValueError):
    """The expression is not one Argo accepts; the message says where."""


@dataclass(frozen=True)
class Operand:
    task: str
    result: TaskResult | None = None  # None: the bare task name


@dataclass(frozen=True)
class Not:
    inner: Expr


@dataclass(frozen=True)
class And:
    parts: tuple[Expr, ...]


@dataclass(frozen=True)
class Or:
    parts: tuple[Expr, ...]


Expr = Operand | Not | And | Or


def _tokens(text: str) -> list[str]:
    out: list[str] = []
    pos = 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        match = _TOKEN.match(text, pos)
        if match is None:
            raise DependsSyntaxError(f"unexpected {text[pos:].strip()[:20]!r} at character {pos + 1}")
        out.append(match.group(1) or match.group(2))
        pos = match.end()
    return out


class _Parser:
    def __init__(self, tokens: list[str]) -> None:
        self.tokens = tokens
        self.at = 0

    def peek(self) -> str | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def take(self) -> str:
        token = self.peek()
        if token is None:
            raise DependsSyntaxError("the expression ends too early")
        self.at += 1
        return token

    def either(self) -> Expr:
        return self.joined("||", self.both, Or)

    def both(self) -> Expr:
        return self.joined("&&", self.negation, And)

    def joined(self, operator: str, operand: Callable[[], Expr], node: type[And] | type[Or]) -> Expr:
        parts = [operand()]
        while self.peek() == operator:
            self.take()
            parts.append(operand())
        return parts[0] if len(parts) == 1 else node(tuple(parts))

    def negation(self) -> Expr:
        if self.peek() == "!":
            self.take()
            return Not(self.negation())
        return self.atom()

    def atom(self) -> Expr:
        token = self.take()
        if token == "(":
            inner = self.either()
            if self.take() != ")":
                raise DependsSyntaxError("a '(' is not closed")
            return inner
        if token in (")", "&&", "||"):
            raise DependsSyntaxError(f"{token!r} where a task was expected")
        task, _, result = token.partition(".")
        if not result:
            return Operand(task)
        try:
            return Operand(task, TaskResult(result))
        except ValueError:
            valid = ", ".join(TaskResult)
            raise DependsSyntaxError(
                f"task result {result!r} for task {task!r} is not one of {valid}"
            ) from None


def parse(text: str) -> Expr:
    """The expression tree of ``text``; DependsSyntaxError when Argo would refuse it."""
    parser = _Parser(_tokens(text))
    expr = parser.either()
    if parser.peek() is not None:
        raise DependsSyntaxError(f"unexpected {parser.peek()!r} after a complete expression")
    return expr


def from_dependencies(names: list[str], continue_on: dict[str, list[TaskResult]] | None = None) -> Expr:
    """``dependencies: [A, B]`` as the expression Argo expands it to (``A && B``, with continueOn)."""
    parts: list[Expr] = []
    for name in names:
        extra = (continue_on or {}).get(name, [])
        if extra:
            parts.append(Or(tuple(Operand(name, r) for r in (*fields.BARE_TASK, *extra))))
        else:
            parts.append(Operand(name))
    return parts[0] if len(parts) == 1 else And(tuple(parts))


def tasks_of(expr: Expr) -> list[str]:
    """The task names an expression mentions, in order of first mention."""
    out: dict[str, None] = {}

    def walk(node: Expr) -> None:
        if isinstance(node, Operand):
            out.setdefault(node.task, None)
        elif isinstance(node, Not):
            walk(node.inner)
        else:
            for part in node.parts:
                walk(part)

    walk(expr)
    return list(out)


@dataclass(frozen=True)
class SlurmDependency:
    """One ``--dependency`` group: a type on tasks, joined by ``?`` when ``any_of``."""

    type: DependencyType
    tasks: tuple[str, ...]
    any_of: bool = False
    exact: bool = True
    why: str = ""
    written: str = ""  # the term of the expression it comes from


def to_slurm(expr: Expr) -> list[SlurmDependency]:
    """The Slurm dependencies of an expression: one per top-level AND term."""
    terms = list(expr.parts) if isinstance(expr, And) else [expr]
    return [_term(term) for term in terms]


def _results(node: Expr) -> dict[str, set[TaskResult]] | None:
    """An OR of operands, as results per task; None when it holds AND or NOT."""
    if isinstance(node, Operand):
        results = {node.result} if node.result else set(fields.BARE_TASK)
        return {node.task: results}
    if isinstance(node, Or):
        merged: dict[str, set[TaskResult]] = {}
        for part in node.parts:
            inner = _results(part)
            if inner is None:
                return None
            for task, results in inner.items():
                merged.setdefault(task, set()).update(results)
        return merged
    return None


def _term(term: Expr) -> SlurmDependency:
    written = render_expr(term)
    per_task = _results(term)
    tasks = tuple(tasks_of(term))
    fallback = SlurmDependency(
        DependencyType.AFTER_ANY,
        tasks,
        exact=False,
        why=f"{written}: no Slurm dependency type says this; afterany waits for every task it names",
        written=written,
    )
    if per_task is None:
        return fallback
    readings = {task: fields.slurm_reading(frozenset(results)) for task, results in per_task.items()}
    kinds = {r.type for r in readings.values() if r is not None}
    if None in readings.values() or len(kinds) != 1:
        return fallback
    exact = all(r.exact for r in readings.values() if r is not None)
    why = "; ".join(dict.fromkeys(r.why for r in readings.values() if r is not None and r.why))
    return SlurmDependency(kinds.pop(), tasks, any_of=len(tasks) > 1, exact=exact, why=why, written=written)


def why_approximated(term: str) -> str:
    """Why a term of an expression has only the nearest Slurm type (for a raw item written as
    'term -> type'); empty when the type says it exactly or the term does not parse."""
    try:
        found = to_slurm(parse(term))
    except DependsSyntaxError:
        return ""
    return "; ".join(d.why for d in found if not d.exact and d.why)


def render_expr(expr: Expr, outer: int = 0) -> str:
    """The expression as Argo text, with parentheses only where needed."""
    if isinstance(expr, Operand):
        return expr.task + (f".{expr.result}" if expr.result else "")
    if isinstance(expr, Not):
        return "!" + render_expr(expr.inner, 3)
    level = 2 if isinstance(expr, And) else 1
    joiner = " && " if level == 2 else " || "
    text = joiner.join(render_expr(part, level) for part in expr.parts)
    return f"({text})" if outer > level else text


def condition(dep_type: str, task: str) -> str:
    """The depends term that waits for ``task`` as the Slurm type says."""
    results = fields.CONDITIONS[dep_type].results
    if len(results) == 1:
        return f"{task}.{results[0]}"
    return "(" + " || ".join(f"{task}.{r}" for r in results) + ")"


__all__ = [
    "And",
    "DependsSyntaxError",
    "Expr",
    "Not",
    "Operand",
    "Or",
    "SlurmDependency",
    "condition",
    "from_dependencies",
    "parse",
    "render_expr",
    "tasks_of",
    "to_slurm",
]
