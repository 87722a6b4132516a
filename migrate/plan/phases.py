"""The parts of each phase: Phase 0 prerequisites, capacity per partition, gates and rollback.

Everything here is derived from the graph and the recommendations, never
written as boilerplate: an operator is listed because a moving job needs it,
a file system because a moving job or a bridge touches it, a monitoring step
because a hook was found in a script.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum

import networkx as nx

from migrate import workloads
from migrate.graph import model as gm
from migrate.graph.analysis import FilesystemUse
from migrate.plan.changes import IMAGE_KINDS
from migrate.plan.classify import Assessment
from migrate.plan.demand import UNASSIGNED, JobDemand
from migrate.plan.facts import ML_LAUNCHERS
from migrate.render import plural
from migrate.site.config import SiteConfig
from migrate.vocab import Direction, FilesystemKind, FilesystemOrigin, Format, Pattern

# Monitoring hook kind -> what gives the same signal on the target.
PARITY_ON_KUBERNETES = {
    "nvidia-smi": "GPU metrics from the DCGM exporter (GPU Operator) scraped by Prometheus",
    "dcgm": "GPU metrics and diagnostics from the DCGM exporter scraped by Prometheus",
    "dcgmi": "GPU diagnostics from the DCGM exporter and the GPU Operator validator",
    "prometheus-pushgateway": "the pushgateway reachable from pods (DNS name and network policy)",
    "node-exporter-textfile": "metrics served by the pod or pushed, instead of node-exporter textfiles",
    "wandb": "the Weights & Biases API key as a Secret and egress to its endpoint",
    "tensorboard": "TensorBoard logs on shared storage and a TensorBoard Deployment to read them",
    "mail": "Alertmanager routes for job failure instead of Slurm mail",
    "nsys": "Nsight Systems inside the image, reports written to shared storage",
}
PARITY_ON_SLURM = {
    "dcgm": "DCGM on the Slurm nodes, with Slurm accounting (sacct) for per-job usage",
    "prometheus-pushgateway": "the pushgateway reachable from compute nodes",
    "wandb": "the Weights & Biases API key in a file readable only by its user",
    "tensorboard": "TensorBoard logs on shared storage, viewed through a port forward",
}


class FoundationKind(StrEnum):
    """What a step of Phase 0 (the foundations) prepares on the target before the first job moves:
    an operator the jobs need, storage, monitoring, images, queues, or the sharing of the nodes."""

    OPERATOR = "operator"
    STORAGE = "storage"
    MONITORING = "monitoring"
    IMAGE = "image"
    QUEUE = "queue"
    COEXISTENCE = "coexistence"


@dataclass(frozen=True, slots=True)
class Step:
    kind: FoundationKind
    name: str
    detail: str
    evidence: tuple[str, ...] = ()  # job ids or node ids behind the step


@dataclass(frozen=True, slots=True)
class Capacity:
    """Nodes of one partition on each scheduler at the end of a phase; the two add up to the inventory."""

    partition: str
    total_nodes: int
    gpus_per_node: int
    source_nodes: int
    target_nodes: int
    moved_node_hours: float
    remaining_node_hours: float


def foundations(
    graph: nx.MultiDiGraph,
    moving: list[str],
    assessments: Mapping[str, Assessment],
    demands: Mapping[str, JobDemand],
    filesystems: Iterable[str],
    shared: Iterable[FilesystemUse],
    direction: Direction,
    config: SiteConfig,
) -> list[Step]:
    """Phase 0: what must exist on the target before the first job moves."""
    steps = _operators(graph, moving, assessments, direction)
    steps += _storage(graph, filesystems, shared, direction, config)
    steps += _monitoring(graph, moving, direction)
    steps += _images(moving, assessments)
    steps += _queues(moving, demands, direction, config)
    steps += _coexistence(direction)
    return steps


def _operators(
    graph: nx.MultiDiGraph, moving: list[str], assessments: Mapping[str, Assessment], direction: Direction
) -> list[Step]:
    facts = {j: assessments[j].facts for j in moving}
    gpu = sorted(j for j, f in facts.items() if f.gpus)
    gang = sorted(
        j for j, f in facts.items() if f.nodes > 1 or f.array_size or assessments[j].pattern == Pattern.SWEEP
    )
    torch = sorted(j for j, f in facts.items() if f.nodes > 1 and set(f.launchers) & ML_LAUNCHERS)
    mpi = sorted(j for j, f in facts.items() if f.mpi)
    chained = sorted(
        {
            gm.split_node(n)[1]
            for j in moving
            for n in (gm.job_node(j),)
            for _, _, kind in graph.out_edges(n, data=gm.Attr.TYPE)
            if kind in (gm.DEPENDS_ON, gm.SUBMITS)
        }
        | {j for j in moving if assessments[j].pattern == Pattern.ORCHESTRATION}
    )
    internal = sorted(j for j in moving if graph.nodes[gm.job_node(j)].get(gm.Attr.INTERNAL_DEPENDENCIES))
    crons = sorted(j for j in moving if workloads.on_schedule(assessments[j].facts.kind))
    containers = sorted(j for j in moving if assessments[j].facts.format == Format.KUBERNETES)
    wanted: list[tuple[str, str, list[str]]]
    if direction == Direction.TO_KUBERNETES:
        wanted = [
            ("NVIDIA GPU Operator", "drivers, device plugin and DCGM exporter on the GPU node pools", gpu),
            (
                "Kueue",
                "queues mirrored from partitions, all-or-nothing admission, preemption for sweeps",
                gang,
            ),
            (
                "Kubeflow training operator",
                "PyTorchJob for multi-node torchrun, deepspeed and accelerate",
                torch,
            ),
            ("MPI Operator", "MPIJob to start MPI ranks (or Volcano's mpi plugin)", mpi),
            ("JobSet", "ordered parts inside one job (dependsOn)", internal),
            (
                "Argo Workflows or Volcano JobFlow",
                "the sbatch dependency chains and wrapper scripts",
                chained,
            ),
        ]
    else:
        wanted = [
            ("pyxis and enroot (or Apptainer)", "run the pods' container images on Slurm nodes", containers),
            ("Slurm accounting (slurmdbd)", "per-job usage and history for the gates", sorted(moving)),
            ("PMIx", "srun --mpi=pmix for MPI jobs", mpi),
            ("scrontab", "CronJobs become scrontab entries", crons),
            (
                "a wrapper or workflow for --dependency chains",
                "dependsOn and JobFlow become sbatch chains",
                chained,
            ),
        ]
    return [Step(FoundationKind.OPERATOR, name, why, tuple(jobs)) for name, why, jobs in wanted if jobs]


def _storage(
    graph: nx.MultiDiGraph,
    filesystems: Iterable[str],
    shared: Iterable[FilesystemUse],
    direction: Direction,
    config: SiteConfig,
) -> list[Step]:
    shared_ids = {fs.node for fs in shared}
    steps: list[Step] = []
    for fs in sorted(set(filesystems)):
        data = graph.nodes[fs]
        label, kind, claims = (
            str(data[gm.Attr.LABEL]),
            str(data.get(gm.Attr.KIND, "unknown")),
            str(data.get(gm.Attr.CLAIMS, "")),
        )
        during = (
            " and keep it mounted on both schedulers for the whole coexistence" if fs in shared_ids else ""
        )
        if kind == FilesystemKind.LOCAL:
            detail = f"{label} is node-local: give pods a local or ephemeral volume; nothing to share"
        elif direction == Direction.TO_KUBERNETES and data.get(gm.Attr.ORIGIN) == FilesystemOrigin.PVC:
            continue  # already a claim on Kubernetes
        elif direction == Direction.TO_KUBERNETES:
            how = f"PV/PVC {claims}" if claims else "a PV/PVC (no claim for it in migrate.yaml yet)"
            detail = f"make {label} ({kind}) mountable in pods: CSI driver and {how}{during}"
        elif data.get(gm.Attr.ORIGIN) == FilesystemOrigin.PVC:
            detail = f"claim {label[4:]} has no Slurm path: add it to migrate.yaml filesystems{during}"
        else:
            detail = f"mount {label} ({kind}) on the Slurm nodes{during}"
        steps.append(Step(FoundationKind.STORAGE, label, detail, (fs,)))
    return steps


def _monitoring(graph: nx.MultiDiGraph, moving: list[str], direction: Direction) -> list[Step]:
    users: dict[str, list[str]] = {}
    for job in moving:
        for _, monitor, kind in graph.out_edges(gm.job_node(job), data=gm.Attr.TYPE):
            if kind == gm.REPORTS_TO:
                users.setdefault(str(graph.nodes[monitor][gm.Attr.LABEL]), []).append(job)
    table = PARITY_ON_KUBERNETES if direction == Direction.TO_KUBERNETES else PARITY_ON_SLURM
    target = "pods" if direction == Direction.TO_KUBERNETES else "Slurm jobs"
    fallback = "the same {} hook from " + target + " (network and credentials)"
    steps = [
        Step(
            FoundationKind.MONITORING, kind, table.get(kind, fallback.format(kind)), tuple(sorted(set(jobs)))
        )
        for kind, jobs in sorted(users.items())
    ]
    if moving:
        history = ("Slurm accounting", "Kubernetes job metrics")
        source, target = history if direction == Direction.TO_KUBERNETES else history[::-1]
        steps.append(
            Step(
                FoundationKind.MONITORING,
                "run history",
                f"{target} next to {source}, to compare runs at each gate",
            )
        )
    return steps


def _images(moving: list[str], assessments: Mapping[str, Assessment]) -> list[Step]:
    """One step per image: the image in the name column, what to do with it in the detail."""
    needs: dict[tuple[str, str], list[str]] = {}
    for job in moving:
        for change in assessments[job].recommendation.changes:
            if change.kind in IMAGE_KINDS:
                needs.setdefault((change.subject or change.text, change.text), []).append(job)
    return [
        Step(
            FoundationKind.IMAGE, subject, f"{text}, before the first run on the target", tuple(sorted(jobs))
        )
        for (subject, text), jobs in sorted(needs.items())
    ]


def _queues(
    moving: list[str], demands: Mapping[str, JobDemand], direction: Direction, config: SiteConfig
) -> list[Step]:
    steps: list[Step] = []
    used: dict[str, list[str]] = {}
    for job in moving:
        if config.partition(demands[job].partition) is not None:
            used.setdefault(demands[job].partition, []).append(job)
    for name in sorted(used):
        part = config.partition(name)
        if part is None:
            continue
        selector = ", ".join(f"{k}={v}" for k, v in part.node_selector) or "no node selector in migrate.yaml"
        if direction == Direction.TO_KUBERNETES:
            queue = part.queue or f"{name} (no queue named in migrate.yaml)"
            detail = (
                f"mirror partition {name} as Kueue queue {queue} ({selector}; {part.gpus_per_node} GPUs/node)"
            )
        else:
            size = f"{part.nodes} nodes, {part.gpus_per_node} GPUs/node"
            detail = f"partition {name} for queue {part.queue or '?'} ({size})"
        steps.append(Step(FoundationKind.QUEUE, name, detail, tuple(sorted(set(used[name])))))
    return steps


def _coexistence(direction: Direction) -> list[Step]:
    target = direction.target.display_name
    return [
        Step(
            FoundationKind.COEXISTENCE,
            "static node partitioning",
            f"carve nodes out of each partition for {target} phase by phase (each phase's capacity table): "
            "simple to run, "
            "but each scheduler's capacity is fixed between phases",
        ),
        Step(
            FoundationKind.COEXISTENCE,
            "converged pool (alternative)",
            "Slinky slurm-bridge lets both schedulers draw from one Kubernetes-managed GPU pool: "
            "no fixed split, at the cost of a more complex control plane and a single driver stack",
        ),
    ]


class CapacityTracker:
    """Nodes per partition on each side, phase after phase.

    The target gets the share of the partition's node-hours that has moved,
    but at least its largest moved gang; the source keeps at least its largest
    remaining gang. Both always add up to the partition's inventory. Running
    totals keep each phase at O(jobs moved in it), whatever the site's size.
    """

    def __init__(self, in_scope: Iterable[str], demands: Mapping[str, JobDemand], config: SiteConfig) -> None:
        self._demands = demands
        self._config = config
        self._moved_hours: dict[str, float] = defaultdict(float)
        self._left_hours: dict[str, float] = defaultdict(float)
        self._moved_gang: dict[str, int] = defaultdict(int)
        self._left_sizes: dict[str, Counter[int]] = defaultdict(Counter)
        self._unplanned: list[str] = []
        for job in sorted(in_scope):
            need = demands[job]
            self._left_hours[need.partition] += need.node_hours
            self._left_sizes[need.partition][need.nodes] += 1

    def move(self, jobs: Iterable[str]) -> None:
        for job in jobs:
            need = self._demands[job]
            part = need.partition
            self._moved_hours[part] += need.node_hours
            self._left_hours[part] -= need.node_hours
            self._moved_gang[part] = max(self._moved_gang[part], need.nodes)
            self._left_sizes[part][need.nodes] -= 1
            if part == UNASSIGNED:
                self._unplanned.append(job)

    def snapshot(self, final: bool = False) -> tuple[list[Capacity], list[str]]:
        out: list[Capacity] = []
        warnings: list[str] = []
        for name, part in self._config.partitions:
            moved_hours = round(self._moved_hours[name], 2)
            left_hours = round(max(0.0, self._left_hours[name]), 2)
            keep = max((size for size, count in self._left_sizes[name].items() if count > 0), default=0)
            total = part.nodes
            target = 0
            if self._moved_gang[name]:
                share = (
                    round(total * moved_hours / (moved_hours + left_hours)) if moved_hours + left_hours else 0
                )
                target = max(share, self._moved_gang[name])
                if target > total - keep:
                    given = max(0, total - keep)
                    warnings.append(_short_of_nodes(name, total, target, keep, given))
                    target = given
                if final and keep == 0 and not left_hours:
                    target = total  # nothing left on the source: the whole partition can go
            out.append(
                Capacity(name, total, part.gpus_per_node, total - target, target, moved_hours, left_hours)
            )
        if self._unplanned:  # said once, in the phase that moves them
            new = sorted(self._unplanned)
            self._unplanned = []
            shown = ", ".join(new[:3]) + (" ..." if len(new) > 3 else "")
            one = len(new) == 1
            warnings.append(
                f"{plural(len(new), 'moved job')} {'runs' if one else 'run'} in no partition migrate.yaml "
                f"describes, so the capacity {'it needs' if one else 'they need'} is not planned: {shown}; "
                f"give {'it' if one else 'them'} a --partition (or a default partition in migrate.yaml)"
            )
        return out, warnings


def _short_of_nodes(name: str, total: int, need: int, keep: int, given: int) -> str:
    """What a partition too small for a phase means, in the figures of the phase's capacity, and the fix."""
    fix = f"set partitions.{name}.nodes in migrate.yaml (or pass --inventory) to the partition's real size"
    if keep > total:
        return (
            f"partition {name}: a job left on the source asks for {keep} nodes, more than the "
            f"{plural(total, 'node')} the partition has, so the target gets none of it in this phase and "
            f"the moved jobs (needing {plural(need, 'node')}) wait; {fix}, or check that job's --nodes"
        )
    if keep == 0:
        return (
            f"partition {name}: the moved jobs need {plural(need, 'node')}, more than the {total} the "
            f"partition has: the target gets all {total} in this phase and the largest moved job cannot "
            f"start; {fix}, or check that job's --nodes"
        )
    return (
        f"partition {name} has {plural(total, 'node')}, fewer than the {need} the moved jobs need plus the "
        f"{keep} the largest job left on the source needs: the target gets {plural(given, 'node')} in this "
        f"phase and the source keeps {keep}; {fix}, or move the {keep}-node jobs in the same wave"
    )


