"""State shared by the writer pieces that translate one job: names, site, logs, needs.

Each module adds its manifests, fidelity entries and diagnostics through a
``Context``; nothing is printed. ``Needs`` are the objects several jobs may
share (queues, volumes, priority classes): they are rendered once per output
by ``shared.render_shared``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from migrate import ir
from migrate.diagnostics import Collector
from migrate.fidelity import FidelityLog
from migrate.names import dns1123_label, job_file_stem
from migrate.site.allocation_model import JobAllocation
from migrate.translators.slurm import options as sbatch_options

from .kinds import MANAGED_BY_LABEL, MANAGED_BY_VALUE
from .site import Site

# Object names leave room for the suffixes Kubernetes and the operators add
# (pod host names "<name>-<rjob>-<i>-<j>", "-script", "-worker-12").
NAME_MAX = 40

ANNOTATION_SOURCE = "migrate.io/source"
ANNOTATION_LINE = "migrate.io/source-line"
ANNOTATION_FLAVOR = "migrate.io/flavor"
LABEL_JOB = "migrate.io/job"
LABEL_MANAGED = MANAGED_BY_LABEL

PLACEHOLDER_IMAGE = "REPLACE-ME/image:tag"


@dataclass(frozen=True, order=True)
class QueueNeed:
    queue: str
    partition: str | None
    namespace: str | None


@dataclass(frozen=True, order=True)
class VolumeNeed:
    claim: str
    prefix: str
    kind: str
    namespace: str | None


@dataclass(frozen=True, order=True)
class TokenNeed:
    """A Secret of one random token the job's pods share: never written, submit.sh creates it."""

    secret: str
    key: str
    namespace: str | None


@dataclass
class Needs:
    queues: set[QueueNeed] = field(default_factory=set)
    volumes: set[VolumeNeed] = field(default_factory=set)
    priority_classes: set[str] = field(default_factory=set)
    licenses: set[str] = field(default_factory=set)  # resource names counted by Kueue
    tokens: set[TokenNeed] = field(default_factory=set)  # per job, created before it is applied

    def merge(self, other: Needs) -> None:
        self.queues |= other.queues
        self.volumes |= other.volumes
        self.priority_classes |= other.priority_classes
        self.licenses |= other.licenses
        self.tokens |= other.tokens


@dataclass(frozen=True)
class Workload:
    """The object submit.sh applies and waits for: how to tell it started, finished, failed."""

    resource: str  # kubectl resource name: job, jobset, vcjob, pytorchjob, mpijob, cronjob
    name: str
    namespace: str | None
    ok: str  # condition type (or phase, for Volcano) meaning success
    failed: str
    by_phase: str = ""  # the status field with a phase instead of conditions (Volcano, RayJob)


@dataclass
class Context:
    job: ir.Job
    site: Site
    name: str  # the object name of the workload (a DNS-1123 label)
    flavor: str
    diags: Collector
    fidelity: FidelityLog = field(default_factory=FidelityLog)
    needs: Needs = field(default_factory=Needs)
    namespace: str | None = None
    option_lines: dict[tuple[str, int], int] = field(default_factory=dict)
    covered: set[tuple[str, int]] = field(default_factory=set)  # options that have an entry
    option_texts: dict[tuple[str, int], str] = field(default_factory=dict)  # as written in the file
    # job Secret -> (key, line) of each credential the job file wrote out literally
    secret_keys: dict[str, list[tuple[str, int | None]]] = field(default_factory=dict)
    allocation: JobAllocation | None = None  # what Slurm gives the job (migrate.site.allocation)
    native: Any = None  # native.Plan when the pods run the step's program themselves
    step_secret: str | None = None  # the Secret of the token its pods share for steps (step_service)
    job_id_is_name: bool = False  # the pods' SLURM_JOB_ID is the job's name, not a uid (slurmenv)

    @classmethod
    def create(
        cls,
        job: ir.Job,
        site: Site,
        name: str | None,
        flavor: str,
        diags: Collector,
    ) -> Context:
        ctx = cls(
            job,
            site,
            name or dns1123_label(job.name or job_file_stem(job.source.path), NAME_MAX),
            flavor,
            diags,
        )
        for item in job.raw:
            raw_long = option_name(item.key)
            if raw_long and item.line is not None:
                ctx.option_lines.setdefault((raw_long, item.component), item.line)
        for directive in job.directives:  # the last one wins, as in sbatch
            ctx.option_lines[(directive.option, directive.component)] = directive.line
            ctx.option_texts[(directive.option, directive.component)] = directive.text
        for directive in job.submitted:  # the wrapper's sbatch call outranks the script's lines
            key = (directive.option, directive.component)
            ctx.option_lines[key] = 0  # given, at a line of another file
            ctx.option_texts[key] = f"{directive.text} (sbatch in {job.submitted_by} line {directive.line})"
        return ctx

    def diag(self, code: str, message: str, line: int | None = None) -> None:
        """Add a diagnostic once (several components may hit the same problem)."""
        at = line if line is not None else self.job.source.line
        if any(d.code == code and d.message == message and d.line == at for d in self.diags.items):
            return
        self.diags.add(code, message, line=at, job=self.job.id)

    def given(self, long: str, component: int = 0) -> bool:
        """True when the job file is known to have this option (for this component)."""
        return (long, component) in self.option_lines

    def line_of(self, long: str, component: int = 0) -> int | None:
        """The option's line in the job file; None when the file does not hold it (a wrapper gave it)."""
        return self.option_lines.get((long, component)) or self.option_lines.get((long, 0)) or None

    def option(self, long: str, value: str | None = None, component: int | None = None) -> str:
        """The fidelity item for an sbatch option: ``--time=12:00:00`` (``component 1`` for hetjobs).

        Also marks the option as covered, so that the final sweep over the
        directives does not add a second entry for it.
        """
        self.covered.add((long, component or 0))
        text = self.option_texts.get((long, component or 0)) or (
            f"--{long}" if value is None else f"--{long}={value}"
        )
        if component is not None and len(self.job.components) > 1:
            text += f" (component {component})"
        return text

    @property
    def source_annotations(self) -> dict[str, str]:
        return {
            ANNOTATION_SOURCE: self.job.source.path,
            ANNOTATION_LINE: str(self.job.source.line),
            ANNOTATION_FLAVOR: self.flavor,
        }

    @property
    def labels(self) -> dict[str, str]:
        return {LABEL_MANAGED: MANAGED_BY_VALUE, LABEL_JOB: self.name}

    def metadata(self, name: str | None = None, namespaced: bool = True) -> dict[str, object]:
        meta: dict[str, object] = {"name": name or self.name}
        if namespaced and self.namespace:
            meta["namespace"] = self.namespace
        meta["labels"] = dict(self.labels)
        meta["annotations"] = dict(self.source_annotations)
        return meta


def option_name(key: str, table: sbatch_options.Table = sbatch_options.SBATCH) -> str | None:
    """The long name of an sbatch option from a raw key (``--gres-flags``, ``-S``, ``gres-flags``)."""
    text = key.strip()
    if text.startswith("--"):
        text = text[2:]
    elif text.startswith("-") and len(text) >= 2:
        opt = sbatch_options.BY_SHORT.get(text[1])
        return opt.long if opt else None
    text = text.split("=", 1)[0]
    opt, _ = table.lookup_long(text)
    return opt.long if opt else None


__all__ = [
    "NAME_MAX",
    "PLACEHOLDER_IMAGE",
    "Context",
    "Needs",
    "QueueNeed",
    "TokenNeed",
    "VolumeNeed",
    "Workload",
    "option_name",
]
