"""The phases as a timeline: one column per phase, and under it each partition's nodes per scheduler.

Long plans (hundreds of waves at 10,000 jobs) keep their first and last
phases and fold the middle into one column, so the picture stays one screen
wide whatever the size of the site.
"""

from __future__ import annotations

from dataclasses import dataclass

from migrate.plan.planner import PhaseKind
from migrate.reports import fmt
from migrate.reports.svg_canvas import Svg, fit, text_width
from migrate.reports.view import CapacityRow, PhaseView

MAX_COLUMNS = 7
MAX_PARTITIONS = 8
LEFT = 16
LABEL_W = 166  # the partition names, margin included
COL_W = 170  # at least; fewer phases get wider columns so the picture fills FULL_WIDTH
FULL_WIDTH = 1000
GUTTER = 14  # between two columns
CARD_H, BAR_H = 68, 16
ROW_H = 46
TOP = 16

# The class of a job's mark in a phase's column: moved there, already on the target, or elsewhere.
_JOB_CLASS = {PhaseKind.PILOT: "job move", PhaseKind.WAVE: "job move", PhaseKind.END_STATE: "job already"}


@dataclass(frozen=True)
class _Column:
    id: str  # P0, W3–W199 ...
    title: str  # Pilot, Wave 1 ...
    lines: tuple[str, ...]
    kind: PhaseKind
    capacity: tuple[CapacityRow, ...]


def phases_timeline(phases: tuple[PhaseView, ...], source: str, target: str) -> Svg:
    columns = _columns(phases, target)
    partitions = _partitions(phases)
    shown = partitions[:MAX_PARTITIONS]
    col_w = max(COL_W, (FULL_WIDTH - LABEL_W - LEFT) / max(1, len(columns)))
    width = LABEL_W + len(columns) * col_w + LEFT
    bars_top = TOP + CARD_H + 34
    height = bars_top + max(1, len(shown)) * ROW_H + 40
    svg = Svg(
        "phases",
        width,
        height,
        "Phases and capacity per scheduler",
        f"{len(phases)} phases from foundations to the end state; for each partition, the nodes on "
        f"{target} and on {source} at the end of each phase.",
    )
    svg.arrow_marker()
    for i, col in enumerate(columns):
        x = LABEL_W + i * col_w
        _card(svg, x, TOP, col_w - GUTTER, col)
        if i:
            svg.curve(
                (x - GUTTER + 2, TOP + CARD_H / 2),
                (x - 2, TOP + CARD_H / 2),
                "edge",
                True,
                None,
                False,
            )
    svg.text(LEFT, bars_top - 12, "Nodes per partition", "small muted")
    for r, (name, total, per_node) in enumerate(shown):
        y = bars_top + r * ROW_H
        svg.text(LEFT, y + 12, fit(name, LABEL_W - LEFT - 8, 13, True), "title")
        gpus = f", {per_node} GPUs each" if per_node else ""
        svg.text(LEFT, y + 27, fit(f"{fmt.num(total)} nodes{gpus}", LABEL_W - LEFT - 8, 10.5), "small muted")
        for i, col in enumerate(columns):
            _bar(svg, LABEL_W + i * col_w, y, col_w - GUTTER, name, total, col, source, target)
    if len(partitions) > len(shown):
        more = len(partitions) - len(shown)
        svg.text(
            LEFT,
            bars_top + len(shown) * ROW_H + 4,
            f"and {fmt.plural(more, 'more partition')}",
            "small muted",
        )
    if not partitions:
        svg.text(
            LABEL_W,
            bars_top + 16,
            "No partitions in migrate.yaml: capacity per phase is not planned.",
            "muted",
        )
    _legend(svg, height - 18, source, target)
    return svg


def _columns(phases: tuple[PhaseView, ...], target: str) -> list[_Column]:
    if len(phases) <= MAX_COLUMNS:
        return [_column(p, target) for p in phases]
    head, middle, tail = phases[:4], phases[4:-2], phases[-2:]
    folded = _Column(
        id="",
        title=f"{middle[0].id}–{middle[-1].id}",
        lines=(
            f"{fmt.plural(len(middle), 'wave')} · {fmt.plural(sum(len(p.units) for p in middle), 'unit')}",
            f"{fmt.plural(middle[-1].target_nodes, 'node')} on {target}",
        ),
        kind=PhaseKind.WAVE,
        capacity=middle[-1].capacity,
    )
    return [*(_column(p, target) for p in head), folded, *(_column(p, target) for p in tail)]


def _column(phase: PhaseView, target: str) -> _Column:
    if phase.kind is PhaseKind.FOUNDATIONS:
        lines: tuple[str, ...] = (phase.name, fmt.plural(len(phase.steps), "prerequisite"))
        return _Column(phase.id, "Phase 0", lines, phase.kind, ())
    if phase.kind is PhaseKind.END_STATE:
        stays = fmt.plural(phase.stay_count, "job") + " stay" if phase.stay_count else "no job stays"
        return _Column(phase.id, "End state", (phase.name, stays), phase.kind, phase.capacity)
    lines = (
        f"{fmt.plural(len(phase.units), 'unit')} · {fmt.plural(phase.job_count, 'job')}",
        f"{fmt.plural(phase.target_nodes, 'node')} on {target}",
    )
    return _Column(phase.id, phase.title, lines, phase.kind, phase.capacity)


def _partitions(phases: tuple[PhaseView, ...]) -> list[tuple[str, int, int]]:
    for phase in phases:
        if phase.capacity:
            return [(c.partition, c.total_nodes, c.gpus_per_node) for c in phase.capacity]
    return []


def _card(svg: Svg, x: float, y: float, w: float, col: _Column) -> None:
    cls = _JOB_CLASS.get(col.kind, "job external")
    svg.rect(x, y, w, CARD_H, cls, rx=6)
    tag_w = text_width(col.id, 10.5) + 8 if col.id else 0
    svg.text(x + 10, y + 18, fit(col.title, w - 20 - tag_w, 13, True), "title")
    svg.text(x + w - 8, y + 18, col.id, "small muted", anchor="end")
    for i, line in enumerate(col.lines):
        svg.text(x + 10, y + 37 + i * 16, fit(line, w - 16, 10.5), "small")


def _bar(
    svg: Svg, x: float, y: float, w: float, partition: str, total: int, col: _Column, source: str, target: str
) -> None:
    cap = next((c for c in col.capacity if c.partition == partition), None)
    on_target = cap.target_nodes if cap else 0
    on_source = cap.source_nodes if cap else total  # before anything moves, every node is on the source
    scale = w / max(1, on_target + on_source)
    tip = f"{partition} after {col.id}: {on_target} on {target}, {on_source} on {source}"
    if on_target:
        svg.rect(x, y, on_target * scale, BAR_H, "move", tip=tip)
    if on_source:
        svg.rect(x + on_target * scale, y, on_source * scale, BAR_H, "stay", tip=tip)
    svg.text(x, y + BAR_H + 13, fit(f"{target} {on_target} · {source} {on_source}", w, 10.5), "small muted")


def _legend(svg: Svg, y: float, source: str, target: str) -> None:
    svg.rect(LEFT, y - 11, 14, 14, "move", rx=3)
    svg.text(LEFT + 20, y, f"nodes on {target}")
    x = LEFT + 40 + len(f"nodes on {target}") * 7.2
    svg.rect(x, y - 11, 14, 14, "stay", rx=3)
    svg.text(x + 20, y, f"nodes on {source}")


__all__ = ["phases_timeline"]
