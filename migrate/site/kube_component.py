"""One Kubernetes role's allocation: its pods packed onto nodes, then allocated as Slurm would.

``pod_allocation`` says how many pods share a node and what Slurm request they
amount to; that request goes through the same ``allocation_resources.component``
as an sbatch job's options, so that defaults, ``--exclusive`` and what exceeds a
node are worked out once. The result then says it came from pods: the node count
cites the packing, and a non-GPU accelerator (Neuron, Gaudi, TPU) is counted
where GPUs are, with its resource name beside it.
"""

from __future__ import annotations

from migrate import ir
from migrate.render import plural
from migrate.site import pod_allocation
from migrate.site.allocation_model import ComponentAllocation, NodeType, Provenance, Source, Sourced
from migrate.site.allocation_resources import OptionDetails, component
from migrate.site.config import KubernetesSettings, PartitionConfig

_LAUNCHER_NODE = Provenance(
    Source.OPTION, "the MPI Operator's Launcher pod: its mpirun runs in the batch step, on the first node"
)


def kube_components(
    job: ir.Job,
    name: str | None,
    part: PartitionConfig | None,
    node: NodeType | None,
    say: OptionDetails,
    label: str,
    settings: KubernetesSettings,
) -> tuple[ComponentAllocation, ...]:
    """Every role of a workload; roles whose pods are alike (a Master and its Workers) pack together.

    The first such role holds the pods of all of them; the others hold none, and say with whom.
    """
    out: list[ComponentAllocation] = []
    first_of: dict[ir.Resources, int] = {}
    merged: dict[int, list[ir.Component]] = {}
    for index, comp in enumerate(job.components):
        if pod_allocation.is_launcher(job, comp):
            continue
        lead = first_of.setdefault(comp.resources, index)
        merged.setdefault(lead, []).append(comp)
    for index, comp in enumerate(job.components):
        found = first_of.get(comp.resources)
        if found is None or pod_allocation.is_launcher(job, comp):
            out.append(kube_component(job, comp, index, name, part, node, say, label, settings))
        elif found == index:
            pods = sum(pod_allocation.pod_count(c) for c in merged[index])
            alike = ir.replace(
                comp, replicas=pods, pods_per_job=1, resources=ir.replace(comp.resources, nodes_min=None)
            )
            alloc = kube_component(job, alike, index, name, part, node, say, label, settings)
            if len(merged[index]) > 1:
                roles = ", ".join(c.name for c in merged[index])
                alloc = alloc._replace(
                    notes=(*alloc.notes, f"the pods of roles {roles} are alike: packed together")
                )
            out.append(alloc)
        else:
            leader = job.components[found].name
            held = Sourced(0, Provenance(Source.OPTION, f"its pods are packed with those of role {leader}"))
            alloc = kube_component(job, comp, index, name, part, node, say, label, settings)
            out.append(alloc._replace(nodes=held, nodes_max=0, tasks=held))
    return tuple(out)


def kube_component(
    job: ir.Job,
    comp: ir.Component,
    index: int,
    name: str | None,
    part: PartitionConfig | None,
    node: NodeType | None,
    say: OptionDetails,
    label: str,
    settings: KubernetesSettings,
) -> ComponentAllocation:
    packed = pod_allocation.group(job, comp, node, label, settings)
    request = ir.replace(
        comp, resources=pod_allocation.slurm_request(comp, packed), replicas=1, pods_per_job=1
    )
    alloc = component(job, request, index, name, part, node, say)
    if packed.launcher_only:
        zero = Sourced(0, _LAUNCHER_NODE)
        return alloc._replace(
            nodes=zero, nodes_max=0, tasks=zero, pods=packed.pods, pods_per_node=packed.pods_per_node
        )
    ppn = packed.pods_per_node
    nodes_detail = f"{plural(packed.pods, 'pod')}, {ppn.detail}: {plural(packed.nodes, 'node')}"
    nodes_source = Source.OPTION if ppn.source != Source.ASSUMED else Source.ASSUMED
    alloc = alloc._replace(
        nodes=Sourced(packed.nodes, Provenance(nodes_source, nodes_detail)),
        nodes_max=packed.nodes,
        pods=packed.pods,
        pods_per_node=ppn,
    )
    device = packed.accelerator
    if device is None or device.type is None or not device.type.accelerator or comp.resources.gpus_per_node:
        return alloc
    # a Neuron, Gaudi or TPU device: an accelerator for the plan, as GPUs are
    have = pod_allocation.node_count(node, device) if node is not None else None
    if packed.whole_node and have:
        count = Sourced(
            have, Provenance(Source.EXCLUSIVE, f"all {have} {device.resource} of a node of {label}")
        )
    else:
        per_node = device.quantity * ppn.value
        count = Sourced(
            per_node,
            Provenance(
                Source.OPTION,
                f"the manifest's {device.resource} request ({device.quantity} per pod) x {ppn.value}",
            ),
        )
    product: Sourced[str | None] = Sourced(
        device.type.gres or device.type.product, Provenance(Source.OPTION, device.type.product)
    )
    return alloc._replace(gpus_per_node=count, gpu_type=product, accelerator=device.resource)


__all__ = ["kube_component"]
