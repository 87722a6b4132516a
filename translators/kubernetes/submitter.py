"""The submitter's environment a script reads: ``$USER``, ``$LOGNAME``, ``$HOME``.

sbatch passes the submitting shell's environment to the job (``--export=ALL``,
the default), so a script may build paths on ``$USER`` or ``$HOME``
(``/scratch/$USER/run``, ``$HOME/data``, ``~/.cache``). A pod has no submitter:
its ``USER`` is unset and its ``HOME`` is the image's, and such a path silently
becomes another (``/scratch//run``). Who the pods stand for is a site choice
(``kubernetes.user`` and ``kubernetes.home`` in migrate.yaml): by default a user
per namespace, and ``/home/<user>`` where a file system of the site holds
``/home``. Only the variables a script reads are set, and each is recorded.
"""

from __future__ import annotations

import functools
import re

from migrate import ir

from .translation_context import Context

NAMES = ("USER", "LOGNAME", "HOME")
_READ = re.compile(r"\$\{?(USER|LOGNAME|HOME)\b")
_TILDE = re.compile(r"(?:^|[\s=:(])~(?=/|\s|$)", re.MULTILINE)


def reads(job: ir.Job) -> set[str]:
    """The submitter's variables the script reads (``~`` is ``$HOME``)."""
    return set(_read_in(job.script.body if job.script is not None else ""))


# Asked several times for each job's body as it is translated: searched once.
@functools.lru_cache(maxsize=64)
def _read_in(body: str) -> frozenset[str]:
    found = set(_READ.findall(body))
    if _TILDE.search(body):
        found.add("HOME")
    if "LOGNAME" in found:
        found.add("USER")
    return frozenset(found)


def values(ctx: Context) -> dict[str, str]:
    """USER, LOGNAME and (when the site says or holds /home) HOME, as the site sets them."""
    settings = ctx.site.kubernetes
    user = settings.user.replace("{namespace}", ctx.namespace or ctx.site.default_namespace or "default")
    out = {"USER": user, "LOGNAME": user}
    home = settings.home
    if home is None and ctx.site.filesystem_for("/home") is not None:
        home = "/home/{user}"
    if home is not None:
        out["HOME"] = home.replace("{user}", user)
    return out


def env(ctx: Context) -> list[dict[str, str]]:
    """The env entries of the variables the script reads (the emulation's batch shell reads them)."""
    known, wanted = values(ctx), reads(ctx.job)
    return [{"name": n, "value": known[n]} for n in NAMES if n in wanted and n in known]


def record(ctx: Context) -> None:
    """Each variable the script reads, where its value comes from; a HOME the site does not give, said."""
    wanted = reads(ctx.job)
    if not wanted:
        return
    known = values(ctx)
    where = "kubernetes.user in migrate.yaml" + (
        "" if ctx.site.kubernetes.user != "{namespace}" else ": the namespace stands for the submitter"
    )
    for name in NAMES:
        if name not in wanted:
            continue
        if name in known:
            source = (
                where
                if name != "HOME"
                else "kubernetes.home in migrate.yaml, or /home/<user> on the site's /home"
            )
            ctx.fidelity.approximated(
                f"${name}", f"{known[name]!r} ({source}); sbatch passes the submitter's own"
            )
        else:
            ctx.fidelity.approximated(
                f"${name}", "the image's: no kubernetes.home in migrate.yaml and no /home file system"
            )
            ctx.diag(
                "TRANSLATE-SUBMITTER-HOME",
                "the script reads $HOME (or ~), the submitter's home on Slurm; the pod has the image's: set "
                "kubernetes.home in migrate.yaml (for example /home/{user} on a shared file system)",
            )


__all__ = ["NAMES", "env", "reads", "record", "values"]
