"""Argo Workflows -> IR jobs: one job per container or script template a DAG task or step runs.

A ``Workflow``, ``WorkflowTemplate``, ``ClusterWorkflowTemplate`` or
``CronWorkflow`` is walked from its entrypoint. A task or step that runs a pod
(a ``container`` or ``script`` template) becomes one IR job named
``workflow-task``; one that runs a ``dag`` or ``steps`` template is walked in
turn. The pod is read by the Kubernetes reader, as the batch/v1 Job Argo's pod
amounts to (its container, the template's and the workflow's pod fields, the
retry limit as the back-off limit, the deadlines), so that resources, volumes,
env and images mean what they mean elsewhere. Order becomes typed dependencies
between the jobs: ``depends`` and ``dependencies`` through ``depends.py``, each
group of ``steps`` ``afterok`` on the group before. Fan-out is a job array.
``templateRef`` is looked up among the WorkflowTemplates of the file and, once
the scan has read every file, of all scanned files (``library``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from migrate import ir
from migrate.diagnostics import Collector
from migrate.translators.interfaces import NO_CONTEXT, ReadContext
from migrate.translators.kubernetes import kinds as k8s_kinds
from migrate.translators.kubernetes.manifest_context import FileContext, K8sObject
from migrate.translators.kubernetes.manifest_workloads import build_job
from migrate.vocab import ArgoKind, DependencyType
from migrate.yamlload import Document, LineDict, LineList

from . import depends, fields, items
from .raw_keys import RAW_KEYS
from .scopes import Library, Scope, library_of, scope_of, scopes
from .substitution import map_strings

_SNIFF_HEAD = 64 * 1024
_API = re.compile(r"^[\"']?apiVersion[\"']?[ \t]*:[ \t]*[\"']?argoproj\.io/", re.MULTILINE)
_KIND = re.compile(
    r"^[\"']?kind[\"']?[ \t]*:[ \t]*[\"']?"
    r"(?:Workflow|WorkflowTemplate|ClusterWorkflowTemplate|CronWorkflow)\b",
    re.MULTILINE,
)
_PARAMETER = re.compile(r"\{\{\s*((?:inputs|workflow)\.parameters\.[-\w]+)\s*\}\}")
_JOB_WORKLOAD = k8s_kinds.workload_kind("batch", "Job")
_MAX_INDICES = 1000


def sniff(text: str) -> bool:
    """Whether a file holds an Argo workflow object, from its head and without parsing YAML."""
    head = text[:_SNIFF_HEAD]
    # _API needs the group's literal text: most files have none and skip its line-by-line search.
    return "argoproj.io/" in head and bool(_API.search(head) and _KIND.search(head))


def read(text: str, path: str, diags: Collector, context: ReadContext = NO_CONTEXT) -> list[ir.Job]:
    """The jobs of every Argo object in the file; problems go to ``diags``. Never raises.

    ``context.library``: the WorkflowTemplates of other files. A templateRef found in neither
    is ARGO-TEMPLATEREF-UNRESOLVED; the scan reads such a file again once it has
    read every file (``migrate.scan.argo_refs``).
    """
    found = scopes(text)
    known = library_of(found) | (context.library or {})
    jobs: list[ir.Job] = []
    ids: set[str] = set()
    for scope in found:
        walk = _Walk(scope, known, path, diags, ids, {id(s) for s in found})
        try:
            jobs.extend(walk.run())
        except Exception as exc:  # one odd object must not lose the file's others
            diags.add("INTERNAL-ERROR", f"{scope.kind}/{scope.name} not read: {type(exc).__name__}: {exc}")
    return jobs


def read_object(data: LineDict, document: int, path: str, diags: Collector) -> list[ir.Job]:
    """The jobs of one Argo object already parsed (a Katib trial template), at its own lines."""
    scope = scope_of(Document(document, data.line, data.line, data.end_line, data))
    if scope is None:
        return []
    return _Walk(scope, library_of([scope]), path, diags, set(), {id(scope)}).run()


def unresolved_refs(text: str) -> set[tuple[bool, str]]:
    """The WorkflowTemplates a file's templateRefs name that the file does not hold."""
    found = scopes(text)
    own = set(library_of(found))
    wanted: set[tuple[bool, str]] = set()
    for scope in found:
        for template in scope.templates.values():
            for task in _calls(template):
                ref = task.get("templateRef")
                if isinstance(ref, dict) and isinstance(ref.get("name"), str):
                    wanted.add((ref.get("clusterScope") is True, ref["name"]))
        ref = scope.spec.get("workflowTemplateRef")
        if isinstance(ref, dict) and isinstance(ref.get("name"), str):
            wanted.add((ref.get("clusterScope") is True, ref["name"]))
    return wanted - own


