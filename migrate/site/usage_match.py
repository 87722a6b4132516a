"""Match what ran to the scanned jobs and add it up into accounted demand per job.

How a record finds its job:

- sacct records match Slurm jobs only. The key is the job name: the record's
  ``JobName`` against the script's ``--job-name``, or the script's file name
  when it sets none (what sbatch itself names such a job). Names compare
  without regard to case. An account the record and the script both name must
  agree (a job of the same name under another account is somebody else's);
  a matching partition then breaks ties, but does not exclude: ``-p`` is often
  overridden on the command line.
- Kubernetes records match Kubernetes jobs of the kinds that leave Jobs behind
  (Job, CronJob, JobSet, RayJob, TrainJob). Tried in order: the Job's owner
  (the CronJob or JobSet that created it), the Job's own name, then its name
  without the suffix a controller adds (``-28634850``: a CronJob's schedule
  time in minutes; ``-x7k2p``: a generated name). Namespace and Kueue queue
  break ties.
- A RayJob's Job is only its submitter pod, without the GPUs of the Ray
  cluster: its run time comes from the record, its size from the RayJob.
- When several scanned jobs tie (a scrontab line and the script it runs share
  one name), the records go to one of them: a scheduled one first (periodic
  records come from the schedule), else the first by id. The others get no
  accounted hours and say where their records went: counted once, never twice.

Records that match nothing "ran but are not in the scanned tree"; scanned jobs
with no record "did not run in the window" (only for the scheduler the dumps
cover). A dump longer than the plan's demand window is scaled down to one
window; a shorter one is taken as it is.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from functools import cached_property

from migrate import ir, workloads
from migrate.site.config import DEFAULT_GPUS_PER_NODE, SiteConfig
from migrate.site.usage_records import SACCT, AccountingFile, RunRecord
from migrate.vocab import WRAPPER_KINDS, Format

# A CronJob child is named <cronjob>-<minutes since the epoch>; generateName adds 5 characters
# from Kubernetes' vowel-free alphabet, so that "eval-model" is never read as "eval" + suffix.
_CHILD_SUFFIX = re.compile(r"^(.+)-(?:[0-9]{6,}|[bcdfghjklmnpqrstvwxz2456789]{5})$")


@dataclass(frozen=True)
class JobUsage:
    """Everything one scanned job was accounted for, over one demand window."""

    job_id: str
    runs: int  # submissions: an array or a het job is one run
    allocations: int  # records: each array task and het part is one
    states: tuple[tuple[str, int], ...]
    node_hours: float
    gpu_hours: float
    nodes: int  # the largest allocation, in nodes (whole nodes for pods with GPUs)
    gpus_per_node: int
    partition: str | None  # the migrate.yaml partition that held most of its node-hours
    paths: tuple[str, ...]
    scaled: bool  # a dump longer than the window was scaled down to it


@dataclass(frozen=True)
class UnmatchedRuns:
    """Records under one name that no scanned job claims."""

    origin: str
    name: str
    account: str | None
    partition: str | None
    runs: int
    allocations: int
    node_hours: float
    gpu_hours: float
    reason: str
    first: str  # path:line (or path:item) of the first record


@dataclass(frozen=True)
class UsageMatch:
    jobs: tuple[JobUsage, ...]
    unmatched: tuple[UnmatchedRuns, ...]
    never_ran: tuple[str, ...]
    shared: tuple[tuple[str, str], ...]  # job -> the job credited with the records of their common name
    windows: tuple[tuple[str, str, str, float], ...]  # path, first start, last end, scale applied

    def of(self, job_id: str) -> JobUsage | None:
        return self._by_job.get(job_id)

    def credited_to(self, job_id: str) -> str | None:
        return self._shared.get(job_id)

    def did_not_run(self, job_id: str) -> bool:
        return job_id in self._never

    # Lookups by job id, built once: plans of tens of thousands of jobs ask for every one.
    @cached_property
    def _by_job(self) -> dict[str, JobUsage]:
        return {usage.job_id: usage for usage in self.jobs}

    @cached_property
    def _shared(self) -> dict[str, str]:
        return dict(self.shared)

    @cached_property
    def _never(self) -> frozenset[str]:
        return frozenset(self.never_ran)


def match_usage(jobs: Iterable[ir.Job], files: Sequence[AccountingFile], config: SiteConfig) -> UsageMatch:
    job_list = sorted(jobs, key=lambda j: j.id)
    index = _Index(job_list)
    scale = {f.path: _scale(f, config.thresholds.demand_window_hours) for f in files}
    claimed: dict[str, list[RunRecord]] = defaultdict(list)
    orphans: dict[tuple[str, str, str | None, str | None], list[RunRecord]] = defaultdict(list)
    orphan_reason: dict[tuple[str, str, str | None, str | None], str] = {}
    shared: dict[str, str] = {}
    for _, group in sorted(_groups(files).items(), key=lambda kv: _sortable(kv[0])):
        winner, losers, reason = index.choose(group[0])
        if winner is None:
            first = group[0]
            # CronJob children carry a new name each run: list them under their CronJob.
            short = (first.origin, first.owner or first.name, first.account, first.partition)
            orphans[short].extend(group)
            orphan_reason.setdefault(short, reason)
            continue
        claimed[winner.id].extend(_sized(r, winner) for r in group)
        for loser in losers:
            shared.setdefault(loser.id, winner.id)
    usages = tuple(_job_usage(job_id, records, scale, config) for job_id, records in sorted(claimed.items()))
    for job_id in list(shared):
        if job_id in claimed:  # credited under another key of the same name: it did run
            del shared[job_id]
    origins = {f.format for f in files}
    never = tuple(
        j.id for j in job_list if j.id not in claimed and j.id not in shared and index.accountable(j, origins)
    )
    unmatched = tuple(
        sorted(
            (_unmatched(key, records, orphan_reason[key], scale, config) for key, records in orphans.items()),
            key=lambda u: (-u.node_hours, *_sortable((u.origin, u.name, u.account, u.partition))),
        )
    )  # the largest first: that is what the plan is missing most
    windows = tuple(
        (f.path, w[0].isoformat(), w[1].isoformat(), scale[f.path])
        for f in files
        if (w := f.window) is not None
    )
    return UsageMatch(usages, unmatched, never, tuple(sorted(shared.items())), windows)


class _Index:
    """Scanned jobs by the names their records would carry."""

    def __init__(self, jobs: list[ir.Job]) -> None:
        self.slurm: dict[str, list[ir.Job]] = defaultdict(list)
        self.kubernetes: dict[str, list[ir.Job]] = defaultdict(list)
        for job in jobs:
            if job.source.format == Format.KUBERNETES and _in_job_history(job) and job.name:
                self.kubernetes[job.name.lower()].append(job)
            elif job.source.format != Format.KUBERNETES and job.kind not in WRAPPER_KINDS:
                self.slurm[slurm_name(job).lower()].append(job)

    def accountable(self, job: ir.Job, origins: set[str]) -> bool:
        """Whether a dump of these origins would show the job had it run."""
        if job.source.format == Format.KUBERNETES:
            return Format.KUBERNETES in origins and _in_job_history(job) and bool(job.name)
        return SACCT in origins and job.kind not in WRAPPER_KINDS

    def choose(self, record: RunRecord) -> tuple[ir.Job | None, list[ir.Job], str]:
        """The job credited with the record, the jobs it ties with, or why there is none."""
        if record.origin == SACCT:
            named = self.slurm.get(record.name.lower(), [])
            fitting = [j for j in named if _same(j.placement.account, record.account) is not False]
            if named and not fitting:
                accounts = ", ".join(sorted({str(j.placement.account) for j in named}))
                return None, [], f"a scanned job has this name but account {accounts}"
        else:
            fitting = []
            for name in _kubernetes_names(record):
                fitting = self.kubernetes.get(name.lower(), [])
                if fitting:
                    break
        if not fitting:
            return None, [], "no scanned job has this name"
        scored = sorted(fitting, key=lambda j: (-_score(j, record), j.schedule is None, j.id))
        best = scored[0]
        ties = [j for j in scored[1:] if _score(j, record) == _score(best, record)]
        return best, ties, ""


def _in_job_history(job: ir.Job) -> bool:
    """Its runs show up in ``kubectl get jobs`` (PyTorchJob, MPIJob and Volcano jobs start pods
    directly, and services never finish): its declaration says."""
    declared = workloads.declared(job.kind)
    return declared is not None and declared.job_history


def _sized(record: RunRecord, job: ir.Job) -> RunRecord:
    declared = workloads.declared(job.kind)
    if declared is None or not declared.sized_by_job:
        return record
    return replace(record, pods=max(1, job.total_nodes()), gpus=job.total_gpus())


def slurm_name(job: ir.Job) -> str:
    """The name sacct shows: --job-name, else the script's file name (sbatch's own default)."""
    return job.name or job.source.path.rsplit("/", 1)[-1]


def _kubernetes_names(record: RunRecord) -> list[str]:
    names = [record.owner] if record.owner else []
    names.append(record.name)
    child = _CHILD_SUFFIX.match(record.name)
    if child:
        names.append(child.group(1))
    return names


def _same(a: str | None, b: str | None) -> bool | None:
    """Whether two names agree; None when either is unknown."""
    if not a or not b:
        return None
    return a.lower() == b.lower()


def _score(job: ir.Job, record: RunRecord) -> int:
    if record.origin == SACCT:
        account = _same(job.placement.account, record.account)
        partition = any(_same(p, record.partition) for p in job.placement.partitions)
    else:
        account = _same(job.placement.namespace, record.account)
        partition = bool(_same(job.placement.queue, record.partition))
    return 2 * bool(account) + int(partition)


def _groups(files: Sequence[AccountingFile]) -> dict[tuple[object, ...], list[RunRecord]]:
    """Records that would match the same way, so that matching runs once per name, not per line."""
    out: dict[tuple[object, ...], list[RunRecord]] = defaultdict(list)
    for f in files:
        for r in f.records:
            out[(r.origin, r.name, r.account, r.partition, r.owner, r.owner_kind)].append(r)
    return out


def _sortable(key: tuple[object, ...]) -> tuple[str, ...]:
    return tuple("" if part is None else str(part) for part in key)


def _scale(f: AccountingFile, window_hours: int) -> float:
    """Records spread over more than one demand window count for one window's share."""
    span = f.window
    if span is None or window_hours <= 0:
        return 1.0
    days = math.ceil((span[1] - span[0]).total_seconds() / 86400) or 1
    return 1.0 if days * 24 <= window_hours else round(window_hours / (days * 24), 6)


