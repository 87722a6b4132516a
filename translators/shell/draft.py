"""A mutable command under construction, shared by both readers."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache

from .lexer import dequote, is_assignment
from .model import Command, HereDoc, Redirect, Word

LineOf = Callable[[int], int]

# The same words come back in statement after statement (every "$SLURM_JOB_ID", every path):
# unquote each spelling once.
unquoted = lru_cache(maxsize=32768)(dequote)


@dataclass
class Draft:
    start: int  # offset of the first part, for the command text
    end: int
    nested: bool
    words: list[Word] = field(default_factory=list)
    assignments: list[Word] = field(default_factory=list)
    redirects: list[tuple[int, Redirect]] = field(default_factory=list)  # (operator offset, redirect)
    background: bool = False

    def add_word(self, raw: str, start: int, end: int, line_of: LineOf) -> None:
        word = Word(raw, unquoted(raw), line_of(start))
        if not self.words and is_assignment(raw):
            self.assignments.append(word)
        else:
            self.words.append(word)
        self._extend(start, end)

    def add_redirect(
        self,
        op: str,
        op_start: int,
        fd: str,
        target: tuple[str, int, int] | None,
        heredoc: HereDoc | None,
        line_of: LineOf,
    ) -> None:
        word = None
        end = op_start + len(op)
        if target is not None:
            raw, t_start, end = target
            # '2>&1' and '>&-' duplicate or close a descriptor: there is no file
            if not (op in (">&", "<&") and ((raw.isascii() and raw.isdigit()) or raw == "-")):
                word = Word(raw, unquoted(raw), line_of(t_start))
        self.redirects.append((op_start, Redirect(op, word, fd, heredoc)))
        self._extend(op_start - len(fd), end)

    def _extend(self, start: int, end: int) -> None:
        # comparisons rather than min() and max(): every word of every command comes here
        if start < self.start:
            self.start = start
        if end > self.end:
            self.end = end

    def freeze(self, text: str, line_of: LineOf) -> Command:
        # positional: a Command is made for every statement read, and keywords cost more per call
        return Command(
            tuple(self.words),
            tuple(self.assignments) if self.assignments else (),
            tuple([r for _, r in sorted(self.redirects, key=_offset)]) if self.redirects else (),
            line_of(self.start),
            text[self.start : self.end],
            self.background,
            self.nested,
        )


def _offset(redirect: tuple[int, Redirect]) -> int:
    return redirect[0]


def heredoc_value(
    text: str, span_delimiter: str, quoted: bool, body: tuple[int, int], line_of: LineOf
) -> HereDoc:
    return HereDoc(span_delimiter, quoted, text[body[0] : body[1]], line_of(body[0]))
