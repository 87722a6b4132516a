"""What the report shows of each scanned job beside its plan entry: name, kind, format and size."""

from __future__ import annotations

from dataclasses import dataclass

from migrate.scan.results import ScanResult


@dataclass(frozen=True, slots=True)
class JobFacts:
    name: str
    kind: str
    format: str
    nodes: int
    gpus: int


def job_facts(result: ScanResult) -> dict[str, JobFacts]:
    """Job id -> what the inventory shows about it; the first job read wins, as in the graph."""
    out: dict[str, JobFacts] = {}
    for job in result.jobs:
        if job.id not in out:
            out[job.id] = JobFacts(
                job.name or "", job.kind, job.source.format, job.total_nodes(), job.total_gpus()
            )
    return out


__all__ = ["JobFacts", "job_facts"]
