"""Statement splitting: compound blocks, continuations, here-documents, recovery."""

from __future__ import annotations

import textwrap

import pytest

from migrate.translators.shell.lexer import lex
from migrate.translators.shell.split import split


def statements(text: str) -> list[str]:
    text = textwrap.dedent(text).strip("\n")
    return [text[s.start : s.end] for s in split(lex(text).tokens).statements]


def problems(text: str) -> list[str]:
    return [message for _, message in split(lex(textwrap.dedent(text).strip("\n")).tokens).problems]


def test_one_statement_per_line_with_continuations_and_pipes() -> None:
    assert statements(
        """
        module load x   # comment
        srun a \\
            b
        find . -print0 |
            xargs -0 rm
        a &&
        b; c
        """
    ) == ["module load x", "srun a \\\n    b", "find . -print0 |\n    xargs -0 rm", "a &&\nb; c"]


@pytest.mark.parametrize(
    "block",
    [
        "if [ -f x ]; then\n  a\nelif b; then\n  c\nelse\n  d\nfi",
        "for f in a b; do\n  echo $f\ndone > out &",
        "for ((i=0; i<3; i++)); do\n  echo $i\ndone",
        "while read -r l; do\n  echo $l\ndone < file",
        "until false; do\n  :\ndone",
        'case "$x" in\n  a|b) echo ab ;;\n  (c) echo c\n    ;;\n  *) exit 2 ;;\nesac',
        "{\n  echo a\n} > log 2>&1",
        "(\n  cd x && make\n)",
        "f() {\n  echo hi\n}",
        "f()\n{\n  echo hi\n}",
        "function g {\n  echo hi\n}",
        "function h() {\n  if a; then b; fi\n}",
        "select x in a b; do\n  break\ndone",
        "[[ -f a &&\n   -f b ]] && echo both",
        "x=$(\n  cat file\n)",
        "subjects=(a b\n  c d)",
    ],
)
def test_compound_blocks_are_one_statement(block: str) -> None:
    assert statements(block + "\necho after") == [block, "echo after"]
    assert problems(block) == []


def test_here_document_body_belongs_to_its_statement() -> None:
    assert statements("cat > f <<EOF\nif not a keyword\nEOF\necho next") == [
        "cat > f <<EOF\nif not a keyword\nEOF",
        "echo next",
    ]


def test_reserved_words_only_where_a_command_starts() -> None:
    assert statements("echo if then fi done\necho }") == ["echo if then fi done", "echo }"]
    assert problems("echo if then fi done") == []


def test_nested_case_inside_a_loop() -> None:
    block = "for d in a b; do\n  case $d in\n    a) x=1 ;;\n  esac\ndone"
    assert statements(block) == [block]


def test_missing_fi_is_reported_and_runs_to_the_end() -> None:
    text = """
        module load vasp
        if [ -f CONTCAR ]; then
            cp CONTCAR POSCAR
        srun vasp_std
        """
    assert statements(text)[0] == "module load vasp"
    assert statements(text)[1].endswith("srun vasp_std")
    assert problems(text) == ["'if' is never closed (missing 'fi')"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("done", "unexpected 'done'"),
        ("then", "unexpected 'then'"),
        ("echo a )", "unexpected ')'"),
        ("for x in a; do echo; fi", "'for' is never closed (missing 'done')"),
        ("a ;; b", "';;' outside a case"),
        ("echo >", "a redirection without a target"),
        ("a |", "'|' at the end of the body"),
        ("a && ; b", "unexpected ';'"),
        ("; a", "unexpected ';'"),
        ("if a; then ; fi", "unexpected ';'"),
    ],
)
def test_syntax_problems(text: str, message: str) -> None:
    assert message in problems(text)


def test_a_stray_closer_does_not_swallow_the_rest() -> None:
    assert statements("done\necho a\necho b") == ["done", "echo a", "echo b"]
