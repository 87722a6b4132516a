"""A container's env list as ``export`` lines of a batch script.

Literal values are exported exactly (Kubernetes' ``$(VAR)`` references become
``"${VAR}"``). Values from Secrets are never written into the script: it reads
them when it runs, from files the user provisions under ``MIGRATE_SECRETS_DIR``
(one file per key, like a Secret volume), and a diagnostic says which files.
ConfigMap values are inlined when the ConfigMap is in the same manifest file,
else read the same way from ``MIGRATE_CONFIG_DIR``. Downward-API values
(``fieldRef``) become the nearest Slurm variable.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from migrate import ir, workloads
from migrate.secrets import REDACTED
from migrate.translators.job_variables import SLURM
from migrate.vocab import EnvOrigin, FidelityStatus, SecretKind

from . import kubevars, shape
from .configmaps import ConfigMaps
from .context import CONFIG_DIR, SECRETS_DIR, Context
from .quoting import c_string, shell_word

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_COMPLETION_INDEX = re.compile(
    r"metadata\.(?:annotations|labels)\['batch\.kubernetes\.io/job-completion-index'\]"
)
_META_KEY = re.compile(r"metadata\.(annotations|labels)\['([^']*)'\]")
_JOBSET_KEY = re.compile(r"metadata\.(?:annotations|labels)\['jobset\.sigs\.k8s\.io/([a-z-]+)'\]")
_LWS_KEY = re.compile(r"metadata\.(?:annotations|labels)\['leaderworkerset\.sigs\.k8s\.io/([a-z-]+)'\]")
# A LeaderWorkerSet group's index in its batch script and tasks: the array task id, or the copy
# submit.sh submitted (translators/slurm/kube_groups.py).
LWS_GROUP_VAR = SLURM.LWS_GROUP.name
CONTAINER_ORIGINS = frozenset({EnvOrigin.ENV, EnvOrigin.ENV_FROM, EnvOrigin.FIELD_REF})
_SLURMS_OWN = ("SLURM_", "SLURMD_")  # the variables Slurm gives a job and its steps

# Shell functions the generated lines call; written once at the top of the script.
READ_HELPER = r"""# migrate_read DIR NAME KEY [optional]: a provisioned Secret/ConfigMap value (file per key)
migrate_read() {
  local f="$1/$2/$3"
  if [ -r "$f" ]; then cat -- "$f"; return 0; fi
  [ "${4:-}" = optional ] && return 1
  echo "migrate: $f is missing: provision key '$3' of '$2' there before the job runs" >&2
  return 1
}"""
DIR_HELPER = r"""# migrate_env_dir DIR PREFIX [optional]: export each file of DIR as PREFIX<name> (envFrom)
migrate_env_dir() {
  local f n
  if [ ! -d "$1" ]; then
    [ "${3:-}" = optional ] && return 0
    echo "migrate: $1 is missing: provision one file per key there before the job runs" >&2
    return 1
  fi
  for f in "$1"/*; do
    n="$2${f##*/}"
    [ -f "$f" ] && [[ $n =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] && export "$n=$(cat -- "$f")"
  done
  return 0
}"""


@dataclass
class EnvLines:
    lines: list[str] = field(default_factory=list)
    exported: list[str] = field(default_factory=list)  # names, in order
    # Values each srun task computes for itself (a pod's index): name -> shell arithmetic.
    per_task: dict[str, str] = field(default_factory=dict)
    helpers: set[str] = field(default_factory=set)
    prefixes: list[str] = field(default_factory=list)  # envFrom prefixes: any name under them may exist

    def defined(self, name: str) -> bool:
        return name in self.exported

    def maybe(self, name: str) -> bool:
        return any(name.startswith(p) for p in self.prefixes)


def container_env(comp: ir.Component) -> list[ir.EnvVar]:
    """The env of the component's pod template (not variables the reader found in its scripts)."""
    return [var for var in comp.environment if var.origin in CONTAINER_ORIGINS or _literal(var)]


