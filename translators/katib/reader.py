"""A Katib Experiment -> one IR job: one trial's workload, run as a sweep of trials.

The trial template (``spec.trialTemplate.trialSpec``, or a ConfigMap of the
same file that ``trialTemplate.configMap`` names) is read by the reader of its
own kind: the Kubernetes reader for a Job, PyTorchJob, TrainJob ..., the Argo
reader for a Workflow. So the job's components, resources and commands are
one trial's. The sweep is the job's array: ``maxTrialCount`` tasks,
``parallelTrialCount`` at once. ``ir.Sweep`` keeps the search: parameters,
trial placeholders, objective, algorithm.

Katib fills ``${trialParameters.NAME}`` into the template's text for each
trial. Where one stands in a container's command, args or an env value, it
becomes ``$(TRIAL_NAME)``, a value each trial sets (the kubelet's own
reference syntax, as Argo's ``{{item}}`` becomes ``$(ARGO_ITEM)``); trial
metadata the whole search shares (namespace, kind, labels) is filled in as
Katib does. A placeholder anywhere else stays as written and is reported.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from migrate import ir
from migrate.diagnostics import Collector
from migrate.translators.argo import fields as argo_fields
from migrate.translators.argo import reader as argo_reader
from migrate.translators.kubernetes import kinds
from migrate.translators.kubernetes.manifest_context import FileContext, K8sObject
from migrate.translators.kubernetes.manifest_fields import ObjectView, compact
from migrate.translators.kubernetes.manifest_workloads import build_job
from migrate.translators.kubernetes.object_kinds import ObjectKind
from migrate.vocab import Format, JobKind
from migrate.yamlload import Document, LineDict, LineList, load_documents

from . import fields, trials
from .raw_keys import RAW_KEYS

_TEMPLATE = ("spec", "trialTemplate")
_MAX_INDICES = 1000
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_NOT_A_NAME = re.compile(r"[^A-Za-z0-9]+")
_ONLY_EXPANDED = (
    "only commands, args and env values can vary per trial; Katib fills it into each trial's manifest"
)
# Fields of the Experiment read here (the rest are kept as raw items by the view).
_READ = (
    ("spec", "parameters"),
    ("spec", "objective"),
    ("spec", "algorithm"),
    ("spec", "parallelTrialCount"),
    ("spec", "maxTrialCount"),
    ("spec", "maxFailedTrialCount"),
    (*_TEMPLATE, "trialSpec"),
    (*_TEMPLATE, "configMap"),
    (*_TEMPLATE, "trialParameters"),
)


def is_experiment(group: str, kind: str) -> bool:
    return group == fields.GROUP and kind == fields.KIND


def read(
    obj: K8sObject,
    job_id: str,
    path: str,
    context: FileContext,
    documents: list[Document],
    diags: Collector,
) -> list[ir.Job]:
    """The Experiment as IR jobs (one; one per pod task of an Argo Workflow trial)."""
    view = ObjectView(obj.data, diags, job_id)
    for read_here in (*_READ, ("apiVersion",), ("kind",), ("metadata",)):
        view.touch(read_here)
    parameters = _parameters(view)
    trial_parameters = _trial_parameters(view)
    raw = _experiment_raw(view)
    raw.extend(view.leftovers())
    template, origin = _template(obj, view, documents, job_id, diags)
    sweep = ir.Sweep(
        trial_kind=None,
        algorithm=view.string(("spec", "algorithm", "algorithmName")) or fields.DEFAULT_ALGORITHM,
        settings=_settings(view, ("spec", "algorithm", "algorithmSettings")),
        parameters=parameters,
        objective=_objective(view),
        max_failed_trials=view.integer(("spec", "maxFailedTrialCount")),
        metrics_collector=_collector(view),
        early_stopping=view.string(("spec", "earlyStopping", "algorithmName")),
        line=obj.line,
    )
    array = _array(view, sweep)
    base = ir.Job(
        id=job_id,
        source=ir.SourceRef(path, Format.KUBERNETES, obj.line, obj.end_line, obj.document),
        kind=JobKind.KATIB_EXPERIMENT,
        name=obj.name,
        api_version=obj.api_version,
        array=array,
        placement=ir.Placement(namespace=obj.namespace),
        labels=tuple(ir.KeyValue(k, v) for k, v in view.string_map(("metadata", "labels"))),
        annotations=tuple(ir.KeyValue(k, v) for k, v in view.string_map(("metadata", "annotations"))),
    )
    if template is None:
        return [replace(base, sweep=replace(sweep, trial_parameters=trial_parameters), raw=tuple(raw))]
    filled = _Filling(obj, template, trial_parameters, {p.name for p in parameters})
    copy = filled.node(template, ())
    sweep = replace(sweep, trial_parameters=filled.trial_parameters())
    trial_jobs = _trial_jobs(obj, copy, origin, job_id, path, context, diags)
    if not trial_jobs:  # its placeholders do not matter: nothing of the trial is kept
        return [replace(base, sweep=sweep, raw=tuple(raw))]
    raw.extend(
        RAW_KEYS.item("katib-placeholder-unfilled", why, line, what) for what, why, line in filled.unfilled
    )
    for what, _, line in filled.unfilled:
        diags.add("K8S-KATIB-PLACEHOLDER", f"{obj.name or '-'}: {what} stays as written", line, job_id)
    return [_as_sweep(base, trial, sweep, raw, len(trial_jobs) > 1) for trial in trial_jobs]


def _as_sweep(base: ir.Job, trial: ir.Job, sweep: ir.Sweep, raw: list[ir.RawItem], several: bool) -> ir.Job:
    """One trial's job as the Experiment's: its workload, the Experiment's identity and array."""
    return replace(
        trial,
        id=trial.id if several else base.id,
        source=base.source,
        kind=base.kind,
        name=trial.name if several else base.name,
        api_version=base.api_version,
        array=base.array,
        placement=replace(trial.placement, namespace=base.placement.namespace or trial.placement.namespace),
        labels=(*base.labels, *trial.labels),
        annotations=(*base.annotations, *trial.annotations),
        raw=tuple(sorted((*raw, *trial.raw), key=lambda item: item.line or 0)),
        sweep=replace(sweep, trial_kind=trial.kind),
    )


