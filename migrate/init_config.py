"""A starter ``migrate.yaml`` filled with what a scan found.

Everything the files name (file systems, partitions, node pools, accounts, QOS, GPU types,
modules, environments, container images, queues) gets an entry; what only the
site knows (node counts, PVC names, registry images) is a ``REPLACE-ME``
placeholder, so that plan and translate say so instead of guessing. The result
parses with ``migrate.site.config.parse_site_config_text`` once written.

Only literal partitions, accounts, QOS and GPU types become entries
(``--partition=$part`` names no partition; jobs that name none run in a default
partition that waits for its name), and only host paths become file systems: a path inside a
container that no mount brings from the host is in the image.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from typing import TypeGuard

import yaml

from migrate import ir
from migrate.graph.storage import StorageResolver
from migrate.names import dns1123_label
from migrate.site.allocation_hints import fabric_uses
from migrate.site.allocation_model import FabricKind
from migrate.site.config import PLACEHOLDER, SiteConfig
from migrate.site.pool_model import NodePools
from migrate.site.pool_partitions import kube_partitions
from migrate.vocab import WRAPPER_KINDS, Format, MountKind, PlaceholderRole

# A value still to be expanded by the shell or a template engine: $part, ${ACCOUNT}, `cmd`, {{ x }}.
_DYNAMIC = re.compile(r"[$`{}<>%*?]")


def _literal(value: str | None) -> TypeGuard[str]:
    return bool(value) and not _DYNAMIC.search(value or "")


def _top(path: str) -> str:
    return "/" + path.strip("/").split("/", 1)[0] if path.startswith("/") else ""


def _image_tops(job: ir.Job) -> set[str]:
    """Top folders that are the container's own: mount targets and working folders not from the host."""
    inside: set[str] = set()
    host: set[str] = set()
    for comp in job.components:
        for container in comp.containers:
            for mount in container.mounts:
                inside.add(_top(mount.target))
                host.add(_top(mount.source or ""))
            if container.workdir:
                inside.add(_top(container.workdir))
    return inside - host - {"", "/"}


# The device a fast network's variables ask for, as the usual device plugins name it.
_FABRIC_DEVICES = {
    FabricKind.EFA: "vpc.amazonaws.com/efa",
    FabricKind.INFINIBAND: "rdma/rdma_shared_device_a",
}


def _partition_entry(name: str, jobs: list[ir.Job]) -> dict[str, object]:
    nodes = max((j.total_nodes() for j in jobs), default=1)
    gpus = max((c.resources.computed_gpus_per_node() for j in jobs for c in j.components), default=0)
    types = Counter(c.resources.gpu_type for j in jobs for c in j.components if c.resources.gpu_type)
    entry: dict[str, object] = {"nodes": nodes, "gpus_per_node": gpus}
    if types:
        entry["gpu_type"] = types.most_common(1)[0][0]
    # What a node holds is not in any script: whole-node jobs and pod sizes need it from the site.
    entry["cpus_per_node"] = PLACEHOLDER
    entry["mem_gb"] = PLACEHOLDER
    fabrics = sorted({use.kind for j in jobs for c in j.components for use in fabric_uses(j, c)})
    if fabrics:  # the scripts tune EFA or InfiniBand: the pods need the device on these nodes
        entry["devices"] = {_FABRIC_DEVICES[kind]: PLACEHOLDER for kind in fabrics}
    entry["queue"] = f"{dns1123_label(name)}-queue"
    entry["node_selector"] = {"node.kubernetes.io/instance-type": PLACEHOLDER}
    return entry


