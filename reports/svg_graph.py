"""The dependency and storage graph: migration units as boxes, monitoring above, storage below.

Three levels of detail keep it readable and its size bounded:

- up to ``DETAIL_MAX_JOBS`` jobs, every job is drawn inside its unit, in run
  order from top to bottom, with its dependency, submit and data links;
- up to ``UNIT_BOXES_MAX`` units, each unit is one box with its counts;
- beyond that, units that move in the same phases share one box.

Boxes are packed bottom-left (tallest first), so a long pipeline and many
one-job units fill the page without gaps. Lines to storage and monitoring are
drawn under the boxes and capped at ``MAX_LINES``, heaviest first.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum

import networkx as nx

from migrate.plan.planner import PhaseKind
from migrate.reports import fmt
from migrate.reports.model_graph import (
    ALREADY,
    BLOCKED,
    DATA,
    EXTERNAL,
    HELD,
    MOVES,
    STAYS,
    SUBMITS,
    GraphJob,
    GraphUnit,
    GraphView,
)
from migrate.reports.svg_canvas import Svg, fit, text_width


class Band(StrEnum):
    """A band of pills a job's box links to (also the pills' CSS class)."""

    STORE = "store"
    MONITOR = "monitor"


DETAIL_MAX_JOBS = 80
DETAIL_MAX_UNITS = 40
UNIT_BOXES_MAX = 60
MAX_GROUPS = 30
MAX_BAND = 10
MAX_LINES = 150
WIDTH = 1160
MARGIN = 16
GAP = 14
BAND_H = 36
LINK_ROOM = 46  # between a band and the boxes, for the lines to fan out

JOB_W, JOB_H = 150, 24
JOB_HGAP, JOB_VGAP = 10, 20
PAD, HEAD = 8, 24
STATUS_ORDER = (MOVES, ALREADY, STAYS, HELD, BLOCKED, EXTERNAL)

Paint = Callable[[Svg, float, float], None]


@dataclass
class _Box:
    id: str
    w: float
    h: float
    paint: Paint
    filesystems: Counter[str] = field(default_factory=Counter)  # fs id -> jobs or units behind the link
    monitors: Counter[str] = field(default_factory=Counter)
    x: float = 0.0
    y: float = 0.0


@dataclass(frozen=True)
class _Pill:
    x: float
    y: float
    w: float


def dependency_graph(view: GraphView) -> Svg:
    boxes, mode = _boxes(view)
    width = max(WIDTH, max((b.w for b in boxes), default=0) + 2 * MARGIN)
    area_h = _pack(boxes, width - 2 * MARGIN)
    for box in boxes:
        box.x += MARGIN
    mon_fold, fs_fold = _fold([m.id for m in view.monitors]), _fold([s.id for s in view.filesystems])
    mon_items = _by_barycenter(
        [
            (m.id, m.label, f"{fmt.plural(m.jobs, 'job')} · {fmt.plural(m.units, 'unit')}")
            for m in view.monitors
        ],
        boxes,
        lambda b: b.monitors,
    )
    fs_items = _by_barycenter(
        [(s.id, s.label, _store_note(s.kind, s.units, s.both_sides)) for s in view.filesystems],
        boxes,
        lambda b: b.filesystems,
    )
    top = 34.0
    mon_rows, mon_pills = _band_layout(mon_items, width, top + 16)
    area_top = top + 16 + mon_rows * (BAND_H + 8) + LINK_ROOM
    for box in boxes:
        box.y += area_top
    store_top = area_top + area_h + LINK_ROOM
    store_rows, store_pills = _band_layout(fs_items, width, store_top + 16)
    legend_y = store_top + 16 + store_rows * (BAND_H + 8) + 18
    svg = Svg(
        "graph",
        width,
        legend_y + 40,
        "Dependency and storage graph",
        _summary(view, mode),
    )
    svg.arrow_marker()
    svg.text(MARGIN, 20, _summary(view, mode), "small muted")
    svg.text(MARGIN, top + 10, "Monitoring", "small muted")
    svg.text(MARGIN, store_top + 10, "Storage", "small muted")
    _links(svg, boxes, mon_pills, store_pills, mon_fold, fs_fold)
    for box in boxes:
        box.paint(svg, box.x, box.y)
    _pills(svg, mon_pills, mon_items, Band.MONITOR, set())
    _pills(svg, store_pills, fs_items, Band.STORE, {s.id for s in view.filesystems if s.both_sides})
    if not view.monitors:
        svg.text(MARGIN + 90, top + 10, "no monitoring hooks found in the jobs", "small muted")
    if not view.filesystems:
        svg.text(MARGIN + 90, store_top + 10, "no shared storage found in the jobs", "small muted")
    _legend(svg, legend_y, view, mode == "jobs")
    return svg


def _boxes(view: GraphView) -> tuple[list[_Box], str]:
    """The boxes at the level of detail the site's size allows, in packing order, and that level."""
    if view.job_boxes <= DETAIL_MAX_JOBS and len(view.units) <= DETAIL_MAX_UNITS:
        detailed = [_detail_box(u, view.target) for u in view.units]
        return sorted(detailed, key=lambda b: (-b.h, -b.w, b.id)), "jobs"  # tallest first packs tightest
    if len(view.units) <= UNIT_BOXES_MAX:
        return [_unit_box(u) for u in view.units], "units"
    return _group_boxes(view), "groups"


