"""What happens on Slurm to what the Kubernetes reader kept as raw items.

One row per raw-item key: the fidelity status and the reason written into
``translation.json``. Every key of the Kubernetes reader's and the shell
analysis' registries has a row (a test checks it); the other rows are
manifest fields no reader looks at, which keep their own names. A field
this table does not know is an UNREAD_FIELD: dropped, so that it shows in
the fidelity log instead of vanishing.
"""

from __future__ import annotations

from collections.abc import Callable

from migrate import ir
from migrate.translators.argo import depends as argo_depends
from migrate.translators.kubernetes.raw_keys import pvc_claim
from migrate.translators.shell.raw_keys import CONDA_TOOLS, CONDA_VERBS
from migrate.vocab import FidelityStatus

from .context import Context
from .kube_groups import RESTART_ORIGIN

Fate = tuple[FidelityStatus, str]


def _claim(ctx: Context, item: ir.RawItem) -> Fate:
    """A PersistentVolumeClaim is the site's file system when migrate.yaml says so (filesystems[].pvc)."""
    claim = pvc_claim(item.value)
    fs = ctx.config.filesystem_for_claim(claim) if ctx.config is not None else None
    if fs is None:
        return (
            FidelityStatus.DROPPED,
            f"no file system of the site config is claim {claim} (filesystems[].pvc)",
        )
    return FidelityStatus.MAPPED, f"claim {claim} is {fs.label} ({fs.kind}), already on the Slurm nodes"


def _nearest_dependency(ctx: Context, item: ir.RawItem) -> Fate:
    term = item.value.rpartition(" -> ")[0]
    why = argo_depends.why_approximated(term) or "no Slurm type says it exactly"
    return FidelityStatus.APPROXIMATED, f"submit.sh gives the script the nearest --dependency type: {why}"


UNREAD_FIELD: Fate = (FidelityStatus.DROPPED, "no Slurm counterpart")


def _lws_restart(ctx: Context, item: ir.RawItem) -> Fate:
    """A LeaderWorkerSet's group restart policy (a pod's own restartPolicy is read elsewhere)."""
    if item.origin != RESTART_ORIGIN:
        return UNREAD_FIELD
    if item.value in ("RecreateGroupOnPodRestart", "RecreateGroupAfterStart"):
        return (
            FidelityStatus.APPROXIMATED,
            "a process that fails ends every task of its group (srun --kill-on-bad-exit=1), as the "
            "controller recreates the whole group; Slurm does not start the group again",
        )
    return (
        FidelityStatus.APPROXIMATED,
        "the controller restarts a failed pod alone; on Slurm the group's other tasks go on and the "
        "failed one is not started again",
    )


def _lws_startup(ctx: Context, item: ir.RawItem) -> Fate:
    if item.value == "LeaderReady":
        return (
            FidelityStatus.APPROXIMATED,
            "the workers' tasks start with the leader's, not once the leader pod is ready: a worker "
            "that needs the leader up must wait for it",
        )
    return FidelityStatus.MAPPED, "the workers' tasks start with the leader's, in the same srun step"


_IN_THE_COMMAND = "kept in the command, which runs unchanged on Slurm"