def starter_config(
    jobs: Iterable[ir.Job], site: str = "site", pools: NodePools | None = None
) -> tuple[dict[str, object], list[str]]:
    """The starter configuration as plain data, and the PVC claims the manifests already use.

    ``pools``: the node pools and queues the scanned manifests name (``scan.node_pools``).
    """
    job_list = list(jobs)
    resolver = StorageResolver(SiteConfig())
    filesystems: dict[str, str] = {}
    for job in job_list:
        in_image = _image_tops(job)
        for loc in resolver.locations(job):
            fs = loc.filesystem
            if fs.prefix.startswith("/") and _top(fs.prefix) not in in_image:
                filesystems.setdefault(fs.prefix, str(fs.kind))  # plain: yaml writes no other string type
    # A claim the pods mount is a shared file system the Slurm nodes need at the same path: where
    # the pods mount it most often. What it is (Lustre, NFS ...) only the site knows.
    claim_paths: dict[str, Counter[str]] = {}
    for j in job_list:
        for c in j.components:
            for ct in c.containers:
                for m in ct.mounts:
                    if m.kind == MountKind.PVC and m.source:
                        claim_paths.setdefault(m.source, Counter())[m.target] += 1
    claims = sorted(claim_paths)
    claimed: dict[str, str] = {}
    for claim in claims:
        path = claim_paths[claim].most_common(1)[0][0]
        if path.startswith("/") and path != "/" and path not in filesystems and path not in claimed:
            claimed[path] = claim
    by_partition: dict[str, list[ir.Job]] = {}
    for job in job_list:
        for part in job.placement.partitions:
            if _literal(part):
                by_partition.setdefault(part, []).append(job)
    images: dict[str, str] = {}
    for job in job_list:  # keys as the scripts write them, dynamic or not: that is how they are looked up
        for module in job.modules:
            images.setdefault(f"module:{module}", PLACEHOLDER)
        for env in job.software_envs:
            images.setdefault(f"{env.key}:{env.value}" if env.key == "conda" else env.value, PLACEHOLDER)
        for image in job.images():
            if image.startswith("/") or image.endswith((".sif", ".sqsh")):
                images.setdefault(image, PLACEHOLDER)  # a file on disk: Kubernetes needs a registry image
    accounts = sorted({j.placement.account for j in job_list if _literal(j.placement.account)})
    qos = sorted({j.placement.qos for j in job_list if _literal(j.placement.qos)})
    gpu_types = sorted(
        {c.resources.gpu_type for j in job_list for c in j.components if _literal(c.resources.gpu_type)}
    )
    partitions = {name: _partition_entry(name, by_partition[name]) for name in sorted(by_partition)}
    kube, gres = kube_partitions(job_list, pools or NodePools())
    for name, entry in kube.items():
        partitions.setdefault(name, entry)
    unnamed = [j for j in job_list if _runs_in_default_partition(j)]
    has_default = any(entry.get("default") for entry in partitions.values())
    if (unnamed and not has_default) or not partitions:
        # Jobs without --partition run in the cluster's default one: the site names it.
        entry = _partition_entry(PLACEHOLDER, unnamed or job_list)
        del entry["queue"]  # no manifest names a queue for it
        partitions[PLACEHOLDER] = {**entry, "default": True}
    data: dict[str, object] = {
        "site": site,
        "filesystems": sorted(
            [
                *(
                    {"prefix": prefix, "kind": kind, "pvc": f"{dns1123_label(prefix.strip('/'))}-pvc"}
                    for prefix, kind in filesystems.items()
                ),
                *({"prefix": prefix, "kind": PLACEHOLDER, "pvc": claim} for prefix, claim in claimed.items()),
            ],
            key=lambda fs: str(fs["prefix"]),
        ),
        "partitions": partitions,
        "images": dict(sorted(images.items())),
        "accounts": {a: dns1123_label(a) for a in accounts},
        "qos": {q: f"batch-{dns1123_label(q)}" for q in qos},
        "gpu_products": {t: PLACEHOLDER for t in gpu_types},
        **({"gres": gres} if gres else {}),
        "defaults": {"image": PLACEHOLDER, "namespace": "default"},
    }
    return data, [c for c in claims if c not in claimed.values()]


def _runs_in_default_partition(job: ir.Job) -> bool:
    """A Slurm job that names no partition: it runs in the cluster's default one."""
    return (
        job.source.format == Format.SLURM and job.kind not in WRAPPER_KINDS and not job.placement.partitions
    )


_HEADER = """\
# Site configuration for migrate, written by `migrate init` from a scan.
# Replace every REPLACE-ME with what only the site knows; plan and translate
# report each placeholder they meet. Keys: see migrate/site/config.py.
# partitions.*.nodes and gpus_per_node are the largest request seen in the
# scanned jobs, a lower bound: set them to the partition's real size.
# cpus_per_node, mem_gb and devices are what one node holds; a partition named
# REPLACE-ME (default: true) is where the jobs that name no --partition run:
# rename it to the cluster's default partition. Partitions of Kubernetes node
# pools take their node size from the instance type; the pods that select no
# pool run in the default: true one. Until filled in, a REPLACE-ME count is
# read as not given.
"""


def placeholders(text: str) -> int:
    """How many values of a starter configuration are still ``REPLACE-ME`` (comments do not count)."""
    return _count(yaml.safe_load(text))


def _count(node: object) -> int:
    if isinstance(node, dict):
        return sum((key == PLACEHOLDER) + _count(value) for key, value in node.items())
    if isinstance(node, list):
        return sum(_count(value) for value in node)
    return int(node == PLACEHOLDER)


def render_starter(jobs: Iterable[ir.Job], site: str = "site", pools: NodePools | None = None) -> str:
    jobs = list(jobs)
    data, claims = starter_config(jobs, site, pools)
    text = _HEADER
    if claims:
        text += "# PVC claims the Kubernetes manifests already use: " + ", ".join(claims) + "\n"
        text += "# (list them under the file system they expose: filesystems[].pvc)\n"
    text += template_variables(jobs)
    return text + yaml.safe_dump(data, sort_keys=False, default_flow_style=False, allow_unicode=True)


def template_variables(jobs: Iterable[ir.Job]) -> str:
    """Comment lines naming each variable the scanned templates lack, what it sizes and where it is first.

    They are comments, not settings: the values belong to a run (--set, --env-file), not to the site.
    """
    first: dict[str, tuple[str, str]] = {}
    for job in jobs:
        for item in job.unresolved:
            where = f"{job.source.path}:{item.line}" if item.line else job.source.path
            known = first.get(item.name)
            if known is None or (known[0] == PlaceholderRole.OTHER and item.role != PlaceholderRole.OTHER):
                first[item.name] = (str(item.role), where)
    if not first:
        return ""
    width = max(len(name) for name in first)
    lines = [
        "# Template variables the scanned files have no value for; give them to scan, plan and",
        "# translate with --set NAME=VALUE or --env-file FILE (see docs/templates.md):",
        *(f"#   {name:<{width}}  {role:<5}  {where}" for name, (role, where) in sorted(first.items())),
    ]
    return "\n".join(lines) + "\n"
