"""One component's allocation: nodes, tasks, CPUs, memory, GPUs, GRES and node devices, with provenance.

``migrate.site.allocation.allocate`` finds the partition and its node type,
then hands each component here. Values are taken in Slurm's order (the
module docstring of ``allocation`` lists it): the job's options, the node
type, the site's defaults, ``--exclusive``, and hints in the script.
"""

from __future__ import annotations

from collections.abc import Mapping

from migrate import ir
from migrate.render import plural
from migrate.site.allocation_hints import fabric_uses, gpu_hints
from migrate.site.allocation_model import (
    ComponentAllocation,
    Device,
    FabricKind,
    FabricUse,
    NodeType,
    Provenance,
    Source,
    Sourced,
)
from migrate.site.config import PartitionConfig
from migrate.site.task_layout import job_layout, layout_text
from migrate.vocab import GresScope

OptionLines = Mapping[tuple[str, int], int]
OptionTexts = Mapping[tuple[str, int], str]
WHOLE_NODE_MODES = frozenset(("node", "topo"))  # --exclusive and --exclusive=topo: nobody else on the nodes
FABRIC_DEVICE_WORDS = {
    FabricKind.EFA: ("efa",),
    FabricKind.INFINIBAND: ("rdma", "infiniband", "hca", "/ib", "mellanox"),
}

_ONE_NODE = Provenance(Source.SITE_DEFAULT, "no node count: one node (Slurm's default)")
_ONE_TASK = Provenance(Source.SITE_DEFAULT, "no task count: one task per node (Slurm's default)")
_ONE_CPU = Provenance(Source.SITE_DEFAULT, "no CPU option: one CPU per task (Slurm's default)")
_NO_GPUS = Provenance(Source.SITE_DEFAULT, "no GPU option: Slurm allocates no GPUs")
_NO_TYPE = Provenance(Source.SITE_DEFAULT, "no GPU type asked")
# The values most jobs get from Slurm's defaults, made once: a site has as many as it has jobs.
_ONE_NODE_VALUE = Sourced(1, _ONE_NODE)
_ONE_TASK_VALUE = Sourced(1, _ONE_TASK)
_ONE_CPU_VALUE = Sourced(1, _ONE_CPU)
_NO_GPUS_VALUE = Sourced(0, _NO_GPUS)
_NO_TYPE_VALUE: Sourced[str | None] = Sourced(None, _NO_TYPE)
# How a Kubernetes manifest said what its pods need, for the details of Kubernetes jobs.
_MANIFEST_WORDS = {
    "nodes": "pods",
    "ntasks": "tasks",
    "ntasks-per-node": "tasks per pod",
    "cpus-per-task": "cpu per task",
    "mincpus": "cpu request",
    "mem": "memory request",
    "gpus-per-node": "GPU request",
    "time": "activeDeadlineSeconds",
    "partition": "queue",
}


_PLAIN_DETAILS: dict[tuple[bool, str, object], Provenance] = {}


class OptionDetails:
    """The details of the job's own options: as written and with their line, when known."""

    def __init__(self, job: ir.Job | None, lines: OptionLines | None, texts: OptionTexts | None) -> None:
        self.manifest = job is not None and job.source.format == "kubernetes"
        self.lines: OptionLines = lines or {}
        self.texts: OptionTexts = texts or {}

    @classmethod
    def plain(cls, manifest: bool) -> OptionDetails:
        """Details without the header's lines, for jobs of one format."""
        made = cls(None, None, None)
        made.manifest = manifest
        return made

    def option(self, long: str, index: int, value: object) -> Provenance:
        key = (long, index)
        if not self.manifest and (key in self.lines or key in self.texts or (long, 0) in self.lines):
            text = self.texts.get(key) or f"--{long}={value}"
            line = self.lines.get(key) or self.lines.get((long, 0))
            return Provenance(Source.OPTION, f"{text} (line {line})" if line else text)
        # Without the header's lines the same few details recur across a whole site: made once each.
        cached = (self.manifest, long, value)
        found = _PLAIN_DETAILS.get(cached)
        if found is None:
            if len(_PLAIN_DETAILS) > 50_000:
                _PLAIN_DETAILS.clear()
            words = _MANIFEST_WORDS.get(long, long)
            detail = f"the manifest's {words} ({value})" if self.manifest else f"--{long}={value}"
            found = Provenance(Source.OPTION, detail)
            _PLAIN_DETAILS[cached] = found
        return found

    def given(self, long: str, index: int) -> bool:
        return (long, index) in self.lines


