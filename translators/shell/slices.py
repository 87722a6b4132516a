"""A statement's reading cut out of the reading of the whole script.

Lexing a statement on its own gives what the script's lexing found between
the statement's first and last character, counted from its start: a top-level
statement begins where the lexer and the splitter hold no state (a test checks
this over the corpus and generated scripts). So a statement read for the first
time costs no second lexing and splitting. Scripts with syntax problems are
not cut: recovery from an unterminated construct may reach across statements.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import replace

from .lexer import HereDocSpan, Lexed, Token, new_token
from .split import Statement, Structure

Spans = list[tuple[int, int]]


class Cuts:
    """Every statement's own lexing and structure; spans are sorted to their statement once (linear),
    when the first statement is cut: a script whose statements were all read before needs none."""

    def __init__(self, lexed: Lexed, structure: Structure) -> None:
        self.lexed = lexed
        self.structure = structure
        self._sorted_once = False

    def _sort_once(self) -> None:
        if self._sorted_once:
            return
        self._sorted_once = True
        lexed, structure = self.lexed, self.structure
        self._starts = [s.start for s in structure.statements]
        count = len(self._starts)
        self._heredocs: list[list[HereDocSpan]] = [[] for _ in range(count)]
        for h in lexed.heredocs:
            at = self._owner(h.op_start)
            if at >= 0:
                self._heredocs[at].append(h)
        self._spans = {
            name: self._sorted(getattr(lexed, name))
            for name in ("comments", "arithmetic", "substitutions", "quoted")
        }

    @staticmethod
    def usable(lexed: Lexed, structure: Structure) -> bool:
        return not lexed.problems and not structure.problems

    def _owner(self, pos: int) -> int:
        """Index of the statement holding offset ``pos``, -1 when none does."""
        at = bisect_right(self._starts, pos) - 1
        if at < 0 or pos >= self.structure.statements[at].end:
            return -1
        return at

    def _sorted(self, spans: Spans) -> dict[int, Spans]:
        """Each statement's spans, in the lexer's order; statements without any have no entry."""
        out: dict[int, Spans] = {}
        for span in spans:
            at = self._owner(span[0])
            if at >= 0:
                held = out.get(at)
                if held is None:
                    out[at] = [span]
                else:
                    held.append(span)
        return out

    def statement(self, index: int) -> tuple[Lexed, Structure]:
        """The lexing and structure of statement ``index`` alone, as if its text had been read by itself."""
        stmt = self.structure.statements[index]
        start, end = stmt.start, stmt.end
        tokens = self.lexed.tokens
        last = stmt.last
        if last < len(tokens) and tokens[last].start < end:
            last += 1  # the newline that carried the statement's here-document bodies
        shape = Structure(
            statements=[Statement(0, stmt.last - stmt.first, 0, end - start)],
            roles=self.structure.roles[stmt.first : last],
            depths=self.structure.depths[stmt.first : last],
        )
        if start == 0 and len(self.structure.statements) == 1:
            return self._only(stmt, last), shape
        self._sort_once()

        def own_spans(name: str) -> Spans:
            return [(a - start, b - start) for a, b in self._spans[name].get(index, ())]

        own = Lexed(
            tokens=[
                new_token(Token, (t[0], t[1], t[2] - start, t[3] - start)) for t in tokens[stmt.first : last]
            ],
            heredocs=[
                replace(
                    h,
                    op_start=h.op_start - start,
                    delimiter_end=h.delimiter_end - start,
                    body_start=h.body_start - start,
                    body_end=h.body_end - start,
                    end=h.end - start,
                )
                for h in self._heredocs[index]
            ],
            comments=own_spans("comments"),
            arithmetic=own_spans("arithmetic"),
            substitutions=own_spans("substitutions"),
            quoted=own_spans("quoted"),
        )
        return own, shape

    def _only(self, stmt: Statement, last: int) -> Lexed:
        """The lexing of the one statement of a text that starts with it (a line, a piece): its
        offsets are already its own, so the tokens are kept and only what lies after its end is left out."""
        lexed, end = self.lexed, stmt.end

        def own_spans(spans: Spans) -> Spans:
            return [span for span in spans if span[0] < end]

        return Lexed(
            tokens=lexed.tokens[stmt.first : last],
            heredocs=[h for h in lexed.heredocs if h.op_start < end],
            comments=own_spans(lexed.comments),
            arithmetic=own_spans(lexed.arithmetic),
            substitutions=own_spans(lexed.substitutions),
            quoted=own_spans(lexed.quoted),
        )
