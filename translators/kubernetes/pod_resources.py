"""Per-pod resources, node selection and their fidelity entries, for one component.

One pod stands for one Slurm node: its requests are what Slurm allocated on
one node (``migrate.site.allocation``: the job's options, then the partition,
its node type, the site's defaults, ``--exclusive`` and, last, hints in the
script), never more than a node gives: a pod that stands for a whole node
asks for the node's allocatable CPUs and memory (its size less what the site
keeps for the kubelet, ``kubernetes:`` in migrate.yaml). Requests equal
limits so that the pod is Guaranteed, as a Slurm allocation is, except the
CPU limit of whole-node pods (``kubernetes.cpu_limits``). Where the pod gets
less than the allocation, the fidelity entry says what it ``loses``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from migrate import devices, ir
from migrate.names import dns1123_label
from migrate.render import plural
from migrate.site.allocation import allocate, missing_fabric_devices
from migrate.site.allocation_model import ComponentAllocation, FabricKind, FabricUse, Source, Sourced
from migrate.site.config import PartitionConfig
from migrate.site.task_layout import layout_text
from migrate.translators.slurm.options import format_gpus, format_memory
from migrate.vocab import GresScope

from .gpu_labels import GPU_PRODUCT, no_node_holds, product_values
from .translation_context import Context

GPU = devices.GPU.resource  # what the IR's GPUs are asked as; a MIG profile as its slice's
_MIG_TYPE = re.compile(r"[0-9]+g\.[0-9]+gb\Z")
_FEATURE = re.compile(r"[A-Za-z0-9_.\-]+\Z")
# What the site config would name for a fast network's devices, in the note that it names none.
_FABRIC_EXAMPLES = {
    FabricKind.EFA: "{vpc.amazonaws.com/efa: N} (N: the EFA interfaces of a node, 32 on a p5.48xlarge)",
    FabricKind.INFINIBAND: "{<the RDMA device plugin's resource>: N}",
}
PLACEHOLDER_FEATURE_PREFIX = "migrate.io/feature-"


@dataclass
class PodResources:
    """What the writer puts on the container and the pod for one component."""

    resources: dict[str, str] = field(default_factory=dict)  # requests (= limits)
    node_selector: dict[str, str] = field(default_factory=dict)
    node_affinity_terms: list[dict[str, Any]] = field(default_factory=list)  # ORed terms
    node_requirements: list[dict[str, Any]] = field(default_factory=list)  # matchExpressions all terms hold
    spread_one_per_node: bool = False
    exclusive_topology: str | None = None
    notes: dict[str, list[str]] = field(default_factory=dict)  # pod field -> comments
    gpus: int = 0
    cpus: int = 0  # the CPUs Slurm would have given (SLURM_CPUS_ON_NODE); the request may be less
    unlimited: set[str] = field(default_factory=set)  # resources requested without a limit (cpu)
    tolerations: list[dict[str, str]] = field(default_factory=list)  # the partition's node pool asks them

    def note(self, where: str, text: str) -> None:
        self.notes.setdefault(where, []).append(text)

    def node_selector_terms(self) -> list[dict[str, Any]]:
        """The node affinity's ORed terms, each holding the requirements every node must meet."""
        if not self.node_requirements:
            return self.node_affinity_terms
        terms = self.node_affinity_terms or [{"matchExpressions": []}]
        return [{**t, "matchExpressions": [*t["matchExpressions"], *self.node_requirements]} for t in terms]


def mib(value: int) -> str:
    """A MiB count as a Kubernetes quantity (``64Gi`` when exact)."""
    if value and value % 1024 == 0:
        return f"{value // 1024}Gi"
    return f"{value}Mi"


