"""A script read piece by piece reads exactly as the script read whole, and lexes only what it must."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import benchmark_module
from hypothesis import given, settings
from hypothesis import strategies as st

from migrate.translators.shell import pieces, reader
from migrate.translators.shell.reader import ScriptRead, cache_clear, read_script

CORPUS = Path(__file__).resolve().parent.parent / "corpus"


def _read_whole(text: str, monkeypatch: pytest.MonkeyPatch) -> ScriptRead:
    cache_clear()
    with monkeypatch.context() as patch:
        patch.setattr(pieces, "cut", lambda text: None)
        return read_script(text)


def _read_in_pieces(text: str) -> ScriptRead:
    cache_clear()
    return read_script(text)


def assert_pieces_agree(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    assert _read_in_pieces(text) == _read_whole(text, monkeypatch), text
    pieces.clear()
    pieces.cut(text)  # the lines now known, and the chunks: the same reading from the caches
    reader.STATEMENTS.clear()
    reader.read_script.cache_clear()
    assert read_script(text) == _read_whole(text, monkeypatch), text


def _shell_scripts() -> Iterator[str]:
    for path in sorted(CORPUS.rglob("*")):
        if path.is_file() and path.read_bytes()[:2] == b"#!":
            yield path.read_text(encoding="utf-8", errors="replace")


def test_corpus_scripts_read_as_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    scripts = list(_shell_scripts())
    assert len(scripts) > 50
    for text in scripts:
        assert_pieces_agree(text, monkeypatch)


def test_real_sized_scripts_read_as_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """The benchmark's long bodies: functions, argument arrays, here-documents, nested loops."""
    longtail = benchmark_module("longtail")
    rng = random.Random(5)
    grown = 0
    for serial, text in enumerate(_shell_scripts()):
        if not longtail.growable_script(text):
            continue
        target = (3_000, 9_000)[serial % 2]  # both sizes, over the scripts in turn
        assert_pieces_agree(longtail.grow_script(text, target, serial, rng), monkeypatch)
        grown += 1
    assert grown > 20


# Lines and statements that end, or do not end, where a line ends.
_FRAGMENTS = (
    "module load cuda/12.1",
    'srun --ntasks=4 python train.py "$@" > "$LOG" 2>&1',
    "export A=$(hostname) B=`date`  # a comment",
    'cat > "$D/c.yaml" <<EOF\nmodel: $M\nsteps: 10\nEOF',
    "cat <<-'PY' | python3 - \\\n    --flag\n\tprint('x')\n\tPY",
    "cat <<EOF | curl -s --data-binary @- \\\n  http://gw:9091/metrics\njobs 1\nEOF",
    'for i in $(seq 1 4); do\n  if [[ -f x$i ]]; then continue; fi\n  echo "$i"\ndone',
    'case "$S" in\n  a) echo a ;;\n  train)\n    srun x\n    ;;\n  *) exit 2 ;;\nesac',
    'declare -a ARGS=(\n  --lr 3e-4\n  --out "$R"\n)',
    "subjects=(sub-001 sub-002\n  sub-003)",
    'f() {\n  local x="$1"; shift\n  (( x > 0 )) && echo "${x:-none}"\n}',
    "g()\n{\n  echo g\n}",
    "jid=$(sbatch --parsable \\\n  --dependency=afterok:$prev run.sh)",
    'out=$(\n  grep -c x "$F"\n)',
    "x=$(( 1 +\n  2 ))",
    "(( n = 1 +\n  2 ))",
    'msg="first line\nsecond line $HOME"',
    "echo 'quoted\n  # not a comment\n'",
    "a=1; b=2 && c=3 || d=4 &",
    "make all &&\n  make install",
    "srun python train.py \\\n  --data /fsx/d \\\n  --out /fsx/o",
    'while read -r line; do echo "$line"; done < <(ls)',
    "if true; then echo one; fi",
    "until srun x; do\n  sleep 1\ndone",
    "trap 'rm -rf /tmp/x' EXIT",
    "echo dos\r",
    "   ",
    "# only a comment",
    "{ echo a; echo b; } > log",
    "(\n  cd /tmp && ls\n)",
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(_FRAGMENTS), min_size=1, max_size=14),
    st.sampled_from(["\n", "\n\n", ";\n", "\n  \n"]),
    st.sampled_from(["\n", "", "\\\n", " \\"]),
)
def test_generated_scripts_read_as_whole(fragments: list[str], glue: str, ending: str) -> None:
    with pytest.MonkeyPatch.context() as patch:
        assert_pieces_agree("#!/bin/bash\n" + glue.join(fragments) + ending, patch)


