"""The benchmark measures its steps in rounds and keeps each step's fastest run."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from conftest import benchmark_module


@pytest.fixture(scope="module")
def run() -> ModuleType:
    return benchmark_module("run")


def _fake(run: ModuleType, seconds: dict[str, list[float]], log: list[str]) -> Any:
    def measure_step(step: Any, site: Path, cache: Path, seed: int, idle: float) -> Any:
        log.append(step.name)
        taken = seconds[step.name].pop(0)
        return run.Measured(
            step.name, step.measurement, {"seconds": taken, "files": 100}, taken, taken, 1, 1, 0, None
        )

    return measure_step


def test_rounds_interleave_the_steps_and_keep_the_fastest(
    run: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    base, scan = "baseline (regex + bashlex + yaml)", "scan cold, 1 process, no cache"
    log: list[str] = []
    # a slow spell falls on the first baseline and on the second scan
    monkeypatch.setattr(run, "measure_step", _fake(run, {base: [9.0, 4.0, 4.5], scan: [2.0, 6.0, 2.5]}, log))
    restored: list[int] = []
    rows = run.measure_all(
        Path("site"), Path("cache"), 7, {base, scan}, 0, repeat=3, restore=lambda: restored.append(1)
    )
    assert log == [base, scan] * 3  # each round measures every step once
    assert restored == []  # no step changed the site
    by_name = {r.name: r for r in rows}
    assert by_name[base].result["seconds"] == 4.0 and by_name[scan].result["seconds"] == 2.0
    assert by_name[scan].ratios["x_baseline"] == pytest.approx(2.0)


def test_a_site_changed_by_a_step_is_restored_before_the_next_round(
    run: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    warm, changed = "scan warm", "scan after 1% changed"
    log: list[str] = []
    monkeypatch.setattr(run, "measure_step", _fake(run, {warm: [1.0, 1.0], changed: [1.5, 1.4]}, log))
    restored: list[int] = []
    run.measure_all(
        Path("site"),
        Path("cache"),
        7,
        {warm, changed},
        0,
        repeat=2,
        restore=lambda: restored.append(len(log)),
    )
    assert restored == [2]  # once, after the first round's two steps
