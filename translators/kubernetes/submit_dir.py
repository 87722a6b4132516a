"""The folder a job was submitted from: where its script starts and what ``$SLURM_SUBMIT_DIR`` names.

sbatch starts the script in the folder ``sbatch`` ran in (on a shared file
system), so ``$(pwd)``, ``$SLURM_SUBMIT_DIR`` and relative paths
(``python train.py``, ``--config conf/a.yaml``, ``../src/convert.py``) name it.
A pod starts in its image's working directory. Where a site's job folders live
on the cluster is a site fact: ``kubernetes.submit_dirs`` in migrate.yaml maps
the folders of the job files as scanned to the cluster's. With it, the pod
starts there and ``SLURM_SUBMIT_DIR`` names it; without it, a job that reads
the folder gets a warning naming what it reads.
"""

from __future__ import annotations

import posixpath
import re

from migrate import ir

from . import submitter, workdir
from .translation_context import Context

# What names the submit folder: Slurm's variable, the shell's own, and pwd.
_READ = re.compile(r"\$\{?(?:SLURM_SUBMIT_DIR|PWD)\b|\$\(\s*pwd\s*\)|`\s*pwd\s*`")
# A relative path a program is given or run as: ./x, ../x, a/b.py, train.py (a file the job brings).
_RELATIVE = re.compile(
    r"(?<![\w/$~.%{@:=-])(\.\.?/[\w./-]+"
    r"|(?:[\w-]+/)*[\w-]+\.(?:py|sh|bash|yaml|yml|json|toml|cfg|conf|ini|jl|R|lua))(?![\w/])"
)
_CD_AWAY = re.compile(r"(?:^|[;&|]\s*)(?:cd|pushd)\s+(?![.]{1,2}(?:/|\s|$))\S")
_MOST_SHOWN = 3


def reads(job: ir.Job) -> list[str]:
    """What in the job names the submit folder, in line order: the script's reads, its relative paths
    until it changes to another folder, relative output files (none of these with ``--chdir``)."""
    body = job.script.body if job.script is not None else ""
    found: list[str] = []
    relative = not job.io.workdir
    for line in body.splitlines():
        code = line.split(" #", 1)[0]
        if code.lstrip().startswith("#"):
            continue
        # each pattern only where what all its matches hold is in the line: most lines have none
        if "$" in code or "`" in code:
            found += _READ.findall(code)
        if relative:
            if "." in code:
                found += _RELATIVE.findall(code)
            if ("cd" in code or "pushd" in code) and _CD_AWAY.search(code):
                relative = False
    for path in (job.io.stdout, job.io.stderr, job.io.stdin):
        if path and not job.io.workdir and not path.startswith(("/", "$")) and "{" not in path:
            found.append(path)
    return list(dict.fromkeys(found))


def folder(ctx: Context) -> str | None:
    """The cluster folder the site says the job's file was submitted from, or None."""
    kube = ctx.site.config.kubernetes if ctx.site.config else None
    if kube is None or not kube.submit_dirs:
        return None
    where = posixpath.dirname(posixpath.normpath(ctx.job.source.path)).removeprefix("./")
    where = "" if where == "." else where
    for scanned, cluster in kube.submit_dirs:  # longest first
        if scanned == "" or where == scanned or where.startswith(scanned + "/"):
            rest = where[len(scanned) :].lstrip("/") if scanned else where.lstrip("/")
            base = cluster.replace("{user}", submitter.values(ctx)["USER"])
            return posixpath.join(base, rest) if rest else base
    return None


def start(ctx: Context) -> str | None:
    """The folder the script starts in: ``--chdir`` as written, else the submit folder, else None."""
    chdir = ctx.job.io.workdir
    if chdir and not workdir.placeholders(chdir):
        return chdir
    return folder(ctx)


def record(ctx: Context) -> str | None:
    """Record the submit folder for the jobs that read it; the folder the pod starts in, or None."""
    used = reads(ctx.job)
    known = folder(ctx)
    more = len(used) - _MOST_SHOWN
    shown = ", ".join(used[:_MOST_SHOWN]) + (f" and {more} more" if more > 0 else "")
    if known is None:
        if used:
            ctx.fidelity.approximated(
                "submit folder",
                f"the job uses it ({shown}); the pod starts in the image's working directory",
            )
            ctx.diag(
                "TRANSLATE-SUBMIT-DIR",
                f"the job uses the folder it was submitted from ({shown}); the pod starts in the image's "
                "working directory: set kubernetes.submit_dirs in migrate.yaml (the job files' folder -> "
                "where they live on the cluster)",
            )
        return None
    mounted = ctx.site.filesystem_for(known) is not None
    if used:
        reason = f"{known} (kubernetes.submit_dirs): the pod starts there and SLURM_SUBMIT_DIR names it"
        if mounted:
            ctx.fidelity.mapped("submit folder", reason)
        else:
            ctx.fidelity.approximated("submit folder", f"{reason}; no site file system holds it")
            ctx.diag(
                "TRANSLATE-SUBMIT-DIR",
                f"the submit folder {known} is on no file system of the site: the pod starts in an empty "
                "folder of its own image; add the file system that holds it to migrate.yaml",
            )
    return known


__all__ = ["folder", "reads", "record"]
