"""View-model sections read from plan.json: the verdict, the decision table, the phases, units and jobs.

Everything here reads the document that was written to plan.json (typed by
``plan_types``), never the ``Plan`` object, so every figure in the report can
be found in that file.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping

from migrate.names import is_placeholder
from migrate.plan.demand import LOGIN_NODE
from migrate.plan.planner import PhaseKind
from migrate.reports import fmt
from migrate.reports.plan_types import Allocation, Job, Phase, PlanDoc, RiskFactor, SourcedValue
from migrate.reports.scan_facts import JobFacts
from migrate.reports.view import (
    CODE,
    NUMBER,
    CapacityRow,
    Column,
    MixRow,
    Overview,
    PhaseJob,
    PhaseView,
    RiskItem,
    Share,
    StayGroup,
    Step,
    Table,
    Verdict,
)
from migrate.site.slurmtime import format_slurm_time

PHASE_JOBS_SHOWN = 40  # per phase; plan.json lists every job
PHASES_DETAILED = 12  # foundations, pilot and the first waves; the end state is always described
UNITS_SHOWN = 200
JOBS_SHOWN = 400
MOVE, STAY, ALREADY = "move", "stay", "already"

# Pattern ids as the classifier names them, in the order the decision table lists them.
PATTERN_LABELS = {
    "long-multinode-training": "Long multi-node training",
    "small-training": "Small training",
    "fine-tuning": "Fine-tuning",
    "sweep": "Hyperparameter sweep",
    "data-preprocessing": "Data preprocessing",
    "inference-serving": "Inference serving",
    "batch-inference": "Batch inference",
    "interactive": "Interactive session",
    "hpc-mpi": "HPC / MPI code",
    "maintenance": "Cluster upkeep",
    "orchestration": "Submit wrapper",
    "job-helper": "Helper of jobs (rendezvous store, Ray cluster)",
    "general-batch": "General batch",
}
ACTION_LABELS = {
    "move": "move",
    "move-with-changes": "move with changes",
    "stay": "stay",
    "already-there": "already there",
}


def outcome_of(action: str) -> str:
    if action == "stay":
        return STAY
    if action == "already-there":
        return ALREADY
    return MOVE


def dispositions(plan: PlanDoc) -> dict[str, str]:
    """Job id -> where it ends up once the plan has run (held and blocked jobs stay)."""
    out: dict[str, str] = {}
    for unit in plan["units"]:
        out |= {job: STAY for job in unit["staying"]}
        out |= {job: MOVE for job in unit["moving"]}
        out |= {job: ALREADY for job in unit["already_there"]}
    for job in plan["jobs"]:
        out.setdefault(job["id"], outcome_of(job["action"]))
    return out


def demand(job: Job) -> tuple[float, float]:
    """Node- and GPU-hours over the window; none for a job the plan could not size."""
    need = job.get("demand")
    return (need["node_hours"], need["gpu_hours"]) if need else (0.0, 0.0)


def verdict(plan: PlanDoc) -> Verdict:
    where = dispositions(plan)
    jobs: Counter[str] = Counter()
    node_h: dict[str, float] = defaultdict(float)
    gpu_h: dict[str, float] = defaultdict(float)
    for job in plan["jobs"]:
        key = where[job["id"]]
        nh, gh = demand(job)
        jobs[key] += 1
        node_h[key] += nh
        gpu_h[key] += gh
    total_n, total_g = sum(node_h.values()), sum(gpu_h.values())
    source, target = plan["source"], plan["target"]
    labels = {
        MOVE: f"move to {target}",
        STAY: f"stay on {source}",
        ALREADY: f"already on {target}",
    }
    shares = tuple(
        Share(
            key,
            labels[key],
            jobs[key],
            round(node_h[key], 2),
            round(gpu_h[key], 2),
            fmt.share(node_h[key], total_n),
            fmt.share(gpu_h[key], total_g),
        )
        for key in (MOVE, STAY, ALREADY)
    )
    by_key = {s.key: s for s in shares}
    move, stay = by_key[MOVE], by_key[STAY]
    window = plan["thresholds"].get("demand_window_hours", 0)
    per = f"of the node-hours per {window} h window"
    if move.jobs and stay.jobs:
        kind = "hybrid"
        headline = (
            f"Move {fmt.plural(move.jobs, 'job')} ({move.node_share} {per}) to {target} "
            f"and keep {fmt.plural(stay.jobs, 'job')} ({stay.node_share}) on {source}"
        )
    elif move.jobs:
        kind = "move"
        headline = (
            f"Every job in scope moves to {target} ({fmt.plural(move.jobs, 'job')}, {move.node_share} {per})"
        )
    elif not plan["jobs"]:
        kind, headline = "stay", "No jobs were found in the scanned files, so nothing moves"
    else:
        kind = "stay"
        headline = f"Nothing in scope should move to {target}"
    if by_key[ALREADY].jobs:
        already = by_key[ALREADY]
        headline += f"; {fmt.plural(already.jobs, 'job')} ({already.node_share}) already run on {target}"
    summary = plan["summary"]["demand"]
    if summary["assumed_node_hours"] and total_n:
        headline += (
            f"; {fmt.share(summary['assumed_node_hours'], summary['node_hours'])} of these node-hours "
            "rest on assumptions"
        )
        moved = [j for j in plan["jobs"] if where[j["id"]] == MOVE and "demand" in j]
        guessed = sum(j["demand"]["node_hours"] for j in moved if j["demand"].get("assumed"))
        if move.jobs and move.node_hours:
            headline += f", {fmt.share(guessed, move.node_hours)} of those that move"
        headline += " (see Demand and Assumed below)"
    return Verdict(
        kind,
        headline + ".",
        shares,
        round(total_n, 2),
        round(total_g, 2),
        window,
        demand_basis(plan),
    )


def demand_basis(plan: PlanDoc) -> str:
    """One sentence: the window every job's figures are per, and how services and batch jobs fill it."""
    summary = plan["summary"]["demand"]
    window = summary["window_hours"]
    jobs = [j["demand"] for j in plan["jobs"] if "demand" in j and j["demand"]["partition"] != LOGIN_NODE]
    always = sum(1 for d in jobs if d["runs_basis"].startswith("always on"))
    batch = len(jobs) - always
    parts = [f"the figures of every job are per {window} h window"]
    if always:
        parts.append(
            f"{fmt.plural(always, 'service')} always on, all {window} h "
            f"({_node_hours(summary['always_on_node_hours'])})"
        )
    if batch:
        counted = batch - summary["runs_assumed"]
        text = (
            f"{fmt.plural(batch, 'batch job')} their runs in it ({_node_hours(summary['batch_node_hours'])})"
        )
        if summary["runs_assumed"]:
            text += (
                f": {summary['runs_assumed']} once, an assumption, as no schedule or accounting says "
                f"how often {'it runs' if summary['runs_assumed'] == 1 else 'they run'} "
                "(--accounting gives the runs)"
            )
            if counted:
                text += f", {counted} as {'its schedule or accounting says' if counted == 1 else 'their schedules or accounting say'}"  # noqa: E501
        parts.append(text)
    text = parts[0] + (": " + "; ".join(parts[1:]) if parts[1:] else "")
    return text[0].upper() + text[1:] + "."


