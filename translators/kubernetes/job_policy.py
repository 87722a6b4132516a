"""Job-level settings: time, retries, signals, queue, priority, namespace, I/O, mail, dependencies.

``decide`` turns the job's scheduling and lifecycle fields into one
``JobPolicy`` that the flavor builders place where their kind wants them
(``activeDeadlineSeconds`` on a Job, ``runPolicy`` on a PyTorchJob ...), and
records one fidelity entry per source option on the way.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field
from typing import Any

from migrate.names import dns1123_label
from migrate.site.allocation_model import Source
from migrate.translators.job_variables import POD
from migrate.translators.slurm import options as sbatch_options
from migrate.vocab import DependencyType, FidelityStatus

from . import submit_dir, workdir
from .flavors import CRONJOB, JOBSET, KUEUE, LWS, VOLCANO
from .storage import Volume
from .translation_context import Context, QueueNeed

CHECKPOINT_NOTE = (
    "after a disruption the pod starts the script again from the top: make the job resume from its "
    "last checkpoint"
)
_DEPENDENCY_WAITS = {
    "afterok": "complete",
    "afterany": "finished",
    "afternotok": "failed",
    "after": "started",
    DependencyType.AFTERCORR: "complete",
    DependencyType.SINGLETON: "finished",
}


@dataclass
class JobPolicy:
    active_deadline: int | None = None
    backoff_limit: int = 0
    ignore_disruptions: bool = True  # podFailurePolicy DisruptionTarget -> Ignore (Slurm requeues)
    max_restarts: int = 0  # JobSet / Volcano whole-job restarts
    grace_period: int | None = None
    suspend: bool = False
    queue: str | None = None
    priority_class: str | None = None  # pod priorityClassName (configured classes only)
    workload_priority: str | None = None  # Kueue WorkloadPriorityClass
    labels: dict[str, str] = field(default_factory=dict)  # on the workload and its pods
    annotations: dict[str, str] = field(default_factory=dict)
    security_context: dict[str, Any] = field(default_factory=dict)
    working_dir: str | None = None
    io_env: list[dict[str, Any]] = field(default_factory=list)
    notes: dict[str, list[str]] = field(default_factory=dict)  # field name -> comments
    dependencies: list[tuple[str, str, int | None, int | None]] = field(default_factory=list)

    def note(self, key: str, text: str) -> None:
        self.notes.setdefault(key, []).append(text)


_NAMESPACE = re.compile(r"[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?\Z")


def decide_namespace(ctx: Context) -> None:
    """``--account`` picks the namespace when the site config maps it; else the job's or the default one."""
    account = ctx.job.placement.account
    wanted = (ctx.site.namespace_for_account(account) if account else None) or ctx.job.placement.namespace
    if wanted and not _NAMESPACE.match(wanted):
        ctx.fidelity.approximated(
            f"namespace {wanted}",
            "not a valid namespace name (a template placeholder?); the default namespace is used",
        )
        wanted = None
    ctx.namespace = wanted or ctx.site.default_namespace


def decide(ctx: Context, volumes: list[Volume]) -> JobPolicy:
    policy = JobPolicy()
    _time(ctx, policy)
    _failure(ctx, policy)
    _placement(ctx, policy)
    _io(ctx, policy, volumes)
    _mail(ctx)
    _dependencies(ctx, policy)
    _identity(ctx, policy)
    return policy


def serves_until_deleted(ctx: Context) -> bool:
    """A LeaderWorkerSet: it has no deadline, no suspend, and recreates a group that fails."""
    return ctx.native is not None and ctx.native.target == LWS


