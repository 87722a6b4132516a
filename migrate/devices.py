"""The one table of devices a pod can ask for, by the resource name their device plugin gives.

Kubernetes knows a device only as an extended resource (``nvidia.com/gpu``,
``aws.amazon.com/neuron``); Slurm knows it as a GRES (``gpu``, ``neuron``) or
not at all (EFA interfaces are node devices every job on the node uses). Each
row says what the device is (its kind), who makes it, and the GRES name a Slurm
site gives it unless its ``migrate.yaml`` ``gres:`` table says otherwise.

Kinds that count as accelerators (GPUs, GPU slices, Trainium, Gaudi, TPU) are
what the plan counts as accelerator-hours; a network interface or an FPGA is
not. Names come from the vendors' device plugins (see
``docs/allocation.md``, "What Kubernetes gives a pod").

Each row is one declaration, registered with ``register`` (or ``registered``
for a while, as the tests do): the Kubernetes reader (the pods' limits, DRA
claims, the node labels that name a GPU model), the allocation model, the plan's
counts and both writers read this registry, so a new device is one declaration;
see docs/architecture.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from migrate.declared import Declared


class DeviceKind(StrEnum):
    GPU = "gpu"  # a whole GPU
    GPU_SLICE = "gpu-slice"  # a MIG instance: a fixed share of one GPU
    ACCELERATOR = "accelerator"  # a non-GPU accelerator device (Trainium/Inferentia, Gaudi, TPU)
    ACCELERATOR_CORE = "accelerator-core"  # one core of such a device (aws.amazon.com/neuroncore)
    NIC = "nic"  # a network interface for RDMA (EFA, InfiniBand HCA, SR-IOV VF)
    FPGA = "fpga"
    OTHER = "other"


ACCELERATOR_KINDS = frozenset({DeviceKind.GPU, DeviceKind.GPU_SLICE, DeviceKind.ACCELERATOR})


@dataclass(frozen=True, slots=True)
class DeviceType:
    """One row: a resource name (or, with ``prefix``, a family of them) and what it is."""

    resource: str
    kind: DeviceKind
    vendor: str
    product: str = ""  # what the device is, for people: "Trainium/Inferentia", "Gaudi"
    gres: str | None = None  # the GRES name a Slurm site usually gives it; None: not a GRES (node device)
    prefix: bool = False  # ``resource`` starts a family: nvidia.com/mig-1g.10gb, rdma/hca_shared_devices_a
    dra_driver: str = ""  # the Dynamic Resource Allocation driver that hands out the same devices
    node_label: str = ""  # the node label whose value names the model (GPU feature discovery's)
    visible_devices: str = ""  # the variable that lists the devices a process sees (0..N-1)

    @property
    def name(self) -> str:
        return self.resource

    @property
    def accelerator(self) -> bool:
        return self.kind in ACCELERATOR_KINDS

    def model(self, resource: str) -> str | None:
        """The model a family member names (``1g.10gb`` of ``nvidia.com/mig-1g.10gb``)."""
        if self.prefix and resource.startswith(self.resource) and len(resource) > len(self.resource):
            return resource[len(self.resource) :]
        return None


_DEVICES: Declared[DeviceType] = Declared("device", lambda device: _problem(device))
register = _DEVICES.register  # a device every stage knows
registered = _DEVICES.registered  # devices for a ``with`` block; the registry as it was afterwards


def _problem(device: DeviceType) -> str | None:
    if "/" not in device.resource:
        return "a device plugin's resource name has a domain: <vendor domain>/<name>"
    if device.dra_driver and dra_resource(device.dra_driver) is not None:
        return f"another device is handed out by the DRA driver {device.dra_driver}"
    return None


def devices() -> tuple[DeviceType, ...]:
    """Every registered device, in the order registered."""
    return tuple(_DEVICES.table.values())


def dra_resource(driver_or_class: str) -> str | None:
    """The resource name of the devices a DRA driver (or a DeviceClass named after it) hands out: a
    claim of 2 gpu.nvidia.com devices is 2 nvidia.com/gpu."""
    if not driver_or_class:
        return None
    return next((d.resource for d in _DEVICES.table.values() if d.dra_driver == driver_or_class), None)


def device_type(resource: str) -> DeviceType | None:
    """The row for a resource name; None for cpu, memory, hugepages and names no row knows."""
    found = _DEVICES.table.get(resource)
    if found is not None and not found.prefix:
        return found
    return next((d for d in _DEVICES.table.values() if d.prefix and resource.startswith(d.resource)), None)


def is_whole_gpu(resource: str) -> bool:
    """A whole GPU of any vendor: its count is the pod's GPUs."""
    found = device_type(resource)
    return found is not None and found.kind == DeviceKind.GPU


