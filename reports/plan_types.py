"""plan.json as types: the report reads the document through these, so mypy checks every field it uses.

The document is read once from the very text written to plan.json
(``read_plan``) and used as it is, without copying: at a hundred thousand jobs
that is most of the report's memory. ``docs/plan-json.md`` says what each
field means; ``migrate.plan.planner`` writes them.

Example::

    doc = read_plan(plan_json(the_plan))
    [first] = [p for p in doc["phases"] if p["id"] == "P1"]
"""

# No ``from __future__ import annotations`` here: with postponed annotations Python 3.11
# counts NotRequired keys as required in ``__required_keys__``, which the tests read.
import json
from typing import Literal, NotRequired, TypedDict, cast

from migrate.plan.planner import PLAN_SCHEMA

# planner.PhaseKind as the document spells it (the views hold its members)
PhaseKindName = Literal["foundations", "pilot", "wave", "end"]


class Rule(TypedDict):
    """The decision-table row a job's recommendation comes from."""

    id: str
    source: str
    says: str


class Accounting(TypedDict):
    """How accounting matched a job (``--accounting``); the other fields depend on ``status``."""

    status: str  # matched | credited-to-other | did-not-run | not-covered
    runs: NotRequired[int]
    allocations: NotRequired[int]
    states: NotRequired[dict[str, int]]
    files: NotRequired[list[str]]
    scaled: NotRequired[bool]
    credited_to: NotRequired[str]


class Demand(TypedDict):
    partition: str
    nodes: int
    node_hours: float  # over the demand window
    gpu_hours: float
    basis: str
    runs: float  # runs per demand window
    runs_basis: str  # always on, a schedule, the accounting, or one run assumed
    node_load: NotRequired[float]  # the nodes one run holds, when it is not `nodes` (a share of a node)
    assumed: NotRequired[list[str]]  # what the figures rest on that no option or site value told
    accounting: NotRequired[Accounting]


class SourcedValue(TypedDict):
    value: int | str | None
    source: str  # option | partition | inventory | site-default | exclusive | inferred | assumed


class Allocation(TypedDict):
    """What Slurm allocates a job of the source scheduler (docs/allocation.md)."""

    partition: SourcedValue
    nodes: SourcedValue
    cpus_per_node: SourcedValue
    mem_per_node_mb: SourcedValue
    gpus_per_node: SourcedValue
    time_limit_s: SourcedValue
    gpu_type: NotRequired[str]
    gpus: int  # every component's GPUs
    accelerators: NotRequired[dict[str, int]]  # accelerators that are not GPUs, by device name
    components: NotRequired[int]
    details: NotRequired[dict[str, str]]  # value name -> where it came from, when not the job's options


class Job(TypedDict):
    id: str
    pattern: str
    reasons: list[str]
    action: str  # move | move-with-changes | stay | already-there
    reason: str
    rule: Rule
    thresholds: dict[str, int]
    changes: list[str]
    unit: str | None
    phase: str | None
    demand: NotRequired[Demand]
    allocation: NotRequired[Allocation]


class Held(TypedDict):
    job: str
    reason: str


class RiskFactor(TypedDict):
    points: int
    reason: str


class Risk(TypedDict):
    score: int  # 0 .. 100
    reasons: list[str]  # "+N: why"
    factors: list[RiskFactor]


class Unit(TypedDict):
    id: str
    action: str
    jobs: list[str]
    order: list[str]
    formats: list[str]
    moving: list[str]
    staying: list[str]
    already_there: list[str]
    held: list[Held]
    bridges: list[str]
    filesystems: list[str]
    externals: list[str]
    risk: Risk


class Step(TypedDict):
    kind: str
    name: str
    detail: str
    evidence: list[str]


class Capacity(TypedDict):
    partition: str
    total_nodes: int
    gpus_per_node: int
    source_nodes: int
    target_nodes: int
    moved_node_hours: float
    remaining_node_hours: float


class Stay(TypedDict):
    job: str
    reason: str


class PoolShare(TypedDict):
    """One partition's nodes both schedulers draw from (Slinky's NodeSet nodes, slurm-bridge's nodes)."""

    partition: str
    shared_nodes: int
    gpus_per_node: int
    slurm_node_hours: float
    kubernetes_node_hours: float


class Phase(TypedDict):
    id: str
    name: str
    kind: PhaseKindName
    units: list[str]
    jobs: list[str]
    steps: list[Step]
    capacity: list[Capacity]
    gates: list[str]
    rollback: list[str]
    exit_criteria: list[str]
    stays: list[Stay]
    why: NotRequired[list[str]]  # the pilot: which workload each unit stands for
    pool: NotRequired[list[PoolShare]]


