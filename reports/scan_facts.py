"""What the report shows of each scanned job beside its plan entry: name, kind, format and size.

The size is the plan's: the allocation plan.json gives each job (pods packed onto the
site's nodes, accelerators by name), so that the report's figures are the plan's.
A job the plan gives no allocation is sized by the same model without the site.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from migrate.scan.results import ScanResult
from migrate.site.job_size import job_size, runs_on


@dataclass(frozen=True, slots=True)
class JobFacts:
    name: str
    kind: str
    format: str
    nodes: int
    gpus: int
    accelerators: tuple[tuple[str, int], ...] = ()
    on: str | None = None  # the scanned object whose resources these are: totals leave the job out


def job_facts(
    result: ScanResult, plan_jobs: Mapping[str, Mapping[str, Any]] | None = None
) -> dict[str, JobFacts]:
    """Job id -> what the inventory shows about it; the first job read wins, as in the graph.

    ``plan_jobs``: plan.json's jobs by id, whose ``allocation`` gives the sizes.
    """
    out: dict[str, JobFacts] = {}
    for job in result.jobs:
        if job.id in out:
            continue
        got = (plan_jobs or {}).get(job.id, {}).get("allocation")
        if got and "gpus" in got:
            nodes, gpus = int(got["nodes"]["value"]), int(got["gpus"])
            accelerators = tuple(sorted((str(k), int(v)) for k, v in (got.get("accelerators") or {}).items()))
        else:
            size = job_size(job)
            nodes, gpus, accelerators = size.nodes, size.gpus, size.accelerators
        on = runs_on(job)
        out[job.id] = JobFacts(job.name or "", job.kind, job.source.format, nodes, gpus, accelerators, on)
    return out


__all__ = ["JobFacts", "job_facts"]
