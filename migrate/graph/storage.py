"""Where a job's paths really live: file systems, PVC claims and container mounts.

A Slurm job writes ``/fsx/ckpt/run1``; a Kubernetes Deployment mounts the claim
``fsx-claim`` at ``/models`` and reads ``/models/run1``. When ``migrate.yaml``
says that ``fsx-claim`` is ``/fsx``, both must land on the same path node, or
the plan cannot see that the two jobs share data. This module does that
canonicalisation; it knows nothing about graphs.
"""

from __future__ import annotations

import fnmatch
import posixpath
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache

from migrate import ir
from migrate.site.config import SiteConfig
from migrate.vocab import FilesystemKind, FilesystemOrigin, Format, MountKind, StorageVia

# Prefixes that sites use for shared storage; the site config can add more.
WELL_KNOWN_PREFIXES = (
    "/fsx",
    "/lustre",
    "/gpfs",
    "/weka",
    "/scratch",
    "/home",
    "/efs",
    "$SCRATCH",
    "$HOME",
    "$WORK",
    "$PROJECT",
)
# Variables that stand for a per-user shared directory; kept as the first component.
ROOT_VARIABLES = ("SCRATCH", "HOME", "WORK", "PROJECT")
# Node-local or system trees: never shared data between jobs.
LOCAL_TOPS = frozenset(
    ("dev", "proc", "sys", "tmp", "run", "etc", "usr", "bin", "sbin", "lib", "lib64", "opt", "var", "boot")
)
# Mount points whose second component names the file system (/mnt/data, /net/nas1).
TWO_LEVEL_TOPS = frozenset(("mnt", "net", "media", "srv"))
LOG_DIRS = frozenset(("log", "logs"))
LOG_SUFFIXES = (".log", ".out", ".err")
LOG_ORIGINS = frozenset((StorageVia.OUTPUT, StorageVia.ERROR))
# Mount kinds whose content lives and dies with the pod, or is configuration.
EPHEMERAL_MOUNTS = frozenset((MountKind.EMPTY_DIR, MountKind.CONFIG_MAP, MountKind.SECRET, MountKind.OTHER))

_VARIABLE = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?")
_UNSTABLE = re.compile(r"[$*?\[\]{}%<>`()|;&\s]")  # a component that changes per run or is a glob
_FILE_LIKE = re.compile(r"[^./][^/]*\.[A-Za-z0-9_]{1,10}$")
# Per-run numbers: Slurm job, array and task ids, and their %-patterns in --output.
_NUMERIC = re.compile(
    r"\$\{?(SLURM_JOB_ID|SLURM_JOBID|SLURM_ARRAY_JOB_ID|SLURM_ARRAY_TASK_ID|SLURM_PROCID|SLURM_NODEID"
    r"|SLURM_LOCALID|SLURM_RESTART_COUNT|JOB_COMPLETION_INDEX)\}?|%[0-9]*[jJAa]"
)
_DYNAMIC = re.compile(
    r"\$\([^)]*\)|\$\{[^}]*\}|\$[A-Za-z_][A-Za-z0-9_]*|%[0-9]*[A-Za-z]|`[^`]*`|<[^>]*>|\{[^}]*\}"
)


@dataclass(frozen=True, slots=True)
class FileSystem:
    name: str  # node name, e.g. "/fsx" or "pvc:vision-data"
    prefix: str  # where paths on it start: "/fsx", "$SCRATCH", "pvc:vision-data"
    kind: str = FilesystemKind.UNKNOWN  # a FilesystemKind, or the name a site gives its own
    origin: FilesystemOrigin = FilesystemOrigin.WELL_KNOWN
    claims: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Location:
    """One storage use of one job, on canonical terms."""

    filesystem: FileSystem
    path: str  # canonical path (host side; "pvc:<claim>/..." for claims the site does not map)
    directory: str  # the directory that producer/consumer matching compares
    depth: int  # components of ``directory`` below the file-system prefix
    tail: str | None  # pattern of the changing component below ``directory`` (None: the directory itself)
    access: str
    origin: StorageVia
    line: int | None
    raw: str  # the text as the reader found it
    log: bool  # job logs and other log files never make a producer/consumer link


