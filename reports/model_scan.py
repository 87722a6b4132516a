"""View-model sections read from the scan and the translations: inventory, diagnostics, fidelity."""

from __future__ import annotations

import posixpath
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence

from migrate.diagnostics import CODES, SEVERITIES, Diagnostic
from migrate.fidelity import Translation
from migrate.reports import fmt
from migrate.reports.model_plan import PATTERN_LABELS, demand, dispositions
from migrate.reports.plan_types import Job, PlanDoc
from migrate.reports.scan_facts import JobFacts
from migrate.reports.view import (
    CODE,
    NUMBER,
    Artifact,
    Column,
    DiagnosticGroup,
    DiagnosticItem,
    FidelityRow,
    JobTranslation,
    Scanned,
    Table,
)
from migrate.scan.results import ScanResult
from migrate.translate import TranslationSet
from migrate.vocab import FidelityStatus, Format

# Upper bounds of the size buckets; the last bucket is open.
NODE_BUCKETS = (0, 1, 4, 16, 64)
GPU_BUCKETS = (0, 1, 8, 64, 512)
FIDELITY_ORDER = {FidelityStatus.DROPPED: 0, FidelityStatus.APPROXIMATED: 1, FidelityStatus.MAPPED: 2}


def scanned(
    result: ScanResult,
    paths: Sequence[str],
    config_path: str | None,
    rel: fmt.Relative,
    diagnostics: tuple[tuple[str, int], ...],
    facts: Mapping[str, JobFacts],
) -> Scanned:
    """``diagnostics``: ``severity_counts`` of what the report lists, so that every figure agrees;
    ``facts``: each job's size as the plan allocates it, summed here (a job that runs on another
    scanned object, such as a RayJob on a RayCluster, is not summed again)."""
    summary = result.summary()
    counted = [f for f in facts.values() if f.on is None]
    accelerators: Counter[str] = Counter()
    for f in counted:
        accelerators.update(dict(f.accelerators))
    return Scanned(
        paths=tuple(paths),
        config_path=config_path,
        relative_to=rel.prefix,
        files=summary["files"],
        job_files=summary["job_files"],
        jobs=summary["jobs"],
        nodes=sum(f.nodes for f in counted),
        gpus=sum(f.gpus for f in counted),
        accelerators=tuple(sorted(accelerators.items())),
        files_by_format=tuple(summary["by_format"].items()),
        diagnostics=diagnostics,
    )


def severity_counts(groups: tuple[DiagnosticGroup, ...]) -> tuple[tuple[str, int], ...]:
    """Severity -> how many diagnostics of it the report lists (errors first): the one count."""
    counts = Counter(item.severity for group in groups for item in group.items)
    return tuple((s, counts[s]) for s in SEVERITIES)


def inventory(result: ScanResult, plan: PlanDoc, facts: Mapping[str, JobFacts]) -> tuple[Table, ...]:
    jobs = plan["jobs"]
    nodes = {job_id: f.nodes for job_id, f in facts.items()}
    gpus = {job_id: f.gpus + sum(n for _, n in f.accelerators) for job_id, f in facts.items()}
    return (
        _by_format(result, jobs, facts),
        _by_kind(jobs, facts),
        _by_pattern(plan),
        _by_size(jobs, nodes, NODE_BUCKETS, "Nodes per job", "Jobs by size in nodes", "by-nodes"),
        _by_size(
            jobs,
            gpus,
            GPU_BUCKETS,
            "GPUs and accelerators per job",
            "Jobs by GPUs and accelerators",
            "by-gpus",
        ),
        _by_partition(plan),
    )


def _sums(jobs: Iterable[Job]) -> tuple[int, str, str]:
    count, node_h, gpu_h = 0, 0.0, 0.0
    for job in jobs:
        nh, gh = demand(job)
        count, node_h, gpu_h = count + 1, node_h + nh, gpu_h + gh
    return count, fmt.hours(node_h), fmt.hours(gpu_h)


def _demand_columns(first: Column) -> tuple[Column, ...]:
    return (first, Column("Jobs", NUMBER), Column("Node-h", NUMBER), Column("GPU-h", NUMBER))


def _by_format(result: ScanResult, jobs: list[Job], facts: Mapping[str, JobFacts]) -> Table:
    files: Counter[str] = Counter(f.format for f in result.files)
    groups: dict[str, list[Job]] = defaultdict(list)
    for job in jobs:
        info = facts.get(job["id"])
        groups[info.format if info else Format.UNKNOWN].append(job)
    rows = []
    for name in sorted(set(files) | set(groups)):
        count, node_h, gpu_h = _sums(groups.get(name, []))
        rows.append((name, fmt.num(files.get(name, 0)), fmt.num(count), node_h, gpu_h))
    columns = (Column("Format"), Column("Files", NUMBER), *_demand_columns(Column("Format"))[1:])
    return Table("by-format", "Files and jobs by format", columns, tuple(rows))