class DemandSummary(TypedDict):
    window_hours: int  # every job's figures are per this window (thresholds.demand_window_hours)
    node_hours: float
    always_on_node_hours: float  # services: on for the whole window
    batch_node_hours: float  # batch jobs: their runs in the window
    assumed_node_hours: float  # of jobs whose figures rest on an assumption (demand.assumed)
    runs_assumed: int  # batch jobs counted as one run per window because nothing says how often


class Summary(TypedDict):
    jobs: int
    units: int
    by_action: dict[str, int]
    by_pattern: dict[str, int]
    phases: list[str]
    end_state: str | None
    demand: DemandSummary


class UsageWindow(TypedDict):
    start: str
    end: str


class UsageFile(TypedDict):
    path: str
    format: str
    records: int
    runs: int
    steps_left_out: int
    not_started: int
    unfinished: int
    unreadable: int
    window: UsageWindow | None
    scale: float


class UnmatchedRuns(TypedDict):
    origin: str
    name: str
    account: str | None
    partition: str | None
    runs: int
    allocations: int
    node_hours: float
    gpu_hours: float
    reason: str
    first: str


class SharedName(TypedDict):
    job: str
    credited_to: str


class Unreadable(TypedDict):
    path: str
    line: int
    reason: str


class Usage(TypedDict):
    files: list[UsageFile]
    matched_jobs: int
    unmatched: list[UnmatchedRuns]
    never_ran: list[str]
    shared_names: list[SharedName]
    unreadable: list[Unreadable]
    unreadable_total: int


class InventoryPartition(TypedDict):
    name: str
    nodes: int
    gpus_per_node: int | None
    gpu_type: str | None
    cpus_per_node: int | None
    mem_gb: int | None
    default: bool
    detail: str
    # What the file states of the site's defaults (docs/allocation.md), only when it states them.
    def_mem_per_cpu_mb: NotRequired[int]
    def_mem_per_node_mb: NotRequired[int]
    def_mem_per_gpu_mb: NotRequired[int]
    def_cpu_per_gpu: NotRequired[int]
    default_time_s: NotRequired[int]
    max_time_s: NotRequired[int]
    memory_scheduled: NotRequired[bool]
    devices: NotRequired[dict[str, int]]


class InventoryFile(TypedDict):
    path: str
    format: str
    partitions: list[InventoryPartition]
    notes: list[str]


class CoexistenceFinding(TypedDict):
    reason: str  # a CoexistenceReason
    detail: str


class CoexistenceRejection(TypedDict):
    mode: str
    reasons: list[CoexistenceFinding]


class PhaseIdle(TypedDict):
    phase: str
    split: int  # GPUs idle under the static split
    pooled: int  # GPUs idle if both sides drew from one pool
    stranded: int


class Coexistence(TypedDict):
    requested: str  # partition | slinky | slurm-bridge | auto
    mode: str  # the mode the phases follow
    source: str
    reasons: list[CoexistenceFinding]
    rejected: list[CoexistenceRejection]
    idle_gpus: list[PhaseIdle]
    total_gpus: int
    teams: dict[str, int]
    versions: dict[str, str]
    hybrid_controller: bool


class PlanDoc(TypedDict):
    schema: str
    direction: str
    site: str
    source: str
    target: str
    thresholds: dict[str, int]
    summary: Summary
    jobs: list[Job]
    units: list[Unit]
    phases: list[Phase]
    shared_filesystems: list[str]
    cycles: list[list[str]]
    warnings: list[str]
    usage: NotRequired[Usage]
    inventory: NotRequired[list[InventoryFile]]
    coexistence: NotRequired[Coexistence]


def read_plan(text: str) -> PlanDoc:
    """The plan.json document in ``text``; a ValueError when it is not one of this schema."""
    doc = json.loads(text)
    if not isinstance(doc, dict) or doc.get("schema") != PLAN_SCHEMA:
        raise ValueError(f"not a {PLAN_SCHEMA} document")
    return cast(PlanDoc, doc)


__all__ = [
    "Accounting",
    "Allocation",
    "Capacity",
    "Coexistence",
    "CoexistenceFinding",
    "CoexistenceRejection",
    "Demand",
    "DemandSummary",
    "Held",
    "InventoryFile",
    "InventoryPartition",
    "Job",
    "Phase",
    "PhaseIdle",
    "PhaseKindName",
    "PlanDoc",
    "PoolShare",
    "Risk",
    "RiskFactor",
    "Rule",
    "SharedName",
    "SourcedValue",
    "Stay",
    "Step",
    "Summary",
    "Unit",
    "UnmatchedRuns",
    "Unreadable",
    "Usage",
    "UsageFile",
    "UsageWindow",
    "read_plan",
]
