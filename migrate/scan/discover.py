"""Walk the scanned trees and list candidate files, in a stable order.

Symbolic links are never followed: a linked file or folder inside the tree is
scanned where it really is, one that points outside the tree or loops is
reported. Version-control, virtualenv and cache folders are skipped.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass

from migrate.diagnostics import Diagnostic

CHART_FILE = "Chart.yaml"
# ``migrate translate`` writes this beside what it wrote; a folder holding it is the tool's output.
TRANSLATION_FILE = "translation.json"
_TRANSLATION_HEAD = 256
SKIP_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".bzr",
        "__pycache__",
        "node_modules",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".ruff_cache",
        ".pytest_cache",
        ".hypothesis",
        ".ipynb_checkpoints",
        ".cache",
        "site-packages",
    }
)


@dataclass(frozen=True)
class Candidate:
    """A regular file to look at; ``display`` is the path shown to the user."""

    path: str
    display: str
    size: int


@dataclass(frozen=True)
class Skipped:
    """A path that was not followed, with the diagnostic that says why."""

    display: str
    diagnostic: Diagnostic


def _is_virtualenv(dirpath: str, names: list[str]) -> bool:
    return "pyvenv.cfg" in names or ("conda-meta" in names and "bin" in names)


def _own_output(dirpath: str, filenames: list[str]) -> Diagnostic | None:
    """A folder ``migrate translate`` wrote: its translation.json begins with the IR version and target.

    Other tools name files translation.json too (message catalogues): the head tells them apart.
    """
    if TRANSLATION_FILE not in filenames:
        return None
    path = os.path.join(dirpath, TRANSLATION_FILE)
    try:
        with open(path, "rb") as fh:
            head = fh.read(_TRANSLATION_HEAD)
    except OSError:
        return None
    if b'"ir_version"' not in head or b'"target"' not in head:
        return None
    return Diagnostic(
        "FILE-MIGRATE-OUTPUT",
        "info",
        f"holds {TRANSLATION_FILE}: written by migrate translate; its files are not read as jobs "
        "(scan the sources they were translated from)",
        dirpath,
    )


def _resolve_link(path: str) -> str | None:
    """The link's final target, or None when it loops or cannot be resolved."""
    try:
        return os.path.realpath(path, strict=True)
    except (OSError, RuntimeError):
        return None


def _link_diagnostic(path: str, display: str, root_real: str) -> Diagnostic | None:
    target = _resolve_link(path)
    if target is None:
        try:
            os.stat(path)
        except OSError as exc:
            if exc.errno == 40:  # ELOOP
                return Diagnostic(
                    "FILE-SYMLINK-LOOP", "warning", "symbolic link loops; not followed", display
                )
            return Diagnostic("FILE-UNREADABLE", "error", f"broken symbolic link: {exc.strerror}", display)
        return None
    inside = target == root_real or target.startswith(root_real + os.sep)
    if not inside:
        return Diagnostic(
            "FILE-SYMLINK-OUTSIDE",
            "info",
            f"symbolic link to {target} outside the scanned tree; not followed",
            display,
        )
    real_parent = os.path.realpath(os.path.dirname(path))
    if os.path.isdir(target) and (real_parent + os.sep).startswith(target + os.sep):
        return Diagnostic(
            "FILE-SYMLINK-LOOP",
            "warning",
            f"symbolic link to its own ancestor {target}; not followed",
            display,
        )
    return None  # a link inside the tree: the target is scanned where it is


def walk(root: str) -> Iterator[Candidate | Skipped]:
    """Yield the files under ``root`` (or ``root`` itself), sorted by path."""
    root_real = os.path.realpath(root)
    try:
        st = os.lstat(root)
    except OSError as exc:
        yield Skipped(root, Diagnostic("FILE-UNREADABLE", "error", f"cannot read: {exc.strerror}", root))
        return
    if stat.S_ISREG(st.st_mode):
        yield Candidate(root, root, st.st_size)
        return
    if stat.S_ISLNK(st.st_mode):
        target = _resolve_link(root)
        if target is None:
            yield Skipped(root, Diagnostic("FILE-SYMLINK-LOOP", "warning", "symbolic link loops", root))
            return
        if os.path.isfile(target):
            yield Candidate(root, root, os.path.getsize(target))
            return
        root_real = target
    yield from _walk_dir(root, root_real)


def _walk_dir(root: str, root_real: str) -> Iterator[Candidate | Skipped]:
    errors: list[OSError] = []
    for dirpath, dirnames, filenames in os.walk(root, onerror=errors.append, followlinks=False):
        for err in errors:
            shown = err.filename if isinstance(err.filename, str) else dirpath
            yield Skipped(
                shown, Diagnostic("FILE-UNREADABLE", "error", f"cannot list: {err.strerror}", shown)
            )
        errors.clear()
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        if dirpath != root and _is_virtualenv(dirpath, dirnames + filenames):
            dirnames[:] = []
            continue
        # the root itself is read: naming the output folder reads it back (translate --to slurm)
        own = _own_output(dirpath, filenames) if dirpath != root else None
        if own is not None:
            yield Skipped(dirpath, own)
            dirnames[:] = []
            continue
        if CHART_FILE in filenames:
            # A Helm chart is one unit, read through its Chart.yaml: its templates are no manifests.
            dirnames[:] = []
            filenames = [CHART_FILE]
        kept_dirs = []
        for name in dirnames:
            full = os.path.join(dirpath, name)
            if os.path.islink(full):
                diag = _link_diagnostic(full, full, root_real)
                if diag is not None:
                    yield Skipped(full, diag)
                continue
            kept_dirs.append(name)
        dirnames[:] = kept_dirs
        for name in sorted(filenames):
            full = os.path.join(dirpath, name)
            try:
                st = os.lstat(full)
            except OSError as exc:
                yield Skipped(
                    full, Diagnostic("FILE-UNREADABLE", "error", f"cannot read: {exc.strerror}", full)
                )
                continue
            if stat.S_ISLNK(st.st_mode):
                diag = _link_diagnostic(full, full, root_real)
                if diag is not None:
                    yield Skipped(full, diag)
                continue
            if stat.S_ISREG(st.st_mode):
                yield Candidate(full, full, st.st_size)
    # os.walk reports a folder it cannot list only through onerror, after the last yield
    for err in errors:
        shown = err.filename if isinstance(err.filename, str) else root
        yield Skipped(shown, Diagnostic("FILE-UNREADABLE", "error", f"cannot list: {err.strerror}", shown))
