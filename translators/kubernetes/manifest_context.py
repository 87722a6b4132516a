"""The objects of a manifest file that are not workloads, read for what they tell about the workloads.

A PersistentVolumeClaim describes the storage a job mounts, a ConfigMap may
hold the script a job runs, a HorizontalPodAutoscaler scales a Deployment, a
DaemonSet may be the cluster's GPU monitoring, a Volcano JobFlow orders jobs.
Each such object gets one K8S-IGNORED-KIND info saying what it was read for.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum

from migrate import ir
from migrate.diagnostics import Collector
from migrate.yamlload import LineDict

from . import kinds
from .manifest_fields import ObjectView
from .manifest_pods import ShellBody, analyze_body
from .object_kinds import PROMETHEUS_MONITORS, ObjectKind


@dataclass
class K8sObject:
    """One Kubernetes object of a file: a document, or an item of a ``kind: List``."""

    data: LineDict
    document: int
    line: int
    end_line: int
    origin: str  # '' or 'items[3]'
    api_version: str
    group: str
    kind: str
    name: str | None
    namespace: str | None


@dataclass(frozen=True)
class Flow:
    """One step of a Volcano JobFlow: job ``name`` waits for ``targets``."""

    name: str
    targets: tuple[str, ...]
    line: int
    flow: str  # the JobFlow's name


@dataclass(frozen=True)
class ScriptEntry:
    key: str
    text: str
    line: int


@dataclass(frozen=True)
class ScopedHook:
    """A monitoring hook for the workloads whose labels match ``selector`` (all of them if empty)."""

    hook: ir.MonitoringHook
    selector: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class ServiceInfo:
    name: str
    selector: tuple[tuple[str, str], ...]
    ports: tuple[int, ...]


@dataclass
class FileContext:
    """What the non-workload objects of one file tell, keyed for the workloads to look up."""

    config_maps: dict[str, list[ScriptEntry]] = field(default_factory=dict)
    claims: dict[str, str] = field(default_factory=dict)  # PVC name -> summary
    autoscalers: dict[tuple[str, str], str] = field(default_factory=dict)  # (kind, name) -> summary
    services: list[ServiceInfo] = field(default_factory=list)
    monitoring: list[ScopedHook] = field(default_factory=list)
    flows: list[Flow] = field(default_factory=list)
    # DRA: claim (template) name -> (device class, count) of each exact request; class -> its driver
    device_claims: dict[str, list[tuple[str, int]]] = field(default_factory=dict)
    device_classes: dict[str, str] = field(default_factory=dict)
    _bodies: dict[tuple[str, str], ShellBody] = field(default_factory=dict)

    def script_bodies(self, config_map: str, view: ObjectView) -> list[ShellBody]:
        """The analyzed scripts of a ConfigMap; each script is analyzed once per file."""
        bodies = []
        for entry in self.config_maps.get(config_map, ()):
            key = (config_map, entry.key)
            if key not in self._bodies:
                shell = "bash" if "bash" in entry.text.split("\n", 1)[0] else "sh"
                self._bodies[key] = analyze_body(shell, entry.text, entry.line, view)
            bodies.append(self._bodies[key])
        return bodies


_Reader = Callable[[K8sObject, ObjectView, FileContext], str]


def read_context(obj: K8sObject, role: str, context: FileContext, diags: Collector) -> None:
    """Record what a non-workload object tells, and say so with one info."""
    view = ObjectView(obj.data, diags, None, obj.origin)
    readers: dict[str, _Reader] = {
        kinds.STORAGE: _storage,
        kinds.SCRIPTS: _scripts,
        kinds.SERVICE: _service,
        kinds.AUTOSCALING: _autoscaling,
        kinds.MONITORING: _monitoring,
        kinds.DEPENDENCIES: _flows,
        kinds.DEVICES: _device_claims,
    }
    reader = readers.get(role)
    note = reader(obj, view, context) if reader else role
    what = f"{obj.kind}/{obj.name or '-'}"
    diags.add("K8S-IGNORED-KIND", f"{what}: not a workload; read for context ({note})", obj.line)


def _storage(obj: K8sObject, view: ObjectView, context: FileContext) -> str:
    if obj.kind == ObjectKind.PERSISTENT_VOLUME:
        return "storage: " + _volume_summary(view)
    if obj.kind == ObjectKind.NIM_CACHE:
        return "storage: a model cache " + _nim_cache_summary(view)
    if obj.kind != ObjectKind.PERSISTENT_VOLUME_CLAIM or not obj.name:
        return "storage"
    parts = []
    size = view.get(("spec", "resources", "requests", "storage"))
    if size is not None:
        parts.append(f"size={size}")
    modes = view.strings(("spec", "accessModes"))
    if modes:
        parts.append("access=" + ",".join(str(m) for m in modes))
    storage_class = view.string(("spec", "storageClassName"))
    if storage_class:
        parts.append(f"class={storage_class}")
    context.claims[obj.name] = " ".join(parts)
    return "storage: " + (" ".join(parts) or "claim")


def _nim_cache_summary(view: ObjectView) -> str:
    """Where a NIMCache keeps the model it pulls: its PersistentVolumeClaim's size and class."""
    pvc = ("spec", "storage", "pvc")
    parts = [
        f"{key}={value}"
        for key, value in (
            ("model", view.string(("spec", "source", "ngc", "modelPuller"))),
            ("claim", view.string((*pvc, "name"))),
            ("size", view.string((*pvc, "size"))),
            ("class", view.string((*pvc, "storageClass"))),
        )
        if value
    ]
    return " ".join(parts) or "(no storage given)"