def gates(
    jobs: list[str], graph: nx.MultiDiGraph, bridges: Iterable[str], direction: Direction, config: SiteConfig
) -> list[str]:
    limits = config.thresholds
    source, target = direction.source.display_name, direction.target.display_name
    out = [
        "each job runs on both schedulers in parallel until "
        f"{limits.pilot_consecutive_successes} consecutive successful runs on {target}",
        f"run time on {target} within {limits.runtime_tolerance_pct}% of the {source} baseline",
    ]
    written = sorted(
        {
            str(graph.nodes[path][gm.Attr.LABEL])
            for job in jobs
            for _, path, data in graph.out_edges(gm.job_node(job), data=True)
            if data.get(gm.Attr.TYPE) in (gm.WRITES, gm.READWRITE) and not data.get(gm.Attr.LOG)
        }
    )
    if written:
        shown = ", ".join(written[:5]) + (f" and {len(written) - 5} more" if len(written) > 5 else "")
        out.append(f"identical outputs on both schedulers (checksums of what the jobs write under {shown})")
    bridged = sorted(bridges)
    if bridged:
        out.append(
            f"readers on the other scheduler see the new outputs ({plural(len(bridged), 'bridged link')})"
        )
    return out


def rollback(capacities: list[Capacity], previous: Mapping[str, int], direction: Direction) -> list[str]:
    source, target = direction.source.display_name, direction.target.display_name
    out = [
        f"stop submitting these jobs to {target} and submit the original {source} files again "
        "(they stay unchanged until the end phase)",
    ]
    for cap in capacities:
        shifted = cap.target_nodes - previous.get(cap.partition, 0)
        if shifted > 0:
            out.append(f"return {plural(shifted, 'node')} of {cap.partition} to {source}")
    out.append("shared storage stays mounted on both sides, so outputs written on either remain readable")
    return out


__all__ = ["Capacity", "CapacityTracker", "Step", "foundations", "gates", "rollback"]
