"""One pod template -> the facts of one IR component: resources, containers, env, mounts, launchers.

A pod is treated as one node for planning: Kubernetes places each pod on one
node and a GPU job normally asks for a whole node's GPUs per pod, so a role
with N replicas of a pod with G GPUs reads as N nodes x G GPUs per node. The
reader keeps the replica count on the component, and the resources here
describe a single pod.
"""

from __future__ import annotations

import math
import re
import shlex
from dataclasses import dataclass, field
from fractions import Fraction

from migrate import devices, ir
from migrate.ir import replace
from migrate.secrets import REDACTED, looks_like_secret
from migrate.vocab import (
    ContainerRuntime,
    ContainerStage,
    EnvOrigin,
    MonitoringKind,
    MountKind,
    PlaceholderRole,
    SecretKind,
    StorageVia,
)
from migrate.yamlload import LineDict

from ..shell.analyze import analyze
from ..shell.conceal import Concealed, analyzed, conceal_argv
from ..shell.facts import BodyFacts
from ..shell.redact import looks_like_credential
from . import kinds
from .manifest_commands import shell_script
from .manifest_fields import ObjectView, Path, fmt_path
from .manifest_templates import has_placeholder
from .quantities import format_cpu, is_integer, parse_quantity, to_mib
from .raw_keys import RAW_KEYS

# Volume sources that are shared storage worth a place in the storage graph.
_STORAGE_KINDS = frozenset({MountKind.PVC, MountKind.HOST_PATH, MountKind.NFS, MountKind.CSI})
_ENV_REFERENCE = re.compile(r"\$\(\w+\)")
_SUMMED = ("cpu", "memory")


@dataclass(eq=False)  # compared by identity: one analysis per script
class ShellBody:
    """Shell text analyzed: an inline script (``sh -c``), a ConfigMap's script, or an exec-form argv."""

    shell: str
    text: str
    line: int
    facts: BodyFacts
    is_script: bool = True  # False for an argv read as one command line
    argv: tuple[str, ...] = ()  # the container's command + args, literal credentials replaced


@dataclass
class ConfigMapMount:
    name: str
    mount_path: str
    line: int


@dataclass
class PodFacts:
    """What one pod template (or TrainJob trainer) tells about its component and its job."""

    resources: ir.Resources = field(default_factory=ir.Resources)
    containers: list[ir.Container] = field(default_factory=list)
    launchers: list[ir.Launcher] = field(default_factory=list)
    environment: list[ir.EnvVar] = field(default_factory=list)
    storage: list[ir.StoragePath] = field(default_factory=list)
    monitoring: list[ir.MonitoringHook] = field(default_factory=list)
    raw: list[ir.RawItem] = field(default_factory=list)
    bodies: list[ShellBody] = field(default_factory=list)
    config_maps: list[ConfigMapMount] = field(default_factory=list)
    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)
    annotation_lines: dict[str, int] = field(default_factory=dict)
    ports: list[int] = field(default_factory=list)
    rendezvous_port: int | None = None  # a container's port pytorchjob-port: the operator's MASTER_PORT
    restart_policy: str | None = None
    deadline_s: int | None = None
    scheduler: str | None = None
    priority_class: str | None = None
    tolerations: list[ir.KeyValue] = field(default_factory=list)
    affinity: str | None = None


@dataclass(frozen=True)
class _Volume:
    kind: MountKind
    source: str | None
    read_only: bool = False
    storage: str | None = None  # the identity of shared storage: pvc:<claim>, a host path, nfs:...
    create: bool = False  # a host path the node makes when it is missing


@dataclass
class _Usage:
    """Resource requests and limits of one container, by resource name."""

    requests: dict[str, Fraction] = field(default_factory=dict)
    limits: dict[str, Fraction] = field(default_factory=dict)
    lines: dict[str, int] = field(default_factory=dict)  # resource name -> line where it is set


# Pod templates