# ---------------------------------------------------------------------------
# The search


def _parameters(view: ObjectView) -> tuple[ir.SearchParameter, ...]:
    out = []
    for path, item in view.items(("spec", "parameters")):
        name = view.string((*path, "name"))
        if not name or not isinstance(item, dict):
            continue
        space = (*path, "feasibleSpace")
        out.append(
            ir.SearchParameter(
                name=name,
                type=view.string((*path, "parameterType")) or "",
                min=_text(view.get((*space, "min"))),
                max=_text(view.get((*space, "max"))),
                step=_text(view.get((*space, "step"))),
                values=_texts(view.get((*space, "list"))),
                distribution=view.string((*space, "distribution")),
                line=view.line(path),
            )
        )
    return tuple(out)


def _trial_parameters(view: ObjectView) -> tuple[ir.TrialParameter, ...]:
    out = []
    for path, _ in view.items((*_TEMPLATE, "trialParameters")):
        name = view.string((*path, "name"))
        if name:
            out.append(
                ir.TrialParameter(
                    name=name,
                    reference=view.string((*path, "reference")) or "",
                    description=view.string((*path, "description")) or "",
                    line=view.line(path),
                )
            )
    return tuple(out)


def _objective(view: ObjectView) -> ir.Objective | None:
    path = ("spec", "objective")
    if view.mapping(path) is None:
        return None
    return ir.Objective(
        type=view.string((*path, "type")),
        goal=_text(view.get((*path, "goal"))),
        metric=view.string((*path, "objectiveMetricName")),
        additional_metrics=tuple(view.strings((*path, "additionalMetricNames"))),
        line=view.line(path),
    )


def _settings(view: ObjectView, path: tuple[str, ...]) -> tuple[ir.KeyValue, ...]:
    out = []
    for item, _ in view.items(path):
        name = view.string((*item, "name"))
        if name:
            out.append(ir.KeyValue(name, _text(view.get((*item, "value"))) or ""))
    return tuple(out)


