"""A hyperparameter search (``ir.Sweep``, a Katib Experiment) as one job array of its trials.

Each array task is one trial: the trial's workload written as its own kind is
(:mod:`.kube_job`), with ``--array=0-<maxTrialCount - 1>%<parallelTrialCount>``.
Katib's suggestion service picks each trial's values when the trial starts;
Slurm has no such service, so the values are chosen here, before any trial
runs, and each task reads its own from its array task id
(:mod:`.array_values`). Grid and random search need nothing from earlier
trials, so that keeps their meaning; an algorithm that learns from earlier
trials' metrics (TPE, Bayesian optimisation, CMA-ES, Hyperband ...) cannot, and
its trials are drawn at random instead, with a diagnostic.
"""

from __future__ import annotations

from dataclasses import replace

from migrate import ir
from migrate.translators.katib import fields, trials

from . import kube_job
from .context import Context
from .script import Script

_EXTERNAL = (
    "to keep it, drive the trials from an optimiser outside Slurm (an Optuna or Ray Tune loop that "
    "submits one trial with sbatch at a time and reads its metric)"
)


def translate(ctx: Context) -> list[Script]:
    """The trial's scripts with the sweep's array and each task's values; ``ctx.job`` is the Experiment's."""
    job = ctx.job
    sweep = job.sweep
    assert sweep is not None
    if sweep.trial_kind is None or job.array is None:
        return _no_trial(ctx, sweep)
    values, how = _values(ctx, job, sweep, job.array.count)
    ctx.job = replace(job, kind=sweep.trial_kind, array=replace(job.array, values=values))
    try:
        scripts = kube_job.translate(ctx)
    finally:
        ctx.job = job
    for script in scripts:
        script.intro[:0] = [f"{job.kind} {job.name or ctx.name}: {_trials(job)} of a {sweep.trial_kind}"]
        if how:
            script.intro.insert(1, f"each trial's parameters: {how}")
    _record_search(ctx, job, sweep)
    return scripts


def _trials(job: ir.Job) -> str:
    count = job.array.count if job.array is not None else 0
    return f"{count} trials" if count else "trials"


def _no_trial(ctx: Context, sweep: ir.Sweep) -> list[Script]:
    what = f"{ctx.job.kind} {ctx.job.name or ctx.name}"
    ctx.fidelity.dropped(what, "the trial template was not read: there is no workload to run", sweep.line)
    ctx.diag(
        "TO-SLURM-SWEEP-NO-TRIAL",
        f"{what}: its trial workload is unknown (see the scan's diagnostics); no script is written",
        sweep.line,
    )
    return []


# ---------------------------------------------------------------------------
# Each task's values


def _values(ctx: Context, job: ir.Job, sweep: ir.Sweep, count: int) -> tuple[tuple[ir.ArrayValue, ...], str]:
    """The variables each array task sets, and how their values were chosen (recorded as fidelity)."""
    used = [p for p in sweep.trial_parameters if p.variable]
    if not count:
        for parameter in used:
            ctx.fidelity.dropped(
                f"trial parameter {parameter.name}",
                "maxTrialCount is unset, so the trials cannot be listed up front: "
                "the placeholder stays as written",
                parameter.line,
            )
        return (), ""
    chosen, how = _choose(ctx, job, sweep, count)
    searched = {p.name for p in sweep.parameters}
    out: list[ir.ArrayValue] = []
    for parameter in used:
        assert parameter.variable is not None
        meta = fields.METADATA_REFERENCE.fullmatch(parameter.reference)
        if meta is not None and meta.group(1) == fields.TRIAL_NAME:
            name = (job.name or ctx.name).replace("%", "%%")
            out.append(ir.ArrayValue(parameter.variable, format=f"{name}-%d"))
            ctx.fidelity.approximated(
                f"trial parameter {parameter.name} ({parameter.reference})",
                f"each task's {parameter.variable} is {name}-<array task id>; Katib names a trial with a "
                "random suffix",
                parameter.line,
            )
        elif parameter.reference in chosen:
            out.append(ir.ArrayValue(parameter.variable, tuple(chosen[parameter.reference])))
        elif parameter.reference in searched:
            ctx.fidelity.dropped(
                f"trial parameter {parameter.name} ({parameter.reference})",
                "its feasible space gives no values to choose from: the placeholder stays as written",
                parameter.line,
            )
    return tuple(out), how if out else ""