_MOVING_PHASES = frozenset((PhaseKind.PILOT, PhaseKind.WAVE))


def overview(plan: PlanDoc, phases: tuple[PhaseView, ...]) -> Overview:
    moving = [p for p in phases if p.kind in _MOVING_PHASES]
    waves = sum(1 for p in phases if p.kind is PhaseKind.WAVE)
    parts: list[str] = []
    first_wave = next((p for p in phases if p.kind is PhaseKind.WAVE), None)
    for phase in phases:
        if phase.kind is PhaseKind.FOUNDATIONS:
            parts.append(f"Phase 0 ({fmt.plural(len(phase.steps), 'prerequisite step')})")
        elif phase.kind is PhaseKind.PILOT:
            parts.append("a pilot")
        elif phase is first_wave:  # the waves are named once, as a count
            parts.append(fmt.plural(waves, "wave"))
        elif phase.kind is PhaseKind.END_STATE:
            parts.append(f"then the end state ({phase.name})")
    if not phases:
        return Overview(0, 0, "No phases: there is nothing to move.", "No phase moves any job.")
    sentence = f"{fmt.plural(len(phases), 'phase')}: " + ", ".join(parts) + "."
    if moving:
        first = moving[0]
        carved = ", ".join(f"{c.partition} {c.target_nodes}" for c in first.capacity if c.target_nodes)
        first_text = (
            f"The {first.title.lower()} ({first.id}) moves {fmt.plural(first.job_count, 'job')} in "
            f"{fmt.plural(len(first.units), 'unit')} and gives {plan['target']} "
            f"{fmt.plural(first.target_nodes, 'node')}" + (f" ({carved})." if carved else ".")
        )
    else:
        first_text = "No phase moves any job."
    return Overview(len(phases), len(moving), sentence, first_text)