def read_pod_template(
    view: ObjectView,
    path: Path,
    claim_templates: tuple[str, ...] = (),
    injected: tuple[kinds.InjectedVolume, ...] = (),
    owner: str = "",
) -> PodFacts:
    """Read ``path`` (a pod template: metadata + spec, or a Pod object).

    ``injected``: the volumes the operator adds to these pods, named after ``owner`` (the object).
    """
    facts = PodFacts()
    if view.mapping(path) is None:
        return facts  # not a mapping: already reported as K8S-BAD-TYPE
    facts.labels = dict(view.string_map((*path, "metadata", "labels")))
    annotations_path = (*path, "metadata", "annotations")
    annotations = view.peek(annotations_path)
    if isinstance(annotations, LineDict):
        for key, value in annotations.items():
            facts.annotations[str(key)] = "" if value is None else str(value)
            facts.annotation_lines[str(key)] = annotations.key_line(key)
    spec_path = (*path, "spec")
    if view.mapping(spec_path) is None:
        view.diags.add(
            "K8S-MISSING-FIELD",
            f"{fmt_path(spec_path)} is missing: the pod template has no containers",
            view.line(path),
            view.job,
        )
        return facts
    operator_volumes = {v.name: _Volume(MountKind.GENERATED, owner + v.source_suffix, True) for v in injected}
    _read_pod_spec(view, spec_path, facts, claim_templates, operator_volumes)
    _read_pod_annotations(view, annotations_path, facts)
    return facts


def _read_pod_spec(
    view: ObjectView,
    spec: Path,
    facts: PodFacts,
    claim_templates: tuple[str, ...],
    operator_volumes: dict[str, _Volume],
) -> None:
    volumes = operator_volumes | _volumes(view, (*spec, "volumes"), claim_templates)
    app: list[_Usage] = []
    init: list[_Usage] = []
    if not view.has((*spec, "containers")):
        view.diags.add(
            "K8S-MISSING-FIELD", f"{fmt_path((*spec, 'containers'))} is missing", view.line(spec), view.job
        )
    # Init containers first: they run first.
    for cpath, _ in view.items((*spec, "initContainers")):
        # Sidecars (init containers that keep running) add up with the app containers.
        sidecar = view.string((*cpath, "restartPolicy")) == "Always"
        stage = ContainerStage.SIDECAR if sidecar else ContainerStage.INIT
        (app if sidecar else init).append(_read_container(view, cpath, volumes, facts, stage=stage))
    for cpath, _ in view.items((*spec, "containers")):
        app.append(_read_container(view, cpath, volumes, facts))
    node_selector = view.string_map((*spec, "nodeSelector"))
    affinity, affinity_gpu = _required_node_affinity(view, (*spec, "affinity", "nodeAffinity"))
    facts.affinity = affinity
    gpu_type = _gpu_type(node_selector) or affinity_gpu
    facts.resources = _resources(view, spec, app, init, node_selector, gpu_type, facts)
    facts.restart_policy = view.string((*spec, "restartPolicy"))
    facts.deadline_s = view.integer((*spec, "activeDeadlineSeconds"))
    facts.scheduler = view.string((*spec, "schedulerName"))
    facts.priority_class = view.string((*spec, "priorityClassName"))
    facts.tolerations = _tolerations(view, (*spec, "tolerations"))


def _read_pod_annotations(view: ObjectView, path: Path, facts: PodFacts) -> None:
    """Pod annotations that the IR types: monitoring scrape hints (topology is read by the reader)."""
    if facts.annotations.get(kinds.PROMETHEUS_SCRAPE, "").lower() == "true":
        detail = " ".join(
            f"{key.rsplit('/', 1)[-1]}={facts.annotations[key]}"
            for key in kinds.PROMETHEUS_DETAIL_KEYS
            if key in facts.annotations
        )
        line = facts.annotation_lines.get(kinds.PROMETHEUS_SCRAPE)
        facts.monitoring.append(ir.MonitoringHook(MonitoringKind.PROMETHEUS_SCRAPE, detail, line))
        for key in (kinds.PROMETHEUS_SCRAPE, *kinds.PROMETHEUS_DETAIL_KEYS):
            view.touch((*path, key))


def read_container_role(
    view: ObjectView, path: Path, resources_key: Path, image_parts: Path | None = None
) -> PodFacts:
    """A role that is one container's fields directly (TrainJob ``spec.trainer``, a NIMService's spec).

    ``image_parts``: where the image is kept as ``{repository, tag}`` rather than as one string.
    """
    facts = PodFacts()
    image = _image_from_parts(view, (*path, *image_parts)) if image_parts is not None else None
    usage = _read_container(
        view, path, {}, facts, resources_key=resources_key, image_required=False, image=image
    )
    facts.resources = _resources(view, path, [usage], [], [], None, facts)
    return facts


