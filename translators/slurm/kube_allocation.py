"""What Slurm gives a translated Kubernetes workload, against what its pods had.

The written script asks for what each pod requested; where it leaves a value
to Slurm, Slurm fills it from the site (``migrate.site.allocation``): a pod
without a memory request gets the partition's ``DefMemPerCPU`` x CPUs, a Job
without ``activeDeadlineSeconds`` gets ``DefaultTime`` or ``MaxTime``. Pods had
no such bound: where the site sets one, the entry says what the job loses.
"""

from __future__ import annotations

from dataclasses import replace

from migrate import ir
from migrate.site.allocation import allocate
from migrate.site.allocation_model import Source
from migrate.site.slurmtime import format_slurm_time

from .context import Context
from .shape import Part


def record(ctx: Context, parts: list[Part], partition: str | None) -> None:
    job = ctx.job
    placement = replace(job.placement, partitions=(partition,)) if partition else job.placement
    components = tuple(  # what the script asks: each pod as a node, a gang of them as whole nodes
        ir.Component(
            name=p.name,
            resources=replace(p.resources, nodes_min=p.nodes, exclusive="node" if p.nodes > 1 else None),
            line=p.main.line,
        )
        for p in parts
    )
    allocation = allocate(replace(job, components=components, placement=placement), ctx.config)
    limit = allocation.time_limit_s
    if not job.time_limit_s and limit.source == Source.SITE_DEFAULT:  # the site bounds what the pods did not
        given = format_slurm_time(limit.value)
        ctx.fidelity.approximated(
            "no activeDeadlineSeconds",
            f"the pods had no time limit; Slurm gives the job {given}: {limit.detail}",
            loses=f"unlimited run time: Slurm stops the job after {given}",
        )
    for part, comp in zip(parts, allocation.components, strict=True):
        memory = comp.mem_per_node_mb
        if part.resources.mem_per_node_mb or memory.value is None or comp.whole_node_memory:
            continue  # the pod asked (--mem), or Slurm does not bound its memory either
        ctx.fidelity.approximated(
            f"memory of {part.name}",
            f"the pod had no memory request or limit; Slurm bounds the job at {memory.value} MiB per node: "
            f"{memory.detail}",
            part.main.line,
            loses=f"unbounded memory: {memory.value} MiB per node",
        )


__all__ = ["record"]