def _calls(template: LineDict) -> Iterator[LineDict]:
    dag = template.get("dag")
    if isinstance(dag, dict) and isinstance(dag.get("tasks"), list):
        yield from (t for t in dag["tasks"] if isinstance(t, LineDict))
    steps = template.get("steps")
    if isinstance(steps, list):
        for group in steps:
            if isinstance(group, list):
                yield from (s for s in group if isinstance(s, LineDict))


@dataclass
class _Pending:
    """A job of the walk, before its dependencies are final."""

    job: ir.Job
    dependencies: list[ir.Dependency] = field(default_factory=list)
    raw: list[ir.RawItem] = field(default_factory=list)


@dataclass
class _Node:
    """What one task or step ran: the jobs that start it and the jobs that end it."""

    entries: list[_Pending] = field(default_factory=list)
    exits: list[_Pending] = field(default_factory=list)


@dataclass(frozen=True)
class _FanOut:
    array: ir.ArraySpec
    line: int
    items: items.Source


class _Walk:
    def __init__(
        self, root: Scope, library: Library, path: str, diags: Collector, ids: set[str], own: set[int]
    ) -> None:
        self.own = own  # the scopes of this file: their lines are lines of this file
        self.root = root
        self.library = library
        self.path = path
        self.diags = diags
        self.ids = ids
        self.jobs: list[_Pending] = []
        self.parallelism = _integer(root.spec.get("parallelism"))
        self.arguments = _named_values(root.spec.get("arguments"), ("value",), "workflow")

    def run(self) -> list[ir.Job]:
        scope = self.root
        ref = scope.spec.get("workflowTemplateRef")
        if isinstance(ref, LineDict) and isinstance(ref.get("name"), str):
            target = self.library.get((ref.get("clusterScope") is True, ref["name"]))
            if target is None:
                self._unresolved(
                    f"workflowTemplateRef {ref['name']}", scope.spec.key_line("workflowTemplateRef")
                )
                return []
            scope = target
            # the template's own arguments are defaults: the Workflow's override them
            self.arguments = (
                _named_values(target.spec.get("arguments"), ("value",), "workflow") | self.arguments
            )
        entry = self.root.spec.get("entrypoint") or scope.spec.get("entrypoint")
        if not isinstance(entry, str):
            if self.root.kind in fields.LIBRARY_KINDS:
                return []  # a library of templates: its templates run where they are referenced
            self.diags.add(
                "ARGO-NO-ENTRYPOINT", f"{self.root.kind}/{self.root.name} has no entrypoint", self.root.line
            )
            return []
        template = scope.templates.get(entry)
        if template is None:
            self.diags.add(
                "ARGO-TEMPLATE-MISSING",
                f"entrypoint {entry!r} is not a template of {self.root.kind}/{self.root.name}",
                self.root.spec.key_line("entrypoint"),
            )
            return []
        template = with_parameters(template, self.arguments)
        self._invoke(scope, template, [self.root.name], None, None, [], template.line)
        schedule, extra = self._schedule()
        out = []
        for pending in self.jobs:
            job = pending.job
            raw = (*job.raw, *pending.raw)
            if schedule is not None and not pending.dependencies:
                job = replace(job, schedule=schedule)
                raw = (*raw, *extra)
            out.append(replace(job, dependencies=tuple(pending.dependencies), raw=tuple(raw)))
        return out

    # Templates

    def _invoke(
        self,
        scope: Scope,
        template: LineDict,
        names: list[str],
        fanout: _FanOut | None,
        limit: int | None,
        stack: list[int],
        at: int,
    ) -> _Node:
        bodies = [key for key in fields.TEMPLATE_BODIES if key in template]
        key = hash((id(scope), str(template.get("name", id(template)))))
        if key in stack:
            return _Node()  # a template that calls itself: Argo would recurse until a condition stops it
        if "dag" in bodies:
            return self._dag(scope, template, names, limit, [*stack, key])
        if "steps" in bodies:
            return self._steps(scope, template, names, limit, [*stack, key])
        if bodies and bodies[0] in fields.POD_BODIES:
            pending = self._pod(scope, template, bodies[0], names, fanout, at)
            return _Node([pending], [pending]) if pending else _Node()
        what = bodies[0] if bodies else "no body"
        self.diags.add(
            "ARGO-NOT-A-POD",
            f"template {template.get('name')!r} ({what}) runs no container of its own; it is not a job",
            template.line,
        )
        return _Node()

    def _resolve(self, scope: Scope, call: LineDict) -> tuple[Scope, LineDict] | None:
        name = call.get("template")
        if isinstance(name, str):
            found = scope.templates.get(name)
            if found is None:
                self.diags.add(
                    "ARGO-TEMPLATE-MISSING",
                    f"{call.get('name')!r} runs template {name!r}, "
                    f"which {scope.kind}/{scope.name} does not define",
                    call.key_line("template"),
                )
                return None
            return scope, found
        inline = call.get("inline")
        if isinstance(inline, LineDict):
            return scope, inline
        ref = call.get("templateRef")
        if isinstance(ref, LineDict) and isinstance(ref.get("name"), str):
            target = self.library.get((ref.get("clusterScope") is True, ref["name"]))
            if target is None:
                self._unresolved(f"templateRef {ref['name']}", call.key_line("templateRef"))
                return None
            found = target.templates.get(str(ref.get("template")))
            if found is None:
                self.diags.add(
                    "ARGO-TEMPLATE-MISSING",
                    f"templateRef: {target.kind}/{target.name} has no template {ref.get('template')!r}",
                    call.key_line("templateRef"),
                )
                return None
            return target, found
        self.diags.add("ARGO-TEMPLATE-MISSING", f"{call.get('name')!r} names no template to run", call.line)
        return None

    def _unresolved(self, what: str, line: int) -> None:
        self.diags.add(
            "ARGO-TEMPLATEREF-UNRESOLVED",
            f"{what}: no WorkflowTemplate of that name among the scanned files; its tasks are not read",
            line,
        )

    def _dag(
        self, scope: Scope, template: LineDict, names: list[str], limit: int | None, stack: list[int]
    ) -> _Node:
        dag = template["dag"]
        tasks = [
            t for t in (dag.get("tasks") if isinstance(dag, dict) else None) or () if isinstance(t, LineDict)
        ]
        limit = _tightest(limit, _integer(template.get("parallelism")))
        nodes: dict[str, _Node] = {}
        for task in tasks:
            nodes[str(task.get("name"))] = self._call(scope, task, names, limit, stack)
        referenced: set[str] = set()
        for task in tasks:
            name = str(task.get("name"))
            expr, line = self._expression(task, set(nodes))
            if expr is None:
                continue
            referenced.update(depends.tasks_of(expr))
            for dep in depends.to_slurm(expr):
                self._wait(nodes[name], [nodes[t] for t in dep.tasks if t in nodes], dep, line)
        starts = [n for t, n in nodes.items() if not self._has_order(tasks, t)]
        target = dag.get("target") if isinstance(dag, dict) else None
        ends = (
            [nodes[t] for t in str(target).split() if t in nodes]
            if isinstance(target, str)
            else [n for t, n in nodes.items() if t not in referenced]
        )
        return _Node([p for n in starts for p in n.entries], [p for n in ends for p in n.exits])

    @staticmethod
    def _has_order(tasks: list[LineDict], name: str) -> bool:
        task = next(t for t in tasks if str(t.get("name")) == name)
        return bool(task.get("depends") or task.get("dependencies"))

    def _expression(self, task: LineDict, known: set[str]) -> tuple[depends.Expr | None, int]:
        written = task.get("depends")
        if isinstance(written, str) and written.strip():
            line = task.value_line("depends")
            try:
                expr = depends.parse(written)
            except depends.DependsSyntaxError as exc:
                self.diags.add(
                    "ARGO-DEPENDS-SYNTAX", f"task {task.get('name')!r}: depends {written!r}: {exc}", line
                )
                return None, line
        elif isinstance(task.get("dependencies"), list):
            line = task.key_line("dependencies")
            continue_on: dict[str, Any] = (
                task["continueOn"] if isinstance(task.get("continueOn"), dict) else {}
            )
            names = [str(n) for n in task["dependencies"]]
            extra = {
                n: [r for key, r in fields.CONTINUE_ON.items() if continue_on.get(key) is True] for n in names
            }
            expr = depends.from_dependencies(names, extra)
        else:
            return None, task.line
        for name in depends.tasks_of(expr):
            if name not in known:
                self.diags.add(
                    "ARGO-DEPENDS-UNKNOWN-TASK",
                    f"task {task.get('name')!r} depends on {name!r}, which is not a task of this DAG",
                    line,
                )
        return expr, line

    def _wait(self, node: _Node, upstream: list[_Node], dep: depends.SlurmDependency, line: int) -> None:
        targets = tuple(dict.fromkeys(p.job.name or p.job.id for n in upstream for p in n.exits))
        if not targets:
            return
        if not dep.exact:
            self.diags.add(
                "ARGO-DEPENDS-NO-SLURM-TYPE", f"{dep.written}: read as {dep.type}; {dep.why}", line
            )
        key = "argo-depends" if dep.exact else "argo-depends-approximated"
        value = f"{dep.written} -> {dep.type}"  # the why follows from the term (depends.to_slurm)
        for pending in node.entries:
            pending.dependencies.append(
                ir.Dependency(dep.type, targets, any_of=dep.any_of and len(targets) > 1, line=line)
            )
            pending.raw.append(RAW_KEYS.item(key, value, line, "depends"))

    def _steps(
        self, scope: Scope, template: LineDict, names: list[str], limit: int | None, stack: list[int]
    ) -> _Node:
        limit = _tightest(limit, _integer(template.get("parallelism")))
        groups = template["steps"] if isinstance(template["steps"], LineList) else LineList()
        previous: list[_Node] = []
        first: list[_Node] = []
        for index, group in enumerate(groups):
            steps = (
                [group]
                if isinstance(group, LineDict)
                else [s for s in group or () if isinstance(s, LineDict)]
            )
            current = [self._call(scope, step, names, limit, stack) for step in steps]
            if previous:
                line = groups.item_line(index)
                prior = [str(s.get("name")) for s in _group(groups[index - 1])]
                order = depends.SlurmDependency(
                    DependencyType.AFTEROK,
                    tuple(prior),
                    written=f"after step group {index} ({', '.join(prior)})",
                )
                for node in current:
                    self._wait(node, previous, order, line)
            else:
                first = current
            previous = current or previous
        return _Node([p for n in first for p in n.entries], [p for n in previous for p in n.exits])

    def _call(
        self, scope: Scope, call: LineDict, names: list[str], limit: int | None, stack: list[int]
    ) -> _Node:
        resolved = self._resolve(scope, call)
        if resolved is None:
            return _Node()
        target_scope, template = resolved
        template = with_parameters(template, self.arguments | _parameters(call, template))
        fanout = self._fanout(call, limit)
        node = self._invoke(
            target_scope, template, [*names, str(call.get("name"))], fanout, limit, stack, call.line
        )
        when = call.get("when")
        for pending in node.entries:
            if isinstance(when, str):
                pending.raw.append(RAW_KEYS.item("argo-when", when, call.value_line("when"), "when"))
        return node

    def _fanout(self, call: LineDict, limit: int | None) -> _FanOut | None:
        limit = _tightest(limit, self.parallelism)
        if isinstance(call.get(fields.WITH_ITEMS), list):
            listed = tuple(call[fields.WITH_ITEMS])
            array = _array(f"0-{len(listed) - 1}", 0, len(listed), limit)
            return _FanOut(array, call.key_line(fields.WITH_ITEMS), items.Listed(listed))
        sequence = call.get(fields.WITH_SEQUENCE)
        if isinstance(sequence, dict):
            line = call.key_line(fields.WITH_SEQUENCE)
            count, start, end = (_integer(sequence.get(k)) for k in ("count", "start", "end"))
            first = start or 0
            if end is None and count is not None:
                end = first + count - 1
            if end is not None:
                # Argo counts down when the end is below the start; the array's first task gets the start
                low, high = min(first, end), max(first, end)
                format_ = sequence.get("format") if isinstance(sequence.get("format"), str) else "%d"
                counted = items.Counted(low, first, 1 if first <= end else -1, format_ or "%d")
                return _FanOut(_array(f"{low}-{high}", low, high - low + 1, limit), line, counted)
            self.diags.add("ARGO-FANOUT-UNKNOWN", "withSequence with a count known only at run time", line)
            unknown = items.AtRunTime("the withSequence count is known only at run time")
            return _FanOut(ir.ArraySpec(fields.WITH_SEQUENCE, (), 0, limit), line, unknown)
        if fields.WITH_PARAM in call:
            line = call.key_line(fields.WITH_PARAM)
            self.diags.add(
                "ARGO-FANOUT-UNKNOWN",
                f"withParam {str(call[fields.WITH_PARAM])[:60]!r}: "
                "one task per item of a list known at run time",
                line,
            )
            unknown = items.AtRunTime("the withParam items exist only at run time")
            return _FanOut(ir.ArraySpec(fields.WITH_PARAM, (), 0, limit), line, unknown)
        return None

    # One pod

    def _pod(
        self,
        scope: Scope,
        template: LineDict,
        body: str,
        names: list[str],
        fanout: _FanOut | None,
        at: int,
    ) -> _Pending | None:
        name = "-".join(names)
        task = "/".join(names[1:]) or str(template.get("name"))
        here = id(scope) in self.own
        array: ir.ArraySpec | None = None
        unfilled: list[ir.RawItem] = []
        if fanout is not None:
            template, array, unfilled = _each_item(template, body, fanout, here, at)
        job_id = f"{self.path}#{self.root.kind}/{self.root.name}/{task}"
        while job_id in self.ids:
            job_id += "~2"
        self.ids.add(job_id)
        synthetic = _as_batch_job(self.root, template, body, name)
        obj = K8sObject(
            synthetic,
            self.root.document,
            template.line if here else at,
            template.end_line if here else at,
            "",
            "batch/v1",
            "batch",
            "Job",
            name,
            self.root.namespace,
        )
        assert _JOB_WORKLOAD is not None
        read_as_job = Collector(self.path)
        job = build_job(obj, _JOB_WORKLOAD, job_id, self.path, FileContext(), read_as_job)
        paths = _ArgoPaths(scope, template, body)
        self.diags.extend([replace(d, message=paths.of(d.message)) for d in read_as_job.items])
        job = replace(
            job,
            raw=tuple(
                replace(item, origin=paths.of(item.origin), value=paths.of(item.value)) for item in job.raw
            ),
        )
        runs = (
            str(template.get("name"))
            if here
            else f"{scope.kind} {scope.name}, template {template.get('name')}"
        )
        source = f"{self.root.name}/{task} ({runs})"
        raw = [RAW_KEYS.item("argo-task", source, template.line if here else at, str(self.root.kind))]
        job = replace(
            job,
            api_version=fields.API_VERSION,
            array=array,
            raw=(*job.raw, *raw, *unfilled),
        )
        pending = _Pending(job)
        self.jobs.append(pending)
        return pending

    def _schedule(self) -> tuple[ir.Schedule | None, list[ir.RawItem]]:
        if self.root.kind != ArgoKind.CRON_WORKFLOW:
            return None, []
        spec = self.root.data.get("spec")
        if not isinstance(spec, LineDict):
            return None, []
        listed = spec.get("schedules")
        crons: list[tuple[str, int]] = []
        if isinstance(listed, LineList):
            crons = [(str(c), listed.item_line(i)) for i, c in enumerate(listed) if isinstance(c, str)]
        elif isinstance(spec.get("schedule"), str):
            crons = [(spec["schedule"], spec.value_line("schedule"))]
        if not crons:
            return None, []
        timezone = spec.get("timezone") if isinstance(spec.get("timezone"), str) else None
        policy = spec.get("concurrencyPolicy") if isinstance(spec.get("concurrencyPolicy"), str) else None
        extra = [RAW_KEYS.item("argo-schedule", cron, line, "schedules") for cron, line in crons[1:]]
        return ir.Schedule(crons[0][0], timezone, policy, crons[0][1]), extra


