"""An Argo Workflow's DAG driven the way its controller drives it, each job run as local pods.

This is not Argo: it applies the rules of the v4.1.2 controller (``workflow/controller/dag.go``,
``workflow/executor/resource.go``) to the DAG of a Workflow whose tasks call ``resource``
templates, and hands each object a task creates to the pod runner:

- a task runs once every task its ``depends`` names has ended (``dependencies: [A, B]`` is
  ``A && B``, with ``continueOn`` adding ``.Failed``/``.Errored``) and the expression holds
  over their results (``Succeeded``, ``Failed``, ``Errored``, ``Skipped``, ``Omitted``,
  ``Daemoned``; ``AnySucceeded``/``AllFailed`` only hold for fan-outs, which are not run here;
  a bare name is ``Succeeded || Skipped || Daemoned``); the expression is read by the
  project's own parser (``translators/argo/depends.py``). A task whose expression is false
  once its tasks have ended is Omitted, and counts as ended for the tasks after it;
- ``dag.target`` (or ``target=``) limits the run to those tasks and the tasks they need;
  ``failFast`` only decides the DAG's own phase (``assessDAGPhase``): a failed task does not
  stop the tasks whose expression holds after it (an ``X.Failed`` handler) from starting;
- a template's ``synchronization.mutexes`` lets one task hold each named lock at a time; the
  others wait, first come first served, and take it when the holder's task ends;
- a ``resource`` template with ``action: create`` or ``apply``: a ConfigMap or Secret is
  recorded (the pods of later jobs see it), an object that runs nothing (a Service, a
  NetworkPolicy) is only created; a workload is run by the pod runner with the recorded
  ConfigMaps and Secrets (and the step token Secret its pods read, made as submit.sh
  makes it: ``testing.with_step_secrets``), and the task's result is what Argo's wait on it gives:
  the template's own successCondition and failureCondition evaluated on the status the
  object's controller would show (``selector.py``, ``status.py``). When neither ever holds,
  Argo would wait for ever: the task stays Running and nothing after it starts.
  ``setOwnerReference`` only ties the object's life to the Workflow's: nothing to run.

Tasks that may run together run together (threads), so the order and the mutexes are
checked on pods that really overlap. What differs: conditions are evaluated on the status
the object ends with, not polled while it runs (a condition that would hold while pods still
run ends the task here when the job ends); no retries, hooks, ``when``, fan-outs or steps
templates (they raise ``Unsupported``); jobs have at most ``max_replicas`` pods per array or
replica type (``shrink.py``), and the status stands for the written size.
"""

from __future__ import annotations

import copy
import threading
import time
from collections.abc import Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from migrate.translators.argo import depends, fields
from migrate.vocab import TaskResult

from . import workloads
from .model import RunResult
from .runner import PodRunner
from .selector import judge
from .shrink import shrink
from .status import status_of
from .testing import with_step_secrets

ENDED = ("Succeeded", "Failed", "Errored", "Skipped", "Omitted")
RECORDED_KINDS = ("ConfigMap", "Secret")
UNSUPPORTED_TASK_FIELDS = ("when", "withItems", "withParam", "withSequence", "hooks", "onExit", "inline")


class Unsupported(ValueError):
    """The Workflow uses something this driver does not apply."""


@dataclass
class TaskRun:
    task: str
    result: str  # one of ENDED, or Running: the wait on the created object never ended
    kind: str = ""  # what the resource template created
    job: RunResult | None = None
    started: float = 0.0  # time.monotonic() when the task took its locks and created its object
    ended: float = 0.0


def _workflow(path: Path) -> dict[str, Any]:
    docs = [d for d in yaml.safe_load_all(path.read_text(encoding="utf-8")) if isinstance(d, dict)]
    found = [d for d in docs if d.get("apiVersion") == fields.API_VERSION and d.get("kind") == "Workflow"]
    if len(found) != 1:
        raise Unsupported(f"{path}: expected one Workflow, found {len(found)}")
    return found[0]


