"""CronJob: scrontab entries, and scripts that resubmit themselves with ``--begin``.

The schedule is the scrontab line's (Kubernetes reads the same five fields
and @-words). A self-resubmitting script gets a schedule derived from its
``--begin`` offset, and its ``sbatch $0`` becomes a no-op in the pod: the
schedule starts the next run instead.
"""

from __future__ import annotations

import re
from typing import Any

from migrate.translators.job_variables import POD

from . import batchjob, flavors, pod_template
from .job_policy import JobPolicy
from .storage import Volume
from .translation_context import Context, Workload
from .yamlemit import Manifest

_RELATIVE = re.compile(r"now\s*\+\s*([0-9]+)\s*([a-z]*)\Z", re.IGNORECASE)
_CLOCK = re.compile(r"([0-9]{1,2}):([0-9]{2})(?::[0-9]{2})?\Z")
_K8S_WORDS = {"@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"}


def schedule_from_begin(begin: str) -> tuple[str, bool]:
    """A cron schedule for "resubmit with --begin=<begin>"; False when it is only a guess."""
    text = begin.strip().lower()
    m = _RELATIVE.match(text)
    if m:
        n, unit = int(m.group(1)), m.group(2) or "s"
        if unit.startswith("m") and not unit.startswith("mo") and 0 < n < 60 and 60 % n == 0:
            return f"*/{n} * * * *", True
        if unit.startswith("h") and 0 < n < 24 and 24 % n == 0:
            return ("0 * * * *" if n == 1 else f"0 */{n} * * *"), True
        if unit.startswith("d") and n == 1:
            return "0 0 * * *", True
        if unit.startswith("w") and n == 1:
            return "0 0 * * 0", True
        return "0 0 * * *", False
    if text in ("midnight", "tomorrow"):
        return "0 0 * * *", True
    if text == "noon":
        return "0 12 * * *", True
    if text == "teatime":
        return "0 16 * * *", True
    m = _CLOCK.match(text)
    if m and int(m.group(1)) < 24 and int(m.group(2)) < 60:
        return f"{int(m.group(2))} {int(m.group(1))} * * *", True
    return "0 0 * * *", False


def build(
    ctx: Context, policy: JobPolicy, volumes: list[Volume], kueue: bool = False
) -> tuple[list[Manifest], Workload]:
    job = ctx.job
    notes: list[tuple[tuple[str | int, ...], str]] = []
    if job.schedule is not None:
        schedule = job.schedule.cron
        if schedule.startswith("@") and schedule not in _K8S_WORDS:
            notes.append((("spec", "schedule"), f"{schedule} is not a Kubernetes schedule word"))
        ctx.fidelity.mapped(
            f"scrontab {schedule}",
            "CronJob schedule (the cluster's time zone unless timeZone is set)",
            job.schedule.line,
        )
    else:
        begin = flavors.self_resubmit_begin(job) or ""
        schedule, exact = schedule_from_begin(begin)
        item = f"sbatch --begin={begin} $0"
        if exact:
            ctx.fidelity.approximated(
                item,
                f"a CronJob every {schedule!r}: runs start on the clock, not after the previous run ends",
                None,
            )
        else:
            ctx.fidelity.approximated(
                item,
                f"no fixed interval in --begin={begin}; daily schedule {schedule!r} written as a placeholder",
                None,
            )
        notes.append(
            (
                ("spec", "schedule"),
                f"from the resubmission with --begin={begin}" + ("" if exact else ": a placeholder"),
            )
        )
        policy.io_env.append({"name": POD.RESUBMIT_BY_SCHEDULE.name, "value": "1"})
    job_spec, comments = batchjob.job_spec(ctx, policy, volumes, suspend=kueue)
    template_meta: dict[str, Any] = {"labels": {**ctx.labels, **policy.labels}}
    spec: dict[str, Any] = {
        "schedule": schedule,
        "concurrencyPolicy": "Forbid",
        "jobTemplate": {"metadata": template_meta, "spec": job_spec},
    }
    meta = ctx.metadata()
    meta["labels"] = {**meta["labels"], **policy.labels}  # type: ignore[dict-item]
    manifest = Manifest({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": meta, "spec": spec})
    manifest.note(("spec", "concurrencyPolicy"), "a run does not start while the previous one is running")
    for path, text in notes:
        manifest.note(path, text)
    for path, texts in comments.items():
        for text in texts:
            manifest.note(("spec", "jobTemplate", "spec", *path), text)
    return [*pod_template.script_manifests(ctx), manifest], Workload(
        "cronjob", ctx.name, ctx.namespace, "Complete", "Failed"
    )


__all__ = ["build", "schedule_from_begin"]
