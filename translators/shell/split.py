"""Cut a token stream into top-level statements and give every token a role.

A statement ends at a newline outside any compound command (``if/fi``,
``for|while|until|select/done``, ``case/esac``, ``{ }``, ``( )``, function
bodies) and not after ``|``, ``&&`` or ``||``. Reserved words are only
reserved where a command may start, as in bash. Unbalanced blocks are
reported and closed at the end of the body so that what follows is still
read. The roles let the tolerant reader pick out simple commands without a
grammar.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .lexer import NEWLINE, OP, REDIRECT_OPS, WORD, Token, is_assignment, lex

# Token roles.
R_WORD = 0  # assignment, command name or argument of a simple command
R_REDIRECT = 1  # a redirection operator
R_TARGET = 2  # the word after a redirection operator
R_FD = 3  # the descriptor number glued before a redirection (2>)
R_SEPARATOR = 4  # ; newline && || | |& ;; ;& ;;&
R_BACKGROUND = 5  # &
R_OPEN = 6  # if while until for select case { (
R_CLOSE = 7  # fi done esac } )
R_KEYWORD = 8  # then elif else do ! time function in
R_HEADER = 9  # loop variables and lists, case words and patterns, function names

_CLOSER = {"if": "fi", "while": "done", "until": "done", "for": "done", "select": "done", "case": "esac"}
_CLOSERS = frozenset({"fi", "done", "esac", "}"})
# Every word _Splitter._reserved takes: the first word of most commands is none of them.
_RESERVED = frozenset({*_CLOSER, *_CLOSERS, "{", "then", "elif", "else", "do", "!", "time", "function", "[["})
# The keyword an opener needs before its body: 'if x fi' and 'while x done' are errors.
_BODY_KEYWORD = {"if": "then", "while": "do", "until": "do", "for": "do", "select": "do"}
_CONTINUING = frozenset({"|", "|&", "&&", "||"})


@dataclass(frozen=True)
class Statement:
    first: int  # index of its first token
    last: int  # index after its last token
    start: int  # offset of its first character in the body
    end: int  # offset after its last character (here-document bodies included)


@dataclass(slots=True)  # one per statement and line read, as Lexed
class Structure:
    statements: list[Statement] = field(default_factory=list)
    roles: list[int] = field(default_factory=list)
    depths: list[int] = field(default_factory=list)  # compound nesting of each token
    problems: list[tuple[int, str]] = field(default_factory=list)


class _Frame:
    __slots__ = ("awaiting", "case_pattern", "closer", "func", "opener", "pattern_word", "pos")

    def __init__(self, opener: str, closer: str, pos: int, func: bool) -> None:
        self.opener = opener
        self.closer = closer
        self.pos = pos
        self.func = func
        self.case_pattern = False  # inside a case: reading patterns rather than commands
        self.awaiting = _BODY_KEYWORD.get(opener)  # 'then' or 'do' not seen yet
        self.pattern_word = False  # a case pattern word read: '|' or ')' must follow


class _Splitter:
    def __init__(self, tokens: list[Token]) -> None:
        self.tokens = tokens
        self.out = Structure(roles=[R_WORD] * len(tokens), depths=[0] * len(tokens))
        self.stack: list[_Frame] = []
        self.command_position = True
        self.expect = ""  # what the next word is: target | for-name | for-in | for-list | case-word | ...
        self.pending_function = False
        self.continuing = False
        self.empty = True  # no command yet since the last separator: ';' or '|' here is an error

    def run(self) -> Structure:
        first = -1
        tokens = self.tokens
        depths, stack = self.out.depths, self.stack  # the same lists throughout: looked up once
        for i, tok in enumerate(tokens):
            depth = depths[i] = len(stack)
            if tok.kind == NEWLINE:
                if self._newline(i) and first >= 0:
                    self._close_statement(first, i)
                    first = -1
                continue
            if first < 0:
                first = i
            if tok.kind == OP:
                self._operator(i, tok)
            else:
                self._word(i, tok)
            if len(stack) < depth:  # the token closed a compound: it sits at the outer depth
                depths[i] = len(stack)
        for frame in reversed(self.stack):
            self.out.problems.append(
                (frame.pos, f"'{frame.opener}' is never closed (missing '{frame.closer}')")
            )
        if self.expect == "target":
            self.out.problems.append((tokens[-1].start, "a redirection without a target"))
        elif self.continuing:
            self.out.problems.append((tokens[-1].start, f"'{tokens[-1].text}' at the end of the body"))
        if first >= 0:
            self._close_statement(first, len(tokens))
        return self.out

    def _close_statement(self, first: int, last: int) -> None:
        tokens = self.tokens
        end = tokens[last - 1].end
        if last < len(tokens) and tokens[last].end > tokens[last].start + 1:
            end = tokens[last].end  # the newline carried here-document bodies
        self.out.statements.append(Statement(first, last, tokens[first].start, end))
        self.stack.clear()
        self.expect = ""
        self.pending_function = False
        self.continuing = False
        self.command_position = True
        self.empty = True

    # -- newlines and operators ----------------------------------------------
    def _newline(self, i: int) -> bool:
        """Handle a newline; True when it ends the current statement."""
        self.out.roles[i] = R_SEPARATOR
        if self.expect == "target":
            self.out.problems.append((self.tokens[i].start, "a redirection without a target"))
        if self.expect != "case-in":
            self.expect = ""  # a newline ends loop headers, [[ ]] and optional function parens
        if self.stack and self.stack[-1].case_pattern:
            return False
        self.command_position = True
        return not self.stack and not self.pending_function and not self.continuing

    def _operator(self, i: int, tok: Token) -> None:
        text = tok.text
        roles = self.out.roles
        top = self.stack[-1] if self.stack else None
        self.continuing = text in _CONTINUING
        if self.expect == "condition":  # [[ a < b && ( c ) ]]: operators are words here
            roles[i] = R_WORD
            return
        if self.expect == "function-parens" and text in "()":
            roles[i] = R_HEADER  # function name() { ... }
            self.expect = "function-parens" if text == "(" else ""
            return
        if self.expect == "function-parens":
            self.expect = ""
        if text in REDIRECT_OPS:
            self.empty = False
            roles[i] = R_REDIRECT
            prev = self.tokens[i - 1] if i else None
            glued = prev is not None and prev.kind == WORD and prev.end == tok.start
            if (
                glued
                and prev is not None
                and (prev.text.isascii() and prev.text.isdigit())
                and roles[i - 1] == R_WORD
            ):
                roles[i - 1] = R_FD
            self.expect = "target"
            return
        if self.expect == "target":
            self.out.problems.append((tok.start, "a redirection without a target"))
            self.expect = ""
        if top is not None and top.case_pattern and not self.expect:
            roles[i] = R_HEADER
            top.pattern_word = False
            if text == ")":
                top.case_pattern = False
                self.command_position = True
                self.empty = True
            elif text not in ("(", "|"):
                self.out.problems.append((tok.start, f"unexpected '{text}' in a case pattern"))
            return
        if text == "(":
            nxt = self.tokens[i + 1] if i + 1 < len(self.tokens) else None
            prev = self.tokens[i - 1] if i else None
            if (
                nxt is not None
                and nxt.text == ")"
                and nxt.kind == OP
                and prev is not None
                and prev.kind == WORD
                and roles[i - 1] == R_WORD
                and self._starts_command(i - 1)
            ):
                roles[i - 1] = R_HEADER  # name() { ... }: a function definition
                roles[i] = R_HEADER
                self.expect = "function-parens"
                self.pending_function = True
                self.command_position = True
                return
            if self.command_position:
                roles[i] = R_OPEN
                self._push("(", ")", tok.start)
                self.command_position = True
                return
            roles[i] = R_SEPARATOR
            self.out.problems.append((tok.start, "unexpected '('"))
            self.command_position = True
            return
        if text == ")":
            if top is not None and top.closer == ")":
                roles[i] = R_CLOSE
                self._pop()
                self.command_position = False
                self.empty = False
                return
            roles[i] = R_SEPARATOR
            self.out.problems.append((tok.start, "unexpected ')'"))
            return
        if text in (";;", ";&", ";;&"):
            roles[i] = R_SEPARATOR
            self.empty = True
            if top is not None and top.closer == "esac":
                top.case_pattern = True
            else:
                self.out.problems.append((tok.start, f"'{text}' outside a case"))
            self.command_position = True
            return
        if self.expect in ("for-in", "for-list", "for-arith"):
            self.expect = ""
        roles[i] = R_BACKGROUND if text == "&" else R_SEPARATOR
        if self.empty:
            self.out.problems.append((tok.start, f"unexpected '{text}'"))
        self.empty = True
        self.command_position = True

    def _starts_command(self, i: int) -> bool:
        """Whether token i begins a simple command (so 'name()' defines a function)."""
        if i == 0:
            return True
        role = self.out.roles[i - 1]
        return role in (R_SEPARATOR, R_BACKGROUND, R_OPEN, R_KEYWORD) or self.tokens[i - 1].kind == NEWLINE

    # -- words -------------------------------------------------------------------
    def _word(self, i: int, tok: Token) -> None:
        text = tok.text
        roles = self.out.roles
        top = self.stack[-1] if self.stack else None
        self.continuing = False
        self.empty = False
        expect = self.expect
        if expect:  # most words expect nothing: one test rather than one per case
            if expect == "target":
                roles[i] = R_TARGET
                self.expect = ""
                return
            if expect == "condition":  # inside [[ ... ]]
                roles[i] = R_WORD
                if text == "]]":
                    self.expect = ""
                    self.command_position = False
                return
            if expect == "for-name":
                roles[i] = R_HEADER
                self.expect = "for-arith" if text.startswith("((") else "for-in"
                return
            if expect == "for-in" and text == "in":
                roles[i] = R_HEADER
                self.expect = "for-list"
                return
            if expect == "for-list":
                roles[i] = R_HEADER
                return
            if expect == "case-word":
                roles[i] = R_HEADER
                self.expect = "case-in"
                return
            if expect == "case-in":
                roles[i] = R_HEADER
                self.expect = ""
                if top is not None and top.closer == "esac":
                    top.case_pattern = True
                if text != "in":
                    self.out.problems.append((tok.start, f"expected 'in' after case, found {text!r}"))
                return
            if expect == "function-name":
                roles[i] = R_HEADER
                self.expect = "function-parens"
                return
            self.expect = ""  # 'for x do', a word after a C-style header, no function parens
        if top is not None and top.case_pattern:
            if text == "esac" and not top.pattern_word:
                roles[i] = R_CLOSE
                self._pop()
                self.command_position = False
                return
            roles[i] = R_HEADER
            if top.pattern_word:
                self.out.problems.append((tok.start, f"unexpected {text!r} in a case pattern"))
            top.pattern_word = True
            return
        if self.command_position and self._reserved(i, text):
            return
        roles[i] = R_WORD
        if self.command_position and not is_assignment(text):
            self.command_position = False
            self.pending_function = False  # 'f() cmd' is not a function after all

    def _reserved(self, i: int, text: str) -> bool:
        """Treat a word in command position as a reserved word; False if it is not one."""
        if text not in _RESERVED:
            return False
        roles = self.out.roles
        pos = self.tokens[i].start
        if text in _CLOSER:
            roles[i] = R_OPEN
            self._push(text, _CLOSER[text], pos)
            if text in ("for", "select"):
                self.expect = "for-name"
            elif text == "case":
                self.expect = "case-word"
            return True
        if text == "{":
            roles[i] = R_OPEN
            self._push("{", "}", pos)
            return True
        if text in _CLOSERS:
            roles[i] = R_CLOSE
            self._close(text, pos)
            self.command_position = False
            return True
        if text in ("then", "elif", "else"):
            roles[i] = R_KEYWORD
            self.empty = True
            top = self.stack[-1] if self.stack else None
            if top is None or top.closer != "fi" or (top.awaiting == "then") != (text == "then"):
                self.out.problems.append((pos, f"unexpected '{text}'"))
            elif top is not None:
                top.awaiting = "then" if text == "elif" else None
            return True
        if text == "do":
            roles[i] = R_KEYWORD
            self.empty = True
            top = self.stack[-1] if self.stack else None
            if top is None or top.awaiting != "do":
                self.out.problems.append((pos, "unexpected 'do'"))
            else:
                top.awaiting = None
            return True
        if text in ("!", "time"):
            roles[i] = R_KEYWORD
            self.empty = True
            return True
        if text == "function":
            roles[i] = R_KEYWORD
            self.expect = "function-name"
            self.pending_function = True
            return True
        if text == "[[":
            roles[i] = R_WORD
            self.expect = "condition"
            return True
        return False

    # -- the stack -----------------------------------------------------------------
    def _push(self, opener: str, closer: str, pos: int) -> None:
        self.stack.append(_Frame(opener, closer, pos, self.pending_function))
        self.pending_function = False
        self.command_position = True
        self.empty = True

    def _pop(self) -> None:
        self.stack.pop()

    def _close(self, closer: str, pos: int) -> None:
        if self.stack and self.stack[-1].closer == closer:
            if self.stack[-1].awaiting:
                frame = self.stack[-1]
                self.out.problems.append(
                    (pos, f"unexpected '{closer}' ('{frame.opener}' has no '{frame.awaiting}')")
                )
            self._pop()
            return
        if any(f.closer == closer for f in self.stack):
            while self.stack and self.stack[-1].closer != closer:
                frame = self.stack.pop()
                self.out.problems.append(
                    (frame.pos, f"'{frame.opener}' is never closed (missing '{frame.closer}')")
                )
            self._pop()
            return
        self.out.problems.append((pos, f"unexpected '{closer}'"))


def split(tokens: list[Token]) -> Structure:
    return _Splitter(tokens).run()


def statement_boundary(text: str, limit: int) -> int:
    """An offset at most ``limit`` where a top-level statement of ``text`` begins (0 if none does).

    For reading a prefix of a huge body: cut there, no construct is left open
    at the cut. Only the text up to ``limit`` is read; the last statement found
    in it may be cut short, so the cut is at its start.
    """
    if len(text) <= limit:
        return len(text)
    end = text.rfind("\n", 0, limit) + 1
    statements = split(lex(text[:end]).tokens).statements
    return statements[-1].start if statements else 0
