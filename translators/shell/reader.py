"""Read a shell text statement by statement into simple commands.

The text is cut into its statements by :mod:`.pieces`, line by line, without
lexing it whole; a text with a syntax problem is lexed whole, as bash reads it.
Each statement is read on its own and the result is cached by its text:
sites repeat the same lines (``module load``, ``export NCCL_DEBUG=WARN``,
``srun ...``) across thousands of scripts, and bashlex costs about a
millisecond per parse. A statement is read, cheapest first, by

1. the fast path: simple commands with pipes, ``&&``/``||``/``;``/``&``,
   plain redirections and here-documents, which bashlex would read the same
   way;
2. the compound path: ``if``, loops, ``{ }``, subshells and functions whose
   structure the splitter read whole, which bashlex would read the same way
   too (so bashlex is left for what neither path takes: stray carriage
   returns);
3. bashlex, unless the statement holds a construct bashlex is known to
   reject or misread (``[[ ]]``, ``case``, arrays, ``(( ))``, ``time``, ...);
4. the tolerant tokenizer, which still finds every simple command inside.

Only 1 to 3 count as understood. Commands inside ``$( ... )``, backquotes and
process substitutions are read recursively and listed before the command
that uses them, marked with the variable that captures their output.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import lru_cache, partial

from . import pieces, remembered
from .lexer import NEWLINE, WORD, Lexed, Token, blank_comments, is_assignment, lex, line_finder
from .lexer import substitutions as _substitutions
from .model import Command, CommandOrigin, Word, shift_command
from .slices import Cuts
from .split import (
    R_BACKGROUND,
    R_CLOSE,
    R_FD,
    R_HEADER,
    R_KEYWORD,
    R_OPEN,
    R_REDIRECT,
    R_SEPARATOR,
    R_TARGET,
    R_WORD,
    Structure,
    split,
)
from .tolerant import commands_from_tokens

# Words that run commands come back across a site ("$(date +%s)", "$(hostname)"), and finding their
# substitutions lexes each one: found once per spelling.
substitutions = lru_cache(maxsize=8192)(_substitutions)
# Statements longer than this go straight to the tolerant reader (bashlex is slow on them).
_MAX_BASHLEX_CHARS = 20_000
# Substitutions nested deeper than this are not read.
_MAX_DEPTH = 6
_ARRAY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?\+?=\(")


@dataclass(frozen=True, slots=True)
class StatementRead:
    understood: bool
    reason: str  # why the tolerant reader was needed ("" when understood)
    commands: tuple[Command, ...]  # lines relative to the statement's first line
    too_deep: tuple[int, ...] = ()  # lines of substitutions nested too deep to be read
    problems: tuple[tuple[int, str], ...] = ()  # syntax errors inside its substitutions, as too_deep


@dataclass(frozen=True)
class ScriptRead:
    parts: tuple[tuple[int, tuple[Command, ...]], ...]  # (line of the statement, its commands)
    statements: int
    understood: int
    unparsed: tuple[tuple[int, str], ...]  # (line, reason)
    problems: tuple[tuple[int, str], ...]  # (line, message): syntax errors
    code: str  # the text with comments blanked out, for variable scans
    too_deep: tuple[tuple[int, str], ...] = ()  # (line, message): substitutions not read

    def commands_at(self, first_line: int) -> list[Command]:
        """Every command, with lines counted from first_line for the text's first line."""
        return [c for line, cmds in self.parts for c in _shifted(cmds, first_line + line)]

    @property
    def commands(self) -> list[Command]:
        return self.commands_at(0)


# A statement's commands moved to an absolute line, remembered: sites repeat the same
# statement at the same line in many scripts. Keyed by the identity of the (cached) commands;
# each entry holds them, so that no other tuple can take their id while the entry exists.
_SHIFTED: dict[tuple[int, int], tuple[tuple[Command, ...], tuple[Command, ...]]] = {}
_SHIFTED_MAX = 8192  # about 10 MB; answers 60% of the shifts in a site of 10,000 scripts


