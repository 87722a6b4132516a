"""Dotted paths into an IR job, for tests that check many fields at once (see ``one_line``).

``time_limit_s``, ``placement.partitions``: fields; ``resources.``: the first component's resources;
a number indexes a tuple; ``*`` maps the rest of the path over every item (a list); ``name()`` calls a
method; ``a.b,c``: several fields of one object, compared one by one (through ``*``: a tuple an item).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from migrate import ir


def ir_value(job: ir.Job, path: str) -> object:
    """The value at a dotted ``path`` of the job; KeyError says where the path stops."""
    parts = path.split(".")
    if parts[0] == "resources" and not hasattr(job, "resources"):
        parts = ["components", "0", *parts]
    return _walk(job, parts, path)


def _walk(value: object, parts: list[str], path: str) -> object:
    for i, part in enumerate(parts):
        where = ".".join(parts[:i]) or "the job"
        if part == "*":
            if not isinstance(value, tuple | list):
                raise KeyError(f"{path}: {where} is {type(value).__name__}, not a sequence to map over")
            return [_walk(item, parts[i + 1 :], path) for item in value]
        if "," in part:
            if i != len(parts) - 1:
                raise KeyError(f"{path}: only the last name of a path may list several fields")
            return tuple(_step(value, name, where, path) for name in part.split(","))
        value = _step(value, part, where, path)
    return value


def _step(value: object, part: str, where: str, path: str) -> object:
    if part.isdigit():
        if not isinstance(value, tuple | list) or int(part) >= len(value):
            raise KeyError(f"{path}: {where} has no item {part}: {value!r}")
        return value[int(part)]
    if not hasattr(value, part.removesuffix("()")):
        raise KeyError(f"{path}: {where} ({type(value).__name__}) has no field {part!r}")
    found = getattr(value, part.removesuffix("()"))
    return found() if part.endswith("()") else found


def split_paths(path: str) -> list[str]:
    """``resources.nodes_min,tasks`` -> ``resources.nodes_min``, ``resources.tasks``, so that a
    failure names the one field that differs (a path through ``*`` stays whole: a list of tuples)."""
    prefix, _, last = path.rpartition(".")
    if "*" in path or "," not in last:
        return [path]
    return [f"{prefix}.{name}" if prefix else name for name in last.split(",")]


def ir_problems(job: ir.Job, expected: Mapping[str, object], what: str) -> list[str]:
    problems = []
    for path, wanted in expected.items():
        fields = split_paths(path)
        if len(fields) == 1:
            problems += _field_problems(job, [(path, wanted)], what)
        elif isinstance(wanted, tuple) and len(wanted) == len(fields):
            problems += _field_problems(job, zip(fields, wanted, strict=True), what)
        else:
            problems.append(f"{what} {path}: give a tuple of {len(fields)} values, not {wanted!r}")
    return problems


def _field_problems(job: ir.Job, expected: Iterable[tuple[str, object]], what: str) -> list[str]:
    return value_problems(what, expected, lambda path: ir_value(job, path))


def value_problems(
    what: str, expected: Iterable[tuple[str, object]], value_at: Callable[[str], object], verb: str = "got"
) -> list[str]:
    """Each path whose value differs from the one expected, or that names nothing (``value_at`` raises
    KeyError saying where it stops): ``what path: expected x, got y``."""
    problems = []
    for path, want in expected:
        try:
            got = value_at(path)
        except KeyError as exc:
            problems.append(f"{what} {exc.args[0]}")
            continue
        if got != want:
            problems.append(f"{what} {path}: expected {want!r}, {verb} {got!r}{_first_difference(want, got)}")
    return problems


def _first_difference(want: object, got: object) -> str:
    """Where two sequences part, for a long list whose one item differs."""
    if not isinstance(want, tuple | list) or not isinstance(got, tuple | list):
        return ""
    if len(want) != len(got):
        return f" ({len(want)} items expected, {len(got)} got)"
    n = next((n for n, (a, b) in enumerate(zip(want, got, strict=True)) if a != b), None)
    if n is None:  # the same items: a list where a tuple is (the IR holds tuples, ``*`` gives lists)
        return f" (a {type(want).__name__} expected, a {type(got).__name__} got)"
    return f" (item {n}: expected {want[n]!r}, got {got[n]!r})"


__all__ = ["ir_problems", "ir_value", "split_paths", "value_problems"]
