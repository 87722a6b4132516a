"""The shell reader calls a body broken exactly when ``bash -n`` does.

A SHELL-SYNTAX warning on a script bash accepts sends a user hunting for an error
that is not there; a missing one hides a script sbatch would start and bash would
stop. Both directions are checked: over every job script in the corpus, and over
generated scripts of nested loops, conditionals and quoting, valid ones and ones
with a closing keyword or a quote taken away.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from migrate.translators.shell.reader import read_script
from migrate.translators.slurm import reader as slurm_reader

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
BASH = shutil.which("bash")
pytestmark = pytest.mark.skipif(BASH is None, reason="bash is not on PATH")


def bash_rejects(body: str) -> bool:
    assert BASH is not None
    run = subprocess.run([BASH, "-n"], input=body.encode(), capture_output=True, timeout=20)
    return run.returncode != 0


def reader_rejects(body: str) -> bool:
    return bool(read_script(body).problems)


def body_of(text: str) -> str:
    """The part after the #SBATCH header (the first line that is not a comment or blank)."""
    lines = text.replace("\r\n", "\n").split("\n")
    i = 0
    while i < len(lines) and (lines[i].startswith("#") or not lines[i].strip()):
        i += 1
    return "\n".join(lines[i:])


JOB_SCRIPTS = sorted(
    p
    for p in CORPUS.glob("**/*")
    if p.is_file()
    and p.suffix not in (".yaml", ".yml", ".json", ".md")
    and not {"kubernetes", "golden", "adversarial"} & set(p.parts)
    and slurm_reader.sniff(p.read_text(encoding="utf-8", errors="replace"))
)


@pytest.mark.parametrize("path", JOB_SCRIPTS, ids=lambda p: str(p.relative_to(CORPUS)))
def test_corpus_scripts_agree_with_bash(path: Path) -> None:
    body = body_of(path.read_text(encoding="utf-8", errors="replace"))
    assert reader_rejects(body) == bash_rejects(body), read_script(body).problems


NESTED_LOOKUP = """\
while read -r line; do
  for h in $hosts; do
    if echo "$line" | grep -q "^${h}$"; then
      echo "found $h"
    fi
  done
done < nodes.txt
"""


def test_dollar_before_the_closing_quote_is_a_plain_dollar() -> None:
    """ "^${h}$" ends its string at the quote: bash reads $" as $"..." only outside double quotes."""
    assert not bash_rejects(NESTED_LOOKUP)
    assert read_script(NESTED_LOOKUP).problems == ()
    assert read_script('echo "cost: $"\nif true; then echo "$\'"; fi\n').problems == ()


# Words that stress the quoting rules: each is one valid shell word.
WORDS = (
    *('"^${h}$"', "'a b'", '"$x"', "$'\\n'", '"$(date +%s)"', "`hostname`", "${x:-y}", '"${arr[@]}"'),
    *("$((1 + 2))", '"a\\"b"', '$"msg"', '"$"', "'$\"'", "\\$", '"\\$"', "$HOME", '"${h}$"', '"$\'"'),
    *('"$(echo "$x" | tr a b)"', '"${SLURM_JOB_NODELIST:?}"', "'it''s'", "--rdzv=$h:1"),
)
# Assignments stand only at the start of a command (bash rejects a=(1 2) as an argument).
ASSIGNMENTS = (
    "a=(1 2)",
    "x=$(hostname)",
    'x="$h"',
    "head=$(scontrol show hostnames | head -n 1)",
    "n=$((n + 1))",
)


def _commands() -> st.SearchStrategy[str]:
    word = st.sampled_from(WORDS)
    simple = st.builds(
        lambda name, args: " ".join((name, *args)),
        st.sampled_from(("echo", "grep -q", "srun", "test -n", "printf %s", "[ -n")),
        st.lists(word, min_size=1, max_size=3),
    ).map(lambda cmd: cmd + " ]" if cmd.startswith("[ -n") else cmd)
    pipeline = st.builds(lambda a, op, b: f"{a} {op} {b}", simple, st.sampled_from(("|", "&&", "||")), simple)
    return st.recursive(
        simple | pipeline | st.sampled_from(ASSIGNMENTS),
        lambda inner: st.one_of(
            st.builds(lambda c, body: f"if {c}; then\n{body}\nfi", inner, _block(inner)),
            st.builds(
                lambda c, a, b: f"if {c}; then\n{a}\nelse\n{b}\nfi", inner, _block(inner), _block(inner)
            ),
            st.builds(lambda w, body: f"for h in {w}; do\n{body}\ndone", word, _block(inner)),
            st.builds(lambda c, body: f"while {c}; do\n{body}\ndone", inner, _block(inner)),
            st.builds(lambda w, body: f"case {w} in\n  a|b) {body} ;;\n  *) : ;;\nesac", word, inner),
            st.builds(lambda body: f"{{\n{body}\n}}", _block(inner)),
            st.builds(lambda body: f"(\n{body}\n)", _block(inner)),
            st.builds(lambda body: f'x="$(\n{body}\n)"', _block(inner)),
        ),
        max_leaves=8,
    )


def _block(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.lists(inner, min_size=1, max_size=3).map("\n".join)


CLOSERS = ("fi", "done", "esac", "}", ")", "then", "do")
SCRIPTS = _commands()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(SCRIPTS)
def test_generated_valid_scripts_agree_with_bash(body: str) -> None:
    assert reader_rejects(body) == bash_rejects(body), (body, read_script(body).problems)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(SCRIPTS, st.data())
def test_generated_broken_scripts_agree_with_bash(body: str, data: st.DataObject) -> None:
    lines = body.split("\n")
    candidates = [
        i for i, line in enumerate(lines) if line.strip() in CLOSERS or line.endswith(("; then", "; do"))
    ]
    if candidates:
        i = data.draw(st.sampled_from(candidates))
        lines[i] = (
            lines[i].removesuffix("; then").removesuffix("; do") if lines[i].strip() not in CLOSERS else ""
        )
    else:
        lines.append('echo "unclosed')
    broken = "\n".join(lines)
    assert reader_rejects(broken) == bash_rejects(broken), (broken, read_script(broken).problems)
