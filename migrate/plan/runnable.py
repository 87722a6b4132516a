"""Whether a job can run as it is on the target: the pilot takes only units whose moving jobs can.

A job cannot, and the line says why, when its reader found an error in it (the
scheduler would refuse the file), when it is a template with placeholders no value
was given for, when it asks more than a node of its partition has (the allocation's
``exceeds``), or when the translation writes nothing for it (a service the Slurm
writer leaves on Kubernetes, a search whose trial was not read, an interactive allocation).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence

from migrate import ir
from migrate.diagnostics import ERROR, Diagnostic
from migrate.plan.facts import JobFacts
from migrate.render import plural
from migrate.translators.slurm.writer import stays_serving
from migrate.vocab import INTERACTIVE_KINDS, Direction


def error_diagnostics(
    jobs: Sequence[ir.Job], diagnostics: Iterable[Diagnostic]
) -> dict[str, list[Diagnostic]]:
    """Each job's error diagnostics: those naming it, else those of its file at a line of its document.

    A diagnostic of a file of one job is that job's; in a file of several, it belongs to the job whose
    document holds its line (the last one starting at or before it); with no line, to every job of the file.
    """
    by_path: dict[str, list[ir.Job]] = defaultdict(list)
    ids = {job.id for job in jobs}
    for job in jobs:
        by_path[job.source.path].append(job)
    out: dict[str, list[Diagnostic]] = defaultdict(list)
    for diag in diagnostics:
        if diag.severity != ERROR:
            continue
        if diag.job in ids:
            out[diag.job].append(diag)
            continue
        in_file = sorted(by_path.get(diag.path or "", ()), key=lambda j: j.source.line)
        if diag.line is None or len(in_file) == 1:
            owners = in_file
        else:
            line = diag.line
            before = [j for j in in_file if j.source.line <= line]
            owners = before[-1:] if before else in_file[:1]
        for job in owners:
            out[job.id].append(diag)
    return dict(out)


def why_not_runnable(
    job: ir.Job, facts: JobFacts, direction: Direction, errors: Sequence[Diagnostic] = ()
) -> str | None:
    """Why ``job`` cannot run on the target as it is, or None when nothing stops it."""
    if errors:
        first = errors[0]
        where = f"{first.path}:{first.line}" if first.line is not None else (first.path or job.source.path)
        more = f" and {len(errors) - 1} more" if len(errors) > 1 else ""
        return f"{plural(len(errors), 'error diagnostic')} ({first.code} at {where}{more})"
    if job.unresolved:
        names = sorted({u.name for u in job.unresolved})
        return (
            f"a template with {plural(len(names), 'placeholder')} left without a value ({', '.join(names)})"
        )
    if facts.exceeds:
        return f"asks more than a node of partition {facts.partition or '(none)'} has: {facts.exceeds[0]}"
    if direction == Direction.TO_SLURM and stays_serving(job):
        return f"a {job.kind} with a service: the Slurm translation writes no script for it"
    if direction == Direction.TO_SLURM and job.sweep is not None and job.sweep.trial_kind is None:
        return f"a {job.kind} whose trial workload was not read: the Slurm translation writes none"
    if job.kind in INTERACTIVE_KINDS:
        return "an interactive allocation: the translation writes no batch job for it"
    return None


def blocked_units(
    moving: Mapping[str, Sequence[str]],
    jobs: Mapping[str, ir.Job],
    facts: Mapping[str, JobFacts],
    direction: Direction,
    errors: Mapping[str, Sequence[Diagnostic]],
) -> dict[str, str]:
    """unit id -> why it cannot be a pilot unit (its first moving job that cannot run, and why)."""
    out: dict[str, str] = {}
    for unit, job_ids in moving.items():
        for job_id in job_ids:
            job = jobs.get(job_id)
            if job is None or job_id not in facts:
                continue
            why = why_not_runnable(job, facts[job_id], direction, errors.get(job_id, ()))
            if why is not None:
                out[unit] = f"{unit} passed over for the pilot: {job_id} cannot run as it is, {why}"
                break
    return out


__all__ = ["blocked_units", "error_diagnostics", "why_not_runnable"]
