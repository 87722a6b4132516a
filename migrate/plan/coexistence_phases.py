"""What each coexistence mode changes in the phases: Phase 0, the pilot and waves, gates, rollback, the pool.

Static partitioning is the plan as ``phases`` lays it out. Slinky moves
partitions into NodeSets: slurmd runs in pods on Kubernetes-managed nodes,
next to the old cluster and (in hybrid mode) under its slurmctld, so that
Slurm users keep ``sbatch``. slurm-bridge leaves the nodes where they are:
Phase 0 adds the bridge to the existing Slurm, and each wave hands one kind
of workload to the bridge's scheduler, serving and sweeps first (the kinds
the decision tables put on Kubernetes).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from migrate.plan.coexistence import BRIDGE_MINIMUM, CoexistenceDecision
from migrate.plan.phases import Capacity, FoundationKind, Step
from migrate.site.inventory_model import Inventory
from migrate.translators.kubernetes.slinky import not_rendered_when_external, parse_slurmctld_host
from migrate.vocab import CoexistenceMode, Direction, Pattern

BRIDGE_SCHEDULER = "slurm-bridge-scheduler"  # schedulerConfig.schedulerName's default
BRIDGE_PARTITION = "slurm-bridge"  # schedulerConfig.partition's default
# The kinds of work the decision tables send to Kubernetes go onto the bridge first.
BRIDGE_FIRST = (Pattern.SERVING, Pattern.SWEEP, Pattern.BATCH_INFERENCE)
ARTIFACTS = "coexistence/"


@dataclass(frozen=True, slots=True)
class PoolShare:
    """One partition's nodes both schedulers draw from at the end of a phase."""

    partition: str
    shared_nodes: int
    gpus_per_node: int
    slurm_node_hours: float
    kubernetes_node_hours: float


def controller_settings(inventory: Sequence[Inventory]) -> dict[str, tuple[str, str]]:
    """The site's slurmctld settings from the first slurm.conf that has them: key -> (value, where)."""
    for inv in inventory:
        if inv.controller:
            return {key: (value, f"{inv.path} line {line}") for key, (value, line) in inv.controller}
    return {}


def foundation_steps(
    decision: CoexistenceDecision,
    direction: Direction,
    inventory: Sequence[Inventory],
    gpu_partitions: Sequence[str] = (),
) -> list[Step]:
    """Phase 0's coexistence steps for the chosen mode (static partitioning keeps its own)."""
    if decision.mode == CoexistenceMode.SLINKY:
        return _slinky_foundations(decision, inventory, gpu_partitions)
    minimum = ", ".join(f"{k} {v}" for k, v in sorted(BRIDGE_MINIMUM.items()))
    return [
        Step(
            FoundationKind.COEXISTENCE,
            "slurm-bridge",
            f"install slurm-bridge next to the existing slurmctld ({minimum} or newer): its scheduler "
            f"{BRIDGE_SCHEDULER}, its admission webhook and a Token for slurmrestd",
        ),
        Step(
            FoundationKind.COEXISTENCE,
            f"partition {BRIDGE_PARTITION}",
            f"a Slurm partition {BRIDGE_PARTITION} holding only nodes that also run kubelet, each "
            "Kubernetes node named as its Slurm node (or labelled slinky.slurm.net/slurm-nodename)",
        ),
        Step(
            FoundationKind.COEXISTENCE,
            "managed namespaces",
            "the namespaces whose pods Slurm places (admission.managedNamespaces), added one wave at a time",
        ),
    ]


def _slinky_foundations(
    decision: CoexistenceDecision, inventory: Sequence[Inventory], gpu_partitions: Sequence[str]
) -> list[Step]:
    steps = []
    if gpu_partitions:
        # An external controller gets no gres.conf from the chart: slurmd fetches the site's.
        gres_conf = "the site's gres.conf" if decision.hybrid_controller else "gres.conf"
        steps.append(
            Step(
                FoundationKind.COEXISTENCE,
                "GPU Operator for slurmd pods",
                "the NVIDIA GPU Operator (driver and device plugin) on the nodes of "
                + ", ".join(gpu_partitions)
                + f": the NodeSet pods request nvidia.com/gpu, and {gres_conf} AutoDetect=nvidia finds them",
            )
        )
    steps += [
        Step(
            FoundationKind.COEXISTENCE,
            "slurm-operator",
            "install the slurm-operator chart and its CRDs (NodeSet, Controller, ...), then the slurm chart "
            f"with {ARTIFACTS}slinky-values.yaml",
        )
    ]
    if not decision.hybrid_controller:
        steps.append(
            Step(
                FoundationKind.COEXISTENCE,
                "slurmctld in Kubernetes",
                "the slurm chart runs its own slurmctld and slurmrestd",
            )
        )
        return steps
    settings = controller_settings(inventory)
    host = parse_slurmctld_host(settings["SlurmctldHost"][0]) if "SlurmctldHost" in settings else "its host"
    steps.append(
        Step(
            FoundationKind.COEXISTENCE,
            "hybrid mode",
            f"NodeSets register with the existing slurmctld ({host}): controller.external with its host "
            "and port, the cluster's slurm.key and jwt.key copied into Secrets, pod networking routed "
            "both ways (no NAT) between the pods and the Slurm hosts, and the site's slurm.conf declaring "
            f"each NodeSet and adding it to its partition ({ARTIFACTS}slurm.conf.nodesets): the chart "
            f"renders no {not_rendered_when_external()} for an external controller",
            tuple(where for _, where in settings.values() if where),
        )
    )
    auth = settings.get("AuthType")
    if auth is not None and auth[0] != "auth/slurm":
        steps.append(
            Step(
                FoundationKind.COEXISTENCE,
                "Slurm authentication",
                f"the controller uses {auth[0]} ({auth[1]}); Slinky needs AuthType=auth/slurm, "
                "AuthAltTypes=auth/jwt, AuthInfo=use_client_ids and configless (enable_configless)",
                (auth[1],),
            )
        )
    return steps


