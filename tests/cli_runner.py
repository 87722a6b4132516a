"""The CLI as a user runs it, without an interpreter's start-up per command.

Each command runs in a process of its own, forked from a helper that imported
the tool once (:mod:`bounded`): its own stdout, stderr, exit code and working
folder, as from a shell, at a tenth of the cost of a fresh interpreter. Tests
whose point is the interpreter itself (the entry point script, Ctrl-C, the
terminal) start one with :mod:`subprocess`.
"""

from __future__ import annotations

import atexit
import subprocess
from pathlib import Path

from bounded import Probe

_helper: list[Probe] = []


def run(*args: str, cwd: Path | None = None, timeout: int = 180) -> subprocess.CompletedProcess[str]:
    if not _helper:
        _helper.append(Probe())
        atexit.register(_helper[0].close)
    done = _helper[0].cli(*args, timeout=timeout, cwd=str(cwd) if cwd else None)
    code = done.exit_code if done.exit_code is not None else -(done.signal or 1)
    return subprocess.CompletedProcess(list(args), code, done.stdout, done.stderr)
