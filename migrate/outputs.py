"""Writing a tree of generated files safely.

All files are prepared in memory, checked (paths stay inside the output
folder; nothing existing is overwritten without ``force``), written to a
staging folder beside the target, and only then moved into place. A new output
folder appears whole in one rename; into an existing folder each file is
replaced atomically, so a reader never sees half a file.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass, field


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
        """Write every file under ``out_dir``; returns the paths written, sorted."""
        clashes = self.existing(out_dir)
        if clashes and not force:
            raise OutputExistsError(clashes)
        if os.path.exists(out_dir) and not os.path.isdir(out_dir):
            raise OutputError(f"{out_dir} exists and is not a folder; choose another --out")
        parent = os.path.dirname(os.path.abspath(out_dir))
        try:
            os.makedirs(parent, exist_ok=True)
            staging = tempfile.mkdtemp(prefix=".migrate-staging-", dir=parent)
        except OSError as exc:
            raise OutputError(f"cannot write to {parent}: {exc.strerror}") from exc
        try:
            self._write_all(staging)
            if not os.path.exists(out_dir):
                os.rename(staging, out_dir)  # the whole tree appears at once
                staging = ""
            else:
                self._move_into(staging, out_dir)
        except OSError as exc:
            raise OutputError(f"cannot write to {out_dir}: {exc.strerror or exc}") from exc
        finally:
            if staging:
                shutil.rmtree(staging, ignore_errors=True)
        return sorted(os.path.join(out_dir, rel) for rel in self.files)

    def _write_all(self, root: str) -> None:
        for rel, content in sorted(self.files.items()):
            path = os.path.join(root, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8", newline="\n") as fh:
                fh.write(content)
            os.chmod(path, self.modes.get(rel, 0o644))

    def _move_into(self, staging: str, out_dir: str) -> None:
        for rel in sorted(self.files):
            target = os.path.join(out_dir, rel)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            os.replace(os.path.join(staging, rel), target)
