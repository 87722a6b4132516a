"""Per-pod resources, node selection and their fidelity entries, for one component.

One pod stands for one Slurm node: its requests are what one node of the
allocation held (tasks per node x cpus per task, memory per node, GPUs per
node). Requests equal limits so that the pod is Guaranteed, as a Slurm
allocation is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from migrate import ir
from migrate.names import dns1123_label
from migrate.translators.slurm.options import format_memory

from .translation_context import Context

GPU = "nvidia.com/gpu"
GPU_PRODUCT = "nvidia.com/gpu.product"
_MIG_TYPE = re.compile(r"[0-9]+g\.[0-9]+gb\Z")
_FEATURE = re.compile(r"[A-Za-z0-9_.\-]+\Z")
PLACEHOLDER_FEATURE_PREFIX = "migrate.io/feature-"


@dataclass
class PodResources:
    """What the writer puts on the container and the pod for one component."""

    resources: dict[str, str] = field(default_factory=dict)  # requests (= limits)
    node_selector: dict[str, str] = field(default_factory=dict)
    node_affinity_terms: list[dict[str, Any]] = field(default_factory=list)  # ORed terms
    spread_one_per_node: bool = False
    exclusive_topology: str | None = None
    notes: dict[str, list[str]] = field(default_factory=dict)  # pod field -> comments
    gpus: int = 0
    cpus: int = 0

    def note(self, where: str, text: str) -> None:
        self.notes.setdefault(where, []).append(text)


def mib(value: int) -> str:
    """A MiB count as a Kubernetes quantity (``64Gi`` when exact)."""
    if value and value % 1024 == 0:
        return f"{value // 1024}Gi"
    return f"{value}Mi"


def component_gpus(res: ir.Resources) -> tuple[int, str | None]:
    """GPUs per pod and their type, from the typed fields or a ``gpu`` GRES."""
    count = res.computed_gpus_per_node()
    gpu_type = res.gpu_type
    for gres in res.generic:
        if gres.name == "gpu":
            if not count:
                per_node = gres.count * res.computed_tasks_per_node() if gres.per == "task" else gres.count
                count = per_node
            gpu_type = gpu_type or gres.type
    return count, gpu_type


def build(ctx: Context, comp: ir.Component, index: int) -> PodResources:
    res = comp.resources
    out = PodResources()
    partition = ctx.site.partition(ctx.job.placement.partitions[0] if ctx.job.placement.partitions else None)
    _shape(ctx, res, index)
    gpus, gpu_type = component_gpus(res)
    out.gpus = gpus
    cpus = _cpus(ctx, res, index, gpus)
    out.cpus = cpus
    out.resources["cpu"] = str(cpus)
    _memory(ctx, res, index, cpus, gpus, out, partition)
    if gpus:
        _gpus(ctx, res, index, gpus, gpu_type, out, partition)
    _generic(ctx, res, index, out)
    if res.tmp_disk_mb:
        out.resources["ephemeral-storage"] = mib(res.tmp_disk_mb)
        ctx.fidelity.mapped(
            ctx.option("tmp", mib(res.tmp_disk_mb), index),
            "ephemeral-storage request",
            ctx.line_of("tmp", index),
        )
    if res.exclusive:
        _exclusive(ctx, res.exclusive, index, out, partition)
    if res.constraint:
        _constraint(ctx, res.constraint, index, out)
    for kv in res.node_selector:
        out.node_selector[kv.key] = kv.value
    if partition is not None:
        for key, value in partition.node_selector:
            out.node_selector.setdefault(key, value)
    return out


def _shape(ctx: Context, res: ir.Resources, index: int) -> None:
    nodes = res.computed_nodes()
    tpn = res.computed_tasks_per_node()
    if res.nodes_min is not None:
        text = (
            str(res.nodes_min)
            if not res.nodes_max or res.nodes_max == res.nodes_min
            else (f"{res.nodes_min}-{res.nodes_max}")
        )
        if res.nodes_max and res.nodes_max != res.nodes_min:
            ctx.fidelity.approximated(
                ctx.option("nodes", text, index),
                f"a fixed count of {nodes} pods (the minimum); a node range is only "
                "elastic with PyTorchJob elasticPolicy",
                ctx.line_of("nodes", index),
            )
        else:
            ctx.fidelity.mapped(
                ctx.option("nodes", text, index), f"{nodes} pod(s), one per node", ctx.line_of("nodes", index)
            )
    if res.tasks is not None:
        ctx.fidelity.mapped(
            ctx.option("ntasks", str(res.tasks), index),
            f"{nodes} pod(s) x {tpn} task(s); the srun shim starts the tasks",
            ctx.line_of("ntasks", index),
        )
    if res.tasks_per_node is not None:
        ctx.fidelity.mapped(
            ctx.option("ntasks-per-node", str(res.tasks_per_node), index),
            "tasks per pod, started by the srun shim (SLURM_NTASKS_PER_NODE)",
            ctx.line_of("ntasks-per-node", index),
        )


def _cpus(ctx: Context, res: ir.Resources, index: int, gpus: int) -> int:
    tpn = res.computed_tasks_per_node()
    if res.cpus_per_task:
        cpus = res.cpus_per_task * tpn
        ctx.fidelity.mapped(
            ctx.option("cpus-per-task", str(res.cpus_per_task), index),
            f"cpu request {cpus} = {res.cpus_per_task} x {tpn} task(s) per pod",
            ctx.line_of("cpus-per-task", index),
        )
    elif res.cpus_per_gpu and gpus:
        cpus = res.cpus_per_gpu * gpus
    else:
        cpus = tpn  # Slurm's default: one CPU per task
    if res.cpus_per_gpu:
        line = ctx.line_of("cpus-per-gpu", index)
        item = ctx.option("cpus-per-gpu", str(res.cpus_per_gpu), index)
        if res.cpus_per_task or not gpus:
            ctx.fidelity.dropped(item, "superseded by --cpus-per-task or no GPUs per pod", line)
        else:
            ctx.fidelity.mapped(item, f"cpu request {cpus} = {res.cpus_per_gpu} x {gpus} GPU(s)", line)
    if res.cpus_per_node:
        ctx.fidelity.approximated(
            ctx.option("mincpus", str(res.cpus_per_node), index),
            "a per-pod cpu request of at least this many",
            ctx.line_of("mincpus", index),
        )
        cpus = max(cpus, res.cpus_per_node)
    return cpus


def _memory(
    ctx: Context, res: ir.Resources, index: int, cpus: int, gpus: int, out: PodResources, partition: Any
) -> None:
    if res.mem_per_node_mb is not None:
        line = ctx.line_of("mem", index)
        if res.mem_per_node_mb > 0:
            out.resources["memory"] = mib(res.mem_per_node_mb)
            ctx.fidelity.mapped(
                ctx.option("mem", format_memory(res.mem_per_node_mb), index),
                "memory request = limit per pod",
                line,
            )
        elif partition is not None and partition.mem_gb:
            out.resources["memory"] = f"{partition.mem_gb}Gi"
            out.note(
                "memory",
                f"--mem=0 (all of the node's memory): the partition's nodes have "
                f"{partition.mem_gb}Gi; allocatable is a little less, lower this if pods "
                "stay Pending",
            )
            ctx.fidelity.approximated(
                ctx.option("mem", "0", index),
                f"whole-node memory: {partition.mem_gb}Gi from the site inventory "
                "(allocatable memory is slightly lower)",
                line,
            )
        else:
            out.note(
                "memory",
                "--mem=0 (all of the node's memory): no memory request; the node size is "
                "not in the site config",
            )
            ctx.fidelity.approximated(
                ctx.option("mem", "0", index),
                "whole-node memory has no request without the node size in the "
                "site config; the pod is not limited",
                line,
            )
            ctx.diag(
                "TRANSLATE-WHOLE-NODE-UNKNOWN",
                "--mem=0 asks for all of a node's memory, but the site config has no memory size for "
                "the partition; the pod gets no memory request",
            )
    elif res.mem_per_cpu_mb:
        total = res.mem_per_cpu_mb * cpus
        out.resources["memory"] = mib(total)
        ctx.fidelity.mapped(
            ctx.option("mem-per-cpu", format_memory(res.mem_per_cpu_mb), index),
            f"memory {mib(total)} = {mib(res.mem_per_cpu_mb)} x {cpus} cpu(s)",
            ctx.line_of("mem-per-cpu", index),
        )
    elif res.mem_per_gpu_mb:
        line = ctx.line_of("mem-per-gpu", index)
        item = ctx.option("mem-per-gpu", format_memory(res.mem_per_gpu_mb), index)
        if gpus:
            total = res.mem_per_gpu_mb * gpus
            out.resources["memory"] = mib(total)
            ctx.fidelity.mapped(
                item, f"memory {mib(total)} = {mib(res.mem_per_gpu_mb)} x {gpus} GPU(s)", line
            )
        else:
            ctx.fidelity.dropped(item, "no GPUs per pod to multiply by", line)
    for long, value in (("mem-per-cpu", res.mem_per_cpu_mb), ("mem-per-gpu", res.mem_per_gpu_mb)):
        # sbatch takes one of --mem/--mem-per-cpu/--mem-per-gpu; record the ones that lost
        if value and (
            (long == "mem-per-cpu" and res.mem_per_node_mb is not None)
            or (long == "mem-per-gpu" and (res.mem_per_node_mb is not None or res.mem_per_cpu_mb))
        ):
            ctx.fidelity.dropped(
                ctx.option(long, format_memory(value), index),
                "mutually exclusive with the memory option that was used",
                ctx.line_of(long, index),
            )


def _gpus(
    ctx: Context,
    res: ir.Resources,
    index: int,
    gpus: int,
    gpu_type: str | None,
    out: PodResources,
    partition: Any,
) -> None:
    long, text = _gpu_option(ctx, res, gpu_type, index)
    line = ctx.line_of(long, index)
    item = ctx.option(long, text, index)
    if gpu_type and _MIG_TYPE.match(gpu_type):
        out.resources[f"nvidia.com/mig-{gpu_type}"] = str(gpus)
        ctx.fidelity.approximated(
            item,
            f"MIG slice nvidia.com/mig-{gpu_type} x {gpus} (needs the GPU operator's mixed MIG strategy)",
            line,
        )
        return
    out.resources[GPU] = str(gpus)
    if not gpu_type:
        ctx.fidelity.mapped(item, f"{GPU}: {gpus} per pod", line)
        return
    if (
        partition is not None
        and partition.gpu_type
        and partition.gpu_type.lower() == gpu_type.lower()
        and partition.node_selector
    ):
        ctx.fidelity.mapped(
            item, f"{GPU}: {gpus} per pod; type {gpu_type} through the partition's node pool", line
        )
        return
    product = ctx.site.gpu_product(gpu_type)
    if product:
        out.node_selector[GPU_PRODUCT] = product
        ctx.fidelity.mapped(item, f"{GPU}: {gpus} per pod; {GPU_PRODUCT}={product}", line)
        return
    placeholder = "REPLACE-ME-" + dns1123_label(gpu_type, 40, "gpu")
    out.node_selector[GPU_PRODUCT] = placeholder
    out.note(
        "nodeSelector",
        f"GPU type {gpu_type}: replace {placeholder} with the node label value "
        f"(kubectl get nodes -L {GPU_PRODUCT})",
    )
    ctx.fidelity.approximated(
        item, f"{GPU}: {gpus} per pod; the type needs a {GPU_PRODUCT} value (placeholder written)", line
    )
    ctx.diag(
        "TRANSLATE-GPU-TYPE",
        f"GPU type {gpu_type!r} has no {GPU_PRODUCT} value in the site config; "
        f"a placeholder {placeholder!r} was written",
    )


def _gpu_option(ctx: Context, res: ir.Resources, gpu_type: str | None, index: int) -> tuple[str, str]:
    """The option that asked for the GPUs: the one in the file when known, else from the fields."""
    prefix = f"{gpu_type}:" if gpu_type else ""
    gres = next((g for g in res.generic if g.name == "gpu"), None)
    candidates = [
        ("gpus-per-node", res.gpus_per_node),
        ("gpus-per-task", res.gpus_per_task),
        ("gpus", res.gpus),
        ("gres", gres.count if gres else res.gpus_per_node),
    ]
    for long, count in candidates:
        if ctx.given(long, index):
            return long, f"gpu:{prefix}{count}" if long == "gres" else f"{prefix}{count}"
    for long, count in candidates:
        if count is not None:
            return long, f"gpu:{prefix}{count}" if long == "gres" else f"{prefix}{count}"
    return "gres", "gpu"


def _generic(ctx: Context, res: ir.Resources, index: int, out: PodResources) -> None:
    for gres in res.generic:
        if gres.name == "gpu":
            continue
        text = ":".join([gres.name, *([gres.type] if gres.type else []), str(gres.count)])
        long = "tres-per-task" if gres.per == "task" else "gres"
        item = ctx.option(long, text, index)
        line = ctx.line_of(long, index)
        resource = ctx.site.extended_resource(gres.name)
        if gres.name == "cpu" and gres.per == "task":
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
        count = gres.count * (res.computed_tasks_per_node() if gres.per == "task" else 1)
        out.resources[resource] = str(count)
        ctx.fidelity.mapped(item, f"extended resource {resource}: {count} per pod", line)


def _exclusive(ctx: Context, mode: str, index: int, out: PodResources, partition: Any) -> None:
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
    if partition is not None and partition.gpus_per_node:
        current = int(out.resources.get(GPU, "0"))
        if current < partition.gpus_per_node:
            out.resources[GPU] = str(partition.gpus_per_node)
            out.gpus = partition.gpus_per_node
        out.note("resources", f"--exclusive: all {partition.gpus_per_node} GPUs of the node are requested")
        ctx.fidelity.approximated(
            item,
            "whole-node GPUs requested and one pod per node; other pods may still "
            "use the node's spare CPU and memory",
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
