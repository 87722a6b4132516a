"""One workload object -> one ir.Job, driven by its entry in the kinds table."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from migrate import ir
from migrate.diagnostics import Collector
from migrate.ir import replace
from migrate.vocab import DependencyType, Format, JobKind

from ..shell.tracker_switches import env_switch, without_switched_off
from . import claims, client_ports, kinds
from .manifest_context import FileContext, K8sObject
from .manifest_fields import ObjectView, Path, fmt_path
from .manifest_pods import PodFacts, ShellBody, analyze_body, read_container_role, read_pod_template
from .raw_keys import RAW_KEYS, pvc_value

# Arrays up to this size keep their expanded index list.
_MAX_EXPANDED_INDICES = 1000
# Fields that name the object; the reader has them already.
_IDENTITY: tuple[Path, ...] = (
    ("apiVersion",),
    ("kind",),
    ("metadata", "name"),
    ("metadata", "namespace"),
    ("metadata", "generateName"),
)


@dataclass
class _Role:
    """One replica role (a component) as read, before it becomes an ir.Component."""

    name: str
    path: Path
    line: int
    replicas: int = 1
    facts: PodFacts = field(default_factory=PodFacts)
    array: ir.ArraySpec | None = None
    deadlines: dict[str, int] = field(default_factory=dict)  # where it was set -> seconds
    retries_per_index: int | None = None
    max_failed_indexes: int | None = None
    restart_policy: str | None = None
    rules: list[str] = field(default_factory=list)
    dependencies: list[ir.Dependency] = field(default_factory=list)
    raw: list[ir.RawItem] = field(default_factory=list)
    tasks_per_pod: int | None = None
    pods_per_job: int = 1
    template_path: Path | None = None  # where the role's pod template is


def build_job(
    obj: K8sObject,
    workload: kinds.WorkloadKind,
    job_id: str,
    path: str,
    context: FileContext,
    diags: Collector,
) -> ir.Job:
    view = ObjectView(obj.data, diags, job_id, obj.origin)
    for read_by_the_reader in _IDENTITY:
        view.touch(read_by_the_reader)
    raw: list[ir.RawItem] = []
    labels = _unique_pairs(
        pair for meta in (("metadata",), *workload.metadata) for pair in view.string_map((*meta, "labels"))
    )
    annotations = _unique_pairs(
        pair for meta in (("metadata",), *workload.metadata) for pair in _annotations(view, meta, raw)
    )
    roles = [role for spec in workload.roles for role in _read_roles(view, spec, obj)]
    _apply_procs(view, workload, roles)
    for role in roles:
        role.facts.resources = claims.with_claimed_devices(
            view, role.template_path, role.facts.resources, context
        )
    for role in roles:
        _attach_config_map_scripts(view, role, context)
    entry_body = _entrypoint(view, workload, roles)
    # Each script once, even when several roles run it (a ConfigMap mounted by all roles).
    bodies = list({id(b): b for b in [*([entry_body] if entry_body else []), *_role_bodies(roles)]}.values())
    label_map = dict(labels) | {k: v for role in roles for k, v in role.facts.labels.items()}
    raw.extend(item for role in roles for item in (*role.raw, *role.facts.raw))
    job = ir.Job(
        id=job_id,
        source=ir.SourceRef(path, Format.KUBERNETES, obj.line, obj.end_line, obj.document),
        kind=workload.ir_kind,
        name=obj.name,
        api_version=obj.api_version,
        components=tuple([_component(role, _master_port(roles, workload.master_port)) for role in roles])
        or (ir.Component(),),
        time_limit_s=_time_limit(view, workload, roles, labels, annotations, raw),
        hold=any(view.boolean(p) for p in workload.suspend),
        array=next((role.array for role in roles if role.array), None),
        dependencies=tuple([d for role in roles for d in role.dependencies]),
        placement=_placement(view, workload, obj, roles, labels, annotations, raw),
        failure=_failure(view, workload, roles),
        modules=_unique(m for body in bodies for m in body.facts.modules),
        software_envs=_unique(s for body in bodies for s in body.facts.software_envs),
        storage=_storage(roles, bodies, context, raw),
        monitoring=_monitoring(roles, bodies, context, label_map),
        schedule=_schedule(view, workload),
        services=_services(view, workload, obj, roles, context),
        submits=_unique(s for body in bodies for s in body.facts.submits),
        labels=tuple([ir.KeyValue(k, v) for k, v in labels]),
        annotations=tuple([ir.KeyValue(k, v) for k, v in annotations]),
        script=_script_info(bodies),
    )
    _ttl_and_gang(view, workload, roles, labels, annotations, raw)
    raw.extend(item for body in bodies for item in body.facts.raw)
    raw.extend(view.leftovers())
    unresolved = tuple(dict.fromkeys(view.unresolved))  # a request and its limit name one variable twice
    return replace(job, raw=tuple(sorted(raw, key=lambda item: item.line or 0)), unresolved=unresolved)


# Roles


def _role_paths(view: ObjectView, spec: kinds.Roles) -> Iterator[tuple[str, Path]]:
    if spec.shape == kinds.SINGLE:
        if spec.at and not view.has(spec.at):
            if not spec.optional:
                _missing(view, spec.at)
            return
        yield spec.default_name, spec.at
    elif spec.shape == kinds.NAMED_MAP:
        found = view.mapping(spec.at)
        if not found and not spec.optional and not view.has(spec.at):
            _missing(view, spec.at)
        for name in found or ():
            if isinstance(name, str):
                yield name, (*spec.at, name)
    else:
        items = view.sequence(spec.at)
        if not items and not spec.optional and not view.has(spec.at):
            _missing(view, spec.at)
        for index, item in enumerate(items or ()):
            name = view.string((*spec.at, index, spec.name_key)) if isinstance(item, dict) else None
            yield name or f"{spec.at[-1]}-{index}", (*spec.at, index)


def _missing(view: ObjectView, path: Path) -> None:
    parent = path[:-1]
    view.diags.add(
        "K8S-MISSING-FIELD", f"{fmt_path(path)} is missing: no pods to run", view.line(parent), view.job
    )


def _read_roles(view: ObjectView, spec: kinds.Roles, obj: K8sObject) -> Iterator[_Role]:
    claim_templates = _claim_templates(view) if obj.kind == JobKind.STATEFUL_SET else ()
    for name, path in _role_paths(view, spec):
        role = _Role(name, path, view.line(path) if path else obj.line)
        if spec.replicas is not None:
            replicas = view.integer((*path, *spec.replicas))
            role.replicas = replicas if replicas is not None else 1
        if spec.group_size is not None:
            size = view.integer((*path, *spec.group_size))
            per_replica = (size if size is not None else spec.group_default) - spec.group_less
            if per_replica <= 0:
                continue  # groups of the leader alone: no pods in this role
            role.replicas *= per_replica
        if spec.job_spec is not None:
            _read_job_spec(view, (*path, *spec.job_spec), role, spec.indexed_array)
        if spec.container is not None:
            role.facts = read_container_role(
                view, (*path, *spec.container), spec.container_resources, spec.image_parts
            )
        elif spec.pod_template is not None:
            template = (*path, *spec.pod_template)
            if spec.template_fallback is not None and not view.has(template):
                template = (*path, *spec.template_fallback)
            if template and not view.has(template):
                view.diags.add(
                    "K8S-MISSING-FIELD",
                    f"{fmt_path(template)} is missing: no pod template to run",
                    view.line(template[:-1]) if len(template) > 1 else obj.line,
                    view.job,
                )
            else:
                injected = kinds.injected_volumes(obj.api_version, obj.kind, name)
                role.facts = read_pod_template(view, template, claim_templates, injected, obj.name or "")
                role.template_path = template
        role.restart_policy = view.string((*path, *spec.restart_policy)) if spec.restart_policy else None
        _elastic_bounds(view, spec, role)
        _role_extras(view, spec, role)
        yield role


def _claim_templates(view: ObjectView) -> tuple[str, ...]:
    names = []
    for tpath, _ in view.items(("spec", "volumeClaimTemplates")):
        name = view.string((*tpath, "metadata", "name"))
        if name:
            names.append(name)
    return tuple(names)


def _read_job_spec(view: ObjectView, js: Path, role: _Role, indexed_array: bool) -> None:
    """A batch/v1 JobSpec: parallelism, completions, retries per index, pod failure rules."""
    parallelism = view.integer((*js, "parallelism"))
    completions = view.integer((*js, "completions"))
    mode = view.string((*js, "completionMode"))
    if indexed_array:
        if mode == "Indexed" and completions is not None and completions > 0:
            # parallelism defaults to 1 in Kubernetes: one index at a time.
            role.array = ir.ArraySpec(
                spec=f"0-{completions - 1}",
                indices=tuple(range(completions)) if completions <= _MAX_EXPANDED_INDICES else (),
                count=completions,
                max_concurrent=parallelism if parallelism is not None else 1,
            )
        else:
            role.replicas = parallelism if parallelism is not None else 1
            if completions is not None:
                line = view.line((*js, "completions"))
                origin = fmt_path((*js, "completions"))
                role.raw.append(RAW_KEYS.item("completions", str(completions), line, origin))
    else:
        # A replicated Job of a JobSet: its parallel pods add to the role's pods.
        role.replicas *= parallelism if parallelism is not None else 1
        role.pods_per_job = max(parallelism, 1) if parallelism is not None else 1
        view.touch((*js, "completions"))
        view.touch((*js, "completionMode"))
    deadline = view.integer((*js, "activeDeadlineSeconds"))
    if deadline is not None:
        role.deadlines[fmt_path((*js, "activeDeadlineSeconds"))] = deadline
    role.retries_per_index = view.integer((*js, "backoffLimitPerIndex"))
    role.max_failed_indexes = view.integer((*js, "maxFailedIndexes"))
    role.rules.extend(_pod_failure_rules(view, (*js, "podFailurePolicy", "rules")))


def _pod_failure_rules(view: ObjectView, path: Path) -> Iterator[str]:
    for rpath, _ in view.items(path):
        action = view.string((*rpath, "action")) or "?"
        if view.has((*rpath, "onExitCodes")):
            operator = view.string((*rpath, "onExitCodes", "operator")) or "In"
            values = view.strings((*rpath, "onExitCodes", "values"))
            container = view.string((*rpath, "onExitCodes", "containerName"))
            where = f" in container {container}" if container else ""
            yield f"{action} on exit code {operator} [{','.join(values)}]{where}"
        for cpath, _ in view.items((*rpath, "onPodConditions")):
            condition = view.string((*cpath, "type")) or "?"
            status = view.string((*cpath, "status"))
            yield f"{action} on pod condition {condition}" + (
                f"={status}" if status not in (None, "True") else ""
            )


def _elastic_bounds(view: ObjectView, spec: kinds.Roles, role: _Role) -> None:
    low = view.integer((*role.path, *spec.min_replicas)) if spec.min_replicas else None
    high = view.integer((*role.path, *spec.max_replicas)) if spec.max_replicas else None
    if low is not None or high is not None:
        origin = fmt_path(role.path)
        text = f"{role.name}: {low if low is not None else '?'}-{high if high is not None else '?'} replicas"
        role.raw.append(RAW_KEYS.item("elastic-replicas", text, role.line, origin))


def _role_extras(view: ObjectView, spec: kinds.Roles, role: _Role) -> None:
    """Per-role dependencies, gangs, retries and policies (JobSet, Volcano tasks)."""
    if spec.depends_on:
        _role_dependencies(view, spec, role)
    if spec.gang:
        gang = view.integer((*role.path, *spec.gang))
        if gang is not None:
            where = (*role.path, *spec.gang)
            role.raw.append(
                RAW_KEYS.item("gang-size", f"{role.name}: {gang}", view.line(where), fmt_path(where))
            )
    if spec.retries:
        retries = view.integer((*role.path, *spec.retries))
        if retries is not None:
            where = (*role.path, *spec.retries)
            role.raw.append(
                RAW_KEYS.item("max-retry", f"{role.name}: {retries}", view.line(where), fmt_path(where))
            )
    if spec.policies:
        role.rules.extend(_event_policies(view, (*role.path, *spec.policies)))


def _role_dependencies(view: ObjectView, spec: kinds.Roles, role: _Role) -> None:
    assert spec.depends_on is not None
    where = (*role.path, *spec.depends_on)
    value = view.peek(where)
    if isinstance(value, list):  # JobSet: [{name, status}]
        for dpath, _ in view.items(where):
            target = view.string((*dpath, "name")) or "?"
            status = view.string((*dpath, "status"))
            _add_dependency(view, role, dpath, (spec.dependency_prefix + target,), status, False)
    elif isinstance(value, dict):  # Volcano: {name: [...], iteration: any|all}
        names = view.strings((*where, "name"))
        iteration = view.string((*where, "iteration"))
        targets = tuple([spec.dependency_prefix + str(n) for n in names])
        _add_dependency(view, role, where, targets, None, iteration == "any")
    elif value is not None:
        view.bad_type(where, "a list or a mapping", value)


def _add_dependency(
    view: ObjectView, role: _Role, where: Path, targets: tuple[str, ...], status: str | None, any_of: bool
) -> None:
    line = view.line(where)
    role.dependencies.append(
        ir.Dependency(DependencyType.DEPENDS_ON, targets, status=status, any_of=any_of, line=line)
    )
    # ir.Dependency cannot say which component waits: keep that next to it.
    text = f"{role.name} waits for {(' or ' if any_of else ' and ').join(targets)}" + (
        f" ({status})" if status else ""
    )
    role.raw.append(RAW_KEYS.item("dependsOn", text, line, fmt_path(where)))


def _event_policies(view: ObjectView, path: Path) -> Iterator[str]:
    for ppath, _ in view.items(path):
        action = view.string((*ppath, "action")) or "?"
        events = [view.string((*ppath, "event")), *view.strings((*ppath, "events"))]
        triggers = [e for e in events if e]
        exit_code = view.integer((*ppath, "exitCode"))
        if exit_code is not None:
            triggers.append(f"exit code {exit_code}")
        timeout = view.get((*ppath, "timeout"))
        after = f" after {timeout}" if timeout else ""
        yield f"{action} on {' or '.join(triggers) or '?'}{after}"


def _apply_procs(view: ObjectView, workload: kinds.WorkloadKind, roles: list[_Role]) -> None:
    """Processes per pod (nprocPerNode, slotsPerWorker) -> tasks per node of the matching roles."""
    for path in workload.procs_per_pod:
        value = view.get(path)
        if value is None:
            continue
        count = None
        if isinstance(value, int) and not isinstance(value, bool):
            count = value
        elif isinstance(value, str) and (value.isascii() and value.isdigit()):
            count = int(value)
        for role in roles:
            if workload.procs_roles and role.name not in workload.procs_roles:
                continue
            if count is not None:
                role.tasks_per_pod = role.tasks_per_pod or count
            elif value in ("gpu", "auto") and role.facts.resources.gpus_per_node:
                role.tasks_per_pod = role.tasks_per_pod or role.facts.resources.gpus_per_node
            elif value == "cpu" and role.facts.resources.cpus_per_node:
                role.tasks_per_pod = role.tasks_per_pod or role.facts.resources.cpus_per_node
        if count is None:
            if not isinstance(value, str):
                view.bad_type(path, "a number of processes", value)
            elif roles:  # 'auto', 'gpu', 'cpu': decided at run time from the node
                roles[0].raw.append(RAW_KEYS.item(str(path[-1]), value, view.line(path), fmt_path(path)))


def _entrypoint(view: ObjectView, workload: kinds.WorkloadKind, roles: list[_Role]) -> ShellBody | None:
    """A RayJob's entrypoint: a shell command line run against the cluster."""
    if workload.entrypoint is None:
        return None
    text = view.string(workload.entrypoint)
    if not text:
        return None
    body = analyze_body("sh", text, view.value_line(workload.entrypoint), view)
    if roles:
        roles[0].facts.launchers.extend(body.facts.launchers)
    return body