def assumptions(plan: PlanDoc) -> tuple[str, ...]:
    """What the demand figures rest on that no option, partition or inventory told, job by job."""
    counts: Counter[str] = Counter()
    hours: dict[str, float] = defaultdict(float)
    for job in plan["jobs"]:
        need = job.get("demand")
        if need is None:
            continue
        for what in need.get("assumed", ()):
            counts[what] += 1
            hours[what] += need["node_hours"]
    out = []
    if counts["time_limit"]:
        out.append(
            f"{fmt.plural(counts['time_limit'], 'job')} {'has' if counts['time_limit'] == 1 else 'have'} "
            "no time limit anywhere (no --time, and no DefaultTime or MaxTime for the partition): each run "
            f"is counted as {fmt.plural(plan['thresholds']['default_job_hours'], 'hour')} "
            f"(thresholds.default_job_hours), {_node_hours(hours['time_limit'])} in all"
        )
    if counts["node_share"]:
        out.append(
            f"{fmt.plural(counts['node_share'], 'job')} {'runs' if counts['node_share'] == 1 else 'run'} "
            "in a partition whose node size the site configuration does not give: each node is counted "
            f"whole, {_node_hours(hours['node_share'])} in all"
        )
    return tuple(out)


def _node_hours(value: float) -> str:
    text = fmt.hours(value)
    return f"{text} node-hour" if text == "1" else f"{text} node-hours"


def mix(plan: PlanDoc, rel: fmt.Relative) -> tuple[MixRow, ...]:
    """The decision table rows that the scanned jobs fall in, with their demand."""
    total_n = sum(demand(j)[0] for j in plan["jobs"])
    where = dispositions(plan)  # the same outcome as every other count: held jobs stay
    groups: dict[tuple[str, str, str], list[Job]] = defaultdict(list)
    for job in plan["jobs"]:
        groups[(job["pattern"], job["rule"]["id"], where[job["id"]])].append(job)
    order = {p: i for i, p in enumerate(PATTERN_LABELS)}
    rows: list[MixRow] = []
    for (pattern, rule_id, outcome), members in groups.items():
        first = members[0]
        node_h = round(sum(demand(j)[0] for j in members), 2)
        gpu_h = round(sum(demand(j)[1] for j in members), 2)
        reasons = Counter(rel(j["reason"]) for j in members)
        thresholds = ", ".join(f"{k} = {v}" for k, v in sorted(first["thresholds"].items()))
        rows.append(
            MixRow(
                pattern=pattern,
                pattern_label=PATTERN_LABELS.get(pattern, pattern),
                outcome=outcome,
                platform=plan["source"] if outcome == STAY else plan["target"],
                rule_id=rule_id,
                rule_source=first["rule"]["source"],
                rule_says=first["rule"]["says"],
                thresholds=thresholds,
                reasons=tuple(r for r, _ in sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0]))[:2]),
                jobs=len(members),
                node_hours=node_h,
                gpu_hours=gpu_h,
                node_share=fmt.share(node_h, total_n),
            )
        )
    return tuple(sorted(rows, key=lambda r: (order.get(r.pattern, 99), r.pattern, -r.node_hours, r.rule_id)))


