"""Reading statements into commands: bashlex, the fast path, the tolerant fallback, the cache."""

from __future__ import annotations

import contextlib
import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from migrate.diagnostics import Collector
from migrate.translators.shell import lexer
from migrate.translators.shell.analyze import analyze
from migrate.translators.shell.lexer import lex
from migrate.translators.shell.parsed import BashlexError, drafts_from_bashlex
from migrate.translators.shell.reader import (
    STATEMENTS,
    _blocker,
    _tolerant,
    cache_clear,
    compound_path,
    fast_path,
    line_finder,
    read_script,
)
from migrate.translators.shell.split import split


def names(text: str) -> list[str]:
    return [c.name for c in read_script(textwrap.dedent(text).strip("\n")).commands if c.words]


# Each construct bashlex cannot read: the commands inside are still found.
UNPARSEABLE = [
    ('[[ -f "$OUT/.done" ]] && srun a', "[[ ]] test", ["[[", "srun"]),
    ("arr=(x y)\nsrun b", "array assignment", ["srun"]),
    ("declare -a arr=(1 2)", "array assignment", ["declare"]),
    (
        'case "$D" in\n  d1) srun c ;;\n  *) echo no >&2; exit 2 ;;\nesac',
        "case ... esac",
        ["srun", "echo", "exit"],
    ),
    ("for ((i=0; i<4; i++)); do\n  srun d &\ndone", "C-style for loop", ["srun"]),
    ("(( n > 3 )) && srun e", "arithmetic command (( ))", ["(( n > 3 ))", "srun"]),
    ("time srun f", "time keyword", ["srun"]),
    ("select x in a b; do srun g; done", "select loop", ["srun"]),
    ("x=$([[ -f a ]] && echo y)", "inside a substitution: [[ ]] test", ["[[", "echo"]),
]


@pytest.mark.parametrize(("body", "reason", "commands"), UNPARSEABLE)
def test_unparseable_constructs_keep_their_commands(body: str, reason: str, commands: list[str]) -> None:
    diags = Collector()
    facts = analyze(body, 10, diags)
    assert [c for c in names(body) if c in commands] == commands
    assert facts.unparsed[0].reason == reason
    assert facts.unparsed[0].line == 10
    unparsed = [d for d in diags if d.code == "SHELL-UNPARSED"]
    assert unparsed[0].line == 10 and reason in unparsed[0].message
    assert facts.understood == facts.statements - 1


# Constructs bashlex reads once here-documents, arithmetic, substitutions and quotes are masked.
PARSEABLE = [
    "echo ${a[$i]} ${#a[@]}",
    "n=$(( SLURM_NNODES * 8 ))",
    "function f {\n  srun x\n}",
    "f() { srun x; }",
    "cat <<'EOF' > /tmp/x\nhello $X\nEOF",
    "python3 - \"$R\" <<'PY' | curl -d @- http://gw:9091/x\nimport json\nPY",
    "diff <(ls a) <(ls b)",
    "LAST=$(cat year.txt 2>/dev/null || echo 0)",
    "if [ -f x ]; then\n  srun a\nfi",
    "while read -r l; do echo $l; done < file",
    "echo x}'${'",  # bashlex loops forever on this word unless quotes are masked
]


@pytest.mark.parametrize("body", PARSEABLE)
def test_parseable_constructs(body: str) -> None:
    with hang_guard(60):  # a parser loop ends the test with a clear failure, not the run
        result = read_script(body)
    assert result.statements == result.understood == 1


@contextlib.contextmanager
def hang_guard(seconds: int) -> Iterator[None]:
    def stop(signum: int, frame: object) -> None:
        raise AssertionError(f"still reading after {seconds} s: the parser loops")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def test_here_document_is_attached_to_its_command() -> None:
    (cmd,) = read_script("cat <<'EOF' > /tmp/x\nhello $X\nEOF").commands
    heredoc = cmd.redirects[0].heredoc
    assert [r.op for r in cmd.redirects] == ["<<", ">"]
    assert heredoc is not None and heredoc.quoted and heredoc.body == "hello $X\n" and heredoc.line == 1


def test_substitution_commands_come_first_and_know_their_variable() -> None:
    cmds = read_script("jid=$(sbatch --parsable x.sbatch | awk '{print $4}')").commands
    assert [(c.name, c.origin, c.captured_by) for c in cmds] == [
        ("sbatch", "substitution", "jid"),
        ("awk", "substitution", "jid"),
        ("", "body", None),
    ]


def test_substitution_lines_are_absolute() -> None:
    cmds = read_script('echo a\nsrun x \\\n  --y "$(\n  hostname)"').commands
    assert [(c.name, c.line) for c in cmds] == [("echo", 0), ("hostname", 3), ("srun", 1)]


