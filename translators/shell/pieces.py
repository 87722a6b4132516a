"""A script cut into pieces that read alone as they read inside it, each remembered by its text.

Lexing and splitting a whole script cost as much as the rest of its reading,
yet sites repeat lines across thousands of scripts. A statement begins where
the lexer and the splitter hold no state (see :mod:`.slices`), so a script can
be cut at such points without being read whole:

- a line that is a complete statement by itself (or blank, or a comment) is a
  piece;
- a statement over several lines (a loop, a function, a here-document,
  continuation lines, an array) is a piece that reaches to the line where, by
  what each of its lines opens and closes when read alone, nothing is left
  open; it is lexed and split by itself.

What a piece holds (its statements, its text with comments blanked) is
remembered by its text. A piece counts only if its own reading is clean and
ends at rest. When a guessed piece does not, the rest of the script is tried
as one piece; when that fails too, the script has a syntax problem and is
read whole, as before.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import NamedTuple

from .lexer import NEWLINE, OP, Lexed, blank_comments, dequote, lex, line_finder
from .slices import Cuts
from .split import Structure, split

Prepared = Callable[[], tuple[Lexed, Structure]]
# (line of the statement in the script, its text, its lexing and structure when just read)
Statements = list[tuple[int, str, Prepared | None]]


@dataclass(frozen=True, slots=True)
class Piece:
    statements: tuple[tuple[int, int, int], ...]  # (line within the piece, start, end) of each
    code: str | None  # the text with comments blanked; None when it has no comment
    newlines: int


class _Open(NamedTuple):
    """What a line that is no statement by itself leaves open for the lines after it."""

    depth: int  # compound commands opened minus closed
    ends: int  # how it ends: _PLAIN, _CONTINUES, _QUOTE or _UNKNOWN
    delimiters: tuple[tuple[str, bool], ...]  # its here-documents: (delimiter, tabs stripped)
    opens_parens: int  # $( ... ) and arrays left open
    closes_parens: int  # ')' with nothing to close


_PLAIN, _CONTINUES, _QUOTE, _UNKNOWN = range(4)
_CLOSERS = frozenset({"unexpected 'fi'", "unexpected 'done'", "unexpected 'esac'", "unexpected '}'"})

_LINES: dict[str, Piece | _Open] = {}
_LINES_MAX = 32768  # about 5 MB; a site of 10,000 scripts has some 26,000 distinct lines
# What a line holds, one object per shape: lines differ in their text far more than in it.
_SHAPES: dict[Piece | _Open, Piece | _Open] = {}
_CHUNKS: dict[str, Piece] = {}
_CHUNKS_MAX = 16384  # about 6 MB
_CHUNK_KEPT_CHARS = 600  # longer pieces (argument arrays, long functions) seldom come again


def cut(text: str) -> tuple[Statements, str] | None:
    """Every statement of ``text`` and the text with comments blanked; None when it must be read whole."""
    n = len(text)
    pos = line = 0
    statements: Statements = []
    codes: list[str] = []
    lines = _LINES
    while pos < n:
        eol = text.find("\n", pos)
        end = n if eol < 0 else eol + 1
        source = text[pos:end]
        known = lines.get(source)
        fresh: tuple[Lexed, Structure] | None = None
        if known is None:
            known, fresh = _read_line(source, eol < 0)
        if isinstance(known, Piece):
            codes.append(source if known.code is None else known.code)
            if known.statements:
                _, start, stop = known.statements[0]
                prepared = None if fresh is None else partial(Cuts(*fresh).statement, 0)
                statements.append((line, source[start:stop], prepared))
            pos = end
            line += 1
            continue
        read = _read_chunk(text, pos, _chunk_end(text, pos))
        if read is None:
            return None
        chunk, piece, cuts = read
        for at, (within, start, stop) in enumerate(piece.statements):
            prepared = None if cuts is None else partial(cuts.statement, at)
            statements.append((line + within, chunk[start:stop], prepared))
        codes.append(chunk if piece.code is None else piece.code)
        pos += len(chunk)
        line += piece.newlines
    return statements, "".join(codes)


def _read_line(source: str, last: bool) -> tuple[Piece | _Open, tuple[Lexed, Structure] | None]:
    lexed = lex(source, record_substitutions=True)
    structure = split(lexed.tokens)
    if _at_rest(lexed, structure, last):
        known: Piece | _Open = _piece(source, lexed, structure)
        fresh: tuple[Lexed, Structure] | None = (lexed, structure)
    else:
        known, fresh = _left_open(lexed, structure), None
    if len(_LINES) >= _LINES_MAX:
        _LINES.clear()
        _SHAPES.clear()
    _LINES[source] = known = _SHAPES.setdefault(known, known)
    return known, fresh


def _read_chunk(text: str, pos: int, end: int) -> tuple[str, Piece, Cuts | None] | None:
    """The piece from ``pos`` to ``end``, or to the end of the text when that one is not whole."""
    for stop in (end, len(text)) if end < len(text) else (end,):
        chunk = text[pos:stop]
        known = _CHUNKS.get(chunk)
        if known is not None:
            return chunk, known, None
        lexed = lex(chunk, record_substitutions=True)
        structure = split(lexed.tokens)
        if _at_rest(lexed, structure, stop == len(text)):
            piece = _piece(chunk, lexed, structure)
            if len(chunk) <= _CHUNK_KEPT_CHARS:
                if len(_CHUNKS) >= _CHUNKS_MAX:
                    _CHUNKS.clear()
                _CHUNKS[chunk] = piece
            return chunk, piece, Cuts(lexed, structure)
    return None


def _at_rest(lexed: Lexed, structure: Structure, last: bool) -> bool:
    """Read without a problem and ending where the lexer and the splitter hold nothing open."""
    if lexed.problems or structure.problems:
        return False
    tokens = lexed.tokens
    if not tokens or tokens[-1].kind != NEWLINE:
        return last  # nothing but blanks and comments, or a continuation line: whole at the end only
    statements = structure.statements
    return not statements or statements[-1].last < len(tokens)  # the last newline closed it


def _piece(source: str, lexed: Lexed, structure: Structure) -> Piece:
    newlines = source.count("\n")
    line_of = line_finder(source) if newlines > 1 else None  # on one line, every statement is on it
    code = blank_comments(source, lexed)
    return Piece(
        statements=tuple(
            [(line_of(s.start) if line_of else 0, s.start, s.end) for s in structure.statements]
        ),
        code=None if code == source else code,
        newlines=newlines,
    )


def _left_open(lexed: Lexed, structure: Structure) -> _Open:
    """What the line opens and closes, from the problems it has when read alone."""
    tokens = lexed.tokens
    delimiters = tuple(
        (dequote(tokens[i + 1].text), tok.text == "<<-")
        for i, tok in enumerate(tokens[:-1])
        if tok.kind == OP and tok.text in ("<<", "<<-") and tokens[i + 1].kind != NEWLINE
    )
    ends = _PLAIN
    opens_parens = closes_parens = depth = 0
    for _, message in lexed.problems:
        if message.startswith("unterminated") and message.endswith("quote"):
            ends = _QUOTE
        elif message == "unterminated $( ... )":
            opens_parens += 1
        elif not message.startswith("here-document is not terminated"):
            ends = _UNKNOWN
    for _, message in structure.problems:
        if message in _CLOSERS:
            depth -= 1
        elif " is never closed (missing " in message:
            depth += 1
        elif message == "unexpected ')'":
            closes_parens += 1
        elif message.endswith("at the end of the body") and ends == _PLAIN:
            ends = _CONTINUES
    if ends == _PLAIN and (
        not tokens or tokens[-1].kind != NEWLINE or not (lexed.problems or structure.problems)
    ):
        ends = _CONTINUES  # a continuation line, or a function name() waiting for its body
    return _Open(depth, ends, delimiters, opens_parens, closes_parens)


def _chunk_end(text: str, pos: int) -> int:
    """Where the statement starting at ``pos`` likely ends: after the first line that leaves nothing open."""
    n = len(text)
    depth = parens = 0
    in_quote = False
    delimiters: list[tuple[str, bool]] = []
    while pos < n:
        eol = text.find("\n", pos)
        end = n if eol < 0 else eol + 1
        source = text[pos:end]
        known = _LINES.get(source)
        if known is None:
            known, _ = _read_line(source, eol < 0)
        pos = end
        if isinstance(known, _Open):
            if known.ends == _QUOTE:
                in_quote = not in_quote
                if in_quote:
                    continue
            elif in_quote:
                continue
            if known.ends == _UNKNOWN:
                return n
            depth += known.depth
            parens = max(parens - known.closes_parens, 0) + known.opens_parens
            delimiters.extend(known.delimiters)
            if known.ends == _CONTINUES:
                continue
        elif in_quote:
            continue
        for delimiter, strip_tabs in delimiters:  # the bodies follow the line that ends the command
            pos = _after_body(text, pos, delimiter, strip_tabs)
        delimiters.clear()
        if depth <= 0 and parens <= 0:
            return pos
    return n


def _after_body(text: str, pos: int, delimiter: str, strip_tabs: bool) -> int:
    n = len(text)
    while pos < n:
        eol = text.find("\n", pos)
        end = n if eol < 0 else eol + 1
        body = text[pos : end - 1 if eol >= 0 else end]
        pos = end
        if (body.lstrip("\t") if strip_tabs else body) == delimiter:
            break
    return pos


def clear() -> None:
    _LINES.clear()
    _SHAPES.clear()
    _CHUNKS.clear()


__all__ = ["Piece", "Prepared", "Statements", "clear", "cut"]
