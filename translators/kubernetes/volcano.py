"""Volcano Job (batch.volcano.sh/v1alpha1): gang-scheduled multi-pod jobs.

``minAvailable`` is every pod of the job, so all nodes start together, as in
Slurm. One task per component; the ``svc`` plugin gives pods the host names
``<job>-<task>-<i>.<job>`` and the ``env`` plugin their index
(``VC_TASK_INDEX``). An eviction restarts the whole job (``RestartJob``), the
closest match to Slurm requeueing a job whose node failed.
"""

from __future__ import annotations

from typing import Any

from . import execution, pod_template, slurmenv
from .job_policy import JobPolicy
from .storage import Volume
from .translation_context import Context, Workload
from .yamlemit import Manifest

API = "batch.volcano.sh/v1alpha1"
INDEX_ENV = "VC_TASK_INDEX"
JOB_NAME_LABEL = "volcano.sh/job-name"


def task_names(ctx: Context) -> list[str]:
    comps = ctx.job.components
    return ["node"] if len(comps) == 1 else [f"het{i}" for i in range(len(comps))]


def build(ctx: Context, policy: JobPolicy, volumes: list[Volume]) -> tuple[list[Manifest], Workload]:
    job = ctx.job
    het = len(job.components) > 1
    array_count = slurmenv.array_count(job.array) if job.array is not None else 1
    all_hosts: list[str] = []
    for comp, task in zip(job.components, task_names(ctx), strict=True):
        all_hosts += [f"{ctx.name}-{task}-{i}.{ctx.name}" for i in range(comp.resources.computed_nodes())]
    tasks: list[dict[str, Any]] = []
    manifest_notes: list[tuple[tuple[str | int, ...], str]] = []
    offset = 0
    total = 0
    for index, (comp, task) in enumerate(zip(job.components, task_names(ctx), strict=True)):
        nodes = comp.resources.computed_nodes() * comp.replicas
        topo = slurmenv.Topology(
            index_from=INDEX_ENV,
            nodes=nodes,
            node_offset=offset,
            hosts=tuple(all_hosts) if het else (),
            host_prefix=None if het else f"{ctx.name}-{task}-",
            host_suffix="" if het else f".{ctx.name}",
            het_group=index if het else None,
            uid_label=JOB_NAME_LABEL,
            uid_is_name=True,
        )
        offset += nodes
        parts = pod_template.build(ctx, comp, index, topo, policy, volumes)
        replicas = nodes * array_count
        if len(all_hosts) > 1:
            names = [f"{ctx.name}-{task}-{i}.{ctx.name}" for i in range(replicas)]
            execution.fqdn_hostname(ctx, parts.template["spec"], names)
        if policy.active_deadline is not None:
            parts.template["spec"]["activeDeadlineSeconds"] = policy.active_deadline
        total += replicas
        tasks.append({"name": task, "replicas": replicas, "template": parts.template})
        for path, texts in parts.comments.items():
            for text in texts:
                manifest_notes.append((("spec", "tasks", index, "template", *path), text))
    if job.array is not None:
        item = ctx.option("array", job.array.spec)
        ctx.fidelity.approximated(
            item,
            f"{array_count} x {total // array_count} replicas indexed by "
            "VC_TASK_INDEX; the %limit throttle and per-task failure are not kept",
            ctx.line_of("array"),
        )
    execution.record_batch_host(ctx, len(all_hosts))
    min_available = total if job.array is None else total // array_count
    spec: dict[str, Any] = {"schedulerName": "volcano", "minAvailable": min_available}
    if policy.queue:
        spec["queue"] = policy.queue
    if policy.priority_class:
        spec["priorityClassName"] = policy.priority_class
    spec["maxRetry"] = policy.max_restarts
    on_evict = "RestartJob" if policy.ignore_disruptions else "AbortJob"
    spec["policies"] = [
        {"event": "PodEvicted", "action": on_evict},
        {"event": "PodFailed", "action": "AbortJob"},
    ]
    spec["plugins"] = {"svc": [], "env": []}
    spec["tasks"] = tasks
    meta = ctx.metadata()
    meta["labels"] = {**meta["labels"], **policy.labels}  # type: ignore[dict-item]
    if policy.annotations:
        meta["annotations"] = {**meta["annotations"], **policy.annotations}  # type: ignore[dict-item]
    manifest = Manifest({"apiVersion": API, "kind": "Job", "metadata": meta, "spec": spec})
    manifest.note(("spec", "minAvailable"), "gang scheduling: all pods start together, as a Slurm allocation")
    manifest.note(
        ("spec", "policies"), "an evicted pod restarts the whole job (Slurm requeue); a failed pod ends it"
    )
    if policy.suspend:
        manifest.note(("spec",), "--hold: Volcano has no suspend field; apply this file when the job may run")
    for path, text in manifest_notes:
        manifest.note(path, text)
    return [*pod_template.script_manifests(ctx), manifest], Workload(
        "vcjob", ctx.name, ctx.namespace, "Completed", "Failed", by_phase=".status.state.phase"
    )


__all__ = ["API", "build"]