def _by_kind(jobs: list[Job], facts: Mapping[str, JobFacts]) -> Table:
    groups: dict[tuple[str, str], list[Job]] = defaultdict(list)
    for job in jobs:
        info = facts.get(job["id"])
        groups[(info.format, info.kind) if info else (Format.UNKNOWN, "unknown")].append(job)
    rows = tuple((kind, form, *_fmt_sums(members)) for (form, kind), members in sorted(groups.items()))
    columns = (Column("Kind"), Column("Format"), *_demand_columns(Column(""))[1:])
    return Table("by-kind", "Jobs by kind", columns, rows)


def _fmt_sums(jobs: Iterable[Job]) -> tuple[str, str, str]:
    count, node_h, gpu_h = _sums(jobs)
    return fmt.num(count), node_h, gpu_h


def _by_pattern(plan: PlanDoc) -> Table:
    where = dispositions(plan)
    groups: dict[str, list[Job]] = defaultdict(list)
    for job in plan["jobs"]:
        groups[job["pattern"]].append(job)
    order = {p: i for i, p in enumerate(PATTERN_LABELS)}
    rows = []
    for pattern in sorted(groups, key=lambda p: (order.get(p, 99), p)):
        members = groups[pattern]
        ends = Counter(where[j["id"]] for j in members)
        count, node_h, gpu_h = _sums(members)
        rows.append(
            (
                PATTERN_LABELS.get(pattern, pattern),
                pattern,
                fmt.num(count),
                fmt.num(ends["move"]),
                fmt.num(ends["stay"]),
                fmt.num(ends["already"]),
                node_h,
                gpu_h,
            )
        )
    columns = (
        Column("Pattern"),
        Column("Id", CODE),
        Column("Jobs", NUMBER),
        Column(f"Move to {plan['target']}", NUMBER),
        Column(f"Stay on {plan['source']}", NUMBER),
        Column(f"Already on {plan['target']}", NUMBER),
        Column("Node-h", NUMBER),
        Column("GPU-h", NUMBER),
    )
    return Table("by-pattern", "Jobs by workload pattern", columns, tuple(rows))


def bucket_label(value: int, bounds: tuple[int, ...]) -> tuple[int, str]:
    """(sort key, label) of the size bucket holding ``value``: 0, 1, 2–4, 5–16 ... 65+."""
    low = 0
    for i, high in enumerate(bounds):
        if value <= high:
            return i, (str(high) if low >= high else f"{low}–{high}")
        low = high + 1
    return len(bounds), f"{low}+"


def _by_size(
    jobs: list[Job],
    sizes: Mapping[str, int],  # job id -> nodes or GPUs
    bounds: tuple[int, ...],
    column: str,
    title: str,
    table_id: str,
) -> Table:
    groups: dict[tuple[int, str], list[Job]] = defaultdict(list)
    for job in jobs:
        groups[bucket_label(sizes.get(job["id"], 0), bounds)].append(job)
    rows = tuple((label, *_fmt_sums(members)) for (_, label), members in sorted(groups.items()))
    return Table(table_id, title, _demand_columns(Column(column)), rows)


def _by_partition(plan: PlanDoc) -> Table:
    inventory: dict[str, tuple[int, int]] = {}
    for phase in plan["phases"]:
        for cap in phase["capacity"]:
            inventory[cap["partition"]] = (cap["total_nodes"], cap["gpus_per_node"])
    groups: dict[str, list[Job]] = defaultdict(list)
    for job in plan["jobs"]:
        need = job.get("demand")
        groups[need["partition"] if need else "(none)"].append(job)
    rows = []
    for name in sorted(set(groups) | set(inventory)):
        nodes, per_node = inventory.get(name, (0, 0))
        rows.append(
            (
                name,
                fmt.num(nodes) if name in inventory else "",
                fmt.num(per_node) if name in inventory else "",
                *_fmt_sums(groups.get(name, [])),
            )
        )
    columns = (
        Column("Partition"),
        Column("Nodes", NUMBER),
        Column("GPUs/node", NUMBER),
        *_demand_columns(Column(""))[1:],
    )
    note = (
        f"Demand over the {plan['thresholds'].get('demand_window_hours', '?')} h window, "
        "from time limits and array sizes in the scripts."
    )
    return Table("by-partition", "Demand by partition", columns, tuple(rows), note)


def all_diagnostics(result: ScanResult, translations: Sequence[Translation]) -> list[tuple[Diagnostic, str]]:
    """Every diagnostic with the file it belongs to: the scan's, then the translation's."""
    out = [(d, d.path or "-") for d in result.diagnostics]
    seen = {(d.code, d.path, d.line, d.message) for d, _ in out}
    for t in translations:
        for d in t.diagnostics:
            key = (d.code, d.path or t.source, d.line, d.message)
            if key not in seen:
                seen.add(key)
                out.append((d, d.path or t.source))
    return out


