"""Nested sbatch calls, dependencies, self-resubmission; SLURM_* variables read."""

from __future__ import annotations

import textwrap

import pytest

from migrate import ir
from migrate.diagnostics import Collector
from migrate.translators.shell.analyze import analyze
from migrate.translators.shell.facts import BodyFacts
from migrate.translators.shell.slurm_cli import parse_dependency


def read(body: str, start: int = 1) -> tuple[BodyFacts, Collector]:
    diags = Collector()
    return analyze(textwrap.dedent(body).strip("\n"), start, diags), diags


def test_wrapper_chain() -> None:
    facts, diags = read(
        """
        jid1=$(sbatch --parsable prep.sbatch "$CONFIG")
        jid2=$(sbatch --parsable --dependency=afterok:$jid1 train.sbatch "$CONFIG")
        jid3=$(sbatch --parsable -d afterany:${jid2} --export=ALL,CKPT=/fsx/ckpt eval.sbatch)
        jid4=$(sbatch post.sbatch | awk '{print $4}')
        sbatch --dependency=afterok:$jid1:$jid2,afternotok:$jid3 -J report report.sbatch
        """,
        7,
    )
    prep, train, evaluate, post, report = facts.submits
    assert prep == ir.Submission(
        script="prep.sbatch", options=(ir.KeyValue("parsable", ""),), captures="jid1", parsable=True, line=7
    )
    # a variable holding an earlier submission's id names that submission by its line
    assert train.dependencies == (ir.Dependency(type="afterok", targets=("submitted-at:7",), line=8),)
    assert (train.captures, train.script) == ("jid2", "train.sbatch")
    assert evaluate.dependencies == (ir.Dependency(type="afterany", targets=("submitted-at:8",), line=9),)
    assert ir.KeyValue("export", "ALL,CKPT=/fsx/ckpt") in evaluate.options
    assert (post.captures, post.parsable, post.script) == ("jid4", False, "post.sbatch")
    assert report.dependencies == (
        ir.Dependency(type="afterok", targets=("submitted-at:7", "submitted-at:8"), line=11),
        ir.Dependency(type="afternotok", targets=("submitted-at:9",), line=11),
    )
    assert ir.KeyValue("job-name", "report") in report.options and report.captures is None
    assert not facts.self_resubmit and not [d for d in diags if d.code == "SLURM-SELF-RESUBMIT"]


@pytest.mark.parametrize(
    "call",
    ["sbatch $0", 'sbatch "$0"', "sbatch ${BASH_SOURCE[0]}", "sbatch --dependency=afterany:$SLURM_JOB_ID $0"],
)
def test_self_resubmission_by_sbatch(call: str) -> None:
    facts, diags = read(f"if [ $N -lt 5 ]; then\n  {call}\nfi", 26)
    assert facts.self_resubmit
    (submission,) = facts.submits
    assert submission.line == 27
    assert [(d.code, d.severity, d.line) for d in diags if d.code == "SLURM-SELF-RESUBMIT"] == [
        ("SLURM-SELF-RESUBMIT", "info", 27)
    ]


@pytest.mark.parametrize("call", ["scontrol requeue $SLURM_JOB_ID", "scontrol requeuehold ${SLURM_JOB_ID}"])
def test_self_requeue(call: str) -> None:
    facts, diags = read(call, 33)
    assert facts.self_resubmit and facts.submits == ()
    assert [d.line for d in diags if d.code == "SLURM-SELF-RESUBMIT"] == [33]


def test_requeue_of_another_job_is_not_self() -> None:
    facts, _ = read("scontrol requeue 1234")
    assert not facts.self_resubmit


def test_resubmission_inside_a_trap_handler() -> None:
    facts, diags = read("trap 'save_ckpt; scontrol requeue $SLURM_JOB_ID' USR1", 33)
    assert facts.self_resubmit and facts.signals_trapped == ("USR1",)
    assert [d.line for d in diags if d.code == "SLURM-SELF-RESUBMIT"] == [33]


def test_wrap_and_here_document_submissions() -> None:
    facts, _ = read('sbatch --wrap "srun hostname"\nsbatch -N 2 <<EOF\n#!/bin/bash\nsrun x\nEOF')
    wrap, heredoc = facts.submits
    assert wrap.script is None and ir.KeyValue("wrap", "srun hostname") in wrap.options
    assert heredoc.script is None and ir.KeyValue("script", "here-document") in heredoc.options
    assert facts.launchers == ()  # the nested job's steps are not this job's


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("afterok:$jid", (ir.Dependency("afterok", ("$jid",)),)),
        ("after:123+10", (ir.Dependency("after", ("123",), delay_s=600),)),
        (
            "afterok:1?afterany:2",
            (ir.Dependency("afterok", ("1",), any_of=True), ir.Dependency("afterany", ("2",), any_of=True)),
        ),
        ("singleton", (ir.Dependency("singleton"),)),
        ("afterok:$(cat jid)", (ir.Dependency("afterok", ("$(cat jid)",)),)),
    ],
)
def test_parse_dependency(text: str, expected: tuple[ir.Dependency, ...]) -> None:
    assert parse_dependency(text, None) == expected


def test_slurm_variables_read_anywhere() -> None:
    facts, _ = read(
        """
        # $SLURM_IN_A_COMMENT is not read
        echo "${SLURM_JOB_ID:-0} on $(hostname -s) of $SLURM_NNODES"
        N=$((SLURM_ARRAY_TASK_ID + 1))
        S=${subjects[SLURM_ARRAY_TASK_ID]}
        srun bash -c 'echo $SLURMD_NODENAME'
        nsys profile -o out%q{SLURM_PROCID} python t.py
        python -c "import os; print(os.environ['SLURM_LOCALID'])"
        cat <<EOF
        $SLURM_SUBMIT_DIR
        EOF
        export SLURM_NOT_READ=1
        """
    )
    assert facts.slurm_vars == (
        "SLURMD_NODENAME",
        "SLURM_ARRAY_TASK_ID",
        "SLURM_JOB_ID",
        "SLURM_LOCALID",
        "SLURM_NNODES",
        "SLURM_PROCID",
        "SLURM_SUBMIT_DIR",
    )


@pytest.mark.parametrize(
    "line",
    [
        "python -c \"import os; print(os.getenv('SLURM_PROCID'))\"",
        "python -c \"import os; print(os.environ.get('SLURM_PROCID'))\"",
        "julia -e 'println(ENV[\"SLURM_PROCID\"])'",
    ],
)
def test_each_spelling_of_an_environment_read_is_found(line: str) -> None:
    facts, _ = read(line + "\n")
    assert facts.slurm_vars == ("SLURM_PROCID",)
