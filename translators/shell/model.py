"""The simple commands a shell body is made of, whichever parser read them.

Both readers (bashlex when it copes, the tolerant tokenizer when it does not)
produce these same values, so the analysers never care which one ran. Words
keep their source text; ``value`` is that text with quotes removed and every
``$`` expansion left verbatim: nothing is ever expanded or executed.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class CommandOrigin(StrEnum):
    """Where a command was read: the script's own lines, or a script inside one of them."""

    BODY = "body"
    SUBSTITUTION = "substitution"  # $( ... ) or backquotes
    SHELL_C = "shell-c"  # bash -c '...'
    TRAP = "trap"  # a trap's handler
    EVAL = "eval"
    HEREDOC = "heredoc"  # a here-document fed to a shell


@dataclass(frozen=True, slots=True, init=False)
class Word:
    raw: str  # as written, quotes included
    value: str  # quotes removed, expansions kept verbatim
    line: int  # absolute once shifted; relative to the statement inside the cache

    # Every word of every script is one, and the statement cache holds some 130,000: slots
    # take a third of the memory of an instance dict and are faster to read. Setting them
    # through their descriptors costs less than the generated frozen __init__ (an
    # object.__setattr__ call per field).
    def __init__(self, raw: str, value: str, line: int) -> None:
        _SET_RAW(self, raw)
        _SET_VALUE(self, value)
        _SET_LINE(self, line)


_SET_RAW = Word.__dict__["raw"].__set__
_SET_VALUE = Word.__dict__["value"].__set__
_SET_LINE = Word.__dict__["line"].__set__


@dataclass(frozen=True, slots=True)
class HereDoc:
    delimiter: str
    quoted: bool  # <<'EOF' (no expansion inside) or <<EOF
    body: str
    line: int  # line of the first body line


@dataclass(frozen=True, slots=True)
class Redirect:
    op: str  # > >> < << <<- <<< >& <& &> &>> >| <>
    target: Word | None  # None for a descriptor duplication such as 2>&1
    fd: str = ""  # the descriptor written before the operator ("2" in 2>log)
    heredoc: HereDoc | None = None


@dataclass(frozen=True, slots=True, init=False)
class Command:
    """One simple command: assignments, words and redirections."""

    words: tuple[Word, ...]
    assignments: tuple[Word, ...] = ()
    redirects: tuple[Redirect, ...] = ()
    line: int = 0
    text: str = ""
    background: bool = False  # part of an and-or list (or a compound) ended by '&'
    nested: bool = False  # inside if/loop/case/function/subshell/braces
    captured_by: str | None = None  # NAME when the command runs inside NAME=$(...)
    origin: CommandOrigin = CommandOrigin.BODY

    # Commands are made for every statement read and again when moved to a script's lines:
    # slots, set through their descriptors, as for Word.
    def __init__(
        self,
        words: tuple[Word, ...],
        assignments: tuple[Word, ...] = (),
        redirects: tuple[Redirect, ...] = (),
        line: int = 0,
        text: str = "",
        background: bool = False,
        nested: bool = False,
        captured_by: str | None = None,
        origin: CommandOrigin = CommandOrigin.BODY,
    ) -> None:
        _SET_WORDS(self, words)
        _SET_ASSIGNMENTS(self, assignments)
        _SET_REDIRECTS(self, redirects)
        _SET_CMD_LINE(self, line)
        _SET_TEXT(self, text)
        _SET_BACKGROUND(self, background)
        _SET_NESTED(self, nested)
        _SET_CAPTURED_BY(self, captured_by)
        _SET_ORIGIN(self, origin)

    @property
    def name(self) -> str:
        return self.words[0].value if self.words else ""


_SET_WORDS = Command.__dict__["words"].__set__
_SET_ASSIGNMENTS = Command.__dict__["assignments"].__set__
_SET_REDIRECTS = Command.__dict__["redirects"].__set__
_SET_CMD_LINE = Command.__dict__["line"].__set__
_SET_TEXT = Command.__dict__["text"].__set__
_SET_BACKGROUND = Command.__dict__["background"].__set__
_SET_NESTED = Command.__dict__["nested"].__set__
_SET_CAPTURED_BY = Command.__dict__["captured_by"].__set__
_SET_ORIGIN = Command.__dict__["origin"].__set__


# Shifting runs for every command of every file, so it builds values directly:
# dataclasses.replace costs several times more.


def shift_word(word: Word, lines: int) -> Word:
    return Word(word.raw, word.value, word.line + lines) if lines else word


def _shift_redirect(r: Redirect, lines: int) -> Redirect:
    target = shift_word(r.target, lines) if r.target else None
    heredoc = r.heredoc
    if heredoc is not None:
        heredoc = HereDoc(heredoc.delimiter, heredoc.quoted, heredoc.body, heredoc.line + lines)
    return Redirect(r.op, target, r.fd, heredoc)


def shift_command(cmd: Command, lines: int) -> Command:
    """Move a command read relative to its statement to absolute lines."""
    if not lines:
        return cmd
    # lists made whole, then tuples: a generator per field costs more, and most fields are empty
    words, assignments, redirects = cmd.words, cmd.assignments, cmd.redirects
    return Command(
        tuple([shift_word(w, lines) for w in words]),
        tuple([shift_word(w, lines) for w in assignments]) if assignments else (),
        tuple([_shift_redirect(r, lines) for r in redirects]) if redirects else (),
        cmd.line + lines,
        cmd.text,
        cmd.background,
        cmd.nested,
        cmd.captured_by,
        cmd.origin,
    )
