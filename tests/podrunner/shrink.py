"""A workload with fewer pods than written, for tests that check the order of whole jobs.

Arrays and replica counts are cut to ``most`` (parallelism and gang sizes with them); what a
chain test checks is which job runs after which, not how many pods each job has.
"""

from __future__ import annotations

import copy
from typing import Any


def _cut_job_spec(spec: dict[str, Any], most: int) -> None:
    if "completions" in spec:
        spec["completions"] = min(int(spec["completions"]), most)
    if "parallelism" in spec:
        spec["parallelism"] = min(int(spec["parallelism"]), int(spec.get("completions", most)))


def _cut_replicas(specs: dict[str, Any], most: int) -> None:
    for replica in specs.values():
        if "replicas" in replica:
            replica["replicas"] = min(int(replica["replicas"]), most)


def shrink(doc: dict[str, Any], most: int) -> dict[str, Any]:
    """A copy of the workload ``doc`` with at most ``most`` pods per array, task or replica type."""
    out = copy.deepcopy(doc)
    api, kind, spec = out.get("apiVersion"), out.get("kind"), out.get("spec") or {}
    if (api, kind) == ("batch/v1", "Job"):
        _cut_job_spec(spec, most)
    elif kind == "JobSet":
        for rjob in spec.get("replicatedJobs") or ():
            rjob["replicas"] = min(int(rjob.get("replicas", 1)), most)
            _cut_job_spec(rjob["template"]["spec"], most)
    elif kind in ("Job", "JobTemplate") and "tasks" in spec:  # Volcano Job, or the JobFlow's template
        for task in spec["tasks"]:
            task["replicas"] = min(int(task.get("replicas", 1)), most)
            if "minAvailable" in task:
                task["minAvailable"] = min(int(task["minAvailable"]), task["replicas"])
        total = sum(t["replicas"] for t in spec["tasks"])
        if "minAvailable" in spec:
            spec["minAvailable"] = min(int(spec["minAvailable"]), total)
    elif kind == "PyTorchJob":
        _cut_replicas(spec.get("pytorchReplicaSpecs") or {}, most)
    elif kind == "MPIJob":
        _cut_replicas(spec.get("mpiReplicaSpecs") or {}, most)
    return out


__all__ = ["shrink"]
