"""What Kubernetes gives the pods of one role, and the Slurm request those pods amount to.

The Kubernetes half of the allocation model (``docs/allocation.md``). A role's
pods each ask for CPUs, memory and devices; the scheduler puts as many on a node
as its allocatable share holds, so a role of 8 one-GPU pods fills one 8-GPU
node, not eight. Devices are typed by ``migrate.devices``: a Neuron device is an
accelerator like a GPU, an EFA interface a node device. What an operator adds
is read here too: the MPI Operator's Launcher runs only ``mpirun`` (the batch
step does that on Slurm, on the first node), and an MPIJob's Worker is
``slotsPerWorker`` ranks.

``slurm_request`` turns a packed role into the ``ir.Resources`` Slurm would be
asked for (nodes, tasks per node, CPUs per task, memory and GRES per node,
``--exclusive`` when the pods take whole nodes); ``allocation_resources``
then allocates that request like any sbatch job, so that the plan and the Slurm
writer read one answer.
"""

from __future__ import annotations

from typing import NamedTuple

from migrate import ir, workloads
from migrate.devices import GPU, GPU_SLICE, SLICE_TYPE, DeviceKind, DeviceType, device_type
from migrate.render import plural
from migrate.site.allocation_model import NodeType, Provenance, Source, Sourced
from migrate.site.config import DEFAULT_GPUS_PER_NODE, KubernetesSettings


class PodDevice(NamedTuple):
    """A device one pod asks for: its resource name, count and row of the device table."""

    resource: str
    quantity: int
    type: DeviceType | None

    @property
    def accelerator(self) -> bool:
        return self.type is not None and self.type.accelerator


class PodGroup(NamedTuple):
    """How the pods of one role land on nodes."""

    pods: int
    pods_per_node: Sourced[int]
    nodes: int
    whole_node: bool  # one pod per node holding all of the node's accelerators (or all it gives pods)
    tasks_per_pod: int  # Slurm tasks a pod becomes: 1, or an MPI Worker's slots
    accelerator: PodDevice | None  # the pod's accelerator (GPUs, or a device the table calls one)
    devices: tuple[PodDevice, ...]  # every device the pod asks for, the accelerator among them
    launcher_only: bool = False  # the MPI Operator's Launcher: no node of its own on Slurm


def pod_devices(res: ir.Resources) -> tuple[PodDevice, ...]:
    """The devices of one pod: its GPUs (the reader sums them) and each extended resource, typed."""
    out: list[PodDevice] = []
    if res.gpus_per_node:
        typed = res.gpu_type or ""
        sliced = typed.startswith(SLICE_TYPE)
        name = GPU_SLICE.resource + typed[len(SLICE_TYPE) :] if sliced else GPU.resource
        out.append(PodDevice(name, res.gpus_per_node, device_type(name)))
    for generic in res.generic:
        found = device_type(generic.name)
        if found is not None or "/" in generic.name:
            out.append(PodDevice(generic.name, generic.count, found))
    return tuple(out)


def is_launcher(job: ir.Job, comp: ir.Component) -> bool:
    """The MPI Operator's Launcher role, unless ``runLauncherAsWorker`` makes it a worker too."""
    launcher = _mpi_launcher(job)
    if not launcher or comp.name.lower() != launcher or len(job.components) < 2:
        return False
    return not any(item.key == "runLauncherAsWorker" and item.value.lower() == "true" for item in job.raw)


def _mpi_launcher(job: ir.Job) -> str:
    """The role of the job's kind that only runs mpirun (lower case), or ""."""
    declared = workloads.declared(job.kind)
    return declared.mpi_launcher.lower() if declared is not None else ""


def pod_count(comp: ir.Component) -> int:
    return max(1, comp.replicas) * max(1, comp.resources.nodes_min or 1) * max(1, comp.pods_per_job)


