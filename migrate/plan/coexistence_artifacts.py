"""The files an operator needs to run the chosen coexistence mode, written under ``coexistence/``.

Slinky: the slurm chart's values, the NodeSet and Controller objects they
stand for, in hybrid mode the lines the site's slurm.conf needs, and a
README. slurm-bridge: the partition lines and a README (the workloads come
from ``migrate translate --flavor slurm-bridge``). Static partitioning: a
README with each phase's split.
"""

from __future__ import annotations

from collections.abc import Sequence

from migrate.plan.coexistence_phases import BRIDGE_PARTITION, BRIDGE_SCHEDULER, controller_settings
from migrate.plan.planner import Plan
from migrate.render import plural
from migrate.site.config import SiteConfig
from migrate.site.inventory_model import Inventory
from migrate.translators.kubernetes import slinky
from migrate.translators.kubernetes.yamlemit import Manifest, dump_all
from migrate.vocab import CoexistenceMode

VALUES = "slinky-values.yaml"
OBJECTS = "slinky-objects.yaml"
SLURM_CONF_NODESETS = "slurm.conf.nodesets"
SLURM_CONF_BRIDGE = "slurm.conf.bridge"
README = "README.md"
PLACEHOLDER_HOST = "slurmctld.example.invalid"  # no slurm.conf told the controller's address

# What upstream documents as the risks of each mode (slurm-bridge's README and issue tracker,
# slurm-operator's hybrid guide), in the words an operator acts on.
RISKS = {
    CoexistenceMode.SLINKY: (
        "NodeSet pods take whole Kubernetes nodes (oversubscribeNode is false): a node runs Slurm jobs "
        "or other pods, not both",
        "pods the default scheduler places on those nodes are invisible to Slurm: keep other workloads "
        "off them with the NodeSet's node selector and taints",
        "hybrid mode needs routed pod networking both ways between the pods and the Slurm hosts (NAT "
        "breaks it) and auth/slurm, auth/jwt and configless on the controller; mixing bare-metal and "
        "containerised slurmd needs matching cgroup.conf settings",
        "scaling a NodeSet in drains its Slurm nodes first; deleting pods by hand does not",
    ),
    CoexistenceMode.SLURM_BRIDGE: (
        "every pod gets an exclusive, whole-node allocation: pods smaller than a node waste the rest",
        "a multi-pod Job or JobSet is one Slurm job per pod, not a gang, unless a PodGroup or "
        "LeaderWorkerSet groups it",
        "deleting a node that bridge jobs list, followed by a slurmctld restart or reconfigure, has "
        "killed every bridge job (NODE_FAIL) in v1.2.1: drain, do not delete, until the fix is released",
        "pods the default scheduler places (outside the managed namespaces, or without the bridge's "
        "schedulerName) are invisible to Slurm and can double-book its nodes",
    ),
}


def _nodeset_plans(plan: Plan, site: SiteConfig) -> list[slinky.NodeSetPlan]:
    most: dict[str, int] = {}
    for phase in plan.phases:
        for cap in phase.capacity:
            most[cap.partition] = max(most.get(cap.partition, 0), cap.target_nodes)
    out = []
    for name, part in site.partitions:
        if most.get(name, 0) > 0:
            out.append(slinky.NodeSetPlan(name, most[name], part))
    return out


def _external(plan: Plan, inventory: Sequence[Inventory]) -> slinky.ExternalController | None:
    if plan.coexistence is None or not plan.coexistence.hybrid_controller:
        return None
    settings = controller_settings(inventory)
    host = settings.get("SlurmctldHost")
    if host is None:
        return slinky.ExternalController(PLACEHOLDER_HOST)  # the README says to fill it in
    port = settings.get("SlurmctldPort", (str(slinky.SLURMCTLD_PORT), ""))[0].split("-")[0]
    return slinky.ExternalController(
        slinky.parse_slurmctld_host(host[0]), int(port) if port.isdigit() else 6817
    )