RAW_FIELDS: dict[str, Fate | Callable[[Context, ir.RawItem], Fate]] = {
    # the Argo reader's keys (translators/argo/raw_keys.py)
    "argo-task": (FidelityStatus.MAPPED, "one batch script per task; submit.sh chains the workflow's tasks"),
    "argo-depends": (FidelityStatus.MAPPED, "submit.sh gives the script this --dependency type"),
    "argo-depends-approximated": _nearest_dependency,
    "argo-when": (FidelityStatus.DROPPED, "Slurm cannot skip a job on a condition: the script always runs"),
    "argo-schedule": (FidelityStatus.DROPPED, "one scrontab entry per job: it runs on the first schedule"),
    "argo-item-unfilled": (FidelityStatus.DROPPED, "the placeholder stays as written in every array task"),
    # the Katib reader's keys (translators/katib/raw_keys.py)
    "katib-placeholder-unfilled": (
        FidelityStatus.DROPPED,
        "the placeholder stays as written in every array task",
    ),
    "katib-metrics-collector": (
        FidelityStatus.DROPPED,
        "no sidecar collects the trials' metrics on Slurm: they stay in each task's output or files",
    ),
    "katib-early-stopping": (
        FidelityStatus.DROPPED,
        "Slurm does not stop weak array tasks early: every trial runs to its end",
    ),
    "katib-success-condition": (
        FidelityStatus.APPROXIMATED,
        "an array task succeeds when its script exits 0, not by a condition on the trial's status",
    ),
    "katib-resume-policy": (
        FidelityStatus.DROPPED,
        "a finished array is not resumed: submitting the script again runs the trials again",
    ),
    "katib-nas": (
        FidelityStatus.DROPPED,
        "a neural architecture search needs Katib's suggestion service to build each trial's model",
    ),
    "katib-primary": (
        FidelityStatus.MAPPED,
        "every task's output is kept, the primary container's with the rest",
    ),
    # the Kubernetes reader's keys (translators/kubernetes/raw_keys.py)
    "pvc": _claim,
    "completions": (FidelityStatus.APPROXIMATED, "each completion is an array task"),
    "elastic-replicas": (
        FidelityStatus.APPROXIMATED,
        "the replica count is used; Slurm allocations do not grow or shrink",
    ),
    "gang-size": (FidelityStatus.MAPPED, "a Slurm allocation starts all its nodes together"),
    "max-retry": (
        FidelityStatus.APPROXIMATED,
        "--requeue re-runs the job after node failures, not after a failed program",
    ),
    "dependsOn": (FidelityStatus.MAPPED, "submit.sh chains the waiting part with --dependency"),
    "time-limits": (FidelityStatus.APPROXIMATED, "the tightest deadline is the time limit"),
    "priorityClassName": (
        FidelityStatus.DROPPED,
        "pod priority classes have no Slurm counterpart; use --qos",
    ),
    "ttlSecondsAfterFinished": (FidelityStatus.MAPPED, "Slurm forgets finished jobs by itself (MinJobAge)"),
    "jobflow": (FidelityStatus.MAPPED, "submit.sh chains the flow's jobs with --dependency=afterok"),
    "resources": (
        FidelityStatus.APPROXIMATED,
        "requests and limits are one number on Slurm: the CPU request and the memory limit",
    ),
    "nprocPerNode": (
        FidelityStatus.APPROXIMATED,
        "resolved when the job starts: torchrun's --nproc_per_node",
    ),
    "nProcPerNode": (
        FidelityStatus.APPROXIMATED,
        "resolved when the job starts: torchrun's --nproc_per_node",
    ),
    "numProcPerNode": (
        FidelityStatus.APPROXIMATED,
        "resolved when the job starts: torchrun's --nproc_per_node",
    ),
    "slotsPerWorker": (
        FidelityStatus.APPROXIMATED,
        "resolved when the job starts: the tasks srun starts per node",
    ),
    "kueueFlavor": (
        FidelityStatus.MAPPED,
        "the flavor's node labels name the partition, as Kueue's admission puts them on the pods",
    ),
    # PyTorchJob elasticPolicy: torchrun on Slurm runs a c10d rendezvous on a fixed set of nodes
    "rdzvBackend": (
        FidelityStatus.APPROXIMATED,
        "torchrun gets a c10d rendezvous on the allocation's first node",
    ),
    "minReplicas": (
        FidelityStatus.APPROXIMATED,
        "the pods are the allocation's: a Slurm job does not grow or shrink between bounds",
    ),
    "maxReplicas": (
        FidelityStatus.APPROXIMATED,
        "the pods are the allocation's: a Slurm job does not grow or shrink between bounds",
    ),
    "maxRestarts": (
        FidelityStatus.APPROXIMATED,
        "failed programs are re-run by the script (backoff limit); torchrun keeps its default restarts",
    ),
    "clusterSelector": (
        FidelityStatus.APPROXIMATED,
        "a standing RayCluster: the job starts the one the selector names (when it was scanned) in its own "
        "allocation, or none",
    ),
    "torchx": (
        FidelityStatus.MAPPED,
        "the script runs what torchx would submit to Kubernetes: its pods, sizes and torchrun command",
    ),
    "rayClusterOf": (
        FidelityStatus.APPROXIMATED,
        "the selected RayCluster is started inside the job's own allocation, with the cluster's roles, "
        "images and mounts; the standing cluster is not shared",
    ),
    "kubectl.kubernetes.io/last-applied-configuration": (
        FidelityStatus.MAPPED,
        "kubectl's copy of the object, which is what is translated",
    ),
    # the shell analysis' keys (translators/shell/raw_keys.py): the command runs as it did in the pod
    "module": (FidelityStatus.APPROXIMATED, _IN_THE_COMMAND),
    "spack": (FidelityStatus.APPROXIMATED, _IN_THE_COMMAND),
    "source": (FidelityStatus.APPROXIMATED, _IN_THE_COMMAND),
    "pip-install": (FidelityStatus.APPROXIMATED, _IN_THE_COMMAND),
    "ulimit": (FidelityStatus.APPROXIMATED, _IN_THE_COMMAND),
    **{
        f"{tool}-{verb}": (FidelityStatus.APPROXIMATED, _IN_THE_COMMAND)
        for tool in CONDA_TOOLS
        for verb in CONDA_VERBS
    },
    # manifest fields no reader looks at, by their own names
    "successPolicy": (FidelityStatus.DROPPED, "Slurm has no early success: every array task runs to its end"),
    "serviceAccountName": (
        FidelityStatus.DROPPED,
        "the job runs as the submitting user; there are no service accounts",
    ),
    "automountServiceAccountToken": (FidelityStatus.DROPPED, "there is no API token to mount on Slurm"),
    "subdomain": (FidelityStatus.MAPPED, "nodes find each other by host name (scontrol show hostnames)"),
    "hostname": (FidelityStatus.DROPPED, "node host names are the cluster's"),
    "topologySpreadConstraints": (
        FidelityStatus.APPROXIMATED,
        "Slurm spreads array tasks and nodes by its own policy",
    ),
    "podAntiAffinity": (
        FidelityStatus.APPROXIMATED,
        "one pod per node: each node of the job runs one task group",
    ),
    "podAffinity": (FidelityStatus.DROPPED, "no co-location with other jobs"),
    "defaultMode": (FidelityStatus.MAPPED, "written files are made executable when they look like scripts"),
    "type": (FidelityStatus.MAPPED, "the host path is used as it is"),
    "sizeLimit": (FidelityStatus.DROPPED, "no size limit on scratch folders or /dev/shm"),
    "plugins": (
        FidelityStatus.MAPPED,
        "Slurm gives every task the node list and its rank (ssh/svc/env plugins not needed)",
    ),
    "readinessProbe": (FidelityStatus.DROPPED, "no probes on Slurm"),
    "livenessProbe": (FidelityStatus.DROPPED, "no probes on Slurm: a hung program runs until the time limit"),
    "startupProbe": (FidelityStatus.DROPPED, "no probes on Slurm"),
    "terminationGracePeriodSeconds": (
        FidelityStatus.APPROXIMATED,
        "Slurm's KillWait decides the grace period",
    ),
    "startingDeadlineSeconds": (FidelityStatus.DROPPED, "scrontab starts late runs whenever it can"),
    "successfulJobsHistoryLimit": (FidelityStatus.DROPPED, "Slurm keeps job records by its own settings"),
    "failedJobsHistoryLimit": (FidelityStatus.DROPPED, "Slurm keeps job records by its own settings"),
    "cleanPodPolicy": (FidelityStatus.MAPPED, "Slurm ends every step of the job when it finishes"),
    "mpiImplementation": (
        FidelityStatus.APPROXIMATED,
        "srun starts the ranks through PMIx, whichever MPI the image has",
    ),
    "launcherCreationPolicy": (FidelityStatus.MAPPED, "srun starts the ranks once every node is allocated"),
    "sshAuthMountPath": (FidelityStatus.MAPPED, "srun needs no ssh between nodes"),
    "runtimeRef": (
        FidelityStatus.APPROXIMATED,
        "the training runtime is replaced by srun torchrun with a c10d rendezvous",
    ),
    "rayVersion": (FidelityStatus.DROPPED, "the image's Ray is used"),
    "rayStartParams": (FidelityStatus.APPROXIMATED, "passed to ray start as options"),
    "submissionMode": (FidelityStatus.MAPPED, "the entrypoint runs on the head node once the cluster is up"),
    "shutdownAfterJobFinishes": (FidelityStatus.MAPPED, "the Ray cluster ends with the Slurm job"),
    "runtimeEnvYAML": (
        FidelityStatus.DROPPED,
        "Ray runtime environments are not prepared; the image must hold the code",
    ),
    "hostNetwork": (FidelityStatus.MAPPED, "Slurm jobs use the node's network"),
    "nodeName": (
        FidelityStatus.APPROXIMATED,
        "a pod pinned to a node: use --nodelist with the Slurm node name",
    ),
    "securityContext": (
        FidelityStatus.DROPPED,
        "jobs run as the submitting user; no privileges or capabilities",
    ),
    "imagePullSecrets": (
        FidelityStatus.APPROXIMATED,
        "registry credentials come from enroot/apptainer configuration",
    ),
    "imagePullPolicy": (FidelityStatus.DROPPED, "the container runtime caches images by its own rules"),
    "revisionHistoryLimit": (FidelityStatus.DROPPED, "serving objects are not translated"),
    "strategy": (FidelityStatus.DROPPED, "serving objects are not translated"),
    "serviceName": (FidelityStatus.DROPPED, "serving objects are not translated"),
    "podManagementPolicy": (FidelityStatus.DROPPED, "serving objects are not translated"),
    "spec": (FidelityStatus.DROPPED, "volume claim templates are not translated"),
    "activeDeadlineSeconds": (FidelityStatus.MAPPED, "--time"),
    "dnsPolicy": (FidelityStatus.DROPPED, "the node's DNS is used"),
    "lifecycle": (FidelityStatus.DROPPED, "no container lifecycle hooks on Slurm"),
    "initContainers": (FidelityStatus.APPROXIMATED, "init containers are not run before the program"),
    "ports": (FidelityStatus.DROPPED, "jobs reach each other through the node's network"),
    "optional": (
        FidelityStatus.MAPPED,
        "a missing optional value leaves the variable unset, as on Kubernetes",
    ),
    "containerName": (FidelityStatus.MAPPED, "the value of the job's container"),
    # LeaderWorkerSet (leaderworkerset.x-k8s.io/v1) fields of the group as a whole
    "restartPolicy": _lws_restart,
    "startupPolicy": _lws_startup,
    "rolloutStrategy": (
        FidelityStatus.DROPPED,
        "groups are not updated in place: a new version of the job is a new submission",
    ),
    "networkConfig": (
        FidelityStatus.APPROXIMATED,
        "no headless Service: the tasks reach the leader at the group's first host "
        "(LWS_LEADER_ADDRESS), the nodes by their host names",
    ),
    "subGroupPolicy": (
        FidelityStatus.DROPPED,
        "subgroups (their labels and exclusive placement) have no Slurm counterpart: each group is one "
        "allocation",
    ),
    "volumeClaimTemplates": (
        FidelityStatus.DROPPED,
        "no volume is made per pod from a claim template: use the site's file systems",
    ),
}


def record(ctx: Context) -> None:
    """One fidelity entry per raw item of a Kubernetes job."""
    for item in ctx.job.raw:
        row = RAW_FIELDS.get(item.key, UNREAD_FIELD)
        status, reason = row(ctx, item) if callable(row) else row
        where = item.origin or item.key
        text = f"{where}: {item.value}" if item.value and len(item.value) <= 80 else where
        ctx.fidelity.record(status, text, reason, item.line)


__all__ = ["RAW_FIELDS", "UNREAD_FIELD", "record"]
