"""Translation fidelity: what happened to every source item, and why.

Each translated job carries a ``FidelityLog``; every option or field of the
source gets one entry: mapped, approximated (with the reason) or dropped (with
the reason). The same reasons are written beside the output as comments or
annotations, and ``--strict`` fails when anything was dropped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

MAPPED = "mapped"
APPROXIMATED = "approximated"
DROPPED = "dropped"
STATUSES = (MAPPED, APPROXIMATED, DROPPED)


@dataclass(frozen=True)
class Entry:
    item: str  # the source item, e.g. "--gres=gpu:a100:4" or "spec.backoffLimit"
    status: str
    reason: str = ""
    line: int | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"item": self.item, "status": self.status, "reason": self.reason}
        if self.line is not None:
            out["line"] = self.line
        return out


@dataclass
class FidelityLog:
    entries: list[Entry] = field(default_factory=list)

    def mapped(self, item: str, reason: str = "", line: int | None = None) -> None:
        self.entries.append(Entry(item, MAPPED, reason, line))

    def approximated(self, item: str, reason: str, line: int | None = None) -> None:
        self.entries.append(Entry(item, APPROXIMATED, reason, line))

    def dropped(self, item: str, reason: str, line: int | None = None) -> None:
        self.entries.append(Entry(item, DROPPED, reason, line))

    def counts(self) -> dict[str, int]:
        counts = {s: 0 for s in STATUSES}
        for e in self.entries:
            counts[e.status] += 1
        return counts

    @property
    def any_dropped(self) -> bool:
        return any(e.status == DROPPED for e in self.entries)

    def to_list(self) -> list[dict[str, Any]]:
        return [e.to_dict() for e in self.entries]