def _time(ctx: Context, policy: JobPolicy) -> None:
    job = ctx.job
    line = ctx.line_of("time")
    limit = ctx.allocation.time_limit_s if ctx.allocation is not None else None
    if job.time_limit_s:
        item = ctx.option("time", sbatch_options.format_time(job.time_limit_s))
        why = ""
        if limit is not None and limit.source == Source.SITE_DEFAULT:  # the partition's, not the script's
            item = item if ctx.given("time") else "(no --time)"
            why = f" ({limit.detail})"
        if serves_until_deleted(ctx):
            ctx.fidelity.approximated(
                item,
                f"no time limit: the LeaderWorkerSet serves until it is deleted; Slurm stopped the server "
                f"after {sbatch_options.format_time(job.time_limit_s)}{why}",
                line,
            )
        elif ctx.flavor == KUEUE:
            policy.labels["kueue.x-k8s.io/max-exec-time-seconds"] = str(job.time_limit_s)
            ctx.fidelity.mapped(
                item, f"Kueue maximum execution time (label max-exec-time-seconds){why}", line
            )
        else:
            policy.active_deadline = job.time_limit_s
            ctx.fidelity.mapped(item, f"activeDeadlineSeconds: {job.time_limit_s}{why}", line)
    elif line is not None:
        ctx.fidelity.mapped(ctx.option("time", "UNLIMITED"), "no deadline", line)
    if job.time_min_s:
        ctx.fidelity.dropped(
            ctx.option("time-min", sbatch_options.format_time(job.time_min_s)),
            "no backfill with a shrinking time limit",
            ctx.line_of("time-min"),
        )
    if job.deadline:
        ctx.fidelity.dropped(
            ctx.option("deadline", job.deadline),
            "no start-by deadline; activeDeadlineSeconds only bounds the run time",
            ctx.line_of("deadline"),
        )
    if job.begin and ctx.flavor != CRONJOB:
        ctx.fidelity.dropped(
            ctx.option("begin", job.begin),
            "no delayed start for a Job; apply the manifest at that time (or a CronJob when "
            "the script resubmits itself)",
            ctx.line_of("begin"),
        )
    if job.hold:
        item = ctx.option("hold")
        if ctx.flavor == VOLCANO or serves_until_deleted(ctx):
            kind = "a LeaderWorkerSet" if serves_until_deleted(ctx) else "a Volcano Job"
            ctx.fidelity.approximated(
                item, f"{kind} has no suspend field: apply it when it may run", ctx.line_of("hold")
            )
        elif ctx.flavor == KUEUE:
            ctx.fidelity.approximated(
                item,
                "Kueue admits suspended jobs itself; hold the Workload "
                "(spec.active: false) to keep it waiting",
                ctx.line_of("hold"),
            )
        else:
            policy.suspend = True
            ctx.fidelity.mapped(
                item, "spec.suspend: true (resume by setting it to false)", ctx.line_of("hold")
            )


def _failure(ctx: Context, policy: JobPolicy) -> None:
    failure = ctx.job.failure
    if failure.max_retries is not None:
        policy.backoff_limit = failure.max_retries
    if failure.requeue is not None and serves_until_deleted(ctx):
        ctx.fidelity.approximated(
            ctx.option("requeue" if failure.requeue else "no-requeue"),
            "the LeaderWorkerSet starts a group again whenever one of its pods fails or is disrupted, "
            "whatever the job said",
            ctx.line_of("requeue" if failure.requeue else "no-requeue"),
        )
    elif failure.requeue is True:
        policy.max_restarts = failure.max_retries if failure.max_retries is not None else 3
        policy.note("podFailurePolicy", "--requeue: " + CHECKPOINT_NOTE)
        ctx.fidelity.mapped(
            ctx.option("requeue"),
            "podFailurePolicy ignores disruptions (node drain, preemption) so the pod is "
            "started again, and script failures fail the job as in Slurm; " + CHECKPOINT_NOTE,
            ctx.line_of("requeue"),
        )
    elif failure.requeue is False:
        policy.ignore_disruptions = False
        ctx.fidelity.mapped(
            ctx.option("no-requeue"),
            "backoffLimit 0 and a disruption fails the job",
            ctx.line_of("no-requeue"),
        )
    if failure.no_kill:
        ctx.fidelity.approximated(
            ctx.option("no-kill"),
            "a lost node restarts that pod (podFailurePolicy Ignore) instead of continuing without it",
            ctx.line_of("no-kill"),
        )
    sig = failure.signal
    if sig is not None:
        policy.grace_period = max(sig.seconds_before, 30)
        policy.note(
            "terminationGracePeriodSeconds",
            f"--signal={sbatch_options.format_signal(sig)}: Kubernetes sends SIGTERM only when the pod "
            f"is deleted; the entrypoint forwards it as SIG{sig.name} and also sends SIG{sig.name} "
            f"{sig.seconds_before}s before the time limit",
        )
        ctx.fidelity.approximated(
            ctx.option("signal", sbatch_options.format_signal(sig)),
            f"the entrypoint sends SIG{sig.name} {sig.seconds_before}s before the time "
            "limit (timed from the pod's start) and on deletion (SIGTERM forwarded); "
            f"terminationGracePeriodSeconds: {policy.grace_period}",
            ctx.line_of("signal"),
        )


