"""A Volcano JobFlow driven the way its controller drives it, each job run as local pods.

This is not Volcano: it is the rule the v1.15.1 controller applies (a flow's job,
named ``<jobflow>-<template>``, is created from its JobTemplate once the job of every
``dependsOn.targets`` flow reached phase Completed; a flow whose target failed is never
created), with each created job handed to the pod runner as a Volcano Job (with the step token Secret
its pods read, made as submit.sh makes it). Jobs that
may start together run one after the other here: the order a chain allows is what is
checked, not how much runs at once.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from .runner import PodRunner
from .shrink import shrink
from .testing import with_step_secrets

TEMPLATE_API = "flow.volcano.sh/v1alpha1"


@dataclass(frozen=True)
class FlowRun:
    flow: str
    job: str  # the Volcano Job the flow created
    status: str  # Complete | Failed | Timeout


def _documents(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(path.read_text(encoding="utf-8")) if isinstance(d, dict)]


def _template_files(out: Path) -> dict[str, list[dict[str, Any]]]:
    """JobTemplate name -> the documents of its file (the template and its ConfigMaps)."""
    found: dict[str, list[dict[str, Any]]] = {}
    for path in sorted(out.glob("*/*.yaml")):
        docs = _documents(path)
        for doc in docs:
            if doc.get("apiVersion") == TEMPLATE_API and doc.get("kind") == "JobTemplate":
                found[doc["metadata"]["name"]] = docs
    return found


def run_jobflow(
    out: Path,
    flow_name: str,
    workdir: Path,
    scripts: dict[str, str],
    max_replicas: int = 2,
    **runner_options: Any,
) -> list[FlowRun]:
    """Run the JobFlow ``flow_name`` of ``out/jobflow.yaml``; ``scripts`` replaces each job's job.sh."""
    flow = next(d for d in _documents(out / "jobflow.yaml") if d["metadata"]["name"] == flow_name)
    templates = _template_files(out)
    pending = list(flow["spec"]["flows"])
    completed: set[str] = set()
    runs: list[FlowRun] = []
    while True:
        ready = [f for f in pending if set((f.get("dependsOn") or {}).get("targets") or ()) <= completed]
        if not ready:
            return runs  # what is left waits for a target that did not complete: never created
        step = ready[0]
        pending.remove(step)
        name = step["name"]
        job = f"{flow_name}-{name}"
        text = with_step_secrets(_as_volcano_job(templates[name], job, scripts.get(name), max_replicas))
        result = PodRunner(workdir / job, **runner_options).run(text)
        runs.append(FlowRun(name, job, result.status))
        if result.status == "Complete":
            completed.add(name)


def _as_volcano_job(docs: list[dict[str, Any]], job: str, script: str | None, max_replicas: int) -> str:
    out: list[dict[str, Any]] = []
    for doc in copy.deepcopy(docs):
        if doc.get("kind") == "JobTemplate":
            # fewer pods than written (the gang shrinks with them): the order is what is checked
            doc = shrink(doc, max_replicas)
            doc["apiVersion"], doc["kind"] = "batch.volcano.sh/v1alpha1", "Job"
            doc["metadata"]["name"] = job
        elif doc.get("kind") == "ConfigMap" and script is not None and "job.sh" in doc.get("data", {}):
            doc["data"]["job.sh"] = script
        out.append(doc)
    return yaml.safe_dump_all(out, sort_keys=False)


__all__ = ["FlowRun", "run_jobflow"]
