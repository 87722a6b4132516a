"""The ConfigMaps of a manifest file that its jobs use, kept in the IR for the writers.

A job that mounts a ConfigMap of its own file, or reads variables from one, is
written for Slurm with that data (its scripts become files, its keys
variables): ``ir.Job.config_maps`` carries it, so that no writer reads the file
again. ConfigMaps in other files are not looked for: the scripts then read the
files at run time and the writer says what to provision.

A literal credential in a ConfigMap never reaches the IR: a script is rewritten
to read it from a variable, a credential-like key is left out, and either way
the variable is named in ``credentials``.
"""

from __future__ import annotations

from migrate import ir
from migrate.translators.shell.conceal import conceal
from migrate.translators.shell.redact import literal_credential
from migrate.vocab import MountKind, SecretKind
from migrate.yamlload import Document

from .object_kinds import ObjectKind

Found = dict[tuple[str | None, str], dict[str, str]]  # (namespace, name) -> {key: text}


def used_by(job: ir.Job) -> set[str]:
    """The ConfigMaps a job mounts or reads variables from, by name."""
    mounted = {
        m.source
        for c in job.components
        for k in c.containers
        for m in k.mounts
        if m.kind == MountKind.CONFIG_MAP and m.source is not None
    }
    referenced = {
        v.secret.name
        for c in job.components
        for v in c.environment
        if v.secret is not None and v.secret.kind == SecretKind.CONFIG_MAP
    }
    return mounted | referenced


def in_file(documents: list[Document]) -> Found:
    """Every ConfigMap of the file with its text values; a later one of the same name wins."""
    found: Found = {}
    for doc in documents:
        for obj in _objects(doc.data):
            meta = obj.get("metadata")
            data = obj.get("data")
            if (
                obj.get("kind") != ObjectKind.CONFIG_MAP
                or not isinstance(meta, dict)
                or not isinstance(data, dict)
            ):
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
    if data.get("kind") == ObjectKind.LIST and isinstance(items, list):
        return [i for i in items if isinstance(i, dict)]
    return [data]


def for_job(job: ir.Job, found: Found) -> tuple[ir.ConfigMapData, ...]:
    """The ConfigMaps of the file that ``job`` uses and can see from its namespace, credentials out."""
    used = used_by(job)
    namespace = job.placement.namespace
    out: dict[str, ir.ConfigMapData] = {}
    seen: set[str] = set()
    for (ns, name), data in found.items():
        if (ns in (None, namespace) or namespace is None) and name not in seen:
            seen.add(name)  # the first one of that name the job can see
            if name in used:
                out[name] = _without_credentials(name, data)
    return tuple(out.values())


def _without_credentials(name: str, data: dict[str, str]) -> ir.ConfigMapData:
    kept: list[ir.KeyValue] = []
    found: list[ir.ConfigCredential] = []
    for key, value in data.items():
        if key.endswith((".sh", ".bash")) or value.startswith("#!"):
            concealed = conceal(value)
            found.extend(ir.ConfigCredential(h.variable, key) for h in concealed.hidden)
            kept.append(ir.KeyValue(key, concealed.text))
        elif literal_credential(key, value):
            found.append(ir.ConfigCredential(key, key))
        else:
            kept.append(ir.KeyValue(key, value))
    return ir.ConfigMapData(name, tuple(kept), tuple(dict.fromkeys(found)))


__all__ = ["Found", "for_job", "in_file", "used_by"]