def _literal(var: ir.EnvVar) -> bool:
    """A credential the reader took out of a script or an argv: the script now reads this variable."""
    return var.secret is not None and var.secret.kind == SecretKind.LITERAL


def export_lines(
    ctx: Context,
    env: list[ir.EnvVar],
    config_maps: ConfigMaps,
    preset: Sequence[str] = (),
    pods_per_job: int = 1,
) -> EnvLines:
    """``export`` lines for ``env``; ``preset`` names are defined before (JOB_COMPLETION_INDEX).

    ``pods_per_job``: the pods of each Job of a JobSet's replicated job, which its index labels count.
    """
    out = EnvLines(exported=list(preset))
    for credential in config_maps.credentials:
        if not out.defined(credential.variable):
            _from_config_map_credential(ctx, credential.variable, credential.config_map, out)
    for var in env:
        line = var.line
        item = f"env {var.name}"
        if var.origin == EnvOrigin.ENV_FROM:
            _env_from(ctx, var, config_maps, out)
            continue
        if not _NAME.match(var.name):
            ctx.fidelity.dropped(item, "not a valid shell variable name; bash cannot export it", line)
            continue
        if var.secret is None and var.name.startswith(_SLURMS_OWN):
            # No Slurm reads a pod's SLURM_*: its value stood in for Slurm's (a pod written from an
            # sbatch script), and exported it would override Slurm's own, which srun also reads as
            # its options (SLURM_JOB_ID as --jobid, SLURM_NTASKS as -n).
            ctx.fidelity.dropped(
                item, "Slurm sets it in every job and step; the pod's value stood in for it", line
            )
        elif _literal(var):
            assert var.secret is not None
            if not out.defined(var.secret.name):
                _redacted(ctx, ir.replace(var, name=var.secret.name), out)
        elif var.secret is not None:
            _reference(ctx, var, config_maps, out)
        elif var.origin == EnvOrigin.FIELD_REF:
            _field(ctx, var, out, pods_per_job)
        elif var.value == REDACTED:
            _redacted(ctx, var, out)
        elif var.value is not None:
            parts = kubevars.split(c_string(var.value), lambda n: out.defined(n) or out.maybe(n))
            out.lines.append(f"export {var.name}={_shell(parts, out)}")
            out.exported.append(var.name)
            how = (
                "exported; its $(VAR) references are expanded by bash"
                if kubevars.has_refs(parts)
                else "exported"
            )
            ctx.fidelity.mapped(item, how, line)
        else:
            ctx.fidelity.dropped(item, "a valueFrom source with no Slurm counterpart", line)
    return out


def _shell(parts: list[kubevars.Part], out: EnvLines) -> str:
    text = kubevars.shell_text(parts)
    if not any(isinstance(p, kubevars.Ref) and not out.defined(p.name) for p in parts):
        return text
    # References that only an envFrom may define: Kubernetes keeps '$(NAME)' when it does not.
    pieces = []
    for part in parts:
        if isinstance(part, kubevars.Ref) and not out.defined(part.name):
            pieces.append('"${' + part.name + "-\\$(" + part.name + ')}"')
        else:
            pieces.append(kubevars.shell_text([part]))
    return "".join(pieces)


def _optional(ctx: Context, var: ir.EnvVar) -> bool:
    """The reader keeps ``optional: true`` of a key reference as a raw item just below the variable."""
    if var.line is None:
        return False
    return any(
        item.key == "optional"
        and item.value == "true"
        and item.line is not None
        and 0 < item.line - var.line <= 6
        for item in ctx.job.raw
    )


