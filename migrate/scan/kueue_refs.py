"""The scan's pass over Kueue queues: a job waiting in a LocalQueue lands on its flavor's nodes.

Kueue admits a workload into one ResourceFlavor of its ClusterQueue and adds the
flavor's ``nodeLabels`` to the pods' node selector; that is how a job that names
only ``kueue.x-k8s.io/queue-name: team-a`` ends up on p5 nodes. Once every file is
read, the LocalQueues, ClusterQueues and ResourceFlavors of the scanned manifests
are put together, and each job whose queue leads to a flavor with node labels gets
them on its pods, as admission would. Kueue tries a ClusterQueue's flavors in
order; with several, the first is taken, and the job says so in a raw item.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from migrate import ir
from migrate.scan import files
from migrate.scan.results import FileResult
from migrate.scan.templates import Values
from migrate.translators.kubernetes.object_kinds import ObjectKind
from migrate.vocab import Format
from migrate.yamlload import load_documents, spelling

_GROUP = "kueue.x-k8s.io/"
_KUEUE = re.compile(rb"^apiVersion:\s*['\"]?kueue\.x-k8s\.io/", re.MULTILINE)
_GROUP_WORD = spelling(_GROUP)  # only the documents that may be Kueue objects are parsed again


@dataclass
class _Queues:
    local: dict[tuple[str, str], str] = field(default_factory=dict)  # (namespace, LocalQueue) -> ClusterQueue
    flavors_of: dict[str, list[str]] = field(default_factory=dict)  # ClusterQueue -> flavor names, in order
    labels_of: dict[str, tuple[tuple[str, str], ...]] = field(default_factory=dict)  # flavor -> node labels


# One Kueue object as :func:`link` uses it: (kind, namespace, name, what it gives)
KueueObject = tuple[str, str, str, Any]


def link(
    results: list[FileResult], values: Values = (), read: Mapping[str, list[KueueObject]] | None = None
) -> list[FileResult]:
    """The results with each queued job's pods given its Kueue flavor's node labels; ``read``:
    :func:`objects_in` of files read ahead, by path (the others are read here)."""
    if not any(job.placement.queue for r in results if r.format == Format.KUBERNETES for job in r.jobs):
        return results
    queues = _Queues()
    for result in results:
        if result.format == Format.KUBERNETES:
            found = read.get(result.path) if read is not None else None
            _add(queues, objects_in(result.path, values) if found is None else found)
    if not queues.labels_of:
        return results
    out = list(results)
    for index, result in enumerate(results):
        if result.format != Format.KUBERNETES:
            continue
        jobs = [_admitted(job, queues) for job in result.jobs]
        if any(new is not old for new, old in zip(jobs, result.jobs, strict=True)):
            out[index] = replace(result, jobs=jobs)
    return out


def takes_part(result: FileResult, data: bytes) -> bool:
    """Whether :func:`link` may read Kueue objects from the file or give its queued jobs a flavor."""
    if result.format != Format.KUBERNETES:
        return False
    return any(job.placement.queue for job in result.jobs) or _KUEUE.search(data) is not None


def objects_in(path: str, values: Values = (), data: bytes | None = None) -> list[KueueObject]:
    """The LocalQueues, ClusterQueues and ResourceFlavors of a file; ``data``: its bytes, else read
    again from disk."""
    again = files.manifest_again(path, values, _KUEUE, data)
    if again is None:
        return []
    text, quiet = again
    found: list[KueueObject] = []
    for doc in load_documents(text, quiet, wanted=_GROUP_WORD):
        obj = doc.data
        if not isinstance(obj, dict) or not str(obj.get("apiVersion") or "").startswith(_GROUP):
            continue
        meta, spec = _mapping(obj.get("metadata")), _mapping(obj.get("spec"))
        name = meta.get("name")
        if not isinstance(name, str):
            continue
        kind = obj.get("kind")
        namespace = str(meta.get("namespace") or "default")
        if kind == ObjectKind.LOCAL_QUEUE and isinstance(spec.get("clusterQueue"), str):
            found.append((kind, namespace, name, spec["clusterQueue"]))
        elif kind == ObjectKind.CLUSTER_QUEUE:
            flavors = [
                str(flavor["name"])
                for group in spec.get("resourceGroups") or ()
                if isinstance(group, dict)
                for flavor in group.get("flavors") or ()
                if isinstance(flavor, dict) and isinstance(flavor.get("name"), str)
            ]
            found.append((kind, namespace, name, flavors))
        elif kind == ObjectKind.RESOURCE_FLAVOR:
            labels = _mapping(spec.get("nodeLabels"))
            found.append((kind, namespace, name, tuple(sorted((str(k), str(v)) for k, v in labels.items()))))
    return found


def _add(queues: _Queues, objects: list[KueueObject]) -> None:
    for kind, namespace, name, given in objects:
        if kind == ObjectKind.LOCAL_QUEUE:
            queues.local[(namespace, name)] = given
        elif kind == ObjectKind.CLUSTER_QUEUE:
            queues.flavors_of[name] = list(given)
        else:
            queues.labels_of[name] = given


def _mapping(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _admitted(job: ir.Job, queues: _Queues) -> ir.Job:
    queue = job.placement.queue
    if not queue:
        return job
    cluster_queue = queues.local.get((job.placement.namespace or "default", queue))
    flavors = [f for f in queues.flavors_of.get(cluster_queue or "", []) if queues.labels_of.get(f)]
    if not flavors:
        return job
    labels = queues.labels_of[flavors[0]]
    components = tuple(_with_labels(comp, labels) for comp in job.components)
    note = f"{queue} -> ClusterQueue {cluster_queue} -> ResourceFlavor {flavors[0]}: " + ",".join(
        f"{k}={v}" for k, v in labels
    )
    if len(flavors) > 1:
        note += f" (the first of {len(flavors)} flavors Kueue tries in order)"
    return replace(job, components=components, raw=(*job.raw, ir.RawItem("kueueFlavor", note, None, "kueue")))


def _with_labels(comp: ir.Component, labels: tuple[tuple[str, str], ...]) -> ir.Component:
    have = {kv.key for kv in comp.resources.node_selector}
    added = tuple(ir.KeyValue(k, v) for k, v in labels if k not in have)
    if not added:
        return comp
    return replace(
        comp, resources=replace(comp.resources, node_selector=(*comp.resources.node_selector, *added))
    )


__all__ = ["KueueObject", "link", "objects_in", "takes_part"]
