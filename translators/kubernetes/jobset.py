"""JobSet (jobset.x-k8s.io/v1alpha2): multi-node and heterogeneous jobs.

One replicated job per component (hetjob component), with one child Job per
node (``replicas = nodes``, one pod each), so that a pod's node rank is its
``jobset.sigs.k8s.io/job-index`` label and ``--exclusive`` can use the
``exclusive-topology`` annotation per node. DNS host names are enabled: pod
``<jobset>-<rjob>-<i>-0.<jobset>`` is node ``i``. ``--requeue`` gives the
JobSet a few whole-set restarts (``failurePolicy.maxRestarts``).
"""

from __future__ import annotations

from typing import Any

from . import execution, pod_template, slurmenv
from .batchjob import failure_policy
from .job_policy import JobPolicy
from .storage import Volume
from .translation_context import Context, Workload
from .yamlemit import Manifest

API = "jobset.x-k8s.io/v1alpha2"
JOB_INDEX = "jobset.sigs.k8s.io/job-index"
JOBSET_UID = "jobset.sigs.k8s.io/jobset-uid"
EXCLUSIVE = "alpha.jobset.sigs.k8s.io/exclusive-topology"
INDEX_ENV = "MIGRATE_JOBSET_INDEX"


def rjob_names(ctx: Context) -> list[str]:
    comps = ctx.job.components
    if len(comps) == 1:
        return ["node"]
    return [f"het{i}" for i in range(len(comps))]


def hosts(ctx: Context) -> list[str]:
    out: list[str] = []
    for comp, rjob in zip(ctx.job.components, rjob_names(ctx), strict=True):
        for i in range(comp.resources.computed_nodes() * comp.replicas):
            out.append(f"{ctx.name}-{rjob}-{i}-0.{ctx.name}")
    return out


def build(
    ctx: Context, policy: JobPolicy, volumes: list[Volume], kueue: bool = False
) -> tuple[list[Manifest], Workload]:
    job = ctx.job
    het = len(job.components) > 1
    all_hosts = hosts(ctx)
    offset = 0
    replicated: list[dict[str, Any]] = []
    notes: list[tuple[tuple[str | int, ...], str]] = []
    for index, (comp, rjob) in enumerate(zip(job.components, rjob_names(ctx), strict=True)):
        nodes = comp.resources.computed_nodes() * comp.replicas
        topo = slurmenv.Topology(
            index_from=INDEX_ENV,
            index_env=(
                {
                    "name": INDEX_ENV,
                    "valueFrom": {"fieldRef": {"fieldPath": f"metadata.labels['{JOB_INDEX}']"}},
                },
            ),
            nodes=nodes,
            node_offset=offset,
            hosts=tuple(all_hosts) if het else (),
            host_prefix=None if het else f"{ctx.name}-{rjob}-",
            host_suffix="" if het else f"-0.{ctx.name}",
            het_group=index if het else None,
            uid_label=JOBSET_UID,
        )
        offset += nodes
        parts = pod_template.build(ctx, comp, index, topo, policy, volumes)
        execution.fqdn_hostname(ctx, parts.template["spec"], all_hosts)
        child: dict[str, Any] = {
            "parallelism": 1,
            "completions": 1,
            "backoffLimit": policy.backoff_limit,
            "podFailurePolicy": failure_policy(policy),
        }
        if policy.active_deadline is not None:
            child["activeDeadlineSeconds"] = policy.active_deadline
        child["template"] = parts.template
        template: dict[str, Any] = {}
        if parts.exclusive_topology:
            template["metadata"] = {"annotations": {EXCLUSIVE: parts.exclusive_topology}}
            notes.append(
                (
                    ("spec", "replicatedJobs", index, "template", "metadata"),
                    "--exclusive: one child Job (one node's pod) per node, no other JobSet's pods there",
                )
            )
        template["spec"] = child
        replicated.append({"name": rjob, "replicas": nodes, "template": template})
        base = ("spec", "replicatedJobs", index, "template", "spec", "template")
        for path, texts in parts.comments.items():
            for text in texts:
                notes.append(((*base, *path), text))
    execution.record_batch_host(ctx, len(all_hosts), "jobset")
    spec: dict[str, Any] = {
        "network": {"enableDNSHostnames": True, "subdomain": ctx.name},
        "failurePolicy": {"maxRestarts": policy.max_restarts},
    }
    if kueue or policy.suspend:
        spec["suspend"] = True
    spec["replicatedJobs"] = replicated
    meta = ctx.metadata()
    meta["labels"] = {**meta["labels"], **policy.labels}  # type: ignore[dict-item]
    if policy.annotations:
        meta["annotations"] = {**meta["annotations"], **policy.annotations}  # type: ignore[dict-item]
    manifest = Manifest({"apiVersion": API, "kind": "JobSet", "metadata": meta, "spec": spec})
    manifest.note(("spec", "network"), f"pods reach each other as {ctx.name}-<rjob>-<i>-0.{ctx.name}")
    if ctx.job.failure.requeue:
        manifest.note(
            ("spec", "failurePolicy"),
            "--requeue: the whole JobSet restarts at most this often; resume from the last checkpoint",
        )
    for path, text in notes:
        manifest.note(path, text)
    if het:
        ctx.fidelity.mapped(
            "hetjob",
            f"{len(job.components)} replicated jobs ({', '.join(rjob_names(ctx))}); "
            "srun --het-group steps run in the matching pods",
        )
    return [pod_template.script_configmap(ctx), manifest], Workload(
        "jobset", ctx.name, ctx.namespace, "Completed", "Failed"
    )


__all__ = ["API", "build", "hosts", "rjob_names"]
