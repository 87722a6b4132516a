"""The status a workload's controller would show once the pod runner has run it, for conditions.

Fields follow the controllers' APIs: batch/v1 Job ``succeeded``/``failed`` (pods; zero counts
are left out, as ``omitempty`` does) and ``conditions`` in the order the Job controller adds
them since Kubernetes 1.31 (``SuccessCriteriaMet`` then ``Complete``; ``FailureTarget`` then
``Failed``); JobSet ``terminalState`` and conditions; Volcano Job ``state.phase`` and pod
counts; PyTorchJob and MPIJob ``replicaStatuses.<role>`` with pod counts, and their
``Succeeded``/``Failed`` condition. A run that timed out has no terminal field: still running.

A job the driver shrank (fewer pods than written) stands for the written one: run pod i
stands for the written pods i, i+n, i+2n ... so the counts are those of the written size,
as if every written pod did what the pod that stands for it did.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from .model import RunResult


def _counts(result: RunResult, written: int | None = None) -> tuple[Counter[str], Counter[str]]:
    """Pods that succeeded and pod failures, per role (the written size for a single group)."""
    succeeded: Counter[str] = Counter()
    failed: Counter[str] = Counter()
    run = len(result.pods)
    for position, pod in enumerate(result.pods):
        share = 1 if written is None else len(range(position, written, run))
        if pod.attempts and pod.rc == 0:
            succeeded[pod.plan.role] += share
        # a pod killed when the job failed (rc None) ended failed too
        failed[pod.plan.role] += share * sum(1 for a in pod.attempts if a.rc != 0)
    return succeeded, failed


def _condition(kind: str) -> dict[str, str]:
    return {"type": kind, "status": "True"}


def _job(doc: dict[str, Any], result: RunResult) -> dict[str, Any]:
    spec = doc.get("spec") or {}
    written = int(spec.get("completions", spec.get("parallelism", 1)) or 1)
    succeeded, failed = _counts(result, written)
    status: dict[str, Any] = {}
    if succeeded[""]:
        status["succeeded"] = succeeded[""]
    if failed[""]:
        status["failed"] = failed[""]
    conditions = [_condition("Suspended")] if result.status == "Suspended" else []
    if result.status == "Complete":
        conditions += [_condition("SuccessCriteriaMet"), _condition("Complete")]
    elif result.status == "Failed":
        conditions += [_condition("FailureTarget"), _condition("Failed")]
    if conditions:
        status["conditions"] = conditions
    return status


def _jobset(result: RunResult) -> dict[str, Any]:
    state = {"Complete": "Completed", "Failed": "Failed"}.get(result.status)
    return {"terminalState": state, "conditions": [_condition(state)]} if state else {}


def _volcano(result: RunResult) -> dict[str, Any]:
    succeeded, failed = _counts(result)
    phase = {"Complete": "Completed", "Failed": "Failed"}.get(result.status, "Running")
    status: dict[str, Any] = {"state": {"phase": phase}}
    if sum(succeeded.values()):
        status["succeeded"] = sum(succeeded.values())
    if sum(failed.values()):
        status["failed"] = sum(failed.values())
    return status


def _operator(result: RunResult) -> dict[str, Any]:
    """PyTorchJob and MPIJob: pods per replica type; a restarted pod counts once, as it ended."""
    roles: dict[str, dict[str, int]] = {}
    for pod in result.pods:
        counts = roles.setdefault(pod.plan.role, {})
        ended = {0: "succeeded", None: "active"}.get(pod.rc, "failed") if pod.attempts else "active"
        counts[ended] = counts.get(ended, 0) + 1
    status: dict[str, Any] = {"replicaStatuses": roles}
    state = {"Complete": "Succeeded", "Failed": "Failed"}.get(result.status)
    if state:
        status["conditions"] = [_condition("Created"), _condition("Running"), _condition(state)]
    return status


def status_of(doc: dict[str, Any], result: RunResult) -> dict[str, Any]:
    """The object as its controller would show it after the run (``doc`` as written)."""
    api, kind = doc.get("apiVersion"), doc.get("kind")
    if (api, kind) == ("batch/v1", "Job"):
        status = _job(doc, result)
    elif kind == "JobSet":
        status = _jobset(result)
    elif (api, kind) == ("batch.volcano.sh/v1alpha1", "Job"):
        status = _volcano(result)
    elif kind in ("PyTorchJob", "MPIJob"):
        status = _operator(result)
    else:
        raise ValueError(f"no status is known for {api} {kind}")
    return {**doc, "status": status}


__all__ = ["status_of"]
