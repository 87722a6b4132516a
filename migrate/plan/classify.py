"""Workload pattern per job, and what to do with it when moving to the other scheduler.

``assess_jobs`` is the entry point: each job gets a pattern with the reasons
that led to it (``classify_job``) and, for the requested direction, a
recommendation with the seed rule it follows (``rules.recommend``).

Some patterns are decided by one strong fact (a Deployment serves, a CronJob
maintains, a wrapper orchestrates). The rest compete on evidence: words in
the job's name weigh more than words in its body, and structure (an array, a
torchrun launcher, an MPI launcher without any ML framework) weighs most.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from migrate import ir, workloads
from migrate.graph.helpers import HelperLink, helper_links
from migrate.names import job_file_name
from migrate.plan.facts import (
    DATA_WORDS,
    EVAL_WORDS,
    FINETUNE_WORDS,
    HPC_CODES,
    IMAGE_BUILD,
    INFERENCE_WORDS,
    INTERACTIVE_WORDS,
    MAINTENANCE_WORDS,
    ML_LAUNCHERS,
    MPI_LAUNCHERS,
    PROBE_COMMANDS,
    SERVE_WORDS,
    SWEEP_WORDS,
    TEST_HARNESS_WORDS,
    TRAIN_WORDS,
    JobFacts,
    facts_of,
)
from migrate.plan.rules import Recommendation, Rule, recommend
from migrate.render import plural
from migrate.site.config import SiteConfig
from migrate.vocab import INTERACTIVE_KINDS, SWEEP_KINDS, WRAPPER_KINDS, Pattern

_TRAINING = "training"  # a score of its own before the long/small split; not a Pattern
# Ties go to the more specific pattern.
_PRECEDENCE = (Pattern.SWEEP, Pattern.HPC_MPI, Pattern.DATA_PREP, Pattern.BATCH_INFERENCE, _TRAINING)
_NAME_WEIGHT = 3
_BODY_WEIGHT = 1
_STRUCTURE_WEIGHT = 4


@dataclass(frozen=True, slots=True)
class Classification:
    job_id: str
    pattern: Pattern
    reasons: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Assessment:
    """One job's pattern and recommendation, ready for the plan and the report."""

    job_id: str
    pattern: Pattern
    reasons: tuple[str, ...]
    recommendation: Recommendation
    facts: JobFacts = field(compare=False, repr=False)


def assess_jobs(jobs: Iterable[ir.Job], direction: str, config: SiteConfig | None = None) -> list[Assessment]:
    """Classify and recommend for every job, sorted by job id."""
    config = config or SiteConfig()
    jobs = list(jobs)
    uses: dict[str, list[HelperLink]] = {}
    for link in helper_links(jobs):
        uses.setdefault(link.helper, []).append(link)
    names = {job.id: job.name or job_file_name(job.source.path) for job in jobs}
    out = [assess_job(job, direction, config, uses.get(job.id, ()), names) for job in jobs]
    return sorted(out, key=lambda a: a.job_id)


def assess_job(
    job: ir.Job,
    direction: str,
    config: SiteConfig | None = None,
    used_by: Iterable[HelperLink] = (),
    names: dict[str, str] | None = None,
) -> Assessment:
    """``used_by``: the jobs that use this one as their helper (``helper_links``)."""
    config = config or SiteConfig()
    facts = facts_of(job, config)
    helper = _helper(facts, job, list(used_by), names or {})
    found = helper or classify_facts(facts, job, config)
    rec = recommend(job, facts, found.pattern, direction, config)
    return Assessment(job.id, found.pattern, found.reasons, rec, facts)


def classify_job(job: ir.Job, config: SiteConfig | None = None) -> Classification:
    config = config or SiteConfig()
    return classify_facts(facts_of(job, config), job, config)


