"""IR jobs -> Kubernetes manifests: the entry point of the Kubernetes writer.

Example::

    from migrate.site.config import load_site_config
    from migrate.translators.kubernetes.writer import translate_job

    t = translate_job(job, load_site_config("migrate.yaml"), flavor="auto")
    t.flavor, t.flavor_reason      # "jobset", "16 nodes: a JobSet with one pod per node ..."
    t.files                        # {"jobset.yaml": "...ConfigMap...---...JobSet..."}
    t.fidelity.to_list()           # one entry per #SBATCH option, launcher, env var ...

Each job becomes one multi-document file in its folder: the ConfigMap with the
unchanged script and the entrypoint, a headless Service where pods must find
each other, and the workload. ``migrate.translate.translate_jobs`` puts many
of them into one output tree.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from migrate import ir
from migrate.diagnostics import Collector
from migrate.fidelity import Edge, Entry, Translation, WaitTarget, wrapper_translation
from migrate.names import dns1123_label
from migrate.site.allocation import allocate
from migrate.site.allocation_model import JobAllocation, Source
from migrate.site.config import SiteConfig
from migrate.vocab import FidelityStatus, Format

from . import (
    chains,
    coverage,
    flavor_registry,
    flavors,
    job_policy,
    lws,
    native,
    pod_template,
    rayjob,
    shared,
    slurm_bridge,
    slurm_commands,
    slurmenv,
    step_service,
    storage,
    submit_dir,
    submitter,
)
from .site import Site
from .translation_context import NAME_MAX, Context, Needs, QueueNeed, Workload
from .yamlemit import Manifest, dump_all

TARGET = Format.KUBERNETES
RESERVED = frozenset({"kueue", "storage"})
DEFAULT_QUEUE = "default"


def translate_job(
    job: ir.Job,
    config: SiteConfig | None = None,
    flavor: str = "auto",
    *,
    name: str | None = None,
    style: str = native.AUTO,
) -> Translation:
    """One IR job as Kubernetes manifests, with its fidelity log and diagnostics. Never prints."""
    site = Site(config)
    choice = flavor_registry.choose(job, flavor)
    diags = Collector(job.source.path)
    ctx = Context.create(job, site, name, choice.name, diags)
    if job.array is not None and not job.array.count and not job.array.indices:
        # a fan-out whose size is known only at run time (Argo withParam): no count to write
        ctx.fidelity.dropped(
            f"fan-out {job.array.spec}",
            "its size is known only at run time: one pod is written; set completions before applying",
        )
        job = replace(job, array=None)
        ctx.job = job
    ctx.allocation = allocate(job, config, ctx.option_lines, ctx.option_texts)
    allocated = _as_allocated(job, ctx.allocation)
    if allocated is not job:  # the nodes and the time limit Slurm gives where the script leaves them to it
        ctx.job = allocated
        choice = flavor_registry.choose(allocated, flavor)
        ctx.flavor = choice.name
    job_policy.decide_namespace(ctx)  # the submitter's stand-in may be the namespace's user
    decision = _style(ctx, choice, style)
    choice = _native_only_choice(ctx, choice, decision)
    if choice.fell_back:
        ctx.diag("TRANSLATE-FLAVOR-FALLBACK", choice.reason)
        ctx.fidelity.approximated(f"--flavor {choice.requested}", choice.reason)
    volumes = storage.volumes(ctx)
    policy = job_policy.decide(ctx, volumes)
    if choice.kueue:
        _kueue_labels(ctx, policy)
    if not choice.bridge:  # on the bridge Slurm counts the licenses itself
        _licenses(ctx)
    manifests, workload = _build(ctx, choice, policy, volumes)
    step_service.guard(ctx, manifests)
    if choice.bridge:
        slurm_bridge.apply(ctx, manifests)
    if ctx.native is None:
        _launchers(ctx, choice)
        _submissions(ctx, choice)
    else:
        only = flavor_registry.native_only(ctx.native.target)
        (only.record if only is not None else native.record)(ctx, ctx.native)
        native.record_job_id(ctx)
    _monitoring(ctx)
    submitter.record(ctx)
    submit_dir.record(ctx)
    pod_template.report_credentials(ctx)
    if ctx.native is None:
        slurm_commands.record(ctx)
        slurmenv.record_script_variables(ctx, _env_names(manifests))
    coverage.sweep(ctx)
    # in file order, as a reviewer reads the script; entries without a line keep their order at the end
    ctx.fidelity.entries.sort(key=lambda e: (e.line is None, e.line or 0))
    header = [
        f"Translated by migrate from {job.source.path}:{job.source.line}",
        f"flavor {choice.name}: {choice.reason}",
        f"style {decision.style}: {decision.reason}",
    ]
    rel = flavor_registry.output(choice.flavor).file_name
    files = {rel: dump_all(manifests, header)}
    return Translation(
        job_id=job.id,
        source=job.source.path,
        line=job.source.line,
        target=TARGET,
        flavor=choice.name,
        flavor_reason=choice.reason,
        fallback=choice.cannot,
        name=ctx.name,
        files=files,
        objects={rel: (files[rel], [m.body for m in manifests])},
        shared=shared.render(ctx.needs, site),
        fidelity=ctx.fidelity,
        diagnostics=list(diags.items),
        wait=WaitTarget(
            workload.resource,
            workload.name,
            workload.namespace,
            workload.ok,
            workload.failed,
            workload.by_phase,
        ),
        needs=ctx.needs,
        style=decision.style,
        style_reason=decision.reason,
        style_line=decision.line,
    )


def _style(ctx: Context, choice: flavors.Choice, style: str) -> native.Decision:
    """Native when the script's shape allows it (and the user did not ask for emulation)."""
    known = submitter.values(ctx)
    given = {name: known[name] for name in submitter.reads(ctx.job) if name in known}
    # a kind of its own first: a model served across nodes (on a Ray cluster or not), a Ray cluster
    found = None
    if style != native.EMULATE:
        found = lws.decide(ctx.job, choice, ctx.name, given) or rayjob.decide(
            ctx.job, choice, ctx.name, given
        )
    decision, plan = found if found is not None else native.decide(ctx.job, choice, style, ctx.name, given)
    ctx.native = plan
    if style == native.NATIVE and plan is None:
        ctx.diag("TRANSLATE-STYLE-EMULATED", f"--style native: emulated instead, because {decision.reason}")
        ctx.fidelity.approximated("--style native", f"emulated: {decision.reason}", decision.line)
    else:
        ctx.fidelity.mapped(f"style {decision.style}", decision.reason, decision.line)
    return decision


