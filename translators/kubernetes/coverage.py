"""The final sweep: every directive and body item gets a fidelity entry.

Options the mapping code handled are marked covered when it named them
(``Context.option``). What is left (raw directives, options with no
Kubernetes counterpart, unknown spellings) gets the status and reason of the
option table's Kubernetes note, so that nothing a job file said goes
unmentioned.
"""

from __future__ import annotations

from migrate.translators.shell.raw_keys import CONDA_TOOLS, CONDA_VERBS
from migrate.translators.slurm import options as sbatch_options
from migrate.vocab import FidelityStatus

from .translation_context import Context, option_name

# The other items the readers kept from a job file, by key: the script runs unchanged in the
# pod, so each runs there too, in the image's environment rather than the node's. One row per
# key of the sbatch reader's and the shell analysis' registries (a test checks it); a key
# with no row is reported dropped.
BODY_ITEMS: dict[str, FidelityStatus] = {
    "crontab-env": FidelityStatus.APPROXIMATED,
    "module": FidelityStatus.APPROXIMATED,
    "spack": FidelityStatus.APPROXIMATED,
    "source": FidelityStatus.APPROXIMATED,
    "pip-install": FidelityStatus.APPROXIMATED,
    "ulimit": FidelityStatus.APPROXIMATED,
    **{f"{tool}-{verb}": FidelityStatus.APPROXIMATED for tool in CONDA_TOOLS for verb in CONDA_VERBS},
}


def sweep(ctx: Context) -> None:
    """An entry for every directive of the job file and every raw item not covered yet."""
    seen: set[tuple[str, int]] = set()
    table = sbatch_options.table(ctx.site.spank_options)  # the site's own plugin options too
    for directive in ctx.job.directives:
        long, comp, line, text = directive.option, directive.component, directive.line, directive.text
        key = (long, comp)
        if key in ctx.covered or key in seen:
            continue
        seen.add(key)
        placeholders = [u.name for u in ctx.job.unresolved if u.field == f"--{long}" and u.line == line]
        if placeholders:
            names = ", ".join(f"${name}" for name in placeholders)
            ctx.fidelity.dropped(
                text,
                f"a template placeholder with no value ({names}): not translated, the object keeps "
                f"Kubernetes' default (give it with --set {placeholders[0]}=VALUE)",
                line,
            )
            continue
        option = table.by_long.get(long)
        if comp and option is not None and not option.target.startswith("resources."):
            ctx.fidelity.approximated(
                text, "a job-wide setting: the first component's value applies to all of them", line
            )
            continue
        _from_table(ctx, table, long, text, line)
    for raw in ctx.job.raw:
        if not raw.origin.startswith(("#SBATCH", "#SCRON")):
            _body_item(ctx, raw.key, raw.value, raw.line, raw.origin)
            continue
        raw_long = option_name(raw.key, table)
        comp = raw.component
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
        _from_table(ctx, table, raw_long, text, raw.line)


def _from_table(ctx: Context, table: sbatch_options.Table, long: str, text: str, line: int | None) -> None:
    option = table.by_long.get(long)
    if option is None:
        ctx.fidelity.dropped(text, "not an sbatch option", line)
        return
    ctx.fidelity.record(option.k8s.status, text, option.k8s.reason, line)


def _body_item(ctx: Context, key: str, value: str, line: int | None, origin: str) -> None:
    text = f"{key} {value}".strip()
    status = BODY_ITEMS.get(key)
    if status is None:
        ctx.fidelity.dropped(
            text, f"a {origin or 'body'} item no reader writes: nothing says what it was", line
        )
        return
    ctx.fidelity.record(
        status, text, f"kept in the script, which runs unchanged in the pod ({origin or 'body'})", line
    )


__all__ = ["BODY_ITEMS", "sweep"]