def phases(plan: PlanDoc, names: Mapping[str, str], rel: fmt.Relative) -> tuple[PhaseView, ...]:
    job_info = {j["id"]: j for j in plan["jobs"]}
    out: list[PhaseView] = []
    for phase in plan["phases"]:
        kind = PhaseKind(phase["kind"])
        capacity = tuple(CapacityRow(**c) for c in phase["capacity"])
        stays: dict[str, list[str]] = defaultdict(list)
        for stay in phase["stays"]:
            stays[rel(stay["reason"])].append(rel(stay["job"]))
        out.append(
            PhaseView(
                id=phase["id"],
                name=phase["name"],
                title=_title(phase),
                kind=kind,
                units=tuple(phase["units"]),
                jobs=tuple(
                    PhaseJob(rel(j), names.get(j, ""), job_info[j]["unit"] or "", job_info[j]["pattern"])
                    for j in phase["jobs"][:PHASE_JOBS_SHOWN]
                ),
                job_count=len(phase["jobs"]),
                steps=tuple(
                    Step(s["kind"], s["name"], rel(s["detail"]), _evidence(map(rel, s["evidence"])))
                    for s in phase["steps"]
                ),
                capacity=capacity,
                gates=tuple(map(rel, phase["gates"])),
                rollback=tuple(map(rel, phase["rollback"])),
                exit_criteria=tuple(map(rel, phase["exit_criteria"])),
                why=tuple(phase.get("why", ())),
                stays=tuple(
                    StayGroup(reason, tuple(jobs[:PHASE_JOBS_SHOWN]))
                    for reason, jobs in sorted(stays.items(), key=lambda kv: (-len(kv[1]), kv[0]))
                ),
                stay_count=len(phase["stays"]),
                source_nodes=sum(c.source_nodes for c in capacity),
                target_nodes=sum(c.target_nodes for c in capacity),
                detailed=len(out) < PHASES_DETAILED or kind is PhaseKind.END_STATE,
            )
        )
    return tuple(out)


def _title(phase: Phase) -> str:
    """The phase's name as a heading: Foundations, Pilot, Wave 3, Hybrid steady state."""
    return phase["name"].capitalize()


def _evidence(items: Iterable[str], shown: int = 4) -> str:
    names = [i.split(":", 1)[1] if i.startswith(("fs:", "monitor:", "job:")) else i for i in items]
    text = ", ".join(names[:shown])
    return text + (f" and {len(names) - shown} more" if len(names) > shown else "")


def top_reason(factors: Iterable[RiskFactor]) -> str:
    """The reason of the risk factor that adds the most points (the first of equals)."""
    best, best_points = "", -1
    for factor in factors:
        if factor["points"] > best_points:
            best, best_points = factor["reason"], factor["points"]
    return best


def storage_names(filesystems: Iterable[str]) -> str:
    """The unit's file systems, and its placeholder claims as one group of unresolved references."""
    names = [fs.split(":", 1)[-1] for fs in filesystems]
    real = [n for n in names if not is_placeholder(n)]
    refs = [n.removeprefix("pvc:") for n in names if is_placeholder(n)]
    return ", ".join(real + ([f"unresolved references: {', '.join(refs)}"] if refs else []))


def units_table(plan: PlanDoc) -> Table:
    phase_of = {j["id"]: phase for j in plan["jobs"] if (phase := j["phase"])}
    rows = []
    for unit in plan["units"][:UNITS_SHOWN]:
        moving_phases = sorted({phase_of[j] for j in unit["moving"] if j in phase_of})
        rows.append(
            (
                unit["id"],
                unit["action"],
                str(unit["risk"]["score"]),
                fmt.num(len(unit["jobs"])),
                fmt.num(len(unit["moving"])),
                fmt.num(len(unit["staying"])),
                fmt.num(len(unit["already_there"])),
                ", ".join(moving_phases),
                storage_names(unit["filesystems"]),
                top_reason(unit["risk"]["factors"]) if unit["moving"] else "",
            )
        )
    total = len(plan["units"])
    note = (
        f"The first {fmt.num(UNITS_SHOWN)} of {fmt.num(total)} units; plan.json lists all."
        if total > UNITS_SHOWN
        else ""
    )
    columns = (
        Column("Unit", CODE),
        Column("Action"),
        Column("Risk", NUMBER),
        Column("Jobs", NUMBER),
        Column("Moving", NUMBER),
        Column("Staying", NUMBER),
        Column("Already there", NUMBER),
        Column("Phase"),
        Column("File systems"),
        Column("Largest risk"),
    )
    return Table("units", "Migration units", columns, tuple(rows), note)


def _devices(info: JobFacts | None) -> str:
    """GPUs, and accelerators that are not GPUs by name ("192 neuron"); "on ray-g5" for a job on a cluster."""
    if info is None:
        return fmt.num(0)
    parts = [fmt.num(info.gpus)] if info.gpus or not info.accelerators else []
    parts += [f"{fmt.num(n)} {name}" for name, n in info.accelerators]
    return ", ".join(parts) + (f" on {info.on}" if info.on else "")