def _image_from_parts(view: ObjectView, path: Path) -> str:
    """``{repository: nvcr.io/nim/x, tag: "1.0"}`` -> ``nvcr.io/nim/x:1.0``; "" when there is none."""
    repository = view.string((*path, "repository"))
    tag = view.get((*path, "tag"))
    if not repository:
        where = view.line(path)
        view.diags.add("K8S-MISSING-FIELD", f"{fmt_path(path)}.repository is missing", where, view.job)
        return ""
    return f"{repository}:{tag}" if isinstance(tag, str | int | float) and str(tag) else repository


# Containers


def _read_container(
    view: ObjectView,
    cpath: Path,
    volumes: dict[str, _Volume],
    facts: PodFacts,
    resources_key: Path = ("resources",),
    image_required: bool = True,
    image: str | None = None,
    stage: ContainerStage = ContainerStage.APP,
) -> _Usage:
    """``image``: the container's image when it is not the ``image`` field (read by the caller)."""
    line = view.line(cpath)
    container = view.mapping(cpath)
    if container is None:
        return _Usage()
    if image is None:
        image = view.string_at(container, cpath, "image")
    if image is None and image_required:
        view.diags.add("K8S-MISSING-FIELD", f"{fmt_path(cpath)}.image is missing", line, view.job)
    command, command_paths = _words(view, (*cpath, "command"), view.get_at(container, cpath, "command"))
    args, args_paths = _words(view, (*cpath, "args"), view.get_at(container, cpath, "args"))
    mounts = _mounts(view, cpath, volumes, facts)
    words, word_paths = command + args, command_paths + args_paths
    body = _program(view, words, word_paths, mounts) if words else None
    if body is not None:  # the IR keeps the argv with references, never a literal credential
        command, args = list(body.argv[: len(command)]), list(body.argv[len(command) :])
    facts.containers.append(
        ir.Container(
            image=image or "",
            name=view.string_at(container, cpath, "name"),
            runtime=ContainerRuntime.KUBERNETES,
            command=tuple(command),
            args=tuple(args),
            workdir=view.string_at(container, cpath, "workingDir"),
            mounts=tuple(mounts),
            line=line,
            stage=stage,
        )
    )
    env = _environment(view, cpath)
    facts.environment.extend(env)
    _monitoring(image, env, line, facts)
    if body is not None:
        facts.bodies.append(body)
        facts.launchers.extend(body.facts.launchers)
    for ppath, _ in view.items((*cpath, "ports")):
        port = view.integer((*ppath, "containerPort"))
        if port is not None:
            facts.ports.append(port)
            if view.string((*ppath, "name")) == kinds.PYTORCH_PORT_NAME:
                facts.rendezvous_port = port
        view.touch((*ppath, "name"))  # labels for the port; hostPort and the rest stay raw
        view.touch((*ppath, "protocol"))
    return _usage(view, (*cpath, *resources_key))


def _words(view: ObjectView, path: Path, value: object) -> tuple[list[str], list[Path]]:
    """An argv list (``value``, got at ``path``); Kubernetes rejects a plain string or numbers in it."""
    if value is None:
        return [], []
    view.touch(path)
    if isinstance(value, str):
        view.bad_type(path, "a list of strings", value)
        return [value], [path]
    if not isinstance(value, list):
        view.bad_type(path, "a list of strings", value)
        return [], []
    words, paths = [], []
    for index, word in enumerate(value):
        if isinstance(word, dict | list) or word is None:
            view.bad_type((*path, index), "a string", word)
            continue
        if not isinstance(word, str):
            view.bad_type((*path, index), "a string", word)
        words.append(str(word).lower() if isinstance(word, bool) else str(word))
        paths.append((*path, index))
    return words, paths


