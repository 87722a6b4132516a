"""The tolerant tokenizer: words, operators, here-documents, recovery, dequoting."""

from __future__ import annotations

import re

import pytest
from conftest import CORPUS
from hypothesis import given, settings
from hypothesis import strategies as st

from migrate.translators.shell.lexer import (
    NEWLINE,
    OP,
    WORD,
    arithmetic_ends,
    dequote,
    is_assignment,
    lex,
    substitutions,
)


def words(text: str) -> list[str]:
    return [t.text for t in lex(text).tokens if t.kind == WORD]


def kinds(text: str) -> list[tuple[int, str]]:
    return [(t.kind, t.text) for t in lex(text).tokens]


def test_words_operators_and_newlines() -> None:
    assert kinds("a b>c 2>&1 | d && e;\nf &") == [
        (WORD, "a"),
        (WORD, "b"),
        (OP, ">"),
        (WORD, "c"),
        (WORD, "2"),
        (OP, ">&"),
        (WORD, "1"),
        (OP, "|"),
        (WORD, "d"),
        (OP, "&&"),
        (WORD, "e"),
        (OP, ";"),
        (NEWLINE, "\n"),
        (WORD, "f"),
        (OP, "&"),
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("echo 'a b' \"c d\" e\\ f", ["echo", "'a b'", '"c d"', "e\\ f"]),
        ("x=$(echo ')' \"(\")", ["x=$(echo ')' \"(\")"]),
        ("x=$(case a in a) echo;; esac) y", ["x=$(case a in a) echo;; esac)", "y"]),
        ("echo ${a:-'}'} z", ["echo", "${a:-'}'}", "z"]),
        ("echo $((1 + (2*3))) z", ["echo", "$((1 + (2*3)))", "z"]),
        ("a=(x y\n z) b", ["a=(x y\n z)", "b"]),
        ("diff <(ls a) >(cat)", ["diff", "<(ls a)", ">(cat)"]),
        ("echo `pwd`'/'", ["echo", "`pwd`'/'"]),
        ("echo a#b #comment", ["echo", "a#b"]),
        ("echo $'it\\'s' x", ["echo", "$'it\\'s'", "x"]),
        ("srun a \\\n  b", ["srun", "a", "b"]),
        ("ls !(*.txt)", ["ls", "!(*.txt)"]),
    ],
)
def test_word_boundaries(text: str, expected: list[str]) -> None:
    assert words(text) == expected


def test_arithmetic_command_is_one_word() -> None:
    assert words("for ((i=0; i<3; i++)); do :; done")[:2] == ["for", "((i=0; i<3; i++))"]


def test_here_document_bodies_are_skipped() -> None:
    text = "cat <<EOF > out\nsrun not a command\nEOF\necho after\n"
    out = lex(text)
    assert "srun" not in [t.text for t in out.tokens]
    (doc,) = out.heredocs
    assert doc.delimiter == "EOF" and not doc.quoted and doc.terminated
    assert text[doc.body_start : doc.body_end] == "srun not a command\n"
    newline = next(t for t in out.tokens if t.kind == NEWLINE)
    assert text[: newline.end].endswith("\nEOF")
    assert words(text)[-2:] == ["echo", "after"]


def test_quoted_and_tab_stripped_delimiters_and_two_bodies() -> None:
    text = "cat <<'A' <<-\"B\"\n$x\nA\n\tbody\n\tB\nnext\n"
    out = lex(text)
    assert [(h.delimiter, h.quoted) for h in out.heredocs] == [("A", True), ("B", True)]
    assert words(text)[-1] == "next"


def test_here_document_inside_substitution() -> None:
    text = "x=$(cat <<EOF\n) not the end\nEOF\n)\necho y"
    assert words(text) == ["x=$(cat <<EOF\n) not the end\nEOF\n)", "echo", "y"]


def test_unterminated_quote_closes_at_end_of_line() -> None:
    text = 'echo "starting\ntorchrun --nproc_per_node=4 train.py\n'
    out = lex(text)
    assert out.problems == [(5, "unterminated double quote")]
    assert words(text)[1:] == ['"starting', "torchrun", "--nproc_per_node=4", "train.py"]


def test_unterminated_here_document_is_reported() -> None:
    out = lex("cat <<EOF\nno end")
    assert out.problems == [(4, "here-document is not terminated (wanted 'EOF')")]


def test_comments_and_arithmetic_spans_are_recorded() -> None:
    text = "x=$((a+1)) # note\n"
    out = lex(text)
    assert [text[s:e] for s, e in out.comments] == ["# note"]
    assert [text[s:e] for s, e in out.arithmetic] == ["$((a+1))"]