def _native_only_choice(ctx: Context, choice: flavors.Choice, decision: native.Decision) -> flavors.Choice:
    """A kind only the native reading makes (RayJob, LeaderWorkerSet) when native; --flavor asking
    for one falls back when the script is emulated."""
    target = ctx.native.target if ctx.native is not None else None
    made = flavor_registry.native_only(target)
    if target is not None and made is not None:
        ctx.flavor = flavors.KUEUE if choice.kueue else target
        if len(ctx.name) > made.name_max:
            ctx.name = dns1123_label(ctx.name, made.name_max)
        return replace(choice, flavor=target, reason=made.reason)
    asked = flavor_registry.native_only(choice.requested)
    if asked is not None:
        cannot = choice.cannot or f"the script does not read as {asked.what}: {decision.reason}"
        picked = flavors.auto(ctx.job)[1]
        return replace(
            choice,
            reason=f"--flavor {choice.requested} cannot express this job ({cannot}); {picked}",
            fell_back=True,
            cannot=cannot,
        )
    return choice


def _build(
    ctx: Context, choice: flavors.Choice, policy: job_policy.JobPolicy, volumes: list[storage.Volume]
) -> tuple[list[Manifest], Workload]:
    return flavor_registry.output(choice.flavor).build(ctx, policy, volumes, kueue=choice.kueue)


def _as_allocated(job: ir.Job, allocation: JobAllocation) -> ir.Job:
    """The job with what Slurm decides where the script leaves it to Slurm: the node count a task or
    GPU count needs (``-n 384`` on 192-CPU nodes), the tasks on each node where they differ
    (``-n 256`` on 192-CPU nodes: 192,64), and the partition's DefaultTime or MaxTime."""
    components = list(job.components)
    for index, (comp, alloc) in enumerate(zip(job.components, allocation.components, strict=True)):
        res = comp.resources
        if res.nodes_min is None and alloc.nodes.value > res.computed_nodes():
            res = replace(res, nodes_min=alloc.nodes.value)
        if alloc.task_layout and len(job.components) == 1:  # a hetjob's components keep even counts
            res = replace(res, task_layout=alloc.task_layout)
        if res is not comp.resources:
            components[index] = replace(comp, resources=res)
    limit = allocation.time_limit_s
    time_limit = (
        limit.value if not job.time_limit_s and limit.source == Source.SITE_DEFAULT else job.time_limit_s
    )
    if components == list(job.components) and time_limit == job.time_limit_s:
        return job
    return replace(job, components=tuple(components), time_limit_s=time_limit)