def _reference(ctx: Context, var: ir.EnvVar, config_maps: dict[str, dict[str, str]], out: EnvLines) -> None:
    ref = var.secret
    assert ref is not None
    item = f"env {var.name}"
    key = ref.key or ""
    if ref.kind == SecretKind.CONFIG_MAP and ref.name in config_maps and key in config_maps[ref.name]:
        value = config_maps[ref.name][key]
        out.lines.append(f"export {var.name}={shell_word(c_string(value))}")
        out.exported.append(var.name)
        ctx.fidelity.mapped(
            item, f"ConfigMap {ref.name} key {key} is in the manifest file: its value is inlined", var.line
        )
        return
    base = SECRETS_DIR if ref.kind == SecretKind.SECRET else CONFIG_DIR
    what = "Secret" if ref.kind == SecretKind.SECRET else "ConfigMap"
    optional = _optional(ctx, var)
    call = f"migrate_read {base} {shell_word(ref.name)} {shell_word(key)}" + (" optional" if optional else "")
    out.helpers.add(READ_HELPER)
    if optional:
        out.lines.append(f"if {var.name}=$({call}); then export {var.name}; fi")
    else:
        out.lines.append(f"{var.name}=$({call}) || exit 1")
        out.lines.append(f"export {var.name}")
    out.exported.append(var.name)
    where = SLURM.SECRETS_DIR.name if ref.kind == SecretKind.SECRET else SLURM.CONFIG_DIR.name
    ctx.fidelity.approximated(
        item,
        f"read at run time from ${where}/{ref.name}/{key}"
        + (" when present (optional)" if optional else "")
        + ("; the value is never written into the script" if ref.kind == SecretKind.SECRET else ""),
        var.line,
    )
    code = "TO-SLURM-SECRET" if ref.kind == SecretKind.SECRET else "TO-SLURM-CONFIGMAP"
    ctx.diag(
        code,
        f"env {var.name} comes from {what} {ref.name} key {key}: provision the file "
        f"${where}/{ref.name}/{key} ({_default(ref.kind)}/{ref.name}/{key} by default; readable only by "
        "the job's user) before submitting",
        var.line,
    )


def _default(kind: SecretKind) -> str:
    return "~/.migrate/secrets" if kind == SecretKind.SECRET else "~/.migrate/configmaps"


def _redacted(ctx: Context, var: ir.EnvVar, out: EnvLines) -> None:
    out.helpers.add(READ_HELPER)
    out.lines.append(f"{var.name}=$(migrate_read {SECRETS_DIR} env {shell_word(var.name)}) || exit 1")
    out.lines.append(f"export {var.name}")
    out.exported.append(var.name)
    ctx.fidelity.approximated(
        f"env {var.name}",
        "the manifest holds a literal credential, which is not copied: read at run time from "
        f"${SLURM.SECRETS_DIR.name}/env/{var.name}",
        var.line,
    )
    ctx.diag(
        "TO-SLURM-SECRET",
        f"env {var.name} held a literal credential in the manifest: provision it as the file "
        f"${SLURM.SECRETS_DIR.name}/env/{var.name} before submitting",
        var.line,
    )


def _from_config_map_credential(ctx: Context, name: str, config_map: str, out: EnvLines) -> None:
    out.helpers.add(READ_HELPER)
    out.lines.append(f"{name}=$(migrate_read {SECRETS_DIR} env {shell_word(name)}) || exit 1")
    out.lines.append(f"export {name}")
    out.exported.append(name)
    ctx.fidelity.approximated(
        f"ConfigMap {config_map} credential {name}",
        "the ConfigMap holds a literal credential, which is not copied: read at run time from "
        f"${SLURM.SECRETS_DIR.name}/env/{name}",
        None,
    )
    ctx.diag(
        "TO-SLURM-SECRET",
        f"ConfigMap {config_map} held a literal credential ({name}): provision it as the file "
        f"${SLURM.SECRETS_DIR.name}/env/{name} before submitting",
        None,
    )