def _volume_summary(view: ObjectView) -> str:
    """What backs a PersistentVolume: the CSI driver and handle, an NFS export or a host path."""
    parts = []
    capacity = view.get(("spec", "capacity", "storage"))
    if capacity is not None:
        parts.append(f"size={capacity}")
    if view.has(("spec", "csi")):
        driver = view.string(("spec", "csi", "driver")) or "?"
        handle = view.string(("spec", "csi", "volumeHandle")) or "?"
        parts.append(f"csi={driver}:{handle}")
    elif view.has(("spec", "nfs")):
        server = view.string(("spec", "nfs", "server")) or "?"
        parts.append(f"nfs={server}:{view.string(('spec', 'nfs', 'path')) or '?'}")
    elif view.has(("spec", "hostPath")):
        parts.append(f"hostPath={view.string(('spec', 'hostPath', 'path')) or '?'}")
    claim = view.string(("spec", "claimRef", "name"))
    if claim:
        parts.append(f"claim={claim}")
    return " ".join(parts) or "volume"


def _scripts(obj: K8sObject, view: ObjectView, context: FileContext) -> str:
    data = view.mapping(("data",))
    if not obj.name or not data:
        return "configuration"
    entries = []
    for key, value in data.items():
        if not isinstance(value, str):
            continue
        if str(key).endswith((".sh", ".bash")) or value.startswith("#!"):
            entries.append(ScriptEntry(str(key), value, data.value_line(key)))
    context.config_maps[obj.name] = entries
    return "scripts: " + ", ".join(e.key for e in entries) if entries else "configuration"


def _service(obj: K8sObject, view: ObjectView, context: FileContext) -> str:
    selector = tuple(view.string_map(("spec", "selector")))
    ports = []
    for ppath, _ in view.items(("spec", "ports")):
        port = view.integer((*ppath, "port"))
        if port is not None:
            ports.append(port)
    context.services.append(ServiceInfo(obj.name or "", selector, tuple(ports)))
    return "service ports " + ",".join(map(str, ports)) if ports else "service"


def _autoscaling(obj: K8sObject, view: ObjectView, context: FileContext) -> str:
    target_kind = view.string(("spec", "scaleTargetRef", "kind")) or "Deployment"
    target = view.string(("spec", "scaleTargetRef", "name")) or ""
    if obj.kind == ObjectKind.SCALED_OBJECT:
        low = view.integer(("spec", "minReplicaCount"))
        high = view.integer(("spec", "maxReplicaCount"))
        triggers = [view.string((*p, "type")) or "?" for p, _ in view.items(("spec", "triggers"))]
        summary = f"keda {_range(low, high)} {','.join(triggers)}".strip()
    else:
        low = view.integer(("spec", "minReplicas"))
        high = view.integer(("spec", "maxReplicas"))
        summary = f"hpa {_range(low, high)} {' '.join(_hpa_metrics(view))}".strip()
    context.autoscalers[(target_kind, target)] = summary
    return f"autoscaling {target_kind}/{target}: {summary}"