def _program(view: ObjectView, words: list[str], paths: list[Path], mounts: list[ir.Mount]) -> ShellBody:
    """What a container runs, read by the shell analyzer like any script line.

    An inline ``sh -c`` script is analyzed as a script from its own first line;
    any other argv as one quoted command line (launchers, containers, paths).
    """
    inline = shell_script(words)
    if inline is None:
        line = view.value_line(paths[0])
        argv, hidden = conceal_argv(words, line)  # Kubernetes' own $(NAME) references
        Concealed("", hidden).report(view.diags, view.job)
        body = analyze_body("exec", shlex.join(argv), line, view, is_script=False)
        body.facts = replace(
            body.facts, environment=Concealed("", hidden).environment(body.facts.environment)
        )
        body.argv = tuple(argv)
    else:
        shell, script = inline
        at = words.index(script, 1)
        body = analyze_body(shell, script, view.value_line(paths[at]), view)
        body.argv = (*words[:at], body.text, *words[at + 1 :])
    # Paths inside configuration mounts (a script from a ConfigMap, a secret file) are no storage.
    private = [m.target for m in mounts if m.kind not in _STORAGE_KINDS and m.target]
    storage = tuple([s for s in body.facts.storage if not _under_any(s.path, private)])
    if len(storage) != len(body.facts.storage):
        body.facts = replace(body.facts, storage=storage)
    return body


def _under_any(path: str, roots: list[str]) -> bool:
    return any(path == root or path.startswith(root.rstrip("/") + "/") for root in roots)


def analyze_body(shell: str, text: str, line: int, view: ObjectView, is_script: bool = True) -> ShellBody:
    """Shell text read like a script body: literal credentials become references first."""
    text, facts = analyzed(text, line, view.diags, view.job, lambda *a: analyze(*a))  # looked up per call
    return ShellBody(shell, text, line, facts, is_script)


# Environment


def _environment(view: ObjectView, cpath: Path) -> list[ir.EnvVar]:
    env: list[ir.EnvVar] = []
    # Each entry's fields are read from the entry (the *_at getters): jobs have long env lists.
    entries = view.peek((*cpath, "env"))
    for epath, item in view.items((*cpath, "env")):
        if not isinstance(item, dict):
            view.bad_type(epath, "a mapping", item)
            continue
        line = view.line_at(entries, epath)
        name = view.string_at(item, epath, "name")
        if not name:
            view.diags.add("K8S-MISSING-FIELD", f"{fmt_path(epath)}.name is missing", line, view.job)
            continue
        if view.has_at(item, epath, "valueFrom"):
            env.append(_env_reference(view, (*epath, "valueFrom"), item["valueFrom"], name, line))
            continue
        value = view.string_at(item, epath, "value") or ""
        secret_name = looks_like_secret(name) and not _ENV_REFERENCE.fullmatch(value)
        if value and (secret_name or looks_like_credential(value)):
            view.diags.add(
                "K8S-SECRET-LITERAL",
                f"env {name} holds a literal credential; its value is not kept (use a secretKeyRef)",
                line,
                view.job,
            )
            value = REDACTED
        env.append(ir.EnvVar(name, value=value, origin=EnvOrigin.ENV, line=line))
    for fpath, item in view.items((*cpath, "envFrom")):
        if not isinstance(item, dict):
            view.bad_type(fpath, "a mapping", item)
            continue
        prefix = view.string((*fpath, "prefix")) or ""
        for source, kind in (("secretRef", SecretKind.SECRET), ("configMapRef", SecretKind.CONFIG_MAP)):
            ref_name = view.string((*fpath, source, "name"))
            if ref_name:
                secret = ir.SecretRef(ref_name, None, kind)
                env.append(
                    ir.EnvVar(f"{prefix}*", secret=secret, origin=EnvOrigin.ENV_FROM, line=view.line(fpath))
                )
    return env


def _env_reference(view: ObjectView, path: Path, value_from: object, name: str, line: int) -> ir.EnvVar:
    """An entry's ``valueFrom`` (``value_from``, the value at ``path``)."""
    for source, kind in (("secretKeyRef", SecretKind.SECRET), ("configMapKeyRef", SecretKind.CONFIG_MAP)):
        if view.has_at(value_from, path, source):
            ref_path, ref = (*path, source), _child(value_from, source)
            secret = ir.SecretRef(
                view.string_at(ref, ref_path, "name") or "", view.string_at(ref, ref_path, "key"), kind
            )
            return ir.EnvVar(name, secret=secret, origin=EnvOrigin.ENV, line=line)
    if view.has_at(value_from, path, "fieldRef"):
        ref_path, ref = (*path, "fieldRef"), _child(value_from, "fieldRef")
        field_path = view.string_at(ref, ref_path, "fieldPath") or ""
        return ir.EnvVar(name, value=field_path, origin=EnvOrigin.FIELD_REF, line=line)
    if view.has_at(value_from, path, "resourceFieldRef"):
        ref_path, ref = (*path, "resourceFieldRef"), _child(value_from, "resourceFieldRef")
        resource = view.string_at(ref, ref_path, "resource") or ""
        return ir.EnvVar(name, value=f"resource:{resource}", origin=EnvOrigin.FIELD_REF, line=line)
    return ir.EnvVar(name, value=None, origin=EnvOrigin.ENV, line=line)