def coexistence_artifacts(plan: Plan, site: SiteConfig, inventory: Sequence[Inventory]) -> dict[str, str]:
    """File name -> text for ``coexistence/``; empty when the plan made no coexistence decision."""
    if plan.coexistence is None:
        return {}
    mode = plan.coexistence.mode
    if mode == CoexistenceMode.SLINKY:
        return _slinky_files(plan, site, inventory)
    if mode == CoexistenceMode.SLURM_BRIDGE:
        return _bridge_files(plan)
    return {README: _partition_readme(plan)}


def _slinky_files(plan: Plan, site: SiteConfig, inventory: Sequence[Inventory]) -> dict[str, str]:
    sets = _nodeset_plans(plan, site)
    external = _external(plan, inventory)
    header = [f"slurm chart (slurm-operator v1.x) values for {site.site}, written by migrate plan"]
    if external is not None:
        header += _external_values_note(sets)
    files = {
        VALUES: dump_all([Manifest(slinky.helm_values(sets, site, external))], header),
        OBJECTS: dump_all(
            [Manifest(slinky.controller_object(site, external))]
            + [Manifest(slinky.nodeset_object(s, site)) for s in sets],
            ["the objects the slurm chart renders from " + VALUES + "; check them with migrate validate"],
        ),
    }
    if external is not None:
        lines = [
            "# add to the site's slurm.conf: the NodeSets' dynamic nodes, and each name to its partition"
        ]
        lines += slinky.slurm_conf_lines(sets)
        lines += [f"# {line}" for line in slinky.partition_lines(sets)]
        if gres := slinky.gres_note(sets):
            lines.append(f"# the NodeSets' GPUs need {gres}")
        files[SLURM_CONF_NODESETS] = "\n".join(lines) + "\n"
    files[README] = _slinky_readme(plan, sets, external)
    return files


def _external_values_note(sets: Sequence[slinky.NodeSetPlan]) -> list[str]:
    """The values file's own word on what an external controller leaves to the site's slurm.conf."""
    out = [
        f"controller.external: the chart renders no {slinky.not_rendered_when_external()} for an "
        "external slurmctld, so these values leave them out.",
        f"The site's slurm.conf declares the NodeSets and their partitions instead ({SLURM_CONF_NODESETS}):",
        *slinky.slurm_conf_lines(sets),
        *slinky.partition_lines(sets),
    ]
    if gres := slinky.gres_note(sets):
        out.append(f"Their GPUs need {gres}.")
    return out


def _why(plan: Plan) -> list[str]:
    assert plan.coexistence is not None
    out = [f"Chosen: **{plan.coexistence.mode}** (asked for: {plan.coexistence.requested})."]
    out += [f"- {f.detail}" for f in plan.coexistence.findings]
    return out


def _risks(mode: CoexistenceMode) -> list[str]:
    return ["", "## Risks upstream documents", ""] + [f"- {r}" for r in RISKS[mode]]


def _slinky_readme(
    plan: Plan, sets: Sequence[slinky.NodeSetPlan], external: slinky.ExternalController | None
) -> str:
    lines = [f"# Running Slurm in Kubernetes with Slinky: {plan.site}", "", *_why(plan), "", "## Order", ""]
    steps = [
        "Install the GPU Operator on the GPU node pools (drivers, device plugin), then the "
        "slurm-operator chart and its CRDs.",
    ]
    if external is not None:
        steps += [
            f"Hybrid mode: the NodeSets join the existing slurmctld at {external.host}:{external.port}. "
            f"Copy the cluster's slurm.key and jwt.key into the Secrets {slinky.SLURM_KEY_SECRET} and "
            f"{slinky.JWT_KEY_SECRET}, and add {SLURM_CONF_NODESETS} to the site's slurm.conf.",
        ]
        if external.host == PLACEHOLDER_HOST:
            steps[-1] += (
                f" The address {PLACEHOLDER_HOST} is a placeholder: set controller.externalConfig.host, "
                "or plan again with the site's slurm.conf given to --inventory."
            )
        steps[-1] += (
            f" The chart renders no {slinky.not_rendered_when_external()} for an external controller, "
            f"so {VALUES} leaves them out: the site's own slurm.conf and gres.conf stand for them (below)."
        )
    steps += [
        f"Install the slurm chart with `helm install {slinky.RELEASE} ... -f {VALUES}`; {OBJECTS} shows the "
        "NodeSet and Controller objects it renders (`migrate validate` checks them offline).",
        "Pilot: scale the pilot partition's NodeSet to its first replicas; compare the same jobs' "
        "results and queue times on NodeSet and bare-metal nodes.",
        "Each wave grows the next NodeSets; rollback scales a NodeSet back (its Slurm nodes drain first) and "
        "starts bare-metal slurmd on those nodes again.",
    ]
    lines += [f"{i}. {s}" for i, s in enumerate(steps, 1)]
    lines += [
        "",
        "## NodeSets",
        "",
        "| NodeSet | replicas (at most) | GPUs per node |",
        "| --- | --- | --- |",
    ]
    lines += [f"| {s.partition} | {s.replicas} | {s.config.gpus_per_node} |" for s in sets]
    if external is not None:
        lines += _site_conf_section(sets)
    return "\n".join(lines + _risks(CoexistenceMode.SLINKY)) + "\n"


