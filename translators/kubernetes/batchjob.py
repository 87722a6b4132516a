"""batch/v1 Job: single pods, Indexed Jobs for arrays and multi-node jobs, plus a headless Service.

An array is an Indexed Job whose completion index ``i`` maps to the Slurm
array index through ``MIGRATE_ARRAY_RANGES`` (stepped and sparse arrays
included); ``%N`` becomes ``parallelism``. A multi-node job is an Indexed Job
with one pod per node, ``completions = parallelism = nodes``, and a headless
Service named like the Job that the pods use as ``subdomain``, so that pod
``<job>-<i>`` resolves as ``<job>-<i>.<job>``. An array of multi-node jobs
uses ``nodes`` consecutive indices per array task.
"""

from __future__ import annotations

from typing import Any

from migrate.translators.job_variables import POD

from . import execution, pod_template, slurmenv, submit_dir
from .job_policy import JobPolicy
from .storage import Volume
from .translation_context import Context, Workload
from .yamlemit import Manifest, Path

INDEX_ENV = "JOB_COMPLETION_INDEX"
FAILURE_COUNT = "batch.kubernetes.io/job-index-failure-count"


def topology(ctx: Context, indexed: bool, nodes: int, srun_mode: str = "local") -> slurmenv.Topology:
    if not indexed:
        return slurmenv.Topology(nodes=1, srun_mode=srun_mode)
    return slurmenv.Topology(
        index_from=INDEX_ENV,
        nodes=nodes,
        host_prefix=f"{ctx.name}-" if nodes > 1 else None,
        host_suffix=f".{ctx.name}" if nodes > 1 else "",
        restarts_annotation=FAILURE_COUNT if ctx.job.array is not None else None,
        srun_mode=srun_mode,
    )


def failure_policy(policy: JobPolicy) -> dict[str, Any]:
    action = "Ignore" if policy.ignore_disruptions else "FailJob"
    return {
        "rules": [{"action": action, "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]}]
    }


def job_spec(
    ctx: Context, policy: JobPolicy, volumes: list[Volume], suspend: bool = False
) -> tuple[dict[str, Any], dict[Path, list[str]]]:
    """The spec of the Job (also a CronJob's jobTemplate), with comments relative to it."""
    job = ctx.job
    comp = job.components[0]
    nodes = comp.resources.computed_nodes() * comp.replicas
    array = job.array
    indexed = array is not None or nodes > 1
    topo = topology(ctx, indexed, nodes)
    parts = pod_template.build(ctx, comp, 0, topo, policy, volumes, subdomain=ctx.name if nodes > 1 else None)
    comments: dict[Path, list[str]] = {}
    spec: dict[str, Any] = {}
    if indexed:
        count = slurmenv.array_count(array) if array is not None else 1
        concurrent = array.max_concurrent if array is not None and array.max_concurrent else count
        spec["completionMode"] = "Indexed"
        spec["completions"] = count * nodes
        spec["parallelism"] = min(concurrent, count) * nodes
        if array is not None:
            item = ctx.option("array", array.spec)
            line = ctx.line_of("array")
            remap = slurmenv.array_ranges(array) != [(0, 1, count)]
            how = "Indexed Job, completions " + str(count)
            if array.max_concurrent:
                how += f", parallelism {array.max_concurrent} from %{array.max_concurrent}"
            if remap:
                how += (
                    f"; the entrypoint maps JOB_COMPLETION_INDEX to the Slurm index ({POD.ARRAY_RANGES.name})"
                )
                comments[("completions",)] = [
                    f"--array={array.spec}: index i runs Slurm task "
                    f"{POD.ARRAY_RANGES.name}[i] (see the entrypoint)"
                ]
            ctx.fidelity.mapped(item, how, line)
            if nodes > 1:
                comments[("parallelism",)] = [f"{nodes} consecutive indices form one array task"]
    if array is not None:
        spec["backoffLimitPerIndex"] = policy.backoff_limit  # array tasks fail on their own, as in Slurm
    else:
        spec["backoffLimit"] = policy.backoff_limit
    spec["podFailurePolicy"] = failure_policy(policy)
    for text in policy.notes.get("podFailurePolicy", ()):
        comments.setdefault(("podFailurePolicy",), []).append(text)
    template = parts.template
    if ctx.native is not None:
        init = ctx.native.init_container(template["spec"]["containers"][0], submit_dir.start(ctx))
        if init is not None:
            template["spec"]["initContainers"] = [init]
    if nodes > 1 and ctx.native is None:
        count = slurmenv.array_count(array) if array is not None else 1
        names = [f"{ctx.name}-{i}.{ctx.name}" for i in range(count * nodes)]
        execution.fqdn_hostname(ctx, template["spec"], names)
        execution.record_batch_host(ctx, nodes)
    if policy.active_deadline is not None:
        if array is not None:
            # --time bounds each array task, not the whole array
            template["spec"]["activeDeadlineSeconds"] = policy.active_deadline
        else:
            spec["activeDeadlineSeconds"] = policy.active_deadline
    if suspend or policy.suspend:
        spec["suspend"] = True
    spec["template"] = template
    for path, texts in parts.comments.items():
        comments.setdefault(("template", *path), []).extend(texts)
    if nodes > 1:
        comments.setdefault(("completions",), []).append(
            f"one pod per Slurm node; pods reach each other as {ctx.name}-<i>.{ctx.name}"
        )
    return spec, comments


def headless_service(ctx: Context, selector: dict[str, str]) -> Manifest:
    body = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": ctx.metadata(),
        "spec": {"clusterIP": "None", "publishNotReadyAddresses": True, "selector": selector},
    }
    manifest = Manifest(body)
    manifest.note(("spec",), "headless: gives every pod a stable DNS name for the host list and rendezvous")
    return manifest


def build(
    ctx: Context, policy: JobPolicy, volumes: list[Volume], kueue: bool = False
) -> tuple[list[Manifest], Workload]:
    spec, comments = job_spec(ctx, policy, volumes, suspend=kueue)
    meta = ctx.metadata()
    meta["labels"] = {**meta["labels"], **policy.labels}  # type: ignore[dict-item]
    if policy.annotations:
        meta["annotations"] = {**meta["annotations"], **policy.annotations}  # type: ignore[dict-item]
    job = Manifest({"apiVersion": "batch/v1", "kind": "Job", "metadata": meta, "spec": spec})
    for path, texts in comments.items():
        for text in texts:
            job.note(("spec", *path), text)
    out = pod_template.script_manifests(ctx)
    comp = ctx.job.components[0]
    if comp.resources.computed_nodes() * comp.replicas > 1:
        out.append(headless_service(ctx, {"batch.kubernetes.io/job-name": ctx.name}))
        ctx.fidelity.approximated(
            "multi-node job",
            "an Indexed Job starts its pods independently (no gang "
            "scheduling); use --flavor jobset, volcano or kueue for "
            "all-or-nothing starts",
        )
    out.append(job)
    return out, Workload("job", ctx.name, ctx.namespace, "Complete", "Failed")


__all__ = ["INDEX_ENV", "build", "failure_policy", "headless_service", "job_spec", "topology"]
