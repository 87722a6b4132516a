"""Slurm durations, as ``--time``, ``DefaultTime`` and ``MaxTime`` write them.

Forms: ``minutes``, ``minutes:seconds``, ``hours:minutes:seconds``,
``days-hours``, ``days-hours:minutes``, ``days-hours:minutes:seconds``, and
``UNLIMITED`` / ``INFINITE`` (``None``: no limit). The sbatch option table
and the slurm.conf reader both use these, so a duration means one thing.
"""

from __future__ import annotations

import re
from functools import lru_cache

_TIME = re.compile(
    r"(?:(?P<days>[0-9]+)-(?P<dh>[0-9]*)(?::(?P<dm>[0-9]+)(?::(?P<ds>[0-9]+))?)?"
    r"|(?P<a>[0-9]+)(?::(?P<b>[0-9]+)(?::(?P<c>[0-9]+))?)?)\Z"
)
UNLIMITED_WORDS = frozenset({"UNLIMITED", "INFINITE", "-1"})


def parse_slurm_time(text: str) -> int | None:
    """A duration in seconds; ``None`` for UNLIMITED/INFINITE; ``ValueError`` for anything else.

    A plain ``0`` is returned as 0: for ``--time`` sbatch reads it as "no
    limit", which the sbatch reader turns into ``None``.
    """
    if text.upper() in UNLIMITED_WORDS:
        return None
    m = _TIME.match(text)
    if not m:
        raise ValueError(
            f"invalid time {text!r}: expected minutes, minutes:seconds, hours:minutes:seconds, "
            "days-hours, days-hours:minutes or days-hours:minutes:seconds"
        )
    g = m.groupdict()
    if g["days"] is not None:
        days, hours = int(g["days"]), int(g["dh"] or 0)  # sbatch reads "1-" as one day
        return ((days * 24 + hours) * 60 + int(g["dm"] or 0)) * 60 + int(g["ds"] or 0)
    a, b, c = g["a"], g["b"], g["c"]
    if c is not None:
        return (int(a) * 60 + int(b)) * 60 + int(c)
    if b is not None:
        return int(a) * 60 + int(b)
    return int(a) * 60


@lru_cache(maxsize=4096)
def format_slurm_time(seconds: int | None) -> str:
    """The inverse of :func:`parse_slurm_time`: ``D-HH:MM:SS`` (``HH:MM:SS`` under a day)."""
    if seconds is None:
        return "UNLIMITED"
    if seconds < 0:
        raise ValueError("a duration cannot be negative")
    minutes, secs = divmod(seconds, 60)
    hours, mins = divmod(minutes, 60)
    days, hours = divmod(hours, 24)
    if days:
        return f"{days}-{hours:02d}:{mins:02d}:{secs:02d}"
    return f"{hours:02d}:{mins:02d}:{secs:02d}"


__all__ = ["UNLIMITED_WORDS", "format_slurm_time", "parse_slurm_time"]