def _child(node: object, key: str) -> object:
    """``node[key]`` of a mapping; None for anything else (the *_at getters then walk the path)."""
    return node.get(key) if isinstance(node, dict) else None


# Volumes and mounts


def _volumes(view: ObjectView, path: Path, claim_templates: tuple[str, ...]) -> dict[str, _Volume]:
    volumes = {name: _Volume(MountKind.PVC, name, storage=f"pvc:{name}") for name in claim_templates}
    for vpath, item in view.items(path):
        if not isinstance(item, dict):
            view.bad_type(vpath, "a mapping", item)
            continue
        name = view.string_at(item, vpath, "name")
        if name:
            volumes[name] = _volume(view, vpath, item)
    return volumes


def _volume(view: ObjectView, vpath: Path, item: dict[str, object]) -> _Volume:
    """The volume ``item`` (the mapping at ``vpath``), by its source."""

    def text(source: str, key: str) -> str | None:
        return view.string_at(_child(item, source), (*vpath, source), key)

    def flag(source: str, key: str) -> bool:
        return bool(view.boolean_at(_child(item, source), (*vpath, source), key))

    if "persistentVolumeClaim" in item:
        claim = text("persistentVolumeClaim", "claimName") or ""
        return _Volume(MountKind.PVC, claim, flag("persistentVolumeClaim", "readOnly"), f"pvc:{claim}")
    if "hostPath" in item:
        host = text("hostPath", "path") or ""
        # the kubelet makes a DirectoryOrCreate folder; other types stay raw: the path must be there
        create = view.peek((*vpath, "hostPath", "type")) == "DirectoryOrCreate"
        if create:
            text("hostPath", "type")
        return _Volume(MountKind.HOST_PATH, host, False, host, create)
    if "nfs" in item:
        where = f"{text('nfs', 'server') or ''}:{text('nfs', 'path') or ''}"
        return _Volume(MountKind.NFS, where, flag("nfs", "readOnly"), f"nfs:{where}")
    if "csi" in item:
        driver = text("csi", "driver") or ""
        return _Volume(MountKind.CSI, driver, flag("csi", "readOnly"), f"csi:{driver}")
    if "emptyDir" in item:
        medium = text("emptyDir", "medium")
        return _Volume(MountKind.EMPTY_DIR, medium)
    if "configMap" in item:
        return _Volume(MountKind.CONFIG_MAP, text("configMap", "name"), True)
    if "secret" in item:
        return _Volume(MountKind.SECRET, text("secret", "secretName"), True)
    if "ephemeral" in item:
        return _Volume(MountKind.PVC, "ephemeral")
    source_type = next((str(k) for k in item if k != "name"), None)
    return _Volume(MountKind.OTHER, source_type)


def _mounts(view: ObjectView, cpath: Path, volumes: dict[str, _Volume], facts: PodFacts) -> list[ir.Mount]:
    mounts = []
    entries = view.peek((*cpath, "volumeMounts"))
    for mpath, item in view.items((*cpath, "volumeMounts")):
        if not isinstance(item, dict):
            view.bad_type(mpath, "a mapping", item)
            continue
        line = view.line_at(entries, mpath)
        name = view.string_at(item, mpath, "name") or ""
        target = view.string_at(item, mpath, "mountPath") or ""
        volume = volumes.get(name)
        if volume is None:
            view.diags.add(
                "K8S-MISSING-FIELD",
                f"{fmt_path(mpath)}: no volume named {name!r} in the pod",
                line,
                view.job,
            )
            volume = _Volume(MountKind.OTHER, name)
        read_only = bool(view.boolean_at(item, mpath, "readOnly")) or volume.read_only
        mounts.append(ir.Mount(target, volume.source, volume.kind, read_only, line, volume.create))
        if volume.kind == MountKind.CONFIG_MAP and volume.source:
            facts.config_maps.append(ConfigMapMount(volume.source, target, line))
        if volume.kind in _STORAGE_KINDS and volume.storage:
            access = ir.READ if read_only else ir.READ_WRITE
            facts.storage.append(ir.StoragePath(volume.storage, access, StorageVia.MOUNT, line))
            if target and target != volume.storage:
                facts.storage.append(ir.StoragePath(target, access, StorageVia.CONTAINER_MOUNT, line))
    return mounts


