"""``submit.sh`` for Slurm: ``sbatch --parsable`` in dependency order, job ids passed on.

Each batch script is submitted once; a script that waits for others gets
``--dependency=<type>:<their ids>`` on the sbatch command line, with the ids
the earlier ``sbatch --parsable`` calls printed. The same renderer writes the
submit script of one multi-script job (a JobSet whose parts wait for each
other) and the one at the top of an output tree (jobs of a JobFlow, a wrapper
script's chain).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from .quoting import shell_word

# Graph dependency types -> sbatch dependency types.
SBATCH_TYPES = {
    "afterok": "afterok",
    "afterany": "afterany",
    "afternotok": "afternotok",
    "after": "after",
    "aftercorr": "aftercorr",
    "dependsOn": "afterok",
}
PRELUDE = [
    "#!/bin/bash",
    "# Written by migrate: submits the batch scripts in dependency order. Needs sbatch (SLURM_CONF set",
    "# or the cluster's default configuration). Run from anywhere: ./submit.sh",
    "set -euo pipefail",
    'cd "$(dirname "$0")"',
    "",
]


@dataclass
class Unit:
    """One script to submit: its variable, its path and what it waits for."""

    var: str  # shell variable holding its job id
    path: str  # relative to the submit script
    title: str
    waits: list[tuple[str, list[str]]] = field(default_factory=list)  # (sbatch dep type, variables)
    note: str = ""
    any_of: bool = False  # any one of the waits lets it start ('?'); else all of them (',')
    copies: int = 1  # submitted this many times, each with its index in ``copy_var``; the ids joined by ':'
    copy_var: str = ""


def var_name(*parts: object) -> str:
    text = "_".join(str(p) for p in parts if str(p))
    return "jid_" + "".join(ch if ch.isalnum() else "_" for ch in text)


def render(units: list[Unit], skipped: Sequence[str] = ()) -> str:
    lines = list(PRELUDE)
    for unit in order(units):
        lines.append(f"# {unit.title}")
        if unit.note:
            lines.append(f"# {unit.note}")
        terms = [(kind, variables) for kind, variables in unit.waits if variables]
        # an OR list names each job with its type: afterok:1?afterok:2 (sbatch takes one separator)
        dependency = (
            "?".join(f"{kind}:${{{v}}}" for kind, variables in terms for v in variables)
            if unit.any_of
            else ",".join(f"{kind}:" + ":".join(f"${{{v}}}" for v in variables) for kind, variables in terms)
        )
        option = f' --dependency="{dependency}"' if dependency else ""
        if unit.copies > 1 and unit.copy_var:
            lines += _copies(unit, option)
            continue
        lines.append(f"{unit.var}=$(sbatch --parsable{option} {shell_word(unit.path)})")
        lines.append(f'{unit.var}="${{{unit.var}%%;*}}"  # sbatch --parsable prints id[;cluster]')
        lines.append(f'echo "submitted {unit.path}: job ${{{unit.var}}}"')
        lines.append("")
    for note in skipped:
        lines.append(f"# {note}")
    return "\n".join(lines).rstrip("\n") + "\n"


def _copies(unit: Unit, option: str) -> list[str]:
    """One sbatch per copy; the unit's variable holds every id (``1:2``), as --dependency lists take them."""
    path = shell_word(unit.path)
    return [
        f'{unit.var}=""',
        f"for copy in $(seq 0 {unit.copies - 1}); do",
        f'  id=$(sbatch --parsable{option} --export="ALL,{unit.copy_var}=$copy" {path})',
        '  id="${id%%;*}"  # sbatch --parsable prints id[;cluster]',
        f'  {unit.var}="${{{unit.var}:+${{{unit.var}}}:}}$id"',
        f'  echo "submitted {unit.path} ({unit.copy_var}=$copy): job $id"',
        "done",
        "",
    ]


def order(units: list[Unit]) -> list[Unit]:
    """Prerequisites first; input order otherwise (and for cycles, which sbatch would refuse)."""
    by_var = {u.var: u for u in units}
    done: set[str] = set()
    out: list[Unit] = []
    visiting: set[str] = set()

    def visit(unit: Unit) -> None:
        if unit.var in done or unit.var in visiting:
            return
        visiting.add(unit.var)
        for _, variables in unit.waits:
            for v in variables:
                if v in by_var:
                    visit(by_var[v])
        visiting.discard(unit.var)
        done.add(unit.var)
        out.append(unit)

    for unit in units:
        visit(unit)
    for unit in out:  # a wait on a unit submitted later (a cycle) cannot be given
        position = {u.var: i for i, u in enumerate(out)}
        unit.waits = [
            (kind, [v for v in variables if position.get(v, -1) < position[unit.var]])
            for kind, variables in unit.waits
        ]
    return out


__all__ = ["SBATCH_TYPES", "Unit", "order", "render", "var_name"]
