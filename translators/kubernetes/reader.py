"""Kubernetes manifests -> IR jobs: one ir.Job per workload object, the other objects as context.

``sniff`` is a cheap look at the head of a file; ``read`` never raises. The
work is split by concern: ``yamlload`` (safe parsing), ``manifest_templates``
(Helm and envsubst), ``manifest_context`` (non-workload objects),
``manifest_workloads`` (one object -> one job, driven by the ``kinds`` table)
and ``manifest_pods`` (one pod template).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import replace
from functools import partial
from typing import TypeVar

from migrate import ir, workloads
from migrate.diagnostics import Collector
from migrate.translators.argo import fields as argo_fields
from migrate.translators.interfaces import NO_CONTEXT, ReadContext
from migrate.translators.katib import reader as katib_reader
from migrate.vocab import DependencyType, JobKind
from migrate.yamlload import Document, LineDict, LineList, load_documents

from . import embedded, kinds, pod_templates, torchx
from . import manifest_configmaps as configmaps
from . import manifest_templates as templates
from .manifest_context import FileContext, K8sObject, read_context
from .manifest_fields import describe
from .manifest_workloads import build_job
from .raw_keys import RAW_KEYS

_T = TypeVar("_T")

_SNIFF_HEAD = 64 * 1024
_TOP_API_VERSION = re.compile(r"^[\"']?apiVersion[\"']?[ \t]*:", re.MULTILINE)
_TOP_KIND = re.compile(r"^[\"']?kind[\"']?[ \t]*:", re.MULTILINE)
_TOP_LIST = re.compile(r"^kind[ \t]*:[ \t]*[\"']?List[\"']?[ \t]*(?:#.*)?$", re.MULTILINE)
_JSON_KEYS = re.compile(r"\"apiVersion\"\s*:.*\"kind\"\s*:|\"kind\"\s*:.*\"apiVersion\"\s*:", re.DOTALL)


def sniff(text: str) -> bool:
    """Whether a file looks like Kubernetes manifests, from its head and without parsing YAML.

    A shell script holds manifests only in here-documents fed to kubectl; a
    Dockerfile, a Makefile or a document quoting YAML holds none.
    """
    text = text.lstrip("\ufeff")
    if embedded.shell_script(text):
        inner = embedded.heredoc_manifests(text)
        return (inner is not None and _sniff_yaml(inner)) or bool(torchx.launches(text[:_SNIFF_HEAD]))
    if embedded.other_language(text) is not None:
        return False
    return _sniff_yaml(text)


def _sniff_yaml(text: str) -> bool:
    head = text[:_SNIFF_HEAD]
    if _TOP_API_VERSION.search(head) and _TOP_KIND.search(head):
        return True
    if _TOP_LIST.search(head):
        return True
    if not (head.lstrip().startswith("{") and _JSON_KEYS.search(head)):
        return False
    # JSON is cheap to parse: only an object with apiVersion and kind at the top is a
    # manifest (`kubectl get -o json`), not any JSON document that quotes one.
    try:
        doc = json.loads(text)
    except ValueError:
        return True  # a broken manifest: the reader reports where
    return isinstance(doc, dict) and "apiVersion" in doc and "kind" in doc


def read(text: str, path: str, diags: Collector, scan: ReadContext = NO_CONTEXT) -> list[ir.Job]:
    """Every workload of a manifest file as an ir.Job; problems go to ``diags``. A manifest needs
    nothing beyond its text: ``scan`` is what the scan hands every reader."""
    text = text.lstrip("\ufeff")
    launched: list[ir.Job] = []
    if embedded.shell_script(text):  # the manifests of its kubectl here-documents, at their lines
        launched = torchx.jobs(text, path, diags)  # and the jobs its torchx commands submit
        text = embedded.heredoc_manifests(text) or ""
    helm_lines = templates.template_lines(text)
    documents = load_documents(text, diags, templated=bool(helm_lines))
    objects = list(_objects(documents, diags))
    _note_own_output(objects, diags)
    placeholders = _placeholders(documents) if templates.may_hold_placeholders(text) else []
    template_lines = sorted({*helm_lines, *(line for line, _ in placeholders)})
    if template_lines:
        diags.add("K8S-TEMPLATED", _templated_message(helm_lines, placeholders), template_lines[0])
    context = FileContext()
    workloads: list[tuple[K8sObject, kinds.WorkloadKind]] = []
    experiments: list[K8sObject] = []
    for obj in objects:
        workload = kinds.workload_kind(obj.group, obj.kind)
        role = pod_templates.spark_role(obj.kind, obj.data)
        if katib_reader.is_experiment(obj.group, obj.kind):
            experiments.append(obj)
        elif role is not None:
            what = f"{obj.kind}/{obj.name or '-'}"
            how = f"its container is named spark-kubernetes-{role}"
            diags.add(pod_templates.CODE, pod_templates.message(what, role, how), obj.line)
        elif workload is not None:
            workloads.append((obj, workload))
        else:
            _guarded(partial(_read_non_workload, obj, context, diags), obj, None, diags)
    jobs = []
    ids: set[str] = set()
    for obj, workload in workloads:
        job_id = _unique_id(f"{path}#{workload.ir_kind}/{obj.name or f'unnamed-{obj.document}'}", ids)
        job = _guarded(partial(build_job, obj, workload, job_id, path, context, diags), obj, job_id, diags)
        if job is None:
            continue
        start, end = _span(obj, documents)
        if any(start <= line <= end for line in template_lines):
            inside = [(line, name) for line, name in placeholders if start <= line <= end]
            job = replace(job, templated=True, unresolved=_unresolved(job.unresolved, inside))
        jobs.append(job)
    for obj in experiments:  # read after the file's other objects: its trials may use their context
        job_id = _unique_id(f"{path}#{JobKind.KATIB_EXPERIMENT}/{obj.name or f'unnamed-{obj.document}'}", ids)
        read_experiment = partial(katib_reader.read, obj, job_id, path, context, documents, diags)
        jobs.extend(_guarded(read_experiment, obj, job_id, diags) or [])
    return [*_attach_config_maps(_attach_flows(jobs, context), documents), *launched]


def _guarded(work: Callable[[], _T], obj: K8sObject, job_id: str | None, diags: Collector) -> _T | None:
    """Run the reading of one object; a bug on one odd object must not lose the file's others."""
    try:
        return work()
    except Exception as exc:  # the reader never raises: the failure becomes a diagnostic
        what = f"{obj.kind}/{obj.name or '-'}"
        diags.add("INTERNAL-ERROR", f"{what} not read: {type(exc).__name__}: {exc}", obj.line, job_id)
        return None


