"""Node pools and queues the scanned manifests name, read again for ``migrate init``.

The readers take Karpenter NodePools, Kueue ResourceFlavors and ClusterQueues and
Volcano Queues as context: they run nothing. ``migrate init`` needs what they say
about the nodes (instance types, node labels, quotas and limits), so, as
``kueue_refs`` does for admission, the Kubernetes files of a scan are read once
more here and those objects summed up.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from migrate.diagnostics import Collector
from migrate.scan import files, templates
from migrate.scan.results import FileResult
from migrate.scan.templates import Values
from migrate.site.pool_model import (
    INSTANCE_FAMILY_KEY,
    INSTANCE_SIZE_KEY,
    INSTANCE_TYPE_KEYS,
    Flavor,
    NodePool,
    NodePools,
)
from migrate.translators.kubernetes.object_kinds import ObjectKind
from migrate.translators.kubernetes.quantities import parse_quantity
from migrate.vocab import Format
from migrate.yamlload import load_documents

_GROUPS = re.compile(rb"^apiVersion:\s*['\"]?(karpenter\.sh|kueue\.x-k8s\.io|scheduling\.volcano\.sh)/", re.M)


def read_node_pools(results: Iterable[FileResult], values: Values = ()) -> NodePools:
    """What the Kubernetes files of a scan say about node pools and queues."""
    found = NodePools()
    for result in results:
        if result.format == Format.KUBERNETES:
            _read(result.path, values, found)
    return found


def _read(path: str, values: Values, found: NodePools) -> None:
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError:
        return  # gone since the scan read it
    if not _GROUPS.search(data):
        return
    quiet = Collector(path)  # the scan reported this file's problems already
    text = templates.fill(files.decode(data, quiet), Format.KUBERNETES, values)
    for doc in load_documents(text, quiet):
        obj = doc.data
        if not isinstance(obj, dict):
            continue
        group = str(obj.get("apiVersion") or "").split("/", 1)[0]
        meta, spec = _mapping(obj.get("metadata")), _mapping(obj.get("spec"))
        name, kind, line = meta.get("name"), obj.get("kind"), doc.line
        if not isinstance(name, str):
            continue
        if group == "karpenter.sh" and kind == ObjectKind.NODE_POOL:
            found.node_pools.append(_node_pool(name, path, line, spec))
        elif group == "kueue.x-k8s.io" and kind == ObjectKind.RESOURCE_FLAVOR:
            labels = _mapping(spec.get("nodeLabels"))
            found.flavors.append(
                Flavor(name, path, line, tuple(sorted((str(k), str(v)) for k, v in labels.items())))
            )
        elif group == "kueue.x-k8s.io" and kind == ObjectKind.CLUSTER_QUEUE:
            _cluster_queue(name, spec, found)
        elif (
            group == "kueue.x-k8s.io"
            and kind == ObjectKind.LOCAL_QUEUE
            and isinstance(spec.get("clusterQueue"), str)
        ):
            found.local_queues[name] = spec["clusterQueue"]
        elif group == "scheduling.volcano.sh" and kind == ObjectKind.QUEUE:
            found.volcano_queues.append(name)


def _node_pool(name: str, path: str, line: int, spec: dict[str, Any]) -> NodePool:
    template = _mapping(_mapping(spec.get("template")).get("spec"))
    allowed: dict[str, list[str]] = {}
    for req in template.get("requirements") or ():
        if isinstance(req, dict) and req.get("operator") == "In" and isinstance(req.get("key"), str):
            allowed[req["key"]] = [str(v) for v in req.get("values") or ()]
    types = next((allowed[key] for key in INSTANCE_TYPE_KEYS if key in allowed), [])
    families = allowed.get(INSTANCE_FAMILY_KEY, [])
    sizes = allowed.get(INSTANCE_SIZE_KEY, [])
    if not types and families and sizes:
        types = [f"{family}.{size}" for family in families for size in sizes]
    limits = tuple(
        sorted(
            (str(k), int(q))
            for k, v in _mapping(spec.get("limits")).items()
            if (q := parse_quantity(v)) is not None
        )
    )
    return NodePool(name, path, line, tuple(types), tuple(families) if not types else (), limits)


def _cluster_queue(name: str, spec: dict[str, Any], found: NodePools) -> None:
    names: list[str] = []
    for group in spec.get("resourceGroups") or ():
        for flavor in (group.get("flavors") or ()) if isinstance(group, dict) else ():
            if not isinstance(flavor, dict) or not isinstance(flavor.get("name"), str):
                continue
            names.append(flavor["name"])
            for res in flavor.get("resources") or ():
                if isinstance(res, dict) and isinstance(res.get("name"), str):
                    quota = parse_quantity(res.get("nominalQuota"))
                    if quota is not None:
                        key = (flavor["name"], res["name"])
                        found.quotas[key] = found.quotas.get(key, 0) + int(quota)
    found.cluster_queues[name] = names


def _mapping(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


__all__ = ["read_node_pools"]
