"""The ConfigMaps of a job's own manifest file, read again for their data.

The IR keeps the scripts the reader analysed, not every key of a ConfigMap nor
which key a container runs, so the writer reads the file once more (the same
safe loader as the reader) when a job mounts or references a ConfigMap.
ConfigMaps in other files are not looked for: the scripts then read the files
at run time and a diagnostic says what to provision.
"""

from __future__ import annotations

import os

from migrate.diagnostics import Collector
from migrate.translators.kubernetes.yamlload import load_documents

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


def for_job(path: str, namespace: str | None) -> dict[str, dict[str, str]]:
    """name -> data for the ConfigMaps a job in ``namespace`` can see in its own file."""
    out: dict[str, dict[str, str]] = {}
    for (ns, name), data in read(path).items():
        if ns in (None, namespace) or namespace is None:
            out.setdefault(name, data)
    return out


__all__ = ["for_job", "read"]
