"""The report's view model: plain frozen data the templates and pictures read, nothing computed there.

Every figure is already formatted here (``fmt``), so the Markdown, the HTML
and the pictures print the same text for the same number.
"""

from __future__ import annotations

from dataclasses import dataclass

from migrate.plan.planner import PhaseKind
from migrate.reports.model_graph import GraphView

TEXT = "text"
NUMBER = "num"
CODE = "code"


@dataclass(frozen=True)
class Column:
    title: str
    kind: str = TEXT  # text | num (right-aligned) | code (monospace)


@dataclass(frozen=True)
class Table:
    id: str
    title: str
    columns: tuple[Column, ...]
    rows: tuple[tuple[str, ...], ...]
    note: str = ""


@dataclass(frozen=True)
class Scanned:
    paths: tuple[str, ...]
    config_path: str | None
    relative_to: str  # the folder the report's paths are written relative to ("" when they are not)
    files: int
    job_files: int
    jobs: int
    nodes: int
    gpus: int
    accelerators: tuple[tuple[str, int], ...]  # not GPUs, by device name
    files_by_format: tuple[tuple[str, int], ...]
    diagnostics: tuple[tuple[str, int], ...]  # severity -> count, errors first

    @property
    def files_line(self) -> str:
        formats = ", ".join(f"{n:,} {name}" for name, n in self.files_by_format)
        parts = [_count(self.nodes, "node"), _count(self.gpus, "GPU")]
        parts += [f"{n:,} {name}" for name, n in self.accelerators]
        asks = ", ".join(parts[:-1]) + " and " + parts[-1]
        return (
            f"{_count(self.files, 'file')}"
            + (f" ({formats})" if formats else "")
            + f", {self.job_files:,} with jobs: "
            f"{_count(self.jobs, 'job')} asking for {asks}."
        )

    @property
    def diagnostics_line(self) -> str:
        return ", ".join(f"{n:,} {sev}" if sev == "info" else _count(n, sev) for sev, n in self.diagnostics)


@dataclass(frozen=True)
class Share:
    """One outcome of the plan (move, stay, already there) and the demand it covers."""

    key: str  # move | stay | already
    label: str
    jobs: int
    node_hours: float
    gpu_hours: float
    node_share: str
    gpu_share: str


@dataclass(frozen=True)
class Verdict:
    kind: str  # move | stay | hybrid
    headline: str
    shares: tuple[Share, ...]
    node_hours: float  # all demand over the window
    gpu_hours: float
    window_hours: int
    basis: str = ""  # the one basis of every job's figures, and what rests on assumptions


@dataclass(frozen=True)
class Overview:
    phases: int
    moving_phases: int  # pilot and waves
    sentence: str  # the phases in one line
    first: str  # the first phase that moves jobs, in one line


@dataclass(frozen=True)
class RiskItem:
    title: str
    detail: str


@dataclass(frozen=True)
class MixRow:
    """One row of the articles' decision tables as it applies to the scanned jobs."""

    pattern: str
    pattern_label: str
    outcome: str  # move | stay | already
    platform: str  # the scheduler the rule recommends
    rule_id: str
    rule_source: str
    rule_says: str
    thresholds: str  # "large_training_nodes = 4", empty when the rule reads none
    reasons: tuple[str, ...]  # the most common reasons given to the jobs
    jobs: int
    node_hours: float
    gpu_hours: float
    node_share: str


@dataclass(frozen=True)
class Step:
    kind: str
    name: str
    detail: str
    evidence: str  # the jobs or nodes behind the step, shortened


@dataclass(frozen=True)
class CapacityRow:
    partition: str
    total_nodes: int
    gpus_per_node: int
    source_nodes: int
    target_nodes: int
    moved_node_hours: float
    remaining_node_hours: float


@dataclass(frozen=True)
class PhaseJob:
    id: str
    name: str
    unit: str
    pattern: str


@dataclass(frozen=True)
class StayGroup:
    reason: str
    jobs: tuple[str, ...]


