"""The final sweep: every directive and body item gets a fidelity entry.

Options the mapping code handled are marked covered when it named them
(``Context.option``). What is left (raw directives, options with no
Kubernetes counterpart, unknown spellings) gets the status and reason of the
option table's Kubernetes note, so that nothing a job file said goes
unmentioned.
"""

from __future__ import annotations

from migrate.translators.slurm import options as sbatch_options

from .translation_context import Context, option_name

_STATUSES = ("mapped", "approximated", "dropped")


def _record(ctx: Context, status: str, item: str, reason: str, line: int | None) -> None:
    if status == "mapped":
        ctx.fidelity.mapped(item, reason, line)
    elif status == "approximated":
        ctx.fidelity.approximated(item, reason, line)
    else:
        ctx.fidelity.dropped(item, reason, line)


def sweep(ctx: Context) -> None:
    """An entry for every directive of the job file and every raw item not covered yet."""
    seen: set[tuple[str, int]] = set()
    for directive in ctx.job.directives:
        long, comp, line, text = directive.option, directive.component, directive.line, directive.text
        key = (long, comp)
        if key in ctx.covered or key in seen:
            continue
        seen.add(key)
        option = sbatch_options.BY_LONG.get(long)
        if comp and option is not None and not option.target.startswith("resources."):
            ctx.fidelity.approximated(
                text, "a job-wide setting: the first component's value applies to all of them", line
            )
            continue
        _from_table(ctx, long, text, line)
    for raw in ctx.job.raw:
        if not raw.origin.startswith(("#SBATCH", "#SCRON")):
            _body_item(ctx, raw.key, raw.value, raw.line, raw.origin)
            continue
        raw_long = option_name(raw.key)
        comp = int(raw.origin.partition(" het")[2] or 0) if " het" in raw.origin else 0
        text = f"{raw.key}={raw.value}" if raw.value else raw.key
        if raw_long is None:
            if (raw.key.lstrip("-"), comp) in seen:
                continue
            seen.add((raw.key.lstrip("-"), comp))
            ctx.fidelity.dropped(text, "not an sbatch option; sbatch would refuse the script", raw.line)
            continue
        if (raw_long, comp) in ctx.covered or (raw_long, comp) in seen:
            continue
        seen.add((raw_long, comp))
        _from_table(ctx, raw_long, text, raw.line)


def _from_table(ctx: Context, long: str, text: str, line: int | None) -> None:
    option = sbatch_options.BY_LONG.get(long)
    if option is None:
        ctx.fidelity.dropped(text, "not an sbatch option", line)
        return
    status, _, reason = option.k8s.partition(":")
    status = status.strip() if status.strip() in _STATUSES else "dropped"
    _record(ctx, status, text, reason.strip(), line)


def _body_item(ctx: Context, key: str, value: str, line: int | None, origin: str) -> None:
    text = f"{key} {value}".strip()
    ctx.fidelity.approximated(
        text, f"kept in the script, which runs unchanged in the pod ({origin or 'body'})", line
    )


__all__ = ["sweep"]