# Objects


def _objects(documents: list[Document], diags: Collector) -> Iterator[K8sObject]:
    for doc in documents:
        if not isinstance(doc.data, LineDict):
            what = describe(doc.data)
            diags.add("K8S-NOT-AN-OBJECT", f"document {doc.index + 1} is {what}, not an object", doc.line)
            continue
        obj = _object(doc.data, doc, "", diags)
        if obj is None:
            continue
        items = doc.data.get("items")
        if obj.kind in kinds.LIST_KINDS or (obj.kind.endswith("List") and isinstance(items, list)):
            yield from _list_items(doc, items, diags)
        else:
            yield obj


def _list_items(doc: Document, items: object, diags: Collector) -> Iterator[K8sObject]:
    if not isinstance(items, LineList):
        return
    for index, item in enumerate(items):
        line = items.item_line(index)
        if not isinstance(item, LineDict):
            diags.add("K8S-NOT-AN-OBJECT", f"items[{index}] of the list is not an object", line)
            continue
        obj = _object(item, doc, f"items[{index}]", diags)
        if obj is not None:
            yield obj


def _object(data: LineDict, doc: Document, origin: str, diags: Collector) -> K8sObject | None:
    kind = data.get("kind")
    api_version = data.get("apiVersion")
    where = origin or f"document {doc.index + 1}"
    if not isinstance(kind, str) or not kind:
        diags.add("K8S-NOT-AN-OBJECT", f"{where} has no kind: not a Kubernetes object", data.line)
        return None
    if not isinstance(api_version, str) or not api_version:
        diags.add("K8S-MISSING-FIELD", f"{where}: apiVersion is missing for kind {kind}", data.line)
        api_version = _guess_api_version(kind)
    group, _ = kinds.split_api_version(api_version)
    metadata = data.get("metadata")
    name = namespace = None
    if isinstance(metadata, dict):
        raw_name = metadata.get("name") or metadata.get("generateName")
        name = str(raw_name) if isinstance(raw_name, str | int) and not isinstance(raw_name, bool) else None
        raw_namespace = metadata.get("namespace")
        namespace = str(raw_namespace) if isinstance(raw_namespace, str) else None
    if name is None and kind not in kinds.LIST_KINDS and pod_templates.spark_role(kind, data) is None:
        diags.add("K8S-MISSING-FIELD", f"{where}: metadata.name is missing for kind {kind}", data.line)
    return K8sObject(
        data, doc.index, data.line, data.end_line, origin, api_version, group, kind, name, namespace
    )


