"""Scripts that launch training onto Kubernetes with ``torchx run -s kubernetes``.

A launch script holds no manifest, yet it runs a job on the cluster: TorchX's
Kubernetes scheduler submits a Volcano Job of ``-j NxM`` (N pods, each running
``torchrun`` with M processes), sized by ``--gpu``/``--cpu``/``--memMB`` or a
named resource (``-h aws_p4d.24xlarge``, which also selects the instance type),
in the queue ``-cfg queue=...`` names. Each such command becomes one IR job,
as if that Volcano Job had been written down, with the command as its
provenance. Only the built-in ``dist.ddp`` and ``utils.python`` shapes are read;
other components are reported, not guessed.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from dataclasses import dataclass

from migrate import ir
from migrate.diagnostics import Collector
from migrate.vocab import ContainerRuntime, EnvOrigin, Format, JobKind

from .raw_keys import RAW_KEYS

_RUN = re.compile(r"^\s*(?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+)*torchx\s+run\b")
_KUBERNETES = ("kubernetes", "kubernetes_mcad")
_ASSIGN = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=('[^']*'|\"[^\"$`]*\"|[^\s$`'\";|&]+)\s*$")
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")
# dist.ddp's defaults when the command gives no size (torchx.components.dist.ddp)
_DEFAULT_CPU, _DEFAULT_MEM_MB = 2, 1024
_DEFAULT_IMAGE = "ghcr.io/pytorch/torchx"


@dataclass(frozen=True)
class _Named:
    cpus: int
    gpus: int
    mem_mb: int
    instance_type: str
    devices: tuple[tuple[str, int], ...] = ()  # other devices the instance type has (Neuron, EFA)


# TorchX's AWS named resources (torchx.specs.named_resources_aws): what one such node gives a pod.
_NAMED: dict[str, _Named] = {
    "aws_p3.16xlarge": _Named(64, 8, 499_712, "p3.16xlarge"),
    "aws_p3dn.24xlarge": _Named(96, 8, 786_432, "p3dn.24xlarge"),
    "aws_p4d.24xlarge": _Named(96, 8, 1_179_648, "p4d.24xlarge"),
    "aws_p4de.24xlarge": _Named(96, 8, 1_179_648, "p4de.24xlarge"),
    "aws_p5.48xlarge": _Named(192, 8, 2_097_152, "p5.48xlarge"),
    "aws_g5.48xlarge": _Named(192, 8, 786_432, "g5.48xlarge"),
    "aws_trn1.32xlarge": _Named(128, 0, 524_288, "trn1.32xlarge", (("aws.amazon.com/neuron", 16),)),
}


@dataclass
class Launch:
    line: int
    words: list[str]
    scheduler: str
    cfg: dict[str, str]
    component: str
    args: list[str]


def launches(text: str) -> list[Launch]:
    """Every ``torchx run`` of a script onto Kubernetes, continuation lines joined."""
    out: list[Launch] = []
    lines = text.splitlines()
    known: dict[str, str] = {}  # literal assignments above: IMAGE=..., read as the shell would
    index = 0
    while index < len(lines):
        start = index
        joined = lines[index]
        while joined.endswith("\\") and index + 1 < len(lines):
            index += 1
            joined = joined[:-1] + " " + lines[index]
        index += 1
        assigned = _ASSIGN.match(joined)
        if assigned:
            known[assigned.group(1)] = assigned.group(2).strip("'\"")
            continue
        if not _RUN.match(joined):
            continue
        found = _parse(_VAR.sub(lambda m: known.get(m.group(1) or m.group(2), m.group(0)), joined), start + 1)
        if found is not None and found.scheduler in _KUBERNETES:
            out.append(found)
    return out


def _parse(command: str, line: int) -> Launch | None:
    try:
        words = shlex.split(command, comments=True)
    except ValueError:
        return None
    while words and "=" in words[0] and not words[0].startswith("torchx"):
        words.pop(0)  # VAR=value before the command
    words = words[2:]  # torchx run
    scheduler = ""
    cfg: dict[str, str] = {}
    while words and words[0].startswith("-"):
        flag = words.pop(0)
        value = words.pop(0) if words and "=" not in flag else flag.partition("=")[2]
        name = flag.partition("=")[0]
        if name in ("-s", "--scheduler"):
            scheduler = value
        elif name in ("-cfg", "--cfg", "--scheduler_args"):
            cfg |= dict(pair.partition("=")[::2] for pair in value.split(",") if "=" in pair)
        elif name in ("--dryrun", "--wait", "--log") and value and not value.startswith("-"):
            words.insert(0, value)  # a switch: what followed it is not its value
    if not words:
        return None
    return Launch(line, words, scheduler, cfg, words[0], words[1:])


def jobs(text: str, path: str, diags: Collector) -> list[ir.Job]:
    out: list[ir.Job] = []
    for launch in launches(text):
        job = _job(launch, path)
        if job is None:
            diags.add(
                "K8S-TORCHX-COMPONENT",
                f"torchx run {launch.component}: a component whose pods are not known here "
                "(dist.ddp and utils.python are); the job is not counted",
                launch.line,
            )
            continue
        out.append(job)
    return out


def _options(args: list[str]) -> tuple[dict[str, str], list[str]]:
    """Component options (``--gpu 8``, ``-j=2x8``) and what follows ``--`` or the script."""
    options: dict[str, str] = {}
    rest: list[str] = []
    i = 0
    while i < len(args):
        word = args[i]
        if word == "--":
            rest = args[i + 1 :]
            break
        if word.startswith("-"):
            name, eq, value = word.lstrip("-").partition("=")
            if not eq and i + 1 < len(args):
                value, i = args[i + 1], i + 1
            options[name] = value
        else:
            rest = args[i:]
            break
        i += 1
    return options, rest


def _count(options: dict[str, str], name: str, default: int) -> int:
    """A whole-number option; one that is not (a variable, a typo) keeps torchx's default."""
    value = options.get(name, "")
    return int(value) if value.isascii() and value.isdigit() else default