# Monitoring


def _monitoring(image: str | None, env: list[ir.EnvVar], line: int, facts: PodFacts) -> None:
    if image:
        for needle, kind in kinds.MONITORING_IMAGES.items():
            if needle in image:
                facts.monitoring.append(ir.MonitoringHook(kind, image, line))
    by_kind: dict[str, list[str]] = {}
    for var in env:
        for prefix, kind in kinds.MONITORING_ENV_PREFIXES.items():
            if var.name.startswith(prefix):
                by_kind.setdefault(kind, []).append(var.name)
    for kind, names in by_kind.items():
        facts.monitoring.append(ir.MonitoringHook(kind, ", ".join(names), line))


# Placement


def _gpu_type(node_selector: list[tuple[str, str]]) -> str | None:
    for key, value in node_selector:
        if key in kinds.gpu_product_labels() and value:
            return value
    return None


def _required_node_affinity(view: ObjectView, path: Path) -> tuple[str | None, str | None]:
    """A one-line summary of the required node affinity terms, and a GPU model pinned by them."""
    terms_path = (*path, "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms")
    summaries: list[str] = []
    gpu_type = None
    for tpath, _ in view.items(terms_path):
        parts = []
        for epath, _ in view.items((*tpath, "matchExpressions")):
            key = view.string((*epath, "key")) or ""
            operator = view.string((*epath, "operator")) or ""
            values = view.strings((*epath, "values"))
            parts.append(f"{key} {operator} ({','.join(values)})" if values else f"{key} {operator}")
            if key in kinds.gpu_product_labels() and operator == "In" and values:
                gpu_type = "|".join(values)
        if parts:
            summaries.append(" and ".join(parts))
    return (" or ".join(summaries) or None), gpu_type


def _tolerations(view: ObjectView, path: Path) -> list[ir.KeyValue]:
    out = []
    for tpath, item in view.items(path):
        if not isinstance(item, dict):
            view.bad_type(tpath, "a mapping", item)
            continue
        operator = view.string((*tpath, "operator")) or "Equal"
        value = view.string((*tpath, "value"))
        effect = view.string((*tpath, "effect"))
        text = operator + (f"={value}" if value else "") + (f":{effect}" if effect else "")
        out.append(ir.KeyValue(view.string((*tpath, "key")) or "*", text))
    return out


# Resources


def _usage(view: ObjectView, path: Path) -> _Usage:
    usage = _Usage()
    for part, into in (("requests", usage.requests), ("limits", usage.limits)):
        found = view.mapping((*path, part))
        for name, value in (found or {}).items():
            quantity = parse_quantity(value)
            qpath = (*path, part, str(name))
            view.touch(qpath)
            usage.lines.setdefault(str(name), view.line(qpath))
            if quantity is None and has_placeholder(value):
                role = PlaceholderRole.GPUS if devices.is_whole_gpu(str(name)) else PlaceholderRole.OTHER
                view.placeholder(qpath, str(value), role)
                continue  # a template: reported once as K8S-TEMPLATED, the request unknown
            if quantity is None or quantity < 0:
                view.diags.add(
                    "K8S-BAD-QUANTITY",
                    f"{fmt_path(qpath)}: {value!r} is not a valid quantity",
                    view.line(qpath),
                    view.job,
                )
                continue
            into[str(name)] = quantity
    return usage


def _effective(app: list[_Usage], init: list[_Usage], part: str) -> dict[str, Fraction]:
    """Kubernetes' pod total: app containers add up; init containers run alone, so the max counts."""
    total: dict[str, Fraction] = {}
    for usage in app:
        for name, quantity in getattr(usage, part).items():
            total[name] = total.get(name, Fraction(0)) + quantity
    for usage in init:
        for name, quantity in getattr(usage, part).items():
            total[name] = max(total.get(name, Fraction(0)), quantity)
    return total


