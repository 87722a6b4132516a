"""The one-line checks of tests/one_line.py: each passes on what the translators do and fails, naming the
field or line and both values, on an expectation that is wrong."""

from __future__ import annotations

import re
from contextlib import AbstractContextManager

import pytest
from one_line import ABSENT, FLAG, sbatch_script, validate_all, validate_identity, validate_roundtrip

from migrate.vocab import FidelityStatus

ARRAY = "#SBATCH --array=0-3%2 -t 10"
QUEUED_JOB = """
apiVersion: batch/v1
kind: Job
metadata:
  name: pi
  labels: {kueue.x-k8s.io/queue-name: nosuch}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: pi, image: busybox, command: ["true"]}]
"""


def fails(*needles: str) -> AbstractContextManager[pytest.ExceptionInfo[AssertionError]]:
    """pytest.raises for an AssertionError whose message holds each needle, in this order."""
    return pytest.raises(AssertionError, match="(?s)" + ".*".join(re.escape(n) for n in needles))


# ---------------------------------------------------------------------------
# validate_identity


def test_identity_holds_for_what_the_writer_writes_as_given() -> None:
    validate_identity("#SBATCH --gres=gpu:a100:4")
    validate_identity("#SBATCH --nodes=1\n#SBATCH hetjob\n#SBATCH --nodes=2\n#SBATCH --cpus-per-task=4")


def test_identity_names_the_directive_that_was_written_otherwise() -> None:
    with fails("directive 1: expected '#SBATCH -N 2', written '#SBATCH --nodes=2'"):
        validate_identity("#SBATCH -N 2")


def test_identity_with_the_normal_form() -> None:
    validate_identity("#SBATCH -N 2", "#SBATCH --nodes=2")
    with fails("directive 1: expected '#SBATCH --nodes=3', written '#SBATCH --nodes=2'"):
        validate_identity("#SBATCH -N 2", "#SBATCH --nodes=3")


def test_identity_counts_missing_and_extra_directives() -> None:
    with fails("directive 2: expected '#SBATCH --time=00:10:00', written '(no line)'"):
        validate_identity("#SBATCH --nodes=2", "#SBATCH --nodes=2\n#SBATCH --time=00:10:00")
    with fails("directive 1: expected '(no line)', written '#SBATCH --nodes=2'"):
        validate_identity("#SBATCH --nodes=2", "")


def test_a_header_becomes_a_script_and_a_script_stays_as_it_is() -> None:
    assert sbatch_script("#SBATCH -N 2") == "#!/bin/bash\n#SBATCH -N 2\nsrun hostname\n"
    assert sbatch_script("#SBATCH -N 2\nhostname\n") == "#SBATCH -N 2\nhostname\n"
    assert sbatch_script("\ufeff#SBATCH -N 2") == "\ufeff#SBATCH -N 2"


# ---------------------------------------------------------------------------
# validate_all: the job read


def test_ir_fields_pass_and_each_wrong_one_is_named() -> None:
    fields = {"time_limit_s": 600, "resources.nodes_min": None, "array.count,max_concurrent": (4, 2)}
    checked = validate_all(ARRAY, ir=fields, diagnostics=[])
    assert checked.job.time_limit_s == 600
    with fails(
        "ir time_limit_s: expected 601, got 600",
        "ir array.max_concurrent: expected 3, got 2",
        "ir resources.nodes_min: expected 1, got None",
    ):
        validate_all(
            ARRAY, ir={"time_limit_s": 601, "array.count,max_concurrent": (4, 3), "resources.nodes_min": 1}
        )


def test_a_path_that_names_nothing_says_where_it_stops() -> None:
    with fails("ir placement.nope: placement (Placement) has no field 'nope'"):
        validate_all(ARRAY, ir={"placement.nope": 1})
    with fails("ir components.3.name: components has no item 3"):
        validate_all(ARRAY, ir={"components.3.name": "main"})
    with fails("ir array.count,spec: give a tuple of 2 values, not 4"):
        validate_all(ARRAY, ir={"array.count,spec": 4})


def test_paths_map_over_items_and_call_methods() -> None:
    hetjob = "#SBATCH -N 1\n#SBATCH hetjob\n#SBATCH -N 2 -c 4"
    validate_all(hetjob, ir={"components.*.name": ["het0", "het1"], "total_nodes()": 3})
    validate_all(hetjob, ir={"components.*.resources.nodes_min,cpus_per_task": [(1, None), (2, 4)]})
    with fails("ir components.*.resources.nodes_min: expected [1, 3]", "(item 1: expected 3, got 2)"):
        validate_all(hetjob, ir={"components.*.resources.nodes_min": [1, 3]})
    with fails("ir total_nodes(): expected 4, got 3"):
        validate_all(hetjob, ir={"total_nodes()": 4})


def test_diagnostics_are_all_of_them_in_their_order() -> None:
    two = "#SBATCH --time=abc\n#SBATCH --frobnicate"
    validate_all(two, diagnostics=["SLURM-BAD-VALUE", ("SLURM-UNKNOWN-OPTION", 3)])
    validate_all(two, diagnostics=[("SLURM-BAD-VALUE", "error"), ("SLURM-UNKNOWN-OPTION", "error", 3)])
    with fails("diagnostic 2: expected ('SLURM-UNKNOWN-OPTION', 4), got ('SLURM-UNKNOWN-OPTION', 3)"):
        validate_all(two, diagnostics=["SLURM-BAD-VALUE", ("SLURM-UNKNOWN-OPTION", 4)])
    with fails("diagnostics: expected []", "('SLURM-BAD-VALUE', 'error', 2)"):
        validate_all(two, diagnostics=[])