def _summary(view: GraphView, mode: str) -> str:
    how = {
        "jobs": "every job drawn in its unit, run order top to bottom",
        "units": "one box per unit",
        "groups": "units grouped by the phase they move in",
    }[mode]
    return (
        f"{fmt.plural(len(view.units), 'migration unit')}, {fmt.plural(view.jobs, 'job')}, "
        f"{fmt.plural(view.links, 'link')} between jobs, {fmt.plural(view.stores, 'file system')}, "
        f"{fmt.plural(len(view.monitors), 'monitoring hook')}; {how}."
    )


def _store_note(kind: str, units: int, both: bool) -> str:
    return f"{kind} · {fmt.plural(units, 'unit')}" + (" · both sides" if both else "")


# ---------------------------------------------------------------------------
# Boxes


def _display(job: GraphJob) -> str:
    label = job.label.split(":", 1)[-1] if job.status == EXTERNAL else job.label
    name = label.rsplit("/", 1)[-1] if "/" in label else label
    return "outside: " + name if job.status == EXTERNAL else name


def _levels(unit: GraphUnit) -> dict[str, int]:
    """Run-order depth of each job; jobs in a cycle (of data links) share a level."""
    flow = nx.DiGraph()
    flow.add_nodes_from(j.id for j in unit.jobs)
    flow.add_edges_from((e.before, e.after) for e in unit.edges)
    condensed = nx.condensation(flow)
    depth: dict[int, int] = {}
    for scc in nx.topological_sort(condensed):
        depth[scc] = max((depth[p] + 1 for p in condensed.predecessors(scc)), default=0)
    mapping = condensed.graph["mapping"]
    return {job: depth[mapping[job]] for job in mapping}


