"""Resolve dependency targets into jobs: wrapper chains, singleton, dependsOn, numeric ids.

A dependency in a script names its target indirectly: ``afterok:$jid`` where
``jid=$(sbatch --parsable prep.sbatch)`` two lines above, a job name for
``singleton``, a replicated-job name for JobSet ``dependsOn``, a bare Slurm job
id that only existed in some queue long ago. This module turns those into
links between scanned jobs, or into an explicit external target with a note
when no scanned job matches. Nothing here knows about networkx.
"""

from __future__ import annotations

import itertools
import posixpath
import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum

from migrate import ir
from migrate.vocab import DependencyType

SINGLETON = DependencyType.SINGLETON
DEPENDS_ON = DependencyType.DEPENDS_ON


class LinkVia(StrEnum):
    """How a dependency link was found, for the report."""

    DIRECTIVE = "directive"  # the job's own dependency (#SBATCH --dependency, dependsOn)
    WRAPPER = "wrapper"  # the sbatch line of a script that submits it
    SINGLETON = "singleton"  # another job of the same name
    NAME = "name"  # JobFlow targets and other name references


_SELF_SCRIPTS = frozenset(("$0", "${0}", "$BASH_SOURCE", "${BASH_SOURCE}", "${BASH_SOURCE[0]}"))
_OWN_JOB_ID = frozenset(("SLURM_JOB_ID", "SLURM_JOBID"))
_VARIABLE = re.compile(r"\$\{?#?([A-Za-z_][A-Za-z0-9_]*)")
_LEADING_DYNAMIC = re.compile(r"^(\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|\$\([^)]*\))/")


@dataclass(frozen=True, slots=True)
class Target:
    """What a reference resolved to: scanned jobs, or one external label."""

    jobs: tuple[str, ...] = ()
    external: str | None = None  # e.g. "slurm-job:77001", "script:prep.sbatch"
    note: str = ""


@dataclass(frozen=True, slots=True)
class DependencyLink:
    """``dependent`` may start only after ``prerequisite`` (a job id) or ``external``."""

    dependent: str
    dep_type: DependencyType
    via: LinkVia
    path: str
    line: int | None
    prerequisite: str | None = None
    external: str | None = None
    note: str = ""
    any_of: bool = False  # one of an OR list ('?'): any one of them lets the job start
    delay_s: int | None = None  # after:id+minutes, in seconds


@dataclass(frozen=True, slots=True)
class SubmitLink:
    """``submitter`` runs ``sbatch`` on the script of ``child`` (or on an unscanned script)."""

    submitter: str
    path: str
    line: int | None
    child: str | None = None
    external: str | None = None
    note: str = ""


@dataclass(frozen=True, slots=True)
class ResolvedDependencies:
    links: tuple[DependencyLink, ...] = ()
    submits: tuple[SubmitLink, ...] = ()
    # job id -> "trainer after initializer (Complete)"-style notes; no cross-job edge
    internal: tuple[tuple[str, tuple[str, ...]], ...] = ()
    self_resubmit: tuple[str, ...] = ()
    externals: tuple[tuple[str, str], ...] = field(default=())  # external id -> note