def _choose(ctx: Context, job: ir.Job, sweep: ir.Sweep, count: int) -> tuple[trials.Values, str]:
    """Each search parameter's value per trial (the grid's points, or seeded draws), and how."""
    algorithm = sweep.algorithm
    if algorithm == fields.GRID:
        points = trials.grid(sweep.parameters, count)
        size = trials.grid_size(sweep.parameters)
        if points is not None and size is not None:
            note = f" (of {size})" if size > count else ""
            if size < count:
                ctx.fidelity.approximated(
                    f"maxTrialCount {count}",
                    f"the grid has only {size} points: the tasks after the last point run the grid again "
                    "(Katib refuses a grid smaller than maxTrialCount)",
                    sweep.line,
                )
            ctx.fidelity.mapped(
                f"search algorithm {algorithm}",
                f"task i runs the grid's point i{note}, in Cartesian product order with the last parameter "
                "varying fastest; Katib visits the same points in its sampler's order",
                sweep.line,
            )
            return points, f"task i runs point i of the grid{note}, in Cartesian product order"
    seed = trials.seed_of(sweep, job.name or ctx.name)
    drawn = trials.draws(sweep.parameters, count, seed)
    how = (
        f"each task's values are drawn up front from the feasible space by Python's random with seed {seed}, "
        "uniformly (log-uniformly for logUniform)"
    )
    if algorithm == fields.RANDOM:
        ctx.fidelity.mapped(
            f"search algorithm {algorithm}",
            f"{how}; Katib draws other values from the same distributions when each trial starts",
            sweep.line,
        )
    elif algorithm == fields.GRID:
        ctx.fidelity.approximated(
            f"search algorithm {algorithm}",
            f"the grid cannot be listed (a double needs a step; Katib refuses such a grid): {how}",
            sweep.line,
        )
    else:
        ctx.fidelity.approximated(
            f"search algorithm {algorithm}",
            f"Katib's suggestion service chooses each trial from the metrics of the trials before it; "
            f"Slurm has none: the search becomes a random search, {how}; {_EXTERNAL}",
            sweep.line,
        )
        ctx.diag(
            "TO-SLURM-SWEEP-ADAPTIVE",
            f"algorithm {algorithm} learns from earlier trials' metrics, which a job array cannot: "
            f"the {count} trials are drawn at random up front (seed {seed}); {_EXTERNAL}",
            sweep.line,
        )
    return drawn, f"drawn up front at random with seed {seed}"


# ---------------------------------------------------------------------------
# What the search does besides running trials


def _record_search(ctx: Context, job: ir.Job, sweep: ir.Sweep) -> None:
    objective = sweep.objective
    if objective is not None:
        metric = objective.metric or "its metric"
        goal = f", stops the search once it reaches {objective.goal}" if objective.goal else ""
        ctx.fidelity.dropped(
            f"objective: {objective.type or ''} {metric}".replace("  ", " "),
            f"Katib reads each trial's {metric}{goal} and reports the best trial; the array runs all its "
            "trials and each task's output keeps what the program printed: compare them afterwards",
            objective.line,
        )
    if sweep.max_failed_trials is not None:
        ctx.fidelity.dropped(
            f"maxFailedTrialCount {sweep.max_failed_trials}",
            "every array task runs; Slurm does not end the array after failed tasks",
            sweep.line,
        )
    if sweep.trial_parameters and not any(p.variable for p in sweep.trial_parameters):
        ctx.fidelity.dropped(
            "trial parameters",
            "no command, argument or env value of the trial uses them: every task runs the same",
            sweep.line,
        )


__all__ = ["translate"]