def _partition(record: RunRecord, config: SiteConfig) -> str | None:
    if record.origin == SACCT:
        return record.partition if record.partition and config.partition(record.partition) else None
    if record.partition:
        mirror = config.partition_for_queue(record.partition)
        if mirror:
            return mirror
    selector = set(record.node_selector)
    for name, part in config.partitions:
        if part.node_selector and set(part.node_selector) <= selector:
            return name
    return None


def node_count(record: RunRecord, config: SiteConfig) -> int:
    """Nodes the allocation held: Slurm says; for pods, GPUs over GPUs per node, as the scan estimates."""
    if record.origin == SACCT:
        return record.nodes
    if not record.gpus:
        return record.pods
    part = config.partition(_partition(record, config) or "")
    per_node = part.gpus_per_node if part is not None and part.gpus_per_node else DEFAULT_GPUS_PER_NODE
    per_node = max(per_node, record.gpus // max(1, record.pods))
    return max(1, math.ceil(record.gpus / per_node))


def _job_usage(
    job_id: str, records: list[RunRecord], scale: dict[str, float], config: SiteConfig
) -> JobUsage:
    node_h = gpu_h = 0.0
    by_partition: dict[str, float] = defaultdict(float)
    nodes = per_node = 0
    for r in records:
        count = node_count(r, config)
        hours = r.hours * scale[r.path]
        node_h += count * hours
        gpu_h += r.gpus * hours
        nodes = max(nodes, count)
        per_node = max(per_node, math.ceil(r.gpus / count) if count else 0)
        part = _partition(r, config)
        if part:
            by_partition[part] += count * hours
    busiest = max(sorted(by_partition), key=lambda p: by_partition[p], default=None)
    states = Counter(r.state for r in records)
    return JobUsage(
        job_id=job_id,
        runs=len({(r.path, r.run) for r in records}),
        allocations=len(records),
        states=tuple(sorted(states.items(), key=lambda kv: (-kv[1], kv[0]))),
        node_hours=round(node_h, 2),
        gpu_hours=round(gpu_h, 2),
        nodes=nodes,
        gpus_per_node=per_node,
        partition=busiest,
        paths=tuple(sorted({r.path for r in records})),
        scaled=any(scale[r.path] != 1.0 for r in records),
    )


def _unmatched(
    key: tuple[str, str, str | None, str | None],
    records: list[RunRecord],
    reason: str,
    scale: dict[str, float],
    config: SiteConfig,
) -> UnmatchedRuns:
    origin, name, account, partition = key
    node_h = sum(node_count(r, config) * r.hours * scale[r.path] for r in records)
    gpu_h = sum(r.gpus * r.hours * scale[r.path] for r in records)
    first = min(records, key=lambda r: (r.path, r.line))
    where = f"{first.path}:{first.line}" if origin == SACCT else f"{first.path}: item {first.line}"
    return UnmatchedRuns(
        origin=origin,
        name=name,
        account=account,
        partition=partition,
        runs=len({(r.path, r.run) for r in records}),
        allocations=len(records),
        node_hours=round(node_h, 2),
        gpu_hours=round(gpu_h, 2),
        reason=reason,
        first=where,
    )


__all__ = [
    "JobUsage",
    "UnmatchedRuns",
    "UsageMatch",
    "match_usage",
    "node_count",
    "slurm_name",
]
