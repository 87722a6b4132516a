"""Shared storage: every path prefix a job touches becomes a volume at the same path.

A prefix the site config names (``filesystems``) is mounted from its
PersistentVolumeClaim; any other absolute path is mounted from the node
(hostPath) with a diagnostic, since that only works where the nodes mount the
same file system. Claims are emitted once per output under ``storage/``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from migrate.names import dns1123_label

from . import submit_dir
from .kinds import MANAGED_BY_LABEL, MANAGED_BY_VALUE
from .translation_context import Context, VolumeNeed
from .yamlemit import Manifest

# Paths that belong to the container image or the kernel, never to shared storage.
_SYSTEM = frozenset(
    {"bin", "boot", "dev", "etc", "lib", "lib32", "lib64", "opt", "proc", "run", "sbin", "sys", "tmp", "usr",
     "var"}
)  # fmt: skip
RESERVED_MOUNTS = ("/opt/migrate",)


@dataclass(frozen=True)
class Volume:
    name: str
    mount_path: str
    claim: str | None = None
    host_path: str | None = None
    read_only: bool = False
    note: str = ""

    def volume(self) -> dict[str, Any]:
        if self.claim is not None:
            return {"name": self.name, "persistentVolumeClaim": {"claimName": self.claim}}
        return {
            "name": self.name,
            "hostPath": {"path": self.host_path or self.mount_path, "type": "Directory"},
        }

    def mount(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "mountPath": self.mount_path}
        if self.read_only:
            out["readOnly"] = True
        return out


def _candidate_paths(ctx: Context) -> list[tuple[str, int | None]]:
    job = ctx.job
    paths: list[tuple[str, int | None]] = [(s.path, s.line) for s in job.storage]
    for value, long in (
        (job.io.workdir, "chdir"),
        (job.io.stdout, "output"),
        (job.io.stderr, "error"),
        (job.io.stdin, "input"),
    ):
        if value:
            paths.append((value, ctx.line_of(long)))
    submitted_from = submit_dir.folder(ctx)
    if submitted_from and submit_dir.reads(job):  # the job's files there: its file system is mounted
        paths.append((submitted_from, None))
    for comp in job.components:
        for container in comp.containers:
            if container.image.startswith("/"):
                paths.append((container.image, container.line))
            for mount in container.mounts:
                if mount.source and mount.source.startswith("/"):
                    paths.append((mount.source, mount.line))
    return paths


def volumes(ctx: Context) -> list[Volume]:
    """One volume per file system (config) or top-level folder (hostPath), in first-use order."""
    found: dict[str, Volume] = {}
    for path, line in _candidate_paths(ctx):
        fs = ctx.site.filesystem_for(path)
        if fs is not None and not fs.prefix.startswith("$"):
            key = fs.prefix
            if key in found:
                continue
            if fs.pvc:
                claim = fs.pvc[0]
                vol = Volume(dns1123_label(f"fs-{fs.name or claim}"), fs.prefix, claim=claim)
                ctx.needs.volumes.add(VolumeNeed(claim, fs.prefix, fs.kind, ctx.namespace))
                ctx.fidelity.mapped(
                    f"storage {fs.prefix}", f"PersistentVolumeClaim {claim} mounted at {fs.prefix}", line
                )
            else:
                vol = Volume(
                    dns1123_label(f"host-{fs.prefix}"),
                    fs.prefix,
                    host_path=fs.prefix,
                    note=f"{fs.prefix} ({fs.kind}) has no claim in the site config: mounted from the node",
                )
                ctx.fidelity.approximated(
                    f"storage {fs.prefix}",
                    f"hostPath {fs.prefix}: {fs.kind} storage with no claim in the site "
                    "config; only the node's copy is seen",
                    line,
                )
                ctx.diag(
                    "TRANSLATE-HOSTPATH",
                    f"{fs.prefix} has no PersistentVolumeClaim in the site config; mounted as hostPath",
                )
            found[key] = vol
            continue
        if not path.startswith("/") or "$" in path.split("/")[1]:
            continue
        top = "/" + path.split("/")[1] if path.split("/")[1] else ""
        if not top or top[1:] in _SYSTEM or top in found:
            continue
        found[top] = Volume(
            dns1123_label(f"host-{top}"),
            top,
            host_path=top,
            note=f"{top} is not in the site config: mounted from the node",
        )
        ctx.fidelity.approximated(
            f"storage {top}",
            f"hostPath {top}: no PersistentVolumeClaim for it in the site config; the "
            "nodes must mount the same file system",
            line,
        )
        ctx.diag(
            "TRANSLATE-HOSTPATH",
            f"{top} (used by the job) has no PersistentVolumeClaim in the site config (filesystems:); "
            "mounted as hostPath, which needs the same file system on every node",
        )
    return sorted(found.values(), key=lambda v: v.mount_path)


def claim_manifest(need: VolumeNeed, source_note: str) -> Manifest:
    meta: dict[str, Any] = {"name": need.claim}
    if need.namespace:
        meta["namespace"] = need.namespace
    meta["labels"] = {MANAGED_BY_LABEL: MANAGED_BY_VALUE}
    meta["annotations"] = {"migrate.io/source": source_note, "migrate.io/mount-path": need.prefix}
    body = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": meta,
        "spec": {"accessModes": ["ReadWriteMany"], "resources": {"requests": {"storage": "1Ti"}}},
    }
    manifest = Manifest(body)
    manifest.note(
        (),
        f"{need.prefix} ({need.kind}) as the site config maps it. If the claim already exists, "
        "leave this file out; otherwise set storageClassName and the size.",
    )
    manifest.note(("spec", "resources"), "placeholder size: set the file system's capacity")
    return manifest


__all__ = ["RESERVED_MOUNTS", "Volume", "claim_manifest", "volumes"]
