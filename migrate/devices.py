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
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


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

    @property
    def accelerator(self) -> bool:
        return self.kind in ACCELERATOR_KINDS

    def model(self, resource: str) -> str | None:
        """The model a family member names (``1g.10gb`` of ``nvidia.com/mig-1g.10gb``)."""
        if self.prefix and resource.startswith(self.resource) and len(resource) > len(self.resource):
            return resource[len(self.resource) :]
        return None


DEVICES: tuple[DeviceType, ...] = (
    DeviceType("nvidia.com/gpu", DeviceKind.GPU, "nvidia", "GPU", "gpu"),
    DeviceType("nvidia.com/mig-", DeviceKind.GPU_SLICE, "nvidia", "MIG slice", "gpu", prefix=True),
    DeviceType("amd.com/gpu", DeviceKind.GPU, "amd", "Instinct GPU", "gpu"),
    DeviceType("gpu.intel.com/i915", DeviceKind.GPU, "intel", "GPU (i915)", "gpu"),
    DeviceType("gpu.intel.com/xe", DeviceKind.GPU, "intel", "GPU (xe)", "gpu"),
    DeviceType("habana.ai/gaudi", DeviceKind.ACCELERATOR, "intel", "Gaudi", "gaudi"),
    DeviceType("aws.amazon.com/neuron", DeviceKind.ACCELERATOR, "aws", "Trainium/Inferentia", "neuron"),
    DeviceType("aws.amazon.com/neurondevice", DeviceKind.ACCELERATOR, "aws", "Trainium/Inferentia", "neuron"),
    DeviceType("aws.amazon.com/neuroncore", DeviceKind.ACCELERATOR_CORE, "aws", "NeuronCore", None),
    DeviceType("google.com/tpu", DeviceKind.ACCELERATOR, "google", "TPU", "tpu"),
    DeviceType("vpc.amazonaws.com/efa", DeviceKind.NIC, "aws", "EFA interface"),
    DeviceType("rdma/", DeviceKind.NIC, "", "RDMA device", prefix=True),
    DeviceType("nvidia.com/rdma", DeviceKind.NIC, "nvidia", "RDMA device"),
    DeviceType("intel.com/sriov", DeviceKind.NIC, "intel", "SR-IOV function", prefix=True),
    DeviceType("xilinx.com/fpga-", DeviceKind.FPGA, "amd", "FPGA", "fpga", prefix=True),
    DeviceType("intel.com/fpga", DeviceKind.FPGA, "intel", "FPGA", "fpga", prefix=True),
)

_EXACT = {d.resource: d for d in DEVICES if not d.prefix}
_FAMILIES = tuple(d for d in DEVICES if d.prefix)


# Dynamic Resource Allocation: the driver a DeviceClass selects -> the device plugin's resource name
# for the same devices (a claim of 2 gpu.nvidia.com devices is 2 nvidia.com/gpu).
DRA_DRIVERS: dict[str, str] = {
    "gpu.nvidia.com": "nvidia.com/gpu",
    "gpu.amd.com": "amd.com/gpu",
    "gpu.intel.com": "gpu.intel.com/xe",
    "neuron.aws.com": "aws.amazon.com/neuron",
    "tpu.google.com": "google.com/tpu",
    "gaudi.habana.ai": "habana.ai/gaudi",
}


def dra_resource(driver_or_class: str) -> str | None:
    """The resource name of the devices a DRA driver (or a DeviceClass named after it) hands out."""
    return DRA_DRIVERS.get(driver_or_class)


def device_type(resource: str) -> DeviceType | None:
    """The row for a resource name; None for cpu, memory, hugepages and names no row knows."""
    found = _EXACT.get(resource)
    if found is not None:
        return found
    return next((d for d in _FAMILIES if resource.startswith(d.resource)), None)


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


__all__ = [
    "ACCELERATOR_KINDS",
    "DEVICES",
    "DRA_DRIVERS",
    "DeviceKind",
    "DeviceType",
    "device_type",
    "dra_resource",
    "gres_for",
    "is_gpu",
    "short_name",
]
