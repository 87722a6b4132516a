"""Strict, offline validation of Kubernetes manifests: every error, with its path.

Three layers check each object:

1. JSON schemas. Built-in kinds use the strict schemas that the
   ``kubernetes-validate`` package bundles for ``K8S_VERSION`` (unknown fields
   are errors there). Custom resources use the schemas in ``schemas/``, written
   for this project from the upstream Go API types; their pod and job templates
   point into the same bundled Kubernetes definitions, so a typo inside a
   Volcano task or a JobSet replicated job is caught like one in a plain Job.
   A few facts the bundled schemas leave out are added when they are loaded:
   the enum values of common core fields, the quantity syntax, the restart
   policies a Job accepts (see ``_CORE_ENUMS`` and ``_CORE_EXTRA``).
2. Metadata: names (DNS-1123 and the per-kind limits that come from labels and
   generated child names), label keys and values, annotation keys and size, on
   the object and on every embedded template.
3. Cross-field rules the apiserver, a CRD's CEL rules or an operator's webhook
   enforce and a JSON schema cannot express (generated name lengths, references
   between replicated jobs, quota lists that must line up).

A values file of slurm-operator's ``slurm`` chart is not an object: it is told
apart by its keys and checked against the chart's values instead
(``chart_values.py``, ``schemas/slinky-chart-values.json``).

A kind without a schema is a problem ("no schema for ..."), never a pass. The
validators are compiled once per kind and cached: a small Job takes about 0.2 ms,
a JobSet with two GPU pod templates about 2 ms.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator, ValidationError
from referencing import Registry, Resource

from migrate import workloads
from migrate.diagnostics import Collector
from migrate.translators.argo import fields as argo_fields
from migrate.translators.argo import validate as argo_validate
from migrate.translators.kubernetes import chart_values
from migrate.translators.kubernetes.object_kinds import ObjectKind
from migrate.yamlload import LineDict, LineList, load_documents

# The Kubernetes version whose schemas the manifests are checked against.
K8S_VERSION = "1.33"

_DEFS_ID = "https://kubernetes.io/api/_definitions.json"
_SCHEMA_PACKAGE = "migrate.translators.kubernetes"
# Packages whose schemas/ folders hold custom resources' schemas: this one's, and Argo's.
_SCHEMA_PACKAGES = (_SCHEMA_PACKAGE, "migrate.translators.argo")
_SKIPPED_FILES = {
    "kustomization.yaml": "kustomize",
    "kustomization.yml": "kustomize",
    "Kustomization": "kustomize",
}
_YAML_SUFFIXES = (".yaml", ".yml")

PathPart = str | int


class SchemaUnavailableError(RuntimeError):
    """The bundled Kubernetes schemas for the requested version are not installed."""


@dataclass(frozen=True)
class Problem:
    """One reason a manifest would be rejected (or misbehave) on a cluster."""

    path: str  # e.g. spec.tasks[0].template.spec.containers[0].gpus; "" for the whole object
    message: str
    kind: str = ""
    name: str = ""
    rule: str = "schema"  # schema | metadata | kind (cross-field rules) | unknown-kind | yaml | file
    file: str | None = None
    line: int | None = None
    document: int | None = None  # index among the non-empty YAML documents of its file, from 0

    def render(self) -> str:
        where = self.file or "-"
        if self.line is not None:
            where = f"{where}:{self.line}"
        obj = f"{self.kind}/{self.name}" if self.kind or self.name else "-"
        at = f"{self.path}: " if self.path else ""
        return f"{where}: {obj}: {at}{self.message}"

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.path, "message": self.message, "rule": self.rule}
        for key in ("kind", "name", "file", "line", "document"):
            value = getattr(self, key)
            if value not in (None, ""):
                out[key] = value
        return out


@dataclass(frozen=True)
class FileReport:
    path: str
    objects: int
    kinds: tuple[str, ...]  # "apiVersion kind" of each object, in file order
    problems: tuple[Problem, ...]
    skipped: str | None = None  # why the file was not validated (e.g. "kustomize")


@dataclass(frozen=True)
class TreeReport:
    root: str
    k8s_version: str
    files: tuple[FileReport, ...]
    seconds: float

    @property
    def objects(self) -> int:
        return sum(f.objects for f in self.files)

    @property
    def problems(self) -> tuple[Problem, ...]:
        return tuple(p for f in self.files for p in f.problems)

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def kinds(self) -> dict[str, int]:
        return dict(sorted(Counter(k for f in self.files for k in f.kinds).items()))

    def to_dict(self) -> dict[str, Any]:
        return {
            "root": self.root,
            "k8s_version": self.k8s_version,
            "files": len(self.files),
            "skipped": [{"path": f.path, "reason": f.skipped} for f in self.files if f.skipped],
            "objects": self.objects,
            "kinds": self.kinds,
            "problems": [p.to_dict() for p in self.problems],
            "ok": self.ok,
        }


# ---------------------------------------------------------------------------
# Facts added to the bundled core definitions
# ---------------------------------------------------------------------------

# Enum values of core fields (from the Kubernetes API types); the bundled schemas
# only say "string". Null stays allowed, as everywhere in those schemas.
_CORE_ENUMS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("io.k8s.api.core.v1.PodSpec", "restartPolicy", ("Always", "OnFailure", "Never")),
    (
        "io.k8s.api.core.v1.PodSpec",
        "dnsPolicy",
        ("ClusterFirst", "ClusterFirstWithHostNet", "Default", "None"),
    ),
    ("io.k8s.api.core.v1.PodSpec", "preemptionPolicy", ("Never", "PreemptLowerPriority")),
    ("io.k8s.api.core.v1.Container", "imagePullPolicy", ("Always", "IfNotPresent", "Never")),
    ("io.k8s.api.core.v1.Container", "terminationMessagePolicy", ("File", "FallbackToLogsOnError")),
    ("io.k8s.api.core.v1.EphemeralContainer", "imagePullPolicy", ("Always", "IfNotPresent", "Never")),
    ("io.k8s.api.core.v1.EphemeralContainer", "terminationMessagePolicy", ("File", "FallbackToLogsOnError")),
    ("io.k8s.api.core.v1.ContainerPort", "protocol", ("TCP", "UDP", "SCTP")),
    ("io.k8s.api.core.v1.ServicePort", "protocol", ("TCP", "UDP", "SCTP")),
    ("io.k8s.api.core.v1.Toleration", "operator", ("", "Equal", "Exists")),
    ("io.k8s.api.core.v1.Toleration", "effect", ("", "NoSchedule", "PreferNoSchedule", "NoExecute")),
    ("io.k8s.api.core.v1.Taint", "effect", ("NoSchedule", "PreferNoSchedule", "NoExecute")),
    ("io.k8s.api.core.v1.ServiceSpec", "type", ("ClusterIP", "NodePort", "LoadBalancer", "ExternalName")),
    ("io.k8s.api.core.v1.ServiceSpec", "sessionAffinity", ("ClientIP", "None")),
    ("io.k8s.api.core.v1.ServiceSpec", "externalTrafficPolicy", ("Cluster", "Local")),
    ("io.k8s.api.core.v1.ServiceSpec", "internalTrafficPolicy", ("Cluster", "Local")),
    (
        "io.k8s.api.core.v1.ServiceSpec",
        "ipFamilyPolicy",
        ("SingleStack", "PreferDualStack", "RequireDualStack"),
    ),
    (
        "io.k8s.api.core.v1.PersistentVolumeClaimSpec",
        "accessModes",
        ("ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod"),
    ),
    ("io.k8s.api.core.v1.PersistentVolumeClaimSpec", "volumeMode", ("Block", "Filesystem")),
    ("io.k8s.api.batch.v1.JobSpec", "completionMode", ("NonIndexed", "Indexed")),
    ("io.k8s.api.batch.v1.JobSpec", "podReplacementPolicy", ("TerminatingOrFailed", "Failed")),
    ("io.k8s.api.batch.v1.PodFailurePolicyRule", "action", ("FailJob", "FailIndex", "Ignore", "Count")),
    ("io.k8s.api.batch.v1.PodFailurePolicyOnExitCodesRequirement", "operator", ("In", "NotIn")),
    ("io.k8s.api.batch.v1.PodFailurePolicyOnPodConditionsPattern", "status", ("True", "False", "Unknown")),
    ("io.k8s.api.batch.v1.CronJobSpec", "concurrencyPolicy", ("Allow", "Forbid", "Replace")),
    ("io.k8s.api.apps.v1.DeploymentStrategy", "type", ("Recreate", "RollingUpdate")),
    ("io.k8s.api.apps.v1.StatefulSetSpec", "podManagementPolicy", ("OrderedReady", "Parallel")),
    ("io.k8s.api.apps.v1.StatefulSetUpdateStrategy", "type", ("RollingUpdate", "OnDelete")),
    (
        "io.k8s.api.apps.v1.StatefulSetPersistentVolumeClaimRetentionPolicy",
        "whenDeleted",
        ("Retain", "Delete"),
    ),
    (
        "io.k8s.api.apps.v1.StatefulSetPersistentVolumeClaimRetentionPolicy",
        "whenScaled",
        ("Retain", "Delete"),
    ),
    (
        "io.k8s.api.core.v1.NodeSelectorRequirement",
        "operator",
        ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"),
    ),
    (
        "io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelectorRequirement",
        "operator",
        ("In", "NotIn", "Exists", "DoesNotExist"),
    ),
    ("io.k8s.api.core.v1.TopologySpreadConstraint", "whenUnsatisfiable", ("DoNotSchedule", "ScheduleAnyway")),
    ("io.k8s.api.core.v1.TopologySpreadConstraint", "nodeAffinityPolicy", ("Honor", "Ignore")),
    ("io.k8s.api.core.v1.TopologySpreadConstraint", "nodeTaintsPolicy", ("Honor", "Ignore")),
    (
        "io.k8s.api.core.v1.HostPathVolumeSource",
        "type",
        ("", "DirectoryOrCreate", "Directory", "FileOrCreate", "File", "Socket", "CharDevice", "BlockDevice"),
    ),
    ("io.k8s.api.core.v1.SeccompProfile", "type", ("Localhost", "RuntimeDefault", "Unconfined")),
)

# resource.Quantity: a decimal number with an optional SI, binary or exponent suffix.
_QUANTITY = (
    r"^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([KMGTPE]i|[numkMGTPE]|[eE][+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+))?$"
)

_JOB_POD_RESTART = "a Job's pods need restartPolicy OnFailure or Never"
_CONFIGMAP_KEY = {
    "pattern": "^[-._a-zA-Z0-9]+$",
    "maxLength": 253,
    "x-key": True,
    "x-message": "a ConfigMap key may only hold letters, digits, '-', '_' and '.' (at most 253)",
}


def _job_pod(required: bool) -> dict[str, Any]:
    pod: dict[str, Any] = {"properties": {"spec": {"required": ["restartPolicy"]}}, "required": ["spec"]}
    return pod if required else {}


# Rules the apiserver applies to whole objects of a built-in kind, beyond the bundled schema.
_CORE_EXTRA: dict[tuple[str, str], dict[str, Any]] = {
    ("batch/v1", "Job"): {
        "required": ["spec"],
        "properties": {"spec": {"properties": {"template": _job_pod(True)}}},
    },
    ("batch/v1", "CronJob"): {
        "required": ["spec"],
        "properties": {
            "spec": {
                "properties": {
                    "jobTemplate": {
                        "required": ["spec"],
                        "properties": {"spec": {"properties": {"template": _job_pod(True)}}},
                    }
                }
            }
        },
    },
    ("v1", "PersistentVolumeClaim"): {
        "required": ["spec"],
        "properties": {
            "spec": {
                "required": ["accessModes", "resources"],
                "properties": {
                    "accessModes": {"minItems": 1},
                    "resources": {
                        "required": ["requests"],
                        "properties": {"requests": {"required": ["storage"]}},
                    },
                },
            }
        },
    },
    ("v1", "Service"): {
        "properties": {
            "spec": {
                "if": {
                    "anyOf": [
                        {"required": ["clusterIP"], "properties": {"clusterIP": {"const": "None"}}},
                        {"required": ["type"], "properties": {"type": {"const": "ExternalName"}}},
                    ]
                },
                "else": {"required": ["ports"], "properties": {"ports": {"minItems": 1}}},
            }
        }
    },
    ("v1", "ConfigMap"): {
        "properties": {
            "data": {"propertyNames": _CONFIGMAP_KEY},
            "binaryData": {"propertyNames": _CONFIGMAP_KEY},
        }
    },
}
for _kind in ("Deployment", "StatefulSet"):
    _CORE_EXTRA[("apps/v1", _kind)] = {
        "required": ["spec"],
        "properties": {
            "spec": {
                "properties": {
                    "template": {
                        "properties": {
                            "spec": {
                                "properties": {
                                    "restartPolicy": {
                                        "const": "Always",
                                        "x-message": f"a {_kind}'s pods need restartPolicy Always",
                                    }
                                }
                            }
                        }
                    }
                }
            }
        },
    }


def _patch_definitions(defs: dict[str, Any]) -> list[str]:
    """Add the facts above to the bundled definitions; returns what could not be applied."""
    table: dict[str, Any] = defs["$defs"]
    missing: list[str] = []
    for def_name, prop, values in _CORE_ENUMS:
        target = table.get(def_name, {}).get("properties", {}).get(prop)
        if target is None:
            missing.append(f"{def_name}.{prop}")
            continue
        if "items" in target:
            target = target["items"]
        target["enum"] = [*values, None]
    if "io.k8s.apimachinery.pkg.api.resource.Quantity" in table:
        table["io.k8s.apimachinery.pkg.api.resource.Quantity"] = {
            "title": "quantity",
            "anyOf": [{"type": "string", "pattern": _QUANTITY}, {"type": "number"}, {"type": "null"}],
        }
    else:
        missing.append("io.k8s.apimachinery.pkg.api.resource.Quantity")
    job_spec = table.get("io.k8s.api.batch.v1.JobSpec")
    if job_spec is None:
        missing.append("io.k8s.api.batch.v1.JobSpec")
    else:
        # Whatever creates the Job (a user, a CronJob, a JobSet), its pods must not restart Always.
        restart = {"enum": ["OnFailure", "Never", None], "x-message": _JOB_POD_RESTART}
        job_spec.setdefault("allOf", []).append(
            {"properties": {"template": {"properties": {"spec": {"properties": {"restartPolicy": restart}}}}}}
        )
    return missing


# ---------------------------------------------------------------------------
# Schema store
# ---------------------------------------------------------------------------


def _schema_dir(k8s_version: str) -> Traversable:
    try:
        root = resources.files("kubernetes_validate") / "kubernetes-json-schema"
    except ModuleNotFoundError as exc:
        raise SchemaUnavailableError("the kubernetes-validate package is not installed") from exc
    folder = root / f"v{k8s_version}.0-local-strict"
    if not folder.is_dir():
        raise SchemaUnavailableError(
            f"kubernetes-validate has no strict schemas for Kubernetes {k8s_version}"
        )
    return folder


def _core_file_name(api_version: str, kind: str) -> str:
    # Bundle file names: <kind>-<first label of the group>-<version>.json (<kind>-<version>.json for core).
    group, _, version = api_version.rpartition("/")
    prefix = f"{group.split('.')[0]}-" if group else ""
    return f"{kind.lower()}-{prefix}{version}.json"


def _is_builtin_group(api_version: str) -> bool:
    group = api_version.rpartition("/")[0]
    return "." not in group or group.endswith(".k8s.io")


class _Store:
    """The compiled validators of one Kubernetes version, built on first use of each kind."""

    def __init__(self, k8s_version: str) -> None:
        self.k8s_version = k8s_version
        self._core_dir = _schema_dir(k8s_version)
        defs = json.loads((self._core_dir / "_definitions.json").read_text(encoding="utf-8"))
        self.unpatched = _patch_definitions(defs)
        pairs = [(_DEFS_ID, Resource.from_contents(defs))]
        self.custom: dict[tuple[str, str], str] = {}  # (apiVersion, kind) -> schema $id
        entries = [
            e for package in _SCHEMA_PACKAGES for e in resources.files(package).joinpath("schemas").iterdir()
        ]
        for entry in sorted(entries, key=lambda t: t.name):
            if not entry.name.endswith(".json"):
                continue
            schema = json.loads(entry.read_text(encoding="utf-8"))
            pairs.append((schema["$id"], Resource.from_contents(schema)))
            props = schema.get("properties", {})
            if "const" in props.get("apiVersion", {}) and "const" in props.get("kind", {}):
                self.custom[(props["apiVersion"]["const"], props["kind"]["const"])] = schema["$id"]
        self._registry: Registry[Any] = Registry().with_resources(pairs)
        # (apiVersion, kind, the schema its declaration names) -> validator
        self._validators: dict[tuple[str, str, str], Draft202012Validator | None] = {}
        self._by_id: dict[str, Draft202012Validator] = {}

    def schema_validator(self, schema_id: str) -> Draft202012Validator:
        """The validator of one of the schemas in ``schemas/`` by its $id (for files that are not objects)."""
        if schema_id not in self._by_id:
            self._by_id[schema_id] = Draft202012Validator({"$ref": schema_id}, registry=self._registry)
        return self._by_id[schema_id]

    def validator(self, api_version: str, kind: str) -> Draft202012Validator | None:
        schema = _declared_schema(api_version, kind)
        key = (api_version, kind, schema)
        if key not in self._validators:
            self._validators[key] = self._declared(schema) if schema else self._build(api_version, kind)
        return self._validators[key]

    def _declared(self, schema: str) -> Draft202012Validator:
        """The validator of the schema a workload kind's declaration names: a file of ``schemas/``,
        or a path of its own."""
        found = (
            Path(schema)
            if Path(schema).is_absolute()
            else resources.files(_SCHEMA_PACKAGE) / "schemas" / schema
        )
        contents = json.loads(found.read_text(encoding="utf-8"))
        if contents["$id"] not in self._registry:
            self._registry = self._registry.with_resource(contents["$id"], Resource.from_contents(contents))
        return Draft202012Validator({"$ref": contents["$id"]}, registry=self._registry)

    def _build(self, api_version: str, kind: str) -> Draft202012Validator | None:
        if key := self.custom.get((api_version, kind)):
            return Draft202012Validator({"$ref": key}, registry=self._registry)
        if not _is_builtin_group(api_version):
            return None
        entry = self._core_dir / _core_file_name(api_version, kind)
        if not entry.is_file():
            return None
        schema = json.loads(entry.read_text(encoding="utf-8"))
        group, _, version = api_version.rpartition("/")
        wanted = {"group": group, "version": version, "kind": kind}
        if wanted not in schema.get("x-kubernetes-group-version-kind", []):
            return None  # a file of the same name for another group (e.g. batch.example.com)
        self._registry = self._registry.with_resource(schema["$id"], Resource.from_contents(schema))
        root: dict[str, Any] = {"allOf": [{"$ref": schema["$id"]}, _CORE_EXTRA.get((api_version, kind), {})]}
        return Draft202012Validator(root, registry=self._registry)


@cache
def _store(k8s_version: str) -> _Store:
    return _Store(k8s_version)


def supported_custom_kinds(k8s_version: str = K8S_VERSION) -> list[tuple[str, str]]:
    """(apiVersion, kind) of every custom resource with a schema in ``schemas/`` or declared."""
    declared = {(f"{w.group}/{w.versions[0]}", w.kind) for w in workloads.workload_kinds() if w.schema}
    return sorted(set(_store(k8s_version).custom) | declared)


def _declared_workload(api_version: str, kind: str) -> workloads.WorkloadKind | None:
    """The workload kind declared for this apiVersion and kind, when it knows the version."""
    group, _, version = api_version.rpartition("/")
    found = workloads.workload_kind(group, kind)
    return found if found is not None and version in found.versions else None


def _declared_schema(api_version: str, kind: str) -> str:
    """The schema a workload kind's declaration names for its preferred version, or ""."""
    found = _declared_workload(api_version, kind)
    preferred = found is not None and api_version.rpartition("/")[2] == found.versions[0]
    return found.schema if found is not None and preferred else ""


