"""A command's findings recalled from an earlier reading equal the findings of reading it again."""

from __future__ import annotations

from pathlib import Path
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from migrate.diagnostics import Collector
from migrate.translators.shell import remembered
from migrate.translators.shell.analyze import analyze
from migrate.translators.shell.facts import BodyFacts
from migrate.translators.shell.model import Command, Word
from migrate.translators.shell.reader import cache_clear

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
Read = tuple[BodyFacts, list[tuple[str, int | None, str]]]


def _read(body: str, start_line: int = 1) -> Read:
    diags = Collector("x")
    facts = analyze(body, start_line, diags)
    return facts, [(d.code, d.line, d.message) for d in diags]


def _read_without_memory(
    body: str, start_line: int = 1
) -> tuple[BodyFacts, list[tuple[str, int | None, str]]]:
    with mock.patch.object(remembered, "key", lambda *args: None):
        return _read(body, start_line)


def _assert_same(body: str, start_line: int = 1) -> None:
    expected = _read_without_memory(body, start_line)
    assert _read(body, start_line) == expected  # findings kept on the way
    assert _read(body, start_line) == expected  # and recalled
    moved = _read_without_memory(body, start_line + 7)
    assert _read(body, start_line + 7) == moved  # at other lines
    assert _read(body, start_line + 7) == moved  # and there again, moved once for that line


def test_corpus_scripts_read_the_same_with_recalled_findings() -> None:
    scripts = [
        p
        for p in sorted(CORPUS.rglob("*"))
        if p.is_file() and p.suffix not in (".yaml", ".yml", ".json", ".md") and p.read_bytes()[:2] == b"#!"
    ]
    assert len(scripts) > 50
    cache_clear()
    for path in scripts:
        _assert_same(path.read_text(encoding="utf-8", errors="replace"))


_PIECES = (
    "module load cuda/12.1",
    "module load $MODS",
    "MODS=gcc/12",
    'MODS="gcc/12 openmpi/4"',
    "RUN=/lustre/proj/run1",
    "RUN=$SCRATCH/run2",
    'mkdir -p "$RUN/ckpt"',
    'srun --ntasks=4 python train.py --data "$RUN/data" > "$RUN/log" 2>&1',
    'ARGS=(--lr 3e-4 --out "$RUN")',
    'torchrun --nproc_per_node=8 train.py "${ARGS[@]}"',
    "LAUNCH='srun --mpi=pmix'",
    "$LAUNCH ./a.out",
    "export WANDB_MODE=offline",
    "export RUN=/fsx/other DATA=/fsx/data",
    "export MODS=cuda/12.1",
    "nvidia-smi --query-gpu=utilization.gpu --format=csv -l 5 > /lustre/gpu.log &",
    "apptainer exec --bind /weka:/weka /weka/c.sif python x.py",
    "f() { srun hostname; }",
    "f",
    "if true; then\n  mkdir -p /scratch/a\nfi",
    'srun --ntasks=2 \\\n    python train.py \\\n    --out "$RUN/x"',
    "OUT=$SCRATCH/out",
    'cp -r "$OUT" /lustre/keep',
    'LAUNCH="srun $OPTS"',
    "OPTS='--mpi=pmix --container-image=/fsx/a.sqsh'",
    'echo "done" >> "$RUN/status"',
    "export HF_TOKEN=hf_abcdefghijklmnopqrstuvwx",
    "source /opt/envs/a/bin/activate",
    "trap 'rm -rf $RUN' EXIT",
    # the job-id flow: assignments of job-id variables are read each time, others recalled
    "JID=$(sbatch --parsable prep.sh)",
    "PREV=$JID",
    "PREV=none",
    "LAST=$PREV",
    "sbatch --dependency=afterok:$PREV train.sh",
    "sbatch --dependency=afterok:${LAST} eval.sh",
    "submit() {\n  PREV=$1\n  sbatch --dependency=afterok:$PREV x.sh\n}",
    "submit $JID",
    "CKPT=${RUN:-/scratch}/ckpt MODE=train",
    "DATA=$RUN/data >> /lustre/assign.log",
)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), min_size=1, max_size=14), st.integers(1, 40))
def test_generated_scripts_read_the_same_with_recalled_findings(pieces: list[str], start_line: int) -> None:
    _assert_same("\n".join(pieces) + "\n", start_line)