def component_gpus(res: ir.Resources) -> tuple[int, tuple[str, ...]]:
    """GPUs per pod and the types the options name (none, one, or several asked at once), from the
    typed fields or a ``gpu`` GRES."""
    count = res.computed_gpus_per_node()
    types = tuple(g.type for g in res.gpu_types) or ((res.gpu_type,) if res.gpu_type else ())
    for gres in res.generic:
        if gres.name == "gpu":
            if not count:
                per_node = (
                    gres.count * res.computed_tasks_per_node() if gres.per == GresScope.TASK else gres.count
                )
                count = per_node
            types = types or ((gres.type,) if gres.type else ())
    return count, types


def allocation_of(ctx: Context, index: int) -> ComponentAllocation:
    if ctx.allocation is None:
        ctx.allocation = allocate(ctx.job, ctx.site.config, ctx.option_lines, ctx.option_texts)
    return ctx.allocation.components[index]


def allocatable(ctx: Context, alloc: ComponentAllocation) -> tuple[int | None, int | None]:
    """CPUs and MiB of memory a pod can get on one of the partition's nodes: the node's, less the reserve."""
    node = alloc.node
    if node is None:
        return None, None
    settings = ctx.site.kubernetes
    cpus = max(1, node.cpus.value - settings.reserved_cpus) if node.cpus.value else None
    mem = node.mem_mb.value
    if mem:
        mem = mem * (100 - settings.reserved_memory_pct) // 100
        mem = mem // 1024 * 1024 if mem >= 1024 else mem  # whole GiB, so that the quantity reads well
    return cpus, mem or None


def build(ctx: Context, comp: ir.Component, index: int) -> PodResources:
    res = comp.resources
    out = PodResources()
    alloc = allocation_of(ctx, index)
    assert ctx.allocation is not None
    part_name = ctx.allocation.partition.value
    partition = ctx.site.partition(part_name)
    _shape(ctx, res, index, alloc)
    gpus = alloc.gpus_per_node.value
    out.gpus = gpus
    _cpu_options(ctx, res, index, gpus)
    _cpu_request(ctx, alloc, index, out)
    _memory(ctx, res, index, alloc, out)
    if gpus:
        _gpus(ctx, res, index, alloc, out, partition)
    _generic(ctx, res, index, out)
    _node_devices(ctx, alloc, index, out, part_name)
    for text in alloc.exceeds:
        ctx.diag(
            "TRANSLATE-EXCEEDS-NODE",
            f"the job asks for {text}: Slurm would not start it there, and no node holds such a pod",
        )
    if res.tmp_disk_mb:
        out.resources["ephemeral-storage"] = mib(res.tmp_disk_mb)
        ctx.fidelity.mapped(
            ctx.option("tmp", mib(res.tmp_disk_mb), index),
            "ephemeral-storage request",
            ctx.line_of("tmp", index),
        )
    if res.exclusive:
        _exclusive(ctx, res.exclusive, index, out, alloc)
    if res.constraint:
        _constraint(ctx, res.constraint, index, out)
    for kv in res.node_selector:
        out.node_selector[kv.key] = kv.value
    if partition is not None:  # the job's partition, named or the default one: its node pool
        for key, value in partition.node_selector:
            out.node_selector.setdefault(key, value)
        out.tolerations = [dict(toleration) for toleration in partition.tolerations]
    return out


def _item(ctx: Context, what: str, index: int) -> str:
    """The fidelity item of a value the allocation gave that no option of the job asked."""
    return f"allocation: {what}" + (f" (component {index})" if len(ctx.job.components) > 1 else "")


def _from_site(value: Sourced[Any]) -> bool:
    """A value the site (or --exclusive, or a hint) gave rather than the job's options."""
    return value.source not in (Source.OPTION, Source.ASSUMED) and "Slurm's default" not in value.detail


