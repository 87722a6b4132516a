"""The parameter values of each trial, where they can be chosen before any trial runs.

Katib's suggestion service chooses a trial's values when the trial starts.
For grid search the values are the points of the Cartesian product of each
parameter's feasible values (Katib's ``convert_to_combinations``: ints from
min to max by step, 1 when unset; doubles from min to max by step, which
grid needs; a list as listed); here they are taken in product order, the
last parameter varying fastest. For random search each value is drawn
uniformly from its feasible space (log-uniformly for ``logUniform``) by a
generator seeded with a number written into the output, so that the same
input gives the same trials.
"""

from __future__ import annotations

import itertools
import math
import random
import zlib
from decimal import Decimal, InvalidOperation

from migrate import ir

from . import fields

Values = dict[str, list[str]]  # parameter -> one value per trial


def grid_values(parameter: ir.SearchParameter) -> list[str] | None:
    """The feasible values of one parameter on Katib's grid, or None when they cannot be listed."""
    if parameter.type in fields.LISTED:
        return list(parameter.values) or None
    low, high = _number(parameter.min), _number(parameter.max)
    step = (
        _number(parameter.step) if parameter.step else (Decimal(1) if parameter.type == fields.INT else None)
    )
    if low is None or high is None or step is None or step <= 0 or high < low:
        return None
    if parameter.type == fields.INT:
        return [str(v) for v in range(int(low), int(high) + 1, max(1, int(step)))]
    if parameter.type != fields.DOUBLE:
        return None
    count = int((high - low) / step) + 1
    return [_text(low + step * i) for i in range(count)]


def grid_size(parameters: tuple[ir.SearchParameter, ...]) -> int | None:
    """How many points the grid has, or None when a parameter's values cannot be listed."""
    sizes = [grid_values(p) for p in parameters]
    if not parameters or any(s is None for s in sizes):
        return None
    return math.prod(len(s) for s in sizes if s is not None)


def grid(parameters: tuple[ir.SearchParameter, ...], trials: int) -> Values | None:
    """The first ``trials`` points of the grid, per parameter, from the start again after the last one;
    None when the grid cannot be listed."""
    axes = [grid_values(p) for p in parameters]
    if not parameters or any(a is None for a in axes):
        return None
    product = itertools.product(*(a for a in axes if a is not None))
    size = math.prod(len(a) for a in axes if a is not None)
    points = list(itertools.islice(itertools.cycle(product) if size < trials else product, trials))
    return {p.name: [point[i] for point in points] for i, p in enumerate(parameters)}


def seed_of(sweep: ir.Sweep, name: str) -> int:
    """The experiment's own seed setting, else a number made from its name (the same every run)."""
    for setting in sweep.settings:
        if setting.key in fields.SEED_SETTINGS and setting.value.strip().isdigit():
            return int(setting.value.strip())
    return zlib.crc32(name.encode("utf-8"))


def drawable(parameter: ir.SearchParameter) -> bool:
    """Whether a value of the parameter can be drawn: a list, or numeric bounds."""
    if parameter.type in fields.LISTED:
        return bool(parameter.values)
    low, high = _number(parameter.min), _number(parameter.max)
    return (
        parameter.type in (fields.INT, fields.DOUBLE) and low is not None and high is not None and low <= high
    )


def draws(parameters: tuple[ir.SearchParameter, ...], trials: int, seed: int) -> Values:
    """One value per trial of each parameter that can be drawn: trial after trial, in parameter order."""
    rng = random.Random(seed)
    out: Values = {p.name: [] for p in parameters if drawable(p)}
    for _ in range(trials):
        for parameter in parameters:
            if parameter.name in out:
                out[parameter.name].append(_draw(parameter, rng))
    return out


def _draw(parameter: ir.SearchParameter, rng: random.Random) -> str:
    if parameter.type in fields.LISTED:
        return rng.choice(parameter.values)
    low, high = Decimal(str(_number(parameter.min))), Decimal(str(_number(parameter.max)))
    step = _number(parameter.step) if parameter.step else None
    if parameter.type == fields.INT:
        stride = max(1, int(step)) if step else 1
        return str(int(low) + stride * rng.randint(0, (int(high) - int(low)) // stride))
    if step and step > 0:
        return _text(low + step * rng.randint(0, int((high - low) / step)))
    if parameter.distribution == fields.LOG_UNIFORM and low > 0:
        value = math.exp(rng.uniform(math.log(float(low)), math.log(float(high))))
    else:
        value = rng.uniform(float(low), float(high))
    return f"{value:.6g}"


def _number(text: str | None) -> Decimal | None:
    if text is None:
        return None
    try:
        value = Decimal(text.strip())
    except InvalidOperation:
        return None
    return value if value.is_finite() else None


def _text(value: Decimal) -> str:
    """A decimal without trailing zeros or an exponent: 0.02, not 0.020 or 2E-2."""
    return format(value.normalize(), "f")


__all__ = ["Values", "drawable", "draws", "grid", "grid_size", "grid_values", "seed_of"]
