"""The ConfigMaps of a job's own manifest file, read again for their data.

The IR keeps the scripts the reader analysed, not every key of a ConfigMap nor
which key a container runs, so the writer reads the file once more (the same
safe loader as the reader) when a job mounts or references a ConfigMap.
ConfigMaps in other files are not looked for: the scripts then read the files
at run time and a diagnostic says what to provision.

A literal credential in a ConfigMap never reaches the generated files: a script
is rewritten to read it from a variable, a credential-like key is left out, and
either way the variable is listed in ``credentials`` so that the job script
reads it from a provisioned file.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from migrate.diagnostics import Collector
from migrate.translators.shell.conceal import conceal
from migrate.translators.shell.redact import literal_credential
from migrate.yamlload import load_documents

_MAX_BYTES = 1 << 20


def read(path: str) -> dict[tuple[str | None, str], dict[str, str]]:
    """(namespace, name) -> {key: text} of every ConfigMap in the file; empty when unreadable."""
    try:
        if os.path.getsize(path) > _MAX_BYTES:
            return {}
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except (OSError, UnicodeDecodeError):
        return {}
    found: dict[tuple[str | None, str], dict[str, str]] = {}
    for doc in load_documents(text.replace("\r\n", "\n"), Collector(path)):
        for obj in _objects(doc.data):
            meta = obj.get("metadata")
            data = obj.get("data")
            if obj.get("kind") != "ConfigMap" or not isinstance(meta, dict) or not isinstance(data, dict):
                continue
            name, namespace = meta.get("name"), meta.get("namespace")
            if isinstance(name, str):
                ns = namespace if isinstance(namespace, str) else None
                found[(ns, name)] = {str(k): v for k, v in data.items() if isinstance(v, str)}
    return found


def _objects(data: object) -> list[dict[str, object]]:
    if not isinstance(data, dict):
        return []
    items = data.get("items")
    if data.get("kind") == "List" and isinstance(items, list):
        return [i for i in items if isinstance(i, dict)]
    return [data]


@dataclass(frozen=True)
class Credential:
    """A variable that now stands for a literal credential of a ConfigMap."""

    variable: str
    config_map: str
    key: str


class ConfigMaps(dict[str, dict[str, str]]):
    """name -> data, without literal credentials; ``credentials`` names the variables that replace them."""

    credentials: tuple[Credential, ...] = ()


def for_job(path: str, namespace: str | None) -> ConfigMaps:
    """The ConfigMaps a job in ``namespace`` can see in its own file, credentials taken out."""
    out = ConfigMaps()
    found: list[Credential] = []
    for (ns, name), data in read(path).items():
        if (ns in (None, namespace) or namespace is None) and name not in out:
            out[name] = _without_credentials(name, data, found)
    out.credentials = tuple(dict.fromkeys(found))
    return out


def _without_credentials(name: str, data: dict[str, str], found: list[Credential]) -> dict[str, str]:
    kept = {}
    for key, value in data.items():
        if key.endswith((".sh", ".bash")) or value.startswith("#!"):
            concealed = conceal(value)
            found.extend(Credential(h.variable, name, key) for h in concealed.hidden)
            kept[key] = concealed.text
        elif literal_credential(key, value):
            found.append(Credential(key, name, key))
        else:
            kept[key] = value
    return kept


__all__ = ["ConfigMaps", "Credential", "for_job", "read"]
