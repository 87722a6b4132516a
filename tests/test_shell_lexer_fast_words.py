"""The lexer's shortcut for plain words finds the same tokens as reading each word in full."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from migrate.translators.shell import lexer

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
_NEVER = re.compile(r"(?!)")


def both(text: str, monkeypatch: pytest.MonkeyPatch) -> tuple[lexer.Lexed, lexer.Lexed]:
    fast = lexer.lex(text, record_substitutions=True)
    with monkeypatch.context() as patched:
        patched.setattr(lexer, "_SIMPLE_WORD", _NEVER)
        patched.setattr(lexer, "_OPERATOR_FIRST", _ALL)
        full = lexer.lex(text, record_substitutions=True)
    return fast, full


class _Everything(frozenset[str]):
    def __contains__(self, item: object) -> bool:
        return True


_ALL = _Everything()


def test_corpus_lexes_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    files = [p for p in sorted(CORPUS.rglob("*")) if p.is_file() and p.read_bytes()[:2] == b"#!"]
    assert len(files) > 50
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        fast, full = both(text, monkeypatch)
        assert fast == full, path


_ALPHABET = st.sampled_from(
    [*list("ab1 \t\n;&|()<>'\"\\$`#{}=[]*@!+?-"), "((", "))", "<<", "EOF\n", "$(", "`"]
)


@settings(max_examples=400, deadline=None)
@given(st.lists(_ALPHABET, max_size=60).map("".join))
def test_any_text_lexes_the_same(text: str) -> None:
    with pytest.MonkeyPatch.context() as monkeypatch:
        fast, full = both(text, monkeypatch)
    assert fast == full
