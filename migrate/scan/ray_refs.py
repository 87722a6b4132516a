"""The scan's last pass: a RayJob that runs on a RayCluster of another file gets that cluster's shape.

A RayJob with ``clusterSelector`` has no pods of its own: KubeRay submits its
entrypoint to an existing RayCluster, often defined in a file beside it. Read
alone, such a job looks like one small pod. Once every file is read, each such
RayJob takes the roles of the RayCluster it selects (in its namespace): the
head and worker groups, their images, devices and mounts, so that the plan
counts what the job really runs on and a translation starts that cluster.
KubeRay reads one key of the selector, ``ray.io/cluster``, as the cluster's name
(other keys are not matched against labels: without that key the RayJob fails).
A selector without it, or naming no scanned cluster of the job's namespace,
leaves the job as read, with a diagnostic.
"""

from __future__ import annotations

import json
from dataclasses import replace

from migrate import ir
from migrate.diagnostics import CODES, Diagnostic
from migrate.scan.results import FileResult
from migrate.vocab import Format, JobKind

_NAME_LABEL = "ray.io/cluster"
_SELECTOR = "clusterSelector"
_UNRESOLVED = "K8S-RAY-CLUSTER-UNRESOLVED"


def link(results: list[FileResult]) -> list[FileResult]:
    """The results with each RayJob on an existing cluster given that cluster's roles."""
    clusters = [
        job
        for result in results
        if result.format == Format.KUBERNETES
        for job in result.jobs
        if job.kind == JobKind.RAY_CLUSTER
    ]
    out = list(results)
    for index, result in enumerate(results):
        if result.format != Format.KUBERNETES or not any(_selector(job) for job in result.jobs):
            continue
        jobs: list[ir.Job] = []
        diagnostics = list(result.diagnostics)
        for job in result.jobs:
            selector = _selector(job)
            if selector is None:
                jobs.append(job)
                continue
            line = next((i.line for i in job.raw if i.key == _SELECTOR), job.source.line)
            found = [c for c in clusters if _selects(selector, job, c)]
            if len(found) == 1:
                jobs.append(_on(job, found[0]))
                continue
            jobs.append(job)
            shown = ",".join(f"{k}={v}" for k, v in selector)
            if _NAME_LABEL not in dict(selector):
                why = (
                    f"KubeRay finds the cluster by the {_NAME_LABEL} key alone and fails the job without it; "
                    f"name the cluster as {_NAME_LABEL}: <name>"
                )
            else:
                namespace = job.placement.namespace or "default"
                why = (
                    f"no scanned RayCluster of namespace {namespace} has that name; "
                    "the job's pods, devices and image are unknown"
                )
            diagnostics.append(
                Diagnostic(
                    _UNRESOLVED,
                    CODES[_UNRESOLVED][0],
                    f"clusterSelector {shown}: {why}",
                    path=result.path,
                    line=line,
                    job=job.id,
                )
            )
        out[index] = replace(result, jobs=jobs, diagnostics=diagnostics)
    return out


def takes_part(result: FileResult) -> bool:
    """Whether :func:`link` may take a RayCluster from the file or give one to its RayJobs."""
    return result.format == Format.KUBERNETES and any(
        job.kind == JobKind.RAY_CLUSTER or _selector(job) is not None for job in result.jobs
    )


def _selector(job: ir.Job) -> tuple[tuple[str, str], ...] | None:
    """The clusterSelector of a RayJob that has no cluster of its own."""
    if job.kind != JobKind.RAY_JOB or any(c.containers for c in job.components):
        return None
    for item in job.raw:
        if item.key == _SELECTOR:
            try:
                value = json.loads(item.value)
            except ValueError:
                return None
            if isinstance(value, dict) and value:
                return tuple(sorted((str(k), str(v)) for k, v in value.items()))
    return None


def _selects(selector: tuple[tuple[str, str], ...], job: ir.Job, cluster: ir.Job) -> bool:
    if (job.placement.namespace or "default") != (cluster.placement.namespace or "default"):
        return False
    return dict(selector).get(_NAME_LABEL) == cluster.name


def _on(job: ir.Job, cluster: ir.Job) -> ir.Job:
    """The RayJob with the cluster's roles, its Ray start parameters and its storage."""
    where = f"{cluster.source.path}:{cluster.source.line}"
    params = tuple(i for i in cluster.raw if i.key == "rayStartParams")
    storage = tuple(s for s in cluster.storage if s not in job.storage)
    note = ir.RawItem(
        "rayClusterOf",
        f"{cluster.name} ({where})",
        next((i.line for i in job.raw if i.key == _SELECTOR), None),
        "spec.clusterSelector",
    )
    return replace(
        job,
        components=cluster.components,
        raw=(*job.raw, *params, note),
        storage=(*job.storage, *storage),
    )


__all__ = ["link", "takes_part"]
