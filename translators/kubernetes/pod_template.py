"""The pod template of one component, and the ConfigMap that carries the script.

Every flavor runs the same pod: the unchanged job script from a ConfigMap
mounted at ``/opt/migrate``, started by the entrypoint (``shims.ENTRYPOINT``)
with ``["/bin/bash", "/opt/migrate/entrypoint.sh"]``. The ConfigMap is the one
default (not ``bash -c``): the script stays byte-identical and diffable, and
its size never matters for the pod spec.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Any

from migrate import ir
from migrate.names import dns1123_label
from migrate.render import plural
from migrate.translators import runtimes
from migrate.translators.runtimes import Runtime
from migrate.translators.shell.redact import redact
from migrate.vocab import EnvOrigin, SecretKind

from . import execution, images, pod_resources, shims, slurmenv, submit_dir
from .job_policy import JobPolicy
from .storage import Volume
from .translation_context import LABEL_JOB, Context
from .workdir import container_dir
from .yamlemit import Manifest, Path

COMMAND = ["/bin/bash", f"{slurmenv.MOUNT_DIR}/entrypoint.sh"]
SCRIPT_VOLUME = "migrate-script"
LABEL_COMPONENT = "migrate.io/component"


@functools.cache
def _runtime_word(names: tuple[str, ...]) -> re.Pattern[str]:
    """A container runtime of ``names`` named as a command word: at a line's start or after a separator
    or srun's words."""
    return re.compile(r"(?:^|[\s;&|(`])(" + "|".join(map(re.escape, names)) + r")(?=\s|$)", re.M)


@dataclass
class PodParts:
    template: dict[str, Any]
    comments: dict[Path, list[str]] = field(default_factory=dict)
    env_names: set[str] = field(default_factory=set)
    gpus: int = 0
    exclusive_topology: str | None = None

    def note(self, path: Path, text: str) -> None:
        notes = self.comments.setdefault(path, [])
        if text not in notes:
            notes.append(text)


def configmap_name(ctx: Context) -> str:
    return f"{ctx.name}-script"


def script_text(ctx: Context) -> str:
    """The job script: its header as written, the body as the IR holds it (credentials read from the env)."""
    script = ctx.job.script
    body = script.body if script is not None else ""
    body = redact(body, any_case=False)  # a no-op for a body the reader rewrote; a net for other IRs
    if script is not None and script.header:
        return script.header + body
    return body if body.startswith("#!") else "#!/bin/bash\n" + body


def container_runtimes(ctx: Context) -> list[Runtime]:
    """The container runtimes with a shim that the script starts programs with: the pod is their
    container already."""
    body = ctx.job.script.body if ctx.job.script is not None else ""
    shimmed = runtimes.shimmed()
    if not shimmed:
        return []
    used = _runtimes_started(tuple(r.name for r in shimmed), body)
    return [runtime for runtime in shimmed if runtime.name in used]


# Asked several times for each job's body as its pods are written: searched once.
@functools.lru_cache(maxsize=64)
def _runtimes_started(names: tuple[str, ...], body: str) -> frozenset[str]:
    return frozenset(_runtime_word(names).findall(body))


def script_configmap(ctx: Context) -> Manifest:
    data: dict[str, str] = {"job.sh": script_text(ctx), "entrypoint.sh": shims.ENTRYPOINT}
    data["srun"] = shims.SRUN
    data["scontrol"] = shims.SCONTROL
    data["sbatch"] = shims.SBATCH
    if ctx.job.modules:
        data["module"] = shims.MODULE
    if ctx.job.total_nodes() > 1:
        data["stepd"] = shims.STEPD
    for runtime in container_runtimes(ctx):
        data[runtime.name] = shims.container_run(runtime)
    body = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": ctx.metadata(configmap_name(ctx)),
        "data": data,
    }
    manifest = Manifest(body)
    manifest.note(
        ("data",),
        "job.sh is the original script, unchanged; the other keys are the entrypoint "
        "that sets SLURM_* and the srun/scontrol shims",
    )
    if container_runtimes(ctx):
        manifest.note(
            ("data",),
            f"{', '.join(r.name for r in container_runtimes(ctx))}: the pod runs in the job's image already, "
            "so the shim "
            "skips the runtime's options and image and runs the program",
        )
    if ctx.secret_keys or any(_literal(e) for e in _all_env(ctx.job)):
        manifest.note(
            ("data",), "job.sh reads the credentials it wrote out literally from the pod env instead"
        )
    return manifest