def classify_facts(facts: JobFacts, job: ir.Job, config: SiteConfig) -> Classification:
    for decide in (_preparation, _orchestration, _maintenance, _interactive, _serving):
        decided = decide(facts, job)
        if decided is not None:
            return Classification(job.id, decided[0], tuple(decided[1]))
    scores = _scores(facts, job)
    best = max(_PRECEDENCE, key=lambda p: (scores[p][0], -_PRECEDENCE.index(p)))
    score, reasons = scores[best]
    finetune = _finetune_reasons(facts)
    reasons = [*_no_traffic(facts, job), *reasons]
    if finetune and (score == 0 or best == _TRAINING):
        return Classification(job.id, Pattern.FINE_TUNING, tuple(finetune + reasons))
    if score == 0:
        what = "a GPU job" if facts.gpus else "a CPU job"
        return Classification(
            job.id, Pattern.GENERAL, (*reasons, f"{what} with no recognisable workload signal")
        )
    if best == _TRAINING:
        pattern, scale = _training_scale(facts, config)
        return Classification(job.id, pattern, tuple([*reasons, scale]))
    return Classification(job.id, Pattern(best), tuple(reasons))


# ---------------------------------------------------------------------------
# Patterns decided by one strong fact


def _helper(
    facts: JobFacts, job: ir.Job, used_by: list[HelperLink], names: dict[str, str]
) -> Classification | None:
    """A rendezvous store or Ray cluster that jobs use is part of those jobs, unless it serves a model."""
    if not used_by or "serving" in facts.phrases:
        return None
    reasons = [
        f"the {link.role} of {names.get(link.user, link.user)} ({link.evidence})"
        for link in sorted(used_by, key=lambda link: (names.get(link.user, link.user), link.evidence))
    ]
    reasons.append("up while those jobs run; no model server or client traffic of its own")
    return Classification(job.id, Pattern.HELPER, tuple(reasons))


def _preparation(facts: JobFacts, job: ir.Job) -> tuple[Pattern, list[str]] | None:
    """Node setup, image builds and test harnesses sit beside the workload: upkeep, never a pilot."""
    if job.submits and all(_probe(sub) for sub in job.submits):
        wraps = sorted({kv.value for sub in job.submits for kv in sub.options if kv.key == "wrap"})
        return Pattern.MAINTENANCE, [
            "node setup: its only Slurm use is " + ", ".join(f'sbatch --wrap "{w}"' for w in wraps)
        ]
    wrapped = job.script.body.strip() if job.script else ""
    if job.id == ir.wrap_job_id(job.source.path, job.source.line) and _probe_text(wrapped):
        return Pattern.MAINTENANCE, [f'a scheduler probe: sbatch --wrap "{wrapped}"']
    if IMAGE_BUILD in facts.phrases and not facts.ml:
        return Pattern.MAINTENANCE, ["an image build (docker build, enroot import or apptainer build)"]
    runners = sorted(facts.command_words & TEST_HARNESS_WORDS)
    if runners:
        return Pattern.MAINTENANCE, ["a test harness: runs " + ", ".join(runners)]
    return None


def _probe(sub: ir.Submission) -> bool:
    """``sbatch --wrap "sleep 10"``: a submission that only checks that the scheduler answers."""
    wrapped = [kv.value for kv in sub.options if kv.key == "wrap"]
    if sub.script is not None or not wrapped:
        return False
    return all(_probe_text(text) for text in wrapped)


def _probe_text(text: str) -> bool:
    return bool(text.split()[:1]) and text.split()[0] in PROBE_COMMANDS


def _orchestration(facts: JobFacts, job: ir.Job) -> tuple[Pattern, list[str]] | None:
    if facts.kind in WRAPPER_KINDS:
        return Pattern.ORCHESTRATION, [f"wrapper script that submits {plural(len(job.submits), 'job')}"]
    return None


def _maintenance(facts: JobFacts, job: ir.Job) -> tuple[Pattern, list[str]] | None:
    reasons: list[str] = []
    if job.schedule is not None:
        reasons.append(f"runs on a schedule ({job.schedule.cron})")
    elif workloads.on_schedule(facts.kind):
        reasons.append(f"kind {facts.kind}")
    words = sorted(facts.identity_words & MAINTENANCE_WORDS)
    if words:
        reasons.append(_mentions("name", words))
    if "maintenance" in facts.phrases:
        reasons.append("a burn-in or health check")
    return (Pattern.MAINTENANCE, reasons) if reasons else None