def _detail_box(unit: GraphUnit, target: str) -> _Box:
    levels = _levels(unit)
    rows: dict[int, list[GraphJob]] = defaultdict(list)
    for job in unit.jobs:
        rows[levels[job.id]].append(job)
    widest = max(len(r) for r in rows.values())
    header = f"{unit.id} · {unit.action} · risk {unit.risk}"
    w = max(2 * PAD + widest * JOB_W + (widest - 1) * JOB_HGAP, text_width(header, 13, True) + 2 * PAD)
    depth = max(rows) + 1
    h = HEAD + depth * JOB_H + (depth - 1) * JOB_VGAP + PAD
    where: dict[str, tuple[float, float]] = {}
    for level, members in rows.items():
        row_w = len(members) * JOB_W + (len(members) - 1) * JOB_HGAP
        left = (w - row_w) / 2
        for i, job in enumerate(members):
            where[job.id] = (left + i * (JOB_W + JOB_HGAP), HEAD + level * (JOB_H + JOB_VGAP))

    def paint(svg: Svg, x: float, y: float) -> None:
        svg.rect(x, y, w, h, "unit-fill", rx=8, tip=f"unit {unit.id}: {unit.action}, risk {unit.risk}")
        svg.text(x + PAD, y + 16, fit(header, w - 2 * PAD, 13, True), "title")
        for edge in unit.edges:
            (bx, by), (ax, ay) = where[edge.before], where[edge.after]
            cls = "edge" + (" data" if edge.kind == DATA else " submits" if edge.kind == SUBMITS else "")
            if by == ay:  # same level: a cycle of data links, drawn side to side
                start, end = (x + bx + JOB_W, y + by + JOB_H / 2), (x + ax, y + ay + JOB_H / 2)
                if ax < bx:
                    start, end = (x + bx, y + by + JOB_H / 2), (x + ax + JOB_W, y + ay + JOB_H / 2)
                svg.curve(start, end, cls, True, None, False)
            else:
                svg.curve((x + bx + JOB_W / 2, y + by + JOB_H), (x + ax + JOB_W / 2, y + ay), cls, True)
        for job in unit.jobs:
            jx, jy = where[job.id]
            _job(svg, x + jx, y + jy, job, target)

    box = _Box(unit.id, w, h, paint)
    box.filesystems.update({fs: 1 for fs in unit.filesystems})
    box.monitors.update({m: 1 for m in unit.monitors})
    return box


def _job(svg: Svg, x: float, y: float, job: GraphJob, target: str) -> None:
    tag = job.phase if job.status == MOVES and job.phase else "held" if job.status == HELD else ""
    tip = f"{job.id}: " + {
        MOVES: f"moves to {target} in {job.phase}",
        STAYS: "stays",
        HELD: "held back by a dependency chain",
        ALREADY: f"already on {target}",
        BLOCKED: "blocked by a dependency cycle",
        EXTERNAL: "outside the scan",
    }.get(job.status, job.status)
    svg.rect(x, y, JOB_W, JOB_H, f"job {job.status}", rx=4, tip=tip)
    room = JOB_W - 12 - (text_width(tag, 10.5) + 6 if tag else 0)
    svg.text(x + 6, y + 16, fit(_display(job), room, 11.5), "small")
    if tag:
        svg.text(x + JOB_W - 5, y + 16, tag, "small muted", anchor="end")


def _status_bar(svg: Svg, x: float, y: float, w: float, counts: Counter[str]) -> None:
    total = sum(counts.values()) or 1
    for status in STATUS_ORDER:
        if counts[status]:
            part = w * counts[status] / total
            svg.rect(x, y, part, 7, status, tip=f"{counts[status]} {status}")
            x += part


def _unit_box(unit: GraphUnit) -> _Box:
    w, h = 168.0, 58.0
    counts = Counter(j.status for j in unit.jobs)
    jobs = sum(n for s, n in counts.items() if s != EXTERNAL)

    def paint(svg: Svg, x: float, y: float) -> None:
        svg.rect(x, y, w, h, "unit-fill", rx=8, tip=f"unit {unit.id}: {unit.action}, risk {unit.risk}")
        svg.text(x + PAD, y + 17, unit.id, "title")
        svg.text(
            x + w - PAD,
            y + 17,
            fit(unit.action, w - 2 * PAD - text_width(unit.id, 13, True) - 6, 10.5),
            "small muted",
            anchor="end",
        )
        where = f" · {unit.phase}" if unit.phase else ""
        svg.text(
            x + PAD,
            y + 33,
            fit(f"{fmt.plural(jobs, 'job')}{where} · risk {unit.risk}", w - 2 * PAD, 10.5),
            "small",
        )
        _status_bar(svg, x + PAD, y + 42, w - 2 * PAD, counts)

    box = _Box(unit.id, w, h, paint)
    box.filesystems.update({fs: 1 for fs in unit.filesystems})
    box.monitors.update({m: 1 for m in unit.monitors})
    return box


