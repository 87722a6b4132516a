"""A tolerant bash tokenizer: words, operators, newlines, here-documents.

It only finds where things begin and end; it never expands or executes. It
knows enough quoting (single, double, ``$'...'``, backslashes, line
continuations), nesting (``$(...)``, backticks, ``${...}``, ``$((...))``,
process substitution, array values) and here-document bodies to cut a body
into tokens the way bash would. Anything unterminated is reported with its
position and the token is closed at the end of that line, so one stray quote
does not swallow the rest of the file.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple

WORD = 0
OP = 1
NEWLINE = 2

# Longest operators first so that '>>' wins over '>'.
_OPERATOR = re.compile(r";;&|;;|;&|&&|&>>|&>|\|\||\|&|<<<|<<-|<<|<&|<>|>>|>&|>\||[;&|<>()]")
_BLANK = re.compile(r"(?:[ \t]|\\\n)+")
_MORE_BLANK = frozenset({" ", "\t", "\\"})  # what may continue a blank run after a space
_PLAIN = re.compile(r"[^ \t\n'\"\\$`;&|()<>]+")
# A word of plain characters that ends where a word must end (a blank, an operator, the end).
_SIMPLE_WORD = re.compile(r"[^ \t\n'\"\\$`;&|()<>]+(?=[ \t\n;&|)]|\Z)")
_OPERATOR_FIRST = frozenset(";&|<>()")
# What may start a token other than a word: blanks, a newline, a comment, an operator.
_NOT_WORD_START = frozenset(" \t\\\n#") | _OPERATOR_FIRST
_DOUBLE_PLAIN = re.compile(r"[^\"\\$`]+")
_BRACE_PLAIN = re.compile(r"[^}'\"\\$`]+")
_ARITH_EVENT = re.compile(r"[()]|\n(?=\n)")
_ASSIGN_PREFIX = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?\+?=\Z")
REDIRECT_OPS = frozenset({"<", ">", ">>", "<<", "<<-", "<<<", "<&", ">&", "&>", "&>>", "<>", ">|"})

# Beyond this nesting of $( ... ) we stop recursing and count parentheses.
_MAX_DEPTH = 48


class Token(NamedTuple):
    kind: int
    text: str
    start: int
    end: int


# Tokens are made by the million: ``new_token(Token, (kind, text, start, end))`` is ``Token(...)``
# without the Python-level __new__ that NamedTuple generates, at less than half the cost.
new_token = tuple.__new__


@dataclass(frozen=True)
class HereDocSpan:
    op_start: int  # position of the '<<' operator
    delimiter_end: int  # end of the delimiter word
    delimiter: str
    quoted: bool
    body_start: int
    body_end: int  # start of the terminator line
    end: int  # end of the terminator line (its newline excluded)
    terminated: bool


@dataclass(slots=True)  # one per statement and line read: slots are quicker to make and to read
class Lexed:
    tokens: list[Token] = field(default_factory=list)
    heredocs: list[HereDocSpan] = field(default_factory=list)
    comments: list[tuple[int, int]] = field(default_factory=list)
    arithmetic: list[tuple[int, int]] = field(default_factory=list)  # $(( ... )) spans
    substitutions: list[tuple[int, int]] = field(default_factory=list)  # inner spans of $( ), ` `, <( )
    quoted: list[tuple[int, int]] = field(default_factory=list)  # inner spans of '...', "...", $'...', ${...}
    problems: list[tuple[int, str]] = field(default_factory=list)  # (position, message)


class _Pending(NamedTuple):
    op_start: int
    delimiter_end: int
    delimiter: str
    quoted: bool
    strip_tabs: bool


class Lexer:
    def __init__(self, text: str, record_substitutions: bool = False) -> None:
        self.text = text
        self.n = len(text)
        self.out = Lexed()
        self.depth = 0
        # Unclosed $( make every enclosing level scan to the end of the text again; past this
        # many steps inside substitutions, each one is closed at the end of its line instead,
        # so that hostile input costs linear time (real scripts stay far below it).
        self.nested_budget = 20 * self.n + 20_000
        # (inner start, inner end) of the outermost substitutions seen in words
        self.substitutions: list[tuple[int, int]] | None = [] if record_substitutions else None
        self.arith_ends: dict[int, int] | None = None  # see arithmetic_ends

    # -- entry points -------------------------------------------------------
    def run(self) -> Lexed:
        self._lex(0, nested=False)
        self.out.substitutions = self.substitutions or []
        # A substitution read again after a recovery records its comments again: once each.
        if len(self.out.comments) > 1:
            self.out.comments = sorted(set(self.out.comments))
        return self.out

    def _problem(self, pos: int, message: str) -> None:
        self.out.problems.append((pos, message))

    def _recover(self, pos: int, message: str) -> int:
        """Record an unterminated construct and close it at the end of its line."""
        self._problem(pos, message)
        eol = self.text.find("\n", pos)
        return self.n if eol < 0 else eol

    # -- the token loop -----------------------------------------------------
    def _lex(self, i: int, nested: bool) -> int:
        """Tokenize from i; when nested, stop after the ')' closing a $( ... )."""
        text, n = self.text, self.n
        start = i - 1
        paren_depth = 0
        # The paren depth at each open 'case': a ')' at that depth ends a pattern, not the $( ... ).
        case_parens: list[int] = []
        pending: list[_Pending] = []
        delimiter_op: tuple[int, bool] | None = None  # a '<<' waiting for its word
        emit = None if nested else self.out.tokens.append
        new = new_token
        while i < n:
            if nested:
                self.nested_budget -= 1
                if self.nested_budget < 0:
                    return self._recover(start, "substitution too deeply unbalanced to read")
            c = text[i]
            if c == " " and text[i + 1 : i + 2] not in _MORE_BLANK:  # one space, the usual gap
                i += 1
                continue
            if c in _NOT_WORD_START:  # else a word begins: most tokens, past one test
                if c in " \t\\":
                    m = _BLANK.match(text, i)
                    if m:
                        i = m.end()
                        continue
                if c == "\n":
                    if delimiter_op is not None:
                        self._problem(delimiter_op[0], "here-document operator without a delimiter")
                        delimiter_op = None
                    nl = i
                    i += 1
                    end = nl + 1
                    if pending:
                        i, end = self._read_heredocs(pending, i)
                        pending = []
                    if emit:
                        emit(new(Token, (NEWLINE, "\n", nl, end)))
                    continue
                if c == "#":
                    eol = text.find("\n", i)
                    eol = n if eol < 0 else eol
                    self.out.comments.append((i, eol))
                    i = eol
                    continue
                if c == "(" and text.startswith("((", i):
                    end = self._arith_end(i)
                    if end > 0:  # an arithmetic command: (( i++ )), for (( ... ))
                        if emit:
                            emit(new(Token, (WORD, text[i:end], i, end)))
                        i = end
                        continue
                if c in _OPERATOR_FIRST and not (c in "<>" and text.startswith("(", i + 1)):
                    op = _OPERATOR.match(text, i)
                    if op:
                        tok = op.group()
                        if delimiter_op is not None:
                            self._problem(delimiter_op[0], "here-document operator without a delimiter")
                            delimiter_op = None
                        if nested:
                            if tok == "(":
                                paren_depth += 1
                            elif tok == ")":
                                if case_parens and case_parens[-1] == paren_depth:
                                    pass  # a case pattern's ')'
                                elif paren_depth > 0:
                                    paren_depth -= 1
                                else:
                                    return op.end()
                        if tok in ("<<", "<<-"):
                            delimiter_op = (i, tok == "<<-")
                        if emit:
                            emit(new(Token, (OP, tok, i, op.end())))
                        i = op.end()
                        continue
            simple = _SIMPLE_WORD.match(text, i)
            if simple:  # nothing inside but plain characters: what _word would find, found faster
                j = simple.end()
            else:
                j = self._word(i)
                if j <= i:
                    j = i + 1  # always make progress, whatever the input
            word = text[i:j]
            if delimiter_op is not None:
                quoted = any(q in word for q in "'\"\\")
                pending.append(_Pending(delimiter_op[0], j, dequote(word), quoted, delimiter_op[1]))
                delimiter_op = None
            elif nested:
                if word == "case":
                    case_parens.append(paren_depth)
                elif word == "esac" and case_parens:
                    case_parens.pop()
            if emit:
                emit(new(Token, (WORD, word, i, j)))
            i = j
        if delimiter_op is not None:
            self._problem(delimiter_op[0], "here-document operator without a delimiter")
        for p in pending:
            self._problem(p.op_start, f"here-document has no body (wanted {p.delimiter!r})")
        if nested:
            return self._recover(start, "unterminated $( ... )")
        return n

    def _read_heredocs(self, pending: list[_Pending], i: int) -> tuple[int, int]:
        """Consume the bodies of the here-documents opened on the line just ended."""
        text, n = self.text, self.n
        end = i - 1
        for p in pending:
            body_start = i
            while True:
                if i >= n:
                    self._problem(p.op_start, f"here-document is not terminated (wanted {p.delimiter!r})")
                    self.out.heredocs.append(
                        HereDocSpan(
                            p.op_start, p.delimiter_end, p.delimiter, p.quoted, body_start, n, n, False
                        )
                    )
                    end = n
                    break
                eol = text.find("\n", i)
                line_end = n if eol < 0 else eol
                line = text[i:line_end]
                if (line.lstrip("\t") if p.strip_tabs else line) == p.delimiter:
                    self.out.heredocs.append(
                        HereDocSpan(
                            p.op_start, p.delimiter_end, p.delimiter, p.quoted, body_start, i, line_end, True
                        )
                    )
                    end = line_end
                    i = line_end + 1 if eol >= 0 else n
                    break
                i = line_end + 1 if eol >= 0 else n
        return i, end

    # -- words ----------------------------------------------------------------
    def _word(self, i: int) -> int:
        """Return the end of the word starting at i."""
        text, n = self.text, self.n
        start = i
        while i < n:
            m = _PLAIN.match(text, i)
            if m:
                i = m.end()
                continue
            c = text[i]
            if c == "'":
                i = self._single(i)
            elif c == '"':
                i = self._double(i)
            elif c == "\\":
                i = min(i + 2, n)
            elif c == "`":
                i = self._backtick(i)
            elif c == "$":
                i = self._dollar(i)
            elif c in "<>" and text.startswith("(", i + 1) and (i == start or text[i - 1] == "="):
                i = self._substitution(i + 1)  # process substitution <( ... ) / >( ... )
            elif c == "(" and i > start and _ASSIGN_PREFIX.match(text, start, i):
                i = self._substitution(i, record=False)  # array value a=( ... )
            elif c == "(" and i > start and text[i - 1] in "@!+*?":
                i = self._balanced(i)  # extended glob @( ... )
            else:
                break
        return i

    def _single(self, i: int) -> int:
        j = self.text.find("'", i + 1)
        if j < 0:
            return self._recover(i, "unterminated single quote")
        self.out.quoted.append((i + 1, j))
        return j + 1

    def _ansi(self, i: int) -> int:
        """$'...' quoting: backslash escapes, ends at an unescaped quote."""
        text, n = self.text, self.n
        j = i + 2
        while j < n:
            c = text[j]
            if c == "\\":
                j += 2
            elif c == "'":
                self.out.quoted.append((i + 2, j))
                return j + 1
            else:
                j += 1
        return self._recover(i, "unterminated $'...' quote")

    def _double(self, i: int) -> int:
        text, n = self.text, self.n
        j = i + 1
        while j < n:
            m = _DOUBLE_PLAIN.match(text, j)
            if m:
                j = m.end()
                continue
            c = text[j]
            if c == '"':
                self.out.quoted.append((i + 1, j))
                return j + 1
            if c == "\\":
                j += 2
            elif c == "$":
                j = self._dollar(j, in_double_quotes=True)
            else:  # backtick
                j = self._backtick(j)
        return self._recover(i, "unterminated double quote")

    def _backtick(self, i: int) -> int:
        text, n = self.text, self.n
        j = i + 1
        while j < n:
            c = text[j]
            if c == "\\":
                j += 2
            elif c == "`":
                if self.substitutions is not None and self.depth == 0:
                    self.substitutions.append((i + 1, j))
                return j + 1
            else:
                j += 1
        return self._recover(i, "unterminated backquote")

    def _dollar(self, i: int, in_double_quotes: bool = False) -> int:
        text = self.text
        nxt = text[i + 1 : i + 2]
        if in_double_quotes and nxt in ("'", '"'):
            return i + 1  # "^${h}$": inside double quotes $' and $" are a plain dollar sign
        if nxt == "(":
            if text.startswith("((", i + 1):
                end = self._arith_end(i + 1)
                if end > 0:
                    self.out.arithmetic.append((i, end))
                    return end
            return self._substitution(i + 1)
        if nxt == "{":
            return self._brace(i + 1)
        if nxt == "'":
            return self._ansi(i)
        if nxt == '"':
            return self._double(i + 1)
        if nxt == "[":  # obsolete $[ arithmetic ]
            j = text.find("]", i + 2)
            return i + 1 if j < 0 else j + 1
        return i + 1

    def _brace(self, i: int) -> int:
        """${ ... } with quotes and nested expansions inside."""
        text, n = self.text, self.n
        j = i + 1
        while j < n:
            m = _BRACE_PLAIN.match(text, j)
            if m:
                j = m.end()
                continue
            c = text[j]
            if c == "}":
                self.out.quoted.append((i + 1, j))
                return j + 1
            if c == "'":
                j = self._single(j)
            elif c == '"':
                j = self._double(j)
            elif c == "\\":
                j += 2
            elif c == "$":
                j = self._dollar(j)
            else:
                j = self._backtick(j)
        return self._recover(i - 1, "unterminated ${ ... }")

    def _substitution(self, i: int, record: bool = True) -> int:
        """From the '(' of $( ... ), <( ... ) or a=( ... ): return the index after ')'."""
        if self.depth >= _MAX_DEPTH:
            return self._balanced(i)
        self.depth += 1
        try:
            end = self._lex(i + 1, nested=True)
        finally:
            self.depth -= 1
        if record and self.substitutions is not None and self.depth == 0 and end > i:
            inner_end = end - 1 if self.text[end - 1 : end] == ")" else end
            self.substitutions.append((i + 1, inner_end))
        return end

    def _balanced(self, i: int) -> int:
        """Plain parenthesis counting, for deep nesting and extended globs."""
        depth = 0
        text = self.text
        for j in range(i, self.n):
            if text[j] == "(":
                depth += 1
            elif text[j] == ")":
                depth -= 1
                if depth == 0:
                    return j + 1
        return self._recover(i, "unbalanced parentheses")

    def _arith_end(self, i: int) -> int:
        """From '((' at i: the index after the matching '))', or -1 if it is not arithmetic."""
        if self.arith_ends is None:  # one pass over the text, the first time it is asked
            self.arith_ends = arithmetic_ends(self.text)
        return self.arith_ends.get(i, -1)


def arithmetic_ends(text: str) -> dict[int, int]:
    """For each '((' that opens arithmetic: its position -> the index after its '))'.

    The second '(' must be closed by a ')' directly followed by another ')', with
    no blank line at its own level in between (a blank line means two commands,
    not one expression). Quotes are not looked at, as bash does not look at them
    when it decides whether '((' starts arithmetic. One pass with a stack: each
    unclosed '((' costs nothing more, where scanning ahead from each one was
    quadratic.
    """
    ends: dict[int, int] = {}
    if "((" not in text:
        return ends
    open_parens: list[int] = []  # positions of the '(' not closed yet, innermost last
    blank_inside: set[int] = set()  # of those, the ones with a blank line at their own level
    for m in _ARITH_EVENT.finditer(text):
        pos = m.start()
        c = text[pos]
        if c == "(":
            open_parens.append(pos)
        elif c == ")":
            if not open_parens:
                continue
            opened = open_parens.pop()
            if opened in blank_inside:
                blank_inside.discard(opened)
            elif text.startswith("(", opened - 1) and text.startswith(")", pos + 1):
                ends[opened - 1] = pos + 2
        elif open_parens:  # a newline followed by another one
            blank_inside.add(open_parens[-1])
    return ends


def line_finder(text: str) -> Callable[[int], int]:
    """Map an offset in text to its 0-based line."""
    # asked for every statement read, most of them one line: str.find beats a regular expression
    newlines: list[int] = []
    at = text.find("\n")
    while at >= 0:
        newlines.append(at)
        at = text.find("\n", at + 1)
    return lambda pos: bisect_left(newlines, pos)


def blank_comments(text: str, lexed: Lexed) -> str:
    """The text with every comment the lexer found replaced by blanks."""
    if not lexed.comments:
        return text
    parts: list[str] = []
    last = 0
    # Recovery from unbalanced input may lex a comment more than once: each counts once.
    for start, end in sorted(set(lexed.comments)):
        start = max(start, last)
        if end <= start:
            continue
        parts.append(text[last:start])
        parts.append(" " * (end - start))
        last = end
    parts.append(text[last:])
    return "".join(parts)


def lex(text: str, record_substitutions: bool = False) -> Lexed:
    return Lexer(text, record_substitutions).run()


_NEEDS_DEQUOTE = re.compile(r"['\"\\$`]")
_DQ_ESCAPABLE = frozenset('$`"\\\n')


def dequote(raw: str, keep_continuations: bool = False) -> str:
    """Remove shell quoting from a word; keep every expansion verbatim.

    ``keep_continuations`` keeps backslash-newline pairs so that a script
    passed to ``bash -c`` keeps its line count.
    """
    if not _NEEDS_DEQUOTE.search(raw):
        return raw
    lexer = Lexer(raw)
    out: list[str] = []
    n = len(raw)
    i = 0
    while i < n:
        c = raw[i]
        if c == "'":
            j = raw.find("'", i + 1)
            if j < 0:
                out.append(raw[i + 1 :])
                break
            out.append(raw[i + 1 : j])
            i = j + 1
        elif c == '"' or (c == "$" and raw.startswith('"', i + 1)):
            i = _dequote_double(raw, i + (2 if c == "$" else 1), lexer, out, keep_continuations)
        elif c == "\\":
            nxt = raw[i + 1 : i + 2]
            if nxt == "\n" and keep_continuations:
                out.append("\\\n")
            elif nxt != "\n":
                out.append(nxt)
            i += 2
        elif c == "$" and raw.startswith("'", i + 1):
            j = lexer._ansi(i)
            out.append(raw[i + 2 : j - 1] if raw[j - 1 : j] == "'" else raw[i + 2 : j])
            i = j
        elif c == "$":
            j = max(lexer._dollar(i), i + 1)
            out.append(raw[i:j])
            i = j
        elif c == "`":
            j = max(lexer._backtick(i), i + 1)
            out.append(raw[i:j])
            i = j
        else:
            m = _NEEDS_DEQUOTE.search(raw, i)
            j = m.start() if m else n
            out.append(raw[i:j])
            i = j
    return "".join(out)


def _dequote_double(raw: str, i: int, lexer: Lexer, out: list[str], keep: bool) -> int:
    n = len(raw)
    while i < n:
        c = raw[i]
        if c == '"':
            return i + 1
        if c == "\\":
            nxt = raw[i + 1 : i + 2]
            if nxt == "\n":
                if keep:
                    out.append("\\\n")
            elif nxt in _DQ_ESCAPABLE and nxt:
                out.append(nxt)
            else:
                out.append("\\" + nxt)
            i += 2
        elif c == "$" or c == "`":
            j = lexer._dollar(i, in_double_quotes=True) if c == "$" else lexer._backtick(i)
            j = max(j, i + 1)
            out.append(raw[i:j])
            i = j
        else:
            m = _DOUBLE_PLAIN.match(raw, i)
            j = m.end() if m else i + 1
            out.append(raw[i:j])
            i = j
    return n


def substitutions(raw: str) -> list[tuple[int, int]]:
    """Inner spans of the outermost $( ... ), backquotes and <( ... ) in a word."""
    if "(" not in raw and "`" not in raw:
        return []
    lexer = Lexer(raw, record_substitutions=True)
    i = 0
    while i < len(raw):
        j = lexer._word(i)
        i = j if j > i else i + 1
    return lexer.substitutions or []


def is_assignment(word: str) -> bool:
    """NAME=value, NAME+=value or NAME[i]=value, as written (before dequoting)."""
    eq = word.find("=")
    return eq > 0 and bool(_ASSIGN_PREFIX.match(word, 0, eq + 1))