class StorageResolver:
    """Resolves a job's storage paths and mounts into ``Location`` values."""

    def __init__(self, config: SiteConfig) -> None:
        self._config = config
        self._site = tuple(
            sorted(
                (
                    FileSystem(
                        name=fs.label,
                        prefix=fs.prefix,
                        kind=fs.kind,
                        origin=FilesystemOrigin.SITE_CONFIG,
                        claims=tuple(sorted(fs.pvc)),
                    )
                    for fs in config.filesystems
                ),
                key=lambda fs: (-len(fs.prefix), fs.prefix),
            )
        )
        self._claims = {claim: fs for fs in self._site for claim in fs.claims}
        self._nfs_exports: set[str] = set()
        self._cached_filesystem = lru_cache(maxsize=65536)(self._lookup_filesystem)

    # -- public ------------------------------------------------------------

    def locations(self, job: ir.Job) -> list[Location]:
        """Every storage use of ``job``, deduplicated by (directory, access, origin), sorted."""
        env = _literal_environment(job)
        mounts = _mounts(job)
        container_only = job.source.format == Format.KUBERNETES
        seen: dict[tuple[str, str, str], Location] = {}
        for raw, access, origin, line in _storage_entries(job, mounts):
            loc = self.resolve(raw, access, origin, line, env, mounts, container_only)
            if loc is None:
                continue
            key = (loc.directory, loc.access, loc.origin)
            if key not in seen or _line_key(loc.line) < _line_key(seen[key].line):
                seen[key] = loc
        return sorted(seen.values(), key=lambda loc: (loc.directory, loc.access, loc.origin))

    def resolve(
        self,
        raw: str,
        access: str = ir.UNKNOWN,
        origin: StorageVia = StorageVia.BODY,
        line: int | None = None,
        env: dict[str, str] | None = None,
        mounts: tuple[ir.Mount, ...] = (),
        container_only: bool = False,
    ) -> Location | None:
        path, tail = split_path(raw, env or {})
        if path is None:
            return None
        if path.startswith("pvc:"):
            path = self._claim_path(path[4:].split("/", 1)[0], path[4:].partition("/")[2])
        elif path.startswith("/"):
            mounted = self._through_mount(path, mounts)
            if mounted is None and container_only:
                return None  # a pod path under no volume is inside the image: not shared
            if mounted == "":
                return None  # an ephemeral volume
            path = mounted or path
        if _is_local(path):
            return None
        fs = self.filesystem_of(path)
        if fs is None:
            return None
        directory = path
        if tail is None and _FILE_LIKE.search(path.rsplit("/", 1)[-1]) and path != fs.prefix:
            directory = path.rsplit("/", 1)[0]  # files in one directory are one artifact
        depth = _depth_below(directory, fs.prefix)
        return Location(
            filesystem=fs,
            path=path,
            directory=directory,
            depth=depth,
            tail=tail,
            access=access if access in (ir.READ, ir.WRITE, ir.READ_WRITE) else ir.UNKNOWN,
            origin=origin,
            line=line,
            raw=raw,
            log=_is_log(path, origin),
        )

    # -- internals ---------------------------------------------------------

    def _claim_path(self, claim: str, rest: str) -> str:
        fs = self._claims.get(claim)
        base = fs.prefix if fs is not None else f"pvc:{claim}"
        return f"{base}/{rest}" if rest else base

    def _through_mount(self, path: str, mounts: tuple[ir.Mount, ...]) -> str | None:
        """The host-side path of a container path; None when no mount covers it, "" when ephemeral."""
        for mount in mounts:  # longest target first
            target = mount.target.rstrip("/") or "/"
            if path != target and not path.startswith(target + "/"):
                continue
            rest = path[len(target) :].lstrip("/")
            if mount.kind in EPHEMERAL_MOUNTS or not mount.source:
                return ""
            if mount.kind == MountKind.PVC:
                return self._claim_path(mount.source, rest)
            if mount.kind == MountKind.NFS:
                # server:/export; the export is the file system, whatever the pod calls it
                base = f"nfs:{mount.source.rstrip('/')}"
                self._nfs_exports.add(base)
                return f"{base}/{rest}" if rest else base
            source = canonical_path(mount.source, {})
            if source is None:
                return ""
            return posixpath.join(source, rest) if rest else source
        return None

    def filesystem_of(self, path: str) -> FileSystem | None:
        if path.startswith("nfs:"):
            # not cached: the exports known grow as mounts are read
            exports = [e for e in self._nfs_exports if _under(path, e)]
            if not exports:
                return None
            export = max(exports, key=len)
            return FileSystem(
                name=export, prefix=export, kind=FilesystemKind.NFS, origin=FilesystemOrigin.NFS
            )
        return self._cached_filesystem(path)

    def _lookup_filesystem(self, path: str) -> FileSystem | None:
        if path.startswith("pvc:"):
            claim = path[4:].split("/", 1)[0]
            return FileSystem(
                name=f"pvc:{claim}", prefix=f"pvc:{claim}", origin=FilesystemOrigin.PVC, claims=(claim,)
            )
        for fs in self._site:
            if _under(path, fs.prefix):
                return fs
        if _under(path, "$HOME"):
            # $HOME is /home/<user>: the site's /home file system when it declares one
            for fs in self._site:
                if fs.prefix == "/home":
                    return fs
        for prefix in WELL_KNOWN_PREFIXES:
            if _under(path, prefix):
                return FileSystem(name=prefix, prefix=prefix, kind=_well_known_kind(prefix))
        parts = path.strip("/").split("/")
        if not parts[0] or path.startswith("$") or len(parts) < 2:
            return None  # a bare "/word" is more often an awk pattern or a URL piece than a mount
        keep = 2 if parts[0] in TWO_LEVEL_TOPS and len(parts) > 1 else 1
        prefix = "/" + "/".join(parts[:keep])
        return FileSystem(name=prefix, prefix=prefix, origin=FilesystemOrigin.TOP_LEVEL)


