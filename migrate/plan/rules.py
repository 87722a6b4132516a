"""The two articles' decision tables as code: what to do with each workload pattern, per direction.

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

from migrate import ir
from migrate.plan.changes import Change, kubernetes_changes, slurm_changes
from migrate.plan.facts import ML_LAUNCHERS, MPI_LAUNCHERS, JobFacts
from migrate.render import plural
from migrate.site.config import SiteConfig, Thresholds
from migrate.vocab import TRAINING_PATTERNS, Action, Direction, Pattern

# The two articles the rules come from, cited by their titles so that a reader can find them.
PARALLELCLUSTER_ARTICLE = "“AWS ParallelCluster vs Kubernetes: What Actually Works for Production AI”"
SLURM_KUBERNETES_ARTICLE = "Nanobase AI’s article on Slurm and Kubernetes GPU clusters"
SEED_000 = f"{PARALLELCLUSTER_ARTICLE}, decision tree"
SEED_004 = f"{SLURM_KUBERNETES_ARTICLE}, “A decision table by workload pattern”"


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
    changes: tuple[Change, ...] = ()
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
        f"no article row; by analogy with {SEED_000}, row 'training on 1-4 nodes'",
        "MPI jobs up to {large_training_nodes} nodes without strict placement can run as an MPIJob",
        ("large_training_nodes",),
    ),
    "interactive-either": (
        "no article row (migrate default)",
        "interactive sessions follow their users; long-lived ones are services",
        (),
    ),
    "maintenance-both-sides": (
        f"{SLURM_KUBERNETES_ARTICLE}, section “If you picked the wrong one” "
        "(phases beside the old scheduler)",
        "while both schedulers run, upkeep that belongs to one cluster runs on that cluster",
        (),
    ),
    "orchestration-workflow": (
        "migrate default: Kubernetes has no native job dependencies",
        "a submit chain becomes a JobSet dependsOn or a workflow engine on Kubernetes, "
        "and a --dependency chain on Slurm",
        (),
    ),
    "helper-with-its-jobs": (
        "migrate default",
        "a rendezvous store or Ray cluster that only jobs use moves, and runs, with those jobs",
        (),
    ),
    "long-running-on-kubernetes": (
        "no article row (migrate default)",
        "a long-running object that serves no traffic (a worker or daemon) has no end, as a Slurm job must: "
        "it stays on Kubernetes",
        (),
    ),
    "general-either": (
        "no article row (migrate default)",
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
    changes: tuple[Change, ...] = (),
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
        Pattern.SMALL_TRAINING: (
            f"{plural(facts.nodes, 'node')}, within the threshold",
            "mid-training-either",
        ),
        Pattern.FINE_TUNING: ("fine-tuning fits beside serving on Kubernetes", "mixed-to-kubernetes"),
        Pattern.SWEEP: ("a sweep: trials can be queued and preempted by Kueue", "sweeps-on-kubernetes"),
        Pattern.DATA_PREP: ("data preprocessing runs on either", "data-prep-either"),
        Pattern.SERVING: ("serving belongs on Kubernetes", "serving-on-kubernetes"),
        Pattern.BATCH_INFERENCE: ("batch inference runs on either", "batch-inference-either"),
        Pattern.INTERACTIVE: ("interactive work follows its users", "interactive-either"),
        Pattern.MAINTENANCE: ("upkeep needed on the Kubernetes side too", "maintenance-both-sides"),
        Pattern.ORCHESTRATION: ("the chain it submits moves with it", "orchestration-workflow"),
        Pattern.HELPER: ("moves with the jobs that use it", "helper-with-its-jobs"),
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
    if pattern == Pattern.INTERACTIVE and ir.runs_as_service(job):
        return (
            Action.STAY,
            f"a long-running {facts.kind} with a service: stays on Kubernetes (hybrid)",
            ("interactive-either"),
        )
    if pattern not in (Pattern.HELPER, Pattern.INTERACTIVE) and ir.long_running(job):
        return (
            Action.STAY,
            f"a long-running {facts.kind} that serves no traffic has no end: stays on Kubernetes (hybrid)",
            "long-running-on-kubernetes",
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
        Pattern.HELPER: ("moves with the jobs that use it", "helper-with-its-jobs"),
        Pattern.GENERAL: ("an ordinary batch job", "general-either"),
    }
    reason, rule_id = simple[pattern]
    return Action.MOVE, reason, rule_id


__all__ = [
    "RULES",
    "Recommendation",
    "Rule",
    "recommend",
    "rule",
]
