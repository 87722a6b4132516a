"""Simple commands from bashlex's syntax tree.

bashlex is a real parser, so when it reads a statement its tree decides what
is a command, an assignment or a redirection. Word values are still taken
from the source text by position and dequoted by ``lexer.dequote``: bashlex's
own dequoting mangles mixed quotes (``'a'"$B"'c'``) and escapes.

bashlex only ever sees the structure of a statement: everything else is
masked first, keeping every offset. Here-document operators and bodies
(bashlex rejects ``<<'EOF'``; bodies are data and are attached from the
tokenizer instead), ``$(( ... ))`` (not implemented in bashlex), the inside of
``$( ... )``, backquotes and ``<( ... )`` (bashlex rejects ``$(a || b)``; the
reader reads every substitution on its own anyway), and the inside of quotes
and ``${ ... }`` (bashlex loops forever on words such as ``a'${'``).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

import bashlex

from .draft import Draft, LineOf, heredoc_value
from .lexer import Lexed


class NodeKind(StrEnum):
    """The ``kind`` of a node of bashlex's syntax tree that the walk reads."""

    LIST = "list"
    COMMAND = "command"
    PIPELINE = "pipeline"
    COMPOUND = "compound"  # { ...; } or ( ... )
    IF = "if"
    FOR = "for"
    WHILE = "while"
    UNTIL = "until"
    FUNCTION = "function"
    OPERATOR = "operator"  # ; & && || between the parts of a list
    WORD = "word"
    ASSIGNMENT = "assignment"
    REDIRECT = "redirect"


# Nodes that hold commands; the others are the parts of one.
_STRUCTURE = frozenset(
    (
        NodeKind.LIST,
        NodeKind.COMMAND,
        NodeKind.PIPELINE,
        NodeKind.COMPOUND,
        NodeKind.IF,
        NodeKind.FOR,
        NodeKind.WHILE,
        NodeKind.UNTIL,
        NodeKind.FUNCTION,
    )
)
_WORDS = frozenset((NodeKind.WORD, NodeKind.ASSIGNMENT))


class BashlexError(Exception):
    """bashlex could not read the statement; the message says why."""


def mask(text: str, lexed: Lexed) -> str:
    """Hide here-documents and arithmetic from bashlex without moving any offset."""
    if not (lexed.heredocs or lexed.arithmetic or lexed.substitutions or lexed.quoted):
        return text
    chars = list(text)
    for start, end in lexed.quoted:
        for k in range(start, min(end, len(chars))):
            if chars[k] != "\n":
                chars[k] = "_"
    for start, end in lexed.substitutions:
        for k in range(start, min(end, len(chars))):
            if chars[k] != "\n":
                chars[k] = " "
        if end > start:
            chars[start] = ":"
    for h in lexed.heredocs:
        for k in range(h.op_start, min(h.delimiter_end, len(chars))):
            chars[k] = " "
        for k in range(h.body_start, min(h.end, len(chars))):
            if chars[k] != "\n":
                chars[k] = " "
    for start, end in lexed.arithmetic:
        width = end - start
        if width >= 4:
            chars[start:end] = ["$", "{", *("_" * (width - 3)), "}"]
    return "".join(chars)


def drafts_from_bashlex(text: str, lexed: Lexed, line_of: LineOf) -> list[Draft]:
    """Parse one statement with bashlex; raise BashlexError when it cannot."""
    masked = mask(text, lexed)
    drafts: list[Draft] = []
    if masked.strip():
        try:
            trees = bashlex.parse(masked)
        except Exception as exc:  # bashlex raises many types, some of them internal
            message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise BashlexError(message[:120]) from None
        walker = _Walker(text, line_of, drafts)
        for tree in trees:
            walker.walk(tree, nested=False)
    _attach_heredocs(text, lexed, line_of, drafts)
    return drafts


class _Walker:
    def __init__(self, text: str, line_of: LineOf, drafts: list[Draft]) -> None:
        self.text = text
        self.line_of = line_of
        self.drafts = drafts

    def walk(self, node: Any, nested: bool) -> list[Draft]:
        kind = node.kind
        if kind == NodeKind.COMMAND:
            return [self._command(node, nested)]
        if kind == NodeKind.LIST:
            return self._list(node, nested)
        if kind == NodeKind.PIPELINE:
            produced: list[Draft] = []
            for part in node.parts:
                if part.kind in _STRUCTURE:
                    produced += self.walk(part, nested)
            return produced
        if kind == NodeKind.COMPOUND:
            produced = []
            for part in node.list:
                if part.kind in _STRUCTURE:
                    produced += self.walk(part, True)
            redirects = getattr(node, "redirects", None) or []
            if redirects:
                start = redirects[0].pos[0]
                draft = Draft(start, start, nested)
                for r in redirects:
                    self._redirect(draft, r)
                self.drafts.append(draft)
                produced.append(draft)
            return produced
        if kind in _STRUCTURE:  # if / for / while / until / function
            produced = []
            for part in getattr(node, "parts", []):
                if part.kind in _STRUCTURE:
                    produced += self.walk(part, True)
            return produced
        return []

    def _list(self, node: Any, nested: bool) -> list[Draft]:
        produced: list[Draft] = []
        group: list[Draft] = []
        for part in node.parts:
            if part.kind == NodeKind.OPERATOR:
                if part.op == "&":
                    for draft in group:
                        draft.background = True
                    group = []
                elif part.op not in ("&&", "||"):
                    group = []
            elif part.kind in _STRUCTURE:
                got = self.walk(part, nested)
                group += got
                produced += got
        return produced

    def _command(self, node: Any, nested: bool) -> Draft:
        start, end = node.pos
        draft = Draft(start, end, nested)
        for part in node.parts:
            if part.kind in _WORDS:
                s, e = part.pos
                draft.add_word(self.text[s:e], s, e, self.line_of)
            elif part.kind == NodeKind.REDIRECT:
                self._redirect(draft, part)
        self.drafts.append(draft)
        return draft

    def _redirect(self, draft: Draft, node: Any) -> None:
        fd = "" if getattr(node, "input", None) is None else str(node.input)
        op = node.type
        op_start = node.pos[0] + len(fd)
        output = getattr(node, "output", None)
        target: tuple[str, int, int] | None = None
        if isinstance(output, int):
            target = (str(output), node.pos[1] - len(str(output)), node.pos[1])
        elif output is not None and hasattr(output, "pos"):
            s, e = output.pos
            target = (self.text[s:e], s, e)
        draft.add_redirect(op, op_start, fd, target, None, self.line_of)


def _attach_heredocs(text: str, lexed: Lexed, line_of: LineOf, drafts: list[Draft]) -> None:
    """Give each top-level here-document to the command written just before it."""
    ops = {t.start: t for t in lexed.tokens}
    for h in lexed.heredocs:
        op = ops.get(h.op_start)
        if op is None:
            continue  # inside a $( ... ): read again when the substitution is read
        owner = None
        for draft in drafts:
            if draft.start <= h.op_start and (owner is None or draft.start >= owner.start):
                owner = draft
        if owner is None:
            owner = Draft(h.op_start, h.op_start, False)
            drafts.append(owner)
        raw_end = h.delimiter_end
        delimiter = text[op.end : raw_end].strip()
        target = (delimiter, raw_end - len(delimiter), raw_end)
        heredoc = heredoc_value(text, h.delimiter, h.quoted, (h.body_start, h.body_end), line_of)
        owner.add_redirect(op.text, h.op_start, "", target, heredoc, line_of)