class JobIndex:
    """Lookups from what scripts write (paths, names) to scanned job ids."""

    def __init__(self, jobs: Iterable[ir.Job]) -> None:
        self.by_id: dict[str, ir.Job] = {}
        self.by_path: dict[str, list[str]] = defaultdict(list)
        self.by_basename: dict[str, list[str]] = defaultdict(list)
        self.by_name: dict[str, list[str]] = defaultdict(list)
        for job in sorted(jobs, key=lambda j: j.id):
            if job.id in self.by_id:
                continue
            self.by_id[job.id] = job
            path = posixpath.normpath(job.source.path)
            self.by_path[path].append(job.id)
            self.by_basename[posixpath.basename(path)].append(job.id)
            if job.name:
                self.by_name[job.name].append(job.id)

    def script(self, submitter: ir.Job, script: str | None, line: int | None = None) -> Target:
        """The scanned job(s) that ``sbatch <script>`` in ``submitter`` submits."""
        if not script:
            wrapped = ir.wrap_job_id(submitter.source.path, line)
            if wrapped in self.by_id:
                return Target(jobs=(wrapped,), note="the --wrap command, read as a job of its own")
            return Target(
                external=f"wrap:{submitter.source.path}:{line if line is not None else '?'}",
                note="sbatch with no script file (--wrap or stdin)",
            )
        text = script.strip().strip("'\"")
        own = posixpath.normpath(submitter.source.path)
        if text in _SELF_SCRIPTS:
            return Target(jobs=(submitter.id,), note="self")
        folder = posixpath.dirname(own)
        notes = ""
        dynamic = _LEADING_DYNAMIC.match(text)
        if dynamic:
            # "$DIR/train.sbatch" or "$(dirname $0)/train.sbatch": nearly always the wrapper's folder
            text = text[dynamic.end() :]
            notes = f"assumed {dynamic.group(1)} is the submitting script's folder"
        if "$" in text or "`" in text:
            return Target(external=f"script:{script}", note="script path is computed at run time")
        candidates = [posixpath.normpath(posixpath.join(folder, text))]
        if text.startswith("/"):
            candidates = [posixpath.normpath(text)]
        for candidate in candidates:
            if candidate == own:
                return Target(jobs=(submitter.id,), note="self")
            if candidate in self.by_path:
                return Target(jobs=self._this_call(self.by_path[candidate], submitter, line), note=notes)
        # The scan root may differ from where the wrapper runs (or it cd's first): the scanned
        # file sharing the longest run of trailing path components wins, if it is the only one.
        wanted = posixpath.normpath(text).split("/")
        scored: dict[str, int] = {}
        for job_id in self.by_basename.get(wanted[-1], ()):
            path = posixpath.normpath(self.by_id[job_id].source.path)
            scored[path] = _common_tail(path.split("/"), wanted)
        if scored:
            best = max(scored.values())
            paths = sorted(p for p, n in scored.items() if n == best)
            if len(paths) == 1:
                return Target(
                    jobs=self._this_call(self.by_path[paths[0]], submitter, line),
                    note=_join(notes, "matched by trailing path"),
                )
            return Target(
                external=f"script:{script}", note=f"{len(paths)} scanned files match this path equally"
            )
        return Target(external=f"script:{script}", note="script not among the scanned files")

    def _this_call(self, jobs: list[str], submitter: ir.Job, line: int | None) -> tuple[str, ...]:
        """Of a script's jobs, the one this call submits: its own copy when the calls got one each."""
        for job_id in jobs:
            copy = ir.submitted_job_id(job_id, submitter.source.path, line)
            if copy in self.by_id:
                return (copy,)
        return tuple(j for j in jobs if not ir.is_submitted_copy(j))

    def named(self, job: ir.Job, name: str) -> Target:
        """Jobs called ``name``: same namespace first, then same file, then anywhere."""
        others = [j for j in self.by_name.get(name, ()) if j != job.id]
        if not others:
            return Target(external=f"job:{name}", note="no scanned job has this name")
        namespace = job.placement.namespace
        same_ns = [j for j in others if self.by_id[j].placement.namespace == namespace]
        same_file = [j for j in same_ns if self.by_id[j].source.path == job.source.path]
        chosen = same_file or same_ns or others
        return Target(jobs=tuple(sorted(chosen)))


def resolve_dependencies(jobs: Iterable[ir.Job]) -> ResolvedDependencies:
    index = JobIndex(jobs)
    links: list[DependencyLink] = []
    submits: list[SubmitLink] = []
    internal: dict[str, list[str]] = {}
    self_resubmit: set[str] = set()
    singleton_lines: dict[str, int | None] = {}
    for job_id, job in index.by_id.items():
        for dep in job.dependencies:
            if dep.type == SINGLETON:
                singleton_lines.setdefault(job_id, dep.line)
            elif dep.type == DEPENDS_ON:
                _depends_on(index, job, dep, links, internal)
            else:
                for target in dep.targets:
                    links.extend(
                        _links(job_id, dep, _directive_target(index, job, target), LinkVia.DIRECTIVE, job)
                    )
        _submissions(index, job, links, submits, self_resubmit)
    links.extend(_singleton_links(index, singleton_lines))
    links.sort(key=lambda k: (k.dependent, k.prerequisite or "", k.external or "", k.dep_type, _line(k.line)))
    submits.sort(key=lambda s: (s.submitter, _line(s.line), s.child or "", s.external or ""))
    externals = {k.external: k.note for k in links if k.external} | {
        s.external: s.note for s in submits if s.external
    }
    return ResolvedDependencies(
        links=tuple(links),
        submits=tuple(submits),
        internal=tuple((k, tuple(v)) for k, v in sorted(internal.items())),
        self_resubmit=tuple(sorted(self_resubmit)),
        externals=tuple(sorted(externals.items())),
    )


