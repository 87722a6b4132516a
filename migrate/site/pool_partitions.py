"""The partitions of a starter ``migrate.yaml`` from the node pools Kubernetes manifests name.

A pool is what a pod selects: an instance type (``node.kubernetes.io/instance-type``,
``beta.kubernetes.io/instance-type``), an instance family
(``karpenter.k8s.aws/instance-family``) or a Karpenter NodePool; Karpenter
NodePools and Kueue ResourceFlavors name pools too, whether a scanned pod selects
them or not. Each pool is a partition: its node size from the instance types
``migrate.site.pcluster.INSTANCE_TYPES`` knows (``REPLACE-ME`` where unknown), its
``devices:`` the device resources its pods ask for, as many per node as the
instance has, and its node count the larger of what its quotas and limits allow
and what its largest service and largest batch job hold at once. Jobs that select
no pool run in the default partition: a CPU pool when there is one, else a
``cpu`` partition. A queue becomes a partition's ``queue`` only when jobs name it
and all of them land in that partition.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from migrate import ir
from migrate.devices import DeviceKind, device_type, gres_for
from migrate.site.allocation import allocate
from migrate.site.config import PLACEHOLDER, parse_site_config
from migrate.site.kube_partition import kube_partition
from migrate.site.pcluster import INSTANCE_TYPES, InstanceType
from migrate.site.pool_model import INSTANCE_FAMILY_KEY, INSTANCE_TYPE_KEYS, NODEPOOL_KEY, NodePools
from migrate.vocab import WRAPPER_KINDS, Format

_POOL_KEYS = (*INSTANCE_TYPE_KEYS, INSTANCE_FAMILY_KEY, NODEPOOL_KEY)
CPU_PARTITION = "cpu"
NEURON = "aws.amazon.com/neuron"
EFA = "vpc.amazonaws.com/efa"

Selector = tuple[str, str]


@dataclass
class _Pool:
    selector: Selector
    name: str
    instance: str | None = None  # the instance type, when the pool has one
    jobs: list[ir.Job] = field(default_factory=list)
    quota_nodes: int = 0  # nodes its Kueue quotas or Karpenter limits allow

    @property
    def node(self) -> InstanceType | None:
        return INSTANCE_TYPES.get(self.instance or "")


def kube_partitions(
    jobs: Sequence[ir.Job], found: NodePools
) -> tuple[dict[str, dict[str, object]], dict[str, str]]:
    """Partitions (name -> migrate.yaml entry) and the ``gres:`` table from Kubernetes workloads, pools."""
    kube = [j for j in jobs if j.source.format == Format.KUBERNETES and j.kind not in WRAPPER_KINDS]
    pools = _pools(kube, found)
    unplaced = [j for j in kube if _selector(j) is None]
    entries = {pool.name: _entry(pool) for pool in _ordered(pools)}
    if unplaced or (kube and not entries):
        cpu = next((p.name for p in pools.values() if _is_cpu(p)), None)
        if cpu is None:
            cpu = CPU_PARTITION if CPU_PARTITION not in entries else f"{CPU_PARTITION}-default"
            entries[cpu] = {"nodes": 1, "cpus_per_node": PLACEHOLDER, "mem_gb": PLACEHOLDER}
        entries[cpu]["default"] = True
    if entries:
        _size_by_allocation(entries, kube)
        _queues(entries, kube)
    return entries, _gres(kube)


def _selector(job: ir.Job) -> Selector | None:
    """The pool label the job's pods select (the first pool key of its first component that has one)."""
    for comp in job.components:
        chosen = {kv.key: kv.value for kv in comp.resources.node_selector}
        for key in _POOL_KEYS:
            if key in chosen:
                return key, chosen[key]
    return None


def _pools(jobs: list[ir.Job], found: NodePools) -> dict[Selector, _Pool]:
    pools: dict[Selector, _Pool] = {}

    def add(selector: Selector, name: str, instance: str | None) -> _Pool:
        if selector[0] in INSTANCE_TYPE_KEYS:  # either instance-type label names the same pool
            same = next(
                (p for s, p in pools.items() if s[0] in INSTANCE_TYPE_KEYS and s[1] == selector[1]), None
            )
            if same is not None:
                return same
        return pools.setdefault(selector, _Pool(selector, name, instance))

    for job in jobs:
        selector = _selector(job)
        if selector is not None:
            key, value = selector
            add(selector, value, value if key in INSTANCE_TYPE_KEYS else None).jobs.append(job)
    for pool in found.node_pools:
        for instance in pool.instance_types:
            node = INSTANCE_TYPES.get(instance)
            made = add((INSTANCE_TYPE_KEYS[0], instance), instance, instance)
            made.quota_nodes = max(made.quota_nodes, _nodes_for(dict(pool.limits), node))
        for family in pool.families:
            add((INSTANCE_FAMILY_KEY, family), family, None)
        if not pool.instance_types and not pool.families:
            add((NODEPOOL_KEY, pool.name), pool.name, None)
    for flavor in found.flavors:
        labels = dict(flavor.labels)
        label = next((k for k in INSTANCE_TYPE_KEYS if k in labels), None)
        if label is not None:
            made = add((label, labels[label]), labels[label], labels[label])
        elif flavor.labels:
            made = add(flavor.labels[0], flavor.name, None)
        else:
            continue
        quotas = {res: n for (name, res), n in found.quotas.items() if name == flavor.name}
        made.quota_nodes = max(made.quota_nodes, _nodes_for(quotas, made.node))
    _name(pools)
    return pools


