"""Demand from what actually ran: accounting dumps read, matched to scanned jobs, and summarised.

The plan estimates demand from the scripts (nodes x time limit x array size).
Given a Slurm accounting dump (``sacct --parsable2``) or a Kubernetes job
history (``kubectl get jobs -A -o json``), the jobs that ran are weighted by
what they used instead. Reading is in ``usage_sacct`` and ``usage_kubectl``,
matching rules in ``usage_match``; this module picks the reader by content and
turns a match into plan warnings and the ``usage`` section of plan.json.

Example::

    files = [parse_accounting(Path(p).read_text(), p) for p in paths]
    plan = build_plan(jobs, "to_kubernetes", config, usage=files)

Pure: no printing, no exits; an unusable file raises ``AccountingError``, an
unusable line is counted and skipped with its reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from migrate.render import plural
from migrate.site.usage_kubectl import looks_like_kubectl, parse_kubectl_jobs
from migrate.site.usage_match import JobUsage, UnmatchedRuns, UsageMatch, match_usage
from migrate.site.usage_records import SACCT, AccountingError, AccountingFile, RunRecord, Skipped
from migrate.site.usage_sacct import looks_like_sacct, parse_sacct

SHOWN = 5  # names listed in one warning; plan.json lists them all
UNREADABLE_LISTED = 100  # unreadable lines listed in plan.json; the count is always whole


@dataclass(frozen=True)
class UsageReport:
    """The dumps and what they matched; carried by the plan for plan.json and the report."""

    files: tuple[AccountingFile, ...]
    match: UsageMatch


def parse_accounting(text: str, path: str) -> AccountingFile:
    """A sacct dump or a kubectl Job list, told apart by content (never by file name)."""
    if looks_like_kubectl(text):
        return parse_kubectl_jobs(text, path)
    if looks_like_sacct(text):
        return parse_sacct(text, path)
    raise AccountingError(
        f"{path}: neither sacct --parsable2 output (a JobID|JobName|... header) nor "
        "kubectl get jobs -o json output"
    )


def usage_warnings(report: UsageReport) -> list[str]:
    """What the plan must say about the dumps: lines it could not read, runs it could not place."""
    out: list[str] = []
    for f in report.files:
        if f.bad:
            examples = "; ".join(_where(s) for s in f.bad[:2])
            out.append(f"accounting {f.path}: {plural(len(f.bad), 'unreadable record')} skipped ({examples})")
    for path, _, _, scale in report.match.windows:
        if scale != 1.0:
            out.append(
                f"accounting {path}: the records span more than the demand window; "
                f"their hours are scaled by {scale:g} to one window"
            )
    unmatched = report.match.unmatched
    if unmatched:
        node_h = round(sum(u.node_hours for u in unmatched), 2)
        gpu_h = round(sum(u.gpu_hours for u in unmatched), 2)
        runs = sum(u.runs for u in unmatched)
        shown = ", ".join(_unmatched_text(u) for u in unmatched[:SHOWN])
        more = f" and {len(unmatched) - SHOWN} more" if len(unmatched) > SHOWN else ""
        out.append(
            f"accounting: {plural(runs, 'run')} under {plural(len(unmatched), 'name')} ran but "
            f"{'is' if len(unmatched) == 1 else 'are'} not in the scanned "
            f"tree ({node_h:g} node-h, {gpu_h:g} GPU-h, not in the plan): {shown}{more}"
        )
    never = report.match.never_ran
    if never:
        shown = ", ".join(never[:SHOWN]) + (f" and {len(never) - SHOWN} more" if len(never) > SHOWN else "")
        out.append(
            f"accounting: {plural(len(never), 'scanned job')} did not run in the accounting window "
            f"(their demand stays the script estimate): {shown}"
        )
    for job, credited in report.match.shared:
        out.append(
            f"accounting: {job} has the same name as {credited}, which was credited with the records "
            "(counted once)"
        )
    return out


def usage_section(report: UsageReport) -> dict[str, Any]:
    """The ``usage`` part of plan.json: every file, every unplaced name, every job that did not run."""
    match = report.match
    unreadable = [s for f in report.files for s in f.bad]
    windows = {path: (start, end, scale) for path, start, end, scale in match.windows}
    return {
        "files": [_file_dict(f, windows.get(f.path)) for f in report.files],
        "matched_jobs": len(match.jobs),
        "unmatched": [
            {
                "origin": u.origin,
                "name": u.name,
                "account": u.account,
                "partition": u.partition,
                "runs": u.runs,
                "allocations": u.allocations,
                "node_hours": u.node_hours,
                "gpu_hours": u.gpu_hours,
                "reason": u.reason,
                "first": u.first,
            }
            for u in match.unmatched
        ],
        "never_ran": list(match.never_ran),
        "shared_names": [{"job": job, "credited_to": other} for job, other in match.shared],
        "unreadable": [
            {"path": s.path, "line": s.line, "reason": s.reason} for s in unreadable[:UNREADABLE_LISTED]
        ],
        "unreadable_total": len(unreadable),
    }


def job_accounting(report: UsageReport, job_id: str) -> dict[str, Any]:
    """One job's line in plan.json: matched (with its runs), did not run, credited elsewhere, or not covered.

    Not covered: no dump is of its scheduler, or it leaves no record (a wrapper, a service).
    """
    usage = report.match.of(job_id)
    if usage is not None:
        return {
            "status": "matched",
            "runs": usage.runs,
            "allocations": usage.allocations,
            "states": dict(usage.states),
            "files": list(usage.paths),
            "scaled": usage.scaled,
        }
    credited = report.match.credited_to(job_id)
    if credited is not None:
        return {"status": "credited-to-other", "credited_to": credited}
    return {"status": "did-not-run" if report.match.did_not_run(job_id) else "not-covered"}


def _file_dict(f: AccountingFile, window: tuple[str, str, float] | None) -> dict[str, Any]:
    return {
        "path": f.path,
        "format": f.format,
        "records": len(f.records),
        "runs": len({r.run for r in f.records}),
        "steps_left_out": f.steps,
        "not_started": f.not_started,
        "unfinished": f.unfinished,
        "unreadable": len(f.bad),
        "window": {"start": window[0], "end": window[1]} if window else None,
        "scale": window[2] if window else 1.0,
    }


def _where(skipped: Skipped) -> str:
    return skipped.reason if skipped.reason.startswith("item ") else f"line {skipped.line}: {skipped.reason}"


def _unmatched_text(u: UnmatchedRuns) -> str:
    where = ", ".join(x for x in (u.account, u.partition) if x)
    return f"{u.name} ({where + '; ' if where else ''}{plural(u.runs, 'run')}, {u.node_hours:g} node-h)"


__all__ = [
    "SACCT",
    "AccountingError",
    "AccountingFile",
    "JobUsage",
    "RunRecord",
    "Skipped",
    "UsageMatch",
    "UsageReport",
    "job_accounting",
    "match_usage",
    "parse_accounting",
    "usage_section",
    "usage_warnings",
]