def _command(text: str, *words: str, line: int = 3) -> Command:
    return Command(words=tuple(Word(w, w, line) for w in words), line=line, text=text)


def test_the_key_holds_what_the_script_set_the_named_variables_to() -> None:
    cmd = _command('mkdir -p "$RUN/ckpt"', "mkdir", "-p", '"$RUN/ckpt"')
    one = remembered.key(cmd, 0, {"RUN": "/a"}, {}, {"RUN": "/a"})
    other = remembered.key(cmd, 0, {"RUN": "/b"}, {}, {"RUN": "/b"})
    assert one is not None and other is not None and one != other
    assert remembered.key(cmd, 0, {"RUN": "/a", "X": "1"}, {}, {"RUN": "/a"}) == one  # X is not named
    # a value naming another variable makes the findings depend on that one too
    scratch = remembered.key(cmd, 0, {"RUN": "$SCRATCH/a"}, {}, {})
    assert scratch != remembered.key(cmd, 0, {"RUN": "$SCRATCH/a", "SCRATCH": "/s"}, {}, {"SCRATCH": "/s"})


def test_an_export_of_written_out_values_is_kept_with_what_it_sets() -> None:
    assert remembered.key(_command("export A=1 B=/x", "export", "A=1", "B=/x"), 0, {}, {}, {}) is not None
    body = "export RUN=/lustre/r1\nmkdir -p $RUN/ckpt\nexport RUN=/lustre/r2\nmkdir -p $RUN/ckpt\n"
    _assert_same(body + body)
    facts, _ = _read(body + body)
    assert [s.path for s in facts.storage if s.path.endswith("ckpt")] == [
        "/lustre/r1/ckpt",
        "/lustre/r2/ckpt",
    ]


def test_commands_that_touch_the_state_are_not_kept() -> None:
    assert remembered.key(_command("export A=$B", "export", "A=$B"), 0, {}, {}, {}) is None
    assert remembered.key(_command("export A", "export", "A"), 0, {}, {}, {}) is None  # reads A's value
    assert remembered.key(_command("declare -x A=1", "declare", "-x", "A=1"), 0, {}, {}, {}) is None
    assert remembered.key(_command("local A=1", "local", "A=1"), 0, {}, {}, {}) is None
    assert remembered.key(_command("sbatch job.sh", "sbatch", "job.sh"), 0, {}, {}, {}) is None
    assert remembered.key(_command("srun bash -c x", "srun", "bash", "-c", "x"), 0, {}, {}, {}) is None
    assigned = Command(
        words=(Word("srun", "srun", 3),), assignments=(Word("A=1", "A=1", 3),), line=3, text="A=1 srun"
    )
    assert remembered.key(assigned, 0, {}, {}, {}) is None


def test_an_assignment_alone_is_kept_unless_it_names_a_job_id_variable() -> None:
    assignment = Command(words=(), assignments=(Word("B=$A/x", "B=$A/x", 3),), line=3, text="B=$A/x")
    assert remembered.key(assignment, 0, {}, {}, {}) is not None
    assert remembered.key(assignment, 0, {}, {}, {}, job_ids={"A": (2,)}) is None
    dated = Word("B=$(date)", "B=$(date)", 3)
    substituted = Command(words=(), assignments=(dated,), line=3, text="B=$(date)")
    assert remembered.key(substituted, 0, {}, {}, {}) is None
    body = (
        "JID=$(sbatch --parsable a.sh)\nPREV=$JID\nsbatch --dependency=afterok:$PREV b.sh\n"
        "PREV=none\nsbatch --dependency=afterok:$PREV c.sh\n"
    )
    _assert_same(body + body)
    facts, _ = _read(body + body)  # the second time, PREV=none is recalled: PREV holds no job id again
    targets = [d.targets for s in facts.submits for d in s.dependencies]
    assert targets == [("submitted-at:1",), ("$PREV",), ("submitted-at:6",), ("$PREV",)]
