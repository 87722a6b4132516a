"""GPU types as node labels, and whether one node holds every type a pod asks for.

The device plugin's ``nvidia.com/gpu`` counts GPUs of any type: the type is the node label
``nvidia.com/gpu.product`` that GPU feature discovery sets, whose value for each GRES type the site
config gives (``gpu_products:``). A type the site does not map gets a placeholder value for the
user to fill in.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from migrate.devices import GPU
from migrate.names import dns1123_label
from migrate.site.allocation_model import NodeType

from .site import Site

GPU_PRODUCT = GPU.node_label  # the label of the device the IR's GPUs are written as


class ProductValues(NamedTuple):
    values: tuple[str, ...]  # the label value of each type, in the order asked
    placeholders: tuple[tuple[str, str], ...]  # (type, placeholder) for the types the site does not map


def product_values(site: Site, types: Sequence[str]) -> ProductValues:
    values: list[str] = []
    placeholders: list[tuple[str, str]] = []
    for gpu_type in types:
        product = site.gpu_product(gpu_type)
        if product is None:
            product = "REPLACE-ME-" + dns1123_label(gpu_type, 40, "gpu")
            placeholders.append((gpu_type, product))
        values.append(product)
    return ProductValues(tuple(values), tuple(placeholders))


def no_node_holds(node: NodeType | None, types: Sequence[str]) -> str | None:
    """Why no node of the job's partition holds every type asked, or None when one may.

    The site describes a partition's nodes with one GPU type, so a partition whose GPU type is
    known holds no node with two; where the site does not say, a node may.
    """
    held = node.gpu_type.value if node is not None else None
    if node is None or not held or {t.lower() for t in types} <= {held.lower()}:
        return None
    return f"the nodes of the job's partition hold {held} GPUs only ({node.gpu_type.detail})"


__all__ = ["GPU_PRODUCT", "ProductValues", "no_node_holds", "product_values"]
