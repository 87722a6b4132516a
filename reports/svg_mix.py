"""The workload mix against the decision table: one row per pattern, jobs and demand by outcome."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from migrate.reports import fmt
from migrate.reports.svg_canvas import Svg, fit
from migrate.reports.view import MixRow

OUTCOMES = ("move", "stay", "already")
WIDTH = 1000
LEFT = 16
LABEL_W = 210
JOBS_X, JOBS_W = 240, 160
DEMAND_X, DEMAND_W = 460, 250
PLATFORM_X = 826
ROW_H = 36
TOP = 74


@dataclass
class _Pattern:
    label: str
    rules: list[str] = field(default_factory=list)
    jobs: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    hours: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    platforms: list[str] = field(default_factory=list)


def workload_mix(rows: tuple[MixRow, ...], source: str, target: str, window_hours: int) -> Svg:
    patterns = _by_pattern(rows)
    height = TOP + max(1, len(patterns)) * ROW_H + 34
    total_jobs = sum(sum(p.jobs.values()) for p in patterns.values())
    svg = Svg(
        "mix",
        WIDTH,
        height,
        "Workload mix against the decision table",
        f"{total_jobs} jobs in {len(patterns)} workload patterns; for each, the jobs and the node-hours that "
        f"move to {target}, stay on {source}, or already run on {target}.",
    )
    _legend(svg, source, target)
    svg.text(LEFT, TOP - 10, "Workload pattern and rule", "small muted")
    svg.text(JOBS_X, TOP - 10, "Jobs", "small muted")
    svg.text(DEMAND_X, TOP - 10, f"Demand, node-hours over {window_hours} h", "small muted")
    svg.text(PLATFORM_X, TOP - 10, "Decision table says", "small muted")
    most_jobs = max((sum(p.jobs.values()) for p in patterns.values()), default=1) or 1
    most_hours = max((sum(p.hours.values()) for p in patterns.values()), default=1.0) or 1.0
    all_hours = sum(sum(p.hours.values()) for p in patterns.values())
    for i, pattern in enumerate(patterns.values()):
        y = TOP + i * ROW_H
        svg.line(LEFT, y + ROW_H - 3, WIDTH - LEFT, y + ROW_H - 3, "grid")
        svg.text(LEFT, y + 13, fit(pattern.label, LABEL_W, 13, True), "title")
        svg.text(LEFT, y + 27, fit(", ".join(pattern.rules), LABEL_W, 10.5), "small muted")
        jobs = sum(pattern.jobs.values())
        end = _stack(
            svg, JOBS_X, y + 6, JOBS_W / most_jobs, pattern.jobs, lambda v: fmt.plural(int(v), "job")
        )
        svg.text(end + 6, y + 18, fmt.num(jobs), "small")
        hours = sum(pattern.hours.values())
        end = _stack(
            svg, DEMAND_X, y + 6, DEMAND_W / most_hours, pattern.hours, lambda v: fmt.hours(v) + " node-h"
        )
        svg.text(end + 6, y + 18, f"{fmt.hours(hours)} ({fmt.share(hours, all_hours)})", "small")
        svg.text(PLATFORM_X, y + 18, fit(" / ".join(pattern.platforms), WIDTH - PLATFORM_X - LEFT), "small")
    if not patterns:
        svg.text(LEFT, TOP + 18, "No jobs were found.", "muted")
    return svg


def _by_pattern(rows: tuple[MixRow, ...]) -> dict[str, _Pattern]:
    out: dict[str, _Pattern] = {}
    for row in rows:  # rows arrive in decision-table order
        pattern = out.setdefault(row.pattern, _Pattern(row.pattern_label))
        if row.rule_id not in pattern.rules:
            pattern.rules.append(row.rule_id)
        pattern.jobs[row.outcome] += row.jobs
        pattern.hours[row.outcome] += row.node_hours
        if row.platform not in pattern.platforms:
            pattern.platforms.append(row.platform)
    return out


def _stack(
    svg: Svg, x: float, y: float, scale: float, values: Mapping[str, float], say: Callable[[float], str]
) -> float:
    """Segments left to right in outcome order; returns where the bar ends."""
    for outcome in OUTCOMES:
        value = values.get(outcome, 0)
        if not value:
            continue
        width = max(1.5, value * scale)
        svg.rect(x, y, width, 16, outcome, tip=f"{outcome}: {say(value)}")
        x += width
    return x


def _legend(svg: Svg, source: str, target: str) -> None:
    x = float(LEFT)
    for cls, label in (
        ("move", f"moves to {target}"),
        ("stay", f"stays on {source}"),
        ("already", f"already on {target}"),
    ):
        svg.rect(x, 14, 14, 14, cls, rx=3)
        svg.text(x + 20, 25, label)
        x += 40 + len(label) * 7.2
    svg.text(
        LEFT,
        48,
        "Bars are split by what the articles' decision tables recommend for each job.",
        "small muted",
    )


__all__ = ["workload_mix"]
