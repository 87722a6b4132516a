"""A job's size as people read it (nodes, GPUs, other accelerators), from the allocation model.

The scan table, the scan summary and the report show these; the plan reads the
same allocation. Pods are packed onto nodes as :mod:`.pod_allocation` packs them
(8-GPU nodes assumed where nothing says), and a device that is an accelerator
but not a GPU (``aws.amazon.com/neuron``, ``habana.ai/gaudi``) is counted by its
own name, not as GPUs. A RayJob that runs on a scanned RayCluster shows that
cluster's size but adds nothing to totals: the cluster already holds the nodes.
"""

from __future__ import annotations

from collections import Counter
from typing import NamedTuple

from migrate import ir
from migrate.devices import short_name
from migrate.site.allocation import allocate
from migrate.site.allocation_model import Source
from migrate.site.config import SiteConfig

_ON_CLUSTER = "rayClusterOf"  # the scan's note on a RayJob that runs on a RayCluster of another file


class JobSize(NamedTuple):
    nodes: int
    gpus: int
    accelerators: tuple[tuple[str, int], ...]  # (device name, count) of accelerators that are not GPUs
    assumed: bool  # a node count or size no file and no site configuration gives
    on: str | None  # the scanned object whose resources these are; totals leave the job out

    @property
    def counted(self) -> bool:
        return self.on is None

    def devices_text(self) -> str:
        """ "8", "192 neuron", "16 on ray-g5": GPUs, other accelerators by name, the object it runs on."""
        parts = [str(self.gpus)] if self.gpus else []
        parts += [f"{count} {name}" for name, count in self.accelerators]
        text = ", ".join(parts)
        return f"{text} on {self.on}".strip() if self.on else text


# Without a site configuration (the scan), every job is sized against the same one: built once, and
# what the allocation works out of it is worked out once.
_NO_SITE = SiteConfig()


def job_size(job: ir.Job, config: SiteConfig | None = None) -> JobSize:
    alloc = allocate(job, config or _NO_SITE)
    gpus = 0
    others: Counter[str] = Counter()
    for comp in alloc.components:
        if comp.accelerator:
            others[short_name(comp.accelerator)] += comp.gpus
        else:
            gpus += comp.gpus
    assumed = any(
        getattr(comp, key).source == Source.ASSUMED
        for comp in alloc.components
        for key in ("nodes", "pods_per_node")
        if getattr(comp, key) is not None
    )
    return JobSize(alloc.total_nodes(), gpus, tuple(sorted(others.items())), assumed, runs_on(job))


def runs_on(job: ir.Job) -> str | None:
    """The scanned object a job runs on, whose nodes it shows but does not add (a RayJob's RayCluster)."""
    return next((i.value.split(" (", 1)[0] for i in job.raw if i.key == _ON_CLUSTER and i.value), None)


__all__ = ["JobSize", "job_size", "runs_on"]
