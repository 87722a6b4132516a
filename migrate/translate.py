"""Translation of whole job trees, independent of the direction.

``translate_jobs`` hands each job to the writer of the target format, gives
every job a unique folder and object name, resolves dependencies between the
translated jobs (the same way the graph does), and assembles one
``OutputTree``: a folder per job, shared folders (``kueue/``, ``storage/``), a
``kustomization.yaml`` (Kubernetes), a ``submit.sh`` when jobs wait for each
other, and ``translation.json`` with every fidelity entry. Same input, same
bytes.

Example::

    from migrate.siteconfig import load_site_config
    from migrate.translate import translate_jobs

    result = translate_jobs(jobs, to="kubernetes", flavor="auto", config=load_site_config("migrate.yaml"))
    result.tree.commit("out/")          # raises OutputExistsError unless force=True
    if result.strict:                   # something was dropped: `--strict` fails
        ...
"""

from __future__ import annotations

import importlib
import json
from dataclasses import dataclass, field
from typing import Any, Protocol

from migrate import ir
from migrate.diagnostics import Diagnostic
from migrate.fidelity import DROPPED, Entry, FidelityLog
from migrate.graph_deps import resolve_dependencies
from migrate.names import NameAllocator
from migrate.outputs import OutputTree
from migrate.siteconfig import SiteConfig

KUBERNETES = "kubernetes"
SLURM = "slurm"
WRITERS = {KUBERNETES: "migrate.translators.kubernetes.writer", SLURM: "migrate.translators.slurm.writer"}
WRAPPER = "wrapper"
SALLOC = "salloc"


@dataclass(frozen=True)
class WaitTarget:
    """What a submit script applies and waits for (a Kubernetes object, a Slurm job ...)."""

    resource: str
    name: str
    namespace: str | None
    ok: str
    failed: str
    by_phase: bool = False


@dataclass(frozen=True)
class Edge:
    """``dependent`` starts after ``prerequisite`` reached the state ``dep_type`` asks for."""

    dependent: str  # job ids
    prerequisite: str
    dep_type: str
    delay_s: int | None = None
    line: int | None = None


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
    needs: Any = None  # target-specific shared objects this job needs (rendered once per output)

    @property
    def dropped(self) -> list[Entry]:
        return [e for e in self.fidelity.entries if e.status == DROPPED]

    def to_dict(self, outputs: list[str]) -> dict[str, Any]:
        return {
            "source": self.source,
            "line": self.line,
            "job": self.job_id,
            "name": self.name,
            "flavor": self.flavor,
            "flavor_reason": self.flavor_reason,
            "outputs": outputs,
            "fidelity": self.fidelity.to_list(),
            "counts": self.fidelity.counts(),
            "diagnostics": [d.to_dict() for d in self.diagnostics],
        }


@dataclass
class TranslationSet:
    target: str
    translations: list[Translation]
    tree: OutputTree
    edges: list[Edge] = field(default_factory=list)

    @property
    def strict(self) -> bool:
        """True when something was dropped, so that ``--strict`` must fail."""
        return any(t.dropped for t in self.translations)

    any_dropped = strict

    @property
    def diagnostics(self) -> list[Diagnostic]:
        return [d for t in self.translations for d in t.diagnostics]


class Writer(Protocol):
    NAME_MAX: int
    RESERVED: frozenset[str]

    def translate_job(
        self, job: ir.Job, config: SiteConfig | None = None, flavor: str = "auto", *, name: str | None = None
    ) -> Translation: ...

    def render_shared(self, translations: list[Translation], config: SiteConfig | None) -> dict[str, str]: ...

    def render_index(self, paths: list[str]) -> dict[str, str]: ...

    def render_submit(
        self, translations: list[Translation], edges: list[Edge], folders: dict[str, str]
    ) -> str: ...

    def translate_wrapper(self, job: ir.Job, name: str) -> Translation: ...


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


def writer_for(target: str) -> Writer:
    if target not in WRITERS:
        raise ValueError(f"unknown target {target!r}; expected one of {', '.join(sorted(WRITERS))}")
    module: Writer = importlib.import_module(WRITERS[target])  # type: ignore[assignment]
    return module


