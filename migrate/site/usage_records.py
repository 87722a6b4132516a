"""The shape of what ran: one record per allocation, read from an accounting dump or a job history.

Both readers (``usage_sacct``, ``usage_kubectl``) produce an ``AccountingFile``;
matching (``usage_match``) only ever sees these records, never the raw text.
A line or item that cannot be read is kept as a ``Skipped`` with its reason, so
the plan can say how much of a dump it did not use.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

# What an accounting file is: SACCT (sacct --parsable2 text) or Format.KUBERNETES
# (kubectl get jobs -A -o json).
SACCT = "sacct"


class AccountingError(ValueError):
    """The whole file cannot be used as accounting; the message says why and what to give instead."""


@dataclass(frozen=True, slots=True)
class RunRecord:
    """One allocation that held nodes: a Slurm job, array task or het component, or a Kubernetes Job."""

    origin: str  # SACCT or Format.KUBERNETES
    path: str  # the file it was read from
    line: int  # line in a sacct dump; item number (from 1) in a kubectl export
    job_id: str  # as the scheduler printed it: 4242_7, 4243+1, or namespace/name
    run: str  # the submission it belongs to: an array's tasks and a het job's parts share it
    name: str  # sacct JobName or the Job's metadata.name
    account: str | None  # Slurm account, or the Job's namespace
    partition: str | None  # Slurm partition, or the Job's Kueue queue
    owner: str | None  # Kubernetes: the CronJob, JobSet or RayJob that created the Job
    owner_kind: str | None
    state: str  # COMPLETED, FAILED, TIMEOUT, CANCELLED ... or Complete / Failed
    start: datetime | None  # naive UTC for Kubernetes, the dump's local time for sacct
    end: datetime | None
    elapsed_s: int
    nodes: int  # sacct: allocated nodes; Kubernetes: 0 (pods are not nodes)
    pods: int  # Kubernetes: pods running at once (parallelism); sacct: 0
    gpus: int  # GPUs held by the whole allocation
    node_selector: tuple[tuple[str, str], ...] = ()  # Kubernetes: the pod template's node selector

    @property
    def hours(self) -> float:
        return self.elapsed_s / 3600


@dataclass(frozen=True)
class Skipped:
    path: str
    line: int
    reason: str


@dataclass(frozen=True)
class AccountingFile:
    path: str
    format: str  # SACCT or Format.KUBERNETES
    records: tuple[RunRecord, ...]
    bad: tuple[Skipped, ...] = ()  # lines or items that could not be read
    steps: int = 0  # sacct step lines (123.batch, 123.0, 123.extern): their job's line holds the nodes
    not_started: int = 0  # never held nodes: pending, cancelled before start, suspended
    unfinished: int = 0  # Kubernetes Jobs still running when exported: no end time to count to

    @property
    def window(self) -> tuple[datetime, datetime] | None:
        """From the first start to the last end among the records."""
        starts = [r.start for r in self.records if r.start is not None]
        ends = [r.end for r in self.records if r.end is not None]
        if not starts or not ends:
            return None
        return min(starts), max(ends)


def parse_timestamp(text: str | None) -> datetime | None:
    """ISO 8601 (``2024-06-03T02:00:07`` or with ``Z``); None for ``Unknown``, ``None`` and junk."""
    if not text or not text[:1].isdecimal():
        return None
    try:
        moment = datetime.fromisoformat(text.strip())
        if moment.tzinfo is not None:  # Kubernetes writes UTC; keep every timestamp naive
            moment = moment.astimezone(UTC).replace(tzinfo=None)
    except (ValueError, OverflowError):  # year 1 with an offset overflows when moved to UTC
        return None
    return moment


__all__ = [
    "SACCT",
    "AccountingError",
    "AccountingFile",
    "RunRecord",
    "Skipped",
    "parse_timestamp",
]