def _interactive(facts: JobFacts, job: ir.Job) -> tuple[Pattern, list[str]] | None:
    reasons: list[str] = []
    if facts.kind in INTERACTIVE_KINDS:
        reasons.append("an interactive allocation (salloc)")
    words = facts.found(INTERACTIVE_WORDS)
    if words:
        reasons.append(_mentions("job", words))
    if "interactive" in facts.phrases:
        reasons.append("keeps a session open (sleep infinity or an editor server)")
    return (Pattern.INTERACTIVE, reasons) if reasons else None


def _serving(facts: JobFacts, job: ir.Job) -> tuple[Pattern, list[str]] | None:
    """Serving means serving traffic: a Service, a port or a server command, not only running long."""
    if ir.batch_groups(job):
        return None  # groups of pods that serve no port: batch work, classed by what it runs
    reasons: list[str] = []
    # every long-running object has a service entry; only a Service or a port is there for clients
    addresses = sorted({a for s in job.services for a in s.addresses})
    ports = sorted({p for s in job.services for p in s.ports})
    if addresses:
        reasons.append("serves clients through Service " + ", ".join(addresses))
    elif ports:
        reasons.append("listens on port " + ", ".join(map(str, ports)))
    named = sorted(facts.identity_words & SERVE_WORDS)
    if named:
        reasons.append(_mentions("name", named))
    words = sorted((facts.command_words & SERVE_WORDS) - set(named))
    if words:
        reasons.append(_mentions("command", words))
    if "serving" in facts.phrases:
        reasons.append("starts an inference server (vllm, triton, tgi, ray serve)")
    if workloads.is_model_server(facts.kind):
        reasons.append(f"a {facts.kind} exists to serve a model")
    if reasons and workloads.is_serving(facts.kind):
        reasons.insert(0, f"long-running {facts.kind}")
    return (Pattern.SERVING, reasons) if reasons else None


def _no_traffic(facts: JobFacts, job: ir.Job) -> list[str]:
    """Why a long-running object with nothing for clients is classed by what it runs instead."""
    if ir.batch_groups(job):
        return [f"a {facts.kind} with no Service or served port: batch work in groups of pods"]
    if not workloads.is_serving(facts.kind):
        return []
    return [f"a long-running {facts.kind} with no Service, port or server command: it serves no traffic"]


# ---------------------------------------------------------------------------
# Patterns that compete on evidence


