"""A pod's volume mounts on Slurm: shared file systems, node paths, scratch, inlined files.

PVCs become the shared file-system paths the site config names
(``filesystems[].pvc`` -> ``prefix``), host paths stay host paths, ``emptyDir``
becomes a scratch folder on the node, ConfigMaps in the same manifest file are
written out by the script itself before the program starts, and Secret volumes
are read from the provisioned secrets folder. With a container runtime each
becomes a bind mount at the pod's mount path; without one the program sees the
host paths and nothing is rewritten except the paths of inlined files.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from migrate import ir
from migrate.render import plural
from migrate.translators.job_variables import SLURM, bash_value
from migrate.vocab import MountKind

from .context import CONFIG_DIR, NO_RUNTIME, SECRETS_DIR, Context
from .quoting import c_string, shell_word

FILES_DIR = SLURM.FILES.name  # inlined ConfigMap files: must be visible to every node of the job
SCRATCH_DIR = SLURM.SCRATCH.name  # emptyDir volumes: node-local
FILES_SETUP = f'{FILES_DIR}="{bash_value(SLURM.FILES_DIR)}/$SLURM_JOB_ID"'
SCRATCH_SETUP = f'{SCRATCH_DIR}="${{TMPDIR:-/tmp}}/migrate-$SLURM_JOB_ID"'


@dataclass(frozen=True)
class Bind:
    source: str  # shell text (one word)
    target: str
    read_only: bool = False


@dataclass
class Mounts:
    binds: list[Bind] = field(default_factory=list)
    setup: list[str] = field(default_factory=list)  # shell lines run before the launch
    per_node_dirs: list[str] = field(default_factory=list)  # shell words: folders every node needs
    rewrites: dict[str, str] = field(default_factory=dict)  # no runtime: mount path -> host shell text
    uses_files: bool = False
    uses_scratch: bool = False


def plan(ctx: Context, container: ir.Container, config_maps: dict[str, dict[str, str]]) -> Mounts:
    out = Mounts()
    for mount in container.mounts:
        item = f"volumeMount {mount.target} ({mount.kind}{' ' + mount.source if mount.source else ''})"
        kind = mount.kind
        if kind == MountKind.PVC and mount.source != "ephemeral":
            _claim(ctx, mount, item, out)
        elif kind == MountKind.HOST_PATH and mount.source:
            out.binds.append(Bind(shell_word(mount.source), mount.target, mount.read_only))
            _same_path(ctx, mount, mount.source, item, "the same path on the Slurm node")
            if mount.create:  # made on every node before the program, as the kubelet makes it
                out.per_node_dirs.append(shell_word(mount.source))
                reason = "made on each node before the program when it is missing, as the kubelet does"
                ctx.fidelity.mapped(f"{item}: DirectoryOrCreate", reason, mount.line)
        elif kind == MountKind.EMPTY_DIR or (kind == MountKind.PVC and mount.source == "ephemeral"):
            _scratch(ctx, mount, item, out)
        elif kind == MountKind.CONFIG_MAP and mount.source:
            _config_map(ctx, mount, item, config_maps, out)
        elif kind == MountKind.SECRET and mount.source:
            _secret(ctx, mount, item, out)
        else:
            ctx.fidelity.dropped(
                item, f"a {kind} volume has no Slurm counterpart; nothing is mounted", mount.line
            )
            ctx.diag("TO-SLURM-VOLUME", f"{item}: not mounted on Slurm", mount.line)
    return out


def _same_path(ctx: Context, mount: ir.Mount, host: str, item: str, what: str) -> None:
    if ctx.runtime != NO_RUNTIME:
        ctx.fidelity.mapped(item, f"{what}, bind-mounted at {mount.target}", mount.line)
    elif host.rstrip("/") == mount.target.rstrip("/"):
        ctx.fidelity.mapped(item, f"{what}, at the same path", mount.line)
    else:
        ctx.fidelity.approximated(
            item,
            f"{what}; without a container the program sees it at {host}, not at {mount.target} "
            "(paths in the command are not rewritten)",
            mount.line,
        )


def _claim(ctx: Context, mount: ir.Mount, item: str, out: Mounts) -> None:
    claim = mount.source or ""
    fs = ctx.config.filesystem_for_claim(claim) if ctx.config is not None else None
    if fs is None:
        ctx.fidelity.dropped(
            item,
            f"claim {claim} has no shared file system in the site config (filesystems[].pvc)",
            mount.line,
        )
        ctx.diag(
            "TO-SLURM-VOLUME",
            f"PVC {claim} mounted at {mount.target}: no file system in migrate.yaml names this claim; "
            "add it under filesystems[].pvc or the program will not find its data",
            mount.line,
        )
        return
    out.binds.append(Bind(shell_word(fs.prefix), mount.target, mount.read_only))
    _same_path(ctx, mount, fs.prefix, item, f"claim {claim} is {fs.label} ({fs.kind})")


def _scratch(ctx: Context, mount: ir.Mount, item: str, out: Mounts) -> None:
    if mount.target == "/dev/shm" or (mount.source == "Memory" and mount.target.startswith("/dev/shm")):
        ctx.fidelity.mapped(item, "the node's /dev/shm, which containers on Slurm share", mount.line)
        return
    name = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in mount.target.strip("/")) or "root"
    path = f'"${SCRATCH_DIR}/{name}"'
    out.uses_scratch = True
    out.per_node_dirs.append(path)
    out.binds.append(Bind(path, mount.target, False))
    if ctx.runtime != NO_RUNTIME:
        ctx.fidelity.approximated(
            item,
            "a fresh folder under $TMPDIR on each node, bind-mounted there (removed at the end)",
            mount.line,
        )
    else:
        ctx.fidelity.approximated(
            item,
            f"a fresh folder ${SCRATCH_DIR}/{name} on each node; without a container the program "
            f"does not see it at {mount.target}",
            mount.line,
        )


def _config_map(
    ctx: Context, mount: ir.Mount, item: str, config_maps: dict[str, dict[str, str]], out: Mounts
) -> None:
    name = mount.source or ""
    data = config_maps.get(name)
    folder = f'"${FILES_DIR}/{name}"'
    if data is None:
        host = f"{CONFIG_DIR}/{shell_word(name)}"
        out.binds.append(Bind(host, mount.target, True))
        out.rewrites[mount.target] = host
        ctx.fidelity.approximated(
            item,
            f"ConfigMap {name} is not in the manifest file: read from ${SLURM.CONFIG_DIR.name}/{name}",
            mount.line,
        )
        ctx.diag(
            "TO-SLURM-CONFIGMAP",
            f"ConfigMap {name} (mounted at {mount.target}) is not in the scanned file: provision its keys as "
            f"files under ${SLURM.CONFIG_DIR.name}/{name} before submitting",
            mount.line,
        )
        return
    out.uses_files = True
    out.setup.append(f"mkdir -p {folder}")
    for key, text in data.items():
        path = f'"${FILES_DIR}/{name}/{key}"' if _plain_key(key) else None
        if path is None:
            continue
        out.setup.append(f"printf '%s' {shell_word(c_string(text))} > {path}")
        if text.startswith("#!") or key.endswith((".sh", ".bash", ".py")):
            out.setup.append(f"chmod +x {path}")
    out.binds.append(Bind(folder, mount.target, True))
    out.rewrites[mount.target] = folder
    ctx.fidelity.mapped(
        item,
        f"ConfigMap {name} is in the manifest file: its {plural(len(data), 'key')} "
        f"{'is' if len(data) == 1 else 'are'} written out by the script "
        f"(${FILES_DIR}, on the submit folder's file system)",
        mount.line,
    )


def _plain_key(key: str) -> bool:
    return bool(key) and all(ch.isalnum() or ch in "-_." for ch in key) and key not in (".", "..")


def _secret(ctx: Context, mount: ir.Mount, item: str, out: Mounts) -> None:
    name = mount.source or ""
    host = f"{SECRETS_DIR}/{shell_word(name)}"
    out.binds.append(Bind(host, mount.target, True))
    out.rewrites[mount.target] = host
    ctx.fidelity.approximated(
        item, f"Secret {name}: the files provisioned under ${SLURM.SECRETS_DIR.name}/{name}", mount.line
    )
    ctx.diag(
        "TO-SLURM-SECRET",
        f"Secret volume {name} (mounted at {mount.target}): provision one file per key under "
        f"${SLURM.SECRETS_DIR.name}/{name} (readable only by the job's user) before submitting",
        mount.line,
    )


def rewrite_path(word: str, rewrites: dict[str, str]) -> str | None:
    """Shell text for an argv word under a rewritten mount path (no runtime); None when not under one."""
    for target, host in sorted(rewrites.items(), key=lambda kv: -len(kv[0])):
        root = target.rstrip("/")
        if word == root or word.startswith(root + "/"):
            rest = word[len(root) :]
            return host + (shell_word(rest) if rest else "")
    return None


__all__ = [
    "FILES_DIR",
    "FILES_SETUP",
    "SCRATCH_DIR",
    "SCRATCH_SETUP",
    "Bind",
    "Mounts",
    "plan",
    "rewrite_path",
]