class _Findings:
    """What the reader of a component's allocation should know, gathered while it is worked out."""

    def __init__(self) -> None:
        self.notes: list[str] = []
        self.exceeds: list[str] = []  # what the job asks beyond what a node of its partition has


def component(
    job: ir.Job,
    comp: ir.Component,
    index: int,
    name: str | None,
    part: PartitionConfig | None,
    node: NodeType | None,
    say: OptionDetails,
) -> ComponentAllocation:
    res = comp.resources
    found = _Findings()
    whole = res.exclusive in WHOLE_NODE_MODES
    label = f"partition {name}" if name else "the partition"
    nodes = _nodes(res, index, node, label, say)
    layout = _task_layout(res, nodes.value, node, whole)
    tpn = _tasks_per_node(res, index, nodes, layout, None if whole else node, say)
    tasks = (
        Sourced(res.tasks, say.option("ntasks", index, res.tasks))
        if res.tasks
        else Sourced(nodes.value * tpn.value, tpn.provenance)
    )
    gpus, gpu_type = _gpus(job, comp, index, whole, node, label, tpn.value, nodes.value, say, found)
    cpt = (
        Sourced(res.cpus_per_task, say.option("cpus-per-task", index, res.cpus_per_task))
        if res.cpus_per_task
        else _ONE_CPU_VALUE
    )
    cpus = _cpus(res, index, whole, part, node, label, tpn.value, gpus.value, say, found)
    memory, whole_memory = _memory(res, index, whole, part, node, label, cpus.value, gpus.value, say, found)
    fabric = fabric_uses(job, comp)
    devices: tuple[Sourced[Device], ...] = ()
    if node and node.devices:
        devices = _devices(node, whole, fabric, gpus.value, cpus.value, label, nodes.value)
    return ComponentAllocation(  # by position: a site makes one per job, and keywords cost twice as much
        comp.name,
        nodes,
        max(res.nodes_max or nodes.value, nodes.value),
        tasks,
        tpn,
        cpt,
        cpus,
        memory,
        gpus,
        gpu_type,
        _gres(res, index, whole, node, tpn.value, say) if res.generic or whole else (),
        devices,
        whole,
        whole_memory,
        node,
        fabric,
        tuple(found.exceeds),
        tuple(found.notes),
        max(1, comp.replicas),
        task_layout=layout,
    )