def unapplied_core_facts(k8s_version: str = K8S_VERSION) -> list[str]:
    """Additions to the core definitions that did not apply to this version's schemas."""
    return list(_store(k8s_version).unpatched)


# ---------------------------------------------------------------------------
# Paths and messages
# ---------------------------------------------------------------------------

_PLAIN_KEY = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$-]*$")


def format_path(parts: Iterable[PathPart]) -> str:
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        elif _PLAIN_KEY.match(part):
            out += f".{part}" if out else part
        else:
            out += f"[{json.dumps(part)}]"
    return out


def _short(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _error_problems(err: ValidationError) -> Iterator[tuple[list[PathPart], str]]:
    """One validation error as (path parts, message) pairs."""
    parts: list[PathPart] = list(err.absolute_path)
    schema = err.schema if isinstance(err.schema, Mapping) else {}
    custom = schema.get("x-message")
    if schema.get("x-key") and isinstance(err.instance, str):
        yield [*parts, err.instance], custom or err.message
        return
    if err.validator == "additionalProperties" and isinstance(err.instance, Mapping):
        known = set(schema.get("properties", {}))
        patterns = [re.compile(p) for p in schema.get("patternProperties", {})]
        hints = schema.get("x-unknown", {})  # why a field is not there: by its name, or "*" for any
        for key in err.instance:
            if key not in known and not any(p.search(key) for p in patterns):
                hint = hints.get(key, hints.get("*"))
                yield [*parts, key], f"unknown field {key!r}" + (f": {hint}" if hint else "")
        return
    if err.validator == "required" and isinstance(err.instance, Mapping):
        # jsonschema reports each missing property as its own error, naming it in the message.
        missing = [k for k in err.validator_value if k not in err.instance]
        named = [k for k in missing if repr(k) in err.message] or missing
        for key in named[:1]:
            yield [*parts, key], custom or f"missing required field {key!r}"
        return
    if custom:
        yield parts, custom
        return
    if err.validator == "type":
        wanted = err.validator_value if isinstance(err.validator_value, list) else [err.validator_value]
        names = " or ".join(t for t in wanted if t != "null")
        yield parts, f"expected {names}, got {_json_type(err.instance)} {_short(err.instance)}"
        return
    if err.validator == "const":
        yield parts, f"must be {err.validator_value!r}, not {_short(err.instance)}"
        return
    if err.validator == "enum":
        allowed = ", ".join(repr(v) for v in err.validator_value if v is not None)
        yield parts, f"{_short(err.instance)} is not one of {allowed}"
        return
    if schema.get("title") == "quantity":
        yield parts, f"{_short(err.instance)} is not a valid quantity (e.g. 500m, 2, 4Gi, 1.5)"
        return
    if err.validator in ("anyOf", "oneOf") and err.context:
        best = min(err.context, key=lambda e: len(list(e.absolute_path)))
        yield list(best.absolute_path) or parts, best.message
        return
    message = err.message
    if len(message) > 300:
        message = message[:297] + "..."
    yield parts, message


# ---------------------------------------------------------------------------
# Metadata and names
# ---------------------------------------------------------------------------

_DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_DNS1035_LABEL = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
_QUALIFIED_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_ANNOTATIONS_MAX_BYTES = 256 * 1024
_CONFIGMAP_MAX_BYTES = 1024 * 1024

_FORMATS: dict[str, tuple[re.Pattern[str], int, str]] = {
    "subdomain": (_DNS1123_SUBDOMAIN, 253, "a DNS-1123 subdomain (lowercase letters, digits, '-' and '.')"),
    "label": (_DNS1123_LABEL, 63, "a DNS-1123 label (lowercase letters, digits and '-')"),
    "dns1035": (_DNS1035_LABEL, 63, "a DNS-1035 label (a lowercase letter first, then letters, digits, '-')"),
}

# (apiVersion, kind) -> (name format, maximum length, why the limit), for the objects that are no
# workload; a workload kind's declaration gives its own (``name_rule``).
_NAME_RULES: dict[tuple[str, str], tuple[str, int, str]] = {
    ("v1", "Service"): ("dns1035", 63, "Service names are DNS-1035 labels"),
    ("kueue.x-k8s.io/v1beta1", "LocalQueue"): (
        "subdomain",
        63,
        "jobs name their queue in the kueue.x-k8s.io/queue-name label",
    ),
    ("kueue.x-k8s.io/v1beta1", "WorkloadPriorityClass"): (
        "subdomain",
        63,
        "jobs name it in the kueue.x-k8s.io/priority-class label",
    ),
}


def _name_problem(value: str, fmt: str, limit: int | None = None, why: str = "") -> str | None:
    pattern, default_limit, what = _FORMATS[fmt]
    limit = limit or default_limit
    because = f" ({why})" if why else ""
    if len(value) > limit:
        return f"{value!r} is {len(value)} characters, more than {limit}{because}"
    if not pattern.match(value):
        return f"{value!r} is not {what}"
    return None


def _qualified_name_problem(key: str) -> str | None:
    prefix, slash, name = key.rpartition("/")
    if slash:
        if not prefix:
            return f"key {key!r} has an empty prefix"
        if len(prefix) > 253 or not _DNS1123_SUBDOMAIN.match(prefix):
            return f"the prefix of key {key!r} must be a DNS-1123 subdomain"
    if not name:
        return f"key {key!r} has an empty name"
    if len(name) > 63:
        return f"the name part of key {key!r} is longer than 63 characters"
    if not _QUALIFIED_NAME.match(name):
        return (
            f"key {key!r}: the name part may only hold letters, digits, '-', '_' and '.', "
            "and must start and end with a letter or digit"
        )
    return None


def _label_value_problem(value: str) -> str | None:
    if value == "":
        return None
    if len(value) > 63:
        return f"label value {value!r} is longer than 63 characters"
    if not _QUALIFIED_NAME.match(value):
        return (
            f"label value {value!r} may only hold letters, digits, '-', '_' and '.', "
            "and must start and end with a letter or digit"
        )
    return None


# Maps whose keys and values must be valid label keys and values.
_LABEL_MAPS = {"nodeSelector", "matchLabels", "nodeLabels", "clusterSelector"}


def _check_labels(labels: Mapping[Any, Any], where: list[PathPart]) -> Iterator[tuple[list[PathPart], str]]:
    for key, value in labels.items():
        if not isinstance(key, str):
            continue
        if problem := _qualified_name_problem(key):
            yield [*where, key], problem
        if isinstance(value, str) and (problem := _label_value_problem(value)):
            yield [*where, key], problem


def _check_annotations(
    annotations: Mapping[Any, Any], where: list[PathPart]
) -> Iterator[tuple[list[PathPart], str]]:
    size = 0
    for key, value in annotations.items():
        if not isinstance(key, str):
            continue
        if problem := _qualified_name_problem(key):
            yield [*where, key], problem
        size += len(key.encode()) + (len(value.encode()) if isinstance(value, str) else 0)
    if size > _ANNOTATIONS_MAX_BYTES:
        yield where, f"annotations total {size} bytes, more than {_ANNOTATIONS_MAX_BYTES}"


def _walk_metadata(node: Any, where: list[PathPart]) -> Iterator[tuple[list[PathPart], str]]:
    """Label, selector and annotation maps anywhere in the object (templates included)."""
    if isinstance(node, Mapping):
        for key, value in node.items():
            here = [*where, key]
            if key == "metadata" and isinstance(value, Mapping):
                if isinstance(value.get("labels"), Mapping):
                    yield from _check_labels(value["labels"], [*here, "labels"])
                if isinstance(value.get("annotations"), Mapping):
                    yield from _check_annotations(value["annotations"], [*here, "annotations"])
                namespace = value.get("namespace")
                if where and isinstance(namespace, str) and (problem := _name_problem(namespace, "label")):
                    yield [*here, "namespace"], problem
                continue
            if key in _LABEL_MAPS and isinstance(value, Mapping):
                yield from _check_labels(value, here)
                continue
            yield from _walk_metadata(value, here)
    elif isinstance(node, list):
        for index, item in enumerate(node):
            yield from _walk_metadata(item, [*where, index])


def _check_identity(
    api_version: str, kind: str, obj: Mapping[str, Any]
) -> Iterator[tuple[list[PathPart], str]]:
    meta = obj.get("metadata")
    if not isinstance(meta, Mapping):
        yield ["metadata"], "missing required field 'metadata'"
        return
    declared = _declared_workload(api_version, kind)
    rule = declared.name_rule if declared is not None else None
    fmt, limit, why = rule or _NAME_RULES.get((api_version, kind), ("subdomain", 253, ""))
    name = meta.get("name")
    prefix = meta.get("generateName")
    if "name" in meta:
        if isinstance(name, str) and (problem := _name_problem(name, fmt, limit, why)):
            yield ["metadata", "name"], problem  # a name of another type is a schema error
    elif isinstance(prefix, str) and prefix:
        # The apiserver appends 5 random characters to the prefix.
        if problem := _name_problem(prefix + "x1x2x", fmt, limit, why):
            yield ["metadata", "generateName"], f"generated names from this prefix: {problem}"
    else:
        yield ["metadata", "name"], "missing required field 'name' (or generateName)"
    namespace = meta.get("namespace")
    if isinstance(namespace, str) and namespace and (problem := _name_problem(namespace, "label")):
        yield ["metadata", "namespace"], problem


# ---------------------------------------------------------------------------
# Cross-field rules per kind
# ---------------------------------------------------------------------------

Issues = Iterator[tuple[list[PathPart], str]]


def _items(value: Any) -> list[tuple[int, Mapping[str, Any]]]:
    return [(i, v) for i, v in enumerate(value) if isinstance(v, Mapping)] if isinstance(value, list) else []


def _int(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _dig(obj: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(obj, Mapping):
            return None
        obj = obj.get(key)
    return obj


def _rules_jobset(obj: Mapping[str, Any]) -> Issues:
    name = _dig(obj, "metadata", "name")
    spec = _dig(obj, "spec") or {}
    jobs = _items(_dig(spec, "replicatedJobs"))
    names = [str(j.get("name")) for _, j in jobs]
    seen: set[str] = set()
    for index, rjob in jobs:
        at: list[PathPart] = ["spec", "replicatedJobs", index]
        rname = str(rjob.get("name", ""))
        if rname in seen:
            yield [*at, "name"], f"replicated job name {rname!r} is used twice"
        for dep_index, dep in _items(rjob.get("dependsOn")):
            if dep.get("name") not in names[:index]:
                yield (
                    [*at, "dependsOn", dep_index, "name"],
                    f"{dep.get('name')!r} is not an earlier replicated job",
                )
        seen.add(rname)
        replicas = _int(rjob.get("replicas"), 1)
        job_spec = _dig(rjob, "template", "spec") or {}
        parallelism = _int(_dig(job_spec, "parallelism"), 1)
        if replicas * parallelism > 2**31 - 1:
            yield at, "replicas times parallelism exceeds 2147483647"
        if not isinstance(name, str) or not rname:
            continue
        job_name = f"{name}-{rname}-{max(replicas - 1, 0)}"
        if problem := _name_problem(job_name, "dns1035"):
            yield [*at, "name"], f"child Job name {problem}"
        # The webhook defaults completionMode to Indexed before it checks pod names.
        completions = _dig(job_spec, "completions")
        if (
            _dig(job_spec, "completionMode") in (None, "Indexed")
            and isinstance(completions, int)
            and completions > 0
        ):
            pod_name = f"{job_name}-{completions - 1}-abcde"
            if problem := _name_problem(pod_name, "dns1035"):
                yield [*at, "name"], f"pod name {problem} (JobSet name too long for its pods)"
    for key, path in (
        ("successPolicy", ["targetReplicatedJobs"]),
        ("coordinator", ["replicatedJob"]),
    ):
        section = _dig(spec, key)
        value = _dig(section, *path)
        targets = value if isinstance(value, list) else [value] if isinstance(value, str) else []
        for target in targets:
            if target not in names:
                yield ["spec", key, *path], f"{target!r} is not a replicated job of this JobSet"
    for rule_index, rule in _items(_dig(spec, "failurePolicy", "rules")):
        for target in rule.get("targetReplicatedJobs") or []:
            if target not in names:
                where: list[PathPart] = ["spec", "failurePolicy", "rules", rule_index, "targetReplicatedJobs"]
                yield where, f"{target!r} is not a replicated job of this JobSet"


def _volcano_policies(policies: Any, where: list[PathPart]) -> Issues:
    """The webhook's rules across one list of lifecycle policies."""
    events: set[Any] = set()
    codes: set[Any] = set()
    for index, policy in _items(policies):
        listed = [policy["event"]] if isinstance(policy.get("event"), str) else []
        listed += [e for e in policy.get("events") or [] if e not in listed]
        for event in listed:
            if event in events:
                yield [*where, index], f"event {event!r} is used by two policies"
            events.add(event)
        code = policy.get("exitCode")
        if isinstance(code, int) and not listed:
            if code in codes:
                yield [*where, index, "exitCode"], f"exit code {code} is used by two policies"
            codes.add(code)
    if "*" in events and len(events) > 1:
        yield where, "a policy on event '*' excludes policies on other events"


def _volcano_cycle(tasks: list[tuple[int, Mapping[str, Any]]]) -> bool:
    needs = {t.get("name"): set(_dig(t, "dependsOn", "name") or []) for _, t in tasks}
    done: set[Any] = set()
    while True:
        ready = {
            name for name, deps in needs.items() if name not in done and deps <= done | (deps - set(needs))
        }
        if not ready:
            return len(done) < len(needs)
        done |= ready


def _rules_volcano_job(obj: Mapping[str, Any]) -> Issues:
    name = _dig(obj, "metadata", "name")
    spec = _dig(obj, "spec") or {}
    tasks = _items(_dig(spec, "tasks"))
    task_names = [t.get("name") for _, t in tasks]
    hostnames = isinstance(spec.get("plugins"), Mapping) and "svc" in spec["plugins"]
    total = 0
    seen: set[Any] = set()
    for index, task in tasks:
        at: list[PathPart] = ["spec", "tasks", index]
        replicas = _int(task.get("replicas"), 0)
        total += replicas
        tname = task.get("name")
        if tname in seen:
            yield [*at, "name"], f"task name {tname!r} is used twice"
        seen.add(tname)
        if _int(task.get("minAvailable"), 0) > replicas:
            yield [*at, "minAvailable"], "minAvailable must not be greater than replicas"
        partition = task.get("partitionPolicy")
        if isinstance(partition, Mapping):
            product = _int(partition.get("totalPartitions"), 0) * _int(partition.get("partitionSize"), 0)
            if product != replicas:
                yield [*at, "partitionPolicy"], "totalPartitions times partitionSize must equal replicas"
        for dep in _dig(task, "dependsOn", "name") or []:
            if dep not in task_names:
                yield [*at, "dependsOn", "name"], f"{dep!r} is not a task of this job"
        yield from _volcano_policies(task.get("policies"), [*at, "policies"])
        if isinstance(name, str) and isinstance(tname, str):
            # The webhook checks <job>-<task>-<task index>; with the svc plugin every pod's
            # hostname is its name, <job>-<task>-<replica index>, and must be a DNS label.
            pod_name = f"{name}-{tname}-{max(replicas - 1, 0) if hostnames else index}"
            if problem := _name_problem(pod_name, "label"):
                yield [*at, "name"], f"pod name {problem}"
    if _int(spec.get("minAvailable"), 0) > total:
        yield ["spec", "minAvailable"], f"minAvailable is more than the {total} replicas of all tasks"
    yield from _volcano_policies(spec.get("policies"), ["spec", "policies"])
    if _volcano_cycle(tasks):
        yield ["spec", "tasks"], "the dependsOn links between tasks form a cycle"
    mounts: set[Any] = set()
    for index, volume in _items(spec.get("volumes")):
        if volume.get("mountPath") in mounts:
            yield (
                ["spec", "volumes", index, "mountPath"],
                f"mountPath {volume.get('mountPath')!r} is used twice",
            )
        mounts.add(volume.get("mountPath"))


def _rules_volcano_cronjob(obj: Mapping[str, Any]) -> Issues:
    """What Volcano's CronJob webhook refuses (a time zone in the schedule, an empty or local time zone),
    and the Job rules for the Volcano Jobs its template makes, named as the controller names them."""
    spec = _dig(obj, "spec") or {}
    schedule = spec.get("schedule")
    if isinstance(schedule, str) and not schedule.strip():
        yield ["spec", "schedule"], "schedule is required, but got empty"
    elif isinstance(schedule, str) and "TZ" in schedule:
        yield ["spec", "schedule"], "the schedule may not hold TZ or CRON_TZ: the time zone goes in timeZone"
    zone = spec.get("timeZone")
    if zone == "":
        yield ["spec", "timeZone"], "timeZone must be left out or name a time zone, not be empty"
    elif isinstance(zone, str) and zone.lower() == "local":
        yield ["spec", "timeZone"], "timeZone cannot be Local: name an IANA time zone"
    template = _dig(spec, "jobTemplate")
    name = _dig(obj, "metadata", "name")
    if isinstance(template, Mapping):
        job_name = f"{name}-{'0' * (workloads.CRON_SUFFIX - 1)}" if isinstance(name, str) else None
        job = {"metadata": {"name": job_name}, "spec": template.get("spec")}
        for where, message in _rules_volcano_job(job):
            yield ["spec", "jobTemplate", *where], message


def _rules_jobflow(obj: Mapping[str, Any]) -> Issues:
    """What Volcano's admission policy and controller refuse: a target that is no flow of this JobFlow,
    a flow that waits for itself, two flows of one name, and a circle of flows that never starts."""
    flows = _items(_dig(obj, "spec", "flows"))
    names = [f.get("name") for _, f in flows]
    seen: set[Any] = set()
    for i, flow in flows:
        where: list[PathPart] = ["spec", "flows", i]
        if flow.get("name") in seen:
            yield [*where, "name"], f"flow {flow.get('name')!r} is named twice"
        seen.add(flow.get("name"))
        targets = _dig(flow, "dependsOn", "targets") or []
        for k, target in enumerate(targets if isinstance(targets, list) else []):
            at: list[PathPart] = [*where, "dependsOn", "targets", k]
            if target == flow.get("name"):
                yield at, f"flow {target!r} depends on itself"
            elif target not in names:
                yield at, f"target {target!r} is not a flow of this JobFlow"
    needs: list[tuple[int, Mapping[str, Any]]] = [
        (i, {"name": f.get("name"), "dependsOn": {"name": _dig(f, "dependsOn", "targets") or []}})
        for i, f in flows
    ]
    if _volcano_cycle(needs):
        yield ["spec", "flows"], "the flows' dependsOn form a circle: none of them would ever start"


def _rules_mpijob(obj: Mapping[str, Any]) -> Issues:
    name = _dig(obj, "metadata", "name")
    replicas = _int(_dig(obj, "spec", "mpiReplicaSpecs", "Worker", "replicas"), 1)
    if isinstance(name, str) and name:
        host = f"{name}-worker-{max(replicas - 1, 0)}"
        if problem := _name_problem(host, "label"):
            yield ["metadata", "name"], f"worker hostname {problem}"


def _rules_clusterqueue(obj: Mapping[str, Any]) -> Issues:
    for group_index, group in _items(_dig(obj, "spec", "resourceGroups")):
        covered = group.get("coveredResources")
        if not isinstance(covered, list):
            continue
        for flavor_index, flavor in _items(group.get("flavors")):
            listed = [r.get("name") for _, r in _items(flavor.get("resources"))]
            if listed and listed != covered:
                where: list[PathPart] = [
                    "spec",
                    "resourceGroups",
                    group_index,
                    "flavors",
                    flavor_index,
                    "resources",
                ]
                yield where, f"must list the covered resources {covered} in the same order, not {listed}"


def _rules_rayjob(obj: Mapping[str, Any]) -> Issues:
    seen: set[Any] = set()
    for index, group in _items(_dig(obj, "spec", "rayClusterSpec", "workerGroupSpecs")):
        at: list[PathPart] = ["spec", "rayClusterSpec", "workerGroupSpecs", index]
        if group.get("groupName") in seen:
            yield [*at, "groupName"], f"worker group name {group.get('groupName')!r} is used twice"
        seen.add(group.get("groupName"))
        low, high = group.get("minReplicas"), group.get("maxReplicas")
        if isinstance(low, int) and isinstance(high, int) and low > high:
            yield [*at, "minReplicas"], "minReplicas is greater than maxReplicas"


_STATEFULSET_NAME_MAX = 52  # its pods' controller-revision-hash label is <name>-<hash>, within 63
_INT32_MAX = 2**31 - 1


def _rules_leaderworkerset(obj: Mapping[str, Any]) -> Issues:
    """The webhook's cross-field rules, and the names of the StatefulSets the controller makes."""
    name = _dig(obj, "metadata", "name")
    replicas = _int(_dig(obj, "spec", "replicas"), 1)
    template = _dig(obj, "spec", "leaderWorkerTemplate")
    size = _int(_dig(template, "size"), 1)
    if isinstance(name, str) and name:
        workers = f"{name}-{max(replicas - 1, 0)}"  # group i's workers: StatefulSet <name>-<i>
        if len(workers) > _STATEFULSET_NAME_MAX:
            why = (
                f"the workers' StatefulSet {workers!r} is {len(workers)} characters, more than "
                f"{_STATEFULSET_NAME_MAX} (its pods' controller-revision-hash label must fit in 63)"
            )
            yield ["metadata", "name"], why
    if replicas * size > _INT32_MAX:
        yield ["spec", "replicas"], f"replicas x size must not exceed {_INT32_MAX}"
    sub = _int(_dig(template, "subGroupPolicy", "subGroupSize"), 0)
    if sub:
        where: list[PathPart] = ["spec", "leaderWorkerTemplate", "subGroupPolicy", "subGroupSize"]
        excluded = _dig(template, "subGroupPolicy", "subGroupPolicyType") == "LeaderExcluded"
        if sub > size:
            yield where, f"subGroupSize {sub} is greater than size {size}"
        elif excluded and (size - 1) % sub:
            yield where, f"LeaderExcluded needs size - 1 ({size - 1}) divisible by subGroupSize {sub}"
        elif size % sub and (size - 1) % sub:
            yield where, f"size {size} or size - 1 must be divisible by subGroupSize {sub}"


def _rules_selector_matches(obj: Mapping[str, Any]) -> Issues:
    selector = _dig(obj, "spec", "selector", "matchLabels")
    labels = _dig(obj, "spec", "template", "metadata", "labels") or {}
    if isinstance(selector, Mapping) and isinstance(labels, Mapping):
        for key, value in selector.items():
            if labels.get(key) != value:
                yield ["spec", "selector"], "selector does not match the pod template labels"
                return


def _rules_configmap(obj: Mapping[str, Any]) -> Issues:
    size = 0
    for section in ("data", "binaryData"):
        for key, value in (obj.get(section) or {}).items() if isinstance(obj.get(section), Mapping) else ():
            size += len(str(key).encode()) + (len(value.encode()) if isinstance(value, str) else 0)
            if section == "binaryData" and isinstance(value, str):
                size -= len(value.encode()) // 4  # base64 text is 4/3 of the bytes it holds
    if size > _CONFIGMAP_MAX_BYTES:
        yield [], f"ConfigMap holds {size} bytes, more than {_CONFIGMAP_MAX_BYTES}"
    for key in obj.get("data") or {}:
        if isinstance(obj.get("binaryData"), Mapping) and key in obj["binaryData"]:
            yield ["binaryData", key], f"key {key!r} is in both data and binaryData"


def _rules_slinky_controller(obj: Mapping[str, Any]) -> Issues:
    """The Controller CRD's CEL rules: its own slurmctld needs the keys, an external one its address."""
    spec = obj.get("spec") or {}
    if spec.get("external"):
        if not spec.get("externalConfig"):
            yield ["spec", "externalConfig"], "an external controller needs externalConfig (host, port)"
        return
    if not spec.get("slurmKeyRef"):
        yield ["spec", "slurmKeyRef"], "a controller the operator runs needs slurmKeyRef"
    if not (spec.get("jwtKeyRef") or spec.get("jwtHs256KeyRef")):
        yield ["spec", "jwtKeyRef"], "a controller the operator runs needs jwtKeyRef"


_KIND_RULES: dict[tuple[str, str], Callable[[Mapping[str, Any]], Issues]] = {
    ("slinky.slurm.net/v1beta1", "Controller"): _rules_slinky_controller,
    ("jobset.x-k8s.io/v1alpha2", "JobSet"): _rules_jobset,
    ("batch.volcano.sh/v1alpha1", "Job"): _rules_volcano_job,
    ("batch.volcano.sh/v1alpha1", "CronJob"): _rules_volcano_cronjob,
    ("flow.volcano.sh/v1alpha1", "JobFlow"): _rules_jobflow,
    ("kubeflow.org/v2beta1", "MPIJob"): _rules_mpijob,
    ("kueue.x-k8s.io/v1beta1", "ClusterQueue"): _rules_clusterqueue,
    ("ray.io/v1", "RayJob"): _rules_rayjob,
    ("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet"): _rules_leaderworkerset,
    ("apps/v1", "Deployment"): _rules_selector_matches,
    ("apps/v1", "StatefulSet"): _rules_selector_matches,
    ("v1", "ConfigMap"): _rules_configmap,
    **{(argo_fields.API_VERSION, str(kind)): argo_validate.rules for kind in argo_fields.KINDS},
}


# ---------------------------------------------------------------------------
# Public entry points
# ---------------------------------------------------------------------------


def _line_of(obj: Any, parts: Sequence[PathPart]) -> int | None:
    """The line of the deepest part of ``parts`` found in a document loaded with line numbers."""
    line: int | None = getattr(obj, "line", None)
    node = obj
    for part in parts:
        if isinstance(node, LineDict) and part in node:
            line = node.key_line(part)
            node = node[part]
        elif isinstance(node, LineList) and isinstance(part, int) and 0 <= part < len(node):
            line = node.item_line(part)
            node = node[part]
        else:
            break
    return line


def validate_object(obj: Any, k8s_version: str = K8S_VERSION) -> list[Problem]:
    """Every problem of one Kubernetes object (a mapping as loaded from YAML or JSON)."""
    if not isinstance(obj, Mapping):
        message = f"not a Kubernetes object (a YAML {_json_type(obj)})"
        return [Problem("", message, rule="unknown-kind", line=getattr(obj, "line", None))]
    if chart_values.is_slurm_chart_values(obj):
        return _validate_chart_values(obj, k8s_version)
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    name = _dig(obj, "metadata", "name")
    name = name if isinstance(name, str) else ""
    if not isinstance(api_version, str) or not api_version or not isinstance(kind, str) or not kind:
        missing = "apiVersion" if not isinstance(api_version, str) or not api_version else "kind"
        message = f"missing required field {missing!r}"
        return [Problem(missing, message, str(kind or ""), name, rule="unknown-kind", line=_line_of(obj, []))]
    if kind == ObjectKind.LIST and api_version == "v1" and isinstance(obj.get("items"), list):
        return _validate_list(obj["items"], k8s_version)

    found: list[tuple[list[PathPart], str, str]] = []
    validator = _store(k8s_version).validator(api_version, kind)
    if validator is None:
        found.append(
            ([], f"no schema for {kind} ({api_version}) in Kubernetes {k8s_version}", "unknown-kind")
        )
    else:
        for err in validator.iter_errors(obj):
            found.extend((parts, message, "schema") for parts, message in _error_problems(err))
    found.extend((parts, message, "metadata") for parts, message in _check_identity(api_version, kind, obj))
    found.extend((parts, message, "metadata") for parts, message in _walk_metadata(obj, []))
    if rules := _KIND_RULES.get((api_version, kind)):
        found.extend((parts, message, "kind") for parts, message in rules(obj))
    return _problems(obj, found, kind, name)


def _validate_chart_values(doc: Mapping[str, Any], k8s_version: str) -> list[Problem]:
    """A values file of the slurm chart: its schema and the chart's own rules, no object metadata."""
    validator = _store(k8s_version).schema_validator(chart_values.SCHEMA_ID)
    found: list[tuple[list[PathPart], str, str]] = [
        (parts, message, "schema")
        for err in validator.iter_errors(doc)
        for parts, message in _error_problems(err)
    ]
    found.extend((parts, message, "kind") for parts, message in chart_values.rules(doc))
    return _problems(doc, found)


def _problems(
    obj: Any, found: Iterable[tuple[list[PathPart], str, str]], kind: str = "", name: str = ""
) -> list[Problem]:
    """(path parts, message, rule) as Problems with their lines, once each, in path order."""
    problems: list[Problem] = []
    seen: set[tuple[str, str]] = set()
    for parts, message, rule in found:
        path = format_path(parts)
        if (path, message) in seen:
            continue
        seen.add((path, message))
        problems.append(Problem(path, message, kind, name, rule, line=_line_of(obj, parts)))
    problems.sort(key=lambda p: (p.path, p.message))
    return problems


def _validate_list(items: list[Any], k8s_version: str) -> list[Problem]:
    out: list[Problem] = []
    for index, item in enumerate(items):
        for problem in validate_object(item, k8s_version):
            path = format_path(["items", index]) + ("." + problem.path if problem.path else "")
            out.append(replace(problem, path=path))
    return out


def _json_type(value: Any) -> str:
    for kind, name in ((bool, "boolean"), (int, "integer"), (float, "number"), (str, "string")):
        if isinstance(value, kind):
            return name
    if isinstance(value, Mapping):
        return "object"
    return "array" if isinstance(value, list) else "null" if value is None else type(value).__name__


def _kind_label(obj: Any) -> str:
    if chart_values.is_slurm_chart_values(obj):
        return chart_values.LABEL
    if isinstance(obj, Mapping):
        return f"{obj.get('apiVersion') or '?'} {obj.get('kind') or '?'}"
    return f"({_json_type(obj)})"


@dataclass
class _Checked:
    objects: int = 0
    kinds: list[str] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)


def _check_documents(source: str | Iterable[Any], file: str | None, k8s_version: str) -> _Checked:
    result = _Checked()
    if isinstance(source, str):
        diags = Collector(file)
        documents = [(doc.index, doc.data) for doc in load_documents(source, diags)]
        for diag in diags:
            result.problems.append(
                Problem("", f"{diag.code}: {diag.message}", rule="yaml", file=file, line=diag.line)
            )
    else:
        documents = [(index, data) for index, data in enumerate(source) if data is not None]
    for index, data in documents:
        result.objects += 1
        result.kinds.append(_kind_label(data))
        result.problems.extend(
            replace(problem, file=file, document=index) for problem in validate_object(data, k8s_version)
        )
    result.problems.sort(key=lambda p: p.line if p.line is not None else 1 << 30)
    return result


def validate_documents(
    source: str | Iterable[Any], file: str | None = None, k8s_version: str = K8S_VERSION
) -> list[Problem]:
    """Problems of every document in a YAML stream (text) or of already loaded objects.

    Empty documents are skipped; a document that does not parse is a problem and
    the other documents are still checked.
    """
    return _check_documents(source, file, k8s_version).problems


def _files_under(base: Path) -> Iterator[Path]:
    for folder, dirs, names in os.walk(base):  # does not follow symbolic links to folders
        dirs.sort()
        for name in names:
            yield Path(folder) / name


def validate_tree(
    root: str | Path, k8s_version: str = K8S_VERSION, render: Callable[[str], str] | None = None
) -> TreeReport:
    """Validate every ``*.yaml``/``*.yml`` file under ``root`` (or the one file ``root`` names).

    ``kustomization.yaml`` files are listed as skipped: they are not API objects.
    ``render`` fills template values into a file's text before it is checked.
    """
    start = time.perf_counter()
    base = Path(root)
    paths = [base] if base.is_file() else sorted(_files_under(base))
    reports: list[FileReport] = []
    for path in paths:
        shown = str(path)
        if path.name in _SKIPPED_FILES:
            reports.append(FileReport(shown, 0, (), (), skipped=_SKIPPED_FILES[path.name]))
            continue
        if path.suffix not in _YAML_SUFFIXES and path != base:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            problem = Problem("", f"cannot read the file: {exc}", rule="file", file=shown)
            reports.append(FileReport(shown, 0, (), (problem,)))
            continue
        checked = _check_documents(render(text) if render else text, shown, k8s_version)
        reports.append(FileReport(shown, checked.objects, tuple(checked.kinds), tuple(checked.problems)))
    return TreeReport(str(base), k8s_version, tuple(reports), time.perf_counter() - start)
