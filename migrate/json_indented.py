"""Indented JSON text, fast: what ``json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)`` gives
(or another indent, keys in their order).

The standard library writes indented JSON with its pure Python encoder, one
nested generator per level and one small string per token; for a plan of
100,000 jobs that is tens of millions of strings held in a list before the
join. Here each small list and object is joined as soon as its items are
written (lists of strings, most of a plan, in one pass in C), and the long
lists at the top go into the result piece by piece, joined once. The bytes
are the same, which the tests check against ``json.dumps``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from json.encoder import encode_basestring
from typing import Any

_FLAT_LEVELS = 2  # the top object and the lists in it: where a large document's bulk is


def dumps(value: Any, end: str = "", indent: int = 2, sort_keys: bool = True) -> str:
    """``json.dumps(value, indent=indent, sort_keys=sort_keys, ensure_ascii=False) + end``, for JSON-ready
    data.

    An iterator is written as a list, each item encoded as soon as it is made:
    a caller can hand over a long list without building it first.
    """
    out: list[str] = []
    _write(value, "\n", out, _FLAT_LEVELS, " " * indent, sorted if sort_keys else list)
    out.append(end)
    return "".join(out)


Order = Callable[[Iterable[tuple[Any, Any]]], list[tuple[Any, Any]]]  # an object's members as written


def _write(value: Any, newline: str, out: list[str], levels: int, step: str, order: Order) -> None:
    """``value`` into ``out``; the first ``levels`` levels of lists and objects piece by piece.

    A document's bulk sits in a few long lists near the top: written as pieces
    of one list and joined once, the text is never copied from part to whole.
    """
    if levels == 0 or not isinstance(value, list | tuple | Iterator | dict):
        out.append(_encode(value, newline, step, order))
        return
    inner = newline + step
    if isinstance(value, dict):
        opening, closing, items = "{", "}", order(value.items())
    else:
        opening, closing, items = "[", "]", list(value)
    if not items:
        out.append(opening + closing)
        return
    out.append(opening)
    separator = inner
    for item in items:
        out.append(separator)
        separator = "," + inner
        if opening == "{":
            key, item = item
            out.append((encode_basestring(key) if type(key) is str else _key(key)) + ": ")
        _write(item, inner, out, levels - 1, step, order)
    out.append(newline + closing)


def _encode(value: Any, newline: str, step: str, order: Order) -> str:
    """``value`` as JSON; ``newline`` is a line break followed by the indent of ``value``'s own line,
    ``step`` one level's indent."""
    if isinstance(value, str):
        return encode_basestring(value)
    scalar = _scalar(value)
    if scalar is not None:
        return scalar
    if isinstance(value, list | tuple | Iterator):
        inner = newline + step
        items = [encode_basestring(v) if type(v) is str else _encode(v, inner, step, order) for v in value]
        return "[" + inner + ("," + inner).join(items) + newline + "]" if items else "[]"
    if isinstance(value, dict):
        inner = newline + step
        members = [
            (encode_basestring(k) if type(k) is str else _key(k))
            + ": "
            + (encode_basestring(v) if type(v) is str else _encode(v, inner, step, order))
            for k, v in order(value.items())
        ]
        return "{" + inner + ("," + inner).join(members) + newline + "}" if members else "{}"
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _float(value: float) -> str:
    # json writes the non-finite values as JavaScript spells them
    if value != value:
        return "NaN"
    if value == float("inf"):
        return "Infinity"
    if value == -float("inf"):
        return "-Infinity"
    return float.__repr__(value)


def _scalar(value: Any) -> str | None:
    """null, a boolean or a number as JSON text; None for anything else."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float):
        return _float(value)
    return None


def _key(key: Any) -> str:
    """An object key as json writes it: strings as they are, numbers, booleans and null as text."""
    if isinstance(key, str):
        return encode_basestring(key)
    scalar = _scalar(key)
    if scalar is None:
        raise TypeError(f"keys must be str, int, float, bool or None, not {type(key).__name__}")
    return encode_basestring(scalar)
