"""What a job is made of, as far as classification cares, read from the IR alone.

Keywords are matched on words, not substrings ("prep" must not fire inside
"preprint"), and on two texts kept apart: what the job is called (name, file,
labels) and what it runs (launchers, container commands, script body without
comments). A comment such as "# eval runs after training" says nothing about
what this job does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from migrate import ir, workloads
from migrate.site.allocation import allocate
from migrate.site.allocation_model import ComponentAllocation, JobAllocation, Source
from migrate.site.config import SiteConfig
from migrate.translators.shell.servers import SERVER_WORDS, SERVING_PHRASES
from migrate.vocab import Format, JobKind

ML_LAUNCHERS = frozenset(
    ("torchrun", "torch.distributed.run", "torch.distributed.launch", "deepspeed", "accelerate")
)
MPI_LAUNCHERS = frozenset(("mpirun", "mpiexec", "mpiexec.hydra", "orterun", "aprun"))

# Whole words (after splitting on anything but letters and digits) that point at a workload;
# names with punctuation in them go to MULTIWORD below.
ML_WORDS = frozenset(
    (
        "torch", "pytorch", "torchrun", "deepspeed", "accelerate", "megatron", "nemo", "transformers",
        "lightning", "fsdp", "ddp", "jax", "tensorflow", "keras", "horovod", "trainer", "neox", "llm",
    )
)  # fmt: skip
TRAIN_WORDS = frozenset(("train", "training", "trainer", "pretrain", "pretraining", "fit"))
FINETUNE_WORDS = frozenset(
    ("finetune", "finetuning", "finetuned", "sft", "lora", "qlora", "peft", "dpo", "rlhf")
)
SWEEP_WORDS = frozenset(
    ("sweep", "sweeps", "hparam", "hparams", "hyperparam", "hyperparams", "hpo", "optuna")
)
DATA_WORDS = frozenset(
    (
        "tokenize", "tokenise", "tokenization", "tokenizing", "preprocess", "preprocessing", "prep",
        "shard", "shards", "sharding", "etl", "dedup", "dedupe", "ingest", "sessionize", "featurize",
        "spark", "download", "crawl",
    )
)  # fmt: skip
# Only server binaries: "serving" also names folders and registries of batch jobs.
SERVE_WORDS = SERVER_WORDS
EVAL_WORDS = frozenset(("eval", "evaluate", "evaluation", "benchmark"))
INFERENCE_WORDS = frozenset(
    (
        "eval", "evaluate", "evaluation", "inference", "infer", "predict", "prediction", "generate",
        "transcribe", "embed", "embeddings", "score", "scoring", "benchmark",
    )
)  # fmt: skip
INTERACTIVE_WORDS = frozenset(
    ("jupyter", "jupyterlab", "jupyterhub", "notebook", "rstudio", "ttyd", "interactive", "devbox", "vscode")
)
MAINTENANCE_WORDS = frozenset(
    (
        "cleanup", "purge", "prune", "health", "healthcheck", "check", "smoke", "burn", "burnin",
        "diag", "backup", "rotate", "maint", "maintenance", "fsck", "scrub", "nccl",
    )
)  # fmt: skip
HPC_CODES = frozenset(
    (
        "gromacs", "gmx", "lammps", "lmp", "openfoam", "simplefoam", "pimplefoam", "foamrun",
        "wrf", "cesm", "nek5000", "pw", "espresso", "quantum", "vasp", "namd", "cp2k", "nwchem", "amber",
        "pmemd", "fluent", "abaqus", "mitgcm", "xhpl", "hpl", "hpcg", "openmx", "siesta", "gaussian",
    )
)  # fmt: skip
MPI_MODULE_WORDS = frozenset(("openmpi", "mpich", "mvapich", "mvapich2", "impi", "hpcx", "cray", "mpi"))
IMAGE_BUILD = "image-build"
# Test runners: a script that runs them checks code, it is not a job that moves.
TEST_HARNESS_WORDS = frozenset(("pytest", "unittest", "ctest", "tox", "bats", "nosetests"))
# What a probe submission runs: it checks that Slurm takes a job, it does no work.
PROBE_COMMANDS = frozenset(("sleep", "hostname", "true", "echo", "date", "nvidia-smi"))
MULTIWORD = {
    "sleep infinity": "interactive",
    "wandb agent": "sweep",
    "ray tune": "sweep",
    "tune.run": "sweep",
    "tune.tuner": "sweep",
    **dict.fromkeys(SERVING_PHRASES, "serving"),  # vllm serve, sglang.launch_server, serve run ...
    "fine-tune": "fine-tuning",
    "fine_tune": "fine-tuning",
    "fine-tuning": "fine-tuning",
    "fine_tuning": "fine-tuning",
    "code-server": "interactive",
    "burn-in": "maintenance",
    "all_reduce_perf": "maintenance",
    "nccl-tests": "maintenance",
    "health-check": "maintenance",
    # building a container image is preparation, not a workload
    "docker build": IMAGE_BUILD,
    "podman build": IMAGE_BUILD,
    "buildah bud": IMAGE_BUILD,
    "enroot import": IMAGE_BUILD,
    "apptainer build": IMAGE_BUILD,
    "singularity build": IMAGE_BUILD,
}
STRICT_ENV_PREFIXES = ("NCCL_IB", "NCCL_SOCKET", "NCCL_NET", "FI_EFA", "FI_PROVIDER", "UCX_", "NCCL_TOPO")
FAST_NETWORK_RESOURCES = ("efa", "rdma", "infiniband", "ib", "hca", "mellanox")
# Every word a rule looks for. Facts keep only these: a script body has hundreds of
# words, and a site's worth of them would outweigh the rest of the plan.
VOCABULARY = (
    ML_WORDS
    | TRAIN_WORDS
    | FINETUNE_WORDS
    | SWEEP_WORDS
    | DATA_WORDS
    | SERVE_WORDS
    | EVAL_WORDS
    | INFERENCE_WORDS
    | INTERACTIVE_WORDS
    | MAINTENANCE_WORDS
    | TEST_HARNESS_WORDS
    | HPC_CODES
)

_SPLIT = re.compile(r"[^a-z0-9]+")
_COMMENT = re.compile(r"^\s*#.*$", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class JobFacts:
    job_id: str
    format: Format
    kind: JobKind
    nodes: int  # the nodes Slurm allocates (migrate.site.allocation), or an estimate for pods
    gpus: int  # the GPUs Slurm allocates: all of each node's for a whole-node job
    hours: float | None  # the time limit the job has (its own, or its partition's), None when none is known
    array_size: int
    launchers: tuple[str, ...]
    identity_words: frozenset[str]  # name, file name, labels (the VOCABULARY words among them)
    command_words: frozenset[str]  # what runs: launchers, container commands, body (idem)
    phrases: frozenset[str]  # MULTIWORD categories found anywhere
    mpi: bool  # an MPI launcher, srun --mpi, an MPIJob or an MPI module
    ml: bool  # an ML framework or launcher shows up
    strict_placement: tuple[str, ...]  # why placement must be exact (topology, exclusive, fabric)
    # What one run (one array task) holds, from the allocation, for the plan's demand:
    node_load: float = 1.0  # in nodes: nodes x the share of each it holds (1 for whole nodes)
    time_s: int = 0  # its time limit, assumed where nothing tells (time_basis says which)
    time_basis: str = ""  # where the time limit comes from (the allocation's provenance)
    # what the demand rests on that no source tells: "time_limit" (default_job_hours), "node_share"
    # (whole nodes, for a job on a partition whose node size is unknown)
    assumed: tuple[str, ...] = ()
    partition: str | None = None  # the partition it runs in (named, or the default one)
    # what a component asks beyond a node of its partition (the allocation's ``exceeds``): Slurm refuses it
    exceeds: tuple[str, ...] = ()
    allocation: dict[str, Any] | None = None  # what Slurm allocates, value by value with its source

    def words(self) -> frozenset[str]:
        return self.identity_words | self.command_words

    def found(self, vocabulary: frozenset[str]) -> list[str]:
        return sorted(self.words() & vocabulary)


def _mpi_kind(kind: str) -> bool:
    """A kind whose roles are an mpirun launcher and its workers (MPIJob): MPI whatever it runs."""
    declared = workloads.declared(kind)
    return declared is not None and bool(declared.mpi_launcher)


def facts_of(job: ir.Job, config: SiteConfig | None = None) -> JobFacts:
    config = config or SiteConfig()
    allocation = allocate(job, config)
    identity = _identity_text(job)
    command = _command_text(job)
    launchers = job.launcher_names()
    modules = " ".join(job.modules).lower()
    command_words = _shared(frozenset(_SPLIT.split(command)) & VOCABULARY)
    mpi = (
        any(name in MPI_LAUNCHERS for name in launchers)
        or _srun_mpi(job)
        or _mpi_kind(job.kind)
        or bool(frozenset(_SPLIT.split(modules)) & MPI_MODULE_WORDS)
    )
    words = frozenset(_SPLIT.split(identity)) & VOCABULARY
    ml = bool((words | command_words) & ML_WORDS) or any(name in ML_LAUNCHERS for name in launchers)
    ml = ml or workloads.is_training(job.kind)
    limit = allocation.time_limit_s
    kubernetes = job.source.format == "kubernetes"
    return JobFacts(
        job_id=job.id,
        format=job.source.format,
        kind=job.kind,
        nodes=allocation.total_nodes(),
        gpus=allocation.total_gpus(),
        hours=limit.value / 3600 if limit.source != Source.ASSUMED else None,
        array_size=(job.array.count or len(job.array.indices)) if job.array else 0,
        launchers=launchers,
        identity_words=_shared(words | frozenset(_SPLIT.split(modules)) & VOCABULARY),
        command_words=command_words,
        phrases=_shared(
            frozenset(cat for phrase, cat in MULTIWORD.items() if phrase in identity or phrase in command)
        ),
        mpi=mpi,
        ml=ml,
        strict_placement=_strict_placement(job),
        node_load=_node_load(allocation) if not kubernetes or allocation.partition.value else 0.0,
        time_s=limit.value,
        time_basis=_shared_text(limit.detail),
        assumed=_assumed(allocation),
        partition=allocation.partition.value,
        exceeds=tuple(text for c in allocation.components for text in c.exceeds),
        allocation=allocation.summary(),
    )


def _assumed(allocation: JobAllocation) -> tuple[str, ...]:
    found: tuple[str, ...] = ("time_limit",) if allocation.time_limit_s.source == Source.ASSUMED else ()
    if any(c.node is None and not c.whole_node for c in allocation.components):
        found += ("node_share",)
    return found


def _node_load(allocation: JobAllocation) -> float:
    """The nodes one run holds: whole nodes, or each node's share by its scarcest resource."""
    load = 0.0
    for comp in allocation.components:
        load += comp.nodes.value * comp.replicas * _share(comp)
    return round(load, 4)


