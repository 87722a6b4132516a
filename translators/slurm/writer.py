"""IR jobs -> Slurm batch scripts: the entry point of the Slurm writer.

Example::

    from migrate.site.config import load_site_config
    from migrate.translate import translate_jobs
    from migrate.translators.slurm.writer import translate_job

    t = translate_job(job, load_site_config("migrate.yaml"), "shifter")  # pyxis, apptainer, podman-hpc ...
    t.files            # {"job.sbatch": "#!/bin/bash\\n#SBATCH --job-name=..."}
    t.fidelity.to_list()
    t.diagnostics      # e.g. TO-SLURM-SECRET: which secret files to provision

    result = translate_jobs(jobs, to="slurm", runtime="pyxis", config=config)
    result.tree.commit("out/")   # one folder per job, submit.sh, translation.json

Kubernetes workloads (Job, Indexed Job, CronJob, JobSet, Volcano, PyTorchJob,
MPIJob, TrainJob, RayJob, Pod) are built by :mod:`.kube_job`; manifests that
migrate itself wrote from sbatch scripts give their original script back
(:mod:`.migrated`); IR read from sbatch scripts is written out again
(:mod:`.native`). Serving objects (Deployment, StatefulSet, RayCluster) stay
on Kubernetes: no files, a ``dropped`` entry and a diagnostic. The writer's
one choice is the container runtime the scripts start images with.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from migrate import ir, workloads
from migrate.diagnostics import Collector
from migrate.fidelity import Edge, Translation, wrapper_translation
from migrate.site.config import SiteConfig
from migrate.vocab import FidelityStatus, Format

from . import chain, kube_job, migrated, native, scron, sweep
from .context import Context, runtime_for
from .script import Script

TARGET = Format.SLURM
NAME_MAX = 63
RESERVED: frozenset[str] = frozenset()
SUBMIT = "submit.sh"
SCRONTAB = "scrontab"


@dataclass
class SlurmPlan:
    """What submit.sh needs to know of one translated job (``Translation.needs``)."""

    scripts: list[tuple[str, str, list[tuple[str, str, int | None]]]] = field(default_factory=list)
    scheduled: bool = False  # a scrontab entry: installed, not submitted
    copies: dict[str, tuple[int, str]] = field(default_factory=dict)  # stage -> (submissions, index variable)


def translate_job(
    job: ir.Job,
    config: SiteConfig | None = None,
    runtime: str = "auto",
    *,
    name: str | None = None,
    style: str = "auto",
) -> Translation:
    """One IR job as batch script(s), with its fidelity log and diagnostics. Never prints.

    ``runtime``: how the scripts run container images (``pyxis``, ``apptainer``, ``shifter``,
    ``podman-hpc``, ``none``; ``auto`` is pyxis). ``style`` is the Kubernetes writer's choice
    (a Slurm script runs its steps one way): taken, as every writer takes it, and left unused.
    """
    ctx = Context(job, config, runtime_for(runtime), name or _default_name(job), Collector(job.source.path))
    if stays_serving(job):
        return _serving(ctx)
    if job.source.format == Format.SLURM:
        scripts, kind, reason = native.translate(ctx)
    elif migrated.is_migrated(job):
        scripts, kind, reason = migrated.translate(ctx)
    elif job.sweep is not None:
        scripts = sweep.translate(ctx)
        unknown = ("not-translated", "its trial workload is unknown")
        kind, reason = _describe(ctx, scripts) if scripts else unknown
    else:
        scripts = kube_job.translate(ctx)
        kind, reason = _describe(ctx, scripts)
    files: dict[str, str] = {}
    source = f"{job.source.path}:{job.source.line}"
    notes = _notes(ctx)
    for script in scripts:
        script.intro += notes
        files[script.filename] = script.render(source)
    plan = SlurmPlan(
        [(s.stage, s.filename, s.after) for s in scripts],
        copies={s.stage: (s.copies, s.copy_var) for s in scripts if s.copies > 1},
    )
    if job.schedule is not None and scripts:
        files[SCRONTAB] = scron.entry(ctx, job.schedule, scripts[0].header, scripts[0].filename)
        plan.scheduled = True
        kind, reason = "scrontab", f"a scrontab entry ({job.schedule.cron}) running {scripts[0].filename}"
    if len(scripts) > 1 or plan.copies:
        files[SUBMIT] = _job_submit(ctx.name, plan)
    ctx.fidelity.entries.sort(key=lambda e: (e.line is None, e.line or 0))
    return Translation(
        job_id=job.id,
        source=job.source.path,
        line=job.source.line,
        target=TARGET,
        flavor=kind,
        flavor_reason=reason + f" (container runtime: {ctx.runtime})",
        name=ctx.name,
        files=files,
        fidelity=ctx.fidelity,
        diagnostics=list(ctx.diags.items),
        needs=plan,
    )


def stays_serving(job: ir.Job) -> bool:
    """A service this writer leaves on Kubernetes: it writes no script for it (the plan's pilot skips it).

    A LeaderWorkerSet whose pods serve no port is batch work in groups (``ir.batch_groups``): translated.
    """
    if ir.batch_groups(job):
        return False
    return workloads.is_serving(job.kind) or bool(job.services and job.source.format != Format.SLURM)


def _notes(ctx: Context) -> list[str]:
    """What a reviewer of the script should know: every approximated or dropped item, one line each."""
    out = []
    for e in sorted(ctx.fidelity.entries, key=lambda e: (e.line is None, e.line or 0)):
        if e.status != FidelityStatus.MAPPED:
            where = f" (line {e.line})" if e.line is not None else ""
            out.append(f"migrate: {e.status}: {e.item}{where}: {e.reason}")
    return out


def _default_name(job: ir.Job) -> str:
    from migrate.names import dns1123_label, job_file_stem

    return dns1123_label(job.name or job_file_stem(job.source.path), NAME_MAX)


def _describe(ctx: Context, scripts: list[Script]) -> tuple[str, str]:
    job = ctx.job
    if len(scripts) > 1:
        return (
            "sbatch-chain",
            f"{job.kind}: {len(scripts)} scripts that wait for each other, chained by submit.sh",
        )
    header = scripts[0].header
    hetjob = len(scripts[0].components) > 1
    nodes = header.value("nodes") or "1"
    groups = workloads.launch_of(job.kind) == workloads.Launch.LWS
    if hetjob:
        copies = scripts[0].copies
        return "hetjob", (
            f"{job.kind}: {len(scripts[0].components)} different roles as one heterogeneous job"
            + (" per group" if groups else "")
            + (f", submitted {copies} times by submit.sh" if copies > 1 else "")
        )
    if header.has("array"):
        each = ", one task per group" if groups else ""
        return "sbatch-array", f"{job.kind}: a job array ({header.value('array')}){each}"
    return "sbatch", f"{job.kind} on {nodes} {'node' if nodes == '1' else 'nodes'}"


def _serving(ctx: Context) -> Translation:
    job = ctx.job
    what = f"{job.kind} {job.name or ctx.name}"
    ctx.fidelity.dropped(
        what,
        "a long-running service stays on Kubernetes (hybrid: training on Slurm, serving on Kubernetes); "
        "batch schedulers end jobs at their time limit and have no load balancing or autoscaling",
        job.source.line,
    )
    ctx.diag(
        "TO-SLURM-SERVING",
        f"{what} serves traffic: not translated; keep it on Kubernetes and point it at the shared file "
        "system the Slurm jobs write to",
        job.source.line,
    )
    return Translation(
        job.id,
        job.source.path,
        job.source.line,
        TARGET,
        "not-translated",
        "a serving workload stays on Kubernetes",
        ctx.name,
        fidelity=ctx.fidelity,
        diagnostics=list(ctx.diags.items),
    )


def _job_submit(name: str, plan: SlurmPlan) -> str:
    units = []
    by_stage = {stage: chain.var_name(stage) for stage, _, _ in plan.scripts}
    for stage, filename, after in plan.scripts:
        waits = [(chain.SBATCH_TYPES.get(t, "afterok"), [by_stage[s]]) for s, t, _ in after if s in by_stage]
        copies, variable = plan.copies.get(stage, (1, ""))
        units.append(chain.Unit(by_stage[stage], filename, stage, waits, copies=copies, copy_var=variable))
    return chain.render(units)


def translate_wrapper(job: ir.Job, name: str) -> Translation:
    """A submit script: already Slurm; its sbatch calls become the order of submit.sh."""
    return wrapper_translation(
        job, name, TARGET, "submit.sh submits the translated job with its dependencies"
    )


def render_shared(translations: list[Translation], config: SiteConfig | None) -> dict[str, str]:
    return {}  # Slurm needs no shared objects: partitions and file systems already exist


def render_index(paths: list[str]) -> dict[str, str]:
    return {}


def render_chain(
    translations: list[Translation], edges: list[Edge], folders: dict[str, str], workflow: str | None = None
) -> dict[str, str]:
    """sbatch chains itself (--dependency): one submit.sh, whatever the workflow."""
    return {"submit.sh": render_submit(translations, edges, folders)}


def chain_file(workflow: str | None) -> str:
    """Slurm chains always run through submit.sh (sbatch --dependency)."""
    return "submit.sh"


def chain_flavor(workflow: str | None) -> str | None:
    return None


def render_submit(translations: list[Translation], edges: list[Edge], folders: dict[str, str]) -> str:
    """The top-level submit.sh: every translated script, each after the jobs it depends on."""
    units: list[chain.Unit] = []
    last: dict[str, list[str]] = {}  # job id -> variables of all its scripts
    skipped: list[str] = []
    for t in translations:
        plan = t.needs if isinstance(t.needs, SlurmPlan) else None
        if plan is None or not t.files:
            continue
        if plan.scheduled:
            skipped.append(
                f"{t.name}: a scrontab entry; install {folders[t.job_id]}/{SCRONTAB} with scrontab"
            )
            continue
        variables = {
            stage: chain.var_name(t.name, stage.removeprefix(t.name).lstrip("-"))
            for stage, _, _ in plan.scripts
        }
        for stage, filename, after in plan.scripts:
            waits = [
                (chain.SBATCH_TYPES.get(k, "afterok"), [variables[s]]) for s, k, _ in after if s in variables
            ]
            copies, variable = plan.copies.get(stage, (1, ""))
            units.append(
                chain.Unit(
                    variables[stage],
                    f"{folders[t.job_id]}/{filename}",
                    f"{t.name}: {t.source}",
                    waits,
                    copies=copies,
                    copy_var=variable,
                )
            )
        last[t.job_id] = list(variables.values())
    by_var = {u.var: u for u in units}
    _mark_or_lists(translations, edges, last, by_var)
    for edge in edges:
        if edge.dependent not in last or edge.prerequisite not in last:
            continue
        kind = chain.SBATCH_TYPES.get(edge.dep_type)
        if kind is None:  # singleton: the script carries --dependency=singleton itself
            continue
        for var in last[edge.dependent]:
            unit = by_var[var]
            if any(v in last[edge.dependent] for _, vs in unit.waits for v in vs):
                continue  # a later script of the same job: it waits for the first one already
            unit.waits.append((kind, list(last[edge.prerequisite])))
    return chain.render(units, skipped)


def _mark_or_lists(
    translations: list[Translation],
    edges: list[Edge],
    last: dict[str, list[str]],
    by_var: dict[str, chain.Unit],
) -> None:
    """A job whose every dependency is one of an OR list waits with '?'; a job mixing AND and OR
    cannot say so to sbatch (one separator per list): it waits for all, and its log says it."""
    by_id = {t.job_id: t for t in translations}
    for job_id, variables in last.items():
        own = [e for e in edges if e.dependent == job_id and e.prerequisite in last]
        ors = [e for e in own if e.any_of]
        if not ors:
            continue
        if len(ors) == len(own) and len(own) > 1:
            by_var[variables[0]].any_of = True
        else:
            by_id[job_id].fidelity.approximated(
                "OR dependency beside AND dependencies",
                "sbatch takes one kind of separator per --dependency: the job waits for all of them",
            )


__all__ = [
    "NAME_MAX",
    "RESERVED",
    "SlurmPlan",
    "chain_file",
    "chain_flavor",
    "render_chain",
    "render_index",
    "render_shared",
    "render_submit",
    "stays_serving",
    "translate_job",
    "translate_wrapper",
]
