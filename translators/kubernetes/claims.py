"""Devices a pod gets through Dynamic Resource Allocation: its resourceClaims, counted as devices.

A pod that asks for GPUs through DRA names no ``nvidia.com/gpu``; it lists
``spec.resourceClaims``, each a ResourceClaimTemplate (or ResourceClaim) whose
requests name a DeviceClass and a count. The claims of the same file are read
as context (``manifest_context._device_claims``); here each claim the pod names
adds its devices to the pod's resources, typed through the DeviceClass's
driver (``dra_driver`` of the rows of ``migrate.devices``): GPUs as GPUs, other devices under the
device plugin's resource name. A claim of another file, or of a class whose
driver is unknown, is kept as a raw item by the reader (its field is not read).
"""

from __future__ import annotations

from dataclasses import replace

from migrate import ir
from migrate.devices import DeviceKind, device_type, dra_resource

from .manifest_context import FileContext
from .manifest_fields import ObjectView, Path


def with_claimed_devices(
    view: ObjectView, template: Path | None, resources: ir.Resources, context: FileContext
) -> ir.Resources:
    """``resources`` with the devices of every claim the pod at ``template`` names that the file defines."""
    if template is None or not context.device_claims:
        return resources
    claims = (*template, "spec", "resourceClaims")
    gpus = resources.gpus_per_node or 0
    generic = list(resources.generic)
    counted = False
    for cpath, _ in view.items(claims):
        name = view.string((*cpath, "resourceClaimTemplateName")) or view.string(
            (*cpath, "resourceClaimName")
        )
        asked = context.device_claims.get(name or "")
        resolved = [(resource, count) for cls, count in asked or () if (resource := _resource(cls, context))]
        if asked is None or len(resolved) != len(asked):
            continue  # a claim of another file or of an unknown driver: left to the raw items
        for resource, count in resolved:
            found = device_type(resource)
            if found is not None and found.kind in (DeviceKind.GPU, DeviceKind.GPU_SLICE):
                gpus += count
            else:
                generic.append(ir.GenericResource(resource, count))
        view.touch(cpath)
        counted = True
    if not counted:
        return resources
    for kind in ("containers", "initContainers"):  # their claims name the pod's: counted once, above
        for kpath, _ in view.items((*template, "spec", kind)):
            if view.has((*kpath, "resources", "claims")):
                view.touch((*kpath, "resources", "claims"))
    return replace(resources, gpus_per_node=gpus or None, generic=tuple(generic))


def _resource(device_class: str, context: FileContext) -> str | None:
    return dra_resource(device_class) or dra_resource(context.device_classes.get(device_class, ""))


__all__ = ["with_claimed_devices"]