def _group_key(unit: GraphUnit) -> str:
    return unit.phase or {"already-there": "already", "blocked": "blocked"}.get(unit.action, "stay")


def _group_boxes(view: GraphView) -> list[_Box]:
    groups: dict[str, list[GraphUnit]] = defaultdict(list)
    for unit in view.units:
        groups[_group_key(unit)].append(unit)
    waves = [p.id for p in view.phases if p.kind is PhaseKind.WAVE and p.id in groups]
    others = [p.id for p in view.phases if p.kind is PhaseKind.PILOT and p.id in groups]
    tail = [k for k in ("stay", "already", "blocked") if k in groups]
    loose = sorted(k for k in groups if k not in waves and k not in others and k not in tail)
    room = max(1, MAX_GROUPS - len(others) - len(tail) - len(loose))
    size = max(1, math.ceil(len(waves) / room))
    buckets: list[tuple[str, list[GraphUnit]]] = [(k, groups[k]) for k in others]
    for i in range(0, len(waves), size):
        chunk = waves[i : i + size]
        name = chunk[0] if len(chunk) == 1 else f"{chunk[0]}–{chunk[-1]}"
        buckets.append((name, [u for k in chunk for u in groups[k]]))
    labels = {"stay": f"Stay on {view.source}", "already": "Already there", "blocked": "Blocked by cycles"}
    buckets += [(labels.get(k, k), groups[k]) for k in loose + tail]
    return [_group_box(name, units) for name, units in buckets]


def _group_box(name: str, units: list[GraphUnit]) -> _Box:
    w, h = 176.0, 72.0
    counts: Counter[str] = Counter(j.status for u in units for j in u.jobs)
    jobs = sum(n for s, n in counts.items() if s != EXTERNAL)
    links = sum(len(u.edges) for u in units)
    worst = max(u.risk for u in units)

    def paint(svg: Svg, x: float, y: float) -> None:
        svg.rect(x, y, w, h, "unit-fill", rx=8, tip=f"{name}: {len(units)} units, {jobs} jobs")
        svg.text(x + PAD, y + 17, fit(name, w - 2 * PAD, 13, True), "title")
        svg.text(
            x + PAD,
            y + 33,
            fit(f"{fmt.plural(len(units), 'unit')} · {fmt.plural(jobs, 'job')}", w - 2 * PAD, 10.5),
            "small",
        )
        svg.text(
            x + PAD,
            y + 48,
            fit(f"{fmt.plural(links, 'link')} · risk up to {worst}", w - 2 * PAD, 10.5),
            "small muted",
        )
        _status_bar(svg, x + PAD, y + 57, w - 2 * PAD, counts)

    box = _Box(name, w, h, paint)
    for unit in units:
        box.filesystems.update(unit.filesystems)
        box.monitors.update(unit.monitors)
    return box


def _pack(boxes: list[_Box], width: float) -> float:
    """Bottom-left skyline packing in the given order; sets each box's x and y, returns the height used."""
    sky: list[tuple[float, float, float]] = [(0.0, width, 0.0)]  # (x, width, top) segments
    used = 0.0
    for box in boxes:
        span = box.w + GAP
        best: tuple[float, float] | None = None
        for start, _, _ in sky:
            if start + box.w > width and start > 0:
                continue
            top = max(t for x, w, t in sky if x < start + span and x + w > start)
            if best is None or (top, start) < best:
                best = (top, start)
        top, start = best if best is not None else (max(t for _, _, t in sky), 0.0)
        box.x, box.y = start, top
        used = max(used, top + box.h)
        sky = _raise(sky, start, span, top + box.h + GAP)
    return used


