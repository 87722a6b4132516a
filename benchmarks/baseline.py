"""The naive reader the issue compares against: what a quick script would do.

Per file, in one process: read it, pick the ``#SBATCH`` lines with a regular
expression and hand the rest of the script to ``bashlex.parse``; manifests go
to ``yaml.safe_load_all``. A file whose parse raises is lost. bashlex can loop
forever on some words, so each parse runs under a timer and a timeout counts
as a loss too (otherwise the baseline would never finish).
"""

from __future__ import annotations

import os
import re
import signal
from dataclasses import dataclass
from types import FrameType

import bashlex
import yaml

_SBATCH = re.compile(r"^#SBATCH[ \t]+(.*)$", re.MULTILINE)
_MANIFEST = re.compile(r"^(?:apiVersion|kind)[ \t]*:", re.MULTILINE)
PARSE_TIMEOUT_S = 5.0


class _Timeout(Exception):
    pass


def _alarm(signum: int, frame: FrameType | None) -> None:
    raise _Timeout


@dataclass
class BaselineResult:
    files: int = 0
    scripts: int = 0
    manifests: int = 0
    options: int = 0
    lost: int = 0
    timeouts: int = 0


def list_files(root: str) -> list[str]:
    found: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        found.extend(os.path.join(dirpath, name) for name in sorted(filenames))
    return found


def _body(text: str) -> str:
    """The script after its last ``#SBATCH`` line (the whole text when it has none)."""
    ends = [m.end() for m in _SBATCH.finditer(text)]
    return text[ends[-1] :] if ends else text


def read_file(path: str, result: BaselineResult) -> None:
    with open(path, encoding="utf-8", errors="replace") as fh:
        text = fh.read()
    result.files += 1
    if path.endswith((".yaml", ".yml")) or _MANIFEST.search(text):
        result.manifests += 1
        try:
            list(yaml.safe_load_all(text))
        except Exception:
            result.lost += 1
        return
    result.scripts += 1
    result.options += len(_SBATCH.findall(text))
    signal.setitimer(signal.ITIMER_REAL, PARSE_TIMEOUT_S)
    try:
        bashlex.parse(_body(text))
    except _Timeout:
        result.lost += 1
        result.timeouts += 1
    except Exception:
        result.lost += 1
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def run(root: str) -> BaselineResult:
    previous = signal.signal(signal.SIGALRM, _alarm)
    result = BaselineResult()
    try:
        for path in list_files(root):
            read_file(path, result)
    finally:
        signal.signal(signal.SIGALRM, previous)
    return result