def _nodes(
    res: ir.Resources, index: int, node: NodeType | None, label: str, say: OptionDetails
) -> Sourced[int]:
    if res.nodes_min:
        shown = (
            str(res.nodes_min)
            if not res.nodes_max or res.nodes_max == res.nodes_min
            else (f"{res.nodes_min}-{res.nodes_max}")
        )
        return Sourced(res.nodes_min, say.option("nodes", index, shown))
    if res.tasks and res.tasks_per_node:
        count = max(1, -(-res.tasks // res.tasks_per_node))
        detail = f"{res.tasks} tasks at {res.tasks_per_node} per node"
        return Sourced(count, Provenance(Source.OPTION, detail))
    # Slurm spreads what one node cannot hold over as many nodes as it takes.
    node_cpus = node.cpus.value if node is not None else None
    node_gpus = node.gpus.value if node is not None else None
    if res.tasks and node_cpus:
        per_task = res.cpus_per_task or 1
        fit = node_cpus // per_task
        if fit and res.tasks > fit:
            count = -(-res.tasks // fit)
            assert node is not None
            detail = (
                f"{res.tasks} tasks x {plural(per_task, 'CPU')} on {node_cpus}-CPU nodes of {label}: "
                f"{count} nodes "
                f"({node.cpus.detail})"
            )
            return Sourced(count, Provenance(node.cpus.source, detail))
    wanted = res.gpus or (res.gpus_per_task * res.tasks if res.gpus_per_task and res.tasks else 0)
    if wanted and node_gpus and res.gpus_per_node is None and wanted > node_gpus:
        count = -(-wanted // node_gpus)
        assert node is not None
        detail = f"{wanted} GPUs on {node_gpus}-GPU nodes of {label}: {count} nodes ({node.gpus.detail})"
        return Sourced(count, Provenance(node.gpus.source, detail))
    return _ONE_NODE_VALUE


def _task_layout(res: ir.Resources, nodes: int, node: NodeType | None, whole: bool) -> tuple[int, ...]:
    node_cpus = node.cpus.value if node is not None else None
    capacity = node_cpus // (res.cpus_per_task or 1) if node_cpus else None
    return job_layout(res.tasks, nodes, res.tasks_per_node, capacity, whole)


def _tasks_per_node(
    res: ir.Resources,
    index: int,
    nodes: Sourced[int],
    layout: tuple[int, ...],
    node: NodeType | None,
    say: OptionDetails,
) -> Sourced[int]:
    """The tasks of a node; where Slurm lays them out unevenly, those of the fullest node."""
    if res.tasks_per_node:
        return Sourced(res.tasks_per_node, say.option("ntasks-per-node", index, res.tasks_per_node))
    if layout and res.tasks:
        how = f"{plural(res.tasks, 'task')} over {plural(nodes.value, 'node')}"
        if node is not None and node.cpus.value:  # filled node by node; whole nodes deal them
            detail = (
                f"{how} as Slurm lays them out on {node.cpus.value}-CPU nodes (one each, then node 0 "
                f"filled first): {layout_text(layout)} ({node.cpus.detail})"
            )
            return Sourced(max(layout), Provenance(node.cpus.source, detail))
        detail = f"{how}, dealt in turn: {layout_text(layout)}"
        return Sourced(max(layout), Provenance(Source.OPTION, detail))
    if res.tasks:
        count = max(1, -(-res.tasks // nodes.value))
        source = nodes.source if nodes.source != Source.SITE_DEFAULT else Source.OPTION
        return Sourced(
            count, Provenance(source, f"{plural(res.tasks, 'task')} over {plural(nodes.value, 'node')}")
        )
    return _ONE_TASK_VALUE


_GPU_OPTIONS = ("gpus-per-node", "gres", "gpus-per-task", "gpus", "tres-per-task")


def _asked_gpus(
    res: ir.Resources, index: int, tpn: int, nodes: int, say: OptionDetails
) -> tuple[int, str, str] | None:
    """(GPUs per node, the option that asked, its value) for what the job asked, if it did."""
    if res.gpus_per_node is not None:
        count, long, value = res.gpus_per_node, "gpus-per-node", res.gpus_per_node
    elif res.gpus_per_task is not None:
        count, long, value = res.gpus_per_task * tpn, "gpus-per-task", res.gpus_per_task
    elif res.gpus:
        count, long, value = max(1, -(-res.gpus // nodes)), "gpus", res.gpus
    else:
        gres = next((g for g in res.generic if g.name == "gpu"), None)
        if gres is None:
            return None
        count = gres.count * tpn if gres.per == GresScope.TASK else gres.count
        long, value = "gres", gres.count
    if say.lines:  # the option as the file spells it
        long = next((lg for lg in _GPU_OPTIONS if say.given(lg, index)), long)
    prefix = "gpu:" if long == "gres" else ""  # spelled as the sbatch writer's format_gpus spells it
    spelled = ",".join(f"{prefix}{kind}:{n}" if kind else f"{prefix}{n}" for kind, n in res.gpu_counts(value))
    return count, long, spelled


def _gpus(
    job: ir.Job,
    comp: ir.Component,
    index: int,
    whole: bool,
    node: NodeType | None,
    label: str,
    tpn: int,
    nodes: int,
    say: OptionDetails,
    found: _Findings,
) -> tuple[Sourced[int], Sourced[str | None]]:
    res = comp.resources
    asked = _asked_gpus(res, index, tpn, nodes, say)
    node_gpus = node.gpus.value if node is not None else None
    if whole and node is not None and node_gpus and node_gpus > (asked[0] if asked else 0):
        how = f"--exclusive with --{asked[1]}={asked[2]}" if asked else "--exclusive"
        detail = f"{how}: all {node_gpus} GPUs of a node of {label} ({node.gpus.detail})"
        count = Sourced(node_gpus, Provenance(Source.EXCLUSIVE, detail))
    elif asked is not None:
        count = Sourced(asked[0], say.option(asked[1], index, asked[2]))
        if node_gpus is not None and asked[0] > node_gpus:
            found.exceeds.append(f"{asked[0]} GPUs per node; the nodes of {label} have {node_gpus}")
    else:
        count = _gpu_hint(job, comp, node, label, found) or _NO_GPUS_VALUE
    asked_type = res.gpu_type
    if asked_type is None and res.generic:
        asked_type = next((g.type for g in res.generic if g.name == "gpu" and g.type), None)
    if res.gpu_types and asked is not None:  # several types at once: no one type, not the node's either
        gpu_type: Sourced[str | None] = Sourced(None, say.option(asked[1], index, asked[2]))
    elif asked_type and asked is not None:
        gpu_type = Sourced(asked_type, say.option(asked[1], index, asked[2]))
    elif count.value and node is not None and node.gpu_type.value:
        gpu_type = node.gpu_type
    else:
        gpu_type = _NO_TYPE_VALUE
    return count, gpu_type


def _gpu_hint(
    job: ir.Job, comp: ir.Component, node: NodeType | None, label: str, found: _Findings
) -> Sourced[int] | None:
    """GPUs the script expects when nothing else tells; capped at what a node has."""
    hints = gpu_hints(job, comp)
    if not hints:
        return None
    counted = [h for h in hints if h.gpus]
    if not counted:
        found.notes.append(
            f"the script uses GPUs but no option, site value or hint says how many: {hints[0].detail}"
        )
        return None
    best = max(counted, key=lambda h: h.gpus or 0)
    count = best.gpus or 0
    node_gpus = node.gpus.value if node is not None else None
    if node_gpus is not None and count > node_gpus:
        found.notes.append(f"{best.detail}, but the nodes of {label} have {node_gpus} GPUs")
        count = node_gpus
        if not count:
            return None
    if not comp.resources.exclusive:
        found.notes.append(
            "no GPU option: Slurm itself would give no GPUs; the count is the script's expectation"
        )
    return Sourced(count, Provenance(Source.INFERRED, best.detail))


def _cpus(
    res: ir.Resources,
    index: int,
    whole: bool,
    part: PartitionConfig | None,
    node: NodeType | None,
    label: str,
    tpn: int,
    gpus: int,
    say: OptionDetails,
    found: _Findings,
) -> Sourced[int]:
    if res.cpus_per_task:
        asked = Sourced(res.cpus_per_task * tpn, say.option("cpus-per-task", index, res.cpus_per_task))
    elif res.cpus_per_gpu and gpus:
        asked = Sourced(res.cpus_per_gpu * gpus, say.option("cpus-per-gpu", index, res.cpus_per_gpu))
    elif part is not None and part.def_cpu_per_gpu and gpus:
        detail = f"DefCpuPerGPU={part.def_cpu_per_gpu} x {plural(gpus, 'GPU')} of {label}"
        where = part.origin("def_cpu_per_gpu")
        asked = Sourced(
            part.def_cpu_per_gpu * gpus,
            Provenance(Source.SITE_DEFAULT, f"{detail} ({where})" if where else detail),
        )
    elif tpn > 1:  # the tasks per node come from the job's options; each task gets Slurm's one CPU
        detail = f"{tpn} tasks per node, one CPU each (Slurm's default)"
        asked = Sourced(tpn, Provenance(Source.OPTION, detail))
    else:
        asked = Sourced(tpn, _ONE_CPU)
    if res.cpus_per_node and res.cpus_per_node > asked.value:
        asked = Sourced(res.cpus_per_node, say.option("mincpus", index, res.cpus_per_node))
    node_cpus = node.cpus.value if node is not None else None
    if whole and node_cpus:
        assert node is not None
        return Sourced(
            node_cpus,
            Provenance(
                Source.EXCLUSIVE,
                f"--exclusive: all {node_cpus} CPUs of a node of {label} ({node.cpus.detail})",
            ),
        )
    if node_cpus and asked.value > node_cpus:
        found.exceeds.append(f"{asked.value} CPUs per node; the nodes of {label} have {node_cpus}")
    return asked


def _memory(
    res: ir.Resources,
    index: int,
    whole: bool,
    part: PartitionConfig | None,
    node: NodeType | None,
    label: str,
    cpus: int,
    gpus: int,
    say: OptionDetails,
    found: _Findings,
) -> tuple[Sourced[int | None], bool]:
    """MiB per node, and whether that is all of the node's memory."""
    node_mem = node.mem_mb if node is not None and node.mem_mb.value else None
    asked = res.mem_per_node_mb or (res.mem_per_cpu_mb or 0) * cpus or (res.mem_per_gpu_mb or 0) * gpus
    if node_mem is not None and asked > (node_mem.value or 0):
        found.exceeds.append(f"{asked} MiB of memory per node; the nodes of {label} have {node_mem.value}")
    if res.mem_per_node_mb:
        return Sourced(res.mem_per_node_mb, say.option("mem", index, f"{res.mem_per_node_mb}M")), False
    if res.mem_per_node_mb == 0:
        if node_mem is None:
            found.notes.append(
                f"--mem=0 asks for all of a node's memory; the size of the nodes of {label} is unknown"
            )
            return Sourced(None, say.option("mem", index, "0")), True
        detail = say.option("mem", index, "0").detail
        return Sourced(
            node_mem.value, Provenance(Source.OPTION, f"{detail}: all of a node's memory ({node_mem.detail})")
        ), True
    extra = " (all of the node's, by --exclusive)" if whole else ""
    if res.mem_per_cpu_mb:
        option = say.option("mem-per-cpu", index, f"{res.mem_per_cpu_mb}M").detail
        detail = f"{option} x {plural(cpus, 'CPU')}{extra}"
        return Sourced(res.mem_per_cpu_mb * cpus, Provenance(Source.OPTION, detail)), False
    if res.mem_per_gpu_mb and gpus:
        detail = (
            f"{say.option('mem-per-gpu', index, f'{res.mem_per_gpu_mb}M').detail} x {plural(gpus, 'GPU')}"
        )
        return Sourced(res.mem_per_gpu_mb * gpus, Provenance(Source.OPTION, detail)), False
    default = _memory_default(part, label, cpus, gpus, extra)
    if default is not None:
        return default, False
    scheduled = part.memory_scheduled if part is not None else None
    if whole or scheduled:
        if whole:
            why = "--exclusive, no memory option and no memory default: the whole node's memory"
            source = Source.EXCLUSIVE
        else:
            where = part.origin("memory_scheduled") if part is not None else None
            why = (
                f"no memory option or default, and Slurm counts memory ({where or label}): "
                "the whole node's memory"
            )
            source = Source.SITE_DEFAULT
        if node_mem is None:
            found.notes.append(f"{why}, and the size of the nodes of {label} is unknown")
            return Sourced(None, Provenance(source, why)), True
        return Sourced(node_mem.value, Provenance(source, f"{why} ({node_mem.detail})")), True
    if scheduled is False:
        where = part.origin("memory_scheduled") if part is not None else None
        detail = (
            f"Slurm does not count memory ({where or label}): not limited, shared with the node's other jobs"
        )
        return Sourced(None, Provenance(Source.SITE_DEFAULT, detail)), False
    detail = (
        "no memory option and no memory default known: not limited (as where Slurm does not count memory)"
    )
    return Sourced(None, Provenance(Source.ASSUMED, detail)), False


def _memory_default(
    part: PartitionConfig | None, label: str, cpus: int, gpus: int, extra: str
) -> Sourced[int | None] | None:
    """slurm.conf DefMemPerNode, DefMemPerGPU or DefMemPerCPU (they are mutually exclusive)."""
    if part is None:
        return None
    for key, option, per, count in (
        ("def_mem_per_node_mb", "DefMemPerNode", "node", 1),
        ("def_mem_per_gpu_mb", "DefMemPerGPU", "GPU", gpus),
        ("def_mem_per_cpu_mb", "DefMemPerCPU", "CPU", cpus),
    ):
        value = getattr(part, key)
        if value and count:
            where = part.origin(key)
            times = "" if per == "node" else f" x {plural(count, per)}{extra if per == 'CPU' else ''}"
            detail = f"no memory option: {option}={value}{times} of {label}" + (
                f" ({where})" if where else ""
            )
            return Sourced(value * count, Provenance(Source.SITE_DEFAULT, detail))
    return None


def _gres(
    res: ir.Resources, index: int, whole: bool, node: NodeType | None, tpn: int, say: OptionDetails
) -> tuple[Sourced[Device], ...]:
    out: list[Sourced[Device]] = []
    asked: set[str] = set()
    for gres in res.generic:
        if gres.name == "gpu":
            continue
        count = gres.count * tpn if gres.per == GresScope.TASK else gres.count
        shown = ":".join([gres.name, *([gres.type] if gres.type else []), str(gres.count)])
        long = "tres-per-task" if gres.per == GresScope.TASK else "gres"
        asked.add(gres.name)
        out.append(Sourced(Device(gres.name, count, gres.type), say.option(long, index, shown)))
    if whole and node is not None:
        for device in node.devices:
            dev = device.value
            if "/" not in dev.name and dev.name not in asked:  # a Slurm GRES of the node
                detail = f"--exclusive: all {dev.quantity} {dev.name} of a node ({device.detail})"
                out.append(Sourced(dev, Provenance(Source.EXCLUSIVE, detail)))
    return tuple(out)


def _devices(
    node: NodeType | None,
    whole: bool,
    fabric: tuple[FabricUse, ...],
    gpus: int,
    cpus: int,
    label: str,
    nodes: int = 1,
) -> tuple[Sourced[Device], ...]:
    """Node devices Slurm does not schedule (EFA interfaces): every job on the node may use them.

    A job across nodes that holds every GPU of each uses them without saying so: NCCL takes the
    node's fabric through the image's plugin (aws-ofi-nccl), as it does on the Slurm node."""
    if node is None:
        return ()
    out: list[Sourced[Device]] = []
    for device in node.devices:
        dev = device.value
        if "/" not in dev.name:
            continue  # a Slurm GRES: only what the job asked, or all of them with --exclusive (_gres)
        if whole:
            detail = f"--exclusive: all {dev.quantity} {dev.name} of a node of {label} ({device.detail})"
            out.append(Sourced(dev, Provenance(Source.EXCLUSIVE, detail)))
            continue
        use = next((f for f in fabric if fabric_device(f.kind, dev.name)), None)
        if use is None and nodes > 1 and gpus and node.gpus.value and gpus >= node.gpus.value:
            detail = (
                f"all {dev.quantity} {dev.name}: {nodes} nodes with all {gpus} GPUs of each, whose NCCL "
                f"traffic takes the node's fabric ({device.detail})"
            )
            out.append(Sourced(dev, Provenance(Source.INFERRED, detail)))
            continue
        if use is None:
            continue
        share, basis = _share(dev.quantity, gpus, node.gpus.value, cpus, node.cpus.value)
        detail = (
            f"{use.variable} (line {use.line}): {share} of the {dev.quantity} {dev.name} of a node, {basis}"
        )
        out.append(Sourced(Device(dev.name, share), Provenance(Source.INFERRED, detail)))
    return tuple(out)


def _share(total: int, gpus: int, node_gpus: int | None, cpus: int, node_cpus: int | None) -> tuple[int, str]:
    if gpus and node_gpus:
        return max(1, total * gpus // node_gpus), f"in proportion to its {gpus} of {node_gpus} GPUs"
    if node_cpus:
        return max(1, total * cpus // node_cpus), f"in proportion to its {cpus} of {node_cpus} CPUs"
    return 1, "one, the size of its share being unknown"


def fabric_device(kind: FabricKind, resource: str) -> bool:
    """Whether a device resource name serves a fabric kind (efa -> vpc.amazonaws.com/efa)."""
    name = resource.lower()
    return any(word in name for word in FABRIC_DEVICE_WORDS[kind])


def missing_fabric_devices(comp: ComponentAllocation) -> tuple[FabricUse, ...]:
    """Fast-network variables of the script for which the partition names no device."""
    names = [d.value.name for d in (*comp.devices, *comp.gres)]
    names += [d.value.name for d in comp.node.devices] if comp.node is not None else []
    return tuple(f for f in comp.fabric if not any(fabric_device(f.kind, n) for n in names))


__all__ = [
    "FABRIC_DEVICE_WORDS",
    "WHOLE_NODE_MODES",
    "OptionDetails",
    "OptionLines",
    "OptionTexts",
    "component",
    "fabric_device",
    "missing_fabric_devices",
]