def node_labels() -> tuple[str, ...]:
    """The node labels that name a device's model, in the order the devices were registered."""
    return tuple(d.node_label for d in _DEVICES.table.values() if d.node_label)


def is_gpu(resource: str) -> bool:
    """A whole GPU or a GPU slice: counted as GPUs wherever the IR counts GPUs."""
    found = device_type(resource)
    return found is not None and found.kind in (DeviceKind.GPU, DeviceKind.GPU_SLICE)


def gres_for(resource: str, site_gres: tuple[tuple[str, str], ...] = ()) -> str | None:
    """The GRES name a resource takes on Slurm: the site's ``gres:`` table first, then the table here."""
    named = next((gres for gres, mapped in site_gres if mapped == resource), None)
    if named is not None:
        return named
    found = device_type(resource)
    return found.gres if found is not None else None


def short_name(resource: str) -> str:
    """A device as people count it: its usual GRES name (``neuron``), else the resource's last part."""
    return gres_for(resource) or resource.rsplit("/", 1)[-1]


# The declarations.

# The device an IR job's GPUs are written as on Kubernetes, its model a node label, and the family of
# its slices (a MIG profile ``mig-1g.10gb`` of the IR is the resource ``nvidia.com/mig-1g.10gb``).
GPU = register(
    DeviceType(
        "nvidia.com/gpu",
        DeviceKind.GPU,
        "nvidia",
        "GPU",
        "gpu",
        dra_driver="gpu.nvidia.com",
        node_label="nvidia.com/gpu.product",
        visible_devices="CUDA_VISIBLE_DEVICES",
    )
)
GPU_SLICE = register(
    DeviceType(
        "nvidia.com/mig-",
        DeviceKind.GPU_SLICE,
        "nvidia",
        "MIG slice",
        "gpu",
        prefix=True,
        visible_devices="CUDA_VISIBLE_DEVICES",
    )
)
SLICE_TYPE = "mig-"  # ir.Resources.gpu_type of a slice: this, then the profile
register(
    DeviceType(
        "amd.com/gpu",
        DeviceKind.GPU,
        "amd",
        "Instinct GPU",
        "gpu",
        dra_driver="gpu.amd.com",
        node_label="amd.com/gpu.product-name",
    )
)
register(DeviceType("gpu.intel.com/i915", DeviceKind.GPU, "intel", "GPU (i915)", "gpu"))
register(
    DeviceType("gpu.intel.com/xe", DeviceKind.GPU, "intel", "GPU (xe)", "gpu", dra_driver="gpu.intel.com")
)
register(
    DeviceType(
        "habana.ai/gaudi", DeviceKind.ACCELERATOR, "intel", "Gaudi", "gaudi", dra_driver="gaudi.habana.ai"
    )
)
register(
    DeviceType(
        "aws.amazon.com/neuron",
        DeviceKind.ACCELERATOR,
        "aws",
        "Trainium/Inferentia",
        "neuron",
        dra_driver="neuron.aws.com",
    )
)
register(
    DeviceType("aws.amazon.com/neurondevice", DeviceKind.ACCELERATOR, "aws", "Trainium/Inferentia", "neuron")
)
register(DeviceType("aws.amazon.com/neuroncore", DeviceKind.ACCELERATOR_CORE, "aws", "NeuronCore", None))
register(
    DeviceType("google.com/tpu", DeviceKind.ACCELERATOR, "google", "TPU", "tpu", dra_driver="tpu.google.com")
)
register(DeviceType("vpc.amazonaws.com/efa", DeviceKind.NIC, "aws", "EFA interface"))
register(DeviceType("rdma/", DeviceKind.NIC, "", "RDMA device", prefix=True))
register(DeviceType("nvidia.com/rdma", DeviceKind.NIC, "nvidia", "RDMA device"))
register(DeviceType("intel.com/sriov", DeviceKind.NIC, "intel", "SR-IOV function", prefix=True))
register(DeviceType("xilinx.com/fpga-", DeviceKind.FPGA, "amd", "FPGA", "fpga", prefix=True))
register(DeviceType("intel.com/fpga", DeviceKind.FPGA, "intel", "FPGA", "fpga", prefix=True))

DEVICES = devices()  # the built-in devices; ``devices()`` also has those registered later


__all__ = [
    "ACCELERATOR_KINDS",
    "DEVICES",
    "GPU",
    "GPU_SLICE",
    "SLICE_TYPE",
    "DeviceKind",
    "DeviceType",
    "device_type",
    "devices",
    "dra_resource",
    "gres_for",
    "is_gpu",
    "is_whole_gpu",
    "node_labels",
    "register",
    "registered",
    "short_name",
]
