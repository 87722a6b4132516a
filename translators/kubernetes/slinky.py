"""Slinky slurm-operator objects for a site's partitions: the slurm chart's values and the CRs they stand for.

The values follow the v1.x chart layout: ``nodesets.<name>`` (deep-merged over
``nodesetDefaults`` by the chart) with ``replicas``, ``slurmd.resources`` (GPUs
and node devices), ``extraConfMap`` (GRES and features), ``podSpec``
(``nodeSelector``, ``tolerations``), and ``partitions.<name>`` naming its
NodeSets. In hybrid mode ``controller.external`` points at the site's own
slurmctld; the chart then renders only the auth refs and the address into the
Controller, so the values leave out what would reach nothing
(``NOT_RENDERED_WHEN_EXTERNAL``) and the site's slurm.conf declares the NodeSets
and their partitions instead (``slurm_conf_lines``, ``partition_lines``).

The CRs are what the chart renders from those values: one NodeSet per
partition, named ``<release>-worker-<name>`` with the hostname prefix
``<name>-`` so that its Slurm nodes are ``<name>-0``, ``<name>-1`` ..., and the
Controller. ``validate.py`` checks both against ``schemas/slinky-*.json``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from migrate.site.config import PartitionConfig, SiteConfig

API_VERSION = "slinky.slurm.net/v1beta1"
RELEASE = "slurm"  # the Helm release the values are written for
NAMESPACE = "slurm"
SLURMCTLD_PORT = 6817
GPU_RESOURCE = "nvidia.com/gpu"
SLURM_KEY_SECRET = "slurm-key"  # where hybrid mode expects the cluster's slurm.key and jwt.key
JWT_KEY_SECRET = "slurm-jwt-key"
# With controller.external the chart's Controller template (helm/slurm/templates/controller/
# controller-cr.yaml) renders only the auth refs, accountingRef, external and externalConfig:
# these values would reach nothing, and the site's own slurm.conf and gres.conf stand for them.
NOT_RENDERED_WHEN_EXTERNAL = ("clusterName", "configFiles", "partitions")


def not_rendered_when_external() -> str:
    """``NOT_RENDERED_WHEN_EXTERNAL`` in words, for the notes that say why those values are missing."""
    *head, last = NOT_RENDERED_WHEN_EXTERNAL
    return f"{', '.join(head)} or {last}"


@dataclass(frozen=True, slots=True)
class NodeSetPlan:
    """One partition moved into a NodeSet: its name and how many of its nodes run slurmd in pods."""

    partition: str
    replicas: int
    config: PartitionConfig


@dataclass(frozen=True, slots=True)
class ExternalController:
    host: str
    port: int = SLURMCTLD_PORT


def parse_slurmctld_host(value: str) -> str:
    """``nw1-head(10.20.0.10)`` -> the address (in the parentheses), else the host name."""
    name, _, address = value.partition("(")
    return address.rstrip(")").strip() or name.strip()


def partition_features(part: PartitionConfig, site: SiteConfig) -> list[str]:
    """The --constraint words whose node selector the partition's nodes carry."""
    labels = set(part.node_selector)
    return sorted(word for word, selector in site.features if selector and set(selector) <= labels)


def _resources(part: PartitionConfig) -> dict[str, Any]:
    wanted: dict[str, Any] = {}
    if part.gpus_per_node:
        wanted[GPU_RESOURCE] = part.gpus_per_node
    for name, count in part.devices:
        if "/" in name:  # an extended resource; a bare name is a Slurm GRES
            wanted[name] = count
    return {"limits": dict(wanted), "requests": dict(wanted)} if wanted else {}


def _gres(part: PartitionConfig) -> list[str]:
    out = []
    if part.gpus_per_node:
        kind = f":{part.gpu_type}" if part.gpu_type else ""
        out.append(f"gpu{kind}:{part.gpus_per_node}")
    out += [f"{name}:{count}" for name, count in part.devices if "/" not in name]
    return out


def _tolerations(part: PartitionConfig) -> list[dict[str, Any]]:
    out = []
    for pairs in part.tolerations:
        entry: dict[str, Any] = dict(pairs)
        if "tolerationSeconds" in entry:
            entry["tolerationSeconds"] = int(entry["tolerationSeconds"])
        out.append(entry)
    return out


def _conf_map(plan: NodeSetPlan, site: SiteConfig) -> dict[str, Any]:
    conf: dict[str, Any] = {}
    if gres := _gres(plan.config):
        conf["Gres"] = gres
    if features := partition_features(plan.config, site):
        conf["Features"] = features
    return conf


def _pod_spec(part: PartitionConfig) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if part.node_selector:
        spec["nodeSelector"] = dict(part.node_selector)
    if tolerations := _tolerations(part):
        spec["tolerations"] = tolerations
    return spec


def _partition_conf(part: PartitionConfig) -> dict[str, Any]:
    conf: dict[str, Any] = {"State": "UP"}
    if part.default:
        conf["Default"] = "YES"
    if part.max_time_s is not None:
        conf["MaxTime"] = part.max_time_s // 60
    if part.default_time_s is not None:
        conf["DefaultTime"] = part.default_time_s // 60
    return conf