def _site_conf_section(sets: Sequence[slinky.NodeSetPlan]) -> list[str]:
    """Hybrid mode: what the site's slurm.conf declares, since the chart renders none of it."""
    lines = [
        "",
        "## The site's slurm.conf (hybrid mode)",
        "",
        "Each NodeSet's pods register as dynamic nodes with the NodeSet's name as a feature; the site's "
        "slurm.conf names them and adds them to the partition of the same name:",
        "",
        "```",
        *slinky.slurm_conf_lines(sets),
        *slinky.partition_lines(sets),
        "```",
    ]
    if gres := slinky.gres_note(sets):
        lines += ["", f"The NodeSets' GPUs need {gres}."]
    return lines


def _bridge_files(plan: Plan) -> dict[str, str]:
    conf = [
        "# add to the site's slurm.conf: the nodes that also run kubelet, in the bridge's partition",
        f"NodeSet={BRIDGE_PARTITION} Feature={BRIDGE_PARTITION}",
        f"PartitionName={BRIDGE_PARTITION} Nodes={BRIDGE_PARTITION}",
    ]
    lines = [f"# Kubernetes pods scheduled by Slurm with slurm-bridge: {plan.site}", "", *_why(plan), ""]
    lines += ["## Order", ""]
    steps = [
        f"Add {SLURM_CONF_BRIDGE} to the site's slurm.conf and run slurmrestd with JWT authentication.",
        f"Install the slurm-bridge chart: its scheduler ({BRIDGE_SCHEDULER}) and admission webhook.",
        "Translate the workloads with `migrate translate --to kubernetes --flavor slurm-bridge`: each "
        "gets the bridge's schedulerName and the slurmjob.slinky.slurm.net annotations from its allocation.",
        "Each wave adds its namespaces to the managed namespaces: serving and sweeps first.",
    ]
    lines += [f"{i}. {s}" for i, s in enumerate(steps, 1)]
    lines += ["", "## Waves", ""]
    lines += [f"- {p.id}: {plural(len(p.jobs), 'job')}" for p in plan.phases if p.jobs]
    text = "\n".join(lines + _risks(CoexistenceMode.SLURM_BRIDGE)) + "\n"
    return {SLURM_CONF_BRIDGE: "\n".join(conf) + "\n", README: text}


def _partition_readme(plan: Plan) -> str:
    lines = [f"# Static node partitioning: {plan.site}", "", *_why(plan), "", "## Nodes per phase", ""]
    lines += ["| phase | partition | source nodes | target nodes |", "| --- | --- | --- | --- |"]
    for phase in plan.phases:
        for cap in phase.capacity:
            lines.append(f"| {phase.id} | {cap.partition} | {cap.source_nodes} | {cap.target_nodes} |")
    return "\n".join(lines) + "\n"


__all__ = [
    "OBJECTS",
    "README",
    "RISKS",
    "SLURM_CONF_BRIDGE",
    "SLURM_CONF_NODESETS",
    "VALUES",
    "coexistence_artifacts",
]