def _raise(
    sky: list[tuple[float, float, float]], start: float, span: float, top: float
) -> list[tuple[float, float, float]]:
    out: list[tuple[float, float, float]] = []
    end = start + span
    for x, w, t in sky:
        if x < start:
            out.append((x, min(w, start - x), t))
        if x + w > end:
            right = max(x, end)
            out.append((right, x + w - right, t))
    out.append((start, span, top))
    out.sort()
    merged: list[tuple[float, float, float]] = []
    for seg in out:
        if merged and merged[-1][2] == seg[2] and abs(merged[-1][0] + merged[-1][1] - seg[0]) < 1e-6:
            x, w, t = merged[-1]
            merged[-1] = (x, w + seg[1], t)
        else:
            merged.append(seg)
    return merged


# ---------------------------------------------------------------------------
# Bands and the lines to them


MORE = "(more)"


def _fold(ids: list[str]) -> dict[str, str]:
    """Node id -> the pill that shows it: the first MAX_BAND get their own, the rest share one."""
    return {node: (node if i < MAX_BAND else MORE) for i, node in enumerate(ids)}


def _by_barycenter(
    items: list[tuple[str, str, str]], boxes: list[_Box], used: Callable[[_Box], Counter[str]]
) -> list[tuple[str, str, str]]:
    """The band's first MAX_BAND items (most used), placed left to right under the boxes that use them."""
    weight: dict[str, float] = defaultdict(float)
    moment: dict[str, float] = defaultdict(float)
    for box in boxes:
        for node, n in used(box).items():
            weight[node] += n
            moment[node] += n * (box.x + box.w / 2)
    shown = items[:MAX_BAND]
    shown.sort(key=lambda item: (moment[item[0]] / weight[item[0]] if weight[item[0]] else 0.0, item[0]))
    if len(items) > MAX_BAND:
        rest = items[MAX_BAND:]
        shown.append((MORE, f"{len(rest)} more", ", ".join(label for _, label, _ in rest[:3])))
    return shown


def _band_layout(items: list[tuple[str, str, str]], width: float, y: float) -> tuple[int, dict[str, _Pill]]:
    """Pills in rows, each row spread evenly across the width (room left of it for the band's name)."""
    left, right = MARGIN + 84.0, width - MARGIN
    rows: list[list[tuple[str, float]]] = [[]]
    used = 0.0
    for node, label, note in items:
        w = min(240.0, max(text_width(label, 13, True), text_width(note, 10.5)) + 20)
        if rows[-1] and used + w > right - left:
            rows.append([])
            used = 0.0
        rows[-1].append((node, w))
        used += w + 12
    pills: dict[str, _Pill] = {}
    for r, row in enumerate(rows):
        spare = (right - left) - sum(w for _, w in row)
        step = spare / len(row) if row else 0.0
        x = left + step / 2
        for node, w in row:
            pills[node] = _Pill(x, y + r * (BAND_H + 8), w)
            x += w + step
    return len(rows), pills


def _pills(
    svg: Svg, pills: dict[str, _Pill], items: list[tuple[str, str, str]], cls: str, strong: set[str]
) -> None:
    for node, label, note in items:
        pill = pills[node]
        kind = cls + (" both" if node in strong else "")
        svg.rect(pill.x, pill.y, pill.w, BAND_H, kind, rx=BAND_H / 2, tip=f"{label}: {note}")
        svg.text(pill.x + 9, pill.y + 15, fit(label, pill.w - 16, 13, True), "title")
        svg.text(pill.x + 9, pill.y + 29, fit(note, pill.w - 16, 10.5), "small muted")