def _scores(facts: JobFacts, job: ir.Job) -> dict[str, tuple[int, list[str]]]:
    scores: dict[str, tuple[int, list[str]]] = {p: (0, []) for p in _PRECEDENCE}

    def add(pattern: str, weight: int, reason: str) -> None:
        score, reasons = scores[pattern]
        scores[pattern] = (score + weight, [*reasons, reason])

    def words(pattern: str, vocabulary: frozenset[str]) -> None:
        # once per category: a body that says "shard" ten times is still one hint
        named = sorted(facts.identity_words & vocabulary)
        if named:
            add(pattern, _NAME_WEIGHT, _mentions("name", named))
        used = sorted((facts.command_words & vocabulary) - set(named))
        if used:
            add(pattern, _BODY_WEIGHT, _mentions("command", used))

    words(Pattern.SWEEP, SWEEP_WORDS)
    words(Pattern.DATA_PREP, DATA_WORDS)
    words(Pattern.BATCH_INFERENCE, INFERENCE_WORDS)
    words(_TRAINING, TRAIN_WORDS)
    words(Pattern.HPC_MPI, HPC_CODES)
    if "sweep" in facts.phrases:
        add(Pattern.SWEEP, _STRUCTURE_WEIGHT, "runs a sweep agent (wandb agent, ray tune)")
    if facts.array_size:
        _array_evidence(facts, add)
    ml_launchers = sorted(set(facts.launchers) & ML_LAUNCHERS)
    if ml_launchers:
        add(_TRAINING, _STRUCTURE_WEIGHT, "launcher " + ", ".join(ml_launchers))
    if workloads.is_training(facts.kind):
        add(_TRAINING, _STRUCTURE_WEIGHT, f"kind {facts.kind}")
    if facts.kind in SWEEP_KINDS:  # outweighs what its trials say: each trial trains, the job searches
        add(Pattern.SWEEP, 2 * _STRUCTURE_WEIGHT, f"kind {facts.kind}: a hyperparameter search")
    declared = workloads.declared(facts.kind)
    if declared is not None and declared.batch_inference:
        add(Pattern.BATCH_INFERENCE, _STRUCTURE_WEIGHT - 1, f"kind {facts.kind}")
    if facts.gpus and facts.nodes > 1 and facts.ml:
        add(_TRAINING, _BODY_WEIGHT, f"{facts.nodes} GPU nodes with an ML framework")
    if facts.mpi and not facts.ml:
        mpi = sorted(set(facts.launchers) & MPI_LAUNCHERS) or ["MPI (srun --mpi, MPIJob or an MPI module)"]
        add(Pattern.HPC_MPI, _STRUCTURE_WEIGHT, "MPI without an ML framework: " + ", ".join(mpi))
    elif job.modules and not facts.ml and scores[Pattern.HPC_MPI][0]:
        add(Pattern.HPC_MPI, _BODY_WEIGHT, "module-loaded software: " + ", ".join(job.modules[:3]))
    return scores


def _array_evidence(facts: JobFacts, add: Callable[[str, int, str], None]) -> None:
    """An array (or Indexed Job) is a sweep when its tasks train or evaluate, otherwise bulk work."""
    size = facts.array_size
    words = facts.words()
    trains = words & (TRAIN_WORDS | FINETUNE_WORDS | EVAL_WORDS) or set(facts.launchers) & ML_LAUNCHERS
    if trains or workloads.is_training(facts.kind):
        add(Pattern.SWEEP, _STRUCTURE_WEIGHT, f"array of {size} training or evaluation tasks")
    elif words & INFERENCE_WORDS:
        add(Pattern.BATCH_INFERENCE, _STRUCTURE_WEIGHT, f"array of {size} inference tasks")
    elif facts.gpus:
        add(Pattern.SWEEP, _BODY_WEIGHT, f"array of {size} GPU tasks")
    else:
        add(Pattern.DATA_PREP, _STRUCTURE_WEIGHT, f"CPU-only array of {size} tasks")


def _finetune_reasons(facts: JobFacts) -> list[str]:
    reasons: list[str] = []
    words = facts.found(FINETUNE_WORDS)
    if words:
        reasons.append(_mentions("job", words))
    if "fine-tuning" in facts.phrases:
        reasons.append("mentions fine-tuning")
    return reasons


def _training_scale(facts: JobFacts, config: SiteConfig) -> tuple[Pattern, str]:
    limits = config.thresholds
    if facts.nodes > limits.large_training_nodes:
        return (
            Pattern.LONG_TRAINING,
            f"{facts.nodes} nodes > large_training_nodes ({limits.large_training_nodes})",
        )
    if facts.nodes > 1 and facts.hours is not None and facts.hours >= limits.long_training_hours:
        return (
            Pattern.LONG_TRAINING,
            f"{facts.nodes} nodes for {facts.hours:g} h"
            f" >= long_training_hours ({limits.long_training_hours})",
        )
    return (
        Pattern.SMALL_TRAINING,
        f"{plural(facts.nodes, 'node')} <= large_training_nodes ({limits.large_training_nodes})",
    )


def _mentions(where: str, words: list[str]) -> str:
    return f"{where} mentions " + ", ".join(repr(w) for w in words[:4])


__all__ = [
    "Assessment",
    "Classification",
    "Recommendation",
    "Rule",
    "assess_job",
    "assess_jobs",
    "classify_job",
    "facts_of",
]
