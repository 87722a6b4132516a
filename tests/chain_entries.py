"""The fidelity entries a translation.json gives the dependencies between jobs."""

from __future__ import annotations

import json
import re
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


_LOG_OPTION = re.compile(r"^#SBATCH\s+(?:--output|--error|-o|-e)[=\s]+(/\S+)", re.MULTILINE)


def make_log_folders(mount: str, root: Path, sources: Path) -> None:
    """The folders of the #SBATCH --output/--error files under ``mount`` that the scripts below
    ``sources`` name, made in ``root`` (the file system's folder): a site has them, and a job whose
    output file cannot be opened fails before its script runs, as under sbatch."""
    for script in sources.rglob("*"):
        if not script.is_file():
            continue
        for path in _LOG_OPTION.findall(script.read_text(encoding="utf-8", errors="replace")):
            folder = path.split("%")[0].split("$")[0].rsplit("/", 1)[0]
            if folder.startswith(mount + "/"):
                (root / folder[len(mount) + 1 :]).mkdir(parents=True, exist_ok=True)