# ---------------------------------------------------------------------------
# Pure helpers


def canonical_path(raw: str, env: dict[str, str]) -> str | None:
    """Normalise a path as a script wrote it; None when it is relative or wholly dynamic.

    Literal variables of the job are substituted; the path is then cut before
    the first component that still changes per run (``$DAY``, ``%j``, globs),
    since the directory above it is what other jobs can name.
    """
    return split_path(raw, env)[0]


def split_path(raw: str, env: dict[str, str]) -> tuple[str | None, str | None]:
    """``(stable prefix, pattern of the first changing component)``.

    ``/fsx/ckpt/vit-$SLURM_JOB_ID/last.pt`` gives ``("/fsx/ckpt", "vit-[0-9]*")``:
    the pattern keeps what the component can still match, so that a run
    directory ``vit-<id>`` is not confused with a sibling ``sweeps``.
    """
    text = raw.strip().strip("'\"")
    if text.startswith("~/") or text == "~":
        text = "$HOME" + text[1:]
    if "$" in text:
        for _ in range(5):  # a few levels of VAR=$OTHER/sub
            replaced = _VARIABLE.sub(lambda m: _expand(m, env), text)
            if replaced == text:
                break
            text = replaced
        text = _VARIABLE.sub(lambda m: "$" + m.group(1) if m.group(1) in ROOT_VARIABLES else m.group(0), text)
    return _split_expanded(text)


@lru_cache(maxsize=1 << 16)
def _split_expanded(text: str) -> tuple[str | None, str | None]:
    """``split_path`` once the job's variables are substituted: the same text, the same answer.

    Jobs of one site name the same directories over and over; cached, each is cut once.
    """
    if text.startswith("pvc:"):
        claim, _, rest = text[4:].partition("/")
        if not claim or _UNSTABLE.search(claim):
            return None, None
        stable, tail = _stable_prefix(rest.split("/"))
        return f"pvc:{claim}" + (f"/{stable}" if stable else ""), tail
    if text.startswith("$"):
        head, _, rest = text.partition("/")
        if head[1:] not in ROOT_VARIABLES:
            return None, None
        stable, tail = _stable_prefix(_normalise(rest).split("/")) if rest else ("", None)
        return head + (f"/{stable}" if stable else ""), tail
    if not text.startswith("/"):
        return None, None
    stable, tail = _stable_prefix(_normalise(text).strip("/").split("/"))
    return ("/" + stable if stable else None), tail


def _normalise(path: str) -> str:
    normal = posixpath.normpath(path)
    return "" if normal == "." else normal


def _expand(match: re.Match[str], env: dict[str, str]) -> str:
    name = match.group(1)
    if name in ROOT_VARIABLES or name not in env:
        return match.group(0)
    return env[name]


def _stable_prefix(parts: list[str]) -> tuple[str, str | None]:
    kept: list[str] = []
    for part in parts:
        if not part or part == ".":
            break
        if _UNSTABLE.search(part):
            return "/".join(kept), _as_pattern(part)
        kept.append(part)
    return "/".join(kept), None


