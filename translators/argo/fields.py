"""The one table of Argo Workflows fields the reader reads and the writer writes.

Names were checked against argoproj/argo-workflows (``pkg/apis/workflow/v1alpha1``:
``WorkflowSpec``, ``Template``, ``DAGTask``, ``WorkflowStep``, ``CronWorkflowSpec``,
``ResourceTemplate``) and its ``depends`` logic (``workflow/common/ancestry.go``).
The schemas under ``schemas/`` are written from the same types and list the same fields.
"""

from __future__ import annotations

from dataclasses import dataclass

from migrate.vocab import ArgoKind, DependencyType, TaskResult

GROUP = "argoproj.io"
API_VERSION = "argoproj.io/v1alpha1"
KINDS = frozenset(ArgoKind)
# Kinds whose templates other workflows call through ``templateRef``.
LIBRARY_KINDS = frozenset((ArgoKind.WORKFLOW_TEMPLATE, ArgoKind.CLUSTER_WORKFLOW_TEMPLATE))

# Where the WorkflowSpec is in each kind.
SPEC_PATH: dict[ArgoKind, tuple[str, ...]] = {
    ArgoKind.WORKFLOW: ("spec",),
    ArgoKind.WORKFLOW_TEMPLATE: ("spec",),
    ArgoKind.CLUSTER_WORKFLOW_TEMPLATE: ("spec",),
    ArgoKind.CRON_WORKFLOW: ("spec", "workflowSpec"),
}

# A template does exactly one of these.
POD_BODIES = ("container", "script")  # the template runs a pod: one IR job
GROUP_BODIES = ("dag", "steps")  # the template runs other templates
OTHER_BODIES = ("resource", "containerSet", "suspend", "data", "http", "plugin")
TEMPLATE_BODIES = (*POD_BODIES, *GROUP_BODIES, *OTHER_BODIES)

# Pod-level fields a template sets for its own pod, and the workflow for every pod
# (a template's own value wins). They have the names and shapes of a PodSpec's fields.
TEMPLATE_POD_FIELDS = (
    "nodeSelector",
    "tolerations",
    "affinity",
    "schedulerName",
    "priorityClassName",
    "securityContext",
    "serviceAccountName",
    "hostAliases",
    "initContainers",
    "sidecars",
)
WORKFLOW_POD_FIELDS = (
    "nodeSelector",
    "tolerations",
    "affinity",
    "schedulerName",
    "securityContext",
    "serviceAccountName",
    "hostNetwork",
    "dnsPolicy",
    "dnsConfig",
    "imagePullSecrets",
)
# Volumes: the workflow's and the template's together.
VOLUMES = "volumes"

# Fan-out of a task or step: the job-array equivalent.
WITH_ITEMS = "withItems"
WITH_SEQUENCE = "withSequence"
WITH_PARAM = "withParam"

# The expansion of a bare task name, and of ``dependencies: [A]`` (ancestry.go expandDependency).
BARE_TASK = (TaskResult.SUCCEEDED, TaskResult.SKIPPED, TaskResult.DAEMONED)
CONTINUE_ON = {"failed": TaskResult.FAILED, "error": TaskResult.ERRORED}

# Reading: which sets of results of one task a Slurm dependency type expresses, and how well.
ENDED = frozenset((TaskResult.SUCCEEDED, TaskResult.FAILED, TaskResult.ERRORED))
FAILED = frozenset((TaskResult.FAILED, TaskResult.ERRORED))


@dataclass(frozen=True)
class Reading:
    """What one task's results, ORed together, become on Slurm."""

    type: DependencyType
    exact: bool  # False: the nearest type, recorded as approximated
    why: str = ""