def phase_steps(mode: CoexistenceMode, caps: Sequence[Capacity], previous: Mapping[str, int]) -> list[Step]:
    """What a pilot or wave does for the mode: the NodeSets it grows (Slinky)."""
    if mode != CoexistenceMode.SLINKY:
        return []
    return [
        Step(
            FoundationKind.COEXISTENCE,
            f"NodeSet {cap.partition}",
            f"{cap.target_nodes} of {cap.total_nodes} nodes of {cap.partition} run slurmd as NodeSet pods "
            f"(+{cap.target_nodes - previous.get(cap.partition, 0)}), still in partition {cap.partition}",
        )
        for cap in caps
        if cap.target_nodes > previous.get(cap.partition, 0)
    ]


def mode_gates(mode: CoexistenceMode) -> list[str]:
    if mode == CoexistenceMode.SLINKY:
        return [
            "the same jobs' results and queue times compared on NodeSet nodes and on bare-metal slurmd "
            "(sacct by node), within the runtime tolerance"
        ]
    return [
        "each handed-over workload gets its Slurm external job (scheduler.slinky.slurm.net/slurm-jobid) "
        "and its queue time is compared with the default scheduler's",
        "Slurm jobs on the shared nodes keep their queue times (sacct) while the pods run",
    ]


def mode_rollback(mode: CoexistenceMode, caps: Sequence[Capacity], previous: Mapping[str, int]) -> list[str]:
    if mode == CoexistenceMode.SLINKY:
        out = [
            f"scale NodeSet {cap.partition} back by {cap.target_nodes - previous.get(cap.partition, 0)} "
            "(the operator drains each Slurm node first) and start bare-metal slurmd on those nodes again"
            for cap in caps
            if cap.target_nodes > previous.get(cap.partition, 0)
        ]
        return out or ["no NodeSet grew in this phase: nothing to return"]
    return [
        f"take this wave's namespaces out of the managed namespaces and drop schedulerName "
        f"{BRIDGE_SCHEDULER}: the default scheduler places them again on Kubernetes-only nodes",
        "shared storage stays mounted on both sides, so outputs written on either remain readable",
    ]


def pool(mode: CoexistenceMode, caps: Sequence[Capacity], direction: Direction) -> tuple[PoolShare, ...]:
    """The nodes both schedulers share: the NodeSet nodes (Slinky), or every GPU node (slurm-bridge)."""
    out = []
    for cap in caps:
        shared = cap.target_nodes if mode == CoexistenceMode.SLINKY else cap.total_nodes
        if not shared:
            continue
        moved, left = cap.moved_node_hours, cap.remaining_node_hours
        slurm, kube = (left, moved) if direction == Direction.TO_KUBERNETES else (moved, left)
        out.append(PoolShare(cap.partition, shared, cap.gpus_per_node, slurm, kube))
    return tuple(out)


def bridge_order(pattern_of_units: Sequence[tuple[str, Sequence[Pattern]]]) -> list[str]:
    """Units in the bridge's order: those with serving or sweeps first, then the rest, stable."""

    def rank(entry: tuple[str, Sequence[Pattern]]) -> int:
        patterns = entry[1]
        return min((BRIDGE_FIRST.index(p) for p in patterns if p in BRIDGE_FIRST), default=len(BRIDGE_FIRST))

    return [unit for unit, _ in sorted(pattern_of_units, key=rank)]


def pool_dict(share: PoolShare) -> dict[str, object]:
    return {
        "partition": share.partition,
        "shared_nodes": share.shared_nodes,
        "gpus_per_node": share.gpus_per_node,
        "slurm_node_hours": share.slurm_node_hours,
        "kubernetes_node_hours": share.kubernetes_node_hours,
    }


__all__ = [
    "BRIDGE_FIRST",
    "BRIDGE_PARTITION",
    "BRIDGE_SCHEDULER",
    "PoolShare",
    "bridge_order",
    "controller_settings",
    "foundation_steps",
    "mode_gates",
    "mode_rollback",
    "phase_steps",
    "pool",
    "pool_dict",
]
