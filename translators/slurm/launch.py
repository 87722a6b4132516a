"""The job steps of a translated Kubernetes workload: ``srun`` lines per launch style and runtime.

A container's argv is what the program must receive, byte for byte, after
Kubernetes' ``$(VAR)`` expansion; it is quoted word by word (see
:mod:`.quoting` and :mod:`.kubevars`). The runtime wraps it as its ``Launch``
in translators/runtimes.py says: pyxis as ``srun --container-image=...``,
Apptainer as ``apptainer exec docker://...``, Shifter as ``shifter`` in the
script's ``#SBATCH --image=docker:...`` (or its own ``--image`` where a step's
differs), podman-hpc as ``podman-hpc run --rm ... IMAGE``, or nothing when the
software is on the nodes.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass

from migrate import ir, workloads

from . import kubevars
from .context import NO_RUNTIME, Context
from .quoting import c_string, shell_word
from .shape import MPI, PLAIN, RAY, TORCH, Part, container_of, program_name, words
from .volumes import Mounts, rewrite_path

RDZV_PORT = 29500

# torchrun options whose value is a separate word when not given with '='.
_TORCHRUN_VALUED = frozenset(
    {
        "nnodes", "nproc_per_node", "nproc-per-node", "node_rank", "node-rank", "master_addr", "master-addr",
        "master_port", "master-port", "rdzv_backend", "rdzv-backend", "rdzv_endpoint", "rdzv-endpoint",
        "rdzv_id", "rdzv-id", "rdzv_conf", "rdzv-conf", "max_restarts", "max-restarts", "monitor_interval",
        "monitor-interval", "start_method", "start-method", "role", "log_dir", "log-dir", "redirects", "r",
        "tee", "t", "local_addr", "local-addr", "logs_specs", "logs-specs", "local_ranks_filter",
        "local-ranks-filter", "rdzv_timeout", "omp_num_threads",
    }
)  # fmt: skip
# What the Slurm allocation decides instead of the pod's options.
_TORCHRUN_REPLACED = frozenset(
    {
        "nnodes", "node_rank", "node-rank", "master_addr", "master-addr", "master_port", "master-port",
        "rdzv_backend", "rdzv-backend", "rdzv_endpoint", "rdzv-endpoint", "rdzv_id", "rdzv-id", "standalone",
    }
)  # fmt: skip
_NPROC = ("nproc_per_node", "nproc-per-node")
# mpirun options and how many value words follow them.
_MPIRUN_VALUES = {
    "-np": 1, "-n": 1, "-c": 1, "--np": 1, "-x": 1, "-H": 1, "--host": 1, "-host": 1, "--hostfile": 1,
    "-hostfile": 1, "--machinefile": 1, "-machinefile": 1, "--bind-to": 1, "-bind-to": 1, "--map-by": 1,
    "-map-by": 1, "--rank-by": 1, "-rank-by": 1, "--npernode": 1, "-npernode": 1, "-N": 1, "--mca": 2,
    "-mca": 2, "--gmca": 2, "-wdir": 1, "--wdir": 1, "-wd": 1, "--prefix": 1, "-launch-agent": 1,
    "--launch-agent": 1, "-ppn": 1, "-f": 1, "-genv": 2, "-env": 2, "-genvlist": 1,
}  # fmt: skip


@dataclass
class Program:
    """A program as shell text (one word per argv word), or None when it cannot be known."""

    argv: list[str]  # shell words
    uses_entrypoint: bool = False  # pyxis/apptainer must run the image's entrypoint with these args


def _quoted_words(ctx: Context, argv: list[str], defined: Callable[[str], bool], mounts: Mounts) -> list[str]:
    out = []
    for raw in argv:
        word = c_string(raw)
        if word != raw:
            ctx.fidelity.approximated(f"argument {raw[:20]!r}...", "cut at its NUL byte, as execve() does")
        if ctx.runtime == NO_RUNTIME and mounts.rewrites:
            rewritten = rewrite_path(word, mounts.rewrites)
            if rewritten is not None:
                out.append(rewritten)
                continue
        out.append(kubevars.shell_text(kubevars.split(word, defined)))
    return out


def program(
    ctx: Context, container: ir.Container | None, defined: Callable[[str], bool], mounts: Mounts
) -> Program | None:
    """The container's command + args as shell words; None when only the image knows its command."""
    if container is None:
        return None
    argv = _quoted_words(ctx, [*container.command, *container.args], defined, mounts)
    if not container.command:
        runtime = ctx.launch
        if (
            runtime is None
            or not runtime.runs_entrypoint
            or (not argv and runtime.entrypoint_needs_arguments)
        ):
            return None
        return Program(argv, uses_entrypoint=True)
    return Program(argv)