def _placement(ctx: Context, policy: JobPolicy) -> None:
    place = ctx.job.placement
    if place.partitions:
        _partition(ctx, policy, place.partitions)
    elif ctx.allocation is not None and ctx.allocation.partition.value and ctx.job.source.format == "slurm":
        _default_partition(ctx, policy, ctx.allocation.partition.value, ctx.allocation.partition.detail)
    if place.account:
        item = ctx.option("account", place.account)
        mapped_ns = ctx.site.namespace_for_account(place.account)
        policy.labels["migrate.io/account"] = dns1123_label(place.account)
        if mapped_ns:
            ctx.fidelity.mapped(item, f"namespace {mapped_ns} (site config)", ctx.line_of("account"))
        else:
            ctx.fidelity.approximated(
                item,
                "label migrate.io/account; no namespace for it in the site config (accounts:)",
                ctx.line_of("account"),
            )
    if place.qos:
        _qos(ctx, policy, place.qos)
    if place.priority is not None:
        ctx.fidelity.dropped(
            ctx.option("priority", place.priority),
            "a numeric Slurm priority has no value to copy; map the QOS to a priority class",
            ctx.line_of("priority"),
        )
    if place.nice is not None:
        ctx.fidelity.dropped(
            ctx.option("nice", str(place.nice)),
            "no relative priority adjustment; use a lower priority class",
            ctx.line_of("nice"),
        )
    for long, value, reason in (
        (
            "reservation",
            place.reservation,
            "no reservations; a tainted node pool with tolerations comes closest",
        ),
        ("nodelist", place.nodelist, "Slurm node names are not Kubernetes node names"),
        ("exclude", place.exclude, "Slurm node names are not Kubernetes node names"),
        ("clusters", place.clusters, "one cluster per manifest; MultiKueue can dispatch between clusters"),
    ):
        if value:
            ctx.fidelity.dropped(ctx.option(long, value), reason, ctx.line_of(long))
    for kv in place.topology:
        long = kv.key if kv.key in sbatch_options.BY_LONG else "switches"
        ctx.fidelity.dropped(
            ctx.option(long, kv.value),
            "network topology needs Kueue topology-aware scheduling with the site's "
            "topology levels (podset-required-topology)",
            ctx.line_of(long),
        )


def _partition(ctx: Context, policy: JobPolicy, partitions: tuple[str, ...]) -> None:
    name = partitions[0]
    item = ctx.option("partition", ",".join(partitions))
    line = ctx.line_of("partition")
    extra = f"; only the first of {len(partitions)} partitions is used" if len(partitions) > 1 else ""
    part = ctx.site.partition(name)
    if ctx.flavor in (KUEUE, VOLCANO):
        queue = part.queue if part is not None and part.queue else dns1123_label(name)
        policy.queue = queue
        what = "LocalQueue" if ctx.flavor == KUEUE else "Volcano queue"
        if ctx.flavor == KUEUE:
            ctx.needs.queues.add(QueueNeed(queue, name, ctx.namespace))
        if part is not None and part.queue:
            (ctx.fidelity.approximated if extra else ctx.fidelity.mapped)(
                item, f"{what} {queue} (site config){extra}", line
            )
        else:
            ctx.fidelity.approximated(
                item, f"{what} {queue} named after the partition; not in the site config{extra}", line
            )
            ctx.diag(
                "TRANSLATE-PARTITION-UNMAPPED",
                f"partition {name!r} has no queue in the site config; queue {queue!r} was assumed",
            )
        return
    if part is not None and part.node_selector:
        selector = ", ".join(f"{k}={v}" for k, v in part.node_selector)
        (ctx.fidelity.approximated if extra else ctx.fidelity.mapped)(
            item, f"node pool {selector} (site config){extra}", line
        )
        return
    policy.labels["migrate.io/partition"] = dns1123_label(name)
    ctx.fidelity.approximated(
        item,
        f"label migrate.io/partition only: no node pool for it in the site config{extra}",
        line,
        loses=f"the nodes of partition {name}: pods may land on any node",
    )
    ctx.diag(
        "TRANSLATE-PARTITION-UNMAPPED",
        f"partition {name!r} has no node selector or queue in the site config; pods may land on any node",
    )


def _default_partition(ctx: Context, policy: JobPolicy, name: str, why: str) -> None:
    """A job that names no partition runs in the site's default one: its queue or node pool."""
    item = "(no --partition)"
    part = ctx.site.partition(name)
    if ctx.flavor in (KUEUE, VOLCANO):
        queue = part.queue if part is not None and part.queue else dns1123_label(name)
        policy.queue = queue
        what = "LocalQueue" if ctx.flavor == KUEUE else "Volcano queue"
        if ctx.flavor == KUEUE:
            ctx.needs.queues.add(QueueNeed(queue, name, ctx.namespace))
        ctx.fidelity.mapped(item, f"{what} {queue} of the default partition {name} ({why})")
        return
    if part is not None and part.node_selector:
        selector = ", ".join(f"{k}={v}" for k, v in part.node_selector)
        ctx.fidelity.mapped(item, f"node pool {selector} of the default partition {name} ({why})")
        return
    ctx.fidelity.approximated(
        item,
        f"the default partition {name} has no node pool in the site config ({why})",
        loses=f"the nodes of partition {name}: pods may land on any node",
    )
    ctx.diag(
        "TRANSLATE-PARTITION-UNMAPPED",
        f"the default partition {name!r} has no node selector or queue in the site config; pods may land on "
        "any node",
    )


