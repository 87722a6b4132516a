"""The analysis never raises, whatever the text, and its lines stay inside the body."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from migrate.diagnostics import Collector
from migrate.translators.shell.analyze import analyze
from migrate.translators.shell.facts import BodyFacts

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
SHELL_FILES = sorted(
    p
    for p in CORPUS.glob("**/*")
    if p.is_file()
    and p.suffix not in (".yaml", ".yml", ".json", ".md")
    and "kubernetes" not in p.parts
    and "adversarial" not in p.parts  # hostile and slow inputs: tests/test_adversarial.py reads them
)

# Pieces of shell that stress quoting, nesting and recovery.
FRAGMENTS = [
    *("'", '"', "`", "\\", "\\\n", "$(", ")", "${", "}", "$((", "))", "((", "[[", "]]", "(", "{"),
    *("<<EOF\n", "EOF\n", "<<'X'\n", "X\n", "<<-T\n", "\tT\n", "if ", "then ", "elif ", "else ", "fi"),
    *("for ", "while ", "do ", "done", "case ", " in ", ") ", ";;", "esac", "function ", "f() ", "&&", "||"),
    *("|", "&", ";", "\n", " ", "#", "=", "a=(", "srun ", "torchrun ", "sbatch ", "$0", "export ", "trap "),
    *("HF_TOKEN=", "bash -c ", "eval ", "time ", "--container-image=", "apptainer exec ", "/fsx/"),
    *("$SLURM_JOB_ID", "<(", ">(", ">", ">>", "2>&1", "~/"),
]


def body_of(text: str) -> tuple[str, int]:
    """The part after the #SBATCH header (the first line that is not a comment or blank)."""
    lines = text.replace("\r\n", "\n").split("\n")
    i = 0
    while i < len(lines) and (lines[i].startswith("#") or not lines[i].strip()):
        i += 1
    return "\n".join(lines[i:]), i + 1


def check(body: str, start: int = 1) -> BodyFacts:
    diags = Collector()
    facts = analyze(body, start, diags)
    last = start + body.count("\n")
    assert not [u for u in facts.unparsed if u.reason.startswith("internal error")], body
    assert 0 <= facts.understood <= facts.statements
    lines = [u.line for u in facts.unparsed] + [d.line for d in diags if d.line is not None]
    lines += [x.line for x in (*facts.launchers, *facts.storage, *facts.monitoring, *facts.submits) if x.line]
    assert all(start <= line <= last for line in lines), body
    return facts


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=300))
def test_arbitrary_text_never_raises(text: str) -> None:
    check(text, 5)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=4), max_size=60))
def test_shell_like_noise_never_raises(parts: list[str]) -> None:
    check("".join(parts), 3)


@pytest.mark.skipif(not SHELL_FILES, reason="no corpus")
@settings(max_examples=300, deadline=None)
@given(st.data())
def test_mutated_real_bodies_never_raise(data: st.DataObject) -> None:
    path = data.draw(st.sampled_from(SHELL_FILES))
    body, _ = body_of(path.read_text(encoding="utf-8", errors="replace"))
    edits = data.draw(
        st.lists(
            st.tuples(st.integers(0, max(0, len(body))), st.integers(0, 8), st.sampled_from(FRAGMENTS)),
            max_size=6,
        )
    )
    for at, cut, insert in edits:
        body = body[:at] + insert + body[at + cut :]
    check(body)


@pytest.mark.parametrize("path", SHELL_FILES, ids=lambda p: str(p.relative_to(CORPUS)))
def test_corpus_bodies(path: Path) -> None:
    body, start = body_of(path.read_text(encoding="utf-8", errors="replace"))
    check(body, start)


def test_crlf_bodies_read_like_lf_bodies() -> None:
    body = "module load x\nsrun -n 2 ./a > out\n"
    assert analyze(body.replace("\n", "\r\n"), 4, Collector()) == analyze(body, 4, Collector())
