"""A copy of a YAML node with a function applied to every string in it, lines kept."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from migrate.yamlload import LineDict, LineList


def map_strings(node: Any, change: Callable[[str], str]) -> Any:
    """``node`` with each string ``s`` in it as ``change(s)``; mappings and lists keep their lines."""
    if isinstance(node, str):
        return change(node)
    if isinstance(node, LineDict):
        copy = LineDict(node.line, node.end_line)
        for key, value in node.items():
            copy[key] = map_strings(value, change)
        copy.spans = dict(node.spans)
        return copy
    if isinstance(node, LineList):
        items = LineList(node.line, node.end_line)
        items.extend(map_strings(value, change) for value in node)
        items.spans = list(node.spans)
        return items
    return node


__all__ = ["map_strings"]