def _qos(ctx: Context, policy: JobPolicy, qos: str) -> None:
    item = ctx.option("qos", qos)
    line = ctx.line_of("qos")
    configured = ctx.site.priority_class_for_qos(qos)
    if ctx.flavor == KUEUE:
        name = configured or dns1123_label(qos)
        policy.workload_priority = name
        policy.labels["kueue.x-k8s.io/priority-class"] = name
        ctx.needs.priority_classes.add(name)
        ctx.fidelity.approximated(
            item,
            f"Kueue WorkloadPriorityClass {name}; QOS limits (max jobs, TRES) become ClusterQueue quotas",
            line,
        )
        return
    if configured:
        policy.priority_class = configured
        ctx.fidelity.approximated(
            item, f"priorityClassName {configured} (site config); QOS limits are not carried over", line
        )
        return
    policy.labels["migrate.io/qos"] = dns1123_label(qos)
    ctx.fidelity.approximated(
        item, "label migrate.io/qos only: no PriorityClass for it in the site config (qos:)", line
    )
    ctx.diag(
        "TRANSLATE-QOS-UNMAPPED",
        f"QOS {qos!r} has no PriorityClass in the site config; the pods get the default priority",
    )


def _mounted(path: str, volumes: list[Volume]) -> Volume | None:
    for vol in volumes:
        if path == vol.mount_path or path.startswith(vol.mount_path.rstrip("/") + "/"):
            return vol
    return None


def _io(ctx: Context, policy: JobPolicy, volumes: list[Volume]) -> None:
    io = ctx.job.io
    if io.workdir:
        policy.working_dir = workdir.chdir(ctx, io.workdir, ctx.line_of("chdir"))
    teed = False
    # sbatch opens a relative file in the folder the job starts in: --chdir, else the submit folder
    base = io.workdir or submit_dir.folder(ctx)
    for long, path, env in (("output", io.stdout, POD.STDOUT.name), ("error", io.stderr, POD.STDERR.name)):
        if not path:
            continue
        item = ctx.option(long, path)
        line = ctx.line_of(long)
        full = path if path.startswith("/") or not base else posixpath.join(base, path)
        vol = _mounted(full, volumes) if full.startswith("/") else None
        if ctx.native is not None:
            ctx.fidelity.approximated(
                item,
                "the pod log only (kubectl logs): the pods run the program with no wrapper to tee it",
                line,
            )
        elif vol is not None and full != "/dev/null":
            policy.io_env.append({"name": env, "value": full})
            teed = True
            ctx.fidelity.approximated(
                item,
                f"the pod log, and tee into {full} on the mounted {vol.mount_path} "
                "(%j is the job id the pods see as $SLURM_JOB_ID); a folder that does not exist there fails "
                "the job, as under sbatch",
                line,
            )
        else:
            ctx.fidelity.approximated(
                item, "the pod log only (kubectl logs); the path is not on mounted shared storage", line
            )
    if io.stdin:
        full = io.stdin if io.stdin.startswith("/") or not base else posixpath.join(base, io.stdin)
        item = ctx.option("input", io.stdin)
        if full.startswith("/") and _mounted(full, volumes) is not None:
            policy.io_env.append({"name": POD.STDIN.name, "value": full})
            ctx.fidelity.mapped(item, f"stdin redirected from {full} by the entrypoint", ctx.line_of("input"))
        else:
            ctx.fidelity.dropped(item, "the file is not on mounted shared storage", ctx.line_of("input"))
    _open_mode(ctx, policy, teed)
    export = ctx.job.export
    if export:
        item = ctx.option("export", export)
        word = export.split(",", 1)[0].upper()
        if word in ("NONE", "NIL"):
            ctx.fidelity.mapped(item, "a pod starts with the image's environment only", ctx.line_of("export"))
        else:
            ctx.fidelity.approximated(
                item,
                "listed variables become env entries; the submitter's environment "
                "(ALL) does not exist on Kubernetes",
                ctx.line_of("export"),
            )