def test_every_problem_is_told_at_once_under_the_source() -> None:
    with fails(ARRAY, "ir time_limit_s", "diagnostics: expected ['SLURM-HETJOB'], got []"):
        validate_all(ARRAY, ir={"time_limit_s": 1}, diagnostics=["SLURM-HETJOB"])


def test_a_source_that_is_not_one_job_is_refused() -> None:
    with fails("expected one job, read 0"):
        validate_all("#!/bin/bash\necho hello\n", ir={})


# ---------------------------------------------------------------------------
# validate_all: what a writer wrote


def test_sbatch_options_values_flags_and_absent_ones() -> None:
    validate_all("#SBATCH -N 2 --exclusive", sbatch={"nodes": "2", "exclusive": FLAG, "time": ABSENT})
    with fails(
        "sbatch --nodes: expected '3', written '2'",
        "sbatch --exclusive: expected ABSENT, written FLAG",
        "sbatch --time: expected '00:10:00', written ABSENT",
    ):
        validate_all(
            "#SBATCH -N 2 --exclusive", sbatch={"nodes": "3", "exclusive": ABSENT, "time": "00:10:00"}
        )


def test_manifest_pointers_into_the_objects_of_a_kind() -> None:
    labels = "Job/spec/template/metadata/labels/migrate.io~1job"
    validate_all(ARRAY, manifest={"Job/spec/completions": 4, "Job/spec/parallelism": 2, labels: "job"})
    with fails("manifest Job/spec/parallelism: expected 3, written 2"):
        validate_all(ARRAY, manifest={"Job/spec/parallelism": 3})
    with fails("manifest Job/spec/nope: expected 1, written ABSENT"):
        validate_all(ARRAY, manifest={"Job/spec/nope": 1})
    with fails("manifest JobSet/spec: expected one JobSet among the objects written, found ['Job']"):
        validate_all(ARRAY, manifest={"JobSet/spec": {}})


def test_fidelity_codes_and_text_of_the_other_schedulers_writer() -> None:
    checked = validate_all(
        QUEUED_JOB,
        read="kubernetes",
        fidelity={"queue nosuch": FidelityStatus.DROPPED},
        writer_codes={"TO-SLURM-QUEUE-UNMAPPED"},
        contains=["#SBATCH --job-name=pi"],
        lacks=["--partition"],
    )
    assert checked.written.target == "slurm"
    with fails(
        "fidelity 'queue nosuch' (queue nosuch): expected 'mapped', got 'dropped'",
        "fidelity 'spec.nothing': no entry mentions it",
        "writer diagnostics: expected [], got ['TO-SLURM-QUEUE-UNMAPPED']",
        "written text lacks '--partition'",
        "written text has '#SBATCH --job-name=pi'",
    ):
        validate_all(
            QUEUED_JOB,
            read="kubernetes",
            fidelity={"queue nosuch": FidelityStatus.MAPPED, "spec.nothing": FidelityStatus.MAPPED},
            writer_codes=(),
            contains=["--partition"],
            lacks=["#SBATCH --job-name=pi"],
        )


def test_a_fidelity_reason_is_checked_when_given() -> None:
    validate_all("#SBATCH -N 2", sbatch={}, fidelity={"--nodes": (FidelityStatus.MAPPED, "same option")})
    with fails(
        "fidelity '--nodes' (--nodes=2): expected ('mapped', 'another'), got ('mapped', 'same option')"
    ):
        validate_all("#SBATCH -N 2", sbatch={}, fidelity={"--nodes": (FidelityStatus.MAPPED, "another")})


def test_one_writer_at_a_time() -> None:
    with pytest.raises(TypeError, match="not both"):
        validate_all(ARRAY, sbatch={}, manifest={})


# ---------------------------------------------------------------------------
# validate_roundtrip


def test_the_round_trip_keeps_the_named_fields() -> None:
    trip = validate_roundtrip(
        "#SBATCH -N 2 --gpus-per-node=a100:4 -t 1-02:03:04 --ntasks-per-gpu=2",
        ["time_limit_s", "resources.nodes_min,gpus_per_node,gpu_type,tasks_per_gpu", "placement"],
        kubernetes={"kind": "JobSet", "time_limit_s": 93784},
    )
    assert trip.after.time_limit_s == 93784


def test_the_round_trip_names_what_came_back_changed() -> None:
    with fails("name: read None, came back 'job.sbatch' (Kubernetes: 'job')"):
        validate_roundtrip("#SBATCH -N 2", ["name"])
    with fails("kubernetes time_limit_s: expected 60, got 600"):
        validate_roundtrip("#SBATCH -t 10", ["time_limit_s"], kubernetes={"time_limit_s": 60})


def test_a_field_the_ir_does_not_have_is_refused() -> None:
    # "resources." stands for the first component's
    with fails("resources.nope: components.0.resources (Resources) has no field 'nope'"):
        validate_roundtrip("#SBATCH -N 2", ["resources.nope"])