def script_volume(ctx: Context) -> dict[str, Any]:
    paths = shims.paths()
    items = [
        {"key": key, "path": paths[key]} for key in ("job.sh", "entrypoint.sh", "srun", "scontrol", "sbatch")
    ]
    if ctx.job.modules:
        items += [{"key": "module", "path": "bin/module"}, {"key": "module", "path": "bin/ml"}]
    if ctx.job.total_nodes() > 1:
        items.append({"key": "stepd", "path": paths["stepd"]})
    items += [{"key": runtime.name, "path": paths[runtime.name]} for runtime in container_runtimes(ctx)]
    return {
        "name": SCRIPT_VOLUME,
        "configMap": {"name": configmap_name(ctx), "defaultMode": 0o755, "items": items},
    }


def _names(native: Any) -> set[str]:
    return {e["name"] for e in native.env()}


def _computed_credentials(
    ctx: Context, comp: ir.Component, index: int, present: set[str]
) -> list[dict[str, Any]]:
    """A credential the script read from a file or a command (``$(cat ~/.wandb_key)``), for native
    pods: from the job's Secret, which the TRANSLATE-SECRET diagnostic says how to create."""
    out: list[dict[str, Any]] = []
    name = credentials_secret(ctx)
    for env in (*ctx.job.environment, *comp.environment):
        ref = env.secret
        if ref is None or ref.kind != SecretKind.COMMAND or env.name in present:
            continue
        present.add(env.name)
        out.append({"name": env.name, "valueFrom": {"secretKeyRef": {"name": name, "key": env.name}}})
        if index == 0:
            ctx.fidelity.mapped(
                f"env {env.name}", f"secretKeyRef {name}/{env.name}: the script read it at run time", env.line
            )
            ctx.secret_keys.setdefault(name, []).append((env.name, env.line))
    return out


def script_manifests(ctx: Context) -> list[Manifest]:
    """The ConfigMap with the script and the shims; none when the pods run the step natively."""
    return [] if ctx.native is not None else [script_configmap(ctx)]


def _all_env(job: ir.Job) -> list[ir.EnvVar]:
    seen: dict[str, ir.EnvVar] = {}
    for env in (*job.environment, *(e for c in job.components for e in c.environment)):
        seen.setdefault(f"{env.name}@{env.line}", env)
    return list(seen.values())


def _literal(env: ir.EnvVar) -> bool:
    return env.secret is not None and env.secret.kind == SecretKind.LITERAL


def _secret_name(ref: ir.SecretRef) -> str:
    return dns1123_label(ref.name.replace("_", "-"), 253, "secret")


def credentials_secret(ctx: Context) -> str:
    """The one Secret per job that holds the credentials its files wrote out literally."""
    return dns1123_label(f"{ctx.name}-credentials", 253, "credentials")


_POD_ORIGINS = frozenset(
    {
        EnvOrigin.SBATCH_EXPORT,
        EnvOrigin.ENV,
        EnvOrigin.ENV_FROM,
        EnvOrigin.FIELD_REF,
        EnvOrigin.SECRET_LITERAL,
    }
)


_KUBELET_DOLLAR = re.compile(r"\$(?=[$(])")


def literal_value(value: str) -> str:
    """An env value the kubelet passes on unchanged.

    The kubelet reads '$(NAME)' as a reference and '$$' as '$', and keeps '$' before any other
    character with that character: doubling each '$' that a '$' or '(' follows is enough.
    """
    return _KUBELET_DOLLAR.sub("$$", value)


