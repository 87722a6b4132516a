"""A statement cut out of its script's reading equals the statement read by itself."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from migrate.translators.shell.lexer import lex
from migrate.translators.shell.reader import cache_clear, read_script, read_statement
from migrate.translators.shell.slices import Cuts
from migrate.translators.shell.split import split

CORPUS = Path(__file__).resolve().parent.parent / "corpus"


def _corpus_scripts() -> list[Path]:
    found = []
    for path in sorted(CORPUS.rglob("*")):
        if not path.is_file() or path.suffix in (".yaml", ".yml", ".json", ".md", ".toml", ".conf"):
            continue
        head = path.read_bytes()[:2]
        if head == b"#!":
            found.append(path)
    return found


def assert_cuts_agree(text: str) -> int:
    lexed = lex(text, record_substitutions=True)
    structure = split(lexed.tokens)
    if not Cuts.usable(lexed, structure):
        return 0
    cuts = Cuts(lexed, structure)
    for index, stmt in enumerate(structure.statements):
        alone = text[stmt.start : stmt.end]
        own = lex(alone, record_substitutions=True)
        assert cuts.statement(index) == (own, split(own.tokens)), alone
    return len(structure.statements)


def test_corpus_statements_cut_as_read_alone() -> None:
    scripts = _corpus_scripts()
    assert len(scripts) > 50
    statements = sum(assert_cuts_agree(p.read_text(encoding="utf-8", errors="replace")) for p in scripts)
    assert statements > 500


_PIECES = (
    "module load cuda/12.1",
    'srun --ntasks=4 python train.py "$@" > "$LOG" 2>&1',
    "export A=$(hostname) B=`date`",
    'cat > "$D/c.yaml" <<EOF\nmodel: $M\nsteps: 10\nEOF',
    "cat <<'PY' | python3 -\nprint('x')\nPY",
    'for i in $(seq 1 4); do\n  if [[ -f x$i ]]; then continue; fi\n  echo "$i"\ndone',
    'case "$S" in\n  a) echo a ;;\n  *) exit 2 ;;\nesac',
    'declare -a ARGS=(\n  --lr 3e-4\n  --out "$R"\n)',
    'f() {\n  local x="$1"; shift\n  (( x > 0 )) && echo "${x:-none}"\n}',
    "# a comment with 'quotes' and $(things)",
    "a=1; b=2 && c=3 || d=4 &",
    'echo "nested $(echo "$(date +%s)")" # trailing',
    'while read -r line; do echo "$line"; done < <(ls)',
    "x=$(( 1 + 2 ))",
    "trap 'rm -rf /tmp/x' EXIT",
)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), min_size=1, max_size=12), st.sampled_from(["\n", "\n\n", ";\n"]))
def test_generated_scripts_cut_as_read_alone(pieces: list[str], glue: str) -> None:
    assert_cuts_agree("#!/bin/bash\n" + glue.join(pieces) + "\n")


@pytest.mark.parametrize("text", ["echo 'unterminated\nsrun a", "if true; then\n a\n", "cat <<EOF\nno end"])
def test_scripts_with_problems_are_not_cut(text: str) -> None:
    lexed = lex(text, record_substitutions=True)
    assert not Cuts.usable(lexed, split(lexed.tokens))


def test_a_cut_statement_reads_as_the_statement_alone() -> None:
    text = '#!/bin/bash\nexport X=$(date)\ncat <<EOF\n$X\nEOF\nsrun ./a "$X"\n'
    cache_clear()
    in_script = read_script(text)
    parts = [cmds for _, cmds in in_script.parts]
    cache_clear()
    lexed = lex(text, record_substitutions=True)
    alone = [read_statement(text[s.start : s.end]).commands for s in split(lexed.tokens).statements]
    assert parts == alone


@pytest.mark.parametrize("piece", _PIECES)
@pytest.mark.parametrize("after", ["\n", "  # a comment after it\n", "\n# and on the next line\n", ""])
def test_a_text_of_one_statement_cuts_as_read_alone(piece: str, after: str) -> None:
    """The statement that starts its text keeps its tokens: what lies after its end is left out."""
    if "<<" in piece and after.startswith(" "):
        after = "\n" + after  # a here-document's terminator line holds nothing else
    assert assert_cuts_agree(piece + after) == (0 if piece.startswith("#") else 1)
