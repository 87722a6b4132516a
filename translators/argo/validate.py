"""The rules Argo's controller applies to a workflow that its JSON schema leaves out.

The schemas in ``schemas/`` check the fields; these check how they fit
together, as Argo's validation (``workflow/validate``) and the CRDs' CEL
rules do: a template does exactly one thing, names are unique, the entrypoint
and every called template exist, a ``depends`` expression parses and names
tasks of its DAG, ``depends`` and ``dependencies`` are not mixed, and
``continueOn`` is not used with ``depends``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from migrate.vocab import ArgoKind

from . import depends, fields

PathPart = str | int
Issues = Iterator[tuple[list[PathPart], str]]


def rules(obj: Mapping[str, Any]) -> Issues:
    """Every cross-field problem of one Argo object."""
    try:
        kind = ArgoKind(str(obj.get("kind")))
    except ValueError:
        return
    at: list[PathPart] = list(fields.SPEC_PATH[kind])
    spec: Any = obj
    for key in at:
        spec = spec.get(key) if isinstance(spec, Mapping) else None
    if not isinstance(spec, Mapping):
        return
    listed = spec.get("templates")
    templates: list[Any] = listed if isinstance(listed, list) else []
    names = [t.get("name") for t in templates if isinstance(t, Mapping)]
    for index, name in enumerate(names):
        if name in names[:index]:
            yield [*at, "templates", index, "name"], f"template name {name!r} is used twice"
    entry = spec.get("entrypoint")
    if isinstance(entry, str) and entry not in names and "workflowTemplateRef" not in spec:
        yield [*at, "entrypoint"], f"entrypoint {entry!r} is not a template of this {kind}"
    if kind not in fields.LIBRARY_KINDS and entry is None and "workflowTemplateRef" not in spec:
        yield [*at], f"a {kind} needs an entrypoint (or a workflowTemplateRef)"
    for index, template in enumerate(templates):
        if isinstance(template, Mapping):
            yield from _template(
                template, [*at, "templates", index], set(n for n in names if isinstance(n, str))
            )


def _template(template: Mapping[str, Any], at: list[PathPart], names: set[str]) -> Issues:
    bodies = [key for key in fields.TEMPLATE_BODIES if key in template]
    if len(bodies) != 1:
        what = ", ".join(bodies) if bodies else "none"
        yield at, f"a template does exactly one of {', '.join(fields.TEMPLATE_BODIES)} (this one: {what})"
    dag = template.get("dag")
    if isinstance(dag, Mapping) and isinstance(dag.get("tasks"), list):
        yield from _dag(dag["tasks"], [*at, "dag", "tasks"], names)
    steps = template.get("steps")
    if isinstance(steps, list):
        for group_index, group in enumerate(steps):
            for step_index, step in enumerate(group if isinstance(group, list) else []):
                if isinstance(step, Mapping):
                    yield from _called(step, [*at, "steps", group_index, step_index], names)


def _called(call: Mapping[str, Any], at: list[PathPart], names: set[str]) -> Issues:
    sources = [key for key in ("template", "templateRef", "inline") if key in call]
    if len(sources) != 1:
        yield at, "a task or step names exactly one of template, templateRef, inline"
    name = call.get("template")
    if isinstance(name, str) and name not in names:
        yield [*at, "template"], f"template {name!r} is not defined"


def _dag(tasks: list[Any], at: list[PathPart], names: set[str]) -> Issues:
    task_names = [t.get("name") for t in tasks if isinstance(t, Mapping)]
    known = {n for n in task_names if isinstance(n, str)}
    for index, task in enumerate(tasks):
        if not isinstance(task, Mapping):
            continue
        where = [*at, index]
        yield from _called(task, where, names)
        if task.get("name") in task_names[:index]:
            yield [*where, "name"], f"task name {task.get('name')!r} is used twice"
        written = task.get("depends")
        listed = task.get("dependencies")
        if written is not None and listed is not None:
            yield where, "cannot use both 'depends' and 'dependencies'"
        if written is not None and "continueOn" in task:
            yield where, "cannot use 'continueOn' when using 'depends'"
        mentioned: list[str] = []
        if isinstance(written, str):
            try:
                mentioned = depends.tasks_of(depends.parse(written))
            except depends.DependsSyntaxError as exc:
                yield [*where, "depends"], f"depends {written!r}: {exc}"
        if isinstance(listed, list):
            mentioned += [str(n) for n in listed]
        for name in mentioned:
            if name not in known:
                yield (
                    [*where, "depends" if written is not None else "dependencies"],
                    (f"{name!r} is not a task of this DAG"),
                )
            elif name == task.get("name"):
                yield (
                    [*where, "depends" if written is not None else "dependencies"],
                    "a task cannot wait for itself",
                )


__all__ = ["rules"]