@pytest.mark.parametrize(
    ("body", "background"),
    [
        ("a && b &", [True, True]),
        ("a | b & c", [True, True, False]),
        ("a; b &", [False, True]),
        ("while true; do nvidia-smi >> l; sleep 5; done &", [True, True, True]),
        ("for ((;;)); do a; done &\nb", [True, False]),
    ],
)
def test_background_marks(body: str, background: list[bool]) -> None:
    assert [c.background for c in read_script(body).commands] == background


def test_nested_flag() -> None:
    cmds = read_script("a\nif b; then c; fi > out\nf() { d; }").commands
    assert [(c.name, c.nested) for c in cmds] == [
        ("a", False),
        ("b", True),
        ("c", True),
        ("", False),
        ("d", True),
    ]


def _both(text: str) -> tuple[object, object]:
    lexed = lex(text, record_substitutions=True)
    structure = split(lexed.tokens)
    lines = line_finder(text)
    parsed = [d.freeze(text, lines) for d in drafts_from_bashlex(text, lexed, lines)]
    return parsed, _tolerant(text, lexed, structure, lines)


FAST = [
    "export A=b",
    'export A="b c" B',
    "module load gcc/12 openmpi",
    "cd /scratch/$USER/run",
    "srun --mpi=pmix -n 4 ./a.out > log 2>&1",
    "nvidia-smi -l 5 >> gpu.log &",
    "kill $PID || true",
    "a | b && c; d &",
    "srun x \\\n  --y=1 \\\n  prog",
    "MASTER=$(scontrol show hostnames $SLURM_JOB_NODELIST | head -n1)",
    'cmd <<< "$x" &> all.log',
    "A=1 B='2 3' cmd {a,b} ~/x *.txt",
    'cat > "$RUN_DIR/c.yaml" <<EOF\nmodel: $M\nEOF',
    "python3 - \"$R\" <<'PY' | curl -s --data-binary @- http://gw:9091/m\nimport sys\nPY",
    "paste <<A - <<-B > out\na\nA\n\tb\n\tB",
]


@pytest.mark.parametrize("text", FAST)
def test_fast_path_reads_what_bashlex_reads(text: str) -> None:
    lexed = lex(text, record_substitutions=True)
    assert fast_path(text, lexed, split(lexed.tokens))
    parsed, tolerant = _both(text)
    assert parsed == tolerant


_WORD = st.sampled_from(
    [
        "srun",
        "echo",
        "a",
        "-n",
        "4",
        "--x=y",
        '"q r"',
        "'s t'",
        "$V",
        "${W}",
        "$(cmd x)",
        "/fsx/d",
        "k=v",
        "~/p",
    ]
)
_OP = st.sampled_from(
    [" ", " ", " ", " | ", " && ", " || ", "; ", " > f ", " 2>&1 ", " >> g ", " & ", " <<EOF ", " <<-'E' "]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_WORD, _OP), min_size=1, max_size=8))
def test_fast_path_agrees_with_bashlex_on_generated_commands(parts: list[tuple[str, str]]) -> None:
    text = "".join(w + op for w, op in parts).strip()
    for n, (_, op) in enumerate(parts):  # here-document bodies follow the line
        if "<<" in op:
            text += f"\nbody {n}\n" + ("EOF" if "EOF" in op else "\tE")
    lexed = lex(text, record_substitutions=True)
    if not fast_path(text, lexed, split(lexed.tokens)):
        return
    try:
        parsed, tolerant = _both(text)
    except BashlexError:
        pytest.fail(f"fast path taken but bashlex rejects {text!r}")
    assert parsed == tolerant, text


@pytest.mark.parametrize(
    "text",
    [
        "if a; then b; fi",
        "f() { a; }",
        "cat <<EOF &&\nx\nEOF\necho b",
        "(cd a)",
        "[[ -f a ]]",
        "a=(1 2)",
        "time a",
    ],
)
def test_fast_path_refuses_structure(text: str) -> None:
    lexed = lex(text, record_substitutions=True)
    assert not fast_path(text, lexed, split(lexed.tokens))


def test_statements_are_cached_by_text() -> None:
    cache_clear()
    read_script("module load gcc\nsrun ./a")
    read_script("module load gcc\nsrun ./b")
    assert (STATEMENTS.hits, STATEMENTS.misses) == (1, 3)


def test_cached_statements_get_the_lines_of_each_use() -> None:
    cache_clear()
    first = analyze("srun ./a", 5, Collector()).launchers[0]
    second = analyze("echo\nsrun ./a", 20, Collector()).launchers[0]
    assert (first.line, second.line) == (5, 21)


