"""JSON round trip for the IR dataclasses.

Fields equal to their default are left out, so the JSON stays short and a
reader fills them back in; ``from_dict(type(x), to_dict(x)) == x`` always holds.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import sys
import types
import typing
from collections.abc import Callable
from typing import Any, TypeVar

from migrate import ir
from migrate.vocab import JobKind

T = TypeVar("T")


class IRVersionError(ValueError):
    """Raised when a document was written by an incompatible IR version."""


def to_dict(obj: Any) -> Any:
    fields = written_fields(obj)
    if fields is not None:
        return {name: to_dict(value) for name, value in fields.items()}
    if isinstance(obj, tuple | list):
        return [to_dict(v) for v in obj]
    return obj


def written_fields(obj: Any) -> dict[str, Any] | None:
    """The fields of a dataclass instance that differ from their defaults (values as they are),
    or None for anything else."""
    try:
        written = _WRITERS[obj.__class__]
    except KeyError:
        written = _WRITERS[obj.__class__] = _writer(obj.__class__)
    return None if written is None else written(obj)


_NO_DEFAULT = object()  # a field without a default is always written
# Per class, built on first use: the function that picks its fields (None: not a dataclass).
# Looked up for every value written, so a plain dict rather than functools.cache.
_WRITERS: dict[type, Callable[[Any], dict[str, Any]] | None] = {}


def _writer(cls: type) -> Callable[[Any], dict[str, Any]] | None:
    """A function of straight-line code for one class: every value the scan writes goes through
    one, and a loop over the fields with getattr costs twice as much."""
    table = _field_table(cls)
    if table is None:
        return None
    defaults: dict[str, Any] = {}
    lines = ["def written(obj):", "    out = {}"]
    for index, (name, default) in enumerate(table):
        lines.append(f"    value = obj.{name}")
        if default is _NO_DEFAULT:
            lines.append(f"    out[{name!r}] = value")
            continue
        # identity first: most fields hold their default (None, (), 0 ...) and skip the comparison
        defaults[f"default_{index}"] = default
        lines.append(f"    if value is not default_{index} and value != default_{index}:")
        lines.append(f"        out[{name!r}] = value")
    lines.append("    return out")
    exec("\n".join(lines), defaults)  # names are the class's own fields: identifiers
    return typing.cast(Callable[[Any], dict[str, Any]], defaults["written"])


def _field_table(cls: type) -> tuple[tuple[str, Any], ...] | None:
    if not dataclasses.is_dataclass(cls):
        return None
    table = []
    for f in dataclasses.fields(cls):
        if f.default is not dataclasses.MISSING:
            default: Any = f.default
        elif f.default_factory is not dataclasses.MISSING:
            default = f.default_factory()
        else:
            default = _NO_DEFAULT
        table.append((f.name, default))
    return tuple(table)


# Reading: one converter per type, built once. The JSON value of a number or a
# boolean is already the value; a vocabulary's spelling becomes its member (one
# object already); strings are interned, since the same origins, option names and
# paths recur in every job of a site, and a JSON reader makes a new string for each.
Converter = Callable[[Any], Any]


def from_dict(cls: type[T], data: Any) -> T:
    convert = _converter(typing.cast(Any, cls))
    return typing.cast(T, data if convert is None else convert(data))


@functools.cache
def _converter(tp: Any) -> Converter | None:
    """How to turn the JSON value of type ``tp`` into the value; None when it already is."""
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        options = [a for a in typing.get_args(tp) if a is not type(None)]
        return _converter(options[0])  # every converter passes None through
    if origin is tuple:
        return _tuple_converter(_converter(typing.get_args(tp)[0]))
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        return _dataclass_converter(tp)
    if tp is str:
        return _intern
    if tp is JobKind:
        return _job_kind
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return _member_converter(tp)  # a vocabulary: the member of that spelling
    return None


def _member_converter(vocabulary: type[enum.Enum]) -> Converter:
    """The member of that spelling, found in a table (calling the enum costs ten times more); a
    spelling it does not have raises as calling it does."""
    members = {member.value: member for member in vocabulary}

    def convert(value: Any) -> Any:
        try:
            return members[value]
        except (KeyError, TypeError):
            return vocabulary(value)

    return convert


def _job_kind(value: Any) -> Any:
    """The member of that spelling; a kind registered later (migrate/workloads.py) is its string."""
    return JobKind(value) if value in JobKind.__members__.values() else value


def _intern(value: Any) -> Any:
    return sys.intern(value) if type(value) is str else value


def _tuple_converter(item: Converter | None) -> Converter:
    if item is None:
        return lambda data: None if data is None else tuple(data)
    return lambda data: None if data is None else tuple(map(item, data))


# What differs in every job: looking these up among the ones already read would be wasted.
_ONE_PER_JOB = (ir.Job, ir.SourceRef, ir.ScriptInfo)
_NOT_A_FIELD: Any = object()
_SHARED_MAX = 4096  # equal values remembered per class, the most recently used kept


def _dataclass_converter(cls: type) -> Converter:
    hints = typing.get_type_hints(cls, vars(ir))
    fields = {f.name: _converter(hints[f.name]) for f in dataclasses.fields(cls)}
    # The IR is immutable, so equal values can be one object: the same placement, paths,
    # options and variables recur across a site's jobs.
    shared: Callable[[Any], Any] = (lambda value: value) if cls in _ONE_PER_JOB else _first_equal()
    # Made once, not once per job: an empty Placement, FailurePolicy ... is the same for all.
    made_defaults = {
        f.name: f.default_factory()
        for f in dataclasses.fields(cls)
        if f.default_factory is not dataclasses.MISSING
    }

    converter_of = fields.get

    def convert(data: Any) -> Any:
        if data is None:
            return None
        kwargs = dict(made_defaults)
        for name, value in data.items():
            field_converter = converter_of(name, _NOT_A_FIELD)
            if field_converter is _NOT_A_FIELD:
                continue  # not a field of this version: ignored, as a reader of older JSON would
            kwargs[name] = value if field_converter is None or value is None else field_converter(value)
        return shared(cls(**kwargs))

    return convert


def _first_equal() -> Callable[[Any], Any]:
    """A function that returns the first value it was given equal to its argument (bounded)."""
    return functools.lru_cache(maxsize=_SHARED_MAX)(lambda value: value)


def job_to_dict(job: ir.Job) -> dict[str, Any]:
    return typing.cast(dict[str, Any], to_dict(job))


def job_from_dict(data: dict[str, Any]) -> ir.Job:
    return from_dict(ir.Job, data)


def jobs_document(jobs: typing.Iterable[ir.Job]) -> dict[str, Any]:
    return {"ir_version": ir.IR_VERSION, "jobs": [job_to_dict(j) for j in jobs]}


def jobs_from_document(doc: dict[str, Any]) -> list[ir.Job]:
    version = doc.get("ir_version")
    if version != ir.IR_VERSION:
        raise IRVersionError(
            f"IR version {version!r} cannot be read by this version (expects {ir.IR_VERSION!r})"
        )
    return [job_from_dict(j) for j in doc.get("jobs", [])]
