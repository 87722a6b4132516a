"""Simple commands from token roles, for statements bashlex cannot read.

Every run of words between separators and reserved words is a simple
command, so the commands inside ``[[ ]]`` tests, ``case`` arms, C-style loops
and array-laden blocks are still seen. Background marks follow bash: an
``&`` sends back the whole and-or list before it, and a compound command
counts as one element of that list.
"""

from __future__ import annotations

from .draft import Draft, LineOf, heredoc_value
from .lexer import HereDocSpan, Token
from .model import Command, HereDoc
from .split import (
    R_BACKGROUND,
    R_CLOSE,
    R_FD,
    R_KEYWORD,
    R_OPEN,
    R_REDIRECT,
    R_SEPARATOR,
    R_TARGET,
    R_WORD,
)

_GROUP_ENDS = frozenset({";", "\n", ";;", ";&", ";;&"})


def commands_from_tokens(
    text: str,
    tokens: list[Token],
    roles: list[int],
    depths: list[int],
    heredocs: dict[int, HereDocSpan],
    line_of: LineOf,
) -> list[Command]:
    drafts: list[Draft] = []
    current: Draft | None = None
    fd = ""
    pending_op: Token | None = None
    group_start = 0
    saved_groups: list[int] = []

    def flush() -> None:
        nonlocal current, pending_op, fd
        if pending_op is not None and current is not None:  # '>' with no target (a syntax error)
            current.add_redirect(pending_op.text, pending_op.start, fd, None, None, line_of)
        if current is not None:
            drafts.append(current)
        current, pending_op, fd = None, None, ""

    for i, tok in enumerate(tokens):
        role = roles[i]
        if role in (R_WORD, R_FD, R_REDIRECT, R_TARGET):
            if current is None:
                current = Draft(tok.start, tok.end, depths[i] > 0)
            if role == R_WORD:
                current.add_word(tok.text, tok.start, tok.end, line_of)
            elif role == R_FD:
                fd = tok.text
            elif role == R_REDIRECT:
                pending_op = tok
            elif pending_op is not None:
                heredoc = _heredoc(text, heredocs.get(pending_op.start), line_of)
                current.add_redirect(
                    pending_op.text, pending_op.start, fd, (tok.text, tok.start, tok.end), heredoc, line_of
                )
                pending_op, fd = None, ""
            continue
        flush()
        if role == R_BACKGROUND:
            for draft in drafts[group_start:]:
                draft.background = True
            group_start = len(drafts)
        elif role == R_SEPARATOR and tok.text in _GROUP_ENDS:
            group_start = len(drafts)
        elif role == R_OPEN:
            saved_groups.append(group_start)
            group_start = len(drafts)
        elif role == R_CLOSE:
            group_start = saved_groups.pop() if saved_groups else len(drafts)
        elif role == R_KEYWORD and tok.text not in ("!", "time"):
            group_start = len(drafts)
    flush()
    return [d.freeze(text, line_of) for d in drafts]


def _heredoc(text: str, span: HereDocSpan | None, line_of: LineOf) -> HereDoc | None:
    if span is None:
        return None
    return heredoc_value(text, span.delimiter, span.quoted, (span.body_start, span.body_end), line_of)
