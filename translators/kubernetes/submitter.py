"""The submitter's environment a script reads: ``$USER``, ``$LOGNAME``, ``$HOME``.

sbatch passes the submitting shell's environment to the job (``--export=ALL``,
the default), so a script may build paths on ``$USER`` or ``$HOME``
(``/scratch/$USER/run``, ``$HOME/data``, ``~/.cache``). A pod has no submitter:
its ``USER`` is unset and its ``HOME`` is the image's, and such a path silently
becomes another (``/scratch//run``). Who the pods stand for is a site choice
(``kubernetes.user`` and ``kubernetes.home`` in migrate.yaml): by default a user
per namespace, and ``/home/<user>`` where a file system of the site holds
``/home``. Only the variables a script reads are set, and each is recorded.

A script may also stop without a variable of its submitter's (``: "${CKPT:?set CKPT}"``, run as
``CKPT=... sbatch eval.sbatch``) or an argument of its sbatch command line (``${1:?usage}``). The
pods have neither: each such name is said, with its line, so that the user gives it to the pods.
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


# ${NAME:?message} or ${NAME?message}: the shell stops the script there when NAME is unset
_REQUIRED = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*|[1-9])(:?)\?")
# NAME=, export NAME=, local/declare/readonly NAME=, read [-r] NAME, mapfile -t NAME, for NAME in
_SETS = re.compile(
    r"(?:^|[\s;&|(])(?:(?:export|local|declare|readonly|typeset)(?:\s+-\w+)*\s+)?([A-Za-z_]\w*)(?:\[[^]]*\])?\+?="
    r"|\b(?:read|mapfile|readarray)\s+(?:-\w+\s+)*([A-Za-z_]\w*)|\bfor\s+([A-Za-z_]\w*)\s+in\b",
    re.MULTILINE,
)
# a function's $1 is its own argument, and its body may read what the script sets after it
_FUNCTION = re.compile(r"^\s*(?:function\s+[\w.-]+|[\w.-]+\s*\(\s*\))\s*\{?", re.MULTILINE)
# Under `set -u` (nounset) the shell stops at any unset variable it expands without a default: $NAME,
# ${NAME}, ${NAME:0:3}, but not ${NAME:-x}, ${NAME-x}, ${NAME:=x}, ${NAME:+x} or ${NAME:?x} (above)
_NOUNSET = re.compile(r"^\s*set\s+(?:-[a-zA-Z]*u[a-zA-Z]*\b|.*-o\s+nounset\b)", re.MULTILINE)
_EXPANDED = re.compile(r"\$(?:\{([A-Za-z_]\w*|[1-9])(?!\w|:?[-=+?])|([A-Za-z_]\w*|[1-9]))")
# a script that takes variables from elsewhere (a sourced file, modules, conda, eval): not known here
_IMPORTS = re.compile(r"(?:^|[\s;&|(])(?:source|\.|module|ml|conda|spack|eval)\s", re.MULTILINE)
# set for every job by the scheduler (and by the translation in the pods), or by the shell itself
_GIVEN_PREFIXES = ("SLURM_", "SLURMD_", "MIGRATE_", "BASH", "PMI", "OMPI_")
_GIVEN = frozenset(
    (
        *("PATH", "HOME", "USER", "LOGNAME", "PWD", "OLDPWD", "HOSTNAME", "HOSTTYPE", "OSTYPE", "MACHTYPE"),
        *("SHELL", "SHLVL", "TERM", "LANG", "TMPDIR", "RANDOM", "SECONDS", "LINENO", "PPID", "UID", "EUID"),
        *("GROUPS", "IFS", "PIPESTATUS", "REPLY", "OPTARG", "OPTIND", "FUNCNAME", "EPOCHSECONDS"),
        *("EPOCHREALTIME", "CUDA_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL", "ROCR_VISIBLE_DEVICES"),
    )
)


def required(job: ir.Job) -> list[tuple[str, int | None]]:
    """The variables and arguments the script stops without and never sets itself, each with the line
    of its first such use: on Slurm the submitter's environment or sbatch's command line gives them.
    ``${NAME:?message}`` always; under ``set -u`` any expansion without a default, unless the script
    takes variables from elsewhere (sources a file, loads modules) or has functions, whose bodies run
    later than they are written."""
    script = job.script
    if script is None or "$" not in script.body:
        return []
    body = script.body
    uses = [(m.group(1), m.start()) for m in _REQUIRED.finditer(body)]
    nounset = _NOUNSET.search(body)
    if nounset is not None and not _IMPORTS.search(body) and not _FUNCTION.search(body):
        uses += [(m.group(1) or m.group(2), m.start()) for m in _EXPANDED.finditer(body, nounset.end())]
    if not uses:
        return []
    # the line each name is first set on: a use there or before (SAMPLE=${SAMPLE:?}) is the submitter's,
    # except after `read x;` or `for x in ...;` on that line, which set it first
    first_set: dict[str, float] = {}
    for match in _SETS.finditer(body):
        group = next(i for i, name in enumerate(match.groups(), 1) if name)
        line = body.count("\n", 0, match.start(group)) - (0.5 if group > 1 else 0)
        first_set.setdefault(match.group(group), line)
    offset = script.header.count("\n")
    found: dict[str, int | None] = {}
    for name, at in sorted(uses, key=lambda use: use[1]):
        if name in found or name in NAMES or name in _GIVEN or name.startswith(_GIVEN_PREFIXES):
            continue
        line = body.count("\n", 0, at)
        if line > first_set.get(name, line):
            continue
        found[name] = offset + line + 1 if script.header else None
    return list(found.items())


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
    """Each variable the script reads, where its value comes from; a HOME the site does not give, said;
    each variable or argument it stops without, said."""
    record_required(ctx)
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


def record_required(ctx: Context) -> None:
    for name, line in required(ctx.job):
        if name.isdigit():
            what = f"argument {name} of the sbatch command line"
            hint = "write it into the job's command (args) or an env entry the script reads instead"
        else:
            what = f"${name} of the submitter's environment"
            hint = f"add {name} to the container's env"
        ctx.fidelity.dropped(
            f"${name}", f"the script stops without {what}, which the pod does not have", line
        )
        ctx.diag(
            "TRANSLATE-SUBMITTER-VARIABLE", f"the script stops without {what}; the pod has none: {hint}", line
        )


__all__ = ["NAMES", "env", "reads", "record", "required", "values"]