def jobs_table(plan: PlanDoc, scanned: Mapping[str, JobFacts], rel: fmt.Relative) -> Table:
    rows = []
    for job in plan["jobs"][:JOBS_SHOWN]:
        info = scanned.get(job["id"])
        need = job.get("demand")
        nh, gh = demand(job)
        rows.append(
            (
                rel(job["id"]),
                info.kind if info else "",
                job["pattern"],
                ACTION_LABELS.get(job["action"], job["action"]),
                job["unit"] or "",
                job["phase"] or "",
                need["partition"] if need else "",
                fmt.num(info.nodes if info else (need["nodes"] if need else 0)),
                _devices(info),
                fmt.hours(nh),
                fmt.hours(gh),
            )
        )
    total = len(plan["jobs"])
    note = (
        f"The first {fmt.num(JOBS_SHOWN)} of {fmt.num(total)} jobs; plan.json lists all."
        if total > JOBS_SHOWN
        else ""
    )
    columns = (
        Column("Job", CODE),
        Column("Kind"),
        Column("Pattern"),
        Column("Action"),
        Column("Unit"),
        Column("Phase"),
        Column("Partition"),
        Column("Nodes", NUMBER),
        Column("GPUs", NUMBER),
        Column("Node-h", NUMBER),
        Column("GPU-h", NUMBER),
    )
    return Table("jobs", "Jobs", columns, tuple(rows), note)


# How each source reads in a cell: "8 · exclusive". Values the job's own options gave carry no word.
_SOURCE_WORDS = {
    "option": "",
    "partition": "partition",
    "inventory": "inventory",
    "site-default": "default",
    "exclusive": "exclusive",
    "inferred": "inferred",
    "assumed": "assumed",
}
_ALLOCATION_VALUES = (
    ("partition", "partition"),
    ("nodes", "nodes"),
    ("cpus_per_node", "CPUs"),
    ("mem_per_node_mb", "memory"),
    ("gpus_per_node", "GPUs"),
    ("time_limit_s", "time"),
)
# Slurm's own defaults need no explaining in the basis column: one node, no GPUs.
_PLAIN_DEFAULTS = {"nodes": 1, "gpus_per_node": 0}


def allocation_table(plan: PlanDoc, rel: fmt.Relative) -> Table:
    """What Slurm gives each job of the source scheduler, and where each value comes from."""
    rows = []
    shown = [job for job in plan["jobs"] if "allocation" in job]
    for job in shown[:JOBS_SHOWN]:
        got = job["allocation"]
        parts = f" in {got['components']} parts" if "components" in got else ""
        gpus = _cell(got["gpus_per_node"], "gpus_per_node")
        if got.get("gpu_type") and got["gpus_per_node"]["value"]:
            gpus = f"{gpus} {got.get('gpu_type')}"
        rows.append(
            (
                rel(job["id"]),
                _cell(got["partition"], "partition"),
                _cell(got["nodes"], "nodes") + parts,
                _cell(got["cpus_per_node"], "cpus_per_node"),
                _cell(got["mem_per_node_mb"], "mem_per_node_mb"),
                gpus,
                _cell(got["time_limit_s"], "time_limit_s"),
                _basis(got),
            )
        )
    notes = [
        "Per node, of the job's main component (the one with the most GPUs). A word after a value says "
        "where Slurm takes it from when the job's own options do not give it: the partition's entry in "
        "the site configuration, an inventory file, a site or Slurm default, --exclusive (the whole node), "
        "a hint in the script (inferred), or an assumption."
    ]
    if len(shown) > JOBS_SHOWN:
        notes.append(f"The first {fmt.num(JOBS_SHOWN)} of {fmt.num(len(shown))} jobs; plan.json lists all.")
    columns = (
        Column("Job", CODE),
        Column("Partition"),
        Column("Nodes", NUMBER),
        Column("CPUs/node", NUMBER),
        Column("Memory/node", NUMBER),
        Column("GPUs/node", NUMBER),
        Column("Time limit", NUMBER),
        Column("Where the rest comes from"),
    )
    return Table("allocation", "What each job gets", columns, tuple(rows), " ".join(notes))


