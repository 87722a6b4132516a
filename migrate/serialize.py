"""JSON round trip for the IR dataclasses.

Fields equal to their default are left out, so the JSON stays short and a
reader fills them back in; ``from_dict(type(x), to_dict(x)) == x`` always holds.
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from typing import Any, TypeVar

from migrate import ir

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
        table = _FIELD_TABLES[obj.__class__]
    except KeyError:
        table = _FIELD_TABLES[obj.__class__] = _field_table(obj.__class__)
    if table is None:
        return None
    out = {}
    for name, default in table:
        value = getattr(obj, name)
        # identity first: most fields hold their default (None, (), 0 ...) and skip the comparison
        if value is not default and (default is _NO_DEFAULT or value != default):
            out[name] = value
    return out


_NO_DEFAULT = object()  # a field without a default is always written
# Per class, built on first use: each field's name and default (None: not a dataclass).
# Looked up for every value written, so a plain dict rather than functools.cache.
_FIELD_TABLES: dict[type, tuple[tuple[str, Any], ...] | None] = {}


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


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls, vars(ir))


def from_dict(cls: type[T], data: Any) -> T:
    return typing.cast(T, _convert(cls, data))


def _convert(tp: Any, data: Any) -> Any:
    if data is None:
        return None
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        options = [a for a in typing.get_args(tp) if a is not type(None)]
        return _convert(options[0], data)
    if origin is tuple:
        (item_type, *_rest) = typing.get_args(tp)
        return tuple(_convert(item_type, v) for v in data)
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        hints = _hints(tp)
        kwargs = {
            f.name: _convert(hints[f.name], data[f.name]) for f in dataclasses.fields(tp) if f.name in data
        }
        return tp(**kwargs)
    return data


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