def _option(spelled: str, value: str) -> list[str]:
    """An option and its value: one word when spelled with a final '=', else two."""
    return [spelled + value] if spelled.endswith("=") else [spelled, value]


def _options(spelled: str, values: list[str], joined: str) -> list[str]:
    """The option for each value, or once for all of them, ``joined`` between them."""
    if joined:
        return _option(spelled, joined.join(values)) if values else []
    return [word for value in values for word in _option(spelled, value)]


def _binds(mounts: Mounts) -> list[str]:
    return [f"{b.source}:{shell_word(b.target)}{':ro' if b.read_only else ''}" for b in mounts.binds]


def runtime_prefix(
    ctx: Context, container: ir.Container | None, mounts: Mounts, env_names: list[str], gpus: bool
) -> tuple[list[str], list[str]]:
    """(srun options, words before the program) that run it in the container image, as the runtime's
    ``Launch`` declares them (translators/runtimes.py)."""
    runtime = ctx.launch
    if container is None or runtime is None or not container.image:
        opts = [f"--chdir={shell_word(container.workdir)}"] if container and container.workdir else []
        return opts, []
    words_ = list(runtime.words)
    if gpus and runtime.gpus:
        words_.append(runtime.gpus)
    image = shell_word(runtime.image_form(container.image))
    if runtime.image and container.image != ctx.job_image:  # the job's image is in its #SBATCH line
        words_ += _option(runtime.image, image)
    if runtime.bind:
        words_ += _options(runtime.bind, _binds(mounts), runtime.binds_joined)
    if container.workdir and runtime.workdir:
        words_ += _option(runtime.workdir, shell_word(container.workdir))
    if runtime.env:
        words_ += _options(runtime.env, [*runtime.env_always, *env_names], runtime.env_joined)
    if not runtime.image:
        words_.append(image)
    return (words_, []) if runtime.srun_options else ([], words_)


def step(
    ctx: Context,
    part: Part,
    prog: Program,
    mounts: Mounts,
    env_names: list[str],
    extra: list[str],
    container: ir.Container | None = None,
) -> str:
    """One srun line that runs ``prog`` in ``container`` (by default the part's app container)."""
    container = container or container_of(part.main)
    gpus = bool(part.resources.computed_gpus_per_node())
    opts, wrap = runtime_prefix(ctx, container, mounts, env_names, gpus)
    runtime = ctx.launch
    if runtime is not None:
        # the switches go last among the runtime's own words: before an image operand
        own, at = (
            (opts, len(opts)) if runtime.srun_options else (wrap, len(wrap) - (0 if runtime.image else 1))
        )
        if prog.uses_entrypoint:
            if runtime.entrypoint and (own or runtime.srun_options):
                own.insert(at, runtime.entrypoint)
            if wrap and runtime.entrypoint_words:
                wrap[: len(runtime.words)] = runtime.entrypoint_words
        elif wrap and runtime.no_entrypoint:
            wrap.insert(at, runtime.no_entrypoint)
    return " ".join(["srun", *extra, *opts, *wrap, *prog.argv])


# ---------------------------------------------------------------------------
# torch


