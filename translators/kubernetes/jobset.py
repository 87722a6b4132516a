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

from migrate.translators.job_variables import POD

from . import execution, pod_template, slurmenv, submit_dir
from .batchjob import failure_policy
from .job_policy import JobPolicy
from .storage import Volume
from .translation_context import Context, Workload
from .yamlemit import Manifest

API = "jobset.x-k8s.io/v1alpha2"
JOB_INDEX = "jobset.sigs.k8s.io/job-index"
JOBSET_UID = "jobset.sigs.k8s.io/jobset-uid"
# The JobSet's restarts so far, on each pod's labels and annotations: a restart is the job requeued.
RESTART_ATTEMPT = "jobset.sigs.k8s.io/restart-attempt"
EXCLUSIVE = "alpha.jobset.sigs.k8s.io/exclusive-topology"
INDEX_ENV = POD.JOBSET_INDEX.name
PREPARE = "prepare"  # the replicated job of a native translation's once-only statements


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
            restarts_annotation=RESTART_ATTEMPT,
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
    if ctx.native is None:
        execution.record_batch_host(ctx, len(all_hosts))
    else:
        _native_prepare(ctx, replicated, policy, notes)
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
    return [*pod_template.script_manifests(ctx), manifest], Workload(
        "jobset", ctx.name, ctx.namespace, "Completed", "Failed"
    )


def _native_prepare(
    ctx: Context,
    replicated: list[dict[str, Any]],
    policy: JobPolicy,
    notes: list[tuple[tuple[str | int, ...], str]],
) -> None:
    """The once-only statements as a replicated job of one pod that the nodes' job waits for."""
    node_pod = replicated[0]["template"]["spec"]["template"]
    init = ctx.native.init_container(node_pod["spec"]["containers"][0], submit_dir.start(ctx))
    if init is None:
        return
    init["resources"] = {"requests": {"cpu": "1", "memory": "2Gi"}, "limits": {"cpu": "1", "memory": "2Gi"}}
    spec = {k: v for k, v in node_pod["spec"].items() if k not in ("nodeSelector", "affinity", "tolerations")}
    spec["containers"] = [init]
    spec["volumes"] = [v for v in spec.get("volumes", ()) if v.get("name") != "dshm"]
    spec.pop("setHostnameAsFQDN", None)
    child = {
        "parallelism": 1,
        "completions": 1,
        "backoffLimit": policy.backoff_limit,
        "template": {"metadata": node_pod["metadata"], "spec": spec},
    }
    # JobSet wants a replicated job's dependencies listed before it
    replicated.insert(0, {"name": PREPARE, "replicas": 1, "template": {"spec": child}})
    replicated[1]["dependsOn"] = [{"name": PREPARE, "status": "Complete"}]
    notes[:] = [
        ((*path[:2], int(path[2]) + 1, *path[3:]) if path[:2] == ("spec", "replicatedJobs") else path, text)
        for path, text in notes
    ]
    notes.append((("spec", "replicatedJobs", 0), "the script's once-only statements, before the nodes start"))


__all__ = ["API", "build", "hosts", "rjob_names"]
