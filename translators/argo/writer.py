"""A chain of translated Kubernetes jobs as one Argo Workflow: ``workflow.yaml``.

Each translated job is a DAG task whose ``resource`` template creates the job
and waits for it: its success and failure conditions are read from the object
(``fields.RESOURCE_CONDITIONS``), so the task ends when the job does, and ends
failed when the job fails. The Slurm dependency types become ``depends``
terms (``fields.CONDITIONS``): ``afterok`` -> ``X.Succeeded``, ``afternotok``
-> ``(X.Failed || X.Errored)``, ``afterany`` -> any end; ``after`` (the start)
and ``aftercorr`` (task by task) have no Argo form and wait for the whole job,
recorded as approximated; ``singleton`` is a mutex named after the group.
ConfigMaps a job's file carries are applied by a task of their own before the
job. Each dependency is recorded in the fidelity log of the job that waits.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import yaml

from migrate.fidelity import Edge, Translation
from migrate.translators.kubernetes.object_kinds import ObjectKind
from migrate.translators.kubernetes.yamlemit import Manifest, dump, dump_all
from migrate.vocab import DependencyType, FidelityStatus

from . import depends, fields

WORKFLOW_FILE = "workflow.yaml"
ENTRYPOINT = "chain"
_TASK_NAME_MAX = 63
# What a job's folder holds beside its workload: the scripts and credentials its pods mount.
_BESIDE_WORKLOAD = frozenset((ObjectKind.CONFIG_MAP, ObjectKind.SECRET))
# libyaml's parser where PyYAML has it: the translated files of a whole site are read back here
_LOADER: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def render_chain(
    translations: list[Translation], edges: list[Edge], folders: dict[str, str]
) -> dict[str, str]:
    """``workflow.yaml``: one Workflow whose DAG creates every translated job in dependency order.

    ``folders``: job id -> the job's folder in the output tree (named in the comments).
    The fidelity entry of each dependency goes to the dependent job's log.
    """
    found = {t.job_id: _documents(t) for t in translations if t.files}
    for t in translations:
        if t.job_id in found and found[t.job_id][0] is None:
            t.fidelity.dropped("workflow task", "no Kubernetes object to create in the translated files")
    chained = [t for t in translations if t.job_id in found and found[t.job_id][0] is not None]
    tasks = {t.job_id: _task_name(t.name) for t in chained}
    mutexes = _singleton_groups(edges, {t.job_id: t.name for t in chained})
    templates: list[dict[str, Any]] = []
    dag: list[dict[str, Any]] = []
    notes: list[str] = []
    by_id = {t.job_id: t for t in chained}
    for t in chained:
        workload, others = found[t.job_id]
        assert workload is not None
        task: dict[str, Any] = {"name": tasks[t.job_id], "template": tasks[t.job_id]}
        terms: list[str] = []
        for index, extra in enumerate(others):
            prep = f"{tasks[t.job_id]}-{str(extra.get('kind', 'object')).lower()}-{index}"[:_TASK_NAME_MAX]
            templates.append({"name": prep, "resource": {"action": "apply", "manifest": _yaml(extra)}})
            dag.append({"name": prep, "template": prep})
            terms.append(f"{prep}.Succeeded")
        own = sorted(
            (
                e
                for e in edges
                if e.dependent == t.job_id
                and e.prerequisite in by_id
                and e.dep_type != DependencyType.SINGLETON
            ),
            key=lambda e: (e.prerequisite, e.dep_type),
        )
        waits = [
            _wait(t, by_id[e.prerequisite], e, tasks[e.prerequisite], _is_scheduled(found[e.prerequisite][0]))
            for e in own
        ]
        if len(own) > 1 and all(e.any_of for e in own):  # an OR list of Slurm ('?'): any one will do
            terms.append("(" + " || ".join(waits) + ")")
        else:
            terms.extend(waits)
        if terms:
            task["depends"] = " && ".join(terms)
        dag.append(task)
        templates.append(_resource_template(t, tasks[t.job_id], workload, mutexes.get(t.job_id)))
        notes.append(f"{tasks[t.job_id]}: {folders.get(t.job_id, t.name)}/ ({t.source}:{t.line})")
    namespaces = {_namespace(found[t.job_id][0]) for t in chained}
    metadata: dict[str, Any] = {
        "generateName": f"{_task_name(chained[0].name) if chained else 'migrate'}-chain-"
    }
    if len(namespaces) == 1 and None not in namespaces:
        metadata["namespace"] = namespaces.pop()
    body = {
        "apiVersion": fields.API_VERSION,
        "kind": "Workflow",
        "metadata": metadata,
        "spec": {
            "entrypoint": ENTRYPOINT,
            "templates": [{"name": ENTRYPOINT, "dag": {"tasks": dag}}, *templates],
        },
    }
    manifest = Manifest(body)
    manifest.note(
        ("spec",),
        "the workflow's service account needs create, get and watch on the kinds below",
    )
    header = [
        "Written by migrate: the translated jobs as one Argo Workflow, each job created after",
        "the jobs it depends on ended as its Slurm dependency type says.",
        "Apply the shared objects (queues, storage) first, then: argo submit workflow.yaml",
        *(f"task {note}" for note in notes),
    ]
    return {WORKFLOW_FILE: dump_all([manifest], header)}


def _wait(t: Translation, pre: Translation, edge: Edge, pre_task: str, scheduled: bool) -> str:
    """The depends term for one edge, and its fidelity entry on the waiting job."""
    condition = fields.CONDITIONS.get(edge.dep_type, fields.CONDITIONS[DependencyType.AFTEROK])
    term = depends.condition(
        edge.dep_type if edge.dep_type in fields.CONDITIONS else DependencyType.AFTEROK, pre_task
    )
    item = f"{edge.dep_type} on {pre.name}"
    if scheduled:
        t.fidelity.approximated(
            item,
            f"{pre.name} is a CronJob: the workflow creates it, and {term} holds once it is created; "
            "nothing waits for its runs",
            edge.line,
        )
    elif condition.exact and edge.dep_type in fields.CONDITIONS:
        t.fidelity.mapped(item, f"workflow.yaml: depends {term} ({condition.why})", edge.line)
    else:
        why = condition.why if edge.dep_type in fields.CONDITIONS else f"{edge.dep_type}: read as afterok"
        t.fidelity.approximated(item, f"workflow.yaml: depends {term}; {why}", edge.line)
    if edge.delay_s:
        t.fidelity.approximated(
            f"{edge.dep_type} delay {edge.delay_s}s on {pre.name}",
            "Argo starts a task as soon as its depends holds: no delay",
            edge.line,
        )
    return term


def _resource_template(
    t: Translation, name: str, workload: dict[str, Any], mutex: str | None
) -> dict[str, Any]:
    resource: dict[str, Any] = {"action": "create", "setOwnerReference": True}
    key = (str(workload.get("apiVersion")), str(workload.get("kind")))
    if key in fields.RESOURCE_CONDITIONS:
        success, failure = fields.RESOURCE_CONDITIONS[key]
        values = _condition_values(workload)
        resource["successCondition"] = success.format(**values)
        resource["failureCondition"] = failure.format(**values)
        t.fidelity.mapped(
            f"workflow task {name}",
            f"creates the {key[1]} and ends with it (success: {resource['successCondition']})",
        )
    elif key not in fields.SCHEDULED_KINDS:
        t.fidelity.approximated(
            f"workflow task {name}",
            f"no success condition is known for {key[1]}: the task ends once the object is created",
        )
    resource["manifest"] = _yaml(workload)
    template: dict[str, Any] = {"name": name}
    if mutex:
        template["synchronization"] = {"mutexes": [{"name": mutex}]}
        t.fidelity.approximated(
            "singleton",
            f"workflow.yaml: mutex {mutex}, one job of the group at a time, in the order Argo grants the "
            "mutex (Slurm: the order of submission); it also keeps other runs of the workflow apart",
        )
    template["resource"] = resource
    return template


def _condition_values(workload: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = workload["spec"] if isinstance(workload.get("spec"), dict) else {}
    completions = spec["completions"] if isinstance(spec.get("completions"), int) else 1
    replicas = spec.get("pytorchReplicaSpecs")
    role = "Master" if isinstance(replicas, dict) and "Master" in replicas else "Worker"
    return {"done": completions - 1, "role": role}


def _documents(t: Translation) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    """The object the task creates and the others of its files (ConfigMaps with its scripts)."""
    workload = None
    others: list[dict[str, Any]] = []
    for rel in sorted(t.files):
        if not rel.endswith((".yaml", ".yml")):
            continue
        written = t.documents(rel)
        for doc in written if written is not None else yaml.load_all(t.files[rel], Loader=_LOADER):
            if not isinstance(doc, dict):
                continue
            name = doc.get("metadata", {}).get("name") if isinstance(doc.get("metadata"), dict) else None
            wanted = t.wait.name if t.wait is not None else t.name
            if workload is None and doc.get("kind") not in _BESIDE_WORKLOAD and name == wanted:
                workload = doc
            else:
                others.append(doc)
    return workload, others


def _is_scheduled(workload: dict[str, Any] | None) -> bool:
    return workload is not None and (str(workload.get("apiVersion")), str(workload.get("kind"))) in (
        fields.SCHEDULED_KINDS
    )


def _namespace(workload: dict[str, Any] | None) -> str | None:
    meta = workload.get("metadata") if workload else None
    return meta.get("namespace") if isinstance(meta, dict) else None


def _singleton_groups(edges: list[Edge], names: dict[str, str]) -> dict[str, str]:
    """Job id -> the mutex its singleton group shares (named after the group's first job)."""
    parent: dict[str, str] = {}

    def root(x: str) -> str:
        while parent.get(x, x) != x:
            x = parent[x]
        return x

    for edge in edges:
        if (
            edge.dep_type == DependencyType.SINGLETON
            and edge.dependent in names
            and edge.prerequisite in names
        ):
            a, b = root(edge.dependent), root(edge.prerequisite)
            if a != b:
                parent[max(a, b)] = min(a, b)
            parent.setdefault(min(a, b), min(a, b))
    groups: dict[str, list[str]] = defaultdict(list)
    for job_id in parent:
        groups[root(job_id)].append(job_id)
    out: dict[str, str] = {}
    for members in groups.values():
        mutex = _task_name(min(names[m] for m in members)) + "-singleton"
        out.update({m: mutex for m in members})
    return out


def _task_name(name: str) -> str:
    """A DAG task name: letters, digits and dashes, not starting with a digit (depends needs that)."""
    text = "".join(ch if ch.isalnum() or ch == "-" else "-" for ch in name.lower()).strip("-") or "job"
    return ("t-" + text if text[0].isdigit() else text)[:_TASK_NAME_MAX]


def _yaml(doc: dict[str, Any]) -> str:
    return dump(Manifest(doc))


def statuses() -> dict[str, FidelityStatus]:
    """How each Slurm dependency type is written: mapped, or approximated (for the docs' table)."""
    return {
        dep: FidelityStatus.MAPPED if condition.exact else FidelityStatus.APPROXIMATED
        for dep, condition in fields.CONDITIONS.items()
    }


__all__ = ["WORKFLOW_FILE", "render_chain", "statuses"]
