"""The Argo objects of a file (``Scope``) and the WorkflowTemplates among them (``Library``).

Apart from the reader so that what a scan hands it (the WorkflowTemplates of
the other files) can be named without importing the reader.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from migrate.diagnostics import Collector
from migrate.vocab import ArgoKind
from migrate.yamlload import Document, LineDict, load_documents

from . import fields


@dataclass
class Scope:
    """One Argo object: its templates and the spec around them."""

    data: LineDict  # the whole object
    kind: ArgoKind
    name: str
    namespace: str | None
    spec: LineDict
    templates: dict[str, LineDict]
    document: int
    line: int
    end_line: int


# WorkflowTemplates by (cluster scope, name): what ``templateRef`` and ``workflowTemplateRef`` name.
Library = dict[tuple[bool, str], Scope]


def scopes(text: str) -> list[Scope]:
    """Every Argo object of a file; YAML problems are the Kubernetes reader's to report."""
    out = []
    for doc in load_documents(text, Collector("-")):
        scope = scope_of(doc)
        if scope is not None:
            out.append(scope)
    return out


def library_of(found: list[Scope]) -> Library:
    return {
        (s.kind == ArgoKind.CLUSTER_WORKFLOW_TEMPLATE, s.name): s
        for s in found
        if s.kind in fields.LIBRARY_KINDS
    }


def scope_of(doc: Document) -> Scope | None:
    data = doc.data
    if not isinstance(data, LineDict) or not str(data.get("apiVersion", "")).startswith(fields.GROUP + "/"):
        return None
    try:
        kind = ArgoKind(str(data.get("kind")))
    except ValueError:
        return None
    meta: dict[str, Any] = data["metadata"] if isinstance(data.get("metadata"), dict) else {}
    name = meta.get("name") or str(meta.get("generateName") or "workflow").rstrip("-.")
    namespace = meta.get("namespace") if isinstance(meta.get("namespace"), str) else None
    spec: Any = data
    for key in fields.SPEC_PATH[kind]:
        spec = spec.get(key) if isinstance(spec, dict) else None
    spec = spec if isinstance(spec, LineDict) else LineDict(data.line, data.end_line)
    templates: dict[str, LineDict] = {}
    listed = spec.get("templates")
    for template in listed if isinstance(listed, list) else ():
        if isinstance(template, LineDict) and isinstance(template.get("name"), str):
            templates.setdefault(template["name"], template)
    return Scope(data, kind, str(name), namespace, spec, templates, doc.index, data.line, data.end_line)


__all__ = ["Library", "Scope", "library_of", "scope_of", "scopes"]