def _collector(view: ObjectView) -> str | None:
    if view.mapping(("spec", "metricsCollectorSpec")) is None:
        return None
    return view.peek(("spec", "metricsCollectorSpec", "collector", "kind")) or fields.DEFAULT_COLLECTOR


def _array(view: ObjectView, sweep: ir.Sweep) -> ir.ArraySpec:
    """The trials as array tasks: ``maxTrialCount`` of them (a grid's size without it), so many at once."""
    parallel = view.integer(("spec", "parallelTrialCount")) or fields.DEFAULT_PARALLEL_TRIALS
    count = view.integer(("spec", "maxTrialCount"))
    if count is None and sweep.algorithm == fields.GRID:
        count = trials.grid_size(sweep.parameters)
    if not count or count < 1:
        return ir.ArraySpec("trials", (), 0, parallel)  # as many as the search runs: known only then
    indices = tuple(range(count)) if count <= _MAX_INDICES else ()
    return ir.ArraySpec(f"0-{count - 1}", indices, count, parallel)


def _experiment_raw(view: ObjectView) -> list[ir.RawItem]:
    """The Experiment's settings no typed field holds, each under its own key."""
    raw = []
    spec: dict[str, Any] = view.mapping(("spec",)) or {}
    collector = spec.get("metricsCollectorSpec")
    if isinstance(collector, dict):
        view.touch(("spec", "metricsCollectorSpec"))
        raw.append(
            _item(view, "katib-metrics-collector", ("spec", "metricsCollectorSpec"), compact(collector))
        )
    if isinstance(spec.get("earlyStopping"), dict):
        view.touch(("spec", "earlyStopping"))
        raw.append(
            _item(view, "katib-early-stopping", ("spec", "earlyStopping"), compact(spec["earlyStopping"]))
        )
    for key, raw_key in (("resumePolicy", "katib-resume-policy"), ("nasConfig", "katib-nas")):
        if key in spec:
            view.touch(("spec", key))
            raw.append(_item(view, raw_key, ("spec", key), compact(spec[key])))
    template: dict[str, Any] = view.mapping(_TEMPLATE) or {}
    for key, raw_key in (
        ("successCondition", "katib-success-condition"),
        ("failureCondition", "katib-success-condition"),
        ("primaryPodLabels", "katib-primary"),
        ("primaryContainerName", "katib-primary"),
    ):
        if key in template:
            view.touch((*_TEMPLATE, key))
            raw.append(_item(view, raw_key, (*_TEMPLATE, key), f"{key}: {compact(template[key])}"))
    return raw


def _item(view: ObjectView, key: str, path: tuple[str, ...], value: str) -> ir.RawItem:
    return RAW_KEYS.item(key, value, view.line(path), ".".join(path))


# ---------------------------------------------------------------------------
# The trial template


def _template(
    obj: K8sObject, view: ObjectView, documents: list[Document], job_id: str, diags: Collector
) -> tuple[LineDict | None, str]:
    """The trial's manifest and where it was written; None (reported) when it is not in the file."""
    spec = view.mapping((*_TEMPLATE, "trialSpec"))
    if spec is not None:
        return spec, "spec.trialTemplate.trialSpec"
    source = view.mapping((*_TEMPLATE, "configMap"))
    what = f"Experiment/{obj.name or '-'}"
    if source is None:
        diags.add("K8S-MISSING-FIELD", f"{what}: no trialTemplate.trialSpec or configMap", obj.line, job_id)
        return None, ""
    name = source.get("configMapName")
    key = source.get("templatePath")
    namespace = source.get("configMapNamespace") or obj.namespace
    found = _config_map_value(documents, name, namespace, key)
    line = view.line((*_TEMPLATE, "configMap"))
    if found is None:
        diags.add(
            "K8S-KATIB-TEMPLATE-UNRESOLVED",
            f"{what}: the trial template is key {key!r} of ConfigMap {namespace or '-'}/{name or '-'}, which "
            "this file does not hold (Katib's own trial-templates ConfigMap is installed with Katib): "
            "the trials' workload is unknown; put the ConfigMap in the Experiment's file to read it",
            line,
            job_id,
        )
        return None, ""
    text, first_line = found
    # blank lines first, so that the template's lines are the file's (a literal block keeps its lines)
    parsed = load_documents("\n" * (first_line - 1) + text, Collector(diags.path))
    data = parsed[0].data if parsed else None
    if not isinstance(data, LineDict):
        diags.add(
            "K8S-KATIB-TRIAL-KIND",
            f"{what}: key {key!r} of ConfigMap {name} is no manifest; the trials' workload is unknown",
            first_line,
            job_id,
        )
        return None, ""
    return data, f"ConfigMap/{name}[{key}]"


