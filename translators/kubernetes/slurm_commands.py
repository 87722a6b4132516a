"""The Slurm commands a script runs, as the pods answer them.

The emulated script runs unchanged in the pod, where no Slurm controller
answers: of Slurm's commands the shims give ``srun``, ``scontrol show
hostnames`` and ``sbatch`` (recorded where they are translated). Every other
one (``scontrol show node``, ``sacct``, ``squeue`` ...) fails there, and a
script that reads its answer (a GPU count, a job's state) goes on with none.
Each gets a fidelity entry at its line, so that the record says what the pods
will not do.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator

from ..shell.model import Command
from ..shell.reader import read_script
from .native_shape import SLURM_COMMANDS, body_start
from .translation_context import Context

# Answered in the pod: srun and sbatch by their shims (recorded with the steps and submissions),
# scontrol for host lists.
_ANSWERED = frozenset({"srun", "sbatch"})
_ASKED = SLURM_COMMANDS | {"sreport", "sacctmgr", "sdiag", "strigger", "sbcast", "seff", "scrontab"}
_HOST_LISTS = ("show hostnames", "show hostname")


# What the text must hold for a command worth reading it for: most scripts have none, and reading
# a script costs more than this search (`scontrol show hostnames` is answered).
_MENTIONED = re.compile(
    r"\b(?:"
    + "|".join(sorted(_ASKED - _ANSWERED - {"scontrol"}))
    + r")\b|\bscontrol\b(?!\s+show\s+hostnames?\b)"
)


def record(ctx: Context) -> None:
    script = ctx.job.script
    if script is None or not _MENTIONED.search(script.body):
        return
    for command, line in _commands(script.body, body_start(script)):
        words = _program(command)
        name = posixpath.basename(words[0]) if words else ""
        if name not in _ASKED or name in _ANSWERED:
            continue
        if name == "scontrol" and " ".join(words[1:3]) in _HOST_LISTS:
            continue
        shown = " ".join([name, *words[1:3]])
        ctx.fidelity.dropped(
            f"command {shown}",
            "no Slurm controller answers in the pod: the command fails there (exit 1 from the scontrol "
            "shim, else not found), and what the script reads of its answer is empty",
            line,
        )


_SHELLS = frozenset({"bash", "sh", "dash", "zsh"})
_PREFIXES = frozenset({"sudo", "env", "time", "nohup", "exec", "command", "stdbuf"})


def _program(command: Command) -> list[str]:
    """The program's words, past `sudo`, `env VAR=1`, `time` and their options."""
    words = [w.value for w in command.words]
    while words and (
        posixpath.basename(words[0]) in _PREFIXES or words[0].startswith("-") or "=" in words[0]
    ):
        words = words[1:]
    return words


def _commands(text: str, start: int, depth: int = 0) -> Iterator[tuple[Command, int]]:
    """Every command of a script with its file line, those of a here-document a shell reads too
    (`srun bash -s <<EOF`, a node check run on every node)."""
    read = read_script(text)
    if read.problems:
        return  # the script does not parse: said elsewhere, and bash runs none of it
    for command in read.commands:
        yield command, start + command.line
        if depth >= 2 or not any(posixpath.basename(w.value) in _SHELLS for w in command.words):
            continue
        for redirect in command.redirects:
            if redirect.heredoc is not None:
                yield from _commands(redirect.heredoc.body, start + redirect.heredoc.line, depth + 1)