def group(
    job: ir.Job, comp: ir.Component, node: NodeType | None, label: str, settings: KubernetesSettings
) -> PodGroup:
    """Pack one role's pods onto the nodes of its partition (``label`` names it in details)."""
    res = comp.resources
    pods = pod_count(comp)
    devices = pod_devices(res)
    accelerator = next((d for d in devices if d.accelerator), None)
    tasks_per_pod = res.tasks_per_node or 1 if _mpi_launcher(job) else 1
    if is_launcher(job, comp):
        detail = (
            "the MPI Operator's Launcher only runs mpirun: on Slurm the batch step does, on the first node"
        )
        return PodGroup(pods, Sourced(0, Provenance(Source.OPTION, detail)), 0, False, 1, None, devices, True)

    def one_per_node(source: Source, detail: str) -> PodGroup:
        one = Sourced(1, Provenance(source, detail))
        return PodGroup(pods, one, pods, False, tasks_per_pod, accelerator, devices)

    declared = workloads.declared(job.kind)
    if declared is not None and declared.pod_per_node:  # a Ray cluster: one ray start on each node
        return one_per_node(Source.OPTION, f"one pod per node: {declared.pod_per_node}")
    if node is None and accelerator is not None and accelerator.type is not None:
        # the common 8-GPU (or 8-device) server, as the plan assumes wherever migrate.yaml says nothing
        per_node = max(1, DEFAULT_GPUS_PER_NODE // accelerator.quantity)
        detail = (
            f"what a node of {label} holds is unknown: {DEFAULT_GPUS_PER_NODE}-{_name(accelerator)} nodes "
            f"assumed, {plural(per_node, 'pod')} per node"
        )
        assumed = Sourced(min(per_node, pods), Provenance(Source.ASSUMED, detail))
        whole = accelerator.quantity >= DEFAULT_GPUS_PER_NODE
        return PodGroup(pods, assumed, -(-pods // per_node), whole, tasks_per_pod, accelerator, devices)
    if node is None:
        return one_per_node(
            Source.ASSUMED, f"what a node of {label} holds is unknown: one pod per node assumed"
        )
    fits: list[tuple[int, str]] = []
    node_accelerators = node_count(node, accelerator) if accelerator is not None else None
    if accelerator is not None and node_accelerators:
        shown = f"{node_accelerators} {_name(accelerator)}" + ("s" if _name(accelerator) == "GPU" else "")
        fits.append((node_accelerators // accelerator.quantity, shown))
    if res.cpus_per_node and node.cpus.value:
        free = max(1, node.cpus.value - settings.reserved_cpus)
        fits.append((free // res.cpus_per_node, f"{free} allocatable CPUs"))
    if res.mem_per_node_mb and node.mem_mb.value:
        free = node.mem_mb.value * (100 - settings.reserved_memory_pct) // 100
        fits.append((free // res.mem_per_node_mb, f"{free // 1024} GiB allocatable memory"))
    for device in devices:
        if device is accelerator or device.type is None:
            continue
        have = node_count(node, device)
        if have:
            fits.append((have // device.quantity, f"{have} {device.resource}"))
    if not fits:
        detail = f"the pods ask for nothing a node of {label} is known to have: one pod per node assumed"
        return one_per_node(Source.ASSUMED, detail)
    per_node, bound = min(fits)
    if per_node < 1:  # larger than a node: the scheduler never places it; one per node, and exceeds says so
        per_node, bound = 1, "no node of " + label + " holds one pod"
    source = node.cpus.source if node.cpus.value else node.gpus.source
    detail = f"{plural(per_node, 'pod')} per node of {label}, bounded by its {bound}"
    whole = per_node == 1 and (
        (
            accelerator is not None
            and node_accelerators is not None
            and accelerator.quantity >= node_accelerators
        )
        or (
            bool(res.cpus_per_node)
            and node.cpus.value is not None
            and (res.cpus_per_node or 0) * 2 > node.cpus.value
        )
    )
    used = min(per_node, pods)
    return PodGroup(
        pods,
        Sourced(used, Provenance(source, detail)),
        -(-pods // per_node),
        whole,
        tasks_per_pod,
        accelerator,
        devices,
    )


def node_count(node: NodeType, device: PodDevice) -> int | None:
    """How many of ``device`` one node has: its GPUs, or its entry in the partition's devices."""
    if device.type is not None and device.type.kind == DeviceKind.GPU and node.gpus.value:
        return node.gpus.value
    for held in node.devices:
        if held.value.name == device.resource or (
            device.type is not None and device.type.gres is not None and held.value.name == device.type.gres
        ):
            return held.value.quantity
    return None


def _name(device: PodDevice) -> str:
    if device.type is not None and device.type.kind == DeviceKind.GPU:
        return "GPU"
    return device.resource


def slurm_request(comp: ir.Component, packed: PodGroup) -> ir.Resources:
    """The Slurm request the packed pods of one role amount to, per node."""
    res = comp.resources
    per_node = packed.pods_per_node.value
    # GPUs stay GPUs; every other device but a network interface (a node device, not a GRES) is one GRES
    generic = tuple(
        ir.GenericResource(d.resource, d.quantity * per_node)
        for d in packed.devices
        if d.type is None or d.type.kind not in (DeviceKind.GPU, DeviceKind.GPU_SLICE, DeviceKind.NIC)
    )
    gpus = res.gpus_per_node * per_node if res.gpus_per_node else None
    return ir.replace(
        res,
        nodes_min=packed.nodes,
        nodes_max=None,
        tasks=packed.pods * packed.tasks_per_pod if packed.nodes > 1 and packed.pods % per_node else None,
        tasks_per_node=per_node * packed.tasks_per_pod,
        cpus_per_task=-(-res.cpus_per_node // packed.tasks_per_pod) if res.cpus_per_node else None,
        cpus_per_node=None,
        mem_per_node_mb=res.mem_per_node_mb * per_node if res.mem_per_node_mb else None,
        gpus_per_node=gpus,
        generic=generic,
        exclusive="node" if packed.whole_node else None,
    )


__all__ = [
    "PodDevice",
    "PodGroup",
    "group",
    "is_launcher",
    "node_count",
    "pod_count",
    "pod_devices",
    "slurm_request",
]
