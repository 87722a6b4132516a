"""The raw-item keys the Argo reader gives what it keeps, and what each one holds.

Every writer that takes Kubernetes jobs has a row for each (the Slurm writer's
``RAW_FIELDS``): an Argo task's job is translated like any Kubernetes job.
"""

from __future__ import annotations

from migrate import ir

RAW_KEYS = ir.RawKeys(
    {
        "argo-task": "the Argo workflow, task and template the job runs as: 'workflow/task (template)'",
        "argo-depends": "a depends term a Slurm dependency type says exactly: 'term -> type'",
        "argo-depends-approximated": "a depends term only the nearest Slurm type says: 'term -> type: why'",
        "argo-when": "the condition under which Argo runs the task at all",
        "argo-schedule": "a further schedule of a CronWorkflow with several",
        "argo-item-unfilled": "a fan-out's item placeholder the array tasks cannot each fill in: "
        "'placeholder in field: why'",
    }
)

__all__ = ["RAW_KEYS"]