def diagnostic_groups(diags: list[tuple[Diagnostic, str]], rel: fmt.Relative) -> tuple[DiagnosticGroup, ...]:
    groups: dict[str, list[tuple[Diagnostic, str]]] = defaultdict(list)
    for diag, path in diags:
        groups[diag.code].append((diag, path))
    rank = {s: i for i, s in enumerate(SEVERITIES)}
    out = []
    for code in sorted(groups, key=lambda c: (rank.get(_severity(c, groups[c]), 9), c)):
        items = sorted(groups[code], key=lambda dp: (dp[1], dp[0].line or 0, dp[0].message))
        out.append(
            DiagnosticGroup(
                code,
                _severity(code, items),
                CODES.get(code, ("", ""))[1],
                tuple(
                    DiagnosticItem(
                        rel(f"{path}:{d.line}" if d.line is not None else path), d.severity, rel(d.message)
                    )
                    for d, path in items
                ),
            )
        )
    return tuple(out)


def _severity(code: str, items: list[tuple[Diagnostic, str]]) -> str:
    """The worst severity the code was reported with."""
    severities = {d.severity for d, _ in items}
    return next((s for s in SEVERITIES if s in severities), CODES.get(code, ("info", ""))[0])


def diagnostics_table(groups: tuple[DiagnosticGroup, ...]) -> Table:
    """One row per code and severity: a code raised as a warning is not counted as an error."""
    rows = tuple(
        (g.code, severity, fmt.num(count), g.meaning)
        for g in groups
        for severity in SEVERITIES
        if (count := sum(1 for item in g.items if item.severity == severity))
    )
    columns = (Column("Code", CODE), Column("Severity"), Column("Count", NUMBER), Column("Meaning"))
    return Table("diagnostics-summary", "Diagnostics by code", columns, rows)


def translation_list(translations: TranslationSet | Sequence[Translation] | None) -> list[Translation]:
    if translations is None:
        return []
    if isinstance(translations, TranslationSet):
        return list(translations.translations)
    return list(translations)


def job_translations(
    translations: TranslationSet | Sequence[Translation] | None,
    rel: fmt.Relative,
    artifact_root: str = "",
) -> tuple[JobTranslation, ...]:
    whole = translations if isinstance(translations, TranslationSet) else None
    written = set(whole.tree.files) if whole else None  # None: a bare list, every path is taken as written
    linked = {e.dependent for e in whole.edges} | {e.prerequisite for e in whole.edges} if whole else set()
    out = []
    for index, t in enumerate(translation_list(translations)):
        outputs = [f"{t.name}/{name}" for name in sorted(t.files)]
        outputs += [name for name in sorted(t.shared) if written is None or name in written]
        if t.files and t.job_id in linked and (written is None or "submit.sh" in written):
            outputs.append("submit.sh")
        if not t.files and written is not None and t.flavor in written:
            outputs.append(t.flavor)  # a wrapper has no file of its own: its order lives in submit.sh
        counts = t.fidelity.counts()
        entries = sorted(
            enumerate(t.fidelity.entries), key=lambda ie: (FIDELITY_ORDER.get(ie[1].status, 3), ie[0])
        )
        out.append(
            JobTranslation(
                anchor=f"job-{index + 1}-{fmt.slug(t.name)}",
                job_id=rel(t.job_id),
                name=t.name,
                flavor=t.flavor,
                flavor_reason=t.flavor_reason,
                mapped=counts.get(FidelityStatus.MAPPED, 0),
                approximated=counts.get(FidelityStatus.APPROXIMATED, 0),
                dropped=counts.get(FidelityStatus.DROPPED, 0),
                entries=tuple(
                    FidelityRow(e.item, e.status, rel(e.reason), "" if e.line is None else str(e.line))
                    for _, e in entries
                ),
                artifacts=tuple(
                    Artifact(posixpath.join(artifact_root, path) if artifact_root else path, path)
                    for path in outputs
                ),
            )
        )
    return tuple(out)


def fidelity_counts(
    translations: TranslationSet | Sequence[Translation] | None,
) -> dict[str, tuple[int, int]]:
    """Job id -> (dropped, approximated), the shape ``build_plan`` takes to raise a unit's risk."""
    out: dict[str, tuple[int, int]] = {}
    for t in translation_list(translations):
        counts = t.fidelity.counts()
        out[t.job_id] = (counts.get(FidelityStatus.DROPPED, 0), counts.get(FidelityStatus.APPROXIMATED, 0))
    return out


__all__ = [
    "all_diagnostics",
    "bucket_label",
    "diagnostic_groups",
    "diagnostics_table",
    "fidelity_counts",
    "inventory",
    "job_translations",
    "scanned",
    "translation_list",
]