def torch_program(ctx: Context, part: Part, argv: list[str], raw_words: list[str]) -> tuple[list[str], str]:
    """(shell words, fidelity reason) of a torch program run under a rendezvous on the first node.

    ``argv`` are the quoted words, ``raw_words`` the same words unquoted (to recognise options).
    """
    procs = _nproc(part)
    # one torchrun agent per pod: as many as nodes, or as tasks where pods share a node
    agents = '"$SLURM_JOB_NUM_NODES"' if part.pods_per_node == 1 else '"$SLURM_NTASKS"'
    rdzv = [
        "torchrun",
        f"--nnodes={agents}",
        f"--nproc_per_node={procs}",
        '--rdzv_id="$SLURM_JOB_ID"',
        "--rdzv_backend=c10d",
        '--rdzv_endpoint="$MASTER_ADDR:$MASTER_PORT"',
    ]
    name = program_name(raw_words)
    if name in ("torchrun", "torch.distributed.run", "torch.distributed.launch"):
        start = 3 if posixpath.basename(raw_words[0]).startswith("python") else 1
        kept: list[str] = []
        nproc_given = False
        i = start
        while i < len(raw_words):
            word = raw_words[i]
            if not word.startswith("-") or word in ("-m", "--module", "--no_python", "--no-python"):
                break
            key, eq, _ = word.lstrip("-").partition("=")
            takes = not eq and key in _TORCHRUN_VALUED
            span = argv[i : i + (2 if takes else 1)]
            if key in _NPROC:
                nproc_given = True
                kept += span
            elif key not in _TORCHRUN_REPLACED:
                kept += span
            i += 2 if takes else 1
        head = rdzv if not nproc_given else [w for w in rdzv if not w.startswith("--nproc_per_node")]
        return [
            *head,
            *kept,
            *argv[i:],
        ], "torchrun gets its node count and c10d rendezvous from the allocation"
    declared = workloads.declared(ctx.job.kind)
    per_pod = declared is not None and declared.program_per_pod
    if per_pod or not raw_words or not posixpath.basename(raw_words[0]).startswith("python"):
        pass  # the training operator starts the pod's program once: one task per pod, below
    elif len(raw_words) >= 2:
        rest = raw_words[1:]
        if rest[0] == "-m" and len(rest) >= 2:
            return [
                *rdzv,
                "-m",
                *argv[2:],
            ], "python -m runs under torchrun, which sets RANK/WORLD_SIZE like the operator"
        if not rest[0].startswith("-"):
            return [
                *rdzv,
                *argv[1:],
            ], "the script runs under torchrun, which sets RANK/WORLD_SIZE like the operator"
    wrapper = (
        "bash -c 'export RANK=$SLURM_PROCID WORLD_SIZE=$SLURM_NTASKS LOCAL_RANK=$SLURM_LOCALID "
        'LOCAL_WORLD_SIZE=$SLURM_NTASKS_PER_NODE; exec "$@"\' migrate-torch-env'
    )
    why = "each task gets RANK/WORLD_SIZE/LOCAL_RANK from its Slurm task ids"
    if per_pod:
        wrapper = f"bash -c '{operator_env(ctx.job, part)}; exec \"$@\"' migrate-torch-env"
        why = "one process per pod, as the operator starts it, with the variables the operator sets in "
        why += "each pod (RANK, WORLD_SIZE and PET_* with a Master; the elastic PET_* with an elasticPolicy) "
        why += "from its Slurm task ids, and no LOCAL_RANK, which the operator does not set"
    return [wrapper, *argv], why


_PLAIN_WORD = re.compile(r"[\w.-]+")  # a value that needs no quoting inside the wrapper's quotes


def operator_env(job: ir.Job, part: Part) -> str:
    """The shell that gives a task what training-operator v1.7+ sets in each pod of a PyTorchJob.

    With a Master: its address and port, RANK and PET_NODE_RANK (the pod's index), WORLD_SIZE (pods
    times nprocPerNode, the processes torchrun would start) and PET_NPROC_PER_NODE. With an
    elasticPolicy: the rendezvous on worker 0 and PET_NNODES as min:max; without one, PET_NNODES is
    the pod count. Nothing else: a Worker-only job's pods get no RANK, WORLD_SIZE or MASTER_ADDR.
    """
    procs = part.resources.tasks_per_node
    exports: list[str] = []
    unset = ""
    if any(c.name.lower() == "master" for c in job.components):
        world = f"$((SLURM_NTASKS * {procs}))" if procs and procs > 1 else "$SLURM_NTASKS"
        exports += [
            "RANK=$SLURM_PROCID",
            f"WORLD_SIZE={world}",
            "PET_NODE_RANK=$SLURM_PROCID",
            f"PET_NPROC_PER_NODE={procs or 'auto'}",
            "PET_MASTER_ADDR=$MASTER_ADDR",
            "PET_MASTER_PORT=$MASTER_PORT",
        ]
    else:
        unset = "; unset MASTER_ADDR MASTER_PORT"  # the batch script's, for the rendezvous only
    elastic = {item.key: item.value for item in job.raw if item.origin.startswith("spec.elasticPolicy.")}
    if not elastic:
        exports.append("PET_NNODES=$SLURM_NTASKS")
    else:
        exports.append("PET_RDZV_ENDPOINT=$MASTER_ADDR:$MASTER_PORT")
        backend = elastic.get("rdzvBackend", "c10d")
        exports.append(f"PET_RDZV_BACKEND={backend if _PLAIN_WORD.fullmatch(backend) else 'c10d'}")
        # the operator's defaulting: one bound stands for both, and none is the Worker replicas
        workers = next((str(c.replicas) for c in job.components if c.name.lower() == "worker"), "1")
        low = next((v for v in (elastic.get("minReplicas"), elastic.get("maxReplicas")) if v), workers)
        high = next((v for v in (elastic.get("maxReplicas"), elastic.get("minReplicas")) if v), workers)
        bounded = low.isdigit() and high.isdigit()
        exports.append(f"PET_NNODES={low}:{high}" if bounded else "PET_NNODES=$SLURM_NTASKS")
        if elastic.get("maxRestarts", "").isdigit():
            exports.append(f"PET_MAX_RESTARTS={elastic['maxRestarts']}")
    return f"export {' '.join(exports)}{unset}"