def user_environment(ctx: Context, comp: ir.Component, index: int) -> list[dict[str, Any]]:
    """Env entries for the user's variables; fidelity once per variable (component 0 records).

    Variables the script sets itself stay in the script. A credential written
    as a literal (in the script or an --export list) was replaced by the reader
    with a variable the script reads; that variable comes from the job's
    Secret. Never is a secret value written.
    """
    out: list[dict[str, Any]] = []
    record = index == 0
    provided: set[str] = set()
    for env in (*ctx.job.environment, *comp.environment):
        item = f"env {env.name}"
        ref = env.secret
        if ref is not None and ref.kind == SecretKind.COMMAND:
            if record and ctx.native is None:
                ctx.fidelity.mapped(
                    item, "computed by the script at run time; the command must work in the pod", env.line
                )
        elif ref is not None and ref.kind == SecretKind.LITERAL:
            name = credentials_secret(ctx)
            if ref.name not in provided:
                provided.add(ref.name)
                out.append({"name": ref.name, "valueFrom": {"secretKeyRef": {"name": name, "key": ref.name}}})
            if record:
                ctx.fidelity.mapped(item, f"secretKeyRef {name}/{ref.name} (never a literal)", env.line)
                ctx.secret_keys.setdefault(name, []).append((ref.name, env.line))
        elif ref is not None:
            key = ref.key or env.name
            name = _secret_name(ref)
            in_secret = ref.kind != SecretKind.CONFIG_MAP
            kind = "secretKeyRef" if in_secret else "configMapKeyRef"
            out.append({"name": env.name, "valueFrom": {kind: {"name": name, "key": key}}})
            if record:
                ctx.fidelity.mapped(item, f"{kind} {name}/{key} (never a literal)", env.line)
                if in_secret:
                    ctx.diag(
                        "TRANSLATE-SECRET",
                        f"create Secret {name!r} with key {key!r} for ${env.name} before the job runs "
                        f"(kubectl create secret generic {name} --from-literal={key}=...)",
                        env.line,
                    )
        elif env.origin not in _POD_ORIGINS:
            if record and ctx.native is None:  # native records the script's variables itself
                ctx.fidelity.mapped(item, "set by the script itself, which runs unchanged", env.line)
        elif env.value is None:
            if record:
                ctx.fidelity.dropped(
                    item,
                    "its value came from the submitter's environment, which does not exist on Kubernetes",
                    env.line,
                )
        else:
            out.append({"name": env.name, "value": env.value})
            if record:
                ctx.fidelity.mapped(item, "container env", env.line)
    return out


def report_credentials(ctx: Context) -> None:
    """One TRANSLATE-SECRET per job Secret: its keys and how to create it, never a value."""
    for name, keys in ctx.secret_keys.items():
        unique = list(dict.fromkeys(k for k, _ in keys))
        lines = [line for _, line in keys if line is not None]
        literals = " ".join(f"--from-literal={k}=..." for k in unique)
        ctx.diag(
            "TRANSLATE-SECRET",
            f"the job file wrote {plural(len(unique), 'credential')} out literally; they are not copied. "
            f"Create Secret {name!r} with {'key' if len(unique) == 1 else 'keys'} {', '.join(unique)} "
            "before the job runs "
            f"(kubectl create secret generic {name} {literals})",
            min(lines) if lines else None,
        )