def _shape(ctx: Context, res: ir.Resources, index: int, alloc: ComponentAllocation) -> None:
    nodes = res.computed_nodes()
    tpn = res.computed_tasks_per_node()
    if res.nodes_min is not None and not ctx.given("nodes", index) and alloc.nodes.source != Source.OPTION:
        # the writer spread the job over the nodes Slurm would use (-n 384 on 192-CPU nodes)
        ctx.fidelity.mapped(
            _item(ctx, f"{nodes} nodes", index), f"{nodes} pods, one per node: {alloc.nodes.detail}", None
        )
    elif res.nodes_min is not None:
        text = (
            str(res.nodes_min)
            if not res.nodes_max or res.nodes_max == res.nodes_min
            else (f"{res.nodes_min}-{res.nodes_max}")
        )
        ranged = bool(res.nodes_max) and res.nodes_max != res.nodes_min
        if ranged and not getattr(ctx.native, "elastic", None):  # elastic: the elasticPolicy says it
            ctx.fidelity.approximated(
                ctx.option("nodes", text, index),
                f"a fixed count of {nodes} pods (the minimum); a node range is only "
                "elastic with PyTorchJob elasticPolicy",
                ctx.line_of("nodes", index),
            )
        elif not ranged:
            ctx.fidelity.mapped(
                ctx.option("nodes", text, index),
                f"{plural(nodes, 'pod')}, one per node",
                ctx.line_of("nodes", index),
            )
    if res.tasks is not None and res.task_layout:
        _uneven_layout(ctx, res, index, alloc)
    elif res.tasks is not None:
        ctx.fidelity.mapped(
            ctx.option("ntasks", str(res.tasks), index),
            f"{plural(nodes, 'pod')} x {plural(tpn, 'task')}; "
            + (
                "the program in each pod starts its processes"
                if ctx.native
                else "the srun shim starts the tasks"
            ),
            ctx.line_of("ntasks", index),
        )
    if res.tasks_per_node is not None:
        ctx.fidelity.mapped(
            ctx.option("ntasks-per-node", str(res.tasks_per_node), index),
            "tasks per pod, "
            + (
                "the program's own processes"
                if ctx.native
                else "started by the srun shim (SLURM_NTASKS_PER_NODE)"
            ),
            ctx.line_of("ntasks-per-node", index),
        )


