"""Objects several jobs share, written once per output: Kueue queues and storage claims.

``render`` turns the merged ``Needs`` of all translated jobs into files under
``kueue/`` (ResourceFlavor + ClusterQueue + LocalQueues per queue, and
WorkloadPriorityClasses) and ``storage/`` (PersistentVolumeClaims). The
content depends only on the needs and the site config, so the same input
always gives the same bytes.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from migrate.names import dns1123_label

from .kinds import MANAGED_BY_LABEL, MANAGED_BY_VALUE
from .site import Site
from .storage import claim_manifest
from .translation_context import Needs, QueueNeed, VolumeNeed
from .yamlemit import Manifest, dump_all

KUEUE_API = "kueue.x-k8s.io/v1beta1"
MANAGED = {MANAGED_BY_LABEL: MANAGED_BY_VALUE}


def _quota(site: Site, partition: str | None) -> tuple[dict[str, str], list[str]]:
    """The partition's nodes x what each gives pods: CPUs and memory less its reserve, GPUs, devices."""
    part = site.partition(partition)
    notes: list[str] = []
    if part is None or not part.nodes:
        notes.append("placeholder quotas: the partition's size is not in the site config")
        return {"cpu": "1000", "memory": "4000Gi", "nvidia.com/gpu": "0"}, notes
    settings = site.kubernetes
    per_node_cpus = max(0, (part.cpus_per_node or 0) - settings.reserved_cpus)
    per_node_gib = (part.mem_gb or 0) * (100 - settings.reserved_memory_pct) // 100
    if not part.cpus_per_node or not part.mem_gb:
        notes.append("cpu or memory per node missing from the site config: placeholder quota")
    quota = {
        "cpu": str(part.nodes * per_node_cpus or 1000),
        "memory": f"{part.nodes * per_node_gib or 4000}Gi",
        "nvidia.com/gpu": str(part.nodes * part.gpus_per_node),
    }
    for device, count in part.devices:
        name = device if "/" in device else site.extended_resource(device)
        if name is not None:
            quota[name] = str(part.nodes * count)
    return quota, notes


def queue_manifests(site: Site, queue: str, needs: list[QueueNeed], licenses: list[str]) -> list[Manifest]:
    partition = next((n.partition for n in needs if n.partition), None)
    part = site.partition(partition)
    flavor_name = dns1123_label(f"{queue}-nodes")
    flavor_spec: dict[str, Any] = {}
    if part is not None and part.node_selector:
        flavor_spec["nodeLabels"] = dict(part.node_selector)
    flavor = Manifest(
        {
            "apiVersion": KUEUE_API,
            "kind": "ResourceFlavor",
            "metadata": {"name": flavor_name, "labels": dict(MANAGED)},
            "spec": flavor_spec,
        }
    )
    flavor.note((), f"the nodes of Slurm partition {partition or '(none)'}")
    quota, notes = _quota(site, partition)
    resources = [{"name": name, "nominalQuota": value} for name, value in quota.items()]
    resources += [{"name": lic, "nominalQuota": "1"} for lic in licenses]
    cluster_queue = Manifest(
        {
            "apiVersion": KUEUE_API,
            "kind": "ClusterQueue",
            "metadata": {"name": queue, "labels": dict(MANAGED)},
            "spec": {
                "namespaceSelector": {},
                "resourceGroups": [
                    {
                        "coveredResources": [r["name"] for r in resources],
                        "flavors": [{"name": flavor_name, "resources": resources}],
                    }
                ],
            },
        }
    )
    cluster_queue.note(
        ("spec", "resourceGroups"),
        "quota = the partition's nodes x what each gives pods (its size in the site config less the "
        "kubelet's reserve, kubernetes: in migrate.yaml)",
    )
    for text in notes:
        cluster_queue.note(("spec", "resourceGroups"), text)
    if licenses:
        cluster_queue.note(
            ("spec", "resourceGroups"),
            "license counts: set each license's quota to the seats the license server has",
        )
    out = [flavor, cluster_queue]
    for ns in sorted({n.namespace or "" for n in needs}):
        meta: dict[str, Any] = {"name": queue}
        if ns:
            meta["namespace"] = ns
        meta["labels"] = dict(MANAGED)
        out.append(
            Manifest(
                {
                    "apiVersion": KUEUE_API,
                    "kind": "LocalQueue",
                    "metadata": meta,
                    "spec": {"clusterQueue": queue},
                }
            )
        )
    return out


def priority_manifest(name: str) -> Manifest:
    manifest = Manifest(
        {
            "apiVersion": KUEUE_API,
            "kind": "WorkloadPriorityClass",
            "metadata": {"name": name, "labels": dict(MANAGED)},
            "value": 0,
            "description": f"from Slurm QOS {name}",
        }
    )
    manifest.note(("value",), "set the priority of this class relative to the others")
    return manifest


def render(needs: Needs, site: Site) -> dict[str, str]:
    """Files for the shared objects; cached, since most jobs of a site need the same few."""
    key = (
        frozenset(needs.queues),
        frozenset(needs.volumes),
        frozenset(needs.priority_classes),
        frozenset(needs.licenses),
    )
    return dict(_render(*key, site))


@lru_cache(maxsize=512)
def _render(
    queues: frozenset[QueueNeed],
    volumes: frozenset[VolumeNeed],
    priority_classes: frozenset[str],
    licenses_needed: frozenset[str],
    site: Site,
) -> tuple[tuple[str, str], ...]:
    needs = Needs(set(queues), set(volumes), set(priority_classes), set(licenses_needed))
    files: dict[str, str] = {}
    by_queue: dict[str, list[QueueNeed]] = {}
    for need in sorted(needs.queues, key=lambda n: (n.queue, n.partition or "", n.namespace or "")):
        by_queue.setdefault(need.queue, []).append(need)
    licenses = sorted(needs.licenses)
    for queue, queue_needs in sorted(by_queue.items()):
        files[f"kueue/{dns1123_label(queue)}.yaml"] = dump_all(
            queue_manifests(site, queue, queue_needs, licenses)
        )
    for name in sorted(needs.priority_classes):
        files[f"kueue/priority-{dns1123_label(name)}.yaml"] = dump_all([priority_manifest(name)])
    for claim in sorted(needs.volumes, key=lambda v: (v.claim, v.namespace or "", v.prefix)):
        folder = f"storage/{dns1123_label(claim.namespace)}" if claim.namespace else "storage"
        source = site.config.source if site.config is not None and site.config.source else "site config"
        files[f"{folder}/{dns1123_label(claim.claim)}.yaml"] = dump_all([claim_manifest(claim, source)])
    return tuple(sorted(files.items()))


__all__ = ["render"]
