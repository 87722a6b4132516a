"""A short fuzz run of each target in CI; any crash fails (fuzz/README.md has the long run).

With atheris installed, each target runs under libFuzzer for a fixed number
of executions from a fixed seed (the same inputs every run), seeded with the
corpus. Without atheris, the same target functions run under hypothesis with
random and mutated corpus bytes, so that the test never passes without
fuzzing anything.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import CORPUS, REPO
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

FUZZ = REPO / "fuzz"
sys.path.insert(0, str(FUZZ))
from targets import TARGETS  # noqa: E402

# Executions per target. The nested-arithmetic seeds are left out: they lead the fuzzer straight to
# the known quadratic lexer case (test_adversarial.py::test_unbalanced_arithmetic_is_bounded).
RUNS = {"sbatch": 400, "yaml": 2500}


def seeds(target: str) -> list[Path]:
    """The corpus, less the inputs that are known to be slow (see RUNS)."""
    return [p for p in _corpus(target) if "arith" not in p.name]


def _corpus(target: str) -> list[Path]:
    if target == "sbatch":
        files = [*(CORPUS / "cases" / "slurm").iterdir(), *(CORPUS / "cases" / "broken").glob("*.sbatch")]
        files += list((CORPUS / "adversarial").glob("*.s*"))
    else:
        files = [*(CORPUS / "cases" / "kubernetes").iterdir(), *(CORPUS / "adversarial").glob("*.yaml")]
        files += list((CORPUS / "cases" / "broken").glob("*.y*ml"))
    return sorted(p for p in files if p.is_file())


HAS_ATHERIS = importlib.util.find_spec("atheris") is not None


@pytest.mark.skipif(not HAS_ATHERIS, reason="atheris is not installed: the hypothesis fallback runs")
@pytest.mark.parametrize("target", sorted(TARGETS))
def test_fuzz_target_under_atheris(target: str, tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for path in seeds(target):
        shutil.copy(path, corpus / path.name)
    argv = [
        sys.executable,
        str(FUZZ / f"fuzz_{target}.py"),
        f"-runs={RUNS[target]}",
        "-seed=1",
        "-max_len=4096",  # the lexer is quadratic on unclosed $( and (( (see test_adversarial.py)
        "-timeout=10",
        "-rss_limit_mb=2048",
        "-max_total_time=40",  # a safety net: the runs above end well before
        "-print_final_stats=1",
        str(corpus),
    ]
    res = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    crashes = [p.name for p in tmp_path.iterdir() if p.name.startswith(("crash-", "timeout-", "oom-"))]
    assert res.returncode == 0 and not crashes, res.stderr[-4000:]
    stats = dict(re.findall(r"stat::(\w+):\s+(\d+)", res.stderr))
    assert int(stats["number_of_executed_units"]) >= len(seeds(target))
    figures = os.environ.get("MIGRATE_FIGURES")
    if figures:
        Path(figures).with_suffix(f".fuzz-{target}.json").write_text(json.dumps(stats) + "\n")


def _mutated(target: str) -> st.SearchStrategy[bytes]:
    originals = [p.read_bytes() for p in seeds(target)]

    @st.composite
    def mutate(draw: st.DrawFn) -> bytes:
        data = bytearray(draw(st.sampled_from(originals)))
        for _ in range(draw(st.integers(1, 8))):
            at = draw(st.integers(0, len(data)))
            data[at : at + draw(st.integers(0, 8))] = draw(st.binary(max_size=8))
        return bytes(data)

    return mutate()


@pytest.mark.skipif(HAS_ATHERIS, reason="atheris runs the targets")
@pytest.mark.parametrize("target", sorted(TARGETS))
def test_fuzz_target_under_hypothesis(target: str) -> None:
    run = TARGETS[target]

    @settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(st.one_of(st.binary(max_size=2000), _mutated(target)))
    def fuzz(data: bytes) -> None:
        run(data)

    fuzz()