def _expression(task: dict[str, Any], tasks: dict[str, dict[str, Any]]) -> depends.Expr | None:
    if task.get("depends"):
        return depends.parse(str(task["depends"]))
    names = [str(n) for n in task.get("dependencies") or ()]
    if not names:
        return None
    extra = {
        n: [fields.CONTINUE_ON[k] for k, on in (tasks[n].get("continueOn") or {}).items() if on]
        for n in names
    }
    return depends.from_dependencies(names, extra)


def _holds(expr: depends.Expr, results: dict[str, str]) -> bool:
    """The expression over the ended tasks' results (fan-out results never hold: no fan-outs)."""
    if isinstance(expr, depends.Operand):
        wanted = (expr.result,) if expr.result else fields.BARE_TASK
        return results[expr.task] in wanted and results[expr.task] not in _FAN_OUT
    if isinstance(expr, depends.Not):
        return not _holds(expr.inner, results)
    parts = (_holds(p, results) for p in expr.parts)
    return all(parts) if isinstance(expr, depends.And) else any(parts)


_FAN_OUT = (TaskResult.ANY_SUCCEEDED, TaskResult.ALL_FAILED)


def _needed(targets: list[str], needs: dict[str, list[str]]) -> set[str]:
    out: set[str] = set()
    todo = list(targets)
    while todo:
        name = todo.pop()
        if name not in out:
            out.add(name)
            todo.extend(needs[name])
    return out


def _mutexes(template: dict[str, Any]) -> tuple[str, ...]:
    sync = template.get("synchronization") or {}
    if sync.get("semaphores") or sync.get("semaphore"):
        raise Unsupported(f"template {template['name']}: semaphores")
    found = list(sync.get("mutexes") or ())
    if sync.get("mutex"):  # the v3 field
        found.append(sync["mutex"])
    return tuple(str(m["name"]) for m in found)


def _mounted_configmaps(node: Any) -> Iterator[str]:
    """The names of the ConfigMaps a manifest mounts as volumes."""
    if isinstance(node, dict):
        volume = node.get("configMap")
        if isinstance(volume, dict) and "name" in volume:
            yield str(volume["name"])
        for value in node.values():
            yield from _mounted_configmaps(value)
    elif isinstance(node, list):
        for value in node:
            yield from _mounted_configmaps(value)


