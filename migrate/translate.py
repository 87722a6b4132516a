"""Translation of whole job trees, independent of the direction.

``translate_jobs`` hands each job to the writer of the target format, gives
every job a unique folder and object name, resolves dependencies between the
translated jobs (the same way the graph does), and assembles one
``OutputTree``: a folder per job, shared folders (``kueue/``, ``storage/``), a
``kustomization.yaml`` (Kubernetes), a ``submit.sh`` when jobs wait for each
other, and ``translation.json`` with every fidelity entry. Same input, same
bytes.

Example::

    from migrate.site.config import load_site_config
    from migrate.translate import translate_jobs

    result = translate_jobs(jobs, to="kubernetes", flavor="auto", config=load_site_config("migrate.yaml"))
    result.tree.commit("out/")          # raises OutputExistsError unless force=True
    if result.strict:                   # something dropped, or less than the allocation: `--strict` fails
        ...
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from migrate import ir, json_indented
from migrate.diagnostics import Diagnostic
from migrate.fidelity import Edge, Translation, interactive_translation
from migrate.graph.deps import LinkVia, job_id_of, resolve_dependencies
from migrate.graph.submitted import as_submitted, each_submission
from migrate.names import NameAllocator, job_file_stem
from migrate.outputs import OutputTree
from migrate.scan.garbage import collecting_less
from migrate.site.config import SiteConfig
from migrate.translators import registry
from migrate.translators.interfaces import Writer
from migrate.vocab import INTERACTIVE_KINDS, WRAPPER_KINDS, DependencyType, FidelityStatus, Format


@dataclass
class TranslationSet:
    target: str
    translations: list[Translation]
    tree: OutputTree
    edges: list[Edge] = field(default_factory=list)

    @property
    def strict(self) -> bool:
        """True when something was dropped or a job gets less than its allocation: ``--strict`` fails."""
        return any(t.dropped or t.losses for t in self.translations)

    any_dropped = strict

    @property
    def with_artifacts(self) -> list[Translation]:
        """The jobs that got files of their own; wrappers and interactive helpers get none."""
        return [t for t in self.translations if t.files]

    @property
    def without_artifacts(self) -> list[Translation]:
        return [t for t in self.translations if not t.files]

    @property
    def fallbacks(self) -> list[Translation]:
        """The jobs the requested flavor could not express: they got what ``auto`` picks."""
        return [t for t in self.translations if t.fallback is not None]

    @property
    def diagnostics(self) -> list[Diagnostic]:
        return [d for t in self.translations for d in t.diagnostics]


def writer_for(target: str) -> Writer:
    """The writer registered for ``target`` (``migrate.translators.registry``), imported now."""
    if target not in registry.WRITERS:
        raise ValueError(f"unknown target {target!r}; expected one of {', '.join(sorted(registry.WRITERS))}")
    return registry.WRITERS[target]()


def translate_jobs(
    jobs: list[ir.Job],
    to: str = Format.KUBERNETES,
    flavor: str = "auto",
    config: SiteConfig | None = None,
    runtime: str = "auto",
    workflow: str | None = None,
    style: str = "auto",
) -> TranslationSet:
    """``flavor``: the Kubernetes object to write (``auto``, ``job``, ``jobset`` ...);
    ``runtime``: how Slurm scripts run container images (``auto``, ``pyxis``, ``apptainer``, ``shifter``,
    ``podman-hpc``, ``none``);
    ``workflow``: what runs the dependency chains on Kubernetes (``argo``, ``jobflow``, ``script``;
    None: Argo when it is available, else ``script``); ``style`` (Kubernetes): ``native`` writes the pods
    that run the step's program themselves, ``emulate`` runs the script with Slurm shims, ``auto``
    native when the script allows it."""
    # the jobs live through the translation and each makes thousands of short-lived objects
    with collecting_less():
        return _translate_jobs(jobs, to, flavor, config, runtime, workflow, style)


def _translate_jobs(
    jobs: list[ir.Job],
    to: str,
    flavor: str,
    config: SiteConfig | None,
    runtime: str,
    workflow: str | None,
    style: str,
) -> TranslationSet:
    jobs = as_submitted(list(jobs))  # a wrapper's sbatch options outrank the script's own
    jobs = each_submission(jobs)  # a singleton script submitted three times runs three times
    writer = writer_for(to)
    choice = runtime if to == Format.SLURM else flavor
    styled = {} if to == Format.SLURM else {"style": style}
    names = NameAllocator(writer.NAME_MAX)
    names.taken |= set(writer.RESERVED)  # shared folders keep their names
    translations: list[Translation] = []
    for job in jobs:
        name = names.allocate(job.name or job_file_stem(job.source.path))
        if job.kind in WRAPPER_KINDS:
            translations.append(writer.translate_wrapper(job, name))
        elif job.kind in INTERACTIVE_KINDS:
            translations.append(interactive_translation(job, name, to))
        else:
            translations.append(writer.translate_job(job, config, choice, name=name, **styled))
    by_id = {t.job_id: t for t in translations}
    wanted = writer.chain_flavor(workflow)
    runner = writer.chain_file(workflow)
    edges = _edges(jobs, by_id, runner, record=wanted is None)
    if wanted is not None:
        # the engine holds one kind of object (a JobFlow holds Volcano Jobs): the chained jobs get it
        linked = {e.dependent for e in edges} | {e.prerequisite for e in edges}
        for i, job in enumerate(jobs):
            t = translations[i]
            if t.job_id in linked and t.files and t.flavor != wanted:
                translations[i] = writer.translate_job(job, config, wanted, name=t.name, **styled)
        by_id = {t.job_id: t for t in translations}
        edges = _edges(jobs, by_id, runner, record=True)
    chain_files: dict[str, str] = {}
    if edges:
        folders = {t.job_id: t.name for t in translations}
        chain_files = writer.render_chain(translations, edges, folders, workflow)
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
    for rel, text in sorted(chain_files.items()):
        tree.add(rel, text, executable=rel.endswith(".sh"))
    by_hand = {rel for t, out in zip(translations, outputs, strict=True) if t.by_hand for rel in out}
    manifests = sorted(p for p in tree.files if p.endswith(".yaml") and p not in by_hand)
    for rel, text in writer.render_index(manifests).items():
        tree.add(rel, text)
    if chain_files:
        linked = {e.dependent for e in edges} | {e.prerequisite for e in edges}
        for t, out in zip(translations, outputs, strict=True):
            if t.files and t.job_id in linked:
                out.extend(sorted(chain_files))
    document = {
        "ir_version": ir.IR_VERSION,
        "target": to,
        "jobs": [t.to_dict(out) for t, out in zip(translations, outputs, strict=True)],
    }
    # json.dumps(document, indent=1, ensure_ascii=False), without the standard library's pure Python encoder
    tree.add("translation.json", json_indented.dumps(document, end="\n", indent=1, sort_keys=False))
    return TranslationSet(to, translations, tree, edges)


def _edges(jobs: list[ir.Job], by_id: dict[str, Translation], runner: str, record: bool = True) -> list[Edge]:
    """Dependencies between translated jobs; the rest become fidelity entries of the dependent job
    (``record``: False only finds the edges)."""
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
                edges.append(
                    Edge(
                        link.dependent,
                        prerequisite.job_id,
                        link.dep_type,
                        link.delay_s,
                        link.line,
                        link.any_of,
                    )
                )
            if record and link.via is not LinkVia.DIRECTIVE:
                how = f"{runner} waits for {prerequisite.name} before applying this job" + (
                    ", for the whole array" if link.dep_type == DependencyType.AFTERCORR else ""
                )
                if link.dep_type == DependencyType.SINGLETON:  # a chain in some engines, a mutex in others
                    how = f"{runner} runs this job and {prerequisite.name} one at a time"
                dependent.fidelity.approximated(
                    f"{link.dep_type} on {prerequisite.name} ({link.via}: {link.path}:{link.line})",
                    how,
                    link.line,
                )
            continue
        if record:
            target = link.external or (link.prerequisite or "?")
            _mark_unresolved(dependent, link.dep_type, target, link.note, link.line)
    return edges


def _mark_unresolved(t: Translation, dep_type: str, target: str, note: str, line: int | None) -> None:
    """The dependency's entry becomes 'dropped': nothing among the translated jobs can be waited for."""
    reason = f"{target} is not among the translated jobs" + (f" ({note})" if note else "") + "; nothing waits"
    short = target.split(":", 1)[-1]
    for i, entry in enumerate(t.fidelity.entries):
        if (
            entry.key[:2] == ("dependency", dep_type)
            and any(short in (named, job_id_of(named)) for named in entry.key[2:])
            and entry.status != FidelityStatus.DROPPED
        ):
            t.fidelity.entries[i] = replace(entry, status=FidelityStatus.DROPPED, reason=reason)
            return
    t.fidelity.dropped(f"{dep_type} on {target}", reason, line)


__all__ = ["TranslationSet", "Writer", "translate_jobs", "writer_for"]