def build(
    ctx: Context,
    comp: ir.Component,
    index: int,
    topo: slurmenv.Topology,
    policy: JobPolicy,
    volumes: list[Volume],
    subdomain: str | None = None,
    container_name: str = "main",
    extra_pod_labels: dict[str, str] | None = None,
) -> PodParts:
    res = pod_resources.build(ctx, comp, index)
    image = images.choose(ctx, comp, index)
    native = ctx.native
    mounts: list[dict[str, Any]] = []
    pod_volumes: list[dict[str, Any]] = []
    if native is None:
        env = slurmenv.environment(ctx, comp, index, topo, res.cpus, res.gpus, policy.io_env)
        env += user_environment(ctx, comp, index)
        env = [{**e, "value": literal_value(e["value"])} if "value" in e else e for e in env]
        mounts.append({"name": SCRIPT_VOLUME, "mountPath": slurmenv.MOUNT_DIR})
        pod_volumes.append(script_volume(ctx))
    else:  # the program's own env: what the script exported, the SLURM_* values it reads
        env = [
            e
            for e in user_environment(ctx, comp, index)
            if "valueFrom" in e or e["name"] not in _names(native)
        ]
        env = [{**e, "value": literal_value(e["value"])} if "value" in e else e for e in env] + native.env()
        env += _computed_credentials(ctx, comp, index, {e["name"] for e in env})
    parts = PodParts(
        {}, env_names={e["name"] for e in env}, gpus=res.gpus, exclusive_topology=res.exclusive_topology
    )
    for vol in volumes:
        mounts.append(vol.mount())
        pod_volumes.append(vol.volume())
        if vol.note:
            parts.note(("spec", "volumes", len(pod_volumes) - 1), vol.note)
    shm = execution.shm_volume(ctx, comp, res.gpus, res.resources.get("memory"))
    if shm is not None:
        mounts.append(shm[0])
        pod_volumes.append(shm[1])
        parts.note(("spec", "volumes", len(pod_volumes) - 1), shm[2])
    container: dict[str, Any] = {"name": container_name, "image": image}
    if native is None:
        container["command"] = list(COMMAND)
    else:
        argv = native.argv()
        if argv:  # a RayJob's pods run KubeRay's ray start
            container["command"] = argv[:1]
        if argv[1:]:
            container["args"] = argv[1:]
    in_container = next((c for c in comp.containers if c.workdir), None)
    workdir = (
        (native.shape.workdir if native is not None else None)
        or policy.working_dir
        or (
            container_dir(ctx, in_container.workdir, comp.environment, in_container.line)
            if in_container
            else None
        )
        or submit_dir.folder(ctx)
    )
    if workdir:
        container["workingDir"] = workdir
    if env or native is None:
        container["env"] = env
    limits = {name: value for name, value in res.resources.items() if name not in res.unlimited}
    container["resources"] = {"requests": dict(res.resources), "limits": limits}
    container["volumeMounts"] = mounts
    # Kueue labels stay on the workload: on a pod they would ask Kueue to manage the pod itself
    workload_only = {k: v for k, v in policy.labels.items() if not k.startswith("kueue.x-k8s.io/")}
    labels = {**ctx.labels, **workload_only, LABEL_COMPONENT: str(index), **(extra_pod_labels or {})}
    annotations = {**ctx.source_annotations, **policy.annotations}
    spec: dict[str, Any] = {"restartPolicy": "Never"}
    if subdomain:
        spec["subdomain"] = subdomain
    if policy.grace_period is not None:
        spec["terminationGracePeriodSeconds"] = policy.grace_period
    if policy.priority_class:
        spec["priorityClassName"] = policy.priority_class
    if policy.security_context:
        spec["securityContext"] = dict(policy.security_context)
    if res.node_selector:
        spec["nodeSelector"] = dict(sorted(res.node_selector.items()))
    affinity = _affinity(ctx, res, index)
    if affinity:
        spec["affinity"] = affinity
    tolerations = list(res.tolerations)
    if res.gpus:
        gpu = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
        tolerations += [gpu] if gpu not in tolerations else []
    if tolerations:
        spec["tolerations"] = tolerations
    spec["containers"] = [container]
    spec["volumes"] = pod_volumes
    parts.template = {"metadata": {"labels": labels, "annotations": annotations}, "spec": spec}
    for where, texts in res.notes.items():
        path: Path = (
            ("spec", where)
            if where in ("nodeSelector", "affinity")
            else ("spec", "containers", 0, "resources")
        )
        for text in texts:
            parts.note(path, text)
    for text in policy.notes.get("terminationGracePeriodSeconds", ()):
        parts.note(("spec", "terminationGracePeriodSeconds"), text)
    if image.startswith("REPLACE-ME"):
        parts.note(
            ("spec", "containers", 0, "image"),
            "no image known: set one (site config images: or defaults.image)",
        )
    return parts


def _affinity(ctx: Context, res: pod_resources.PodResources, index: int) -> dict[str, Any]:
    affinity: dict[str, Any] = {}
    terms = res.node_selector_terms()
    if terms:
        affinity["nodeAffinity"] = {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}
        }
    if res.spread_one_per_node:
        affinity["podAntiAffinity"] = {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {
                    "labelSelector": {"matchLabels": {LABEL_JOB: ctx.name, LABEL_COMPONENT: str(index)}},
                    "topologyKey": "kubernetes.io/hostname",
                }
            ]
        }
    return affinity


__all__ = [
    "COMMAND",
    "PodParts",
    "build",
    "configmap_name",
    "script_configmap",
    "script_manifests",
    "script_text",
    "user_environment",
]