def _job(launch: Launch, path: str) -> ir.Job | None:
    if launch.component not in ("dist.ddp", "utils.python"):
        return None
    options, rest = _options(launch.args)
    nodes, procs = 1, 1
    shape = options.get("j", "1x1")
    found = re.fullmatch(r"(?:\d+:)?(\d+)x(\d+)", shape)
    if found:
        nodes, procs = int(found.group(1)), int(found.group(2))
    named = _NAMED.get(options.get("h", ""))
    if named is not None:
        cpus, gpus, mem = named.cpus, named.gpus, named.mem_mb
    else:
        cpus = _count(options, "cpu", _DEFAULT_CPU)
        gpus = _count(options, "gpu", 0)
        mem = _count(options, "memMB", _DEFAULT_MEM_MB)
    script = options.get("script")
    module = options.get("m")
    program = ["-m", module] if module else [script] if script else []
    if not program:
        return None
    name = options.get("name") or posixpath.splitext(posixpath.basename(script or module or "app"))[0]
    command: tuple[str, ...]
    if launch.component == "dist.ddp":
        command = ("torchrun", f"--nnodes={nodes}", f"--nproc_per_node={procs}", "--rdzv_backend=c10d")
    else:
        command = ("python",)
    image = options.get("image", _DEFAULT_IMAGE)
    selector = (ir.KeyValue("node.kubernetes.io/instance-type", named.instance_type),) if named else ()
    generic = tuple(ir.GenericResource(n, c) for n, c in named.devices) if named else ()
    env = tuple(
        ir.EnvVar(key, value, origin=EnvOrigin.ENV, line=launch.line)
        for key, _, value in (
            pair.partition("=") for pair in options.get("env", "").split(",") if "=" in pair
        )
    )
    component = ir.Component(
        name=name,
        replicas=nodes,
        resources=ir.Resources(
            cpus_per_node=cpus,
            mem_per_node_mb=mem,
            gpus_per_node=gpus or None,
            generic=generic,
            node_selector=selector,
        ),
        containers=(
            ir.Container(
                image=image,
                name=name,
                runtime=ContainerRuntime.KUBERNETES,
                command=(*command, *program, *rest),
                line=launch.line,
            ),
        ),
        environment=env,
        line=launch.line,
    )
    text = " ".join(["torchx", "run", *launch.words])
    return ir.Job(
        id=f"{path}#torchx/{name}@{launch.line}",
        source=ir.SourceRef(path, Format.KUBERNETES, launch.line, launch.line),
        kind=JobKind.VOLCANO_JOB,
        name=name,
        components=(component,),
        placement=ir.Placement(
            queue=launch.cfg.get("queue"),
            namespace=launch.cfg.get("namespace"),
            priority=launch.cfg.get("priority_class"),
            scheduler="volcano",
        ),
        raw=(RAW_KEYS.item("torchx", text[:400], launch.line, "torchx run"),),
    )


__all__ = ["Launch", "jobs", "launches"]