def _resources(
    view: ObjectView,
    spec: Path,
    app: list[_Usage],
    init: list[_Usage],
    node_selector: list[tuple[str, str]],
    gpu_type: str | None,
    facts: PodFacts,
) -> ir.Resources:
    requests = _effective(app, init, "requests")
    limits = _effective(app, init, "limits")
    lines = {name: line for usage in reversed([*app, *init]) for name, line in usage.lines.items()}
    pod_level = _usage(view, (*spec, "resources")) if view.has((*spec, "resources")) else None
    if pod_level is not None:  # pod-level resources (Kubernetes 1.32+) bound the whole pod
        requests.update({k: v for k, v in pod_level.requests.items() if k in _SUMMED})
        limits.update({k: v for k, v in pod_level.limits.items() if k in _SUMMED})
    # CPU: the request is what the scheduler reserves. Memory: the limit is where the OOM killer
    # stops the job, the closest thing to sbatch --mem.
    cpu = requests.get("cpu", limits.get("cpu"))
    memory = limits.get("memory", requests.get("memory"))
    if _loses_detail(requests, limits, cpu):
        facts.raw.append(
            RAW_KEYS.item(
                "resources",
                _describe_usage(requests, limits),
                view.line(spec),
                f"{fmt_path(spec)} (pod total)",
            )
        )
    gpus = None
    generic = []
    tmp_disk = None
    for name in sorted(set(requests) | set(limits)):
        if name in _SUMMED:
            continue
        # Extended resources are set in limits (requests, if given, must be equal).
        quantity = limits.get(name, requests.get(name, Fraction(0)))
        if name == kinds.EPHEMERAL_STORAGE:
            tmp_disk = to_mib(quantity)
            continue
        if name.startswith(kinds.HUGEPAGES_PREFIX):
            page = parse_quantity(name[len(kinds.HUGEPAGES_PREFIX) :])
            pages = int(quantity // page) if page else int(quantity)
            generic.append(ir.GenericResource(name, pages))
            continue
        if not is_integer(quantity):
            view.diags.add(
                "K8S-BAD-QUANTITY",
                f"{name}: extended resources must be whole numbers, got {float(quantity):g}",
                lines.get(name, view.line(spec)),
                view.job,
            )
            continue
        count = int(quantity)
        found = devices.device_type(name)
        kind = found.kind if found is not None else None
        if kind == devices.DeviceKind.GPU:
            gpus = (gpus or 0) + count
        elif found is not None and kind == devices.DeviceKind.GPU_SLICE:
            gpus = (gpus or 0) + count
            gpu_type = gpu_type or devices.SLICE_TYPE + (found.model(name) or "")
        else:
            generic.append(ir.GenericResource(name, count))
    return ir.Resources(
        cpus_per_node=_ceil(cpu),
        mem_per_node_mb=to_mib(memory) if memory is not None else None,
        gpus_per_node=gpus,
        gpu_type=gpu_type,
        generic=tuple(generic),
        tmp_disk_mb=tmp_disk,
        node_selector=tuple([ir.KeyValue(k, v) for k, v in node_selector]),
    )


def _ceil(quantity: Fraction | None) -> int | None:
    # Fractional CPUs round up: Slurm allocates whole CPUs.
    return None if quantity is None else math.ceil(quantity)


def _loses_detail(requests: dict[str, Fraction], limits: dict[str, Fraction], cpu: Fraction | None) -> bool:
    """True when the typed fields cannot hold the pod's requests and limits exactly."""
    if cpu is not None and not is_integer(cpu):
        return True
    return any(name in requests and name in limits and requests[name] != limits[name] for name in _SUMMED)


def _describe_usage(requests: dict[str, Fraction], limits: dict[str, Fraction]) -> str:
    def render(values: dict[str, Fraction]) -> str:
        parts = []
        for name in _SUMMED:
            if name in values:
                value = values[name]
                text = format_cpu(value) if name == "cpu" else f"{to_mib(value)}Mi"
                parts.append(f"{name}={text}")
        return " ".join(parts) or "-"

    return f"requests: {render(requests)}; limits: {render(limits)}"
