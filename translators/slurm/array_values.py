"""The lines that give each task of a job array its own value (``ir.ArrayValue``), from its task id.

Listed values become a bash array indexed by ``$SLURM_ARRAY_TASK_ID``, each
item single-quoted so that bash hands it on byte for byte; counted values are
arithmetic on the task id, written with ``printf``'s format.
"""

from __future__ import annotations

from migrate import ir

from .quoting import shell_word, shell_words

_ONE_LINE = 100  # longer item lists get one item per line


def lines(value: ir.ArrayValue) -> list[str]:
    """Bash lines that export ``value.name`` for the running array task."""
    offset = f"SLURM_ARRAY_TASK_ID - {value.first}" if value.first else "SLURM_ARRAY_TASK_ID"
    if value.items:
        listed = f"{value.name.lower()}_items"
        words = shell_words(value.items)
        assign = (
            [f"{listed}=({words})"]
            if len(words) <= _ONE_LINE
            else [f"{listed}=(", *(f"  {shell_word(item)}" for item in value.items), ")"]
        )
        return [
            f"# each array task's own {value.name}: the item at its index",
            *assign,
            f'export {value.name}="${{{listed}[{offset}]}}"',
        ]
    number = _counted(value, offset)
    comment = f"# each array task's own {value.name}: counted from its index"
    if value.format == "%d":
        return [comment, f'export {value.name}="{number}"']
    return [comment, f'printf -v {value.name} {shell_word(value.format)} "{number}"', f"export {value.name}"]


def _counted(value: ir.ArrayValue, offset: str) -> str:
    if value.step == 1 and value.start == value.first:
        return "$SLURM_ARRAY_TASK_ID"
    if value.step == 1:
        return f"$(( {value.start} + {offset} ))"
    if value.step == -1:
        return f"$(( {value.start} - ({offset}) ))"
    return f"$(( {value.start} + {value.step} * ({offset}) ))"


__all__ = ["lines"]
