"""A RayJob's Ray cluster started inside its Slurm allocation, and the entrypoint run on it.

What KubeRay does, done with ``srun``: the head on the first node, each worker
group on nodes of its own, every ``ray start`` given the resources KubeRay
derives from the role's pod (``--num-cpus`` from the CPU limit, ``--memory``
in bytes from the memory limit, ``--num-gpus`` from a ``*gpu`` resource) unless
``rayStartParams`` sets them; workers join once the head's GCS port answers (KubeRay's
workers wait for it in an init container); the entrypoint runs on the head once
every node has joined (KubeRay submits the job when the cluster is ready).
"""

from __future__ import annotations

import json
import math
import re

from migrate import ir
from migrate.render import plural
from migrate.vocab import JobKind

from . import launch, shape
from .context import Context
from .quoting import shell_word
from .shape import Part
from .volumes import Mounts

PORT = 6379
WAIT_SECONDS = 300  # for the head's port, and for every node to join

# rayStartParams whose "true"/"false" is a value, not an on/off switch (KubeRay's own exceptions).
_VALUED_BOOLEANS = frozenset({"log-color", "include-dashboard"})

# Run on the head: exits 0 once the cluster has argv[1] live nodes, 1 after WAIT_SECONDS.
_READY = (
    "import ray, sys, time\n"
    'ray.init(logging_level="ERROR")\n'
    f"deadline = time.time() + {WAIT_SECONDS}\n"
    'while sum(n["Alive"] for n in ray.nodes()) < int(sys.argv[1]):\n'
    "    if time.time() > deadline:\n"
    '        sys.exit("the Ray cluster has not reached " + sys.argv[1] + " nodes")\n'
    "    time.sleep(1)\n"
)


def start_params(job: ir.Job, comp: ir.Component, next_line: int | None) -> dict[str, str]:
    """The role's ``rayStartParams`` (kept by the reader as JSON, found by line), as given."""
    for item in job.raw:
        if item.key != "rayStartParams" or item.line is None or comp.line is None:
            continue
        if item.line >= comp.line and (next_line is None or item.line < next_line):
            try:
                params = json.loads(item.value)
            except ValueError:
                return {}
            if not isinstance(params, dict):
                return {}
            return {str(k): str(v) for k, v in params.items() if re.fullmatch(r"[A-Za-z0-9_-]+", str(k))}
    return {}


def derived_resources(comp: ir.Component) -> dict[str, str]:
    """What KubeRay adds to ``ray start`` from the pod's resources, when rayStartParams does not say."""
    res = comp.resources
    out: dict[str, str] = {}
    cpus = res.cpus_per_node or (res.cpus_per_task or 0) * (res.tasks_per_node or 1)
    if cpus:
        out["num-cpus"] = str(math.ceil(cpus))
    if res.mem_per_node_mb:
        out["memory"] = str(res.mem_per_node_mb * 1024 * 1024)
    if res.gpus_per_node:
        out["num-gpus"] = str(res.gpus_per_node)
    else:
        # KubeRay reads the first resource whose name ends in "gpu" (amd.com/gpu, gpu.intel.com/...)
        for gres in res.generic:
            if gres.name.endswith("gpu") and gres.count:
                out["num-gpus"] = str(gres.count)
                break
    return out


def start_options(job: ir.Job, comp: ir.Component, next_line: int | None) -> list[str]:
    """``ray start`` options of one role: its rayStartParams, then KubeRay's derived resources."""
    params = {**derived_resources(comp), **start_params(job, comp, next_line)}
    out = []
    for key, value in params.items():
        if value.lower() in ("true", "false") and key not in _VALUED_BOOLEANS:
            if value.lower() == "true":  # a switch: KubeRay writes --key, and nothing for false
                out.append(shell_word(f"--{key}"))
            continue
        out.append(shell_word(f"--{key}={value}"))
    return out


def _node_list(first: int, count: int) -> str:
    """The hosts ``first .. first+count-1`` of the allocation, as srun -w takes them."""
    return f'"$(IFS=,; echo "${{ray_nodes[*]:{first}:{count}}}")"'


