"""Kubernetes object names: valid, bounded, and unique within one output."""

from __future__ import annotations

import hashlib
import re

DNS1123_LABEL_MAX = 63
_INVALID = re.compile(r"[^a-z0-9-]+")
_DASHES = re.compile(r"-{2,}")


def dns1123_label(text: str, max_len: int = DNS1123_LABEL_MAX, fallback: str = "job") -> str:
    """Lower-case, [a-z0-9-], starts and ends alphanumeric, at most ``max_len`` long.

    Names that had to be shortened keep a short hash of the original so that two
    long names with the same prefix stay different.
    """
    name = _DASHES.sub("-", _INVALID.sub("-", text.lower())).strip("-")
    if not name:
        name = fallback
    if not name[0].isalpha():
        name = f"{fallback}-{name}"
    if len(name) > max_len:
        digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:6]
        name = name[: max_len - 7].rstrip("-") + "-" + digest
    return name


class NameAllocator:
    """Hands out names that are unique within one output (one namespace and kind)."""

    def __init__(self, max_len: int = DNS1123_LABEL_MAX) -> None:
        self.max_len = max_len
        self.taken: set[str] = set()

    def allocate(self, wanted: str) -> str:
        base = dns1123_label(wanted, self.max_len)
        name, n = base, 1
        while name in self.taken:
            n += 1
            suffix = f"-{n}"
            name = base[: self.max_len - len(suffix)].rstrip("-") + suffix
        self.taken.add(name)
        return name


# Extensions a job file is known by; only these are dropped from a file name to name its object
# (`my.jax.v2.sbatch` is `my-jax-v2`, not `my`). Template suffixes come off first (`x.sbatch.j2`).
JOB_FILE_EXTENSIONS = (
    ".sbatch",
    ".slurm",
    ".sh",
    ".bash",
    ".job",
    ".batch",
    ".txt",
    ".yaml",
    ".yml",
    ".json",
)
TEMPLATE_EXTENSIONS = (".j2", ".jinja", ".jinja2", ".in", ".tpl", ".tmpl", ".template")


def job_file_name(path: str) -> str:
    """The file name of a job's path: Slurm's default job name for a batch script."""
    return path.replace("\\", "/").rsplit("/", 1)[-1]


def job_file_stem(path: str) -> str:
    """The file name without a known job-file extension; other dots are part of the name."""
    base = job_file_name(path)
    lowered = base.lower()
    for group in (TEMPLATE_EXTENSIONS, JOB_FILE_EXTENSIONS):
        for ext in group:
            if lowered.endswith(ext) and len(base) > len(ext):
                base, lowered = base[: -len(ext)], lowered[: -len(ext)]
                break
    return base or "job"


# A name left for a template or a deploy script to fill in: $VAR, ${VAR}, __NAME__, {{ name }}, <NAME>.
_PLACEHOLDER = re.compile(r"\$\{?[A-Za-z_]\w*\}?|__[A-Z0-9_]+__|\{\{.*?\}\}|<[A-Z][A-Z0-9_]*>")


def is_placeholder(text: str) -> bool:
    """Whether a reference (a claim name, a job id) is a placeholder rather than a real name."""
    return bool(_PLACEHOLDER.search(text))