@pytest.mark.parametrize(
    "text",
    [
        "echo 'unterminated\nsrun a\n",
        "if true; then\n a\n",
        "cat <<EOF\nno end",
        "srun a\nfi\nsrun b\n",
        "f() {\n  echo\n",
        "x=$(\n echo\n",
        "echo a |\n",
    ],
)
def test_scripts_with_problems_read_whole(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    assert pieces.cut(text) is None
    read = _read_in_pieces(text)
    assert read.problems, text
    assert read == _read_whole(text, monkeypatch)


def _lexed_texts(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    lexed: list[str] = []
    real = pieces.lex

    def recording(text: str, record_substitutions: bool = False) -> object:
        lexed.append(text)
        return real(text, record_substitutions)

    monkeypatch.setattr(pieces, "lex", recording)
    return lexed


_LOOP = 'for shard in 1 2 3; do\n  srun python prep.py --shard "$shard"\ndone\n'


def test_only_statements_over_several_lines_are_lexed_together(monkeypatch: pytest.MonkeyPatch) -> None:
    pieces.clear()
    lexed = _lexed_texts(monkeypatch)
    text = "#!/bin/bash\nmodule load x\n" + _LOOP + "srun a \\\n  --b c\necho done\n"
    statements, code = pieces.cut(text) or ([], "")
    assert [line for line, _, _ in statements] == [1, 2, 5, 7]
    assert code == text.replace("#!/bin/bash", " " * len("#!/bin/bash"))
    assert max(lexed, key=len) == _LOOP  # each line once, the loop once: never the whole script
    assert "srun a \\\n  --b c\n" in lexed


def test_lines_and_chunks_seen_before_are_not_lexed_again(monkeypatch: pytest.MonkeyPatch) -> None:
    pieces.clear()
    text = "#!/bin/bash\nmodule load x\n" + _LOOP
    first = pieces.cut(text)
    lexed = _lexed_texts(monkeypatch)
    again = pieces.cut(text)
    assert lexed == []
    assert first is not None and again is not None
    assert [(line, statement) for line, statement, _ in again[0]] == [(at, s) for at, s, _ in first[0]]
    assert again[1] == first[1]


def test_a_guess_that_is_not_whole_tries_the_rest_of_the_script(monkeypatch: pytest.MonkeyPatch) -> None:
    """Read alone, the second line closes a quote; inside the script it closes one and opens another."""
    text = "echo \"a\nx\" 'y\nz'\necho after\n"
    pieces.clear()
    lexed = _lexed_texts(monkeypatch)
    assert pieces.cut(text) is not None
    assert 'echo "a\nx" \'y\n' in lexed  # the guess
    assert text in lexed  # then the rest of the script
    assert_pieces_agree(text, monkeypatch)


def test_a_long_piece_is_not_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    """An argument array longer than the pieces kept: read again each time, the same way."""
    array = "ARGS=(\n" + "".join(f"  --option-{i} value-{i}\n" for i in range(40)) + ")\n"
    assert len(array) > pieces._CHUNK_KEPT_CHARS
    pieces.clear()
    first = pieces.cut(array)
    lexed = _lexed_texts(monkeypatch)
    again = pieces.cut(array)
    assert lexed == [array]
    assert first is not None and again is not None and again[1] == first[1]
