"""Values files of slurm-operator's ``slurm`` Helm chart, told apart from Kubernetes objects.

``migrate plan`` writes the chart's values next to the objects they render
(``coexistence/slinky-values.yaml``), so ``migrate validate`` meets a YAML
mapping with no ``apiVersion`` or ``kind``. It is taken for the chart's values
when it carries one of the keys only that chart's values have; it is then
checked against ``schemas/slinky-chart-values.json`` and the chart's own rules
below, not as an object. Any other mapping without ``apiVersion`` keeps its
error.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

SCHEMA_ID = "urn:migrate:schema:slinky-chart-values"
LABEL = "slurm chart values"  # stands for "apiVersion kind" in validate's summary

# Top-level keys of helm/slurm/values.yaml no Kubernetes object and no common chart
# convention uses: one of them marks a values file for this chart.
_OWN_KEYS = frozenset(
    {
        "clusterName",
        "configFiles",
        "jwksKeys",
        "jwtKey",
        "loginsetDefaults",
        "loginsets",
        "nodesetDefaults",
        "nodesets",
        "partitions",
        "slurmKey",
    }
)
_ALL_NODESETS = "ALL"  # a partition's stand-in for every enabled NodeSet


def is_slurm_chart_values(doc: Any) -> bool:
    """A mapping with neither apiVersion nor kind, holding a key only the slurm chart's values have."""
    if not isinstance(doc, Mapping) or "apiVersion" in doc or "kind" in doc:
        return False
    return any(key in _OWN_KEYS for key in doc)


def _enabled_nodesets(doc: Mapping[str, Any]) -> set[str]:
    defaults = doc.get("nodesetDefaults")
    default = defaults.get("enabled", True) if isinstance(defaults, Mapping) else True
    sets = doc.get("nodesets")
    if not isinstance(sets, Mapping):
        return set()
    return {
        str(name)
        for name, entry in sets.items()
        if (entry.get("enabled", default) if isinstance(entry, Mapping) else default)
    }


def rules(doc: Mapping[str, Any]) -> Iterator[tuple[list[str | int], str]]:
    """What makes ``helm template`` fail: an enabled partition naming a NodeSet that is not there.

    From helm/slurm/templates/controller/_helpers.tpl (the partitions' slurm.conf lines).
    """
    partitions = doc.get("partitions")
    if not isinstance(partitions, Mapping):
        return
    enabled = _enabled_nodesets(doc)
    for name, part in partitions.items():
        if not isinstance(part, Mapping) or not part.get("enabled"):
            continue
        listed = part.get("nodesets")
        for index, wanted in enumerate(listed if isinstance(listed, list) else []):
            if wanted != _ALL_NODESETS and wanted not in enabled:
                yield (
                    ["partitions", str(name), "nodesets", index],
                    f"partition {name!r} names NodeSet {wanted!r}, which nodesets does not enable",
                )


__all__ = ["LABEL", "SCHEMA_ID", "is_slurm_chart_values", "rules"]