def translate_jobs(
    jobs: list[ir.Job], to: str = KUBERNETES, flavor: str = "auto", config: SiteConfig | None = None
) -> TranslationSet:
    writer = writer_for(to)
    names = NameAllocator(writer.NAME_MAX)
    names.taken |= set(writer.RESERVED)  # shared folders keep their names
    translations: list[Translation] = []
    for job in jobs:
        name = names.allocate(job.name or _stem(job.source.path))
        if job.kind == WRAPPER:
            translations.append(writer.translate_wrapper(job, name))
        elif job.kind == SALLOC:
            translations.append(interactive_translation(job, name, to))
        else:
            translations.append(writer.translate_job(job, config, flavor, name=name))
    by_id = {t.job_id: t for t in translations}
    edges = _edges(jobs, by_id)
    tree = OutputTree()
    # outputs per translation, by position: two scanned jobs may share an id
    outputs = [
        [tree.add(f"{t.name}/{rel}", text) for rel, text in sorted(t.files.items())] for t in translations
    ]
    shared = writer.render_shared([t for t in translations if t.files], config)
    for rel, text in sorted(shared.items()):
        tree.add(rel, text)
    for t, out in zip(translations, outputs, strict=True):
        out += sorted(rel for rel in t.shared if rel in shared)
    manifests = sorted(p for p in tree.files if p.endswith(".yaml"))
    for rel, text in writer.render_index(manifests).items():
        tree.add(rel, text)
    if edges:
        folders = {t.job_id: t.name for t in translations}
        tree.add("submit.sh", writer.render_submit(translations, edges, folders), executable=True)
        linked = {e.dependent for e in edges} | {e.prerequisite for e in edges}
        for t, out in zip(translations, outputs, strict=True):
            if t.files and t.job_id in linked:
                out.append("submit.sh")
    document = {
        "ir_version": ir.IR_VERSION,
        "target": to,
        "jobs": [t.to_dict(out) for t, out in zip(translations, outputs, strict=True)],
    }
    tree.add("translation.json", json.dumps(document, indent=1, ensure_ascii=False) + "\n")
    return TranslationSet(to, translations, tree, edges)


def _edges(jobs: list[ir.Job], by_id: dict[str, Translation]) -> list[Edge]:
    """Dependencies between translated jobs; the rest become fidelity entries of the dependent job."""
    resolved = resolve_dependencies(jobs)
    edges: list[Edge] = []
    seen: set[tuple[str, str, str]] = set()
    for link in resolved.links:
        dependent = by_id.get(link.dependent)
        if dependent is None or not dependent.files:
            continue
        prerequisite = by_id.get(link.prerequisite) if link.prerequisite else None
        if prerequisite is not None and prerequisite.files and link.prerequisite != link.dependent:
            key = (link.dependent, prerequisite.job_id, link.dep_type)
            if key not in seen:
                seen.add(key)
                edges.append(Edge(link.dependent, prerequisite.job_id, link.dep_type, None, link.line))
            if link.via != "directive":
                dependent.fidelity.approximated(
                    f"{link.dep_type} on {prerequisite.name} ({link.via}: {link.path}:{link.line})",
                    f"submit.sh waits for {prerequisite.name} before applying this job",
                    link.line,
                )
            continue
        target = link.external or (link.prerequisite or "?")
        _mark_unresolved(dependent, link.dep_type, target, link.note, link.line)
    return edges


def _mark_unresolved(t: Translation, dep_type: str, target: str, note: str, line: int | None) -> None:
    """The dependency's entry becomes 'dropped': nothing among the translated jobs can be waited for."""
    reason = f"{target} is not among the translated jobs" + (f" ({note})" if note else "") + "; nothing waits"
    short = target.split(":", 1)[-1]
    for i, entry in enumerate(t.fidelity.entries):
        if entry.item.startswith("--dependency=") and short in entry.item and entry.status != DROPPED:
            t.fidelity.entries[i] = Entry(entry.item, DROPPED, reason, entry.line)
            return
    t.fidelity.dropped(f"{dep_type} on {target}", reason, line)


def _stem(path: str) -> str:
    base = path.replace("\\", "/").rsplit("/", 1)[-1]
    return base.split(".", 1)[0] or "job"


__all__ = ["Edge", "Translation", "TranslationSet", "WaitTarget", "translate_jobs", "writer_for"]
