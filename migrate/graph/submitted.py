"""Jobs as their wrappers submit them: ``sbatch -p gpu -N 4 train.sbatch`` is not train.sbatch alone.

sbatch takes a job's options from three places, the first winning: its command
line, the ``SBATCH_*`` variables of the environment it runs in, and the
script's ``#SBATCH`` lines. A scanned wrapper that submits a scanned script
says what the first two were, so the plan and the translators see the job with
them (``migrate.translators.slurm.reader.submitted_as``). A script submitted
by several calls with different options keeps its own: which one ran is not
known.

A ``singleton`` script that a wrapper submits with several sbatch calls runs
once per call, one run after another: ``each_submission`` gives each call a job
of its own (``ir.submitted_job_id``), with that call's options, so that the
translation holds every run and chains them by their shared name. A call inside
a loop is one call: how often it runs is not known.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace

from migrate import ir
from migrate.graph.deps import resolve_dependencies
from migrate.translators.slurm.reader import submitted_as
from migrate.vocab import DependencyType, JobKind

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


def each_submission(jobs: list[ir.Job]) -> list[ir.Job]:
    """``jobs``, with one more job for each further sbatch call of a ``singleton`` script."""
    singletons = {
        job.id
        for job in jobs
        if job.kind == JobKind.SBATCH and any(d.type == DependencyType.SINGLETON for d in job.dependencies)
    }
    if not singletons or not any(job.submits for job in jobs):
        return jobs
    by_id = {job.id: job for job in jobs}
    calls: dict[str, list[_Call]] = defaultdict(list)
    for link in resolve_dependencies(jobs).submits:
        submitter = by_id.get(link.submitter)
        if link.child not in singletons or submitter is None:
            continue
        for sub in submitter.submits:
            if sub.line == link.line:
                calls[link.child].append((sub.options, sub.environment, submitter.source.path, sub.line))
    out = []
    for job in jobs:
        found = sorted(set(calls.get(job.id, ())), key=lambda call: (call[2], call[3] or 0))
        if len(found) < 2:
            out.append(job)
            continue
        # as_submitted gave the job the options all its calls share; calls that differ give their own
        differ = len({(options, environment) for options, environment, _, _ in found}) > 1
        for n, (options, environment, wrapper, line) in enumerate(found):
            run = job if n == 0 else replace(job, id=ir.submitted_job_id(job.id, wrapper, line))
            out.append(submitted_as(run, options, environment, wrapper, line) if differ else run)
    return out


__all__ = ["as_submitted", "each_submission"]