@pytest.mark.parametrize(
    ("raw", "value"),
    [
        ("'a'\"$B\"'c'", "a$Bc"),
        ('"$(basename "$d")"', '$(basename "$d")'),
        ('--x="a b"', "--x=a b"),
        ("\\$HOME", "$HOME"),
        ('"a\\"b\\$c\\d"', 'a"b$c\\d'),
        ("$'tab\\there'", "tab\\there"),
        ("${x:-'y'}", "${x:-'y'}"),
        ("`pwd`'/'", "`pwd`/"),
        ("~/x", "~/x"),
        ("'unterminated", "unterminated"),
    ],
)
def test_dequote(raw: str, value: str) -> None:
    assert dequote(raw) == value


def test_dequote_can_keep_line_continuations() -> None:
    raw = '"a \\\nb"'
    assert dequote(raw) == "a b"
    assert dequote(raw, keep_continuations=True) == "a \\\nb"


def test_substitution_spans() -> None:
    raw = 'x=$(a $(b)) "`c`" <(d)'
    assert [raw[s:e] for s, e in substitutions(raw)] == ["a $(b)", "c", "d"]
    assert substitutions("$((1+2))") == []


@pytest.mark.parametrize(
    ("word", "expected"),
    [("A=b", True), ("A+=b", True), ("a[1]=x", True), ("=x", False), ("1A=b", False), ("--x=y", False)],
)
def test_is_assignment(word: str, expected: bool) -> None:
    assert is_assignment(word) is expected


def test_unclosed_substitutions_cost_linear_time() -> None:
    # Each unclosed $( made every enclosing level rescan the rest of the text: a few
    # hundred bytes took seconds and a few KB never finished. The budget closes them.
    from migrate.translators.shell.lexer import Lexer

    line = "jid=$(" + "$(" * 40 + " --time=1\n"
    text = line * 50
    lexer = Lexer(text)
    lexed = lexer.run()
    assert any("too deeply unbalanced" in message for _, message in lexed.problems)
    assert lexer.nested_budget > -len(text)  # stopped near the budget, not after a rescan


def _arith_end_by_scanning(text: str, i: int) -> int:
    """The plain definition: scan ahead from '((' at i (quadratic when repeated for each '((')."""
    depth = 0
    for j in range(i + 2, len(text)):
        c = text[j]
        if c == "(":
            depth += 1
        elif c == ")":
            if depth == 0:
                return j + 2 if text.startswith(")", j + 1) else -1
            depth -= 1
        elif c == "\n" and depth == 0 and text.startswith("\n\n", j):
            return -1
    return -1


_ARITH_PIECES = ["((", "))", "(", ")", "\n", "\n\n", "1", " ", "$", "'", "x++"]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(_ARITH_PIECES), max_size=40))
def test_arithmetic_ends_match_the_plain_definition(pieces: list[str]) -> None:
    text = "".join(pieces)
    ends = arithmetic_ends(text)
    for i in range(len(text) - 1):
        if text.startswith("((", i):
            assert ends.get(i, -1) == _arith_end_by_scanning(text, i), (text, i)


def test_arithmetic_ends_of_the_corpus_match_the_plain_definition() -> None:
    for path in sorted(CORPUS.glob("**/*")):
        if not path.is_file() or path.suffix in (".json", ".md", ".yaml", ".yml", ".html", ".svg"):
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        ends = arithmetic_ends(text)
        starts = [m.start() for m in re.finditer(r"(?=\(\()", text)]
        assert all(ends.get(i, -1) == _arith_end_by_scanning(text, i) for i in starts[:200]), path


def test_unclosed_arithmetic_costs_one_pass() -> None:
    # Scanning ahead from each of 4,000 unclosed '((' took about 15 s; one pass takes milliseconds.
    text = "echo $" + "((" * 4000 + "1" + "))" * 2000 + "\n"
    assert lex(text).tokens[0].text == "echo"
    ends = arithmetic_ends(text)
    for i in (6, 4000, 6 + 2 * 2000, 6 + 2 * 3999):
        assert ends.get(i, -1) == _arith_end_by_scanning(text, i)


_OLD_ARITHMETIC = re.compile(r"\(\((.*?)\)\)", re.DOTALL)


@given(st.text(alphabet="(()) $SLURM_ID#\n", max_size=120))
def test_arithmetic_spans_for_variables_are_the_regular_expression_ones(text: str) -> None:
    from migrate.translators.shell.variables import _arithmetic

    assert _arithmetic(text) == [m.group(1) for m in _OLD_ARITHMETIC.finditer(text)]


def test_comments_are_recorded_once_however_often_a_substitution_is_read_again() -> None:
    from migrate.translators.shell.reader import read_script

    # Found by fuzzing: unclosed $( runs read again after each recovery, 4,236 times for 23 comments.
    path = CORPUS / "adversarial" / "fuzz_repeated_comments.sbatch"
    text = path.read_bytes().decode("utf-8", errors="replace")
    comments = lex(text).comments
    assert comments and comments == sorted(set(comments))
    assert all(text[start] == "#" for start, _ in comments)
    assert len(read_script(text).code) == len(text)  # blanked, not grown