def _cell(value: SourcedValue, key: str) -> str:
    got = value["value"]
    if got is None:
        text = "not limited" if key == "mem_per_node_mb" else "none"
    elif key == "mem_per_node_mb" and isinstance(got, int):
        text = f"{got / 1024:,.0f} GiB" if got >= 10240 else f"{got:,} MiB"
    elif key == "time_limit_s" and isinstance(got, int):
        text = format_slurm_time(got)
    elif isinstance(got, int):
        text = fmt.num(got)
    else:
        text = str(got)
    plain = key in _PLAIN_DEFAULTS and got == _PLAIN_DEFAULTS[key]
    word = "" if plain else _SOURCE_WORDS.get(value["source"], value["source"])
    return f"{text} · {word}" if word else text


def _basis(got: Allocation) -> str:
    details = got.get("details", {})
    values = {
        "partition": got["partition"],
        "nodes": got["nodes"],
        "cpus_per_node": got["cpus_per_node"],
        "mem_per_node_mb": got["mem_per_node_mb"],
        "gpus_per_node": got["gpus_per_node"],
        "time_limit_s": got["time_limit_s"],
    }
    said = []
    for key, label in _ALLOCATION_VALUES:
        plain = key in _PLAIN_DEFAULTS and values[key]["value"] == _PLAIN_DEFAULTS[key]
        if key in details and not plain:
            said.append(f"{label}: {details[key]}")
    return "; ".join(said)


def risks(
    plan: PlanDoc, errors: int, dropped: tuple[int, int], rel: fmt.Relative, limit: int = 6
) -> tuple[RiskItem, ...]:
    """What most threatens the plan, worst first; each item says where to look."""
    source, target = plan["source"], plan["target"]
    out: list[RiskItem] = []
    if plan["cycles"]:
        cycles = "; ".join(" -> ".join(map(rel, c)) for c in plan["cycles"][:2])
        out.append(
            RiskItem(
                f"{fmt.plural(len(plan['cycles']), 'dependency cycle')} block their units",
                f"No order can run them; fix the scripts first ({cycles}).",
            )
        )
    if errors:
        out.append(
            RiskItem(
                f"{fmt.plural(errors, 'error diagnostic')} in the scanned files",
                "Files the scheduler would reject; see the appendix before trusting their jobs' plan.",
            )
        )
    limit_risk = plan["thresholds"].get("pilot_max_risk", 0)
    risky = sorted(
        (u for u in plan["units"] if u["moving"] and u["risk"]["score"] > limit_risk),
        key=lambda u: (-u["risk"]["score"], u["id"]),
    )
    for unit in risky[:2]:
        out.append(
            RiskItem(
                f"Unit {unit['id']} ({unit['action']}) scores {unit['risk']['score']}/100",
                f"{fmt.plural(len(unit['moving']), 'job')} to move; largest factor: "
                f"{rel(top_reason(unit['risk']['factors']))}.",
            )
        )
    held = [(u["id"], h) for u in plan["units"] for h in u["held"]]
    if held:
        units = sorted({u for u, _ in held})
        out.append(
            RiskItem(
                f"{fmt.plural(len(held), 'movable job')} held on {source} by dependency chains",
                f"Chained to jobs that stay (units {', '.join(units[:5])}); bridge the chain to move them.",
            )
        )
    if dropped[0]:
        out.append(
            RiskItem(
                f"Translation drops {fmt.plural(dropped[0], 'item')} in {fmt.plural(dropped[1], 'job')}",
                "Each is listed with its reason in the per-job fidelity tables.",
            )
        )
    bridges = sum(len(u["bridges"]) for u in plan["units"])
    if bridges:
        out.append(
            RiskItem(
                f"{fmt.plural(bridges, 'data link')} will cross between {source} and {target}",
                "Writers and readers end up on different schedulers; the shared storage must stay "
                "mounted on both.",
            )
        )
    for warning in plan["warnings"]:
        out.append(RiskItem("Plan warning", rel(warning)))
    if plan["shared_filesystems"] and not bridges:
        shared = ", ".join(fs.split(":", 1)[-1] for fs in plan["shared_filesystems"])
        out.append(RiskItem("Shared file systems", f"{shared} must stay mounted on both schedulers."))
    return tuple(out[:limit])


__all__ = [
    "ACTION_LABELS",
    "PATTERN_LABELS",
    "PHASES_DETAILED",
    "PHASE_JOBS_SHOWN",
    "allocation_table",
    "assumptions",
    "dispositions",
    "jobs_table",
    "mix",
    "outcome_of",
    "overview",
    "phases",
    "risks",
    "top_reason",
    "units_table",
    "verdict",
]