def _config_map_value(
    documents: list[Document], name: object, namespace: object, key: object
) -> tuple[str, int] | None:
    """The text of a ConfigMap key of the file, and the line its value starts at."""
    for doc in documents:
        data = doc.data
        if not isinstance(data, LineDict) or data.get("kind") != ObjectKind.CONFIG_MAP:
            continue
        meta = data.get("metadata")
        values = data.get("data")
        if not isinstance(meta, dict) or not isinstance(values, LineDict) or meta.get("name") != name:
            continue
        if meta.get("namespace") not in (None, namespace) and namespace is not None:
            continue
        if isinstance(key, str) and isinstance(values.get(key), str):
            return values[key], values.value_line(key)
    return None


def _trial_jobs(
    obj: K8sObject,
    template: LineDict,
    origin: str,
    job_id: str,
    path: str,
    context: FileContext,
    diags: Collector,
) -> list[ir.Job]:
    """The trial's workload read by the reader of its kind."""
    api_version = template.get("apiVersion")
    kind = template.get("kind")
    api_version = api_version if isinstance(api_version, str) else ""
    group, _ = kinds.split_api_version(api_version)
    what = f"Experiment/{obj.name or '-'}"
    if group == argo_fields.GROUP and kind in argo_fields.KINDS:
        named = _with_name(template, obj.name or "trial")
        return argo_reader.read_object(named, obj.document, path, diags)
    workload = kinds.workload_kind(group, kind) if isinstance(kind, str) else None
    if workload is None or workload.serving:
        diags.add(
            "K8S-KATIB-TRIAL-KIND",
            f"{what}: the trial template is a {kind or 'manifest with no kind'} ({api_version or '-'}), "
            "not a workload this reader reads; the trials' workload is unknown",
            template.line,
            job_id,
        )
        return []
    trial = K8sObject(
        template,
        obj.document,
        template.line,
        template.end_line,
        origin,
        api_version,
        group,
        str(kind),
        obj.name,
        obj.namespace,
    )
    return [build_job(trial, workload, job_id, path, context, diags)]


def _with_name(template: LineDict, name: str) -> LineDict:
    """Katib names each trial's object; an Argo Workflow template has no name of its own."""
    meta = template.get("metadata")
    if isinstance(meta, dict) and (meta.get("name") or meta.get("generateName")):
        return template
    copy = LineDict(template.line, template.end_line)
    copy.update(template)
    copy.spans = dict(template.spans)
    named = LineDict(template.line, template.line)
    if isinstance(meta, dict):
        named.update(meta)
    named["name"] = name
    copy["metadata"] = named
    return copy


