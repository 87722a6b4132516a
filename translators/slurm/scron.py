"""A CronJob's schedule as a scrontab entry: ``#SCRON`` options above a cron line.

scrontab runs the cron line as a batch job with the ``#SCRON`` options, so the
entry carries the same options as the generated batch script and runs that
script with bash (its ``#SBATCH`` lines are then plain comments). The script
must be copied to where the entry points: ``$HOME/migrate-jobs/<name>/`` by
default, as the entry's comment says.
"""

from __future__ import annotations

import re

from migrate import ir
from migrate.vocab import FidelityStatus

from .context import Context
from .header import Header
from .quoting import comment_text

# Options that describe the batch script itself, not the recurring job.
_NOT_FOR_SCRON = frozenset({"output", "array"})
_MACROS = frozenset({"@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"})
_FIELD = re.compile(r"[0-9A-Za-z*/,\-]+\Z")


def valid_schedule(cron: str) -> bool:
    """Five cron fields or one of the @ macros scrontab knows."""
    text = cron.strip()
    if text in _MACROS:
        return True
    fields = text.split()
    return len(fields) == 5 and all(_FIELD.match(f) for f in fields)


def entry(ctx: Context, schedule: ir.Schedule, header: Header, script_name: str) -> str:
    job = ctx.job
    scron = Header([line for line in header.lines if line.long not in _NOT_FOR_SCRON])
    scron.add("output", "%x-%j.out")
    where = f"$HOME/migrate-jobs/{ctx.name}"
    lines = [
        f"# Translated by migrate from {comment_text(job.source.path)}:{job.source.line} "
        f"({job.kind} {job.name or ctx.name})",
        f"# Install with: scrontab -e (paste), after copying {ctx.name}/ to {where}/",
    ]
    lines += scron.render("#SCRON")
    cron = schedule.cron.strip()
    if cron.startswith(("TZ=", "CRON_TZ=")):
        cron = cron.split(None, 1)[1] if " " in cron else cron
    if not valid_schedule(cron):
        ctx.fidelity.dropped(
            f"schedule {schedule.cron}", "not a cron expression scrontab accepts; the entry is commented out"
        )
        lines.append(f"# {comment_text(cron)} bash {where}/{script_name}")
    else:
        lines.append(f"{cron} bash {where}/{script_name}")
        ctx.fidelity.mapped(
            f"schedule {schedule.cron}", "a scrontab entry with the same cron line", schedule.line
        )
    if schedule.timezone:
        ctx.fidelity.approximated(
            f"timeZone {schedule.timezone}",
            "scrontab uses slurmctld's local time zone; adjust the hours if it differs",
        )
    if schedule.concurrency:
        # only Forbid is what scrontab does; Allow and Replace differ from it
        status = FidelityStatus.MAPPED if schedule.concurrency == "Forbid" else FidelityStatus.APPROXIMATED
        why = "scrontab never starts a run while the previous one is still running"
        ctx.fidelity.record(status, f"concurrencyPolicy {schedule.concurrency}", why)
    return "\n".join(lines) + "\n"


__all__ = ["entry", "valid_schedule"]
