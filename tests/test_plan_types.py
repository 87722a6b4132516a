"""The typed view of plan.json says what the planner writes: every key, every type, nothing left out."""

from __future__ import annotations

import types
import typing
from typing import Literal, NotRequired, Union, get_args, get_origin, get_type_hints, is_typeddict

import pytest
from conftest import CORPUS

from migrate import api
from migrate.plan.planner import PHASE_KINDS, plan_json
from migrate.reports.plan_types import PhaseKindName, PlanDoc, read_plan


def mismatches(value: object, hint: object, where: str) -> list[str]:
    """Where ``value`` (read from JSON) is not of type ``hint``; empty when it is."""
    origin, args = get_origin(hint), get_args(hint)
    if origin is NotRequired:
        return mismatches(value, args[0], where)
    if origin in (Union, types.UnionType):
        found = [mismatches(value, arg, where) for arg in args]
        return [] if any(not f for f in found) else found[0]
    if origin is Literal:
        return [] if value in args else [f"{where}: {value!r} is not one of {args}"]
    if is_typeddict(hint):
        if not isinstance(value, dict):
            return [f"{where}: not an object"]
        assert isinstance(hint, type)
        fields = get_type_hints(hint, include_extras=True)
        required: frozenset[str] = hint.__required_keys__
        out = [f"{where}.{key}: missing" for key in sorted(required - set(value))]
        out += [f"{where}.{key}: not in {hint.__name__}" for key in sorted(set(value) - set(fields))]
        for key in sorted(set(value) & set(fields)):
            out += mismatches(value[key], fields[key], f"{where}.{key}")
        return out
    if origin is list:
        if not isinstance(value, list):
            return [f"{where}: not a list"]
        return [m for i, item in enumerate(value) for m in mismatches(item, args[0], f"{where}[{i}]")]
    if origin is dict:
        if not isinstance(value, dict):
            return [f"{where}: not an object"]
        return [m for key, item in value.items() for m in mismatches(item, args[1], f"{where}.{key}")]
    allowed: tuple[type, ...] = {float: (float, int), type(None): (type(None),)}.get(hint, (hint,))  # type: ignore[call-overload]
    return [] if isinstance(value, allowed) else [f"{where}: {value!r} is not {hint}"]


@pytest.fixture(scope="module")
def full_plan() -> str:
    """The sample site's plan with every optional section: both dumps and both inventories."""
    run = api.run_plan(
        [str(CORPUS / "sample-site")],
        "kubernetes",
        accounting=[str(CORPUS / "accounting" / n) for n in ("sacct-2024w23.txt", "kubectl-jobs.json")],
        inventory=[str(CORPUS / "cluster" / n) for n in ("slurm.conf", "pcluster-config.yaml")],
    )
    return plan_json(run.plan)


def test_the_types_hold_every_field_plan_json_has(full_plan: str) -> None:
    doc = read_plan(full_plan)
    assert "usage" in doc and "inventory" in doc
    assert {j["demand"]["accounting"]["status"] for j in doc["jobs"] if "demand" in j} >= {"matched"}
    assert mismatches(doc, PlanDoc, "plan") == []


@pytest.mark.parametrize("mode", ["slinky", "slurm-bridge"])
def test_the_types_hold_the_shared_pool_modes(mode: str) -> None:
    run = api.run_plan(
        [str(CORPUS / "sample-site")],
        "kubernetes",
        inventory=[str(CORPUS / "cluster" / "slurm.conf")],
        coexistence=mode,
    )
    doc = read_plan(plan_json(run.plan))
    assert doc["coexistence"]["mode"] == mode and any("pool" in p for p in doc["phases"])
    assert mismatches(doc, PlanDoc, "plan") == []


def test_the_check_sees_a_missing_a_renamed_and_a_retyped_field(full_plan: str) -> None:
    doc = typing.cast(dict[str, typing.Any], read_plan(full_plan))
    phase = doc["phases"][0]
    del phase["kind"]
    doc["units"][0]["risk"]["points"] = doc["units"][0]["risk"].pop("score")
    doc["jobs"][0]["unit"] = 3
    assert mismatches(doc, PlanDoc, "plan") == [
        "plan.jobs[0].unit: 3 is not <class 'str'>",
        "plan.phases[0].kind: missing",
        "plan.units[0].risk.score: missing",
        "plan.units[0].risk.points: not in Risk",
    ]


def test_phase_kinds_are_the_planners() -> None:
    assert get_args(PhaseKindName) == PHASE_KINDS


def test_read_plan_takes_only_a_plan() -> None:
    with pytest.raises(ValueError, match="migrate-plan/1"):
        read_plan('{"ir_version": "1", "files": []}')
    with pytest.raises(ValueError):
        read_plan("[]")
