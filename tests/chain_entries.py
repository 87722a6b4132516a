"""The fidelity entries a translation.json gives the dependencies between jobs."""

from __future__ import annotations

import json
from pathlib import Path

DEPENDENCY_WORDS = ("afterok", "afterany", "afternotok", "after", "aftercorr", "singleton")


def dependency_statuses(out: Path) -> dict[tuple[str, str], str]:
    """(job name, "afterok on prep" or "--dependency=...") -> mapped | approximated | dropped."""
    doc = json.loads((out / "translation.json").read_text(encoding="utf-8"))
    return {
        (j["name"], e["item"].split(" (")[0]): e["status"]
        for j in doc["jobs"]
        for e in j["fidelity"]
        if e["item"].startswith("--dependency") or e["item"].split(" ")[0] in DEPENDENCY_WORDS
    }