def _share(comp: ComponentAllocation) -> float:
    node = comp.node
    if comp.whole_node or comp.whole_node_memory or node is None:
        return 1.0
    parts = []
    if node.gpus.value:
        parts.append(comp.gpus_per_node.value / node.gpus.value)
    if node.cpus.value:
        parts.append(comp.cpus_per_node.value / node.cpus.value)
    if node.mem_mb.value and comp.mem_per_node_mb.value:
        parts.append(comp.mem_per_node_mb.value / node.mem_mb.value)
    return min(1.0, max(parts)) if parts else 1.0


@lru_cache(maxsize=4096)
def _shared_text(text: str) -> str:
    """One string for each detail: most jobs of a site share a few time-limit bases."""
    return text


@lru_cache(maxsize=4096)
def _shared(words: frozenset[str]) -> frozenset[str]:
    """One object for each set of words: the jobs of a site share most of theirs (even an empty
    set is a new object of some 200 bytes each time)."""
    return words


def _identity_text(job: ir.Job) -> str:
    stem = job.source.path.rsplit("/", 1)[-1]
    parts = [job.name or "", stem, job.kind]
    parts += [kv.value for kv in job.labels]
    parts += [c.name for c in job.components if c.name != "main"]
    return " ".join(parts).lower()


def _command_text(job: ir.Job) -> str:
    parts: list[str] = []
    for comp in job.components:
        for launcher in comp.launchers:
            parts.append(launcher.name)
            parts.extend(launcher.program)
            parts.append(launcher.text)
        for container in comp.containers:
            parts.append(container.image)
            parts.extend(container.command)
            parts.extend(container.args)
    if job.script is not None and job.script.body:
        parts.append(_COMMENT.sub("", job.script.body))
    return " ".join(parts).lower()