def _attach_config_map_scripts(view: ObjectView, role: _Role, context: FileContext) -> None:
    """Scripts in ConfigMaps of the same file that the role mounts: analyzed like inline scripts."""
    for mount in role.facts.config_maps:
        for body in context.script_bodies(mount.name, view):
            role.facts.bodies.append(body)
            role.facts.launchers.extend(body.facts.launchers)


def _role_bodies(roles: list[_Role]) -> Iterator[ShellBody]:
    for role in roles:
        yield from role.facts.bodies


# Components


def _master_port(roles: list[_Role], default: int | None) -> int | None:
    """The MASTER_PORT the operator sets in every pod of the job: the port a container names for it
    (the Master's pytorchjob-port), else the operator's default (None: no operator sets one)."""
    named = [role.facts.rendezvous_port for role in roles if role.facts.rendezvous_port]
    return named[0] if named and default is not None else default


def _component(role: _Role, master_port: int | None) -> ir.Component:
    """``master_port``: the MASTER_PORT the workload's operator sets in the job's pods."""
    facts = role.facts
    resources = facts.resources
    if role.tasks_per_pod is not None:
        resources = replace(resources, tasks_per_node=role.tasks_per_pod)
    containers = [*facts.containers, *(c for body in facts.bodies for c in body.facts.containers)]
    environment = [*facts.environment, *(e for body in facts.bodies for e in body.facts.environment)]
    return ir.Component(
        name=role.name,
        replicas=role.replicas,
        pods_per_job=role.pods_per_job,
        resources=resources,
        containers=tuple(containers),
        launchers=_unique(facts.launchers),
        environment=_unique(environment),
        line=role.line,
        rendezvous_port=master_port,
    )