def _nodes_for(totals: dict[str, int], node: InstanceType | None) -> int:
    """Nodes a quota or limit on accelerators (else CPUs) stands for, on nodes of this type."""
    if node is None:
        return 0
    for resource, per_node in (("nvidia.com/gpu", node.gpus), (NEURON, node.neuron), ("cpu", node.vcpus)):
        if per_node and totals.get(resource):
            return -(-totals[resource] // per_node)
    return 0


def _name(pools: dict[Selector, _Pool]) -> None:
    """Instance types by family (p5, trn1); the type itself where two of a family are pools."""
    family = defaultdict(list)
    for pool in pools.values():
        if pool.instance:
            family[pool.instance.split(".", 1)[0]].append(pool)
    for prefix, members in family.items():
        for pool in members:
            pool.name = prefix if len(members) == 1 else pool.instance.replace(".", "-")  # type: ignore[union-attr]
    for pool in pools.values():
        pool.name = pool.name.replace(".", "-").replace("/", "-")


def _ordered(pools: dict[Selector, _Pool]) -> list[_Pool]:
    """Largest accelerator nodes first: a pod asking only a GPU count lands on the first that holds it."""

    def size(pool: _Pool) -> tuple[int, int, int, str]:  # GPUs, then Neuron devices, then memory
        node = pool.node
        if node is None:
            gpus = max(
                (c.resources.computed_gpus_per_node() for j in pool.jobs for c in j.components), default=0
            )
            return (-gpus, 0, 0, pool.name)
        return (-node.gpus, -node.neuron, -node.mem_gib, pool.name)

    return sorted(pools.values(), key=size)


def _is_cpu(pool: _Pool) -> bool:
    node = pool.node
    return node is not None and not node.gpus and not node.neuron


def _devices_asked(jobs: Sequence[ir.Job]) -> dict[str, int]:
    """Device resources (not GPUs) the pods ask for, the largest count per pod."""
    out: dict[str, int] = {}
    for job in jobs:
        for comp in job.components:
            for res in comp.resources.generic:
                kind = device_type(res.name)
                if kind is not None and kind.kind != DeviceKind.GPU:
                    out[res.name] = max(out.get(res.name, 0), res.count)
    return out


def _entry(pool: _Pool) -> dict[str, object]:
    node = pool.node
    entry: dict[str, object] = {"nodes": max(1, pool.quota_nodes)}
    if node is not None:
        entry["gpus_per_node"] = node.gpus
        if node.gpu_type:
            entry["gpu_type"] = node.gpu_type
        entry["cpus_per_node"] = node.vcpus
        entry["mem_gb"] = node.mem_gib
    else:
        gpus = max((c.resources.computed_gpus_per_node() for j in pool.jobs for c in j.components), default=0)
        entry["gpus_per_node"] = gpus
        entry["cpus_per_node"] = PLACEHOLDER
        entry["mem_gb"] = PLACEHOLDER
    has = {NEURON: node.neuron, EFA: node.efa} if node is not None else {}
    devices = {name: has.get(name) or count for name, count in sorted(_devices_asked(pool.jobs).items())}
    if node is not None and node.neuron and NEURON not in devices:
        devices = {NEURON: node.neuron, **devices}  # the pool's accelerators, asked for here or not
    if devices:
        entry["devices"] = devices
    entry["node_selector"] = {pool.selector[0]: pool.selector[1]}
    return entry


def _size_by_allocation(entries: dict[str, dict[str, object]], kube: Sequence[ir.Job]) -> None:
    """Each partition holds at once the largest service and the largest batch job it runs."""
    config = parse_site_config({"partitions": entries, "gres": _gres(kube)})
    largest: dict[tuple[str, bool], int] = defaultdict(int)
    for job in kube:
        alloc = allocate(job, config)
        if alloc.partition.value:
            key = (alloc.partition.value, ir.long_running(job))
            largest[key] = max(largest[key], alloc.total_nodes())
    for name, entry in entries.items():
        held = largest[(name, True)] + largest[(name, False)]
        entry["nodes"] = max(int(entry["nodes"]), held)  # type: ignore[call-overload]


def _queues(entries: dict[str, dict[str, object]], kube: Sequence[ir.Job]) -> None:
    config = parse_site_config({"partitions": entries, "gres": _gres(kube)})
    landed: dict[str, set[str | None]] = defaultdict(set)
    for job in kube:
        if job.placement.queue:
            landed[job.placement.queue].add(kube_partition(job, config).name)
    for queue in sorted(landed):
        (partition,) = landed[queue] if len(landed[queue]) == 1 else (None,)
        if partition is not None and "queue" not in entries[partition]:
            entries[partition]["queue"] = queue


def _gres(jobs: Sequence[ir.Job]) -> dict[str, str]:
    """GRES names for the accelerators (not GPUs) the pods ask for: Slurm schedules them as GRES."""
    out: dict[str, str] = {}
    for resource in _devices_asked(jobs):
        kind = device_type(resource)
        gres = gres_for(resource)
        if kind is not None and kind.kind in (DeviceKind.ACCELERATOR,) and gres:
            out.setdefault(gres, resource)
    return dict(sorted(out.items()))


__all__ = ["CPU_PARTITION", "kube_partitions"]