def _links(
    dependent: str, dep: ir.Dependency, target: Target, via: LinkVia, where: ir.Job, line: int | None = None
) -> list[DependencyLink]:
    at = line if line is not None else dep.line
    if target.external:
        return [
            DependencyLink(
                dependent, dep.type, via, where.source.path, at, external=target.external, note=target.note
            )
        ]
    return [
        DependencyLink(
            dependent,
            dep.type,
            via,
            where.source.path,
            at,
            prerequisite=p,
            note=target.note,
            any_of=dep.any_of,
            delay_s=dep.delay_s,
        )
        for p in target.jobs
        if p != dependent
    ]


def job_id_of(target: str) -> str:
    """A dependency target without its delay or array task: ``123+30`` and ``123_4`` are job 123."""
    return target.split("+", 1)[0].split("_", 1)[0]


def _directive_target(index: JobIndex, job: ir.Job, target: str) -> Target:
    text = target.strip()
    core = job_id_of(text)
    if core.isascii() and core.isdigit():
        return Target(
            external=f"slurm-job:{core}", note="a Slurm job id from a past submission; not scannable"
        )
    var = _VARIABLE.match(text)
    if var:
        return Target(external=f"unresolved:{text}", note="job id held in a variable the scan cannot follow")
    return index.named(job, text)


_PART_PREFIXES = frozenset(("replicatedJob", "task", "role", "component"))


def _depends_on(
    index: JobIndex,
    job: ir.Job,
    dep: ir.Dependency,
    links: list[DependencyLink],
    internal: dict[str, list[str]],
) -> None:
    components = {c.name for c in job.components}
    status = f" ({dep.status})" if dep.status else ""
    for target in dep.targets:
        # readers qualify parts of one job ("replicatedJob:init", "task:master")
        kind, sep, bare = target.partition(":")
        part = bare if sep and kind in _PART_PREFIXES else target
        if part in components:
            # JobSet/Volcano ordering between parts of one job: moves with the job
            internal.setdefault(job.id, []).append(f"after {part}{status}")
        elif target in index.by_id and target != job.id:
            # a JobFlow step names the scanned job itself
            links.extend(_links(job.id, dep, Target(jobs=(target,)), LinkVia.NAME, job))
        else:
            links.extend(_links(job.id, dep, index.named(job, target), LinkVia.NAME, job))


def _submissions(
    index: JobIndex,
    job: ir.Job,
    links: list[DependencyLink],
    submits: list[SubmitLink],
    self_resubmit: set[str],
) -> None:
    captured: dict[str, list[tuple[int, Target]]] = defaultdict(list)
    submitted: dict[int, Target] = {}  # sbatch line -> what it submitted, for ir.SUBMITTED_AT targets
    aliases = _aliases(job)
    for sub in sorted(job.submits, key=lambda s: _line(s.line)):
        child = index.script(job, sub.script, sub.line)
        if child.jobs == (job.id,):
            self_resubmit.add(job.id)
        else:
            for child_id in child.jobs:
                submits.append(SubmitLink(job.id, job.source.path, sub.line, child=child_id, note=child.note))
            if child.external:
                submits.append(
                    SubmitLink(job.id, job.source.path, sub.line, external=child.external, note=child.note)
                )
            for dep in sub.dependencies:
                for ref in dep.targets:
                    if ref.startswith(ir.SUBMITTED_AT):
                        at = ref.removeprefix(ir.SUBMITTED_AT)
                        target = submitted.get(int(at) if at.isdigit() else -1) or Target(
                            external=f"unresolved:{ref}", note="no earlier sbatch at that line"
                        )
                    else:
                        target = _submission_target(index, job, ref, sub.line, captured, aliases)
                    for child_id in child.jobs:
                        links.extend(_links(child_id, dep, target, LinkVia.WRAPPER, job, sub.line))
        if sub.captures:
            captured[sub.captures.lstrip("$")].append((_line(sub.line), child))
        submitted[_line(sub.line)] = child


