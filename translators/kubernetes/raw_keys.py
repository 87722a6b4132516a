"""The raw-item keys the Kubernetes reader gives what it keeps, and what each one holds.

A manifest field that no part of the reader looks at is kept under its own
name (``successPolicy``, ``readinessProbe`` ...), with its YAML path as the
origin: those are the Kubernetes API's fields, and a writer lists the ones it
knows. Everything else the reader keeps gets one of these keys, and every
writer that takes Kubernetes jobs has a row for each of them.
"""

from __future__ import annotations

from migrate import ir

from .kinds import DROPPED_ANNOTATIONS

RAW_KEYS = ir.RawKeys(
    {
        "pvc": "a PersistentVolumeClaim of the same file that the pods mount: 'claim: size, access, class'",
        "completions": "the completions of a Job that is no array (pods run until that many succeed)",
        "elastic-replicas": "the replica bounds of an elastic role: 'role: min-max replicas'",
        "gang-size": "how many pods a gang scheduler starts together (minAvailable, a Kueue pod group)",
        "max-retry": "the retry budget of one role: 'role: retries'",
        "dependsOn": "a role's dependencies on its sibling roles, as written",
        "time-limits": "several deadlines of one job (the tightest is its time limit)",
        "priorityClassName": "a pod priority class the job's own priority overrides",
        "ttlSecondsAfterFinished": "how long a finished job is kept",
        "jobflow": "the Volcano JobFlow whose step the job is",
        "resources": "a pod's requests and limits where the IR keeps one number of each",
        # processes per pod that are decided when the job starts ('auto', 'gpu', 'cpu')
        "nprocPerNode": "a PyTorchJob's processes per pod, decided when it starts",
        "nProcPerNode": "an elastic PyTorchJob's processes per pod, decided when it starts",
        "numProcPerNode": "a TrainJob's processes per node, decided when it starts",
        "slotsPerWorker": "an MPIJob's slots per worker, decided when it starts",
        "kueueFlavor": "the Kueue flavor whose node labels a queued job's pods get: 'queue -> flavor'",
        "torchx": "the torchx run command of a launch script that submits the job to Kubernetes",
        "rayClusterOf": "the RayCluster of another file a RayJob's clusterSelector names: 'name (file:line)'",
        **{
            key: "an annotation that repeats the object; only its length is kept"
            for key in DROPPED_ANNOTATIONS
        },
    }
)


def pvc_value(claim: str, summary: str) -> str:
    """The value of a ``pvc`` item: the claim's name, then what the PersistentVolumeClaim asks for."""
    return f"{claim}: {summary}"


def pvc_claim(value: str) -> str:
    """The claim a ``pvc`` item is about (claim names are DNS labels: no colon in them)."""
    return value.partition(":")[0]


__all__ = ["RAW_KEYS", "pvc_claim", "pvc_value"]