def _shifted(commands: tuple[Command, ...], lines: int) -> tuple[Command, ...]:
    if not lines:
        return commands
    key = (id(commands), lines)
    known = _SHIFTED.get(key)
    if known is not None:
        return known[1]
    shifted = tuple([shift_command(c, lines) for c in commands])
    if len(_SHIFTED) >= _SHIFTED_MAX:
        _SHIFTED.clear()
    _SHIFTED[key] = (commands, shifted)
    return shifted


# Whole scripts rarely repeat at a site (statements do, and have their own cache); a small
# cache keeps the scripts inside scripts (here-documents, bash -c) without holding thousands of bodies.
@lru_cache(maxsize=1024)
def read_script(text: str, depth: int = 0) -> ScriptRead:
    problems: dict[int, str] = {}
    cut = pieces.cut(text)
    if cut is not None:
        statements, code = cut
    else:  # a syntax problem somewhere: the whole text is read at once, as bash reads it
        statements, code = _whole(text, problems)
    parts: list[tuple[int, tuple[Command, ...]]] = []
    unparsed: list[tuple[int, str]] = []
    too_deep: dict[int, str] = {}
    deep = f"command substitutions nested more than {_MAX_DEPTH} deep: the innermost were not read"
    understood = 0
    inner_problems: list[tuple[int, str]] = []  # bash -n stops on these too
    for line, statement, prepared in statements:
        result = read_statement(statement, depth, prepared)
        parts.append((line, result.commands))
        if result.too_deep or result.problems:  # seldom: most statements have neither
            for inner_line in result.too_deep:
                too_deep[line + inner_line] = deep
            inner_problems.extend((line + inner_line, message) for inner_line, message in result.problems)
        if result.understood:
            understood += 1
        else:
            unparsed.append((line, result.reason))
    for line, message in inner_problems:
        problems.setdefault(line, f"inside a command substitution: {message}")
    return ScriptRead(
        parts=tuple(parts),
        statements=len(statements),
        understood=understood,
        unparsed=tuple(unparsed),
        problems=tuple(sorted(problems.items())),
        code=code,
        too_deep=tuple(sorted(too_deep.items())),
    )


def _whole(text: str, problems: dict[int, str]) -> tuple[pieces.Statements, str]:
    """The statements of the whole text read at once; its syntax problems go to ``problems`` by line."""
    lexed = lex(text, record_substitutions=True)  # the statements' own readings are cut from this one
    structure = split(lexed.tokens)
    cuts = Cuts(lexed, structure) if Cuts.usable(lexed, structure) else None
    line_of = line_finder(text)
    statements: pieces.Statements = [
        (line_of(stmt.start), text[stmt.start : stmt.end], partial(cuts.statement, index) if cuts else None)
        for index, stmt in enumerate(structure.statements)
    ]
    for pos, message in sorted(lexed.problems + structure.problems):
        problems.setdefault(line_of(pos), message)
    return statements, blank_comments(text, lexed)


class _StatementCache:
    """Statement reads by text, least recently used dropped first; counts its hits and misses."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.held: dict[tuple[str, int], StatementRead] = {}
        self.hits = self.misses = 0

    def take(self, key: tuple[str, int]) -> StatementRead | None:
        known = self.held.pop(key, None)
        if known is not None:
            self.hits += 1
            self.held[key] = known  # now the most recently used
        return known

    def put(self, key: tuple[str, int], read: StatementRead) -> None:
        self.misses += 1
        if len(self.held) >= self.size:
            del self.held[next(iter(self.held))]
        self.held[key] = read

    def clear(self) -> None:
        self.held.clear()
        self.hits = self.misses = 0


# The lines a site repeats stay; 65,536 held 30 MB more per worker at 100,000 files.
STATEMENTS = _StatementCache(16384)


def read_statement(
    text: str, depth: int = 0, prepared: Callable[[], tuple[Lexed, Structure]] | None = None
) -> StatementRead:
    """One statement's commands; ``prepared`` gives its lexing and structure when they are known already."""
    key = (text, depth)
    known = STATEMENTS.take(key)
    if known is None:
        if prepared is not None:
            lexed, structure = prepared()
        else:
            lexed = lex(text, record_substitutions=True)
            structure = split(lexed.tokens)
        known = _read_statement(text, depth, lexed, structure)
        STATEMENTS.put(key, known)
    return known


