"""``--workflow jobflow``: a dependency chain as one Volcano JobFlow (flow.volcano.sh/v1alpha1).

Each job of the chain keeps its folder, but its Volcano Job becomes a
JobTemplate of the same name and spec: the JobFlow creates the job
(``<flow>-<template>``) when its turn comes. ``flows[].dependsOn.targets``
names the templates a job waits for.

What the Volcano controller does decides what can be said (v1.15.1): a flow's
job is created only once every target's job reached phase ``Completed``. So
``afterok`` is exact; ``afterany``, ``after``, ``aftercorr`` and ``singleton``
become "after it completed" (the order is kept, a failure stops the chain);
``afternotok`` cannot be said at all (``dependsOn.probe`` exists in the API but
the controller never reads it), so such a job, and what waits for it, stays
out of the flow and is applied by hand. Jobs the Volcano flavor could not
express stay out too. Every dependency gets its fidelity entry.
"""

from __future__ import annotations

from collections import defaultdict

from migrate.fidelity import Edge, Entry, Translation
from migrate.vocab import DependencyType, FidelityStatus

from .flavors import VOLCANO
from .kinds import MANAGED_BY_LABEL, MANAGED_BY_VALUE
from .yamlemit import Manifest, dump_all

API_VERSION = "flow.volcano.sh/v1alpha1"
FILE = "jobflow.yaml"
_VCJOB = "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\n"
_TEMPLATE = f"apiVersion: {API_VERSION}\nkind: JobTemplate\n"

_EXACT = frozenset({DependencyType.AFTEROK, DependencyType.DEPENDS_ON})
_AS_COMPLETED: dict[str, str] = {
    DependencyType.AFTERANY: "JobFlow starts it only once that job Completed; had it failed, this job would "
    "never start (Slurm's afterany starts it either way)",
    DependencyType.AFTER: "JobFlow starts it once that job Completed, not as soon as it started: later than "
    "Slurm, in the same order",
    DependencyType.AFTERCORR: "JobFlow waits for the whole array to complete, not element by element",
    DependencyType.SINGLETON: "one at a time kept as a chain: each waits for the previous one to complete "
    "(Slurm's singleton also starts it after a failure)",
}
_NOT_IN_FLOW = (
    "JobFlow starts a job only after its targets completed, and dependsOn.probe (taskStatusList) is not "
    "read by the Volcano controller: left out of the JobFlow, apply it by hand"
)


def render_chain(
    translations: list[Translation], edges: list[Edge], folders: dict[str, str]
) -> dict[str, str]:
    """One JobFlow per chain (jobs linked by dependencies), in the namespace of its first job."""
    by_id = {t.job_id: t for t in translations}
    order = {t.job_id: i for i, t in enumerate(translations)}
    outside = _outside_the_flow(edges, by_id)
    waits: dict[str, list[Edge]] = defaultdict(list)
    for edge in edges:
        waits[edge.dependent].append(edge)
    manifests: list[Manifest] = []
    for chain in _chains(edges, order):
        namespace = _namespace(by_id[next((j for j in chain if j not in outside), chain[0])])
        flows: list[dict[str, object]] = []
        for job_id in chain:
            t = by_id[job_id]
            if job_id not in outside and _namespace(t) != namespace:
                outside[job_id] = f"{t.name} is in another namespace than its chain's JobFlow ({namespace})"
            if job_id in outside:
                for edge in waits[job_id]:
                    _record(t, edge, by_id, FidelityStatus.DROPPED, outside[job_id])
                t.by_hand = bool(waits[job_id])  # kubectl apply -k would start it at once
                continue
            flows.append(_flow(t, waits[job_id], by_id))
        if flows:
            manifests.append(_jobflow(f"{flows[0]['name']}-flow", namespace, flows))
    if not manifests:
        return {}
    header = [
        "Written by migrate: each dependency chain as a Volcano JobFlow (kubectl apply -k . applies it)"
    ]
    return {FILE: dump_all(manifests, header)}


def _flow(t: Translation, waits: list[Edge], by_id: dict[str, Translation]) -> dict[str, object]:
    _to_template(t)
    targets: list[str] = []
    for edge in waits:
        pre = by_id[edge.prerequisite]
        if pre.name not in targets:
            targets.append(pre.name)
        if edge.dep_type in _EXACT:
            _record(t, edge, by_id, FidelityStatus.MAPPED, f"JobFlow dependsOn.targets {pre.name}")
        else:
            reason = _AS_COMPLETED.get(edge.dep_type, "waits for it to complete")
            _record(t, edge, by_id, FidelityStatus.APPROXIMATED, f"dependsOn.targets {pre.name}: {reason}")
    flow: dict[str, object] = {"name": t.name}
    if targets:
        flow["dependsOn"] = {"targets": targets}
    return flow


