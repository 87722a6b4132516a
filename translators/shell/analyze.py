"""Shell body analysis (placeholder until the bashlex analysis lands)."""

from __future__ import annotations

from migrate.diagnostics import Collector

from .facts import BodyFacts


def analyze(body: str, start_line: int, diags: Collector) -> BodyFacts:
    """Read a shell body statement by statement; never raises."""
    return BodyFacts()