def _uneven_layout(ctx: Context, res: ir.Resources, index: int, alloc: ComponentAllocation) -> None:
    """Tasks Slurm gives the nodes in different counts: the pods run them so, but share one spec."""
    shown = layout_text(res.task_layout)
    nodes = len(res.task_layout)
    ctx.fidelity.mapped(
        ctx.option("ntasks", str(res.tasks), index),
        f"{plural(nodes, 'pod')} running {shown} tasks: {alloc.tasks_per_node.detail}; the srun shim "
        "starts them and deals a step's tasks as srun does",
        ctx.line_of("ntasks", index),
    )
    fullest = max(res.task_layout)
    even = -(-sum(res.task_layout) // nodes)
    ctx.fidelity.approximated(
        _item(ctx, f"{shown} tasks per node", index),
        f"the pods share one template: each requests what the node of {fullest} tasks holds, where Slurm "
        f"holds less on the others; --ntasks-per-node={even} would spread the tasks evenly",
        None,
    )


def _cpu_options(ctx: Context, res: ir.Resources, index: int, gpus: int) -> None:
    """The entries of the CPU options; the request itself is the allocation's (``_cpu_request``)."""
    tpn = res.computed_tasks_per_node()
    cpus = tpn
    if res.cpus_per_task:
        cpus = res.cpus_per_task * tpn
        ctx.fidelity.mapped(
            ctx.option("cpus-per-task", str(res.cpus_per_task), index),
            f"cpu request {cpus} = {res.cpus_per_task} x {plural(tpn, 'task')} per pod",
            ctx.line_of("cpus-per-task", index),
        )
    elif res.cpus_per_gpu and gpus:
        cpus = res.cpus_per_gpu * gpus
    if res.cpus_per_gpu:
        line = ctx.line_of("cpus-per-gpu", index)
        item = ctx.option("cpus-per-gpu", str(res.cpus_per_gpu), index)
        if res.cpus_per_task or not gpus:
            ctx.fidelity.dropped(item, "superseded by --cpus-per-task or no GPUs per pod", line)
        else:
            ctx.fidelity.mapped(
                item, f"cpu request {cpus} = {res.cpus_per_gpu} x {plural(gpus, 'GPU')}", line
            )
    if res.cpus_per_node:
        ctx.fidelity.approximated(
            ctx.option("mincpus", str(res.cpus_per_node), index),
            "a per-pod cpu request of at least this many",
            ctx.line_of("mincpus", index),
        )


def _cpu_request(ctx: Context, alloc: ComponentAllocation, index: int, out: PodResources) -> None:
    """The allocation's CPUs per node, at most what a node can give a pod; no limit for whole nodes."""
    cpus = alloc.cpus_per_node
    out.cpus = cpus.value
    node_cpus, _ = allocatable(ctx, alloc)
    request = cpus.value
    reserve = ctx.site.kubernetes.reserved_cpus
    if node_cpus is not None and request > node_cpus:
        request = node_cpus
        ctx.fidelity.approximated(
            _item(ctx, f"{cpus.value} CPUs per node", index),
            f"the pod requests {request}: the node keeps {reserve} of its {node_cpus + reserve} for the "
            f"kubelet and system daemons (kubernetes.reserved_cpus) ({cpus.detail})",
            None,
            loses=f"{plural(cpus.value - request, 'CPU')} per node",
        )
    elif _from_site(cpus):
        ctx.fidelity.mapped(
            _item(ctx, f"{request} CPUs per node", index), f"cpu request {request}: {cpus.detail}"
        )
    out.resources["cpu"] = str(request)
    policy = ctx.site.kubernetes.cpu_limits
    if policy == "never" or (policy == "except-whole-node" and alloc.whole_node):
        out.unlimited.add("cpu")
        if alloc.whole_node:
            out.note(
                "resources",
                "no CPU limit: the whole node was the job's, so it may use every core the kubelet leaves "
                "(kubernetes.cpu_limits)",
            )


def _memory(
    ctx: Context, res: ir.Resources, index: int, alloc: ComponentAllocation, out: PodResources
) -> None:
    memory = alloc.mem_per_node_mb
    _, node_mem = allocatable(ctx, alloc)
    value = memory.value
    if value is None:
        _memory_unknown(ctx, res, index, alloc, out)
    else:
        request = min(value, node_mem) if node_mem is not None else value
        out.resources["memory"] = mib(request)
        loses = f"{mib(value - request)} of memory per node" if request < value else None
        kept = (
            f"the node keeps {ctx.site.kubernetes.reserved_memory_pct}% for the kubelet and system daemons "
            "(kubernetes.reserved_memory_pct)"
        )
        if res.mem_per_node_mb == 0:
            out.note(
                "memory", f"--mem=0 (all of the node's memory): {mib(request)} of the node's {mib(value)}"
            )
            ctx.fidelity.approximated(
                ctx.option("mem", "0", index),
                f"whole-node memory: {mib(request)} of the node's {mib(value)}; {kept} ({memory.detail})",
                ctx.line_of("mem", index),
                loses=loses,
            )
        elif res.mem_per_node_mb:
            _option_memory(
                ctx, index, "mem", res.mem_per_node_mb, "memory request = limit per pod", request, loses
            )
        elif res.mem_per_cpu_mb:
            cpus = plural(alloc.cpus_per_node.value, "cpu")
            why = f"memory {mib(value)} = {mib(res.mem_per_cpu_mb)} x {cpus}"
            _option_memory(ctx, index, "mem-per-cpu", res.mem_per_cpu_mb, why, request, loses)
        elif res.mem_per_gpu_mb and alloc.gpus_per_node.value:
            gpus = plural(alloc.gpus_per_node.value, "GPU")
            why = f"memory {mib(value)} = {mib(res.mem_per_gpu_mb)} x {gpus}"
            _option_memory(ctx, index, "mem-per-gpu", res.mem_per_gpu_mb, why, request, loses)
        elif loses:
            ctx.fidelity.approximated(
                _item(ctx, f"{mib(value)} of memory per node", index),
                f"the pod requests {mib(request)}: {kept} ({memory.detail})",
                None,
                loses=loses,
            )
        else:
            ctx.fidelity.mapped(_item(ctx, f"{mib(value)} of memory per node", index), memory.detail)
    no_gpus = res.mem_per_gpu_mb and not alloc.gpus_per_node.value
    if no_gpus and res.mem_per_node_mb is None and not res.mem_per_cpu_mb:
        ctx.fidelity.dropped(
            ctx.option("mem-per-gpu", format_memory(res.mem_per_gpu_mb or 0), index),
            "no GPUs per pod to multiply by",
            ctx.line_of("mem-per-gpu", index),
        )
    for long, option_value in (("mem-per-cpu", res.mem_per_cpu_mb), ("mem-per-gpu", res.mem_per_gpu_mb)):
        # sbatch takes one of --mem/--mem-per-cpu/--mem-per-gpu; record the ones that lost
        if option_value and (
            (long == "mem-per-cpu" and res.mem_per_node_mb is not None)
            or (long == "mem-per-gpu" and (res.mem_per_node_mb is not None or res.mem_per_cpu_mb))
        ):
            ctx.fidelity.dropped(
                ctx.option(long, format_memory(option_value), index),
                "mutually exclusive with the memory option that was used",
                ctx.line_of(long, index),
            )


def _option_memory(
    ctx: Context, index: int, long: str, value: int, why: str, request: int, loses: str | None
) -> None:
    item = ctx.option(long, format_memory(value), index)
    line = ctx.line_of(long, index)
    if loses is None:
        ctx.fidelity.mapped(item, why, line)
    else:
        ctx.fidelity.approximated(
            item, f"{why}, more than a node can give a pod: {mib(request)} requested", line, loses=loses
        )


def _memory_unknown(
    ctx: Context, res: ir.Resources, index: int, alloc: ComponentAllocation, out: PodResources
) -> None:
    """No memory request: Slurm does not count memory here, or the whole node's size is unknown."""
    if res.mem_per_node_mb == 0 or alloc.whole_node_memory:
        out.note(
            "memory",
            "all of the node's memory: no memory request; the node size is not in the site config",
        )
        item = ctx.option("mem", "0", index) if res.mem_per_node_mb == 0 else _item(ctx, "all memory", index)
        what = "--mem=0" if res.mem_per_node_mb == 0 else "--exclusive"
        ctx.fidelity.approximated(
            item,
            "whole-node memory has no request without the node size in the site config; "
            "the pod is not limited",
            ctx.line_of("mem", index) if res.mem_per_node_mb == 0 else None,
        )
        ctx.diag(
            "TRANSLATE-WHOLE-NODE-UNKNOWN",
            f"{what} asks for all of a node's memory, but the site config has no memory size for "
            "the partition; the pod gets no memory request",
        )


def _gpus(
    ctx: Context,
    res: ir.Resources,
    index: int,
    alloc: ComponentAllocation,
    out: PodResources,
    partition: PartitionConfig | None,
) -> None:
    gpus = alloc.gpus_per_node.value
    source = alloc.gpus_per_node.source
    asked, types = component_gpus(res)
    if source == Source.INFERRED:
        ctx.fidelity.approximated(
            _item(ctx, f"{gpus} GPUs per node", index),
            f"{GPU}: {gpus} per pod, {alloc.gpus_per_node.detail}; no option asks for GPUs: check the count",
        )
        out.note("resources", f"{GPU}: {gpus} inferred from the script ({alloc.gpus_per_node.detail})")
    if not asked:  # all the node's GPUs by --exclusive, or a hint: no GPU option to record
        out.resources[GPU] = str(gpus)
        return
    long, text = _gpu_option(ctx, res, types, index)
    line = ctx.line_of(long, index)
    item = ctx.option(long, text, index)
    whole = f"; --exclusive gives all {gpus} of the node's" if gpus > asked else ""
    if len(types) == 1 and _MIG_TYPE.match(types[0]):
        mig = devices.GPU_SLICE.resource + types[0]
        out.resources[mig] = str(gpus)
        ctx.fidelity.approximated(
            item,
            f"MIG slice {mig} x {gpus} (needs the GPU operator's mixed MIG strategy)",
            line,
        )
        return
    out.resources[GPU] = str(gpus)
    if not types:
        ctx.fidelity.mapped(item, f"{GPU}: {gpus} per pod{whole}", line)
        return
    if (
        len(types) == 1
        and partition is not None
        and partition.gpu_type
        and partition.gpu_type.lower() == types[0].lower()
        and partition.node_selector
    ):
        ctx.fidelity.mapped(
            item, f"{GPU}: {gpus} per pod{whole}; type {types[0]} through the partition's node pool", line
        )
        return
    _gpu_types(ctx, types, gpus, whole, item, line, alloc, out)


def _gpu_types(
    ctx: Context,
    types: tuple[str, ...],
    gpus: int,
    whole: str,
    item: str,
    line: int | None,
    alloc: ComponentAllocation,
    out: PodResources,
) -> None:
    """The GPU types as node labels: one type is a node selector on its product; several asked at once
    (all on the same node) a node affinity over their products, where one node may hold them all."""
    named = " and ".join(types)
    # the device plugin counts GPUs of any type: the pod gets the total, of whichever type its node has
    untyped = f"{GPU}: {gpus} per pod{whole}, of any type: {GPU} has no type, so {named} are not kept apart"
    blocked = no_node_holds(alloc.node, types) if len(types) > 1 else None
    if blocked:
        out.note("resources", f"{item}: no node of the partition holds {named}; {gpus} GPUs of any type")
        ctx.fidelity.approximated(item, f"{untyped}; {blocked}", line)
        ctx.diag(
            "TRANSLATE-GPU-TYPES",
            f"{item} asks for {named} GPUs on the same node, but {blocked}: no single node has them all, "
            f"and Kubernetes cannot place the pod as asked (nor would Slurm start the job there); the pod "
            f"asks for {gpus} {GPU} of any type",
            line,
        )
        return
    labels = product_values(ctx.site, types)
    where = "nodeSelector" if len(types) == 1 else "affinity"
    for gpu_type, placeholder in labels.placeholders:
        out.note(
            where,
            f"GPU type {gpu_type}: replace {placeholder} with the node label value "
            f"(kubectl get nodes -L {GPU_PRODUCT})",
        )
        ctx.diag(
            "TRANSLATE-GPU-TYPE",
            f"GPU type {gpu_type!r} has no {GPU_PRODUCT} value in the site config; "
            f"a placeholder {placeholder!r} was written",
        )
    needs = f"the type needs a {GPU_PRODUCT} value (placeholder written)"
    if len(types) == 1:
        out.node_selector[GPU_PRODUCT] = labels.values[0]
        if labels.placeholders:
            ctx.fidelity.approximated(item, f"{GPU}: {gpus} per pod; {needs}", line)
        else:
            ctx.fidelity.mapped(item, f"{GPU}: {gpus} per pod{whole}; {GPU_PRODUCT}={labels.values[0]}", line)
        return
    out.node_requirements.append({"key": GPU_PRODUCT, "operator": "In", "values": list(labels.values)})
    out.note(
        "affinity",
        f"{item}: nodes whose GPU product is {' or '.join(types)}; the pod gets each type's count only "
        "on a node that holds them all",
    )
    reason = f"{untyped}; node affinity {GPU_PRODUCT} in {', '.join(labels.values)}"
    unmapped = [gpu_type for gpu_type, _ in labels.placeholders]
    if unmapped:
        verb = "needs a value" if len(unmapped) == 1 else "need values"
        reason += f"; {' and '.join(unmapped)} {verb} (placeholder written)"
    ctx.fidelity.approximated(item, reason, line)


def _gpu_option(ctx: Context, res: ir.Resources, types: tuple[str, ...], index: int) -> tuple[str, str]:
    """The option that asked for the GPUs: the one in the file when known, else from the fields."""
    gres = next((g for g in res.generic if g.name == "gpu"), None)
    candidates = [
        ("gpus-per-node", res.gpus_per_node),
        ("gpus-per-task", res.gpus_per_task),
        ("gpus", res.gpus),
        ("gres", gres.count if gres else res.gpus_per_node),
    ]
    given = [(long, count) for long, count in candidates if ctx.given(long, index)]
    for long, count in (*given, *candidates):
        if count is not None:
            one = types[0] if len(types) == 1 else None
            counts = res.gpu_counts(count) if res.gpu_types else ((one, count),)
            return long, format_gpus(counts, gres=long == "gres")
    return "gres", "gpu"


def _generic(ctx: Context, res: ir.Resources, index: int, out: PodResources) -> None:
    for gres in res.generic:
        if gres.name == "gpu":
            continue
        text = ":".join([gres.name, *([gres.type] if gres.type else []), str(gres.count)])
        long = "tres-per-task" if gres.per == GresScope.TASK else "gres"
        item = ctx.option(long, text, index)
        line = ctx.line_of(long, index)
        resource = ctx.site.extended_resource(gres.name)
        if gres.name == "cpu" and gres.per == GresScope.TASK:
            ctx.fidelity.mapped(item, "folded into the cpu request", line)
            continue
        if resource is None:
            ctx.fidelity.dropped(
                item, f"no extended resource for GRES {gres.name!r} in the site config", line
            )
            ctx.diag(
                "TRANSLATE-GRES-UNMAPPED",
                f"GRES {gres.name!r} has no Kubernetes extended resource in the site config (gres:)",
            )
            continue
        count = gres.count * (res.computed_tasks_per_node() if gres.per == GresScope.TASK else 1)
        out.resources[resource] = str(count)
        ctx.fidelity.mapped(item, f"extended resource {resource}: {count} per pod", line)


def _node_devices(
    ctx: Context, alloc: ComponentAllocation, index: int, out: PodResources, partition: str | None
) -> None:
    """Node devices (EFA interfaces ...) and the GRES --exclusive gives, as extended resources."""
    for device in (*alloc.devices, *(g for g in alloc.gres if g.source == Source.EXCLUSIVE)):
        dev = device.value
        resource = dev.name if "/" in dev.name else ctx.site.extended_resource(dev.name)
        item = _item(ctx, f"{dev.quantity} {dev.name} per node", index)
        if resource is None:
            ctx.fidelity.approximated(
                item,
                f"no extended resource for GRES {dev.name!r} in the site config (gres:): not requested "
                f"({device.detail})",
                None,
                loses=f"{dev.quantity} {dev.name} per node",
            )
            continue
        out.resources[resource] = str(dev.quantity)
        status = ctx.fidelity.approximated if device.source == Source.INFERRED else ctx.fidelity.mapped
        status(item, f"{resource}: {dev.quantity} per pod ({device.detail})")
    where = f"partitions.{partition}.devices" if partition else "a default partition with devices"
    by_kind: dict[FabricKind, list[FabricUse]] = {}
    for use in missing_fabric_devices(alloc):
        by_kind.setdefault(use.kind, []).append(use)
    for kind, uses in by_kind.items():
        names = ", ".join(u.variable for u in uses)
        line = next((u.line for u in uses if u.line is not None), None)
        example = _FABRIC_EXAMPLES[kind]
        whose = f"partition {partition}" if partition else "the job (no partition)"
        ctx.fidelity.approximated(
            f"{kind} tuning: {names}",
            f"the pod requests no {kind} device: the site config names none for {whose}",
            line,
            loses=f"the node's {kind} devices",
        )
        ctx.diag(
            "TRANSLATE-FABRIC-DEVICE",
            f"the script sets {names} for {kind}, but the site config names no {kind} device for {whose}; "
            f"add {where}: {example} to migrate.yaml so that the pods get the devices",
            line,
        )


def _exclusive(ctx: Context, mode: str, index: int, out: PodResources, alloc: ComponentAllocation) -> None:
    item = ctx.option("exclusive", None if mode == "node" else mode, index)
    line = ctx.line_of("exclusive", index)
    if mode == "oversubscribe":
        ctx.fidelity.mapped(item, "pods share nodes by default", line)
        return
    if mode in ("user", "mcs"):
        ctx.fidelity.dropped(item, f"sharing nodes only with the same {mode} has no pod equivalent", line)
        return
    out.spread_one_per_node = True
    out.exclusive_topology = "kubernetes.io/hostname"
    if alloc.node is not None:
        gpus = alloc.gpus_per_node.value
        held = f"all {gpus} GPUs, " if gpus else ""
        out.note("resources", f"--exclusive: {held}the allocatable CPUs and memory of the node are requested")
        ctx.fidelity.approximated(
            item,
            f"whole node: {held}{out.resources.get('cpu')} CPUs and "
            f"{out.resources.get('memory', 'unlimited')} memory requested, one pod per node; other pods "
            "may still use what the requests leave",
            line,
        )
    else:
        ctx.fidelity.approximated(
            item,
            "one pod per node (anti-affinity); other workloads may share the "
            "nodes unless the node pool is dedicated",
            line,
        )
    out.note("affinity", "--exclusive: at most one pod of this job per node")


def _constraint(ctx: Context, expr: str, index: int, out: PodResources) -> None:
    item = ctx.option("constraint", expr, index)
    line = ctx.line_of("constraint", index)
    body = expr.strip()
    bracketed = body.startswith("[") and body.endswith("]")
    if bracketed:
        body = body[1:-1]
    alternatives = [alt.strip() for alt in body.split("|")]
    terms: list[list[str]] = [
        [w.strip() for w in re.split(r"[&,]", alt) if w.strip()] for alt in alternatives
    ]
    words = [w for t in terms for w in t]
    if not words or not all(_FEATURE.match(w) for w in words):
        ctx.fidelity.dropped(item, "feature counts and nested expressions have no node selector form", line)
        ctx.diag("TRANSLATE-CONSTRAINT", f"--constraint={expr} could not be turned into node labels")
        return
    missing: list[str] = []
    selectors: list[dict[str, str]] = []
    for term in terms:
        selector: dict[str, str] = {}
        for word in term:
            pairs = ctx.site.feature_selector(word)
            if not pairs:
                missing.append(word)
                pairs = ((PLACEHOLDER_FEATURE_PREFIX + dns1123_label(word, 40, "f"), "true"),)
            selector.update(dict(pairs))
        selectors.append(selector)
    if len(selectors) == 1:
        out.node_selector.update(selectors[0])
        where = "nodeSelector"
    else:
        out.node_affinity_terms = [
            {
                "matchExpressions": [
                    {"key": k, "operator": "In", "values": [v]} for k, v in sorted(sel.items())
                ]
            }
            for sel in selectors
        ]
        where = "affinity"
    reasons: list[str] = []
    if len(selectors) > 1:
        reasons.append("alternatives become ORed node affinity terms")
    if bracketed:
        reasons.append("[...] (all nodes with the same feature) is not enforced")
    if missing:
        reasons.append(f"placeholder labels {PLACEHOLDER_FEATURE_PREFIX}<feature> for {', '.join(missing)}")
        out.note(where, f"--constraint={expr}: label the nodes or map the features in the site config")
        ctx.diag(
            "TRANSLATE-CONSTRAINT",
            f"node features {', '.join(missing)} have no node labels in the site config (features:); "
            f"placeholder labels {PLACEHOLDER_FEATURE_PREFIX}<feature>=true were written",
        )
    if reasons:
        ctx.fidelity.approximated(item, "; ".join(reasons), line)
    else:
        ctx.fidelity.mapped(item, f"node labels through the site config ({where})", line)


__all__ = ["GPU", "PodResources", "build", "component_gpus", "mib"]
