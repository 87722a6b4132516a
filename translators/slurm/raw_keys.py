"""The raw-item keys the sbatch and scrontab reader gives what it keeps, and what each holds.

A directive kept raw (an option whose row targets no IR field, a value that
could not be typed, a later hetjob component's job-wide value, an unknown
spelling) keeps its own spelling as the key (``--gres-flags``, ``-S``,
``--frobnicate``), its directive as the origin and its hetjob component: the
option table says what each option is, and every writer reads that table.
The reader's other keys are these.
"""

from __future__ import annotations

from migrate import ir

RAW_KEYS = ir.RawKeys(
    {
        "crontab-env": "a variable a scrontab file sets for the entries below it",
    }
)

__all__ = ["RAW_KEYS"]