class _Driver:
    def __init__(
        self,
        workflow: dict[str, Any],
        workdir: Path,
        scripts: dict[str, str],
        target: str | None,
        max_replicas: int,
        runner_options: dict[str, Any],
    ) -> None:
        spec = workflow["spec"]
        self.templates = {t["name"]: t for t in spec["templates"]}
        dag = self.templates[spec["entrypoint"]].get("dag")
        if dag is None:
            raise Unsupported("the entrypoint is not a DAG template")
        self.tasks = {t["name"]: t for t in dag["tasks"]}
        for task in self.tasks.values():
            used = [f for f in UNSUPPORTED_TASK_FIELDS if f in task]
            if used:
                raise Unsupported(f"task {task['name']}: {', '.join(used)}")
        self.exprs = {n: _expression(t, self.tasks) for n, t in self.tasks.items()}
        self.needs = {n: depends.tasks_of(e) if e else [] for n, e in self.exprs.items()}
        for name, needed in self.needs.items():
            if missing := [m for m in needed if m not in self.tasks]:
                raise Unsupported(f"task {name} depends on unknown tasks {missing}")
        chosen = (target or dag.get("target") or "").split()
        self.included = _needed(chosen, self.needs) if chosen else set(self.tasks)
        self.workdir = workdir
        self.scripts = scripts
        self.max_replicas = max_replicas
        self.runner_options = runner_options
        self.objects: dict[tuple[str, str], dict[str, Any]] = {}
        self.lock = threading.Lock()  # guards objects: tasks record and read them from threads

    def run(self) -> list[TaskRun]:
        runs: dict[str, TaskRun] = {}
        pending = [n for n in self.tasks if n in self.included]  # in the DAG's order
        waiting: list[str] = []  # ready, waiting for a lock
        held: set[str] = set()
        running: dict[Future[TaskRun], str] = {}
        with ThreadPoolExecutor(max_workers=max(1, len(pending))) as pool:
            while True:
                ended = {n: r.result for n, r in runs.items() if r.result in ENDED}
                for name in list(pending):
                    if all(d in ended for d in self.needs[name]):
                        pending.remove(name)
                        expr = self.exprs[name]
                        if expr is None or _holds(expr, ended):
                            waiting.append(name)
                        else:
                            now = time.monotonic()
                            runs[name] = TaskRun(name, "Omitted", started=now, ended=now)
                            break  # an Omitted task may decide others: look again
                else:
                    for name in list(waiting):
                        locks = _mutexes(self.templates[self.tasks[name]["template"]])
                        if held.isdisjoint(locks):
                            waiting.remove(name)
                            held.update(locks)
                            running[pool.submit(self._run_task, name)] = name
                    if not running:
                        break  # what is left waits for a task that never ends, or was never included
                    done, _ = wait(running, return_when=FIRST_COMPLETED)
                    for future in done:
                        name = running.pop(future)
                        runs[name] = future.result()
                        if runs[name].result in ENDED:  # a task that never ends keeps its locks
                            held.difference_update(_mutexes(self.templates[self.tasks[name]["template"]]))
        return sorted(runs.values(), key=lambda r: r.started)

    def _run_task(self, name: str) -> TaskRun:
        started = time.monotonic()
        template = self.templates[self.tasks[name]["template"]]
        resource = template.get("resource")
        if resource is None:
            raise Unsupported(f"template {template['name']}: only resource templates are run")
        if resource.get("action") not in ("create", "apply"):
            raise Unsupported(f"template {template['name']}: action {resource.get('action')}")
        doc = yaml.safe_load(resource["manifest"])
        success, failure = resource.get("successCondition", ""), resource.get("failureCondition", "")
        kind = str(doc.get("kind"))
        if kind in RECORDED_KINDS or not workloads.is_workload(doc):
            if kind in RECORDED_KINDS:
                with self.lock:
                    self.objects[(kind, doc["metadata"]["name"])] = doc
            result = judge(success, failure, doc)
            return TaskRun(name, result or "Running", kind, None, started, time.monotonic())
        job = PodRunner(self.workdir / name, **self.runner_options).run(self._manifests(name, doc))
        result = judge(success, failure, status_of(doc, job))
        return TaskRun(name, result or "Running", kind, job, started, time.monotonic())

    def _manifests(self, name: str, doc: dict[str, Any]) -> str:
        """The recorded ConfigMaps and Secrets (the task's job.sh replaced) and the shrunk object."""
        mounted = set(_mounted_configmaps(doc))
        with self.lock:
            objects = [copy.deepcopy(o) for o in self.objects.values()]
        for obj in objects:
            data = obj.get("data") or {}
            if obj["kind"] == "ConfigMap" and obj["metadata"]["name"] in mounted and "job.sh" in data:
                data["job.sh"] = self.scripts.get(name, data["job.sh"])
        return with_step_secrets(
            yaml.safe_dump_all([*objects, shrink(doc, self.max_replicas)], sort_keys=False)
        )


def run_workflow(
    path: Path,
    workdir: Path,
    scripts: dict[str, str] | None = None,
    target: str | None = None,
    max_replicas: int = 2,
    **runner_options: Any,
) -> list[TaskRun]:
    """Run the Workflow of ``path`` (``workflow.yaml``); ``scripts``: task -> its job's job.sh.

    The tasks that ran or were omitted, in the order they started; tasks missing never
    could start (a task before them never ended).
    """
    driver = _Driver(_workflow(path), workdir, dict(scripts or {}), target, max_replicas, runner_options)
    return driver.run()


__all__ = ["TaskRun", "Unsupported", "run_workflow"]
