"""Jobs as their wrappers submit them: ``sbatch -p gpu -N 4 train.sbatch`` is not train.sbatch alone.

sbatch takes a job's options from three places, the first winning: its command
line, the ``SBATCH_*`` variables of the environment it runs in, and the
script's ``#SBATCH`` lines. A scanned wrapper that submits a scanned script
says what the first two were, so the plan and the translators see the job with
them (``migrate.translators.slurm.reader.submitted_as``). A script submitted
by several calls with different options keeps its own: which one ran is not
known.
"""

from __future__ import annotations

from collections import defaultdict

from migrate import ir
from migrate.graph.deps import resolve_dependencies
from migrate.translators.slurm.reader import submitted_as
from migrate.vocab import JobKind

# How a submission sets a job's options: its command line and SBATCH_* variables, and where.
_Call = tuple[tuple[ir.KeyValue, ...], tuple[ir.KeyValue, ...], str, int | None]


def as_submitted(jobs: list[ir.Job]) -> list[ir.Job]:
    """``jobs``, each sbatch script submitted by one kind of wrapper call with that call's options."""
    if not any(sub.options or sub.environment for job in jobs for sub in job.submits):
        return jobs  # no wrapper passes options: nothing to change (and no resolution to pay for)
    by_id = {job.id: job for job in jobs}
    calls: dict[str, dict[tuple[object, ...], _Call]] = defaultdict(dict)
    for link in resolve_dependencies(jobs).submits:
        if link.child is None or link.child not in by_id:
            continue
        submitter = by_id.get(link.submitter)
        if submitter is None:
            continue
        for sub in submitter.submits:
            if sub.line == link.line:
                call = (sub.options, sub.environment, submitter.source.path, sub.line)
                calls[link.child][(sub.options, sub.environment)] = call
    out = []
    for job in jobs:
        found = calls.get(job.id, {})
        if job.kind == JobKind.SBATCH and len(found) == 1:
            ((options, environment, wrapper, line),) = found.values()
            job = submitted_as(job, options, environment, wrapper, line)
        out.append(job)
    return out


__all__ = ["as_submitted"]
