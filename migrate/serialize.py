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
    fields = dataclasses.fields(cls)
    converters = [_converter(hints[f.name]) for f in fields]
    # The IR is immutable, so equal values can be one object: the same placement, paths,
    # options and variables recur across a site's jobs.
    shared: Callable[[Any], Any] = (lambda value: value) if cls in _ONE_PER_JOB else _first_equal()
    # Made once, not once per job: an empty Placement, FailurePolicy ... is the same for all.
    defaults = [_default(f) for f in fields]
    setters = ir.slot_setters(cls)
    if setters is None:
        return _keyword_converter(cls, fields, converters, defaults, shared)
    return _slot_converter(cls, fields, converters, defaults, setters, shared)


def _default(f: dataclasses.Field[Any]) -> Any:
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return _NOT_A_FIELD


def _slot_converter(
    cls: type,
    fields: tuple[dataclasses.Field[Any], ...],
    converters: list[Converter | None],
    defaults: list[Any],
    setters: dict[str, Callable[[Any, Any], None]],
    shared: Callable[[Any], Any],
) -> Converter:
    """Straight-line code that sets each slot of a new record: a new record of the IR is read
    for nearly every value of a scanned file that the table turns back into jobs, and building
    keyword arguments for ``__init__`` costs a fifth more. Keys that are not fields are ignored,
    as a reader of older JSON would."""
    scope: dict[str, Any] = {"make": object.__new__, "cls": cls, "shared": shared, "absent": _absent(cls)}
    lines = ["def convert(data):", "    if data is None:", "        return None", "    get = data.get"]
    lines.append("    new = make(cls)")
    for index, (f, convert, default) in enumerate(zip(fields, converters, defaults, strict=True)):
        scope[f"set_{index}"] = setters[f.name]
        scope[f"default_{index}"] = default
        lines.append(f"    value = get({f.name!r}, default_{index})")
        if default is _NOT_A_FIELD:
            lines += [f"    if value is default_{index}:", f"        raise absent({f.name!r})"]
        if convert is not None:  # a value left out is its default already
            scope[f"convert_{index}"] = convert
            lines += [
                f"    if value is not None and value is not default_{index}:",
                f"        value = convert_{index}(value)",
            ]
        lines.append(f"    set_{index}(new, value)")
    lines.append("    return shared(new)")
    exec("\n".join(lines), scope)  # names are the class's own fields: identifiers
    return typing.cast(Converter, scope["convert"])


def _absent(cls: type) -> Callable[[str], TypeError]:
    return lambda name: TypeError(f"{cls.__name__}.__init__() missing 1 required argument: {name!r}")


def _keyword_converter(
    cls: type,
    fields: tuple[dataclasses.Field[Any], ...],
    converters: list[Converter | None],
    defaults: list[Any],
    shared: Callable[[Any], Any],
) -> Converter:
    """For a record whose ``__init__`` may do more than set its fields: called with keywords."""
    converter_of = {f.name: convert for f, convert in zip(fields, converters, strict=True)}.get
    made_defaults = {
        f.name: default
        for f, default in zip(fields, defaults, strict=True)
        if f.default_factory is not dataclasses.MISSING
    }

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