def _kueue_labels(ctx: Context, policy: job_policy.JobPolicy) -> None:
    if policy.queue is None:
        policy.queue = DEFAULT_QUEUE
        ctx.needs.queues.add(QueueNeed(DEFAULT_QUEUE, None, ctx.namespace))
        ctx.diag(
            "TRANSLATE-PARTITION-UNMAPPED", f"no --partition: the job goes to LocalQueue {DEFAULT_QUEUE!r}"
        )
    policy.labels["kueue.x-k8s.io/queue-name"] = policy.queue


def _licenses(ctx: Context) -> None:
    """``--licenses``: counted by a Kueue quota when the site names a resource for each, else dropped."""
    licenses = ctx.job.components[0].resources.licenses
    if not licenses:
        return
    item = ctx.option("licenses", ",".join(f"{lic.name}:{lic.count}" for lic in licenses))
    line = ctx.line_of("licenses")
    resources = {lic.name: ctx.site.license_resource(lic.name) for lic in licenses}
    missing = [name for name, resource in resources.items() if resource is None]
    if ctx.flavor == flavors.KUEUE and not missing:
        ctx.needs.licenses.update(r for r in resources.values() if r)
        ctx.fidelity.approximated(
            item,
            f"counted by Kueue as {', '.join(r for r in resources.values() if r)} in the ClusterQueue quota "
            "(the pods must request them through a Kueue resource transformation)",
            line,
        )
        return
    why = (
        f"{', '.join(missing)} not in the site config (licenses:)" if missing else "only Kueue can count them"
    )
    ctx.fidelity.dropped(item, f"no licenses on Kubernetes; {why}", line)
    ctx.diag("TRANSLATE-LICENSE", f"licenses {', '.join(resources)} are not enforced on Kubernetes ({why})")


def _launchers(ctx: Context, choice: flavors.Choice) -> None:
    """One entry per launcher in the body: none is left to fail at run time unnoticed."""
    seen: set[tuple[str, int | None, tuple[str, ...]]] = set()
    for comp in ctx.job.components:
        for launcher in comp.launchers:
            key = (launcher.name, launcher.line, launcher.program)
            if key in seen:  # the same step can be listed under several hetjob components
                continue
            seen.add(key)
            words = " ".join(launcher.program[:6])
            item = f"launcher {launcher.name}" + (f": {words[:100]}" if words else "")
            ctx.fidelity.entries.append(_launcher_entry(ctx, choice, launcher, item))
            pyxis = sorted({kv.key.lstrip("-") for kv in launcher.options if "container" in kv.key})
            if pyxis:
                ctx.fidelity.approximated(
                    f"srun {' '.join('--' + p for p in pyxis)} (line {launcher.line})",
                    "pyxis options are ignored by the srun shim: the pod is the container "
                    "(its image and mounts are in the manifest)",
                    launcher.line,
                )


