"""The seeds' decision tables as code: what to do with each workload pattern, per direction.

Every recommendation carries the ``Rule`` it followed: an id, the seed row it
comes from, and the rule in one line with the site's thresholds filled in, so
the report can cite it and a reader can disagree with a number, not with code.

The two articles the tables come from:
- 000, "ParallelCluster vs Kubernetes for production AI": a decision tree
  (training above / up to 4 nodes, serving, data preprocessing, sweeps) and an
  FAQ on Ray.
- 004, "Slurm vs Kubernetes": a decision table by workload pattern (long
  homogeneous training, mixed training and serving, autoscaling, strict
  topology at scale) and the advice to migrate in phases beside the old one.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from migrate import ir
from migrate.graph.storage import StorageResolver
from migrate.plan.facts import ML_LAUNCHERS, MPI_LAUNCHERS, JobFacts
from migrate.site.config import SiteConfig, Thresholds
from migrate.vocab import SERVING_KINDS, TRAINING_PATTERNS, Action, Direction, JobKind, Pattern

SEED_000 = "seeds/000 (ParallelCluster vs Kubernetes) decision tree"
SEED_004 = "seeds/004 (Slurm vs Kubernetes) decision table"


@dataclass(frozen=True, slots=True)
class Rule:
    id: str
    source: str  # which seed and which row
    says: str  # the rule in one line, thresholds filled in


@dataclass(frozen=True, slots=True)
class Recommendation:
    job_id: str
    direction: Direction
    action: Action
    reason: str
    rule: Rule
    changes: tuple[str, ...] = ()
    thresholds: tuple[tuple[str, int], ...] = ()  # the migrate.yaml values the rule read


# id -> (source, one-line rule with {threshold} placeholders, thresholds it reads)
RULES: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "large-training-on-slurm": (
        f"{SEED_000}, row 'training above 4 nodes'; {SEED_004}, rows 'long homogeneous training' "
        "and 'strict topology-aware placement at scale'",
        "training above {large_training_nodes} nodes that needs a gang start, exact topology or whole "
        "nodes belongs on Slurm",
        ("large_training_nodes",),
    ),
    "mid-training-either": (
        f"{SEED_000}, row 'training on 1-4 nodes'",
        "training on up to {large_training_nodes} nodes runs well on either scheduler",
        ("large_training_nodes",),
    ),
    "mixed-to-kubernetes": (
        f"{SEED_004}, row 'mixed training, fine-tuning and serving'",
        "fine-tuning beside serving fits Kubernetes' single control plane; on Slurm it is small training",
        ("large_training_nodes",),
    ),
    "serving-on-kubernetes": (
        f"{SEED_000}, row 'inference serving'; {SEED_004}, row 'autoscaling and rolling deployments'",
        "inference serving belongs on Kubernetes; Slurm has no rolling update or autoscaling",
        (),
    ),
    "sweeps-on-kubernetes": (
        f"{SEED_000}, row 'hyperparameter sweeps'",
        "sweeps whose trials tolerate preemption fit Kubernetes with Kueue; on Slurm they are job arrays",
        ("large_training_nodes",),
    ),
    "data-prep-either": (
        f"{SEED_000}, row 'data preprocessing'",
        "data preprocessing runs on either scheduler (Kubernetes with Ray adds parts to run)",
        (),
    ),
    "batch-inference-either": (
        f"{SEED_000}, FAQ 'Ray on Kubernetes vs on ParallelCluster'",
        "batch inference runs on either: the Ray operator scales dynamically, Ray inside Slurm is steadier",
        (),
    ),
    "hpc-on-slurm": (
        f"{SEED_004}, rows 'long homogeneous training' (gang, GRES) and 'strict topology-aware placement'",
        "MPI codes above {large_training_nodes} nodes or with strict placement stay on Slurm",
        ("large_training_nodes",),
    ),
    "small-mpi-either": (
        f"no seed row; by analogy with {SEED_000}, row 'training on 1-4 nodes'",
        "MPI jobs up to {large_training_nodes} nodes without strict placement can run as an MPIJob",
        ("large_training_nodes",),
    ),
    "interactive-either": (
        "no seed row (migrate default)",
        "interactive sessions follow their users; long-lived ones are services",
        (),
    ),
    "maintenance-both-sides": (
        "seeds/004, section on migrating in phases beside the old scheduler",
        "while both schedulers run, upkeep that belongs to one cluster runs on that cluster",
        (),
    ),
    "orchestration-workflow": (
        "DESIGN.md domain facts: dependencies have no native Kubernetes equivalent",
        "a submit chain becomes a JobSet dependsOn or a workflow engine on Kubernetes, "
        "and a --dependency chain on Slurm",
        (),
    ),
    "general-either": (
        "no seed row (migrate default)",
        "an ordinary batch job moves with the listed changes",
        (),
    ),
    "already-on-target": (
        "migrate default",
        "the job already runs on the target scheduler",
        (),
    ),
}


def rule(rule_id: str, limits: Thresholds) -> Rule:
    source, says, names = RULES[rule_id]
    return Rule(rule_id, source, says.format(**{n: getattr(limits, n) for n in names}))


def recommend(
    job: ir.Job, facts: JobFacts, pattern: Pattern, direction: str, config: SiteConfig
) -> Recommendation:
    direction = Direction.of(direction)
    limits = config.thresholds
    if facts.format == direction.target:
        return _make(
            job,
            direction,
            Action.ALREADY_THERE,
            f"already runs on {direction.target.display_name}",
            "already-on-target",
            config,
        )
    if direction == Direction.TO_KUBERNETES:
        action, reason, rule_id = _to_kubernetes(job, facts, pattern, limits)
        changes = kubernetes_changes(job, facts, pattern, config) if action != Action.STAY else ()
    else:
        action, reason, rule_id = _to_slurm(job, facts, pattern)
        changes = slurm_changes(job, facts, pattern, config) if action != Action.STAY else ()
    if action == Action.MOVE and changes:
        action = Action.MOVE_WITH_CHANGES
    return _make(job, direction, action, reason, rule_id, config, changes)


def _make(
    job: ir.Job,
    direction: Direction,
    action: Action,
    reason: str,
    rule_id: str,
    config: SiteConfig,
    changes: tuple[str, ...] = (),
) -> Recommendation:
    names = RULES[rule_id][2]
    limits = config.thresholds
    return Recommendation(
        job_id=job.id,
        direction=direction,
        action=action,
        reason=reason,
        rule=rule(rule_id, limits),
        changes=changes,
        thresholds=tuple((n, int(getattr(limits, n))) for n in names),
    )


def _large_needs(facts: JobFacts, limits: Thresholds) -> list[str]:
    """Why a job above the node threshold needs Slurm-grade placement (empty: it does not)."""
    needs = list(facts.strict_placement)
    collective = sorted(set(facts.launchers) & (ML_LAUNCHERS | MPI_LAUNCHERS | {"srun"}))
    if collective:
        needs.append("a gang start for " + ", ".join(collective))
    if facts.hours is not None and facts.hours >= limits.long_training_hours:
        needs.append(f"{facts.hours:g} h runs (>= long_training_hours {limits.long_training_hours})")
    return needs


def _to_kubernetes(
    job: ir.Job, facts: JobFacts, pattern: Pattern, limits: Thresholds
) -> tuple[Action, str, str]:
    over = facts.nodes > limits.large_training_nodes
    above = f"{facts.nodes} nodes > large_training_nodes ({limits.large_training_nodes})"
    if pattern in TRAINING_PATTERNS and over:
        needs = _large_needs(facts, limits)
        if needs:
            return (
                Action.STAY,
                f"{above}, with " + "; ".join(needs) + ": stays on Slurm (hybrid)",
                "large-training-on-slurm",
            )
        return (
            Action.MOVE,
            f"{above} but no gang, topology or whole-node need found",
            "large-training-on-slurm",
        )
    if pattern == Pattern.HPC_MPI:
        if over or facts.strict_placement:
            why = "; ".join([above] if over else list(facts.strict_placement))
            return Action.STAY, f"MPI code with {why}: stays on Slurm (hybrid)", "hpc-on-slurm"
        return Action.MOVE, "small MPI job without strict placement", "small-mpi-either"
    if pattern == Pattern.MAINTENANCE and job.placement.nodelist:
        return (
            Action.STAY,
            f"tied to Slurm nodes {job.placement.nodelist}: runs there while Slurm runs",
            "maintenance-both-sides",
        )
    simple = {
        Pattern.LONG_TRAINING: ("long training within the node threshold", "mid-training-either"),
        Pattern.SMALL_TRAINING: (f"{facts.nodes} node(s), within the threshold", "mid-training-either"),
        Pattern.FINE_TUNING: ("fine-tuning fits beside serving on Kubernetes", "mixed-to-kubernetes"),
        Pattern.SWEEP: ("a sweep: trials can be queued and preempted by Kueue", "sweeps-on-kubernetes"),
        Pattern.DATA_PREP: ("data preprocessing runs on either", "data-prep-either"),
        Pattern.SERVING: ("serving belongs on Kubernetes", "serving-on-kubernetes"),
        Pattern.BATCH_INFERENCE: ("batch inference runs on either", "batch-inference-either"),
        Pattern.INTERACTIVE: ("interactive work follows its users", "interactive-either"),
        Pattern.MAINTENANCE: ("upkeep needed on the Kubernetes side too", "maintenance-both-sides"),
        Pattern.ORCHESTRATION: ("the chain it submits moves with it", "orchestration-workflow"),
        Pattern.GENERAL: ("an ordinary batch job", "general-either"),
    }
    reason, rule_id = simple[pattern]
    return Action.MOVE, reason, rule_id


def _to_slurm(job: ir.Job, facts: JobFacts, pattern: Pattern) -> tuple[Action, str, str]:
    if pattern == Pattern.SERVING:
        return (
            Action.STAY,
            "serving stays on Kubernetes (hybrid): Slurm has no rolling update or autoscaling",
            ("serving-on-kubernetes"),
        )
    if pattern == Pattern.INTERACTIVE and (facts.kind in SERVING_KINDS or job.services):
        return (
            Action.STAY,
            f"a long-running {facts.kind} with a service: stays on Kubernetes (hybrid)",
            ("interactive-either"),
        )
    simple = {
        Pattern.LONG_TRAINING: ("large training is at home on Slurm", "large-training-on-slurm"),
        Pattern.SMALL_TRAINING: ("small training runs on either", "mid-training-either"),
        Pattern.FINE_TUNING: ("fine-tuning is small training on Slurm", "mixed-to-kubernetes"),
        Pattern.SWEEP: ("a sweep becomes a job array", "sweeps-on-kubernetes"),
        Pattern.DATA_PREP: ("data preprocessing runs on either", "data-prep-either"),
        Pattern.BATCH_INFERENCE: ("batch inference runs on either", "batch-inference-either"),
        Pattern.INTERACTIVE: (
            "an interactive session becomes a batch job with a tunnel",
            "interactive-either",
        ),
        Pattern.HPC_MPI: ("MPI codes are at home on Slurm", "hpc-on-slurm"),
        Pattern.MAINTENANCE: ("upkeep needed on the Slurm side", "maintenance-both-sides"),
        Pattern.ORCHESTRATION: ("the chain becomes --dependency links", "orchestration-workflow"),
        Pattern.GENERAL: ("an ordinary batch job", "general-either"),
    }
    reason, rule_id = simple[pattern]
    return Action.MOVE, reason, rule_id


# ---------------------------------------------------------------------------
# What has to change, per direction


def kubernetes_changes(job: ir.Job, facts: JobFacts, pattern: Pattern, config: SiteConfig) -> tuple[str, ...]:
    if pattern == Pattern.ORCHESTRATION:
        # a wrapper runs on a login node; what moves is the chain it encodes
        return ("the submit chain becomes a JobSet with dependsOn or a workflow (Argo Workflows, JobFlow)",)
    out: list[str] = []
    out += _image_changes(job, config)
    multi = facts.nodes > 1 or any(c.replicas > 1 for c in job.components)
    if multi:
        out.append("gang scheduling via Kueue or Volcano (all pods start together)")
    launchers = set(facts.launchers)
    if multi and launchers & ML_LAUNCHERS:
        out.append(
            "rendezvous through a PyTorchJob or a JobSet headless Service instead of the Slurm node list"
        )
    if facts.mpi:
        out.append("MPI ranks started by an MPIJob (or Volcano's mpi plugin) instead of srun/mpirun")
    elif multi and "srun" in launchers and not launchers & ML_LAUNCHERS:
        out.append("one pod per srun task (Indexed Job or JobSet) instead of job steps")
    if len(job.components) > 1:
        out.append(
            f"heterogeneous job of {len(job.components)} components: a JobSet, one replicated job each"
        )
    if job.array is not None:
        throttle = f", parallelism {job.array.max_concurrent}" if job.array.max_concurrent else ""
        out.append(
            f"array of {facts.array_size} becomes an Indexed Job (completions {facts.array_size}{throttle})"
        )
    if pattern == Pattern.SWEEP and not job.failure.requeue and job.failure.signal is None:
        out.append("trials must tolerate preemption under Kueue (checkpoint or keep them short)")
    if job.failure.signal is not None:
        sig = job.failure.signal
        out.append(
            "checkpoint on SIGTERM within terminationGracePeriodSeconds"
            f" instead of --signal={sig.name}@{sig.seconds_before}"
        )
    if job.failure.requeue:
        out.append("--requeue becomes backoffLimit and a podFailurePolicy")
    out += _dependency_changes_k8s(job)
    out += _placement_changes_k8s(job, facts, config)
    out += _storage_changes_k8s(job, config)
    if job.mail is not None:
        out.append("mail notifications have no Kubernetes analogue: alert from monitoring instead")
    if any(r.licenses for r in (c.resources for c in job.components)):
        names = sorted({lic.name for c in job.components for lic in c.resources.licenses})
        out.append("licenses " + ", ".join(names) + " become a Kueue resource quota")
    kinds = sorted({h.kind for h in job.monitoring})
    if set(kinds) & {"nvidia-smi", "dcgm", "dcgmi"}:
        out.append("GPU telemetry from the DCGM exporter and Prometheus instead of per-job nvidia-smi/dcgmi")
    if "node-exporter-textfile" in kinds:
        out.append("node-exporter textfile metrics need a pushgateway or a metrics endpoint from the pod")
    if job.script is not None and job.script.slurm_vars:
        read_vars = ", ".join(sorted(job.script.slurm_vars)[:4])
        out.append(
            f"the script reads {read_vars}: give the pod equivalents (downward API, JOB_COMPLETION_INDEX)"
        )
    if pattern == Pattern.SERVING:
        out.append("a Deployment with a Service (and an autoscaler) instead of a batch job")
    if pattern == Pattern.INTERACTIVE:
        out.append("a pod with a Service or a notebook controller instead of an allocation")
    if pattern == Pattern.MAINTENANCE:
        if job.schedule is not None:
            out.append(f"schedule {job.schedule.cron} becomes a CronJob")
        out.append("keep the Slurm copy while Slurm still runs jobs (upkeep is per cluster)")
    return tuple(dict.fromkeys(out))


def _image_changes(job: ir.Job, config: SiteConfig) -> list[str]:
    images = job.images()
    if images:
        out = []
        for image in images:
            if not (image.startswith(("/", "./")) or image.endswith((".sqsh", ".sif", ".simg"))):
                continue  # already a registry reference
            mapped_to = config.image_for(image)
            if mapped_to:
                out.append(f"use registry image {mapped_to} for {image} (migrate.yaml images)")
            else:
                out.append(f"push image {image} to a registry as an OCI image")
        return out
    software = list(job.modules) + [f"{kv.key} {kv.value}" for kv in job.software_envs]
    mapped = [config.image_for_module(m) for m in job.modules]
    mapped += [config.image_for_env(kv.key, kv.value) for kv in job.software_envs]
    known = sorted({m for m in mapped if m})
    if software:
        hint = f" (migrate.yaml maps: {', '.join(known)})" if known else ""
        return [f"needs a container image for {', '.join(software)}{hint}"]
    if config.defaults.image:
        return [f"runs on the host: use the default image {config.defaults.image}"]
    return ["runs on the host with no container: needs a container image"]


def _dependency_changes_k8s(job: ir.Job) -> list[str]:
    out: list[str] = []
    kinds = {d.type for d in job.dependencies}
    if kinds - {"singleton", "dependsOn"}:
        out.append("dependency chain needs JobSet dependsOn or a workflow engine (Argo, Volcano JobFlow)")
    if "aftercorr" in kinds:
        out.append(
            "aftercorr (index-by-index) has no Kubernetes analogue: merge the two arrays or use a workflow"
        )
    if "singleton" in kinds:
        out.append(
            "singleton has no Kubernetes analogue: serialise through a one-at-a-time queue or a workflow"
        )
    if job.submits:
        out.append("jobs submitted from inside the script become workflow steps")
    return out


def _placement_changes_k8s(job: ir.Job, facts: JobFacts, config: SiteConfig) -> list[str]:
    out: list[str] = []
    if any(c.resources.exclusive for c in job.components):
        out.append("exclusive nodes: request whole nodes (all GPUs and CPUs) or a dedicated node pool")
    if job.placement.topology or any("exclusive-topology" in kv.key for kv in job.annotations):
        out.append("topology-aware placement via Kueue TAS or the JobSet exclusive-topology annotation")
    constraints = sorted({c.resources.constraint for c in job.components if c.resources.constraint})
    for constraint in constraints:
        out.append(f"node features {constraint!r} become a node selector or affinity")
    for partition in job.placement.partitions:
        part = config.partition(partition)
        if part is None or (part.queue is None and not part.node_selector):
            out.append(f"partition {partition} has no queue or node selector in migrate.yaml")
    if job.placement.reservation:
        out.append(
            f"reservation {job.placement.reservation} has no analogue: a tainted node pool or Kueue quota"
        )
    return out


@lru_cache(maxsize=8)
def _resolver(config: SiteConfig) -> StorageResolver:
    return StorageResolver(config)


def _storage_changes_k8s(job: ir.Job, config: SiteConfig) -> list[str]:
    resolver = _resolver(config)
    out: list[str] = []
    seen: set[str] = set()
    for loc in resolver.locations(job):
        fs = loc.filesystem
        if fs.name in seen or fs.origin == "pvc":
            continue
        seen.add(fs.name)
        if fs.claims:
            out.append(f"mount {fs.name} through PVC {', '.join(fs.claims)}")
        else:
            out.append(f"make {fs.name} mountable in pods (no PVC for it in migrate.yaml)")
    return out


def slurm_changes(job: ir.Job, facts: JobFacts, pattern: Pattern, config: SiteConfig) -> tuple[str, ...]:
    out: list[str] = []
    for image in job.images():
        out.append(f"run image {image} through pyxis/enroot or Apptainer")
    claims = sorted(
        {
            m.source
            for c in job.components
            for ctr in c.containers
            for m in ctr.mounts
            if m.kind == "pvc" and m.source
        }
    )
    for claim in claims:
        fs = config.filesystem_for_claim(claim)
        if fs is not None:
            out.append(f"claim {claim} is {fs.prefix} on Slurm nodes")
        else:
            out.append(f"claim {claim} has no Slurm path in migrate.yaml filesystems")
    secrets = sorted(
        {v.secret.name for v in job.environment if v.secret}
        | {v.secret.name for c in job.components for v in c.environment if v.secret}
    )
    if secrets:
        out.append(
            f"secrets {', '.join(secrets)} must reach the job another way (a file readable only by its user)"
        )
    replicas = sum(c.replicas for c in job.components)
    if replicas > 1 and pattern != Pattern.SWEEP:
        out.append(f"{replicas} pods become one allocation of {facts.nodes} node(s), started with srun")
    if set(facts.launchers) & ML_LAUNCHERS and replicas > 1:
        out.append("rendezvous from the Slurm node list instead of a master Service")
    if job.array is not None:
        out.append(
            f"Indexed Job of {facts.array_size} becomes a job array (--array=0-{facts.array_size - 1})"
        )
    if job.schedule is not None:
        out.append(f"schedule {job.schedule.cron} becomes a scrontab entry")
    kinds = {d.type for d in job.dependencies}
    if "dependsOn" in kinds:
        out.append("dependsOn becomes --dependency=afterok between sbatch jobs (or steps of one script)")
    if job.placement.queue:
        partition = config.partition_for_queue(job.placement.queue)
        if partition is None:
            out.append(f"queue {job.placement.queue} has no partition in migrate.yaml")
    if job.placement.tolerations or job.placement.affinity:
        out.append("tolerations and affinity become a partition or --constraint")
    if job.failure.rules:
        out.append("pod failure rules become --requeue and a retry wrapper")
    if job.services and pattern != Pattern.SERVING:
        out.append("services " + ", ".join(s.name for s in job.services) + " need a port on the head node")
    if pattern == Pattern.BATCH_INFERENCE and facts.kind == JobKind.RAY_JOB:
        out.append("start the Ray head and workers inside the allocation")
    if pattern == Pattern.INTERACTIVE:
        out.append("an interactive allocation (salloc or a batch job with an SSH tunnel)")
    if pattern == Pattern.MAINTENANCE:
        out.append("keep the Kubernetes copy while Kubernetes still runs jobs (upkeep is per cluster)")
    return tuple(dict.fromkeys(out))


__all__ = [
    "RULES",
    "Recommendation",
    "Rule",
    "kubernetes_changes",
    "recommend",
    "rule",
    "slurm_changes",
]
