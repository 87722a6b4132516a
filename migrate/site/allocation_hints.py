"""Hints in a job script about what it expects to be given, for when no option or site value tells.

Read from the IR only (launchers hold their options as written, the
environment holds literal values with their lines):

* a launcher's process count per node: torchrun's ``--nproc_per_node`` (a
  number, or a variable such as ``$GPUS_PER_NODE`` set to one in the script),
  deepspeed's ``--num_gpus``;
* ``--gpus-per-node`` or ``--gres=gpu:N`` given to ``srun``;
* a literal ``CUDA_VISIBLE_DEVICES`` list;
* GPU tools (``nvidia-smi``, ``dcgmi``): GPUs are used, their count is unknown;
* fast-network variables (``FI_PROVIDER=efa``, ``FI_EFA_*``, ``NCCL_IB_*``).

Every hint names the file and line it was read from. The allocation marks
what it takes from here ``inferred`` and never lets it outrank an option or
the site's configuration.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import NamedTuple

from migrate import ir
from migrate.site.allocation_model import FabricKind, FabricUse

# Launchers that start one process per GPU, and the option that says how many per node.
_PER_NODE_OPTIONS = {
    "torchrun": ("nproc_per_node", "nproc-per-node"),
    "torch.distributed.run": ("nproc_per_node", "nproc-per-node"),
    "torch.distributed.launch": ("nproc_per_node", "nproc-per-node"),
    "deepspeed": ("num_gpus", "num-gpus"),
}
_VARIABLE = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)(?::?[-=]([0-9]+))?\}?\Z")
_DEVICE_LIST = re.compile(r"[0-9]+(?:,[0-9]+)*\Z")
_GPU_TOOLS = frozenset(("nvidia-smi", "dcgm", "dcgmi"))


class GpuHint(NamedTuple):
    gpus: int | None  # None: GPUs are used, how many is not said
    detail: str


def gpu_hints(job: ir.Job, comp: ir.Component) -> list[GpuHint]:
    """What the script says about the GPUs per node it expects, strongest first."""
    variables = (*job.environment, *comp.environment)
    if (
        not comp.launchers
        and not job.monitoring
        and not any(v.name == "CUDA_VISIBLE_DEVICES" for v in variables)
    ):
        return []  # most jobs: nothing to read a hint from
    env = _literals(variables)
    where = job.source.path
    out: list[GpuHint] = []
    for launcher in comp.launchers:
        out += _launcher_hints(launcher, env, where)
    visible = env.get("CUDA_VISIBLE_DEVICES")
    if visible is not None and _DEVICE_LIST.match(visible[0]):
        value, line = visible
        out.append(
            GpuHint(value.count(",") + 1, f"inferred from CUDA_VISIBLE_DEVICES={value} at {where}:{line}")
        )
    for hook in job.monitoring:
        if hook.kind in _GPU_TOOLS:
            at = f"{where}:{hook.line}" if hook.line is not None else where
            out.append(GpuHint(None, f"{hook.kind} at {at} uses GPUs; how many is not said"))
    return sorted(out, key=lambda h: h.gpus is None)


def _launcher_hints(
    launcher: ir.Launcher, env: dict[str, tuple[str, int | None]], where: str
) -> list[GpuHint]:
    out: list[GpuHint] = []
    at = f"{where}:{launcher.line}" if launcher.line is not None else where
    wanted = _PER_NODE_OPTIONS.get(launcher.name, ())
    for kv in launcher.options:
        key = kv.key.lstrip("-")
        if key in wanted:
            hint = _count_hint(kv.value, env, where, f"{launcher.name} --{key}", at)
            if hint is not None:
                out.append(hint)
        elif launcher.name == "srun" and key in ("gpus-per-node", "gres"):
            text = kv.value.split(",", 1)[0]
            if key == "gres":
                if not text.startswith("gpu"):
                    continue
                text = text.rsplit(":", 1)[-1]
            if text.isdecimal() and int(text) > 0:
                out.append(GpuHint(int(text), f"inferred from srun --{key}={kv.value} at {at}"))
    return out


def _count_hint(
    value: str, env: dict[str, tuple[str, int | None]], where: str, option: str, at: str
) -> GpuHint | None:
    """``--nproc_per_node`` as a number, a variable set to one, or ``gpu`` (all of the node's)."""
    text = value.strip()
    if text.isdecimal():
        return GpuHint(int(text), f"inferred from {option}={text} at {at}")
    if text in ("gpu", "auto"):
        return GpuHint(None, f"{option}={text} at {at}: one process per GPU, how many is not said")
    match = _VARIABLE.match(text)
    if match is None:
        return None
    name, fallback = match.group(1), match.group(2)
    if name in env and env[name][0].isdecimal():
        number, line = env[name]
        return GpuHint(
            int(number), f"inferred from {name}={number} at {where}:{line} feeding {option} at {at}"
        )
    if fallback is not None:
        return GpuHint(int(fallback), f"inferred from the default {fallback} of {text} in {option} at {at}")
    return None


def _literals(variables: Iterable[ir.EnvVar]) -> dict[str, tuple[str, int | None]]:
    """name -> (literal value, line) of the last assignment; values with expansions are left out."""
    out: dict[str, tuple[str, int | None]] = {}
    for var in variables:
        if var.value is not None and "$" not in var.value and "`" not in var.value:
            out[var.name] = (var.value, var.line)
    return out


def fabric_uses(job: ir.Job, comp: ir.Component) -> tuple[FabricUse, ...]:
    """The fast-network variables the script sets, one per variable."""
    found: dict[str, FabricUse] = {}
    ib_disabled = False
    for var in (*job.environment, *comp.environment):
        name = var.name
        if not name.startswith(("FI_", "NCCL_IB_")):
            continue
        value = var.value or ""
        if name == "NCCL_IB_DISABLE":
            ib_disabled = value == "1"
        elif (name == "FI_PROVIDER" and "efa" in value.lower()) or name.startswith("FI_EFA_"):
            found.setdefault(name, FabricUse(FabricKind.EFA, f"{name}={value}", var.line))
        elif name.startswith("NCCL_IB_"):
            found.setdefault(name, FabricUse(FabricKind.INFINIBAND, f"{name}={value}", var.line))
    if ib_disabled:  # NCCL_IB_DISABLE=1: the other NCCL_IB_* settings are not used
        return tuple(f for f in found.values() if f.kind is not FabricKind.INFINIBAND)
    return tuple(found.values())


__all__ = ["GpuHint", "fabric_uses", "gpu_hints"]