def _note_own_output(objects: list[K8sObject], diags: Collector) -> None:
    """Objects this tool labels as its own: its earlier output, read as such (one info).

    A scan skips the folder they were written to (with its translation.json) when it finds it
    inside a scanned folder; named on its own, it is read, as ``translate --to slurm`` reads it back.
    """
    own = [obj for obj in objects if _labels(obj).get(kinds.MANAGED_BY_LABEL) == kinds.MANAGED_BY_VALUE]
    if not own:
        return
    names = ", ".join(f"{obj.kind}/{obj.name or '-'}" for obj in own[:3]) + (" ..." if len(own) > 3 else "")
    diags.add(
        "FILE-MIGRATE-OUTPUT",
        f"{names}: labelled {kinds.MANAGED_BY_LABEL}={kinds.MANAGED_BY_VALUE}, written by migrate translate; "
        "read as that output (a scan of a folder above it skips the folder holding its translation.json)",
        own[0].line,
    )


def _labels(obj: K8sObject) -> dict[object, object]:
    metadata = obj.data.get("metadata")
    labels = metadata.get("labels") if isinstance(metadata, dict) else None
    return labels if isinstance(labels, dict) else {}


def _guess_api_version(kind: str) -> str:
    """For a missing apiVersion: the built-in kind of that name, else the core group."""
    for workload in workloads.workload_kinds():
        if workload.kind == kind and kinds.is_builtin_group(workload.group):
            return f"{workload.group}/{workload.versions[0]}" if workload.group else workload.versions[0]
    return "v1"


def _read_non_workload(obj: K8sObject, context: FileContext, diags: Collector) -> None:
    role = kinds.context_role(obj.group, obj.kind)
    what = f"{obj.kind}/{obj.name or '-'}"
    if obj.group == argo_fields.GROUP and obj.kind in argo_fields.KINDS:
        return  # the Argo reader reads workflows (migrate.translators.argo.reader)
    if role is not None:
        read_context(obj, role, context, diags)
    elif kinds.is_ignored(obj.group, obj.kind):
        diags.add("K8S-IGNORED-KIND", f"{what}: not a workload; ignored", obj.line)
    else:
        diags.add(
            "K8S-UNKNOWN-KIND",
            f"{what} ({obj.api_version}): a kind this version cannot read; not translated",
            obj.line,
        )


# Templates


def _placeholders(documents: list[Document]) -> list[tuple[int, str]]:
    return [found for doc in documents for found in templates.placeholders(doc.data)]


def _templated_message(helm_lines: list[int], placeholders: list[tuple[int, str]]) -> str:
    if helm_lines:
        return "the file is a template (Helm/Go template syntax); render it first (helm template, ...)"
    names = list(dict.fromkeys(name for _, name in placeholders))
    shown = ", ".join(f"${name}" for name in names)
    return (
        f"the file is a template; no value for {shown}: the fields that hold them are read as unknown "
        "(give the values with --set NAME=VALUE or --env-file FILE)"
    )


def _unresolved(typed: tuple[ir.Unresolved, ...], inside: list[tuple[int, str]]) -> tuple[ir.Unresolved, ...]:
    """The typed placeholders a reader met, then every other one of the object (as plain values)."""
    named = {u.name for u in typed}
    rest = [ir.Unresolved(name, line=line) for line, name in inside if name not in named]
    return (*typed, *dict.fromkeys(rest))


def _span(obj: K8sObject, documents: list[Document]) -> tuple[int, int]:
    for doc in documents:
        if doc.index == obj.document:
            return doc.start_line, doc.end_line
    return obj.line, obj.end_line


# Ids and cross-object links


def _unique_id(candidate: str, taken: set[str]) -> str:
    job_id, n = candidate, 1
    while job_id in taken:
        n += 1
        job_id = f"{candidate}~{n}"
    taken.add(job_id)
    return job_id


def _attach_config_maps(jobs: list[ir.Job], documents: list[Document]) -> list[ir.Job]:
    """The data of the ConfigMaps each job uses, so that writers need not read the file again."""
    if not any(configmaps.used_by(job) for job in jobs):
        return jobs
    found = configmaps.in_file(documents)
    out = []
    for job in jobs:
        data = configmaps.for_job(job, found)
        out.append(replace(job, config_maps=data) if data else job)
    return out


def _attach_flows(jobs: list[ir.Job], context: FileContext) -> list[ir.Job]:
    """A JobFlow's steps become dependencies of the jobs it names (when they are in the file)."""
    if not context.flows:
        return jobs
    by_name = {job.name: job.id for job in jobs if job.name}
    out = []
    for job in jobs:
        extra = [
            ir.Dependency(
                DependencyType.DEPENDS_ON,
                tuple(by_name.get(t, t) for t in flow.targets),
                any_of=False,
                line=flow.line,
            )
            for flow in context.flows
            if flow.name == job.name and flow.targets
        ]
        if extra:
            note = [
                RAW_KEYS.item("jobflow", flow.flow, flow.line, "JobFlow")
                for flow in context.flows
                if flow.name == job.name
            ]
            job = replace(job, dependencies=(*job.dependencies, *extra), raw=(*job.raw, *note))
        out.append(job)
    return out