class MetricSource(StrEnum):
    """The ``type`` of a HorizontalPodAutoscaler's metric: where its value comes from."""

    RESOURCE = "Resource"  # a resource of the pods: cpu, memory
    CONTAINER_RESOURCE = "ContainerResource"
    PODS = "Pods"
    OBJECT = "Object"
    EXTERNAL = "External"


def _range(low: int | None, high: int | None) -> str:
    return f"{low if low is not None else 1}-{high if high is not None else '?'}"


def _hpa_metrics(view: ObjectView) -> list[str]:
    cpu_v1 = view.integer(("spec", "targetCPUUtilizationPercentage"))
    metrics = [f"cpu {cpu_v1}%"] if cpu_v1 is not None else []
    for mpath, _ in view.items(("spec", "metrics")):
        kind = view.string((*mpath, "type")) or ""
        if kind == MetricSource.RESOURCE:
            name = view.string((*mpath, "resource", "name")) or "?"
            utilization = view.get((*mpath, "resource", "target", "averageUtilization"))
            if utilization is not None:
                metrics.append(f"{name} {utilization}%")
            else:
                metrics.append(f"{name} {view.get((*mpath, 'resource', 'target', 'averageValue'))}")
        else:
            sub = kind[:1].lower() + kind[1:]
            metric = view.string((*mpath, sub, "metric", "name"))
            metrics.append(f"{kind.lower()} {metric}" if metric else kind.lower())
    return metrics


def _monitoring(obj: K8sObject, view: ObjectView, context: FileContext) -> str:
    if obj.kind in PROMETHEUS_MONITORS:
        selector = tuple(view.string_map(("spec", "selector", "matchLabels")))
        kind = "prometheus-" + obj.kind.lower()
        context.monitoring.append(ScopedHook(ir.MonitoringHook(kind, obj.name or "", obj.line), selector))
        return f"monitoring: {kind}"
    if obj.kind != ObjectKind.DAEMON_SET:
        return "monitoring"
    found = []
    for cpath, _ in view.items(("spec", "template", "spec", "containers")):
        image = view.string((*cpath, "image")) or ""
        for needle, kind in kinds.MONITORING_IMAGES.items():
            if needle in image:
                hook = ir.MonitoringHook(kind, f"DaemonSet {obj.name}: {image}", view.line(cpath))
                context.monitoring.append(ScopedHook(hook, ()))
                found.append(kind)
    return "monitoring agent: " + ", ".join(found) if found else "a node agent, not monitoring"


_DRIVER = re.compile(r"device\.driver\s*==\s*['\"]([^'\"]+)['\"]")


def _device_claims(obj: K8sObject, view: ObjectView, context: FileContext) -> str:
    """DRA objects: what a claim asks (device class and count), or which driver a class selects."""
    if not obj.name:
        return "devices"
    if obj.kind == ObjectKind.DEVICE_CLASS:
        for spath, _ in view.items(("spec", "selectors")):
            found = _DRIVER.search(view.string((*spath, "cel", "expression")) or "")
            if found:
                context.device_classes[obj.name] = found.group(1)
                return f"devices of driver {found.group(1)}"
        return "devices"
    spec = ("spec", "spec") if obj.kind == ObjectKind.RESOURCE_CLAIM_TEMPLATE else ("spec",)
    asked: list[tuple[str, int]] = []
    for rpath, _ in view.items((*spec, "devices", "requests")):
        exact = (*rpath, "exactly") if view.has((*rpath, "exactly")) else rpath  # resource.k8s.io/v1
        device_class = view.string((*exact, "deviceClassName"))
        mode = view.string((*exact, "allocationMode")) or "ExactCount"
        count = view.get((*exact, "count"))
        if device_class and mode == "ExactCount":
            asked.append((device_class, count if isinstance(count, int) and count > 0 else 1))
    context.device_claims[obj.name] = asked
    return "devices: " + (", ".join(f"{n} {c}" for c, n in asked) or "none counted")


def _flows(obj: K8sObject, view: ObjectView, context: FileContext) -> str:
    count = 0
    for fpath, _ in view.items(("spec", "flows")):
        name = view.string((*fpath, "name"))
        targets = tuple(view.strings((*fpath, "dependsOn", "targets")))
        if name:
            context.flows.append(Flow(name, targets, view.line(fpath), obj.name or ""))
            count += 1
    return f"dependencies: {count} flows"
