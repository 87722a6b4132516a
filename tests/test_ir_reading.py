"""Reading IR JSON back: the same jobs, repeated strings shared, slots objects that still pickle."""

from __future__ import annotations

import copy
import json
import pickle

import pytest
from ir_builders import container, dep, env, launcher, read, slurm_job, write

from migrate import ir, serialize
from migrate.serialize import from_dict, job_from_dict, job_to_dict
from migrate.vocab import Format, JobKind


def sample_job(path: str) -> ir.Job:
    return slurm_job(
        path,
        name="train",
        nodes=2,
        gpus_per_node=8,
        storage=[read("/fsx/data/tok", 4), write("/fsx/ckpt/run", 5)],
        deps=[dep("afterok", "prep", line=3)],
        launchers=[launcher("torchrun", "train.py", nproc_per_node="8")],
        containers=[container("nvcr.io/nvidia/pytorch:24.05-py3", "python", "train.py")],
        environment=env(NCCL_DEBUG="INFO"),
        body="torchrun train.py\n",
    )


def read_back(job: ir.Job) -> ir.Job:
    return job_from_dict(json.loads(json.dumps(job_to_dict(job))))


def test_round_trip() -> None:
    job = sample_job("a/train.sbatch")
    assert read_back(job) == job


def test_vocabularies_read_back_as_their_members() -> None:
    job = read_back(sample_job("a/train.sbatch"))
    assert job.source.format is Format.SLURM and job.kind is JobKind.SBATCH


def test_a_spelling_no_vocabulary_has_is_refused_as_the_vocabulary_refuses_it() -> None:
    data = job_to_dict(sample_job("a/train.sbatch"))
    data["source"]["format"] = "lsf"
    with pytest.raises(ValueError, match="'lsf' is not a valid Format"):
        job_from_dict(data)
    data["source"]["format"] = ["slurm"]  # not even a spelling: the same error as Format(["slurm"])
    with pytest.raises(ValueError, match="is not a valid Format"):
        job_from_dict(data)


def test_a_raw_item_keeps_its_hetjob_component_as_a_number() -> None:
    first, later = (
        ir.RawItem("--partition", "gpu", 3, "#SBATCH"),
        ir.RawItem("--partition", "cpu", 9, "#SBATCH", 1),
    )
    job = ir.replace(sample_job("a/het.sbatch"), raw=(first, later))
    raw = job_to_dict(job)["raw"]
    assert raw == [
        {"key": "--partition", "value": "gpu", "line": 3, "origin": "#SBATCH"},  # component 0 is the default
        {"key": "--partition", "value": "cpu", "line": 9, "origin": "#SBATCH", "component": 1},
    ]
    assert read_back(job).raw == (first, later)


def test_repeated_strings_are_shared_between_jobs() -> None:
    first, second = read_back(sample_job("a/train.sbatch")), read_back(sample_job("b/train.sbatch"))
    assert first.source.format is second.source.format
    assert first.storage[0].path is second.storage[0].path
    assert first.components[0].launchers[0].program[0] is second.components[0].launchers[0].program[0]


def test_unknown_fields_are_ignored() -> None:
    data = job_to_dict(sample_job("a/train.sbatch"))
    data["added_later"] = {"x": 1}
    data["source"]["added_later"] = "y"
    assert job_from_dict(data) == sample_job("a/train.sbatch")


def test_nested_values_and_nones() -> None:
    resources = from_dict(
        ir.Resources, {"gpus": 8, "gpu_type": None, "generic": [{"name": "efa", "count": 4}]}
    )
    assert resources == ir.Resources(gpus=8, generic=(ir.GenericResource("efa", 4),))
    assert from_dict(ir.Resources, None) is None


def test_slots_objects_copy_and_pickle() -> None:
    job = sample_job("a/train.sbatch")
    assert not hasattr(job, "__dict__")
    assert pickle.loads(pickle.dumps(job)) == job
    assert copy.deepcopy(job) == job and hash(copy.copy(job)) == hash(job)
    assert ir.replace(job, name="other").name == "other"


def test_equal_parts_are_one_object() -> None:
    first, second = read_back(sample_job("a/train.sbatch")), read_back(sample_job("b/train.sbatch"))
    assert first.placement is second.placement and first.storage[0] is second.storage[0]
    assert first.source is not second.source  # one per job: not looked up


def test_a_missing_field_without_default_is_refused_by_name() -> None:
    with pytest.raises(TypeError, match="'key'"):
        from_dict(ir.KeyValue, {"value": "x"})


def test_records_are_read_as_their_init_would_make_them() -> None:
    """Records set slot by slot equal those ``__init__`` makes from the same keywords, whatever
    fields the JSON leaves out (their defaults, shared made ones among them)."""
    data = json.loads(json.dumps(job_to_dict(sample_job("a/train.sbatch"))))
    assert job_from_dict(data) == _read_with_keywords(data) == sample_job("a/train.sbatch")
    assert ir.slot_setters(ir.RawKeys) is None  # a record of more than its fields: read by keywords
    assert ir.slot_setters(ir.Job) is not None


def _read_with_keywords(data: dict[str, object]) -> ir.Job:
    """The job read by calling each record's ``__init__``, as records that are not only their slots are."""
    original = ir.slot_setters
    serialize._converter.cache_clear()
    try:
        ir.slot_setters = lambda cls: None  # type: ignore[assignment]
        return job_from_dict(data)
    finally:
        ir.slot_setters = original  # type: ignore[assignment]
        serialize._converter.cache_clear()
