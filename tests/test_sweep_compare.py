"""The sweep's comparison (tests/sweep/compare.py): every record that differs is named, records are
paired with their likest counterpart, and job ids are told apart from a word's digits."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "sweep"))

import compare
import declared


def record(program: str, args: str, node: int, **env: str) -> str:
    seen = " ".join(f"{k}={v}" for k, v in env.items())
    return f"{program} [{args}] node={node} | {seen}"


def test_every_differing_record_is_named_each_paired_with_its_likest() -> None:
    slurm = Counter(
        [record("ray", "start --head", 0), record("ray", "start --address x", 1), record("a", "", 0)]
    )
    pods = Counter(
        [
            record("ray", "health-check --address x", 1),
            record("ray", "start --address=x", 1),
            record("a", "", 0),
        ]
    )
    found = compare.differences(slurm, pods)
    assert found == [
        # a start paired with a start, not with the health check
        "argv: Slurm 'start --address x', pods 'start --address=x' (in ray)",
        "argv: Slurm 'start --head', pods 'health-check --address x' (in ray)",
    ]
    assert compare.differences(pods, pods) == []


def test_records_without_a_counterpart_are_only_on_one_side() -> None:
    slurm = Counter([record("module", "load x", 0), record("b", "", 0)])
    pods = Counter([record("b", "", 0)])
    assert compare.differences(slurm, pods) == ["only on Slurm: module [load x] node=0 | "]
    assert compare.differences(pods, slurm) == ["only in the pods: module [load x] node=0 | "]


def test_a_job_id_before_a_file_extension_is_the_job_not_a_decimals_digits() -> None:
    def seen(arg: str) -> str:
        rec = {"prog": "tar", "args": [arg], "env": {"SLURM_JOB_ID": "70092"}, "host": "node1"}
        (line,) = compare.normalise([rec], {"node1": 0})
        return line.split(" [", 1)[1].split("]", 1)[0]

    assert seen("motorBike_70092.tgz") == "motorBike_<job>.tgz"
    assert seen("70092.5") == "70092.5"


def test_a_case_is_declared_only_when_every_difference_is() -> None:
    module = "only on Slurm: module [load x] node=0 | "
    assert declared.reason("cases__x.sbatch", module) is not None
    assert declared.reason("cases__x.sbatch", "SLURM_NTASKS: Slurm '4', pods '3' (in a)") is None


def test_options_in_another_order_are_told_apart_from_other_words() -> None:
    slurm = Counter([record("ray", "start --head --block --port=1", 0)])
    pods = Counter([record("ray", "start --head --port=1 --block", 0)])
    assert compare.differences(slurm, pods) == [
        "argv order: Slurm 'start --head --block --port=1', pods 'start --head --port=1 --block' (in ray)"
    ]
    other = Counter([record("ray", "stop --head --port=1 --block", 0)])
    assert compare.differences(slurm, other)[0].startswith("argv: ")


def test_python_running_torch_distributed_run_is_torchrun() -> None:
    recs = [
        {
            "prog": "python3",
            "args": ["-m", "torch.distributed.run", "--nnodes=2", "t.py"],
            "env": {},
            "host": "a",
        },
        {"prog": "torchrun", "args": ["--nnodes=2", "t.py"], "env": {}, "host": "a"},
    ]
    assert compare.normalise(recs, {"a": 0}) == Counter({"torchrun [--nnodes=2 t.py] node=0 | ": 2})
