"""A fan-out's ``{{item}}``: each array task's own item, as a variable its commands read.

Argo fills ``{{item}}`` (and ``{{item.KEY}}`` for a list of maps) into the
template of each task it fans out to. A Slurm array runs one script for all
its tasks, so the item becomes a variable each task sets from its own index:
``{{item}}`` in the container's command, args, env values and script source
becomes the Kubernetes reference ``$(ARGO_ITEM)``, and the job's array says
what ``ARGO_ITEM`` is for each index (``ir.ArrayValue``). The item's text is
Argo's (``workflow/controller/operator.go``, ``processItem`` and
``expandSequence``): a string as it is, a number or boolean as written, a map
or list as compact JSON with sorted keys; a sequence's item is its number in
the sequence's Go format. A placeholder elsewhere in the template (image,
working directory, resources ...), or one whose items exist only at run time
(``withParam``), stays as written and is reported.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from migrate import ir
from migrate.yamlload import LineDict, LineList

from .substitution import map_strings

_ITEM = re.compile(r"\{\{\s*item(?:\.([^\s{}]+))?\s*\}\}")
# The container fields whose $(NAME) references the kubelet expands.
_EXPANDED = ("command", "args", "source")
_GO_VERB = re.compile(r"%(%|[-+# 0]*[0-9]*[dvxXo])")
# Template keys that are no part of the pod the task runs.
_NOT_IN_THE_POD = ("name", "inputs", "outputs")
VARIABLE = "ARGO_ITEM"
_ONLY_EXPANDED = "only the command, args, env values and script source vary per task"


@dataclass(frozen=True)
class Listed:
    """``withItems``: the items, for array tasks 0, 1, ..."""

    items: tuple[Any, ...]


@dataclass(frozen=True)
class Counted:
    """``withSequence``: task ``first`` gets ``start``, each next one ``step`` more, in Go's ``format``."""

    first: int
    start: int
    step: int
    format: str = "%d"


@dataclass(frozen=True)
class AtRunTime:
    """Items known only when the workflow runs (``withParam``): ``why`` says so."""

    why: str


Source = Listed | Counted | AtRunTime


@dataclass
class Filled:
    template: LineDict
    values: tuple[ir.ArrayValue, ...] = ()
    # placeholders left as written: (what and where, why, line)
    unfilled: list[tuple[str, str, int]] = field(default_factory=list)


def fill(template: LineDict, body: str, source: Source) -> Filled:
    """``template`` with its item placeholders made variables where each array task can set its own."""
    container = template.get(body)
    if not isinstance(container, LineDict):
        return Filled(template)
    used: dict[str | None, str] = {}  # placeholder key (None: the whole item) -> variable
    values: list[ir.ArrayValue] = []
    unfilled: list[tuple[str, str, int]] = []
    reasons: dict[str | None, str] = {}

    def variable(key: str | None) -> str | None:
        if key in reasons:
            return None
        if key not in used:
            value = _value(_name(key, set(used.values())), key, source)
            if isinstance(value, str):
                reasons[key] = value
                return None
            used[key] = value.name
            values.append(value)
        return used[key]

    def change(text: str) -> str:
        def one(match: re.Match[str]) -> str:
            name = variable(match.group(1))
            return f"$({name})" if name else match.group(0)

        return _ITEM.sub(one, text)

    copy = LineDict(template.line, template.end_line)
    copy.update(template)
    copy.spans = dict(template.spans)
    filled = LineDict(container.line, container.end_line)
    filled.update(container)
    filled.spans = dict(container.spans)
    for key in _EXPANDED:
        if key in container:
            filled[key] = map_strings(container[key], change)
    if isinstance(container.get("env"), LineList):
        filled["env"] = _env_values(container["env"], change)
    copy[body] = filled
    pod_parts = LineDict(copy.line, copy.end_line)
    pod_parts.update((k, v) for k, v in copy.items() if k not in _NOT_IN_THE_POD)
    pod_parts.spans = copy.spans
    for where, text, line in _strings(pod_parts, ""):
        for match in _ITEM.finditer(text):
            why = reasons.get(match.group(1)) or _ONLY_EXPANDED
            unfilled.append((f"{match.group(0)} in {where}", why, line))
    return Filled(copy, tuple(values), unfilled)