def _read_statement(text: str, depth: int, lexed: Lexed, structure: Structure) -> StatementRead:
    line_of = line_finder(text)
    understood = True
    reason = ""
    if fast_path(text, lexed, structure):
        commands = _tolerant(text, lexed, structure, line_of)
    else:
        reason = _blocker(text, lexed, structure)
        commands = []
        if not reason and compound_path(text, lexed, structure):
            commands = _tolerant(text, lexed, structure, line_of)
        elif not reason:
            # bashlex builds its parser's tables as it is imported (a seventh of a second), and most
            # sites have no statement that needs it: imported by the first that does
            from .parsed import BashlexError, drafts_from_bashlex

            try:
                commands = [d.freeze(text, line_of) for d in drafts_from_bashlex(text, lexed, line_of)]
            except BashlexError as exc:
                reason = f"bashlex: {exc}"
        if reason:
            understood = False
            commands = _tolerant(text, lexed, structure, line_of)
    problems: list[tuple[int, str]] = []
    if depth < _MAX_DEPTH:
        commands, inner_reasons, too_deep, problems = _with_substitutions(commands, depth)
        if understood and inner_reasons:
            understood = False
            reason = "inside a substitution: " + inner_reasons[0]
    else:  # the limit: what these words run is not read, and says so
        too_deep = [w.line for c in commands for w in _substituting_words(c) if substitutions(w.raw)]
    return StatementRead(understood, reason, tuple(commands), tuple(too_deep), tuple(problems))


def _tolerant(text: str, lexed: Lexed, structure: Structure, line_of: Callable[[int], int]) -> list[Command]:
    heredocs = {h.op_start: h for h in lexed.heredocs}
    return commands_from_tokens(text, lexed.tokens, structure.roles, structure.depths, heredocs, line_of)


_FAST_ROLES = frozenset({R_WORD, R_FD, R_REDIRECT, R_TARGET, R_SEPARATOR, R_BACKGROUND})
_SLOW_OPS = frozenset({"(", ")", ";;", ";&", ";;&"})
_HEREDOC_OPS = frozenset({"<<", "<<-"})
_BARE_PAREN = re.compile(r"(?<![$<>(])\(")


def fast_path(text: str, lexed: Lexed, structure: Structure) -> bool:
    """Simple commands joined by pipes, && || ; & with plain redirections.

    The tolerant reader finds exactly what bashlex would for these (a test
    checks it), at a fraction of the cost. Continuation lines are fine, and so
    are here-documents whose bodies follow the statement's only line: bashlex
    never sees them (:func:`.parsed.mask` blanks them), the tokenizer attaches
    them. Reserved words, subshells, arrays and ``[[`` are not.
    """
    if "\r" in text or lexed.problems or structure.problems or not lexed.tokens:
        return False
    if lexed.tokens[0].text in ("[[", "coproc"):
        return False
    tokens = lexed.tokens
    last = len(tokens) - 1
    if lexed.heredocs and not (tokens[last].kind == NEWLINE and len(lexed.heredocs) == _count(tokens)):
        return False
    for at, (tok, role) in enumerate(zip(tokens, structure.roles, strict=True)):
        if tok.kind == NEWLINE and at == last and lexed.heredocs:
            continue  # the newline that carries the here-document bodies
        if role not in _FAST_ROLES or tok.kind == NEWLINE or tok.text in _SLOW_OPS:
            return False
        if tok.kind == WORD and "(" in tok.text and (_BARE_PAREN.search(tok.text) or _ARRAY.match(tok.text)):
            return False
    return True


_COMPOUND_ROLES = _FAST_ROLES | {R_OPEN, R_CLOSE, R_KEYWORD, R_HEADER}
_CASE_OPS = frozenset({";;", ";&", ";;&"})


