"""Short human-readable views of IR values, shared by the CLI and the reports."""

from __future__ import annotations

from migrate import ir
from migrate.vocab import PlaceholderRole


def plural(count: int, word: str, many: str | None = None) -> str:
    """``1 job``, ``2 jobs``: the count and the word in the number it takes (``many`` when not word + s)."""
    return f"{count} {word if count == 1 else many or word + 's'}"


def describe_time(seconds: int | None) -> str:
    """1-12:00:00 style, as Slurm prints time limits; empty when unset."""
    if seconds is None:
        return ""
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    clock = f"{hours:02d}:{minutes:02d}:{secs:02d}"
    return f"{days}-{clock}" if days else clock


def storage_roots(job: ir.Job, limit: int = 3) -> str:
    """The first path components of the storage a job touches, e.g. "/fsx, /scratch"."""
    roots: dict[str, None] = {}
    for item in job.storage:
        path = item.path
        if path.startswith("pvc:"):
            roots.setdefault(path.split("/", 1)[0], None)
            continue
        parts = [p for p in path.split("/") if p]
        if not parts:
            continue
        root = "/" + parts[0] if path.startswith("/") else parts[0]
        roots.setdefault(root, None)
    shown = list(roots)[:limit]
    more = len(roots) - len(shown)
    return ", ".join(shown) + (f" +{more}" if more > 0 else "")


UNKNOWN = "unknown"  # a count a template placeholder holds, with no value given


def unknown_roles(job: ir.Job) -> set[PlaceholderRole]:
    """What a job's unresolved placeholders leave unknown (its nodes, its GPUs)."""
    return {u.role for u in job.unresolved}


def job_row(job: ir.Job, nodes: int | None = None, devices: str | None = None) -> dict[str, str]:
    """A job's table row. ``nodes`` and ``devices`` ("8", "192 neuron", "16 on ray-g5"): the
    allocation model's (``migrate.site.job_size``, pods packed); the IR's request otherwise."""
    gpus = job.total_gpus()
    unknown = unknown_roles(job)
    if devices is None:
        devices = str(gpus) if gpus else ""
    return {
        "kind": job.kind,
        "name": job.name or "",
        "nodes": UNKNOWN
        if PlaceholderRole.NODES in unknown
        else str(job.total_nodes() if nodes is None else nodes),
        "gpus": UNKNOWN if PlaceholderRole.GPUS in unknown else devices,
        "time": describe_time(job.time_limit_s),
        "launcher": ", ".join(job.launcher_names()),
        "storage": storage_roots(job),
    }


def shell_coverage(jobs: list[ir.Job]) -> tuple[int, int]:
    """(understood, statements) over the shell bodies of ``jobs``."""
    understood = statements = 0
    for job in jobs:
        if job.script is not None:
            understood += job.script.understood
            statements += job.script.statements
    return understood, statements