def _parameters(call: LineDict, template: LineDict) -> dict[str, str]:
    """The input parameters a call gives a template: its arguments over the template's defaults."""
    return _named_values(template.get("inputs"), ("default", "value"), "inputs") | _named_values(
        call.get("arguments"), ("value",), "inputs"
    )


def _named_values(owner: Any, keys: tuple[str, ...], scope: str) -> dict[str, str]:
    """``{parameters: [{name, value}]}`` as ``{"<scope>.parameters.<name>": value}``."""
    values: dict[str, str] = {}
    listed = owner.get("parameters") if isinstance(owner, dict) else None
    for param in listed if isinstance(listed, list) else ():
        if not isinstance(param, dict) or not isinstance(param.get("name"), str):
            continue
        for key in keys:
            value = param.get(key)
            if isinstance(value, str | int | float) and not isinstance(value, bool):
                values[f"{scope}.parameters.{param['name']}"] = str(value)
    return values


def with_parameters(node: Any, values: dict[str, str]) -> Any:
    """``node`` with ``{{inputs.parameters.NAME}}`` filled in from ``values``, lines kept."""
    if not values:
        return node
    return map_strings(node, lambda text: _PARAMETER.sub(lambda m: values.get(m.group(1), m.group(0)), text))


class _ArgoPaths:
    """The Kubernetes reader names fields by their path in the Job it read; the user wrote them
    in the workflow: ``spec.template.spec.containers[0].image`` is ``spec.templates[2].container.image``."""

    def __init__(self, scope: Scope, template: LineDict, body: str) -> None:
        spec = ".".join(fields.SPEC_PATH[scope.kind])
        listed = scope.spec.get("templates")
        names = [t.get("name") for t in listed] if isinstance(listed, list) else []
        name = template.get("name")
        at = f"{spec}.templates[{names.index(name)}]" if name in names else f"{spec}.templates[{name}]"
        self.rules = [
            ("spec.template.spec.containers[0]", f"{at}.{body}"),
            ("spec.template.metadata", f"{at}.metadata"),
            ("spec.backoffLimit", f"{at}.retryStrategy.limit"),
            ("spec.activeDeadlineSeconds", f"{spec}.activeDeadlineSeconds"),
        ]
        # pod fields: the template's own, else the workflow's
        self.pod_fields = [(f"spec.template.spec.{key}", f"{at}.{key}") for key in template] + [
            (f"spec.template.spec.{key}", f"{spec}.{key}") for key in fields.WORKFLOW_POD_FIELDS
        ]

    def of(self, text: str) -> str:
        for job_path, argo_path in (*self.rules, *self.pod_fields):
            text = re.sub(r"(?<![\w.-])" + re.escape(job_path) + r"(?![\w-])", argo_path, text)
        return text