# Job-level fields


def _annotations(view: ObjectView, metadata: Path, raw: list[ir.RawItem]) -> list[tuple[str, str]]:
    kept = []
    for key, value in view.string_map((*metadata, "annotations")):
        if key in kinds.DROPPED_ANNOTATIONS:
            where = (*metadata, "annotations", key)
            raw.append(
                RAW_KEYS.item(key, f"<omitted: {len(value)} characters>", view.line(where), fmt_path(where))
            )
            continue
        kept.append((key, value))
    return kept


def _unique_pairs(pairs: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """Key/value pairs with the first value of each key kept."""
    seen: dict[str, str] = {}
    for key, value in pairs:
        seen.setdefault(key, value)
    return list(seen.items())


def _time_limit(
    view: ObjectView,
    workload: kinds.WorkloadKind,
    roles: list[_Role],
    labels: list[tuple[str, str]],
    annotations: list[tuple[str, str]],
    raw: list[ir.RawItem],
) -> int | None:
    """The tightest of the deadlines found: whichever fires first ends the job."""
    found: dict[str, int] = {}
    for path in workload.time_limit:
        value = view.integer(path)
        if value is not None:
            found[fmt_path(path)] = value
    for role in roles:
        found.update(role.deadlines)
        if role.facts.deadline_s is not None and role.template_path is not None:
            found[fmt_path((*role.template_path, "spec", "activeDeadlineSeconds"))] = role.facts.deadline_s
    for key, text in [*labels, *annotations]:
        if key in kinds.MAX_EXEC_TIME_KEYS:
            if text.strip().isascii() and text.strip().isdigit():
                found[key] = int(text)
            else:
                view.bad_type(("metadata", "labels", key), "a number of seconds", text)
    positive = {k: v for k, v in found.items() if v > 0}
    if len(set(positive.values())) > 1:
        text = ", ".join(f"{k}={v}" for k, v in positive.items())
        raw.append(RAW_KEYS.item("time-limits", text, view.line(("spec",)), "deadlines"))
    return min(positive.values()) if positive else None


def _first(values: Iterable[Any]) -> Any:
    return next((v for v in values if v is not None and v != ""), None)


def _keyed(pairs: Iterable[tuple[str, str]], keys: tuple[str, ...]) -> str | None:
    return _first(value for key, value in pairs if key in keys)


def _pod_pairs(roles: list[_Role]) -> list[tuple[str, str]]:
    return [pair for role in roles for pair in (*role.facts.labels.items(), *role.facts.annotations.items())]


def _placement(
    view: ObjectView,
    workload: kinds.WorkloadKind,
    obj: K8sObject,
    roles: list[_Role],
    labels: list[tuple[str, str]],
    annotations: list[tuple[str, str]],
    raw: list[ir.RawItem],
) -> ir.Placement:
    object_pairs = [*labels, *annotations]
    pod_pairs = _pod_pairs(roles)
    _touch_pod_annotations(view, roles, (*kinds.QUEUE_KEYS, *kinds.PRIORITY_KEYS, *kinds.TOPOLOGY_KEYS))
    queue = _first(view.string(p) for p in workload.queue) or _keyed(
        [*object_pairs, *pod_pairs], kinds.QUEUE_KEYS
    )
    priority = (
        _first(view.string(p) for p in workload.priority)
        or _keyed([*object_pairs, *pod_pairs], kinds.PRIORITY_KEYS)
        or _first(role.facts.priority_class for role in roles)
    )
    scheduler = _first(view.string(p) for p in workload.scheduler) or _first(
        role.facts.scheduler for role in roles
    )
    topology = [
        ir.KeyValue(kinds.TOPOLOGY_KEYS[key], value)
        for key, value in [*object_pairs, *pod_pairs]
        if key in kinds.TOPOLOGY_KEYS
    ]
    for path in workload.network_topology:
        if view.mapping(path):
            mode = view.string((*path, "mode")) or "hard"
            tier = view.get((*path, "highestTierAllowed"))
            topology.append(
                ir.KeyValue("network-topology", f"{mode} tier<={tier}" if tier is not None else mode)
            )
    for role in roles:
        # A pod priority class that lost to the job's own priority is still worth seeing.
        if role.facts.priority_class and role.facts.priority_class != priority and role.template_path:
            where = (*role.template_path, "spec", "priorityClassName")
            raw.append(
                RAW_KEYS.item(
                    "priorityClassName", role.facts.priority_class, view.line(where), fmt_path(where)
                )
            )
    affinities = _unique(role.facts.affinity for role in roles if role.facts.affinity)
    return ir.Placement(
        queue=queue,
        priority=priority,
        namespace=obj.namespace,
        topology=_unique(topology),
        tolerations=_unique(t for role in roles for t in role.facts.tolerations),
        affinity="; ".join(affinities) or None,
        scheduler=scheduler,
    )


def _touch_pod_annotations(view: ObjectView, roles: list[_Role], keys: Iterable[str]) -> None:
    """Pod-template annotations read into typed fields are no raw items."""
    wanted = set(keys)
    for role in roles:
        if role.template_path is None:
            continue
        for key in role.facts.annotations:
            if key in wanted:
                view.touch((*role.template_path, "metadata", "annotations", key))


def _failure(view: ObjectView, workload: kinds.WorkloadKind, roles: list[_Role]) -> ir.FailurePolicy:
    # With several roles, say which role a rule belongs to.
    rules = [f"{role.name}: {rule}" if len(roles) > 1 else rule for role in roles for rule in role.rules]
    rules.extend(_event_policies(view, workload.policies[0]) if workload.policies else ())
    rules.extend(_jobset_rules(view) if workload.kind == JobKind.JOBSET else ())
    return ir.FailurePolicy(
        max_retries=_first(view.integer(p) for p in workload.retries),
        retries_per_index=_first(role.retries_per_index for role in roles),
        max_failed_indexes=_first(role.max_failed_indexes for role in roles),
        restart_policy=_first(role.restart_policy or role.facts.restart_policy for role in roles),
        rules=tuple(rules),
    )


def _jobset_rules(view: ObjectView) -> Iterator[str]:
    strategy = view.string(("spec", "failurePolicy", "restartStrategy"))
    if strategy:
        yield f"restart strategy {strategy}"
    for rpath, _ in view.items(("spec", "failurePolicy", "rules")):
        action = view.string((*rpath, "action")) or "?"
        reasons = view.strings((*rpath, "onJobFailureReasons"))
        targets = view.strings((*rpath, "targetReplicatedJobs"))
        text = action + (f" on {','.join(reasons)}" if reasons else "")
        yield text + (f" for {','.join(targets)}" if targets else "")
        view.touch((*rpath, "name"))


def _ttl_and_gang(
    view: ObjectView,
    workload: kinds.WorkloadKind,
    roles: list[_Role],
    labels: list[tuple[str, str]],
    annotations: list[tuple[str, str]],
    raw: list[ir.RawItem],
) -> None:
    for path in workload.ttl:
        ttl = view.integer(path)
        if ttl is not None:
            raw.append(RAW_KEYS.item("ttlSecondsAfterFinished", str(ttl), view.line(path), fmt_path(path)))
    for path in workload.gang:
        gang = view.integer(path)
        if gang is not None:
            raw.append(RAW_KEYS.item("gang-size", str(gang), view.line(path), fmt_path(path)))
    gang_label = _keyed([*labels, *annotations, *_pod_pairs(roles)], kinds.GANG_KEYS)
    if gang_label:
        raw.append(RAW_KEYS.item("gang-size", gang_label, view.line(("metadata",)), kinds.GANG_KEYS[0]))


def _storage(
    roles: list[_Role], bodies: list[ShellBody], context: FileContext, raw: list[ir.RawItem]
) -> tuple[ir.StoragePath, ...]:
    found = [
        *(s for role in roles for s in role.facts.storage),
        *(s for b in bodies for s in b.facts.storage),
    ]
    # The same path mounted by several containers or roles is one storage use (the first line is kept).
    paths = tuple({(s.path, s.access, s.via): s for s in reversed(found)}.values())[::-1]
    for item in paths:
        claim = item.path[4:] if item.path.startswith("pvc:") else None
        if claim and claim in context.claims:
            raw.append(
                RAW_KEYS.item(
                    "pvc", pvc_value(claim, context.claims[claim]), item.line, "PersistentVolumeClaim"
                )
            )
    return paths


def _monitoring(
    roles: list[_Role], bodies: list[ShellBody], context: FileContext, labels: dict[str, str]
) -> tuple[ir.MonitoringHook, ...]:
    hooks = [hook for role in roles for hook in role.facts.monitoring]
    hooks.extend(hook for body in bodies for hook in body.facts.monitoring)
    for scoped in context.monitoring:
        if all(labels.get(k) == v for k, v in scoped.selector):
            hooks.append(scoped.hook)
    off = [kind for body in bodies for kind in body.facts.trackers_off]
    off += [
        kind for role in roles for var in role.facts.environment if (kind := env_switch(var.name, var.value))
    ]
    return _unique(without_switched_off(hooks, off))


def _schedule(view: ObjectView, workload: kinds.WorkloadKind) -> ir.Schedule | None:
    if workload.schedule is None:
        return None
    cron = view.string(workload.schedule)
    if not cron:
        view.diags.add(
            "K8S-MISSING-FIELD", f"{fmt_path(workload.schedule)} is missing", view.line(("spec",)), view.job
        )
        return None
    parent = workload.schedule[:-1]
    return ir.Schedule(
        cron=cron,
        timezone=view.string((*parent, "timeZone")),
        concurrency=view.string((*parent, "concurrencyPolicy")),
        line=view.line(workload.schedule),
    )


def _services(
    view: ObjectView, workload: kinds.WorkloadKind, obj: K8sObject, roles: list[_Role], context: FileContext
) -> tuple[ir.Service, ...]:
    if not workload.serving:
        return ()
    view.touch(("spec", "selector"))  # repeats the pod labels; required boilerplate
    pod_labels = {k: v for role in roles for k, v in role.facts.labels.items()}
    pod_labels |= {key: obj.name for key in workload.name_labels if obj.name}
    serves = _serves(view, workload, roles)
    ports = client_ports.pod_ports(workload, [port for role in roles for port in role.facts.ports], serves)
    ports.extend(port for path in workload.service_ports if (port := view.integer(path)) is not None)
    addresses: list[str] = []
    selectable = pod_labels | dict(workload.member_labels)  # a Service may select some of the pods
    for service in context.services:
        if service.selector and all(selectable.get(k) == v for k, v in service.selector):
            theirs = client_ports.for_clients(workload, service.ports, serves)
            if theirs or not service.ports:  # a Service of the operator's own ports only is no client's
                ports.extend(theirs)
                addresses.append(service.name)
    return (
        ir.Service(
            name=obj.name or "",
            replicas=sum(role.replicas for role in roles) if roles else None,
            ports=_unique(ports),
            autoscaling=context.autoscalers.get((obj.kind, obj.name or "")),
            addresses=tuple(sorted(set(addresses) - {""})),
            pod_labels=tuple([ir.KeyValue(k, v) for k, v in sorted(pod_labels.items())]),
        ),
    )


def _serves(view: ObjectView, workload: kinds.WorkloadKind, roles: list[_Role]) -> bool:
    """Ray Serve runs: a Serve config in the object, or a ``serve run``/``serve deploy`` command."""
    if workload.serve_port is None:
        return False
    if any(view.has(path) for path in workload.serve_config):
        return True
    texts = [
        *(text for role in roles for text in client_ports.container_texts(role.facts.containers)),
        *(body.text for role in roles for body in role.facts.bodies),
    ]
    return client_ports.serve_command(texts)


def _script_info(bodies: list[ShellBody]) -> ir.ScriptInfo | None:
    """The shell scripts the job runs (inline, ConfigMap, entrypoint); the first is the body."""
    scripts = [body for body in bodies if body.is_script]
    if not scripts:
        return None
    first = scripts[0]
    return ir.ScriptInfo(
        shell=first.shell,
        statements=sum(b.facts.statements for b in scripts),
        understood=sum(b.facts.understood for b in scripts),
        unparsed=tuple([u for b in scripts for u in b.facts.unparsed]),
        slurm_vars=_unique(v for b in scripts for v in b.facts.slurm_vars),
        first_command_line=first.line,
        body=first.text,
    )


def _unique(items: Iterable[Any]) -> tuple[Any, ...]:
    return tuple(dict.fromkeys(items))
