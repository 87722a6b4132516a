"""Job ids followed through variables and shell functions, as a wrapper script runs."""

from __future__ import annotations

import textwrap

from migrate import ir
from migrate.diagnostics import Collector
from migrate.translators.shell.analyze import analyze
from migrate.translators.shell.idflow import function_spans


def submits(body: str) -> tuple[ir.Submission, ...]:
    return analyze(textwrap.dedent(body).strip("\n") + "\n", 1, Collector()).submits


def test_a_function_that_submits_is_read_at_each_call_with_its_arguments() -> None:
    subs = submits(
        """
        dep=""
        submit() {
            local script=$1; shift
            local jid
            jid=$(sbatch --parsable ${dep:+--dependency=afterok:$dep} "$@" "$ROOT/$script")
            dep=$jid
        }
        submit prep.sbatch
        submit train.sbatch --export=ALL
        submit eval.sbatch
        """
    )
    assert [(s.line, s.script) for s in subs] == [
        (8, "$ROOT/prep.sbatch"),
        (9, "$ROOT/train.sbatch"),
        (10, "$ROOT/eval.sbatch"),
    ]
    # dep is empty at the first call: ${dep:+...} gives no option at all
    assert subs[0].dependencies == ()
    assert subs[1].dependencies == (ir.Dependency("afterok", ("submitted-at:8",), line=9),)
    assert subs[2].dependencies == (ir.Dependency("afterok", ("submitted-at:9",), line=10),)
    assert ir.KeyValue("export", "ALL") in subs[1].options


def test_ids_follow_reassignment_and_the_newest_capture_wins() -> None:
    subs = submits(
        """
        a=$(sbatch --parsable one.sbatch)
        b=$(sbatch --parsable two.sbatch)
        dep=$a
        sbatch --dependency=afterany:$dep three.sbatch
        a=$(sbatch --parsable four.sbatch)
        sbatch -d afternotok:${a}?afterok:$b five.sbatch
        sbatch --dependency=afterok:$unknown six.sbatch
        """
    )
    assert subs[2].dependencies[0].targets == ("submitted-at:1",)
    assert [d.targets for d in subs[4].dependencies] == [("submitted-at:5",), ("submitted-at:2",)]
    assert subs[5].dependencies[0].targets == ("$unknown",)  # never set by the script: left as written


def test_function_spans() -> None:
    text = "f() { sbatch a; }\nfunction g {\n  sbatch b\n}\nh ()\n{\n  echo\n}\n"
    assert [(s.name, s.first, s.last) for s in function_spans(text, 10)] == [
        ("f", 10, 10),
        ("g", 11, 13),
        ("h", 14, 17),
    ]


def test_an_array_of_ids_joined_with_colons_names_every_submission() -> None:
    subs = submits(
        """
        jids=()
        for case in a b; do
            jid=$(sbatch --parsable "run_$case.sbatch")
            jids+=("$jid")
        done
        first=$(sbatch --parsable extra.sbatch)
        jids+=("$first")
        deps=$(IFS=:; echo "${jids[*]}")
        sbatch --dependency=afterany:$deps post.sbatch
        """
    )
    # the loop is read once: its sbatch is one submission
    assert subs[-1].dependencies[0].targets == ("submitted-at:3", "submitted-at:6")