def _as_pattern(part: str) -> str:
    """A changing path component as an fnmatch pattern (job ids are digits, the rest is anything)."""
    pattern = _NUMERIC.sub("[0-9]*", part)
    pattern = _DYNAMIC.sub("*", pattern)
    return re.sub(r"\*+", "*", pattern)


def patterns_overlap(a: str | None, b: str | None) -> bool:
    """Whether two component patterns can name the same thing (None matches anything).

    Exact for literal text around the wildcards, generous inside them: ``vit-b-*``
    and ``vit-l-*`` cannot meet, ``lr*`` and ``[0-9]*`` might.
    """
    if a is None or b is None:
        return True
    head_a, head_b = _literal_head(a), _literal_head(b)
    tail_a, tail_b = _literal_tail(a), _literal_tail(b)
    heads = head_a.startswith(head_b) or head_b.startswith(head_a)
    tails = tail_a.endswith(tail_b) or tail_b.endswith(tail_a)
    return heads and tails


def component_matches(component: str, pattern: str | None) -> bool:
    return pattern is None or fnmatch.fnmatchcase(component, pattern)


def _literal_head(pattern: str) -> str:
    return re.split(r"[*?\[]", pattern, maxsplit=1)[0]


def _literal_tail(pattern: str) -> str:
    return re.split(r"[*?\]]", pattern)[-1]


def _under(path: str, prefix: str) -> bool:
    return path == prefix or path.startswith(prefix.rstrip("/") + "/")


def _depth_below(path: str, prefix: str) -> int:
    rest = path[len(prefix) :].strip("/")
    return len(rest.split("/")) if rest else 0


def _is_local(path: str) -> bool:
    if not path.startswith("/"):
        return False
    top = path[1:].split("/", 1)[0]
    return top in LOCAL_TOPS or top == ""


def _is_log(path: str, origin: StorageVia) -> bool:
    if origin in LOG_ORIGINS:
        return True
    parts = path.split("/")
    return any(p in LOG_DIRS for p in parts) or parts[-1].endswith(LOG_SUFFIXES)


_WELL_KNOWN_KINDS = {
    "/fsx": FilesystemKind.LUSTRE,
    "/lustre": FilesystemKind.LUSTRE,
    "/gpfs": FilesystemKind.GPFS,
    "/weka": FilesystemKind.WEKA,
    "/efs": FilesystemKind.NFS,
}


def _well_known_kind(prefix: str) -> str:
    return _WELL_KNOWN_KINDS.get(prefix, FilesystemKind.UNKNOWN)


def _line_key(line: int | None) -> int:
    return line if line is not None else 1 << 30


def _literal_environment(job: ir.Job) -> dict[str, str]:
    env: dict[str, str] = {}
    for var in job.environment:
        if var.value is not None and var.secret is None:
            env[var.name] = var.value
    for comp in job.components:
        for var in comp.environment:
            if var.value is not None and var.secret is None:
                env.setdefault(var.name, var.value)
    return env


def _mounts(job: ir.Job) -> tuple[ir.Mount, ...]:
    found: dict[tuple[str, str | None, str], ir.Mount] = {}
    for comp in job.components:
        for container in comp.containers:
            for mount in container.mounts:
                found.setdefault((mount.target, mount.source, mount.kind), mount)
    return tuple(sorted(found.values(), key=lambda m: (-len(m.target), m.target, m.source or "", m.kind)))


def _storage_entries(
    job: ir.Job, mounts: tuple[ir.Mount, ...]
) -> Iterator[tuple[str, str, StorageVia, int | None]]:
    """(raw path, access, origin, line) for every place the IR names storage."""
    for item in job.storage:
        yield item.path, item.access, item.via, item.line
    io = job.io
    line = job.source.line
    if io.stdout:
        yield io.stdout, ir.WRITE, StorageVia.OUTPUT, line
    if io.stderr:
        yield io.stderr, ir.WRITE, StorageVia.ERROR, line
    if io.stdin:
        yield io.stdin, ir.READ, StorageVia.INPUT, line
    if io.workdir:
        yield io.workdir, ir.UNKNOWN, StorageVia.CHDIR, line
    for mount in mounts:
        access = ir.READ if mount.read_only else ir.UNKNOWN
        yield mount.target, access, StorageVia.MOUNT, mount.line


__all__ = [
    "WELL_KNOWN_PREFIXES",
    "FileSystem",
    "Location",
    "StorageResolver",
    "canonical_path",
    "component_matches",
    "patterns_overlap",
    "split_path",
]