def _env_from(ctx: Context, var: ir.EnvVar, config_maps: dict[str, dict[str, str]], out: EnvLines) -> None:
    ref = var.secret
    if ref is None:
        return
    prefix = var.name[:-1] if var.name.endswith("*") else var.name
    item = f"envFrom {ref.kind} {ref.name}" + (f" (prefix {prefix})" if prefix else "")
    if ref.kind == SecretKind.CONFIG_MAP and ref.name in config_maps:
        for key, value in config_maps[ref.name].items():
            name = prefix + key
            if _NAME.match(name):
                out.lines.append(f"export {name}={shell_word(c_string(value))}")
                out.exported.append(name)
        ctx.fidelity.mapped(
            item, f"ConfigMap {ref.name} is in the manifest file: its keys are exported", var.line
        )
        return
    base = SECRETS_DIR if ref.kind == SecretKind.SECRET else CONFIG_DIR
    where = SLURM.SECRETS_DIR.name if ref.kind == SecretKind.SECRET else SLURM.CONFIG_DIR.name
    out.helpers.add(DIR_HELPER)
    out.lines.append(f"migrate_env_dir {base}/{shell_word(ref.name)} {shell_word(prefix)} || exit 1")
    out.prefixes.append(prefix)
    ctx.fidelity.approximated(
        item,
        f"every file of ${where}/{ref.name} is exported at run time as {prefix or ''}<file name>",
        var.line,
    )
    code = "TO-SLURM-SECRET" if ref.kind == SecretKind.SECRET else "TO-SLURM-CONFIGMAP"
    ctx.diag(
        code,
        f"envFrom {ref.kind} {ref.name}: provision one file per key under ${where}/{ref.name} "
        "before submitting",
        var.line,
    )


def _field(ctx: Context, var: ir.EnvVar, out: EnvLines, pods_per_job: int) -> None:
    path = var.value or ""
    item = f"env {var.name} ({path})"
    task = per_task_value(ctx.job, path, pods_per_job)
    if task is not None:
        expression, reason = task
        # The batch script itself stands for the first pod; each srun task sets its own value.
        out.lines.append(f"export {var.name}=0")
        out.exported.append(var.name)
        out.per_task[var.name] = expression
        ctx.fidelity.mapped(item, reason, var.line)
        return
    value, status, reason = field_value(ctx.job, path)
    if value is None:
        ctx.fidelity.dropped(item, reason, var.line)
        return
    out.lines.append(f"export {var.name}={value}")
    out.exported.append(var.name)
    ctx.fidelity.record(status, item, reason, var.line)


def per_task_value(job: ir.Job, path: str, pods_per_job: int) -> tuple[str, str] | None:
    """A pod's index that differs per pod of a multi-node step: (shell arithmetic, fidelity reason).

    The pods of one component run as the tasks of one srun step, one task per node, in index
    order, so a pod's position is the task's SLURM_PROCID.
    """
    if job.array is not None or len(job.components) != 1 or job.components[0].replicas < 2:
        return None
    per_job = max(pods_per_job, 1)
    label = _JOBSET_KEY.fullmatch(path)
    if label is not None and label.group(1) in ("job-index", "job-global-index"):
        if per_job == 1:
            return "$SLURM_PROCID", "each srun task's SLURM_PROCID (one pod per Job, one task per pod)"
        return (
            f"$((SLURM_PROCID / {per_job}))",
            f"each srun task's SLURM_PROCID / {per_job} (the pods of one Job)",
        )
    if _COMPLETION_INDEX.fullmatch(path) and _replicas_are_jobs(job) and per_job > 1:
        return (
            f"$((SLURM_PROCID % {per_job}))",
            f"each srun task's SLURM_PROCID modulo {per_job} (its place within its Job)",
        )
    return None


def _replicas_are_jobs(job: ir.Job) -> bool:
    declared = workloads.declared(job.kind)
    return declared is not None and declared.replicas_are_jobs