def _env_values(env: LineList, change: Any) -> LineList:
    out = LineList(env.line, env.end_line)
    out.spans = list(env.spans)
    for var in env:
        if isinstance(var, LineDict) and isinstance(var.get("value"), str):
            copy = LineDict(var.line, var.end_line)
            copy.update(var)
            copy.spans = dict(var.spans)
            copy["value"] = change(var["value"])
            var = copy
        out.append(var)
    return out


def _strings(node: Any, where: str, line: int = 0) -> list[tuple[str, str, int]]:
    """Every string in ``node`` with its path and line."""
    if isinstance(node, str):
        return [(where, node, line)]
    found = []
    if isinstance(node, LineDict):
        for key, value in node.items():
            found += _strings(value, f"{where}.{key}" if where else str(key), node.value_line(key))
    elif isinstance(node, LineList):
        for index, value in enumerate(node):
            found += _strings(value, f"{where}[{index}]", node.item_line(index))
    return found


def _name(key: str | None, taken: set[str]) -> str:
    name = VARIABLE if key is None else f"{VARIABLE}_{re.sub(r'[^A-Za-z0-9]', '_', key).upper()}"
    unique, n = name, 2
    while unique in taken:
        unique, n = f"{name}_{n}", n + 1
    return unique


def _value(name: str, key: str | None, source: Source) -> ir.ArrayValue | str:
    """The variable's value per task, or why the tasks cannot each have theirs."""
    if isinstance(source, AtRunTime):
        return source.why
    if isinstance(source, Counted):
        if key is not None:
            return f"a withSequence item is a number, it has no field {key!r}"
        printf = printf_format(source.format)
        if printf is None:
            return f"the withSequence format {source.format!r} has no printf equivalent"
        return ir.ArrayValue(name, first=source.first, start=source.start, step=source.step, format=printf)
    if key is None:
        return ir.ArrayValue(name, tuple(item_text(item) for item in source.items))
    if not all(isinstance(item, dict) and key in item for item in source.items):
        return f"not every item is a map with the field {key!r}"
    return ir.ArrayValue(name, tuple(field_text(item[key]) for item in source.items))


def item_text(item: Any) -> str:
    """``{{item}}`` as Argo writes it: a string as it is, anything else as (compact) JSON."""
    return item if isinstance(item, str) else go_json(item)


def field_text(value: Any) -> str:
    """``{{item.KEY}}``: Argo prints the field's JSON, a string without its quotes (escapes stay)."""
    text = go_json(value).replace("\\u003c", "<").replace("\\u003e", ">").replace("\\u0026", "&")
    return text[1:-1] if isinstance(value, str) else text


def go_json(value: Any) -> str:
    """JSON as Go's ``encoding/json`` writes it: compact, map keys sorted, ``<>&`` escaped."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _go_float(value)
    if isinstance(value, dict):
        pairs = sorted((str(k), v) for k, v in value.items())
        return "{" + ",".join(f"{_go_string(k)}:{go_json(v)}" for k, v in pairs) + "}"
    if isinstance(value, list):
        return "[" + ",".join(go_json(v) for v in value) + "]"
    return _go_string(str(value))


def _go_string(text: str) -> str:
    quoted = json.dumps(text, ensure_ascii=False)
    for char, escape in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026")):
        quoted = quoted.replace(char, escape)
    return quoted.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def _go_float(value: float) -> str:
    """Go writes a float in positional notation unless it is below 1e-6 or from 1e21 on."""
    if value != value or value in (float("inf"), float("-inf")):
        return repr(value)
    size = abs(value)
    if size and (size < 1e-6 or size >= 1e21):
        return repr(value)
    text = format(Decimal(repr(value)), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def printf_format(go: str) -> str | None:
    """Go's format of one integer as bash ``printf``'s, or None when printf would print it otherwise."""
    pieces: list[str] = []
    verbs = 0
    at = 0
    while (percent := go.find("%", at)) >= 0:
        match = _GO_VERB.match(go, percent)
        if match is None:
            return None
        pieces.append(go[at:percent].replace("\\", "\\\\"))
        directive = match.group(0)
        if directive != "%%":
            verbs += 1
            directive = directive[:-1] + ("d" if directive[-1] == "v" else directive[-1])
        pieces.append(directive)
        at = match.end()
    pieces.append(go[at:].replace("\\", "\\\\"))
    return "".join(pieces) if verbs == 1 else None


__all__ = [
    "VARIABLE",
    "AtRunTime",
    "Counted",
    "Filled",
    "Listed",
    "Source",
    "fill",
    "go_json",
    "printf_format",
]