class _Filling:
    """A copy of the trial template with its placeholders filled where each trial can set its own."""

    def __init__(
        self, obj: K8sObject, template: LineDict, declared: tuple[ir.TrialParameter, ...], searched: set[str]
    ) -> None:
        self.obj = obj
        self.template = template
        self.declared = {p.name: p for p in declared}
        self.order = declared
        self.searched = searched
        self.variables: dict[str, str] = {}
        self.unfilled: list[tuple[str, str, int]] = []

    def trial_parameters(self) -> tuple[ir.TrialParameter, ...]:
        return tuple(replace(p, variable=self.variables.get(p.name)) for p in self.order)

    def node(self, node: Any, path: tuple[str | int, ...], line: int = 0) -> Any:
        if isinstance(node, str):
            return self._string(node, path, line)
        if isinstance(node, LineDict):
            copy = LineDict(node.line, node.end_line)
            for key, value in node.items():
                copy[key] = self.node(value, (*path, key), node.value_line(key))
            copy.spans = dict(node.spans)
            return copy
        if isinstance(node, LineList):
            items = LineList(node.line, node.end_line)
            items.extend(self.node(value, (*path, i), node.item_line(i)) for i, value in enumerate(node))
            items.spans = list(node.spans)
            return items
        return node

    def _string(self, text: str, path: tuple[str | int, ...], line: int) -> str:
        expanded = _expanded(path)

        def one(match: re.Match[str]) -> str:
            name = match.group(1)
            where = f"{match.group(0)} in {'.'.join(str(p) for p in path)}"
            parameter = self.declared.get(name)
            if parameter is None:
                self.unfilled.append((where, "no trialParameters entry names it: Katib leaves it too", line))
                return match.group(0)
            constant = self._metadata(parameter.reference)
            if constant is not None:
                return constant
            if not self._per_trial(parameter.reference):
                why = f"its reference {parameter.reference!r} names no parameter of spec.parameters"
                self.unfilled.append((where, why, line))
                return match.group(0)
            if not expanded:
                self.unfilled.append((where, _ONLY_EXPANDED, line))
                return match.group(0)
            variable = self.variables.setdefault(name, variable_name(name, set(self.variables.values())))
            return f"$({variable})"

        return fields.PLACEHOLDER.sub(one, text)

    def _per_trial(self, reference: str) -> bool:
        """A search parameter, or the trial's own name: a value each trial has."""
        meta = fields.METADATA_REFERENCE.fullmatch(reference)
        return reference in self.searched or (meta is not None and meta.group(1) == fields.TRIAL_NAME)

    def _metadata(self, reference: str) -> str | None:
        """Trial metadata every trial shares (Katib's generator fills it in the same way), or None."""
        meta = fields.METADATA_REFERENCE.fullmatch(reference)
        if meta is None:
            return None
        key, index = meta.group(1), None
        indexed = fields.METADATA_INDEXED.fullmatch(key)
        if indexed:
            key, index = indexed.group(1), indexed.group(2)
        values = {
            fields.TRIAL_NAMESPACE: self.obj.namespace,
            fields.TRIAL_KIND: self.template.get("kind"),
            fields.TRIAL_API_VERSION: self.template.get("apiVersion"),
        }
        if key in values and index is None:
            value = values[key]
            return value if isinstance(value, str) else None
        metadata = self.template.get("metadata")
        field = {fields.TRIAL_LABELS: "labels", fields.TRIAL_ANNOTATIONS: "annotations"}.get(key)
        found = metadata.get(field) if field and isinstance(metadata, dict) else None
        value = found.get(index) if isinstance(found, dict) else None
        return value if isinstance(value, str) else None


def _expanded(path: tuple[str | int, ...]) -> bool:
    """Whether the string at ``path`` is one the kubelet (or Argo) expands ``$(NAME)`` in."""
    if len(path) >= 2 and isinstance(path[-1], int) and path[-2] in fields.EXPANDED_LISTS:
        return True
    if (
        len(path) >= 3
        and path[-1] == "value"
        and isinstance(path[-2], int)
        and path[-3] == fields.EXPANDED_ENV
    ):
        return True
    return path[-2:] == fields.EXPANDED_SOURCE


def variable_name(name: str, taken: set[str]) -> str:
    """``learningRate`` -> ``TRIAL_LEARNING_RATE``: the variable a trial parameter becomes."""
    base = "TRIAL_" + _NOT_A_NAME.sub("_", _CAMEL.sub("_", name)).strip("_").upper()
    unique, n = base, 2
    while unique in taken:
        unique, n = f"{base}_{n}", n + 1
    return unique


def _texts(values: Any) -> tuple[str, ...]:
    listed = values if isinstance(values, list) else []
    return tuple(t for t in (_text(v) for v in listed) if t is not None)


def _text(value: Any) -> str | None:
    """A feasible-space number or list item as text (YAML may have typed it)."""
    if value is None or isinstance(value, dict | list):
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


__all__ = ["is_experiment", "read", "variable_name"]
