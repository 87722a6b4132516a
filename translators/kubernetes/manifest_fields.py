"""Typed, line-aware access to one Kubernetes object, remembering what was read.

Every read goes through ``ObjectView``: a wrong type becomes K8S-BAD-TYPE with
the line of the field, and every path read is recorded so that whatever no
reader looked at can be kept as an ``ir.RawItem`` (nothing silently dropped).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from migrate import ir
from migrate.diagnostics import Collector
from migrate.vocab import PlaceholderRole
from migrate.yamlload import LineDict, LineList

from .manifest_templates import has_placeholder, placeholder_names

Key = str | int
Path = tuple[Key, ...]

# Server-populated metadata: noise in a migration inventory.
# A tuple rather than ``dict | list``, which would build a union at every call of the getters.
_CONTAINERS = (dict, list)
_SERVER_METADATA = frozenset(
    {
        "uid",
        "resourceVersion",
        "creationTimestamp",
        "generation",
        "managedFields",
        "selfLink",
        "ownerReferences",
    }
)
_RAW_VALUE_LIMIT = 300
# Fields that count pods or nodes: a placeholder there leaves the job's size unknown.
COUNT_FIELDS = frozenset({"replicas", "parallelism", "completions", "minAvailable", "numNodes", "nodes"})


def fmt_path(path: Path) -> str:
    """('spec', 'tasks', 0, 'template') -> 'spec.tasks[0].template'."""
    out = ""
    for key in path:
        if isinstance(key, int):
            out += f"[{key}]"
        else:
            out += f".{key}" if out else str(key)
    return out


def describe(value: Any) -> str:
    """A short, type-revealing rendering of a value for messages."""
    if isinstance(value, str):
        return f"string {value[:60]!r}"
    if isinstance(value, bool):
        return f"boolean {value}"
    if isinstance(value, int | float):
        return f"number {value}"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if value is None:
        return "null"
    return type(value).__name__


def compact(value: Any) -> str:
    """A one-line rendering of any YAML value, bounded in size, for raw items."""
    if isinstance(value, str):
        text = value
    else:
        try:
            text = json.dumps(value, default=str, sort_keys=False, separators=(",", ":"))
        except (TypeError, ValueError, RecursionError):
            text = str(value)
    if len(text) > _RAW_VALUE_LIMIT:
        text = text[: _RAW_VALUE_LIMIT - 3] + "..."
    return text


class ObjectView:
    """One object's tree, read by path, with diagnostics tied to its job."""

    def __init__(self, root: LineDict, diags: Collector, job: str | None, origin: str = "") -> None:
        self.root = root
        self.diags = diags
        self.job = job
        self.origin = origin  # path prefix for messages, e.g. 'items[2]' in a List
        self.read: set[Path] = set()
        self._reported: set[Path] = set()
        self.unresolved: list[ir.Unresolved] = []  # placeholders where a typed value was expected

    # Walking

    def _walk(self, path: Path) -> tuple[Any, bool]:
        """The value at ``path`` and whether it exists; a wrong container type is reported."""
        # The usual walk, through mappings by name and lists by index, without the checks below.
        node: Any = self.root
        for key in path:
            if key.__class__ is str and isinstance(node, dict):
                if key not in node:
                    return None, False
                node = node[key]
            elif key.__class__ is int and isinstance(node, list) and 0 <= key < len(node):
                node = node[key]
            else:
                return self._walk_checked(path)
        return node, True

    def _walk_checked(self, path: Path) -> tuple[Any, bool]:
        node: Any = self.root
        for depth, key in enumerate(path):
            if isinstance(key, int):
                if not isinstance(node, list) or not 0 <= key < len(node):
                    return None, False
                node = node[key]
                continue
            if node is None:
                return None, False
            if not isinstance(node, dict):
                self.bad_type(path[:depth], "a mapping", node)
                return None, False
            if key not in node:
                return None, False
            node = node[key]
        return node, True

    def get(self, path: Path) -> Any:
        """The value at ``path`` (None if missing).

        A scalar is marked as read. A mapping or a list is not: the fields in it
        that nobody reads still become raw items. ``touch`` marks a whole subtree.
        """
        value = self._walk(path)[0]
        if not isinstance(value, _CONTAINERS):
            self.read.add(path)
        return value

    def get_at(self, parent: Any, path: Path, key: str) -> Any:
        """``get((*path, key))`` when ``parent`` is the value at ``path``: read from ``parent``, not
        walked to from the root again (the fields of each env entry, mount or volume are many)."""
        if not isinstance(parent, dict):
            return self.get((*path, key))  # the walk reports what is wrong on the way
        value = parent.get(key)
        if not isinstance(value, _CONTAINERS):
            self.read.add((*path, key))
        return value

    def has_at(self, parent: Any, path: Path, key: str) -> bool:
        """``has((*path, key))`` when ``parent`` is the value at ``path``."""
        if not isinstance(parent, dict):
            return self.has((*path, key))
        return key in parent

    def peek(self, path: Path) -> Any:
        """The value at ``path`` without marking it as read."""
        return self._walk(path)[0]

    def has(self, path: Path) -> bool:
        return self._walk(path)[1]

    def touch(self, path: Path) -> None:
        """Mark a path as read without looking at it (consumed elsewhere, or deliberately left out)."""
        self.read.add(path)

    def line(self, path: Path) -> int:
        """The line of the key (or list item) at the end of ``path``; the closest known line."""
        if not path:
            return self.root.line
        parent, _ = self._walk(path[:-1]) if len(path) > 1 else (self.root, True)
        return self.line_at(parent, path)

    def line_at(self, parent: Any, path: Path) -> int:
        """``line(path)`` when ``parent`` is the value at ``path[:-1]``."""
        key = path[-1]
        if isinstance(parent, LineDict) and not isinstance(key, int) and key in parent:
            return parent.key_line(key)
        if isinstance(parent, LineList) and isinstance(key, int):
            return parent.item_line(key)
        if isinstance(parent, LineDict | LineList):
            return parent.line
        return self.line(path[:-1])

    def value_line(self, path: Path) -> int:
        """The first line of the value's content (after a block scalar's indicator)."""
        if not path:
            return self.root.line
        parent, _ = self._walk(path[:-1]) if len(path) > 1 else (self.root, True)
        key = path[-1]
        if isinstance(parent, LineDict) and not isinstance(key, int) and key in parent:
            return parent.value_line(key)
        if isinstance(parent, LineList) and isinstance(key, int):
            return parent.item_line(key)
        return self.line(path)

    # Typed getters: a wrong type is reported once and read as missing.

    def placeholder(self, path: Path, value: str, role: PlaceholderRole | None = None) -> None:
        """A typed field that holds a template placeholder: read as unknown, never as a default."""
        if role is None:
            role = PlaceholderRole.NODES if path and path[-1] in COUNT_FIELDS else PlaceholderRole.OTHER
        where = fmt_path((*self._origin_path(), *path))
        for name in placeholder_names(value):
            self.unresolved.append(ir.Unresolved(name, role, where, self.line(path)))

    def bad_type(self, path: Path, expected: str, value: Any) -> None:
        if has_placeholder(value):
            if path not in self._reported:
                self._reported.add(path)
                self.placeholder(path, value)
            return  # templated values are covered by the one K8S-TEMPLATED of the file
        if path in self._reported:
            return  # reported once
        self._reported.add(path)
        where = fmt_path((*self._origin_path(), *path)) or "the object"
        self.diags.add(
            "K8S-BAD-TYPE", f"{where}: expected {expected}, got {describe(value)}", self.line(path), self.job
        )

    def _origin_path(self) -> Path:
        return (self.origin,) if self.origin else ()

    def mapping(self, path: Path) -> LineDict | None:
        value = self.get(path)
        if value is None or isinstance(value, LineDict):
            return value
        self.bad_type(path, "a mapping", value)
        return None

    def sequence(self, path: Path) -> LineList | None:
        value = self.get(path)
        if value is None or isinstance(value, LineList):
            return value
        self.bad_type(path, "a list", value)
        return None

    def integer(self, path: Path) -> int | None:
        value = self.get(path)
        if value is None:
            return None
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, str) and (
            value.strip().lstrip("+-").isascii() and value.strip().lstrip("+-").isdigit()
        ):
            # The API server rejects a quoted number for an integer field; the intent is clear though.
            self.bad_type(path, "an integer (quoted numbers are rejected)", value)
            return int(value.strip())
        self.bad_type(path, "an integer", value)
        return None

    def string(self, path: Path) -> str | None:
        return self._as_string(path, self.get(path))

    def string_at(self, parent: Any, path: Path, key: str) -> str | None:
        """``string((*path, key))`` when ``parent`` is the value at ``path``."""
        return self._as_string((*path, key), self.get_at(parent, path, key))

    def _as_string(self, path: Path, value: Any) -> str | None:
        if value is None or isinstance(value, str):
            return value
        if isinstance(value, bool | int | float):
            self.bad_type(path, "a string", value)
            return str(value)
        self.bad_type(path, "a string", value)
        return None

    def boolean(self, path: Path) -> bool | None:
        return self._as_boolean(path, self.get(path))

    def boolean_at(self, parent: Any, path: Path, key: str) -> bool | None:
        """``boolean((*path, key))`` when ``parent`` is the value at ``path``."""
        return self._as_boolean((*path, key), self.get_at(parent, path, key))

    def _as_boolean(self, path: Path, value: Any) -> bool | None:
        if value is None or isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("true", "false"):
            self.bad_type(path, "a boolean (quoted booleans are rejected)", value)
            return value.lower() == "true"
        self.bad_type(path, "a boolean", value)
        return None

    def strings(self, path: Path) -> list[str]:
        """A list of scalars (values, targets, access modes), read whole."""
        found = self.sequence(path)
        if not found:
            return []
        self.touch(path)
        return [str(item) for item in found if not isinstance(item, dict | list)]

    def string_map(self, path: Path) -> list[tuple[str, str]]:
        """A map of strings (labels, annotations, nodeSelector) as ordered pairs, read whole."""
        found = self.mapping(path)
        if not found:
            return []
        self.touch(path)
        pairs = []
        for key, value in found.items():
            if isinstance(value, str):
                pairs.append((str(key), value))
            elif isinstance(value, bool | int | float):
                self.bad_type((*path, str(key)), "a string", value)
                pairs.append((str(key), str(value).lower() if isinstance(value, bool) else str(value)))
            elif value is None:
                pairs.append((str(key), ""))
            else:
                self.bad_type((*path, str(key)), "a string", value)
        return pairs

    def items(self, path: Path) -> Iterator[tuple[Path, Any]]:
        """Each item of the list at ``path`` with its own path."""
        found = self.sequence(path)
        for index, item in enumerate(found or ()):
            yield (*path, index), item

    # Leftovers

    def leftovers(self, start: Path = ()) -> list[ir.RawItem]:
        """Raw items for every field under ``start`` that no reader looked at."""
        raw: list[ir.RawItem] = []
        read: _ReadTree | None = _read_tree(self.read)
        for key in start:
            read = read.get(key) if read is not None else None
        self._collect(start, self._walk(start)[0], raw, read)
        return raw

    def _collect(self, path: Path, node: Any, raw: list[ir.RawItem], read: _ReadTree | None) -> None:
        """``read``: what was read at ``path`` and below (None: nothing)."""
        if read is not None and _WHOLE in read:
            return
        if read is None:
            if path and not self._server_noise(path):
                key = path[-1]
                raw.append(
                    ir.RawItem(
                        key=str(key) if not isinstance(key, int) else fmt_path(path[-2:]),
                        value=compact(node),
                        line=self.line(path),
                        origin=fmt_path((*self._origin_path(), *path)),
                    )
                )
            return
        if isinstance(node, dict):
            for key in node:
                self._collect((*path, key), node[key], raw, read.get(key))
        elif isinstance(node, list):
            for index, item in enumerate(node):
                self._collect((*path, index), item, raw, read.get(index))

    @staticmethod
    def _server_noise(path: Path) -> bool:
        if path[0] == "status":
            return True
        return len(path) >= 2 and path[-2] == "metadata" and path[-1] in _SERVER_METADATA


# A tree of the paths read: each key's subtree, and under _WHOLE whether the path itself was read.
# Walked along with the object, it tells what is left without hashing a path for every node.
_ReadTree = dict[Any, Any]
_WHOLE = object()


def _read_tree(paths: set[Path]) -> _ReadTree:
    root: _ReadTree = {}
    for path in paths:
        node = root
        for key in path:
            child = node.get(key)
            if child is None:
                child = node[key] = {}
            node = child
        node[_WHOLE] = True
    return root