def _links(
    svg: Svg,
    boxes: list[_Box],
    mon_pills: dict[str, _Pill],
    store_pills: dict[str, _Pill],
    mon_fold: dict[str, str],
    fs_fold: dict[str, str],
) -> None:
    wanted: list[tuple[int, int, Band, str, int]] = []  # (-weight, box index, kind, pill, weight)
    for i, box in enumerate(boxes):
        for kind, used, fold in (
            (Band.STORE, box.filesystems, fs_fold),
            (Band.MONITOR, box.monitors, mon_fold),
        ):
            merged: Counter[str] = Counter()
            for node, weight in used.items():
                merged[fold.get(node, MORE)] += weight
            wanted += [(-w, i, kind, pill, w) for pill, w in merged.items()]
    chosen = sorted(wanted)[:MAX_LINES]
    # Spread the ends along each box and each pill in left-to-right order, so lines fan out uncrossed.
    pills = {Band.STORE: store_pills, Band.MONITOR: mon_pills}
    centre = {f"{kind}:{node}": p.x + p.w / 2 for kind, band in pills.items() for node, p in band.items()}
    centre |= {f"box{i}": box.x + box.w / 2 for i, box in enumerate(boxes)}
    pairs = [(f"box{i}", f"{kind}:{pill}") for _, i, kind, pill, _ in chosen]
    at_box = _ports(pairs, centre)
    at_pill = _ports([(b, a) for a, b in pairs], centre)
    for _, i, kind, pill_id, weight in chosen:
        box, pill = boxes[i], pills[kind][pill_id]
        ends = (f"box{i}", f"{kind}:{pill_id}")
        width = 1.0 + min(2.5, math.log2(weight) / 2)  # thicker for more users, never a wall of ink
        from_box = box.x + box.w * at_box[ends]
        to_pill = pill.x + pill.w * at_pill[ends[::-1]]
        if kind is Band.STORE:
            svg.curve((from_box, box.y + box.h), (to_pill, pill.y), "link", False, width)
        else:
            svg.curve((from_box, box.y), (to_pill, pill.y + BAND_H), "link", False, width)


def _ports(pairs: list[tuple[str, str]], centre: dict[str, float]) -> dict[tuple[str, str], float]:
    """(end, other end) -> where on ``end`` the line attaches, as a fraction of its width."""
    by_end: dict[str, list[str]] = defaultdict(list)
    for end, other in pairs:
        by_end[end].append(other)
    out: dict[tuple[str, str], float] = {}
    for end, others in by_end.items():
        ranked = sorted(set(others), key=lambda o: (centre[o], o))
        for k, other in enumerate(ranked):
            out[(end, other)] = 0.15 + 0.7 * (k + 1) / (len(ranked) + 1)
    return out


def _legend(svg: Svg, y: float, view: GraphView, links_drawn: bool) -> None:
    x = float(MARGIN)
    for status, label in (
        (MOVES, f"moves to {view.target} (phase)"),
        (ALREADY, f"already on {view.target}"),
        (STAYS, f"stays on {view.source}"),
        (HELD, "held by a chain"),
        (BLOCKED, "blocked (cycle)"),
        (EXTERNAL, "outside the scan"),
    ):
        svg.rect(x, y - 11, 22, 14, f"job {status}", rx=3)
        svg.text(x + 28, y, label, "small")
        x += 40 + text_width(label, 10.5)
    y += 20
    x = float(MARGIN)
    kinds = (("edge", "dependency"), ("edge submits", "submits"), ("edge data", "data flow"))
    for cls, label in kinds if links_drawn else ():
        svg.curve((x, y - 4), (x + 28, y - 4), cls, True, None, False)
        svg.text(x + 34, y, label, "small")
        x += 50 + text_width(label, 10.5)
    svg.line(x, y - 4, x + 28, y - 4, "link", 2.0)
    svg.text(x + 34, y, "uses storage or monitoring (thicker: more units)", "small")


__all__ = ["DETAIL_MAX_JOBS", "MAX_LINES", "UNIT_BOXES_MAX", "dependency_graph"]