def helm_values(
    nodesets: Sequence[NodeSetPlan], site: SiteConfig, external: ExternalController | None
) -> dict[str, Any]:
    """The slurm chart's values for these NodeSets."""
    sets: dict[str, Any] = {}
    for plan in nodesets:
        entry: dict[str, Any] = {"enabled": True, "replicas": plan.replicas}
        if resources := _resources(plan.config):
            entry["slurmd"] = {"resources": resources}
        if conf := _conf_map(plan, site):
            entry["extraConfMap"] = conf
        if pod := _pod_spec(plan.config):
            entry["podSpec"] = pod
        sets[plan.partition] = entry
    if external is not None:
        return {  # nothing of NOT_RENDERED_WHEN_EXTERNAL: the site's slurm.conf declares it
            "controller": {
                "external": True,
                "externalConfig": {"host": external.host, "port": external.port},
            },
            "slurmKey": {"create": False, "secretRef": {"name": SLURM_KEY_SECRET, "key": "slurm.key"}},
            "jwtKey": {"create": False, "secretRef": {"name": JWT_KEY_SECRET, "key": "jwt.key"}},
            "nodesets": sets,
        }
    gpus = any(p.config.gpus_per_node for p in nodesets)
    values: dict[str, Any] = {
        "clusterName": site.site,
        "controller": {"extraConfMap": {"GresTypes": "gpu"}} if gpus else {},
    }
    if gpus:
        values["configFiles"] = {"gres.conf": "AutoDetect=nvidia\n"}
    values["nodesets"] = sets
    values["partitions"] = {
        plan.partition: {
            "enabled": True,
            "nodesets": [plan.partition],
            "configMap": _partition_conf(plan.config),
        }
        for plan in nodesets
    }
    return values


def _extra_conf(conf: Mapping[str, Any]) -> str:
    """``extraConfMap`` as the chart joins it into NodeSet.spec.extraConf: sorted ``Key=a,b`` words."""
    return " ".join(
        f"{key}={','.join(str(v) for v in value) if isinstance(value, list) else value}"
        for key, value in sorted(conf.items())
    )


def nodeset_object(plan: NodeSetPlan, site: SiteConfig) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "controllerRef": {"name": RELEASE},  # name only: the Controller is in the NodeSet's namespace
        "replicas": plan.replicas,
        "slurmd": {"name": "slurmd"},
        "template": {"spec": {"hostname": f"{plan.partition}-", **_pod_spec(plan.config)}},
        "partition": {
            "enabled": False
        },  # the partition comes from partitions.<name> (or the site's slurm.conf)
    }
    if resources := _resources(plan.config):
        spec["slurmd"]["resources"] = resources
    if conf := _conf_map(plan, site):
        spec["extraConf"] = _extra_conf(conf)
    return {
        "apiVersion": API_VERSION,
        "kind": "NodeSet",
        "metadata": {"name": f"{RELEASE}-worker-{plan.partition}", "namespace": NAMESPACE},
        "spec": spec,
    }


def controller_object(site: SiteConfig, external: ExternalController | None) -> dict[str, Any]:
    keys = {
        "slurmKeyRef": {"name": SLURM_KEY_SECRET, "key": "slurm.key"},
        "jwtKeyRef": {"name": JWT_KEY_SECRET, "key": "jwt.key"},
    }
    if external is not None:
        spec: dict[str, Any] = {
            **keys,
            "external": True,
            "externalConfig": {"host": external.host, "port": external.port},
        }
    else:
        spec = {"clusterName": site.site, **keys}
    return {
        "apiVersion": API_VERSION,
        "kind": "Controller",
        "metadata": {"name": RELEASE, "namespace": NAMESPACE},
        "spec": spec,
    }


def slurm_conf_lines(nodesets: Sequence[NodeSetPlan]) -> list[str]:
    """What the site's slurm.conf declares for the NodeSets' dynamic nodes in hybrid mode."""
    out = []
    for plan in nodesets:
        out.append(f"NodeSet={plan.partition} Feature={plan.partition}")
    return out


def partition_lines(nodesets: Sequence[NodeSetPlan]) -> list[str]:
    """Each NodeSet added to the site's partition of the same name, beside its bare-metal nodes."""
    return [f"PartitionName={p.partition} Nodes=<its bare-metal nodes>,{p.partition}" for p in nodesets]


def gres_note(nodesets: Sequence[NodeSetPlan]) -> str | None:
    """What the site's GRES settings need for the NodeSets' GPUs (no gres.conf comes from the chart)."""
    if not any(p.config.gpus_per_node for p in nodesets):
        return None
    return (
        "GresTypes=gpu in slurm.conf, and AutoDetect=nvidia (or Name=gpu lines) for the NodeSet nodes "
        "in the gres.conf that slurmd fetches from the controller"
    )


__all__ = [
    "API_VERSION",
    "NOT_RENDERED_WHEN_EXTERNAL",
    "ExternalController",
    "NodeSetPlan",
    "controller_object",
    "gres_note",
    "helm_values",
    "nodeset_object",
    "not_rendered_when_external",
    "parse_slurmctld_host",
    "partition_features",
    "partition_lines",
    "slurm_conf_lines",
]