def _aliases(job: ir.Job) -> dict[str, list[tuple[int, str]]]:
    """``dep=$jid`` style assignments: variable -> [(line, other variable)]."""
    out: dict[str, list[tuple[int, str]]] = defaultdict(list)
    for var in job.environment:
        if var.value is None or var.line is None:
            continue
        match = _VARIABLE.fullmatch(var.value.strip().strip("'\"").replace("}", ""))
        if match:
            out[var.name].append((var.line, match.group(1)))
    return out


def _submission_target(
    index: JobIndex,
    job: ir.Job,
    ref: str,
    line: int | None,
    captured: dict[str, list[tuple[int, Target]]],
    aliases: dict[str, list[tuple[int, str]]],
) -> Target:
    var = _VARIABLE.search(ref)
    if var is None:
        return _directive_target(index, job, ref)
    name = var.group(1)
    at = _line(line)
    for _ in range(10):  # follow dep=$jid assignments, newest first, a few hops at most
        if name in _OWN_JOB_ID:
            return Target(jobs=(job.id,), note="the submitting job itself")
        # the most recent capture or alias of this variable before the submission
        captures = [(when, t) for when, t in captured.get(name, ()) if when <= at]
        renames = [(when, other) for when, other in aliases.get(name, ()) if when <= at]
        last_capture = captures[-1] if captures else None
        last_rename = max(renames) if renames else None
        if last_rename is not None and (last_capture is None or last_rename[0] > last_capture[0]):
            at, name = last_rename
            continue
        if last_capture is not None:
            return last_capture[1]
        break
    return Target(
        external=f"unresolved:{ref}", note=f"${var.group(1)} is not set by an earlier sbatch in this script"
    )


def _singleton_links(index: JobIndex, declared: dict[str, int | None]) -> list[DependencyLink]:
    """Jobs of one name and account run one at a time: chain them in a fixed order.

    A chain (not all pairs) keeps the graph linear in the group size and acyclic,
    while still putting the whole group in one migration unit.
    """
    groups: dict[tuple[str, str], list[str]] = defaultdict(list)
    for job_id, job in index.by_id.items():
        if job.name:
            groups[(job.name, job.placement.account or "")].append(job_id)
    out: list[DependencyLink] = []
    for members in groups.values():
        declarers = sorted((j for j in members if j in declared), key=ir.submission_order)
        if not declarers or len(members) < 2:
            continue
        others = sorted(j for j in members if j not in declared)
        first = declarers[0]
        for prev, cur in itertools.pairwise(declarers):
            out.append(_singleton(index, cur, prev, declared[cur]))
        out.extend(_singleton(index, first, other, declared[first]) for other in others)
    return out


def _singleton(index: JobIndex, dependent: str, prerequisite: str, line: int | None) -> DependencyLink:
    job = index.by_id[dependent]
    return DependencyLink(
        dependent,
        SINGLETON,
        LinkVia.SINGLETON,
        job.source.path,
        line,
        prerequisite=prerequisite,
        note=f"same name {job.name!r} and account: runs one at a time",
    )


def _common_tail(a: list[str], b: list[str]) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[-1 - n] == b[-1 - n] and b[-1 - n] not in ("..", "."):
        n += 1
    return n


def _line(line: int | None) -> int:
    return line if line is not None else 0


def _join(*parts: str) -> str:
    return "; ".join(p for p in parts if p)


__all__ = [
    "DependencyLink",
    "JobIndex",
    "ResolvedDependencies",
    "SubmitLink",
    "Target",
    "job_id_of",
    "resolve_dependencies",
]