def _nproc(part: Part) -> int:
    res = part.resources
    return res.tasks_per_node or res.computed_gpus_per_node() or 1


def torch_env_lines(port: int = RDZV_PORT) -> list[str]:
    return [
        "# rendezvous on the first node of the allocation",
        'MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n1)',
        f"MASTER_PORT={port}",
        "export MASTER_ADDR MASTER_PORT",
    ]


def master_port(job: ir.Job) -> int:
    """The MASTER_PORT the job's programs saw: the one a training operator gives (a PyTorchJob's
    Master port pytorchjob-port, else its default), else the rendezvous port torchrun takes by default."""
    given = [c.rendezvous_port for c in job.components if c.rendezvous_port]
    return given[0] if given else RDZV_PORT


# ---------------------------------------------------------------------------
# MPI


_MPIRUN_WDIR = frozenset({"-wdir", "--wdir", "-wd", "--wd"})
# mpirun --bind-to values and the srun --cpu-bind that pins ranks the same way.
_BIND = {"none": "none", "core": "cores", "socket": "sockets", "hwthread": "threads", "numa": "ldoms"}


@dataclass
class MpiLine:
    ranks: int | None  # -np
    env: list[tuple[str, str | None]]  # -x NAME[=VALUE]
    program: list[str]  # raw words (argv) or shell text words (from a script)
    dropped: list[str]
    from_script: bool = False
    workdir: str | None = None  # -wdir: where every rank starts (srun --chdir)
    bind: str | None = None  # --bind-to: how ranks are pinned (srun --cpu-bind)


def mpi_from_argv(argv: list[str]) -> MpiLine | None:
    """The rank program and the options that matter of an ``mpirun ...`` argv."""
    if not argv or posixpath.basename(argv[0]) not in ("mpirun", "mpiexec", "orterun"):
        return None
    ranks: int | None = None
    env: list[tuple[str, str | None]] = []
    dropped: list[str] = []
    workdir: str | None = None
    bind: str | None = None
    i = 1
    while i < len(argv) and argv[i].startswith("-"):
        word = argv[i]
        name, eq, inline = word.partition("=")
        count = 0 if eq else _MPIRUN_VALUES.get(name, 0)
        values = [inline] if eq else argv[i + 1 : i + 1 + count]
        if name in ("-np", "-n", "-c", "--np") and values and (values[0].isascii() and values[0].isdigit()):
            ranks = int(values[0])
        elif name == "-x" and values:
            key, has, val = values[0].partition("=")
            env.append((key, val if has else None))
        elif name in _MPIRUN_WDIR and values:
            workdir = values[0]
        elif name in ("--bind-to", "-bind-to") and values and values[0] in _BIND:
            bind = values[0]
        else:
            dropped.append(" ".join([word, *([] if eq else values)]))
        i += 1 + count
    return MpiLine(ranks, env, argv[i:], dropped, workdir=workdir, bind=bind)


def mpi_from_launcher(launcher: ir.Launcher) -> MpiLine:
    """The same from a launcher the shell analysis found in a script (words are shell text)."""
    ranks = None
    env: list[tuple[str, str | None]] = []
    dropped = []
    for kv in launcher.options:
        key = kv.key if kv.key.startswith("-") else ("--" if len(kv.key) > 1 else "-") + kv.key
        if kv.key.lstrip("-") in ("np", "n", "c") and (kv.value.isascii() and kv.value.isdigit()):
            ranks = int(kv.value)
        elif kv.key.lstrip("-") == "x":
            name, has, val = kv.value.partition("=")
            env.append((name, val if has else None))
        else:
            dropped.append(f"{key} {kv.value}".strip())
    return MpiLine(ranks, env, list(launcher.program), dropped, from_script=True)


def cpu_bind(bind: str) -> str:
    """srun's --cpu-bind value for an mpirun --bind-to value."""
    return _BIND[bind]


__all__ = [
    "MPI",
    "PLAIN",
    "RAY",
    "RDZV_PORT",
    "TORCH",
    "MpiLine",
    "Program",
    "cpu_bind",
    "mpi_from_argv",
    "mpi_from_launcher",
    "program",
    "runtime_prefix",
    "step",
    "torch_env_lines",
    "torch_program",
    "words",
]
