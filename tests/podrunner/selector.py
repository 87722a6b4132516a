"""Argo's reading of a resource template's successCondition and failureCondition.

Argo (``workflow/executor/resource.go``, v4.1.2) parses each condition as a Kubernetes label
selector (``labels.Parse``: requirements joined by ``,``; ``key``, ``!key``, ``key=v``,
``key==v``, ``key!=v``, ``key in (a,b)``, ``key notin (a,b)``, ``key>n``, ``key<n``) whose keys
are gjson paths into the object's JSON (``status.replicaStatuses.Master.succeeded``; a number
picks a list item). Every success requirement must hold (AND); any failure requirement that
holds fails the task (OR), and failure is checked first. Neither condition: the task ends as
soon as the object is created. Only a failure condition: the task succeeds unless it holds.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

# A label key: an optional DNS-subdomain prefix and '/', then a name of at most 63 characters.
_NAME = r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?"
_KEY = re.compile(rf"^([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?{_NAME}$")
_VALUE = re.compile(rf"^({_NAME})?$")
_REQUIREMENT = re.compile(
    r"^\s*(?P<not>!)?\s*(?P<key>[^\s=!<>(),]+)\s*"
    r"(?:(?P<op>==|=|!=|>|<|\s(?:in|notin)\s)\s*(?P<value>\([^)]*\)|[^\s,()]*))?\s*$"
)


class SelectorError(ValueError):
    """A condition Argo would refuse to parse (the task would end in an error)."""


@dataclass(frozen=True)
class Requirement:
    key: str
    op: str  # exists, !, =, !=, in, notin, >, <
    values: tuple[str, ...] = ()

    def matches(self, obj: Any) -> bool:
        found, value = lookup(obj, self.key)
        if self.op == "exists":
            return found
        if self.op == "!":
            return not found
        if self.op in ("=", "in"):
            return found and value in self.values
        if self.op in ("!=", "notin"):
            return not found or value not in self.values
        # > and <: both sides whole numbers, else no match
        try:
            have, want = int(value), int(self.values[0])
        except ValueError:
            return False
        return found and (have > want if self.op == ">" else have < want)


def _split(text: str) -> list[str]:
    """The requirements of a selector: commas outside parentheses separate them."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def parse(text: str) -> list[Requirement]:
    if not text.strip():
        return []
    out: list[Requirement] = []
    for part in _split(text):
        match = _REQUIREMENT.match(part)
        if match is None:
            raise SelectorError(f"cannot parse requirement {part.strip()!r} of {text!r}")
        key, op, raw = match["key"], (match["op"] or "").strip(), match["value"]
        if not _KEY.match(key):
            raise SelectorError(f"{key!r} is not a valid label key (in {text!r})")
        if match["not"]:
            if op:
                raise SelectorError(f"'!' takes a key alone: {part.strip()!r}")
            out.append(Requirement(key, "!"))
            continue
        if not op:
            out.append(Requirement(key, "exists"))
            continue
        if op in ("in", "notin"):
            if raw is None or not raw.startswith("("):
                raise SelectorError(f"{op} needs a list in parentheses: {part.strip()!r}")
            values = tuple(v.strip() for v in raw[1:-1].split(","))
        else:
            values = (raw or "",)
        for value in values:
            if not _VALUE.match(value):
                raise SelectorError(f"{value!r} is not a valid label value (in {text!r})")
        if op in (">", "<") and not re.fullmatch(r"-?\d+", values[0]):
            raise SelectorError(f"{op} needs a whole number, not {values[0]!r}")
        out.append(Requirement(key, "=" if op == "==" else op, values))
    return out


def lookup(obj: Any, path: str) -> tuple[bool, str]:
    """gjson's reading of a dotted path: whether it exists, and its value as text."""
    for part in path.split("."):
        if isinstance(obj, dict) and part in obj:
            obj = obj[part]
        elif isinstance(obj, list) and part.isdigit() and int(part) < len(obj):
            obj = obj[int(part)]
        else:
            return False, ""
    if isinstance(obj, bool):
        return True, "true" if obj else "false"
    if isinstance(obj, str):
        return True, obj
    if isinstance(obj, (dict, list)):
        return True, json.dumps(obj, separators=(",", ":"))
    return True, "" if obj is None else str(obj)


def judge(success: str, failure: str, obj: Any) -> str | None:
    """Succeeded or Failed as Argo's wait on the object ends, or None: it would wait on."""
    success_reqs, failure_reqs = parse(success), parse(failure)
    if not success_reqs and not failure_reqs:
        return "Succeeded"
    if any(r.matches(obj) for r in failure_reqs):
        return "Failed"
    if all(r.matches(obj) for r in success_reqs):
        return "Succeeded"
    return None


__all__ = ["Requirement", "SelectorError", "judge", "lookup", "parse"]