def _corpus_statements() -> Iterator[tuple[Path, str]]:
    """Every top-level statement of the corpus's scripts, with its file."""
    corpus = Path(__file__).resolve().parent.parent / "corpus"
    for path in sorted(corpus.rglob("*")):
        if not path.is_file() or path.read_bytes()[:2] != b"#!":
            continue
        text = path.read_text(encoding="utf-8", errors="replace").replace("\r\n", "\n")
        for stmt in split(lex(text).tokens).statements:
            yield path, text[stmt.start : stmt.end]


def _fast(text: str) -> bool:
    lexed = lex(text, record_substitutions=True)
    return fast_path(text, lexed, split(lexed.tokens))


def _compound(text: str) -> bool:
    lexed = lex(text, record_substitutions=True)
    structure = split(lexed.tokens)
    return not _blocker(text, lexed, structure) and compound_path(text, lexed, structure)


def _heredoc_fast(text: str) -> bool:
    return bool(lex(text).heredocs) and _fast(text)


def _compound_only(text: str) -> bool:
    return not _fast(text) and _compound(text)


@pytest.mark.parametrize(("taken_by", "least"), [(_heredoc_fast, 10), (_compound_only, 10)])
def test_the_paths_without_bashlex_agree_with_it_over_the_corpus(
    taken_by: Callable[[str], bool], least: int
) -> None:
    taken = [(p, s) for p, s in _corpus_statements() if taken_by(s)]
    for path, alone in taken:
        parsed, tolerant = _both(alone)
        assert parsed == tolerant, f"{path}: {alone!r}"
    assert len(taken) >= least


_SIMPLE = st.sampled_from(
    [
        "srun ./a",
        'echo "$X" > out',
        "b=$(date)",
        "cmd1 | cmd2 && cmd3",
        "continue",
        "[ -f x ] || exit 1",
        "local n=1; shift",
    ]
)
_LINES = st.one_of(_SIMPLE, st.just("cat <<EOF\nbody\nEOF"))  # only where a line ends after it


@st.composite
def _compound_text(draw: st.DrawFn, depth: int = 0) -> str:
    """A valid compound statement; here-documents and nested compounds only where lines end."""
    block = draw(_LINES) if depth >= 2 else draw(st.one_of(_LINES, _compound_text(depth + 1)))
    inline = draw(_SIMPLE)
    other = draw(_SIMPLE)
    shape = draw(st.sampled_from(_SHAPES))
    return shape.format(block=block, inline=inline, other=other)


_SHAPES = (
    'if [ -n "$A" ]; then\n  {block}\nelif true; then {other}\nelse\n  {other}\nfi',
    "for i in 1 2 $(seq 3); do\n  {block}\ndone",
    "while read -r line; do {inline}; done < in.txt",
    "f() {{\n  {block}\n}}",
    "( cd /tmp && {inline} )",
    "{{ {inline}; {other}; }} > log 2>&1",
    "until {other}; do\n  {block}\ndone &",
)


@settings(max_examples=300, deadline=None)
@given(_compound_text())
def test_compound_path_agrees_with_bashlex_on_generated_statements(text: str) -> None:
    assert _compound(text), text
    try:
        parsed, tolerant = _both(text)
    except BashlexError:
        pytest.fail(f"compound path taken but bashlex rejects {text!r}")
    assert parsed == tolerant, text


_BASHLEX_PROBE = """
import sys
from migrate.translators.shell.reader import read_script
read_script("#!/bin/bash\\nfor i in 1 2; do srun hostname; done\\nif true; then echo a; fi\\n")
before = "bashlex" in sys.modules
read_script("echo done\\r\\n")  # a carriage return: only bashlex reads it as bash does
print(before, "bashlex" in sys.modules)
"""


def test_bashlex_is_imported_by_the_first_statement_that_needs_it() -> None:
    """Its parser's tables are built as it is imported; a script the other paths read never needs it."""
    out = subprocess.run([sys.executable, "-c", _BASHLEX_PROBE], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True"]


def test_a_words_substitutions_are_found_once_per_spelling(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two statements that use the same ``$(date +%s)``: the word is lexed for its spans once."""
    word = '"$(date +%s)"'
    lexed: list[str] = []

    class Counted(lexer.Lexer):
        def __init__(self, text: str, record_substitutions: bool = False) -> None:
            if record_substitutions:  # as lexed for its spans (unquoting lexes it too, once)
                lexed.append(text)
            super().__init__(text, record_substitutions)

    monkeypatch.setattr(lexer, "Lexer", Counted)
    cache_clear()
    first = read_script(f"mkdir -p {word}\n")
    second = read_script(f"echo {word} > stamp\n")
    assert [c.words[0].value for c in first.commands] == ["date", "mkdir"]
    assert [c.words[0].value for c in second.commands] == ["date", "echo"]
    assert lexed.count(word) == 1