@dataclass(frozen=True)
class PhaseView:
    id: str
    name: str
    title: str
    kind: PhaseKind
    units: tuple[str, ...]
    jobs: tuple[PhaseJob, ...]  # shown, at most PHASE_JOBS_SHOWN
    job_count: int
    steps: tuple[Step, ...]
    capacity: tuple[CapacityRow, ...]
    gates: tuple[str, ...]
    rollback: tuple[str, ...]
    exit_criteria: tuple[str, ...]
    why: tuple[str, ...]  # why the phase has its units (the pilot)
    stays: tuple[StayGroup, ...]
    stay_count: int
    source_nodes: int
    target_nodes: int
    detailed: bool  # long plans describe their first waves in full; plan.json has every one


@dataclass(frozen=True)
class DiagnosticItem:
    where: str  # file:line
    severity: str
    message: str


@dataclass(frozen=True)
class DiagnosticGroup:
    code: str
    severity: str
    meaning: str
    items: tuple[DiagnosticItem, ...]

    @property
    def anchor(self) -> str:
        return "diag-" + self.code.lower()


@dataclass(frozen=True)
class FidelityRow:
    item: str
    status: str  # mapped | approximated | dropped
    reason: str
    line: str


@dataclass(frozen=True)
class Artifact:
    href: str  # relative to the report
    label: str


@dataclass(frozen=True)
class JobTranslation:
    anchor: str
    job_id: str
    name: str
    flavor: str
    flavor_reason: str
    mapped: int
    approximated: int
    dropped: int
    entries: tuple[FidelityRow, ...]
    artifacts: tuple[Artifact, ...]


@dataclass(frozen=True)
class CoexistenceView:
    """How both schedulers share the nodes: the modes side by side, the chosen one's timeline, its files."""

    mode: str
    requested: str
    source: str  # the article and question the modes come from
    reasons: tuple[str, ...]
    modes: Table  # one row per mode: capacity, control plane, what users change, verdict
    timeline: Table  # the chosen mode's phases: what each does to the nodes
    artifacts: tuple[tuple[str, str], ...]  # (path relative to the report, what it is)


@dataclass(frozen=True)
class ReportModel:
    title: str
    tool: str  # "migrate 0.1.0"
    site: str
    source: str
    target: str
    direction: str
    scanned: Scanned
    verdict: Verdict
    overview: Overview
    assumptions: tuple[str, ...]  # what the demand rests on that nothing told, with the jobs it applies to
    risks: tuple[RiskItem, ...]
    inventory: tuple[Table, ...]
    diagnostics_summary: Table
    mix: tuple[MixRow, ...]
    thresholds: tuple[tuple[str, int], ...]
    graph: GraphView
    phases: tuple[PhaseView, ...]
    units: Table
    jobs: Table
    allocation: Table
    translations: tuple[JobTranslation, ...]
    translation_totals: tuple[tuple[str, int], ...]  # status -> entries, when translations were given
    diagnostics: tuple[DiagnosticGroup, ...]
    warnings: tuple[str, ...]
    cycles: tuple[tuple[str, ...], ...]
    coexistence: CoexistenceView | None = None  # absent when static partitioning was asked

    @property
    def translated(self) -> bool:
        return bool(self.translations)

    @property
    def threshold_line(self) -> str:
        return ", ".join(f"{name} = {value}" for name, value in self.thresholds)

    @property
    def translation_line(self) -> str:
        return ", ".join(f"{n:,} {status}" for status, n in self.translation_totals)


def _count(n: int, word: str) -> str:
    return f"{n:,} {word if n == 1 else word + 's'}"


__all__ = [
    "CODE",
    "NUMBER",
    "TEXT",
    "Artifact",
    "CapacityRow",
    "CoexistenceView",
    "Column",
    "DiagnosticGroup",
    "DiagnosticItem",
    "FidelityRow",
    "JobTranslation",
    "MixRow",
    "Overview",
    "PhaseJob",
    "PhaseView",
    "ReportModel",
    "RiskItem",
    "Scanned",
    "Share",
    "StayGroup",
    "Step",
    "Table",
    "Verdict",
]
