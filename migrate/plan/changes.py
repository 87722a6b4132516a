"""What has to change for a job to move, per direction: the changes of a recommendation.

Each change is a sentence for people and a kind for the code: the plan's
image steps and the image part of a unit's risk are chosen by kind, never by
the words of the sentence.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache

from migrate import ir, workloads
from migrate.graph.storage import StorageResolver
from migrate.plan.facts import ML_LAUNCHERS, JobFacts
from migrate.render import plural
from migrate.site.config import SiteConfig
from migrate.vocab import DependencyType, FilesystemOrigin, MountKind, Pattern


class ChangeKind(StrEnum):
    """What a change is about."""

    NEW_IMAGE = "new-image"  # an image to build or push before the first run
    IMAGE = "image"  # an image that exists, used or run another way
    WORKFLOW = "workflow"  # dependencies, submit chains, jobs that submit jobs
    SCHEDULING = "scheduling"  # gang start, rendezvous, ranks, arrays, components, quotas
    FAILURE = "failure"  # signals, requeue, preemption, failure rules
    PLACEMENT = "placement"  # whole nodes, topology, features, partitions and queues
    STORAGE = "storage"  # mounts and claims
    MONITORING = "monitoring"  # telemetry, metrics, notifications
    ENVIRONMENT = "environment"  # scheduler variables, secrets
    SERVICE = "service"  # serving and interactive objects, ports
    SCHEDULE = "schedule"  # cron schedules
    COEXISTENCE = "coexistence"  # what keeps running on both schedulers


IMAGE_KINDS = frozenset((ChangeKind.NEW_IMAGE, ChangeKind.IMAGE))


@dataclass(frozen=True, slots=True)
class Change:
    kind: ChangeKind
    text: str
    subject: str = ""  # what the change is about (an image), when the text says more


class _Changes(list[Change]):
    def add(self, kind: ChangeKind, text: str, subject: str = "") -> None:
        self.append(Change(kind, text, subject))


def kubernetes_changes(
    job: ir.Job, facts: JobFacts, pattern: Pattern, config: SiteConfig
) -> tuple[Change, ...]:
    if pattern == Pattern.ORCHESTRATION:
        # a wrapper runs on a login node; what moves is the chain it encodes
        text = "the submit chain becomes a JobSet with dependsOn or a workflow (Argo Workflows, JobFlow)"
        return (Change(ChangeKind.WORKFLOW, text),)
    out = _Changes()
    out += _image_changes(job, config)
    multi = facts.nodes > 1 or any(c.replicas > 1 for c in job.components)
    if multi:
        out.add(ChangeKind.SCHEDULING, "gang scheduling via Kueue or Volcano (all pods start together)")
    launchers = set(facts.launchers)
    if multi and launchers & ML_LAUNCHERS:
        out.add(
            ChangeKind.SCHEDULING,
            "rendezvous through a PyTorchJob or a JobSet headless Service instead of the Slurm node list",
        )
    if facts.mpi:
        out.add(
            ChangeKind.SCHEDULING,
            "MPI ranks started by an MPIJob (or Volcano's mpi plugin) instead of srun/mpirun",
        )
    elif multi and "srun" in launchers and not launchers & ML_LAUNCHERS:
        out.add(ChangeKind.SCHEDULING, "one pod per srun task (Indexed Job or JobSet) instead of job steps")
    if len(job.components) > 1:
        out.add(
            ChangeKind.SCHEDULING,
            f"heterogeneous job of {len(job.components)} components: a JobSet, one replicated job each",
        )
    if job.array is not None:
        throttle = f", parallelism {job.array.max_concurrent}" if job.array.max_concurrent else ""
        out.add(
            ChangeKind.SCHEDULING,
            f"array of {facts.array_size} becomes an Indexed Job (completions {facts.array_size}{throttle})",
        )
    if pattern == Pattern.SWEEP and not job.failure.requeue and job.failure.signal is None:
        out.add(
            ChangeKind.FAILURE, "trials must tolerate preemption under Kueue (checkpoint or keep them short)"
        )
    if job.failure.signal is not None:
        sig = job.failure.signal
        out.add(
            ChangeKind.FAILURE,
            "checkpoint on SIGTERM within terminationGracePeriodSeconds"
            f" instead of --signal={sig.name}@{sig.seconds_before}",
        )
    if job.failure.requeue:
        out.add(ChangeKind.FAILURE, "--requeue becomes backoffLimit and a podFailurePolicy")
    out += _dependency_changes_k8s(job)
    out += _placement_changes_k8s(job, facts, config)
    out += _storage_changes_k8s(job, config)
    if job.mail is not None:
        out.add(
            ChangeKind.MONITORING,
            "mail notifications have no Kubernetes analogue: alert from monitoring instead",
        )
    if any(r.licenses for r in (c.resources for c in job.components)):
        names = sorted({lic.name for c in job.components for lic in c.resources.licenses})
        out.add(ChangeKind.SCHEDULING, "licenses " + ", ".join(names) + " become a Kueue resource quota")
    kinds = sorted({h.kind for h in job.monitoring})
    if set(kinds) & {"nvidia-smi", "dcgm", "dcgmi"}:
        out.add(
            ChangeKind.MONITORING,
            "GPU telemetry from the DCGM exporter and Prometheus instead of per-job nvidia-smi/dcgmi",
        )
    if "node-exporter-textfile" in kinds:
        out.add(
            ChangeKind.MONITORING,
            "node-exporter textfile metrics need a pushgateway or a metrics endpoint from the pod",
        )
    if job.script is not None and job.script.slurm_vars:
        read_vars = ", ".join(sorted(job.script.slurm_vars)[:4])
        out.add(
            ChangeKind.ENVIRONMENT,
            f"the script reads {read_vars}: give the pod equivalents (downward API, JOB_COMPLETION_INDEX)",
        )
    if pattern == Pattern.SERVING:
        out.add(ChangeKind.SERVICE, "a Deployment with a Service (and an autoscaler) instead of a batch job")
    if pattern == Pattern.INTERACTIVE:
        out.add(ChangeKind.SERVICE, "a pod with a Service or a notebook controller instead of an allocation")
    if pattern == Pattern.MAINTENANCE:
        if job.schedule is not None:
            out.add(ChangeKind.SCHEDULE, f"schedule {job.schedule.cron} becomes a CronJob")
        out.add(
            ChangeKind.COEXISTENCE, "keep the Slurm copy while Slurm still runs jobs (upkeep is per cluster)"
        )
    return tuple(dict.fromkeys(out))


def _image_changes(job: ir.Job, config: SiteConfig) -> list[Change]:
    images = job.images()
    if images:
        out = _Changes()
        for image in images:
            if not (image.startswith(("/", "./")) or image.endswith((".sqsh", ".sif", ".simg"))):
                continue  # already a registry reference
            mapped_to = config.image_for(image)
            if mapped_to:
                out.add(
                    ChangeKind.IMAGE,
                    f"use registry image {mapped_to} for {image} (migrate.yaml images)",
                    image,
                )
            else:
                out.add(ChangeKind.NEW_IMAGE, f"push image {image} to a registry as an OCI image", image)
        return out
    software = list(job.modules) + [f"{kv.key} {kv.value}" for kv in job.software_envs]
    mapped = [config.image_for_module(m) for m in job.modules]
    mapped += [config.image_for_env(kv.key, kv.value) for kv in job.software_envs]
    known = sorted({m for m in mapped if m})
    if software:
        hint = f" (migrate.yaml maps: {', '.join(known)})" if known else ""
        # with an image migrate.yaml maps, nothing needs building
        kind = ChangeKind.IMAGE if known else ChangeKind.NEW_IMAGE
        return [Change(kind, f"needs a container image for {', '.join(software)}{hint}", ", ".join(software))]
    if config.defaults.image:
        return [
            Change(
                ChangeKind.IMAGE,
                f"runs on the host: use the default image {config.defaults.image}",
                config.defaults.image,
            )
        ]
    return [
        Change(ChangeKind.NEW_IMAGE, "runs on the host with no container: needs a container image", "(host)")
    ]


def _dependency_changes_k8s(job: ir.Job) -> list[Change]:
    out = _Changes()
    kinds = {d.type for d in job.dependencies}
    if kinds - {DependencyType.SINGLETON, DependencyType.DEPENDS_ON}:
        out.add(
            ChangeKind.WORKFLOW,
            "dependency chain needs JobSet dependsOn or a workflow engine (Argo, Volcano JobFlow)",
        )
    if DependencyType.AFTERCORR in kinds:
        out.add(
            ChangeKind.WORKFLOW,
            "aftercorr (index-by-index) has no Kubernetes analogue: merge the two arrays or use a workflow",
        )
    if DependencyType.SINGLETON in kinds:
        out.add(
            ChangeKind.WORKFLOW,
            "singleton has no Kubernetes analogue: serialise through a one-at-a-time queue or a workflow",
        )
    if job.submits:
        out.add(ChangeKind.WORKFLOW, "jobs submitted from inside the script become workflow steps")
    return out


def _placement_changes_k8s(job: ir.Job, facts: JobFacts, config: SiteConfig) -> list[Change]:
    out = _Changes()
    if any(c.resources.exclusive for c in job.components):
        out.add(
            ChangeKind.PLACEMENT,
            "exclusive nodes: request whole nodes (all GPUs and CPUs) or a dedicated node pool",
        )
    if job.placement.topology or any("exclusive-topology" in kv.key for kv in job.annotations):
        out.add(
            ChangeKind.PLACEMENT,
            "topology-aware placement via Kueue TAS or the JobSet exclusive-topology annotation",
        )
    constraints = sorted({c.resources.constraint for c in job.components if c.resources.constraint})
    for constraint in constraints:
        out.add(ChangeKind.PLACEMENT, f"node features {constraint!r} become a node selector or affinity")
    for partition in job.placement.partitions:
        part = config.partition(partition)
        if part is None or (part.queue is None and not part.node_selector):
            out.add(
                ChangeKind.PLACEMENT, f"partition {partition} has no queue or node selector in migrate.yaml"
            )
    if job.placement.reservation:
        out.add(
            ChangeKind.PLACEMENT,
            f"reservation {job.placement.reservation} has no analogue: a tainted node pool or Kueue quota",
        )
    return out


@lru_cache(maxsize=8)
def _resolver(config: SiteConfig) -> StorageResolver:
    return StorageResolver(config)


def _storage_changes_k8s(job: ir.Job, config: SiteConfig) -> list[Change]:
    resolver = _resolver(config)
    out = _Changes()
    seen: set[str] = set()
    for loc in resolver.locations(job):
        fs = loc.filesystem
        if fs.name in seen or fs.origin == FilesystemOrigin.PVC:
            continue
        seen.add(fs.name)
        if fs.claims:
            out.add(ChangeKind.STORAGE, f"mount {fs.name} through PVC {', '.join(fs.claims)}")
        else:
            out.add(ChangeKind.STORAGE, f"make {fs.name} mountable in pods (no PVC for it in migrate.yaml)")
    return out


def slurm_changes(job: ir.Job, facts: JobFacts, pattern: Pattern, config: SiteConfig) -> tuple[Change, ...]:
    out = _Changes()
    for image in job.images():
        out.add(ChangeKind.IMAGE, f"run image {image} through pyxis/enroot or Apptainer")
    claims = sorted(
        {
            m.source
            for c in job.components
            for ctr in c.containers
            for m in ctr.mounts
            if m.kind == MountKind.PVC and m.source
        }
    )
    for claim in claims:
        fs = config.filesystem_for_claim(claim)
        if fs is not None:
            out.add(ChangeKind.STORAGE, f"claim {claim} is {fs.prefix} on Slurm nodes")
        else:
            out.add(ChangeKind.STORAGE, f"claim {claim} has no Slurm path in migrate.yaml filesystems")
    secrets = sorted(
        {v.secret.name for v in job.environment if v.secret}
        | {v.secret.name for c in job.components for v in c.environment if v.secret}
    )
    if secrets:
        out.add(
            ChangeKind.ENVIRONMENT,
            f"secrets {', '.join(secrets)} must reach the job another way (a file readable only by its user)",
        )
    replicas = sum(c.replicas for c in job.components)
    if replicas > 1 and pattern != Pattern.SWEEP:
        out.add(
            ChangeKind.SCHEDULING,
            f"{replicas} pods become one allocation of {plural(facts.nodes, 'node')}, started with srun",
        )
    if set(facts.launchers) & ML_LAUNCHERS and replicas > 1:
        out.add(ChangeKind.SCHEDULING, "rendezvous from the Slurm node list instead of a master Service")
    if job.array is not None:
        out.add(
            ChangeKind.SCHEDULING,
            f"Indexed Job of {facts.array_size} becomes a job array (--array=0-{facts.array_size - 1})",
        )
    if job.schedule is not None:
        out.add(ChangeKind.SCHEDULE, f"schedule {job.schedule.cron} becomes a scrontab entry")
    kinds = {d.type for d in job.dependencies}
    if DependencyType.DEPENDS_ON in kinds:
        out.add(
            ChangeKind.WORKFLOW,
            "dependsOn becomes --dependency=afterok between sbatch jobs (or steps of one script)",
        )
    if job.placement.queue:
        partition = config.partition_for_queue(job.placement.queue)
        if partition is None:
            out.add(ChangeKind.PLACEMENT, f"queue {job.placement.queue} has no partition in migrate.yaml")
    if job.placement.tolerations or job.placement.affinity:
        out.add(ChangeKind.PLACEMENT, "tolerations and affinity become a partition or --constraint")
    if job.failure.rules:
        out.add(ChangeKind.FAILURE, "pod failure rules become --requeue and a retry wrapper")
    if job.services and pattern != Pattern.SERVING:
        out.add(
            ChangeKind.SERVICE,
            "services " + ", ".join(s.name for s in job.services) + " need a port on the head node",
        )
    if pattern == Pattern.BATCH_INFERENCE and workloads.launch_of(facts.kind) == workloads.Launch.RAY:
        out.add(ChangeKind.SCHEDULING, "start the Ray head and workers inside the allocation")
    if pattern == Pattern.INTERACTIVE:
        out.add(ChangeKind.SERVICE, "an interactive allocation (salloc or a batch job with an SSH tunnel)")
    if pattern == Pattern.MAINTENANCE:
        out.add(
            ChangeKind.COEXISTENCE,
            "keep the Kubernetes copy while Kubernetes still runs jobs (upkeep is per cluster)",
        )
    return tuple(dict.fromkeys(out))


__all__ = ["IMAGE_KINDS", "Change", "ChangeKind", "kubernetes_changes", "slurm_changes"]