def lines(ctx: Context, part: Part, mounts: Mounts, names: list[str]) -> list[str]:
    job = ctx.job
    # the roles as the manifest gives them: the part's first role carries the largest of each resource
    own = {c.name: c for c in job.components}
    head, workers = own.get(part.roles[0].name, part.roles[0]), part.roles[1:]
    roles = sorted([head, *workers], key=lambda c: c.line or 0)
    next_line = {id(c): (roles[i + 1].line if i + 1 < len(roles) else None) for i, c in enumerate(roles)}
    opts, wrap = launch.runtime_prefix(
        ctx, shape.container_of(head), mounts, names, bool(part.resources.computed_gpus_per_node())
    )
    run = " ".join(["--overlap", *opts, *wrap])
    head_options = start_options(job, head, next_line[id(head)])
    head_start = ["ray", "start", "--head", f"--port={PORT}", "--block", *head_options]
    out = [
        "# a Ray cluster inside the allocation: head on the first node, each worker group on its own nodes",
        'ray_nodes=($(scontrol show hostnames "$SLURM_JOB_NODELIST"))',
        'ray_head="${ray_nodes[0]}"',
        "# the head by its address, as Ray's Slurm recipe does: gRPC may not read the hosts file",
        "ray_head_ip=$(srun --nodes=1 --ntasks=1 -w \"$ray_head\" hostname --ip-address | awk '{print $1}')",
        f'export RAY_ADDRESS="$ray_head_ip:{PORT}"',
        "pids=()",
        f'srun --nodes=1 --ntasks=1 -w "$ray_head" {run} {" ".join(head_start)} &',
        "pids+=($!)",
    ]
    first, nodes = 1, 1
    if workers:
        out += [
            "# workers join once the head's GCS answers, as KubeRay's workers wait for it",
            f"for _ in $(seq {WAIT_SECONDS}); do "
            f'(: >"/dev/tcp/$ray_head_ip/{PORT}") 2>/dev/null && break; sleep 1; done',
        ]
    for worker in workers:
        count = shape.pods(worker)
        options = start_options(job, worker, next_line[id(worker)])
        start = ["ray", "start", '--address="$RAY_ADDRESS"', "--block", *options]
        out += [
            f"srun --nodes={count} --ntasks={count} -w {_node_list(first, count)} {run} {' '.join(start)} &",
            "pids+=($!)",
        ]
        first += count
        nodes += count
    entry = job.script.body if job.script is not None and job.kind == JobKind.RAY_JOB else ""
    line = job.script.first_command_line if job.script else None
    if entry:
        ready = f"python3 -c {shell_word(_READY)} {nodes}"
        out += [
            "# the entrypoint runs on the head once every node has joined (KubeRay submits it when the",
            "# cluster is ready); RAY_ADDRESS names the cluster, as the Ray job API sets it",
            f'srun --nodes=1 --ntasks=1 -w "$ray_head" {run} {ready} &&',
            f'  srun --nodes=1 --ntasks=1 -w "$ray_head" {run} bash -c {shell_word(entry)}',
            "rc=$?",
            'kill "${pids[@]}" 2>/dev/null',
            "wait",
            'exit "$rc"',
        ]
        ctx.fidelity.approximated(
            "spec.entrypoint",
            f"runs on the head node once all {nodes} Ray nodes have joined, with bash -c instead of the "
            "Ray job API (no submission id, no job logs in the dashboard)",
            line,
        )
    else:
        out += ["# no entrypoint: the cluster serves until the job's time limit", "wait"]
    ctx.fidelity.approximated(
        f"Ray cluster: head + {plural(nodes - 1, 'worker node')}",
        "started with ray start inside the Slurm allocation, with the resources KubeRay gives each role "
        "(--num-cpus, --memory, --num-gpus); Slurm gives every node the largest role's share",
        head.line,
    )
    return out


__all__ = ["PORT", "WAIT_SECONDS", "derived_resources", "lines", "start_options", "start_params"]