def _group(group: Any) -> list[LineDict]:
    if isinstance(group, LineDict):
        return [group]
    return [s for s in group or () if isinstance(s, LineDict)]


def _each_item(
    template: LineDict, body: str, fanout: _FanOut, here: bool, at: int
) -> tuple[LineDict, ir.ArraySpec, list[ir.RawItem]]:
    """The template with each array task's own item, the array that sets it, and what stays unfilled."""
    filled = items.fill(template, body, fanout.items)
    unfilled = [
        RAW_KEYS.item("argo-item-unfilled", why, line if here else at, what)
        for what, why, line in filled.unfilled
    ]
    return filled.template, replace(fanout.array, values=filled.values), unfilled


def _array(spec: str, first: int, count: int, limit: int | None) -> ir.ArraySpec:
    indices = tuple(range(first, first + count)) if count <= _MAX_INDICES else ()
    return ir.ArraySpec(spec, indices, count, limit)


def _integer(value: Any) -> int | None:
    """An IntOrString field as a number; None for an expression Argo fills in at run time."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def _tightest(*limits: int | None) -> int | None:
    given = [n for n in limits if n]
    return min(given) if given else None


# The pod as a batch/v1 Job, for the Kubernetes reader


def _set(
    target: LineDict, key: str, value: Any, source: LineDict | None = None, source_key: str = ""
) -> None:
    """``target[key] = value``, keeping the line of where the value was written."""
    target[key] = value
    if source is not None and (source_key or key) in source.spans:
        target.spans[key] = source.spans[source_key or key]
    else:
        line = getattr(value, "line", target.line)
        target.spans[key] = (line, line, getattr(value, "end_line", line))


def _as_batch_job(root: Scope, template: LineDict, body: str, name: str) -> LineDict:
    line, end = template.line, template.end_line
    job = LineDict(line, end)
    _set(job, "apiVersion", "batch/v1")
    _set(job, "kind", "Job")
    metadata = LineDict(line, line)
    _set(metadata, "name", name)
    if root.namespace:
        _set(metadata, "namespace", root.namespace)
    object_meta = root.data.get("metadata")
    if isinstance(object_meta, LineDict) and isinstance(object_meta.get("labels"), dict):
        _set(metadata, "labels", object_meta["labels"], object_meta)
    _set(job, "metadata", metadata)
    spec = LineDict(line, end)
    retry = template.get("retryStrategy")
    limit = _integer(retry.get("limit")) if isinstance(retry, dict) else None
    if limit is not None:
        _set(spec, "backoffLimit", limit, retry, "limit")
    else:
        _set(spec, "backoffLimit", 0)  # Argo does not retry a pod without a retryStrategy
    deadline = _integer(root.spec.get("activeDeadlineSeconds"))
    if deadline is not None:
        _set(spec, "activeDeadlineSeconds", deadline, root.spec)
    pod = LineDict(line, end)
    if isinstance(template.get("metadata"), LineDict):
        _set(pod, "metadata", template["metadata"], template)
    pod_spec = LineDict(line, end)
    for key in fields.WORKFLOW_POD_FIELDS:
        if key in root.spec:
            _set(pod_spec, key, root.spec[key], root.spec)
    for key in fields.TEMPLATE_POD_FIELDS:
        if key in template:
            _set(pod_spec, "initContainers" if key == "sidecars" else key, template[key], template)
    volumes = LineList(line, end)
    for owner in (root.spec, template):
        listed = owner.get(fields.VOLUMES)
        if isinstance(listed, LineList):
            for index, volume in enumerate(listed):
                volumes.append(volume)
                volumes.spans.append(listed.spans[index] if index < len(listed.spans) else (line, line))
    if volumes:
        _set(pod_spec, fields.VOLUMES, volumes)
    template_deadline = _integer(template.get("activeDeadlineSeconds"))
    if template_deadline is not None:
        _set(pod_spec, "activeDeadlineSeconds", template_deadline, template)
    container = template[body]
    containers = LineList(template.key_line(body), template.value_end_line(body))
    containers.append(_script_container(container) if body == "script" else container)
    containers.spans.append((template.value_line(body), template.value_end_line(body)))
    _set(pod_spec, "containers", containers)
    _set(pod_spec, "restartPolicy", "Never")
    _set(pod, "spec", pod_spec)
    _set(spec, "template", pod)
    _set(job, "spec", spec)
    return job


def _script_container(script: Any) -> Any:
    """A script template's container, running its source as ``command -c source``."""
    if not isinstance(script, LineDict):
        return script
    container = LineDict(script.line, script.end_line)
    for key, value in script.items():
        if key not in ("source", "command"):
            _set(container, key, value, script)
    source = script.get("source")
    written = script.get("command")
    command = LineList(script.key_line("command"), script.value_end_line("command"))
    words = [str(w) for w in written] if isinstance(written, list) else ["sh"]
    for index, word in enumerate(words):
        command.append(word)
        spans = getattr(written, "spans", [])
        command.spans.append(spans[index] if index < len(spans) else (command.line, command.line))
    if isinstance(source, str):
        at = script.value_line("source")
        command.extend(["-c", source])
        command.spans.extend([(at, at), (at, script.value_end_line("source"))])
    _set(container, "command", command)
    return container


__all__ = ["Library", "Scope", "library_of", "read", "scopes", "sniff", "unresolved_refs"]