def compound_path(text: str, lexed: Lexed, structure: Structure) -> bool:
    """if/while/until/for, ``{ }`` groups, subshells and function definitions the splitter read whole.

    Call it for statements nothing in :func:`_blocker` holds. The splitter
    checks their structure (every opener closed, ``then``/``do`` where they
    belong, reserved words only where a command starts), and the tolerant
    reader finds what bashlex would in them (a test checks it over the corpus
    and generated statements), so bashlex is not needed for them.
    """
    if "\r" in text or lexed.problems or structure.problems or not lexed.tokens:
        return False
    if lexed.tokens[0].text in ("[[", "coproc"):
        return False
    return all(
        role in _COMPOUND_ROLES and tok.text not in _CASE_OPS
        for tok, role in zip(lexed.tokens, structure.roles, strict=True)
    )


def _count(tokens: list[Token]) -> int:
    """Here-document operators among the tokens."""
    return sum(1 for tok in tokens if tok.kind != WORD and tok.text in _HEREDOC_OPS)


def _blocker(text: str, lexed: Lexed, structure: Structure) -> str:
    """Name the constructs bashlex rejects or misreads, so that it is not even tried."""
    if structure.problems or lexed.problems:
        return "syntax error"
    if len(text) > _MAX_BASHLEX_CHARS:
        return "statement too long for the parser"
    found: list[str] = []
    tokens = lexed.tokens
    for i, tok in enumerate(tokens):
        if tok.kind == NEWLINE:
            continue
        role = structure.roles[i]
        word = tok.text
        label = ""
        if word == "[[" and role == R_WORD:
            label = "[[ ]] test"
        elif role == R_OPEN and word in ("case", "select"):
            label = "case ... esac" if word == "case" else "select loop"
        elif word.startswith("((") and role in (R_WORD, R_HEADER):
            label = "C-style for loop" if i and tokens[i - 1].text == "for" else "arithmetic command (( ))"
        elif role == R_KEYWORD and word == "time":
            label = "time keyword"
        elif word == "coproc" and role == R_WORD:
            label = "coproc"
        elif "=(" in word and _ARRAY.match(word):
            label = "array assignment"
        if label and label not in found:
            found.append(label)
    return ", ".join(found)


def _substituting_words(cmd: Command) -> tuple[Word, ...]:
    return (*cmd.assignments, *cmd.words, *(r.target for r in cmd.redirects if r.target))


def _with_substitutions(
    commands: list[Command], depth: int
) -> tuple[list[Command], list[str], list[int], list[tuple[int, str]]]:
    """Insert the commands run by $( ... ) and friends before the command using them.

    Also returns why any of those inner statements needed the tolerant reader,
    the lines of the substitutions nested too deep to be read, and the syntax
    errors inside them.
    """
    out: list[Command] = []
    reasons: list[str] = []
    too_deep: list[int] = []
    problems: list[tuple[int, str]] = []
    for cmd in commands:
        for word in _substituting_words(cmd):
            if "(" not in word.raw and "`" not in word.raw:
                continue  # as substitutions() finds at once, without its cache's lookup
            spans = substitutions(word.raw)
            if not spans:
                continue
            captured = word.raw.split("=", 1)[0] if is_assignment(word.raw) else None
            for start, end in spans:
                inner = read_script(word.raw[start:end], depth + 1)
                reasons.extend(reason for _, reason in inner.unparsed)
                offset = word.line + word.raw.count("\n", 0, start)
                too_deep.extend(offset + line for line, _ in inner.too_deep)
                problems.extend((offset + line, message) for line, message in inner.problems)
                out.extend(
                    replace(c, origin=CommandOrigin.SUBSTITUTION, captured_by=c.captured_by or captured)
                    for c in inner.commands_at(offset)
                )
        out.append(cmd)
    return out, reasons, too_deep, problems


def cache_clear() -> None:
    """Forget cached reads (for measurements)."""
    read_script.cache_clear()
    substitutions.cache_clear()
    pieces.clear()
    STATEMENTS.clear()
    _SHIFTED.clear()
    remembered.clear()