def _lws_field(job: ir.Job, path: str) -> tuple[str, FidelityStatus, str] | None:
    """What a LeaderWorkerSet's controller tells each pod through its labels, annotations and name."""
    name = job.name or ""
    group = '"${' + LWS_GROUP_VAR + '}"'
    if path == "metadata.name":
        # <name>-<group> for the leader, <name>-<group>-<index> for a worker; run again in each task
        suffix = '"$([ "$LWS_WORKER_INDEX" -eq 0 ] || printf -- -%s "$LWS_WORKER_INDEX")"'
        return (
            shell_word(name + "-") + group + suffix,
            FidelityStatus.MAPPED,
            "the pod's name, as the controller makes it",
        )
    key = _LWS_KEY.fullmatch(path)
    if key is None:
        return None
    values = {
        "name": (shell_word(name), "the LeaderWorkerSet's name"),
        "group-index": (group, "the group's index: its array task id, or the copy submit.sh submitted"),
        "worker-index": (
            '"${LWS_WORKER_INDEX}"',
            "the pod's index in its group: its task's LWS_WORKER_INDEX",
        ),
        "size": (str(shape.lws_size(job)), "the group's size"),
        "leader-name": (shell_word(name + "-") + group, "the leader pod's name, as the controller makes it"),
    }
    if key.group(1) not in values:
        return None
    value, reason = values[key.group(1)]
    return value, FidelityStatus.MAPPED, reason


def field_value(job: ir.Job, path: str) -> tuple[str | None, FidelityStatus, str]:
    """Shell text for a downward-API field: (value or None, fidelity status, reason)."""
    if workloads.launch_of(job.kind) == shape.LWS:
        found = _lws_field(job, path)
        if found is not None:
            return found
    if _COMPLETION_INDEX.fullmatch(path):
        if job.array is not None:
            return '"${SLURM_ARRAY_TASK_ID}"', FidelityStatus.MAPPED, "the array task id"
        return "0", FidelityStatus.MAPPED, "a job that is not indexed has index 0"
    simple = {
        "metadata.namespace": (
            shell_word(job.placement.namespace or "default"),
            FidelityStatus.MAPPED,
            "the namespace, as written",
        ),
        "metadata.name": (
            '"${SLURM_JOB_NAME}-${SLURM_JOB_ID}"',
            FidelityStatus.APPROXIMATED,
            "job name and id stand for the pod name",
        ),
        "metadata.uid": (
            '"${SLURM_JOB_ID}"',
            FidelityStatus.APPROXIMATED,
            "the Slurm job id stands for the pod uid",
        ),
        "spec.nodeName": (
            '"$(hostname)"',
            FidelityStatus.APPROXIMATED,
            "the batch host's name (the first node of the job)",
        ),
        "status.hostIP": (
            '"$(hostname -I | cut -d" " -f1)"',
            FidelityStatus.APPROXIMATED,
            "the batch host's first address",
        ),
        "status.podIP": (
            '"$(hostname -I | cut -d" " -f1)"',
            FidelityStatus.APPROXIMATED,
            "the batch host's first address",
        ),
        "resource:limits.cpu": (
            '"${SLURM_CPUS_ON_NODE}"',
            FidelityStatus.APPROXIMATED,
            "the CPUs Slurm gave the node",
        ),
        "resource:requests.cpu": (
            '"${SLURM_CPUS_ON_NODE}"',
            FidelityStatus.APPROXIMATED,
            "the CPUs Slurm gave the node",
        ),
        "resource:limits.memory": (
            '"$(( ${SLURM_MEM_PER_NODE:-0} * 1048576 ))"',
            FidelityStatus.APPROXIMATED,
            "the job's memory per node in bytes (0 when the job set no --mem)",
        ),
        "resource:requests.memory": (
            '"$(( ${SLURM_MEM_PER_NODE:-0} * 1048576 ))"',
            FidelityStatus.APPROXIMATED,
            "the job's memory per node in bytes (0 when the job set no --mem)",
        ),
    }
    if path in simple:
        return simple[path]
    meta = _META_KEY.fullmatch(path)
    if meta:
        pairs = job.labels if meta.group(1) == "labels" else job.annotations
        for kv in pairs:
            if kv.key == meta.group(2):
                return (
                    shell_word(kv.value),
                    FidelityStatus.MAPPED,
                    f"the {meta.group(1)[:-1]} value, as written",
                )
    return None, FidelityStatus.DROPPED, f"the downward-API field {path} has no Slurm counterpart"


__all__ = [
    "CONTAINER_ORIGINS",
    "DIR_HELPER",
    "LWS_GROUP_VAR",
    "READ_HELPER",
    "EnvLines",
    "container_env",
    "export_lines",
    "field_value",
]
