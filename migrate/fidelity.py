"""What a translation gives: the job's files, and what happened to every source item, and why.

A writer turns one IR job into a ``Translation``; each carries a ``FidelityLog``; every option or field of the
source gets one entry: mapped, approximated (with the reason) or dropped (with
the reason). The same reasons are written beside the output as comments or
annotations. An entry whose translation gives the job less than Slurm's
allocation (fewer GPUs or CPUs, less memory, another node pool) says what it
``loses``; ``--strict`` fails when anything was dropped or lost.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from migrate import ir
from migrate.diagnostics import Diagnostic
from migrate.vocab import DependencyType, FidelityStatus


@dataclass(frozen=True)
class Entry:
    item: str  # the source item, e.g. "--gres=gpu:a100:4" or "spec.backoffLimit"
    status: FidelityStatus
    reason: str = ""
    line: int | None = None
    loses: str | None = None  # what the job gets less of than its allocation: "2 CPUs per node"
    # What the entry is about, for code that finds it again (not written out):
    # ("dependency", type, target, ...) for a dependency of an sbatch job.
    key: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"item": self.item, "status": self.status, "reason": self.reason}
        if self.line is not None:
            out["line"] = self.line
        if self.loses is not None:
            out["loses"] = self.loses
        return out


@dataclass
class FidelityLog:
    entries: list[Entry] = field(default_factory=list)

    def mapped(self, item: str, reason: str = "", line: int | None = None) -> None:
        self.entries.append(Entry(item, FidelityStatus.MAPPED, reason, line))

    def approximated(self, item: str, reason: str, line: int | None = None, loses: str | None = None) -> None:
        self.entries.append(Entry(item, FidelityStatus.APPROXIMATED, reason, line, loses))

    def dropped(self, item: str, reason: str, line: int | None = None, loses: str | None = None) -> None:
        self.entries.append(Entry(item, FidelityStatus.DROPPED, reason, line, loses))

    def record(
        self,
        status: FidelityStatus,
        item: str,
        reason: str,
        line: int | None = None,
        loses: str | None = None,
        key: tuple[str, ...] = (),
    ) -> None:
        self.entries.append(Entry(item, status, reason, line, loses, key))

    def counts(self) -> dict[str, int]:
        counts: dict[str, int] = {s: 0 for s in FidelityStatus}
        for e in self.entries:
            counts[e.status] += 1
        return counts

    @property
    def any_dropped(self) -> bool:
        return any(e.status == FidelityStatus.DROPPED for e in self.entries)

    @property
    def losses(self) -> list[Entry]:
        """Entries where the job gets less than its allocation."""
        return [e for e in self.entries if e.loses is not None]

    def to_list(self) -> list[dict[str, Any]]:
        return [e.to_dict() for e in self.entries]


@dataclass(frozen=True)
class WaitTarget:
    """What a submit script applies and waits for (a Kubernetes object, a Slurm job ...)."""

    resource: str
    name: str
    namespace: str | None
    ok: str
    failed: str
    by_phase: str = ""  # the status field that holds a phase (Volcano, RayJob); "": conditions


@dataclass(frozen=True)
class Edge:
    """``dependent`` starts after ``prerequisite`` reached the state ``dep_type`` asks for."""

    dependent: str  # job ids
    prerequisite: str
    dep_type: DependencyType
    delay_s: int | None = None
    line: int | None = None
    any_of: bool = False  # joined with the job's other any_of edges by OR ('?'), not AND


@dataclass
class Translation:
    """One source job in the target format."""

    job_id: str
    source: str
    line: int
    target: str
    flavor: str
    flavor_reason: str
    name: str  # object and folder name, unique within the output
    files: dict[str, str] = field(default_factory=dict)  # relative to the job's folder
    shared: dict[str, str] = field(default_factory=dict)  # relative to the output root
    fidelity: FidelityLog = field(default_factory=FidelityLog)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    wait: WaitTarget | None = None
    fallback: str | None = None  # why the requested flavor could not express the job (it got another)
    needs: Any = None  # target-specific shared objects this job needs (rendered once per output)
    # its chain engine cannot start it: applied by hand once its condition holds, left out of the index
    by_hand: bool = False
    style: str = ""  # Kubernetes: native (the pods run the step) or emulate (the script with Slurm shims)
    style_reason: str = ""
    style_line: int | None = None  # the statement that decided it
    # The objects a writer dumped into ``files[rel]``, with the text they became: a later pass over the
    # files (the Argo chain reads every job's objects) takes them instead of parsing that text again.
    objects: dict[str, tuple[str, list[dict[str, Any]]]] = field(default_factory=dict, repr=False)

    def documents(self, rel: str) -> list[dict[str, Any]] | None:
        """The objects of ``files[rel]`` as written, or None when the text changed since (or was not
        dumped from objects): then the caller parses it."""
        kept = self.objects.get(rel)
        return kept[1] if kept is not None and kept[0] is self.files.get(rel) else None

    @property
    def dropped(self) -> list[Entry]:
        return [e for e in self.fidelity.entries if e.status == FidelityStatus.DROPPED]

    @property
    def losses(self) -> list[Entry]:
        """What the job gets less of than Slurm allocated it (GPUs, CPUs, memory, the node pool)."""
        return self.fidelity.losses

    def to_dict(self, outputs: list[str]) -> dict[str, Any]:
        return {
            "source": self.source,
            "line": self.line,
            "job": self.job_id,
            "name": self.name,
            "flavor": self.flavor,
            "flavor_reason": self.flavor_reason,
            **({"style": self.style, "style_reason": self.style_reason} if self.style else {}),
            **({"style_line": self.style_line} if self.style_line else {}),
            "outputs": outputs,
            "fidelity": self.fidelity.to_list(),
            "counts": self.fidelity.counts(),
            "diagnostics": [d.to_dict() for d in self.diagnostics],
        }


def wrapper_translation(job: ir.Job, name: str, target: str, what_submit_does: str) -> Translation:
    """A submit script: no artifact of its own; its sbatch calls become the order of submit.sh."""
    t = Translation(
        job.id,
        job.source.path,
        job.source.line,
        target,
        "submit.sh",
        "a wrapper that submits other jobs: its order is kept in submit.sh",
        name,
    )
    for sub in job.submits:
        t.fidelity.approximated(f"sbatch {sub.script or '--wrap'}", what_submit_does, sub.line)
    t.fidelity.approximated(
        "wrapper script", "only its sbatch calls are translated; other commands in it are not run"
    )
    return t


def interactive_translation(job: ir.Job, name: str, target: str) -> Translation:
    """An salloc helper: a person works inside the allocation, so there is no batch job to write."""
    t = Translation(
        job.id,
        job.source.path,
        job.source.line,
        target,
        "none",
        "an interactive allocation: nothing runs unattended",
        name,
    )
    t.fidelity.dropped(
        "salloc allocation",
        "a person holds it open and works in it; on Kubernetes that is a development pod or a notebook "
        "server reached with kubectl exec, sized as the plan shows, not a batch Job",
        job.source.line,
    )
    return t