def slurm_reading(results: frozenset[TaskResult]) -> Reading | None:
    """The Slurm type for ``task.R1 || task.R2 ...``; None when no type comes near."""
    if results == {TaskResult.SUCCEEDED} or results == set(BARE_TASK):
        # a bare task name also passes a skipped or daemon task: neither is a job that ends in Slurm
        return Reading(DependencyType.AFTEROK, True)
    if results == {TaskResult.SUCCEEDED, TaskResult.SKIPPED}:
        return Reading(
            DependencyType.AFTEROK, False, "Slurm has no skipped or daemoned job: afterok waits for success"
        )
    if results <= FAILED:
        exact = results == FAILED or results == {TaskResult.FAILED}
        return Reading(DependencyType.AFTERNOTOK, exact, "" if exact else "afternotok also takes a failure")
    if results >= ENDED or {TaskResult.SUCCEEDED, TaskResult.FAILED} <= results:
        # Skipped and Daemoned, as a bare name adds them, are no job that ends: nothing to wait for
        extra = results - ENDED - {TaskResult.SKIPPED, TaskResult.DAEMONED}
        why = f"{', '.join(sorted(extra))}: no Slurm state; afterany waits for the end" if extra else ""
        return Reading(DependencyType.AFTERANY, not extra, why)
    if results == {TaskResult.ALL_FAILED}:
        return Reading(
            DependencyType.AFTERNOTOK, False, "Slurm cannot require every array task to fail: afternotok"
        )
    if results == {TaskResult.ANY_SUCCEEDED}:
        return Reading(
            DependencyType.AFTERANY, False, "Slurm cannot wait for one array task's success: afterany"
        )
    if results == {TaskResult.DAEMONED}:
        return Reading(DependencyType.AFTER, False, "after (started) for a daemon that is running")
    return None


# Writing: the depends condition each Slurm type becomes, and how well.
@dataclass(frozen=True)
class Condition:
    results: tuple[TaskResult, ...]
    exact: bool
    why: str


CONDITIONS: dict[str, Condition] = {
    DependencyType.AFTEROK: Condition((TaskResult.SUCCEEDED,), True, "Succeeded: the job ended with exit 0"),
    DependencyType.AFTERNOTOK: Condition(
        (TaskResult.FAILED, TaskResult.ERRORED), True, "Failed or Errored: the job ended in failure"
    ),
    DependencyType.AFTERANY: Condition(
        (TaskResult.SUCCEEDED, TaskResult.FAILED, TaskResult.ERRORED), True, "the job ended, however"
    ),
    DependencyType.AFTER: Condition(
        (TaskResult.SUCCEEDED, TaskResult.FAILED, TaskResult.ERRORED),
        False,
        "Argo has no 'after it started': the task waits for the job to end",
    ),
    DependencyType.AFTERCORR: Condition(
        (TaskResult.SUCCEEDED,),
        False,
        "Argo has no element-wise wait between fan-outs: the task waits for the whole array to succeed",
    ),
    "dependsOn": Condition((TaskResult.SUCCEEDED,), True, "Succeeded: the step ended with success"),
}

# A batch/v1 Job that failed has a condition of type Failed, whatever made it fail (backoffLimit,
# a failed index of an array, podFailurePolicy, activeDeadlineSeconds); no failure count says
# that: an array (backoffLimitPerIndex) fails on one failed element, and its backoffLimit is then
# 2^31-1. Failed is at most the third condition: after Suspended (a job Kueue admitted) and
# FailureTarget (Kubernetes 1.31 on). Argo fails the task when any failure requirement holds.
JOB_FAILED = ", ".join(f"status.conditions.{i}.type == Failed" for i in range(3))

# How Argo knows that a job a ``resource`` template created has ended: its success and failure
# conditions (label-selector requirements over the object's JSON paths: all success ones must
# hold, any failure one fails; a number picks a list item, nothing filters a list), by the created
# object's apiVersion and kind. ``{done}`` and ``{role}`` are filled from the object.
RESOURCE_CONDITIONS: dict[tuple[str, str], tuple[str, str]] = {
    ("batch/v1", "Job"): ("status.succeeded > {done}", JOB_FAILED),
    ("jobset.x-k8s.io/v1alpha2", "JobSet"): (
        "status.terminalState == Completed",
        "status.terminalState == Failed",
    ),
    ("batch.volcano.sh/v1alpha1", "Job"): (
        "status.state.phase == Completed",
        "status.state.phase in (Failed,Aborted,Terminated)",
    ),
    ("kubeflow.org/v1", "PyTorchJob"): (
        "status.replicaStatuses.{role}.succeeded > 0",
        "status.replicaStatuses.{role}.failed > 0",
    ),
    ("kubeflow.org/v2beta1", "MPIJob"): (
        "status.replicaStatuses.Launcher.succeeded > 0",
        "status.replicaStatuses.Launcher.failed > 0",
    ),
}
# Objects that run on a schedule of their own: created by the workflow, never waited for.
SCHEDULED_KINDS = frozenset({("batch/v1", "CronJob")})

__all__ = [
    "API_VERSION",
    "CONDITIONS",
    "GROUP",
    "KINDS",
    "RESOURCE_CONDITIONS",
    "SPEC_PATH",
    "TEMPLATE_BODIES",
    "Condition",
    "Reading",
    "slurm_reading",
]