def _srun_mpi(job: ir.Job) -> bool:
    for comp in job.components:
        for launcher in comp.launchers:
            if launcher.name == "srun" and any(kv.key.lstrip("-") == "mpi" for kv in launcher.options):
                return True
            if launcher.name == "srun" and "--mpi" in launcher.text:
                return True
    return False


def _strict_placement(job: ir.Job) -> tuple[str, ...]:
    found: list[str] = []
    for comp in job.components:
        res = comp.resources
        if res.exclusive:
            found.append(f"exclusive nodes ({res.exclusive})")
        if res.constraint:
            found.append(f"node features {res.constraint!r}")
        for gres in res.generic:
            if any(word in gres.name.lower() for word in FAST_NETWORK_RESOURCES):
                found.append(f"fabric resource {gres.name}")
        if res.mem_per_node_mb == 0:
            found.append("all memory of each node (--mem=0)")
    for kv in job.placement.topology:
        found.append(f"topology {kv.key}={kv.value}" if kv.value else f"topology {kv.key}")
    if job.placement.nodelist:
        found.append(f"fixed node list {job.placement.nodelist}")
    envs = [v.name for v in job.environment] + [v.name for c in job.components for v in c.environment]
    fabric = sorted({name for name in envs if name.startswith(STRICT_ENV_PREFIXES)})
    if fabric:
        found.append("fabric tuning " + ", ".join(fabric[:3]))
    for kv in job.annotations:
        if "exclusive-topology" in kv.key:
            found.append(f"exclusive topology {kv.value}")
    return tuple(dict.fromkeys(found))


__all__ = ["JobFacts", "facts_of"]
