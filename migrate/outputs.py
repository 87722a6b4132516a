"""Writing a tree of generated files safely: all of it or none of it.

All files are prepared in memory and checked first (paths stay inside the
output folder; nothing existing is overwritten without ``force``; no file
stands where a folder must go, no folder where a file must go, no symbolic
link leads out of the output folder). Then:

1. every file is written to a staging folder (beside a new output folder,
   inside an existing one, so that moves are renames on one file system);
2. a new output folder appears whole in one rename; into an existing folder
   the files are moved one by one, each replaced file first set aside, and
   any failure puts every set-aside file back and takes every new one away.

An existing folder is filled in place rather than swapped for a new one: it
may be the user's own folder (``migrate init`` writes beside the jobs), with
other files, other mounts and open working directories that a swap would
cut away.

SIGINT and SIGTERM while writing to staging stop the commit and leave the old
files alone; while files are moved into place they wait until the move is
whole (or rolled back), then take their usual effect. A full disk or any other
``OSError`` leaves the old files and gives an ``OutputError`` of one line.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import signal
import stat
import tempfile
import threading
from dataclasses import dataclass, field
from types import FrameType, TracebackType
from typing import Any

STAGING_PREFIX = ".migrate-staging-"
_ASIDE = "replaced"  # inside staging: the old files, until the new ones are all in place

_HINTS = {
    errno.ENOSPC: "free some space or choose another --out",
    errno.EDQUOT: "free some space or choose another --out",
    errno.EACCES: "choose a folder you can write to with --out",
    errno.EPERM: "choose a folder you can write to with --out",
    errno.EROFS: "the file system is read-only; choose another --out",
    errno.ENOTDIR: "part of the path is a file, not a folder; choose another --out",
    errno.EISDIR: "a folder stands where a file must go; choose another --out",
}


class OutputError(Exception):
    """A problem the user can fix: the message says what and how."""


class UnsafePathError(OutputError):
    pass


class OutputExistsError(OutputError):
    def __init__(self, existing: list[str]) -> None:
        shown = ", ".join(existing[:5]) + (f" and {len(existing) - 5} more" if len(existing) > 5 else "")
        super().__init__(f"would overwrite existing files: {shown}; use --force to replace them")
        self.existing = existing


def safe_relpath(rel: str) -> str:
    """Refuse absolute paths, '..', NUL and empty parts: the output stays inside its folder."""
    if not rel or "\0" in rel or rel.startswith(("/", "\\")) or os.path.isabs(rel):
        raise UnsafePathError(f"unsafe output path {rel!r}")
    parts = rel.replace("\\", "/").split("/")
    if any(p in ("", ".", "..") for p in parts):
        raise UnsafePathError(f"unsafe output path {rel!r}")
    return "/".join(parts)


def os_error(where: str, exc: OSError) -> OutputError:
    """One line: what failed, where, and what to do."""
    reason = exc.strerror or str(exc)
    hint = _HINTS.get(exc.errno or 0, "check the path given to --out")
    return OutputError(f"cannot write to {where}: {reason}; {hint}")


class _Interrupted(KeyboardInterrupt):
    """SIGINT or SIGTERM arrived while the staging folder was written."""


class _Signals:
    """SIGINT/SIGTERM during a commit: abort while staging, wait while installing, then re-deliver.

    Only the main thread may set handlers; elsewhere (and for a signal the
    process ignores) nothing changes.
    """

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self) -> None:
        self.pending: int | None = None
        self.deferring = False
        self.saved: dict[int, Any] = {}

    def __enter__(self) -> _Signals:
        if threading.current_thread() is not threading.main_thread():
            return self
        for sig in self.SIGNALS:
            current = signal.getsignal(sig)
            if current is signal.SIG_IGN or current is None:
                continue
            self.saved[sig] = signal.signal(sig, self._handle)
        return self

    def resume(self) -> None:
        """Stop deferring; a signal that came meanwhile interrupts now."""
        self.deferring = False
        if self.pending is not None:
            raise _Interrupted(f"signal {self.pending}")

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.pending is None:
            self.pending = signum
        if not self.deferring:
            raise _Interrupted(f"signal {signum}")

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        for sig, handler in self.saved.items():
            signal.signal(sig, handler)
        if self.pending is not None:
            # SIGINT raises KeyboardInterrupt here; SIGTERM ends the process as it would have
            signal.raise_signal(self.pending)


@dataclass
class _Install:
    """What moving the staged files into an existing folder changed, to undo it on failure."""

    out_dir: str
    aside: str
    created_dirs: list[str] = field(default_factory=list)
    steps: list[tuple[str, str | None]] = field(default_factory=list)  # (target, set-aside copy)

    def makedirs(self, folder: str) -> None:
        missing: list[str] = []
        while not os.path.isdir(folder):
            missing.append(folder)
            folder = os.path.dirname(folder)
        for path in reversed(missing):
            os.mkdir(path)
            self.created_dirs.append(path)

    def put(self, source: str, target: str, rel: str) -> None:
        self.makedirs(os.path.dirname(target))
        kept = None
        if os.path.lexists(target):
            kept = os.path.join(self.aside, rel)
            os.makedirs(os.path.dirname(kept), exist_ok=True)
            os.rename(target, kept)
        self.steps.append((target, kept))
        os.rename(source, target)

    def undo(self) -> bool:
        """Put every replaced file back and take the new ones away; False if some could not be."""
        whole = True
        for target, kept in reversed(self.steps):
            try:
                if os.path.lexists(target) and (kept is None or os.path.lexists(kept)):
                    os.unlink(target)
                if kept is not None:
                    os.rename(kept, target)
            except OSError:
                whole = False  # the set-aside copy stays in the staging folder
        for folder in reversed(self.created_dirs):
            with contextlib.suppress(OSError):
                os.rmdir(folder)
        return whole


@dataclass
class OutputTree:
    files: dict[str, str] = field(default_factory=dict)
    modes: dict[str, int] = field(default_factory=dict)

    def add(self, rel: str, content: str, executable: bool = False) -> str:
        rel = safe_relpath(rel)
        if rel in self.files:
            raise UnsafePathError(f"two outputs want the same path {rel!r}")
        self.files[rel] = content
        if executable:
            self.modes[rel] = 0o755
        return rel

    def existing(self, out_dir: str) -> list[str]:
        return sorted(rel for rel in self.files if os.path.lexists(os.path.join(out_dir, rel)))

    def commit(self, out_dir: str, force: bool = False) -> list[str]:
        """Write every file under ``out_dir``, all or none; returns the paths written, sorted."""
        self._check(out_dir, force)
        with _Signals() as signals:
            if os.path.isdir(out_dir):
                self._commit_into(out_dir, signals)
            else:
                self._commit_new(out_dir, signals)
        return sorted(os.path.join(out_dir, rel) for rel in self.files)

    # -- checks ------------------------------------------------------------

    def _check(self, out_dir: str, force: bool) -> None:
        if os.path.lexists(out_dir) and not os.path.isdir(out_dir):
            raise OutputError(f"{out_dir} exists and is not a folder; choose another --out")
        parent = os.path.dirname(os.path.abspath(out_dir))
        blocker = _file_on_the_way(parent)
        if blocker is not None:
            raise OutputError(f"{blocker} is a file, not a folder; choose another --out")
        if not os.path.isdir(out_dir):
            return
        clashes = self.existing(out_dir)
        if clashes and not force:
            raise OutputExistsError(clashes)
        real_out = os.path.realpath(out_dir)
        for rel in sorted(self.files):
            target = os.path.join(out_dir, rel)
            if os.path.isdir(target) and not os.path.islink(target):
                raise OutputError(f"{target} is a folder where a file must go; choose another --out")
            parts = rel.split("/")
            for depth in range(1, len(parts)):
                folder = os.path.join(out_dir, *parts[:depth])
                if os.path.islink(folder):
                    inside = os.path.realpath(folder)
                    if not (inside + os.sep).startswith(real_out + os.sep):
                        raise OutputError(
                            f"{folder} is a symbolic link out of {out_dir}; remove it or choose another --out"
                        )
                if os.path.lexists(folder) and not os.path.isdir(folder):
                    raise OutputError(f"{folder} is a file where a folder must go; choose another --out")

    # -- writing -----------------------------------------------------------

    def _commit_new(self, out_dir: str, signals: _Signals) -> None:
        parent = os.path.dirname(os.path.abspath(out_dir))
        signals.deferring = True  # until the staging folder is known, so that it is always removed
        staging = _make_staging(parent)
        try:
            signals.resume()
            self._write_all(staging, parent)
            os.chmod(staging, 0o777 & ~_umask())  # mkdtemp's 0700 is for staging, not for the output
            signals.deferring = True
            try:
                os.rename(staging, out_dir)  # the whole tree appears at once
            except OSError as exc:
                raise os_error(out_dir, exc) from exc
            staging = ""
        finally:
            signals.deferring = True  # a second Ctrl-C must not stop the clean-up
            if staging:
                shutil.rmtree(staging, ignore_errors=True)

    def _commit_into(self, out_dir: str, signals: _Signals) -> None:
        signals.deferring = True
        staging = _make_staging(out_dir)
        keep = False
        try:
            signals.resume()
            new = os.path.join(staging, "new")
            os.mkdir(new)
            self._write_all(new, out_dir)
            signals.deferring = True
            install = _Install(out_dir, os.path.join(staging, _ASIDE))
            try:
                for rel in sorted(self.files):
                    install.put(os.path.join(new, rel), os.path.join(out_dir, rel), rel)
            except BaseException as exc:
                keep = not install.undo()
                if isinstance(exc, OSError):
                    where = f"{out_dir} (the old files are in {staging})" if keep else out_dir
                    raise os_error(where, exc) from exc
                raise
        finally:
            signals.deferring = True
            if not keep:
                shutil.rmtree(staging, ignore_errors=True)

    def _write_all(self, root: str, shown: str) -> None:
        try:
            for rel, content in sorted(self.files.items()):
                path = os.path.join(root, rel)
                os.makedirs(os.path.dirname(path), exist_ok=True)
                self._write_file(path, content, self.modes.get(rel, 0o644))
        except OSError as exc:
            raise os_error(shown, exc) from exc

    @staticmethod
    def _write_file(path: str, content: str, mode: int) -> None:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), mode)
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(content)
        os.chmod(path, mode)  # whatever the umask


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _make_staging(folder: str) -> str:
    try:
        os.makedirs(folder, exist_ok=True)
        return tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=folder)
    except OSError as exc:
        raise os_error(folder, exc) from exc


def _file_on_the_way(path: str) -> str | None:
    """The first part of ``path`` that exists and is not a folder, if any."""
    path = os.path.abspath(path)
    parts: list[str] = []
    while True:
        parts.append(path)
        up = os.path.dirname(path)
        if up == path:
            break
        path = up
    for part in reversed(parts):
        try:
            st = os.stat(part)
        except OSError:
            return None
        if not stat.S_ISDIR(st.st_mode):
            return part
    return None


__all__ = ["OutputError", "OutputExistsError", "OutputTree", "UnsafePathError", "os_error", "safe_relpath"]