def _open_mode(ctx: Context, policy: JobPolicy, teed: bool) -> None:
    """sbatch truncates the output files unless --open-mode=append or slurm.conf JobFileAppend=1 says
    otherwise; the entrypoint does the same (MIGRATE_OPEN_MODE, truncate when unset)."""
    mode = ctx.job.io.open_mode
    if mode:
        item = ctx.option("open-mode", mode)
        line = ctx.line_of("open-mode")
        if not teed:
            ctx.fidelity.dropped(item, "pod logs have no open mode", line)
            return
        policy.io_env.append({"name": POD.OPEN_MODE.name, "value": mode})
        what = "appends to" if mode == "append" else "truncates"
        ctx.fidelity.mapped(item, f"the entrypoint {what} the output files when the job starts", line)
        return
    where = ctx.site.config.job_file_append if ctx.site.config else None
    if teed and where:
        policy.io_env.append({"name": POD.OPEN_MODE.name, "value": "append"})
        ctx.fidelity.mapped(
            "JobFileAppend=1",
            f"the entrypoint appends to the output files, as the site's slurm.conf asks ({where})",
        )


def _mail(ctx: Context) -> None:
    mail = ctx.job.mail
    if mail is None:
        return
    reason = "no mail on Kubernetes; an event exporter or a notifier can watch the job instead"
    if mail.types:
        ctx.fidelity.dropped(ctx.option("mail-type", ",".join(mail.types)), reason, ctx.line_of("mail-type"))
    if mail.user:
        ctx.fidelity.dropped(ctx.option("mail-user", mail.user), reason, ctx.line_of("mail-user"))


def _dependencies(ctx: Context, policy: JobPolicy) -> None:
    line = ctx.line_of("dependency")
    for dep in ctx.job.dependencies:
        text = sbatch_options.format_dependencies((dep,))
        item = ctx.option("dependency", text)
        dep_line = dep.line or line
        key = ("dependency", dep.type, *dep.targets)
        wait = _DEPENDENCY_WAITS.get(dep.type)
        if wait is None:
            ctx.fidelity.record(
                FidelityStatus.DROPPED, item, f"{dep.type} has no Kubernetes equivalent", dep_line, key=key
            )
            continue
        where = "submit.sh waits (kubectl) for the jobs it depends on before applying this one"
        if dep.type == DependencyType.SINGLETON:
            where = "the translated jobs of this name and account are applied one after the other"
        elif dep.type == DependencyType.AFTERCORR:
            where += ", for the whole array rather than element by element"
        if ctx.flavor == JOBSET:
            where += "; JobSet dependsOn only orders replicated jobs inside one JobSet"
        if dep.any_of:
            where += "; '?' (any of) is treated as all of"
        for target in dep.targets:
            policy.dependencies.append((dep.type, target, dep.delay_s, dep_line))
        ctx.fidelity.record(FidelityStatus.APPROXIMATED, item, where, dep_line, key=key)


_RAW_SPECIAL = ("comment", "extra", "wckey", "uid", "gid")


def _identity(ctx: Context, policy: JobPolicy) -> None:
    job = ctx.job
    if job.name:
        same = job.name == ctx.name
        item = ctx.option("job-name", job.name)
        if same:
            ctx.fidelity.mapped(item, "metadata.name", ctx.line_of("job-name"))
        else:
            ctx.fidelity.approximated(
                item,
                f"metadata.name {ctx.name} (made valid and unique); SLURM_JOB_NAME keeps the original",
                ctx.line_of("job-name"),
            )
    for raw in job.raw:
        long = raw.key.lstrip("-")
        if long not in _RAW_SPECIAL or not raw.origin.startswith("#SBATCH"):
            continue
        item = ctx.option(long, raw.value or None)
        if long in ("comment", "extra"):
            policy.annotations[f"migrate.io/{long}"] = raw.value
            ctx.fidelity.mapped(item, f"annotation migrate.io/{long}", raw.line)
        elif long == "wckey":
            policy.labels["migrate.io/wckey"] = dns1123_label(raw.value)
            ctx.fidelity.approximated(item, "label migrate.io/wckey for cost reports", raw.line)
        elif raw.value.isascii() and raw.value.isdigit():
            key = "runAsUser" if long == "uid" else "runAsGroup"
            policy.security_context[key] = int(raw.value)
            ctx.fidelity.approximated(item, f"securityContext.{key}; the image must allow it", raw.line)
        else:
            ctx.fidelity.dropped(item, "a user or group name needs its numeric id on Kubernetes", raw.line)


__all__ = ["CHECKPOINT_NOTE", "JobPolicy", "decide", "decide_namespace", "serves_until_deleted"]
