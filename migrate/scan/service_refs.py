"""The scan's second pass: Services of one file that select the pods of a workload in another.

A file is read on its own, so a Service kept apart from the Deployment or
StatefulSet whose pods it selects (``etcd-service.yaml`` beside ``etcd.yaml``)
is read for context and attached to nothing. Once every file is read, the
Services that selected nothing in their own file are matched against the pod
labels of every long-running workload of the same namespace; a match adds the
Service's name and ports to the workload, as if both were in one file. The
plan then sees what clients use to reach it (a rendezvous store named by its
Service, a server behind it).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from migrate import ir
from migrate.scan import files
from migrate.scan.results import FileResult
from migrate.scan.templates import Values
from migrate.translators.kubernetes import client_ports
from migrate.translators.kubernetes.kinds import WorkloadKind
from migrate.translators.kubernetes.object_kinds import ObjectKind
from migrate.vocab import Format
from migrate.yamlload import load_documents, spelling

_CONTEXT = "K8S-IGNORED-KIND"  # the reader read an object for context: a Service may be among them
_SERVICE_KIND = re.compile(rb"^kind:\s*['\"]?Service['\"]?\s*$", re.MULTILINE)
_SERVICE_WORD = spelling(ObjectKind.SERVICE)  # only the documents that may be a Service are parsed again


@dataclass(frozen=True, slots=True)
class Service:
    name: str
    namespace: str
    selector: tuple[tuple[str, str], ...]
    ports: tuple[int, ...]


def link(
    results: list[FileResult], values: Values = (), read: Mapping[str, list[Service]] | None = None
) -> list[FileResult]:
    """The results with the workloads that a Service of another file selects given that Service;
    ``read``: :func:`services_in` of files read ahead, by path (the others are read here)."""
    services = [s for r in results if offers(r) for s in _unattached(r, values, read)]
    if not services:
        return results
    out = list(results)
    for index, result in enumerate(results):
        if result.format != Format.KUBERNETES or not any(job.services for job in result.jobs):
            continue
        jobs = [_with_services(job, services) for job in result.jobs]
        if any(new is not old for new, old in zip(jobs, result.jobs, strict=True)):
            out[index] = replace(result, jobs=jobs)
    return out


def takes_part(result: FileResult, data: bytes) -> bool:
    """Whether :func:`link` may take a Service from the file or give one to its workloads."""
    if result.format != Format.KUBERNETES:
        return False
    return any(job.services for job in result.jobs) or (
        offers(result) and _SERVICE_KIND.search(data) is not None
    )


def offers(result: FileResult) -> bool:
    """A manifest file that read an object (a Service among them) for context only: :func:`link`
    reads its Services."""
    return result.format == Format.KUBERNETES and any(d.code == _CONTEXT for d in result.diagnostics)


def _unattached(
    result: FileResult, values: Values, read: Mapping[str, list[Service]] | None
) -> list[Service]:
    """The Services of a file that select no workload of that file."""
    found = read.get(result.path) if read is not None else None
    if found is None:
        found = services_in(result.path, values)
    attached = {a for job in result.jobs for s in job.services for a in s.addresses}
    return [s for s in found if s.name not in attached]


def services_in(path: str, values: Values = (), data: bytes | None = None) -> list[Service]:
    """The Services of a file with a name and a selector; ``data``: its bytes, else read again
    from disk."""
    again = files.manifest_again(path, values, _SERVICE_KIND, data)
    if again is None:
        return []
    text, quiet = again
    found = []
    for doc in load_documents(text, quiet, wanted=_SERVICE_WORD):
        obj = doc.data
        if (
            not isinstance(obj, dict)
            or obj.get("kind") != ObjectKind.SERVICE
            or obj.get("apiVersion") != "v1"
        ):
            continue
        meta = _mapping(obj.get("metadata"))
        spec = _mapping(obj.get("spec"))
        name = meta.get("name")
        selector = spec.get("selector")
        if not isinstance(name, str) or not isinstance(selector, dict) or not selector:
            continue
        ports = tuple(
            p["port"] for p in spec.get("ports") or () if isinstance(p, dict) and _is_port(p.get("port"))
        )
        pairs = tuple(sorted((str(k), str(v)) for k, v in selector.items()))
        found.append(Service(name, str(meta.get("namespace") or "default"), pairs, ports))
    return found


def _mapping(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _is_port(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 < value < 65536


def _with_services(job: ir.Job, services: list[Service]) -> ir.Job:
    namespace = job.placement.namespace or "default"
    workload = client_ports.by_ir_kind(job.kind)
    changed = []
    for entry in job.services:
        labels = {kv.key: kv.value for kv in entry.pod_labels}
        labels |= dict(workload.member_labels) if workload is not None else {}  # some pods have them
        # a Service of the operator's own ports only (a Ray head's dashboard) is no client's
        chosen = [
            kept
            for s in services
            if s.namespace == namespace and all(labels.get(k) == v for k, v in s.selector)
            if (kept := _for_clients(s, entry, workload)) is not None
        ]
        if not chosen:
            changed.append(entry)
            continue
        addresses = tuple(sorted({*entry.addresses, *(s.name for s in chosen)}))
        ports = tuple(dict.fromkeys((*entry.ports, *(p for s in chosen for p in s.ports))))
        changed.append(replace(entry, addresses=addresses, ports=ports))
    if all(new is old for new, old in zip(changed, job.services, strict=True)):
        return job
    return replace(job, services=tuple(changed))


def _for_clients(service: Service, entry: ir.Service, workload: WorkloadKind | None) -> Service | None:
    """The Service with only the ports clients use; None when it has ports and none of them is."""
    if workload is None or not service.ports:
        return service
    ports = client_ports.for_clients(workload, service.ports, client_ports.serves(entry.ports, workload))
    return replace(service, ports=tuple(ports)) if ports else None


__all__ = ["Service", "link", "offers", "services_in", "takes_part"]