def _jobflow(name: str, namespace: str, flows: list[dict[str, object]]) -> Manifest:
    metadata: dict[str, object] = {"name": name, "labels": {MANAGED_BY_LABEL: MANAGED_BY_VALUE}}
    if namespace:
        metadata["namespace"] = namespace
    spec = {"jobRetainPolicy": "retain", "flows": flows}
    manifest = Manifest({"apiVersion": API_VERSION, "kind": "JobFlow", "metadata": metadata, "spec": spec})
    manifest.note(
        ("spec", "flows"), "each flow names a JobTemplate; its job starts when every target Completed"
    )
    return manifest


def _chains(edges: list[Edge], order: dict[str, int]) -> list[list[str]]:
    """Jobs linked by dependencies, each chain in dependency order (ties in translation order)."""
    parent: dict[str, str] = {}

    def root(j: str) -> str:
        while parent.setdefault(j, j) != j:
            j = parent[j]
        return j

    for edge in edges:
        parent[root(edge.dependent)] = root(edge.prerequisite)
    groups: dict[str, list[str]] = defaultdict(list)
    for job_id in sorted(parent, key=lambda j: order.get(j, 0)):
        groups[root(job_id)].append(job_id)
    return [_topological(members, edges, order) for members in groups.values()]


def _topological(members: list[str], edges: list[Edge], order: dict[str, int]) -> list[str]:
    before: dict[str, set[str]] = {j: set() for j in members}
    for edge in edges:
        if edge.dependent in before:
            before[edge.dependent].add(edge.prerequisite)
    done: list[str] = []
    while len(done) < len(members):
        ready = [j for j in members if j not in done and before[j] <= set(done)]
        if not ready:  # a cycle: the rest in translation order; the validator reports it
            ready = [j for j in members if j not in done]
        done.append(min(ready, key=lambda j: order.get(j, 0)))
    return done


def _outside_the_flow(edges: list[Edge], by_id: dict[str, Translation]) -> dict[str, str]:
    """Jobs that cannot be flows, with why: no Volcano Job, an afternotok, or waiting for such a job."""
    outside: dict[str, str] = {}
    for job_id in sorted({e.dependent for e in edges} | {e.prerequisite for e in edges}):
        t = by_id[job_id]
        if t.flavor != VOLCANO or not any(_VCJOB in text for text in t.files.values()):
            outside[job_id] = (
                f"{t.name} is not a Volcano Job ({t.flavor}): not in the JobFlow, apply it by hand"
            )
    for edge in edges:
        if edge.dep_type == DependencyType.AFTERNOTOK:
            outside.setdefault(edge.dependent, _NOT_IN_FLOW)
    changed = True
    while changed:  # a flow's targets must be flows
        changed = False
        for edge in edges:
            if edge.prerequisite in outside and edge.dependent not in outside:
                pre = by_id[edge.prerequisite].name
                outside[edge.dependent] = f"waits for {pre}, which is not in the JobFlow: apply it by hand"
                changed = True
    return outside


def _to_template(t: Translation) -> None:
    for rel, text in t.files.items():
        if _VCJOB in text:
            t.files[rel] = text.replace(_VCJOB, _TEMPLATE, 1)


def _record(t: Translation, edge: Edge, by_id: dict[str, Translation], status: str, reason: str) -> None:
    """The dependency's entries say how the JobFlow carries it (replacing the writer's submit.sh wording)."""
    pre = by_id[edge.prerequisite].name
    item = f"{edge.dep_type} on {pre}"
    found = False
    for i, entry in enumerate(t.fidelity.entries):
        if entry.item.startswith("--dependency=") and edge.dep_type in entry.item:
            t.fidelity.entries[i] = Entry(entry.item, FidelityStatus(status), f"{item}: {reason}", entry.line)
            found = True
        elif entry.item.startswith(item):
            t.fidelity.entries[i] = Entry(entry.item, FidelityStatus(status), reason, entry.line)
            found = True
    if not found:
        t.fidelity.entries.append(Entry(item, FidelityStatus(status), reason, edge.line))


def _namespace(t: Translation) -> str:
    return (t.wait.namespace or "") if t.wait else ""


__all__ = ["API_VERSION", "FILE", "render_chain"]
