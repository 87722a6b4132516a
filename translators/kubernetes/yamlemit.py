"""A small block-style YAML emitter that can place comments beside keys.

PyYAML cannot write comments, and inserting them into its output afterwards
would mean finding keys in text again. This emitter walks the manifest itself
and writes the structure; every scalar (keys too) is either a plain word that
provably reads back as the same string, or is quoted by PyYAML's own emitter.
So no value can add structure, and comments are sanitised to one line.

Comments are keyed by path: ``("spec", "template", "spec", "containers", 0,
"resources")`` puts ``# ...`` on the line above that key.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import yaml

_Dumper: type = getattr(yaml, "CSafeDumper", yaml.SafeDumper)

Path = tuple[str | int, ...]

# A plain scalar is safe when it only has these characters and does not start
# with an indicator; resolver look-alikes (true, 1.5, null, 0o7 ...) are quoted.
_PLAIN = re.compile(r"[A-Za-z_/][A-Za-z0-9_./-]*\Z")
_LOOKS_TYPED = re.compile(
    r"(?:y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF"
    r"|null|Null|NULL|~|[-+]?\.(?:inf|Inf|INF|nan|NaN|NAN))\Z"
)
_PRINTABLE_ASCII = re.compile(r"[\x20-\x7e]*\Z")
_SIMPLE_KEY_MAX = 1000
_NOT_IN_COMMENT = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\ufeff]+")


@dataclass
class Manifest:
    """One Kubernetes object and the comments to write beside its fields."""

    body: dict[str, Any]
    comments: dict[Path, list[str]] = field(default_factory=dict)

    @property
    def kind(self) -> str:
        return str(self.body.get("kind", ""))

    @property
    def name(self) -> str:
        return str(self.body.get("metadata", {}).get("name", ""))

    def note(self, path: Path, text: str) -> None:
        """Add a comment above ``path`` (once; the same text twice is kept once)."""
        notes = self.comments.setdefault(path, [])
        if text not in notes:
            notes.append(text)


def scalar(value: object) -> str:
    """One scalar as YAML text that reads back as exactly ``value``."""
    if type(value) is not str:
        return _written(value)
    known = _SCALARS.get(value)
    if known is None:
        if len(_SCALARS) >= _SCALARS_MAX:
            _SCALARS.clear()
        known = _SCALARS[value] = _written(value)
    return known


# Keys and many values are the same strings in every manifest of every job: each is spelled once.
_SCALARS: dict[str, str] = {}
_SCALARS_MAX = 16384


def _written(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        if _PLAIN.match(value) and not _LOOKS_TYPED.match(value):
            return value
        if _PRINTABLE_ASCII.match(value):  # single quotes need no escapes for these: only '' for '
            return "'" + value.replace("'", "''") + "'"
    text = _dump(value, None)
    if "\n" in text:  # folded quotes span lines, which a key or a list item cannot: escape instead
        text = _dump(value, '"')
    return text


def _dump(value: object, style: str | None) -> str:
    text: str = yaml.dump(value, Dumper=_Dumper, width=1 << 30, allow_unicode=False, default_style=style)
    if text.endswith("\n...\n"):
        text = text[: -len("\n...\n")]
    return text.rstrip("\n")


@lru_cache(maxsize=256)  # the entrypoint and shims are the same text in every job
def _block_text(value: str, indent: int) -> str | None:
    """A multi-line string as a literal block, or None when YAML needs quotes for it."""
    text: str = yaml.dump(value, Dumper=_Dumper, default_style="|", width=1 << 30, allow_unicode=False)
    if not text.startswith("|"):
        return None
    header, _, body = text.partition("\n")
    if "+" in header:  # kept trailing blank lines: quoting is clearer than re-indenting them
        return None
    pad = " " * indent
    lines = [pad + line[2:] if line else "" for line in body.split("\n")]
    while lines and lines[-1] == "":
        lines.pop()
    return header + "\n" + "\n".join(lines)


def comment_line(text: str) -> str:
    """A comment that stays one line whatever it quotes."""
    return "# " + _NOT_IN_COMMENT.sub(" ", text).strip()


class _Writer:
    def __init__(self, comments: Mapping[Path, list[str]]) -> None:
        self.comments = comments
        self.out: list[str] = []

    def notes(self, path: Path, pad: str) -> None:
        for text in self.comments.get(path, ()):
            self.out.append(pad + comment_line(text))

    def mapping(self, data: Mapping[str, Any], path: Path, indent: int, first_prefix: str | None) -> None:
        pad = " " * indent
        for i, (key, value) in enumerate(data.items()):
            here = (*path, key)
            lead = first_prefix if (i == 0 and first_prefix is not None) else pad
            if self.comments.get(here):
                if i == 0 and first_prefix is not None:
                    # a comment cannot sit between "- " and its first key: put it above the item
                    self.out.append(first_prefix.rstrip())
                    lead = pad
                self.notes(here, pad)
            key_text = scalar(key)
            if len(key_text) > _SIMPLE_KEY_MAX:  # YAML readers refuse longer implicit keys
                self.out.append(lead + "? " + key_text)
                lead = pad
                key_text = ""
            self.entry(lead + key_text + ":", value, here, indent)

    def entry(self, head: str, value: Any, path: Path, indent: int) -> None:
        if isinstance(value, dict) and value:
            self.out.append(head)
            self.mapping(value, path, indent + 2, None)
        elif isinstance(value, list | tuple) and value:
            self.out.append(head)
            self.sequence(value, path, indent)
        else:
            self.out.append(head + " " + self.inline(value, indent + 2))

    def sequence(self, items: Sequence[Any], path: Path, indent: int) -> None:
        pad = " " * indent
        for i, item in enumerate(items):
            here = (*path, i)
            self.notes(here, pad)
            if isinstance(item, dict) and item:
                self.mapping(item, here, indent + 2, pad + "- ")
            elif isinstance(item, list | tuple) and item:
                self.out.append(pad + "-")
                self.sequence(item, here, indent + 2)
            else:
                self.out.append(pad + "- " + self.inline(item, indent + 2))

    def inline(self, value: Any, indent: int) -> str:
        if isinstance(value, dict):
            return "{}"
        if isinstance(value, list | tuple):
            return "[]"
        if isinstance(value, str) and "\n" in value:
            block = _block_text(value, indent)
            if block is not None:
                return block
        return scalar(value)


def dump(manifest: Manifest) -> str:
    """One object as a YAML document (no ``---``)."""
    writer = _Writer(manifest.comments)
    writer.notes((), "")
    writer.mapping(manifest.body, (), 0, None)
    return "\n".join(writer.out) + "\n"


def dump_all(manifests: Sequence[Manifest], header: Sequence[str] = ()) -> str:
    """Several objects as one multi-document file, with optional header comments."""
    parts = [comment_line(h) + "\n" for h in header]
    for i, manifest in enumerate(manifests):
        parts.append(("---\n" if i or header else "") + dump(manifest))
    return "".join(parts)


__all__ = ["Manifest", "comment_line", "dump", "dump_all", "scalar"]