def _launcher_entry(ctx: Context, choice: flavors.Choice, launcher: ir.Launcher, item: str) -> Entry:
    multi = ctx.job.total_nodes() > 1
    line = launcher.line
    own = flavor_registry.get(choice.flavor).launcher_note(launcher)
    if own is not None:
        return Entry(item, FidelityStatus.MAPPED, own, line)
    if launcher.name == "srun":
        if any(kv.key.lstrip("-") == "mpi" for kv in launcher.options):
            return Entry(
                item,
                FidelityStatus.APPROXIMATED,
                "srun --mpi: the shim starts the tasks as separate processes "
                "without PMI; use --flavor mpijob for MPI",
                line,
            )
        if flavors.launches_torch(launcher) or flavors.launches_mpi(launcher):
            return Entry(
                item, FidelityStatus.MAPPED, "srun starts the launcher once on every node of the step", line
            )
        if multi:
            return Entry(
                item,
                FidelityStatus.APPROXIMATED,
                "srun starts the program once per task on every node of the step, in their pods "
                "(SLURM_PROCID/SLURM_LOCALID set); the tasks share no MPI world",
                line,
            )
        return Entry(
            item,
            FidelityStatus.MAPPED,
            "the srun shim runs the program once per task (SLURM_PROCID/SLURM_LOCALID set)",
            line,
        )
    if flavors.launches_mpi(launcher):
        if multi:
            return Entry(
                item,
                FidelityStatus.APPROXIMATED,
                "mpirun runs in the pod of node 0, where the script runs, and reaches only that pod "
                "(no hostfile or ssh between pods); use --flavor mpijob",
                line,
            )
        return Entry(item, FidelityStatus.MAPPED, "runs inside the single pod", line)
    if flavors.launches_torch(launcher) and multi:
        return Entry(
            item,
            FidelityStatus.APPROXIMATED,
            "outside srun it runs once, in the pod of node 0, as on Slurm's first node; its "
            "rendezvous is MASTER_ADDR (the first pod's DNS name) and the other pods join only "
            "through srun",
            line,
        )
    return Entry(item, FidelityStatus.MAPPED, "runs unchanged inside the pod", line)


def _submissions(ctx: Context, choice: flavors.Choice) -> None:
    resubmit = flavor_registry.get(choice.flavor).resubmit_note
    for sub in ctx.job.submits:
        item = f"sbatch {sub.script or '--wrap'}"
        if resubmit and flavors.self_resubmit_begin(ctx.job) is not None:
            ctx.fidelity.mapped(item, resubmit, sub.line)
            continue
        ctx.fidelity.dropped(
            item,
            "a pod cannot submit jobs; the sbatch shim fails loudly (chained runs need "
            "a workflow engine or a CronJob)",
            sub.line,
        )
        ctx.diag(
            "TRANSLATE-SUBMIT-IN-POD",
            f"the script runs sbatch {sub.script or ''} itself; inside a pod this "
            "fails (the sbatch shim reports it)",
            sub.line,
        )


def _monitoring(ctx: Context) -> None:
    for hook in ctx.job.monitoring:
        ctx.fidelity.mapped(
            f"monitoring {hook.kind}", "runs unchanged in the pod (the image must have the tool)", hook.line
        )


def _env_names(manifests: list[Manifest]) -> set[str]:
    names: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            env = node.get("env")
            if isinstance(env, list):
                names.update(e["name"] for e in env if isinstance(e, dict) and "name" in e)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    for m in manifests:
        walk(m.body)
    return names


def translate_wrapper(job: ir.Job, name: str) -> Translation:
    """A submit script: its sbatch calls become the order of submit.sh; it has no manifest itself."""
    return wrapper_translation(
        job, name, TARGET, "submit.sh applies the translated job and waits for its dependencies"
    )


def render_shared(translations: list[Translation], config: SiteConfig | None) -> dict[str, str]:
    needs = Needs()
    for t in translations:
        if isinstance(t.needs, Needs):
            needs.merge(t.needs)
    return shared.render(needs, Site(config))


def render_index(paths: list[str]) -> dict[str, str]:
    """kustomization.yaml listing every manifest."""
    body = {
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "resources": list(paths),
    }
    manifest = Manifest(body)
    manifest.note(
        (), "Written by migrate: kubectl apply -k . applies everything; submit.sh keeps dependency order"
    )
    return {"kustomization.yaml": dump_all([manifest])}


def render_chain(
    translations: list[Translation], edges: list[Edge], folders: dict[str, str], workflow: str | None = None
) -> dict[str, str]:
    """The dependency chains on the engine ``--workflow`` names (``chains.ENGINES``)."""
    return chains.render(workflow, translations, edges, folders)


def chain_file(workflow: str | None) -> str:
    """The file that runs the chains on the engine ``--workflow`` names."""
    return chains.chain_file(workflow)


def chain_flavor(workflow: str | None) -> str | None:
    """The flavor the jobs of a chain must have for ``workflow`` (a JobFlow holds Volcano Jobs)."""
    return chains.chain_flavor(workflow)


__all__ = [
    "NAME_MAX",
    "RESERVED",
    "chain_file",
    "chain_flavor",
    "render_chain",
    "render_index",
    "render_shared",
    "translate_job",
    "translate_wrapper",
]
