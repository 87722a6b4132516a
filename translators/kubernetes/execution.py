"""Where each part of a translated job runs: the batch script once, on node 0; steps on their nodes.

Slurm runs the batch script once, on the first node of the allocation, and
``srun`` starts the steps on the nodes they use. A translated job with several
pods does the same: the pod of node 0 runs the script, every other pod runs
the step service of the shims (``migrate-stepd``) and starts the steps that
the script's ``srun`` sends it. So ``$(hostname)``, ``SLURMD_NODENAME`` and
``SLURM_NODEID`` outside ``srun`` are node 0's, and statements outside
``srun`` run once. docs/execution.md has the design and its limits.

Two pod-spec settings follow from it: ``setHostnameAsFQDN`` (a pod's short
host name resolves only inside the pod, so ``$(hostname)`` handed to the
other pods as a rendezvous address must be the full DNS name), and a
memory-backed ``/dev/shm`` for pods that run several processes.
"""

from __future__ import annotations

from typing import Any

from migrate import ir
from migrate.render import plural

from . import flavors
from .quantities import parse_quantity
from .translation_context import Context

CLUSTER_DOMAIN = "svc.cluster.local"
HOSTNAME_MAX = 64  # the kubelet refuses a longer FQDN as the pod's host name
SHM_DEFAULT = "16Gi"  # without a memory limit or a site setting
SHM_VOLUME = "dshm"


def record_batch_host(ctx: Context, pods: int, where: str | None = None) -> None:
    """One fidelity entry: where the batch script runs (``where``: the workload's own account)."""
    if pods <= 1:
        return
    node_0 = (
        f"runs once, in the pod of node 0, as on the first node of a Slurm allocation; the other "
        f"{plural(pods - 1, 'pod')} {'starts' if pods == 2 else 'start'} its srun steps "
        "(step service of the shims; the image needs perl)"
    )
    ctx.fidelity.mapped("batch script", where or node_0)


def fqdn_hostname(ctx: Context, spec: dict[str, Any], hosts: list[str]) -> None:
    """``setHostnameAsFQDN`` when every pod's full name fits the kernel's limit."""
    namespace = ctx.namespace or "default"
    longest = max((f"{h}.{namespace}.{CLUSTER_DOMAIN}" for h in hosts), key=len)
    if len(longest) <= HOSTNAME_MAX:
        spec["setHostnameAsFQDN"] = True
        return
    ctx.fidelity.approximated(
        "hostname",
        f"the pods' full DNS names (up to {len(longest)} characters) exceed the {HOSTNAME_MAX} a host "
        "name may have: $(hostname) is the short pod name, which the other pods cannot resolve; "
        "use $SLURMD_NODENAME or scontrol show hostnames instead",
    )


def _several_processes(ctx: Context, comp: ir.Component, gpus: int) -> bool:
    if gpus or comp.resources.computed_tasks_per_node() > 1:
        return True
    nproc = flavors.nproc_per_node(flavors.torch_launcher(ctx.job), gpus)
    return nproc.isdigit() and int(nproc) > 1


def shm_size(ctx: Context, memory: object) -> str:
    """The site's ``defaults.shm_size``, else half the pod's memory limit, else SHM_DEFAULT."""
    configured = getattr(ctx.site.config.defaults, "shm_size", None) if ctx.site.config else None
    if configured:
        return str(configured)
    quantity = parse_quantity(memory) if memory is not None else None
    if quantity is None or quantity <= 0:
        return SHM_DEFAULT
    gib = int(quantity / 2 / 2**30)
    return f"{gib}Gi" if gib >= 1 else f"{max(1, int(quantity / 2 / 2**20))}Mi"


def shm_volume(
    ctx: Context, comp: ir.Component, gpus: int, memory: object
) -> tuple[dict[str, Any], dict[str, Any], str] | None:
    """(mount, volume, note) of a memory-backed /dev/shm, for pods with GPUs or several local processes."""
    if not _several_processes(ctx, comp, gpus):
        return None
    size = shm_size(ctx, memory)
    mount = {"name": SHM_VOLUME, "mountPath": "/dev/shm"}
    volume = {"name": SHM_VOLUME, "emptyDir": {"medium": "Memory", "sizeLimit": size}}
    note = (
        f"/dev/shm for NCCL, data loaders and local ranks: the container default is 64Mi; {size} "
        "(site config defaults.shm_size, else half the memory limit) counts against the pod's memory"
    )
    return mount, volume, note


__all__ = ["fqdn_hostname", "record_batch_host", "shm_size", "shm_volume"]
