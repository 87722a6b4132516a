"""Start a workload's pods, retry and restart them as its controller would, collect what they did."""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import yaml

from . import pod as podmod
from . import workloads
from .model import Attempt, Group, PodPlan, PodRun, RunResult, Workload
from .network import Network

POLL = 0.02
KUEUE_QUEUE = "kueue.x-k8s.io/queue-name"  # the label Kueue admits a suspended workload by


class RunnerError(RuntimeError):
    pass


def why_not() -> str | None:
    """Why pods cannot run here; None when they can."""
    if os.geteuid() != 0:
        return "the pod runner needs root (mount, network and UTS namespaces, chroot)"
    for tool in ("unshare", "chroot", "ip", "mount"):
        if shutil.which(tool) is None:
            return f"the pod runner needs {tool}, which is not installed"
    with open("/proc/filesystems") as fh:
        if "overlay" not in fh.read():
            return "the kernel has no overlay file system, which the pods' image folders use"
    probe = subprocess.run(
        ["unshare", "--mount", "--uts", "--pid", "--fork", "--net", "true"], capture_output=True, timeout=30
    )
    if probe.returncode != 0:
        return f"unshare cannot create namespaces here: {probe.stderr.decode(errors='replace').strip()}"
    return None


@dataclass
class _Running:
    proc: subprocess.Popen[bytes]
    out: IO[bytes]
    err: IO[bytes]
    pod_dir: Path
    plan: PodPlan


@dataclass
class _GroupState:
    group: Group
    started: bool = False
    start_time: float = 0.0
    pending: list[int] = field(default_factory=list)  # positions in group.pods
    not_before: dict[int, float] = field(default_factory=dict)
    succeeded: set[int] = field(default_factory=set)
    failed_indexes: set[int] = field(default_factory=set)
    failures: dict[int, int] = field(default_factory=dict)
    failed: bool = False

    def reset(self) -> None:
        self.started = False
        self.pending = list(range(len(self.group.pods)))
        self.not_before = {}
        self.succeeded, self.failed_indexes, self.failures = set(), set(), {}
        self.failed = False

    @property
    def total_failures(self) -> int:
        return sum(self.failures.values())

    def done(self, running: int) -> bool:
        return self.failed or (not self.pending and running == 0)


class Shared:
    """Storage all pods see: PVCs and hostPaths, each a folder of the test (or a mapping it gives)."""

    def __init__(self, workdir: Path, claims: dict[str, Path], host_paths: dict[str, Path]) -> None:
        self.workdir = workdir
        self.claims = claims
        self.host_paths = host_paths

    def claim(self, name: str) -> Path:
        path = self.claims.get(name) or self.workdir / "pvc" / name
        path.mkdir(parents=True, exist_ok=True)
        return path

    def host_path(self, path: str) -> Path:
        mapped = self.host_paths.get(path) or self.workdir / "hostpath" / path.strip("/")
        mapped.mkdir(parents=True, exist_ok=True)
        return mapped


class PodRunner:
    def __init__(
        self,
        workdir: Path,
        *,
        image_env: dict[str, str] | None = None,
        claims: dict[str, Path] | None = None,
        host_paths: dict[str, Path] | None = None,
        start_delays: dict[int, float] | None = None,
        image_dirs: tuple[str, ...] = (),
        image_files: dict[str, str] | None = None,
        node_binds: dict[str, Path] | None = None,
        timeout: float = 120.0,
        stop_when: Callable[[], bool] | None = None,
    ) -> None:
        self.workdir = Path(workdir)
        self.image_env = {**podmod.DEFAULT_IMAGE_ENV, **(image_env or {})}
        self.shared = Shared(self.workdir, dict(claims or {}), dict(host_paths or {}))
        self.start_delays = dict(start_delays or {})  # node index -> seconds
        self.image_dirs = tuple(str(d) for d in image_dirs)  # host folders the stand-in image has
        self.image_files = tuple(sorted((image_files or {}).items()))  # path -> text, in every pod
        # path in the pod -> host folder, bound writable in every pod (what a node's hostPath would be)
        self.node_binds = tuple(sorted((path, str(folder)) for path, folder in (node_binds or {}).items()))
        self.timeout = timeout
        # A run that is expected to hang ends once this holds (what the test waits to see happened),
        # not at a fixed time that a loaded machine may not reach it by.
        self.stop_when = stop_when

    def run(self, text: str) -> RunResult:
        return self.run_together([text])[0]

    def run_together(self, texts: list[str]) -> list[RunResult]:
        """Several workloads at once, one per text, in one cluster: every pod resolves and reaches
        every other's, as in one namespace. Each ends on its own; the results are in text order."""
        planned = [self._plan(text) for text in texts]
        network = Network()
        try:
            runs = [_Run(self, p[0], p[1], network) for p in planned if not isinstance(p, RunResult)]
            for r in runs:
                r.peers = runs
            finished = iter(_go(self, runs))
            return [p if isinstance(p, RunResult) else next(finished) for p in planned]
        finally:
            network.close()

    def _plan(self, text: str) -> tuple[Workload, dict[tuple[str, str], dict[str, Any]]] | RunResult:
        """The workload of the manifests and their ConfigMaps and Secrets, or the result of one that
        makes no pods (suspended)."""
        docs = [_named(d) for d in yaml.safe_load_all(text) if isinstance(d, dict)]
        kinds = ("ConfigMap", "Secret")
        objects = {(d["kind"], d["metadata"]["name"]): d for d in docs if d.get("kind") in kinds}
        found = [d for d in docs if workloads.is_workload(d)]
        if len(found) != 1:
            raise RunnerError(f"expected one workload in the manifests, found {len(found)}")
        doc = found[0]
        if (doc.get("spec") or {}).get("suspend"):
            if KUEUE_QUEUE not in ((doc.get("metadata") or {}).get("labels") or {}):
                # Nothing unsuspends it: Kubernetes creates no pods, and neither does the runner.
                return RunResult(str(doc.get("kind")), str(doc["metadata"]["name"]), "Suspended", [])
            # Kueue admits a suspended workload of a queue by unsuspending it; the runner has no
            # quota to wait for, so it admits at once (what Kueue does when the queue has room).
            doc = {**doc, "spec": {**doc["spec"], "suspend": False}}
        try:
            return workloads.plan(doc, docs), objects
        except workloads.Unsupported as exc:
            raise RunnerError(str(exc)) from exc


def _named(doc: dict[str, Any]) -> dict[str, Any]:
    """The object as the API server stores it: one created by generateName (kubectl create) gets that
    prefix and five characters of its own (here from the object's text, so that a rerun names it
    the same)."""
    meta = doc.get("metadata") or {}
    if meta.get("name") or not meta.get("generateName"):
        return doc
    suffix = hashlib.sha256(yaml.safe_dump(doc, sort_keys=True).encode()).hexdigest()[:5]
    return {**doc, "metadata": {**meta, "name": f"{meta['generateName']}{suffix}"}}


class _Run:
    def __init__(
        self,
        runner: PodRunner,
        workload: Workload,
        objects: dict[tuple[str, str], dict[str, Any]],
        network: Network,
    ) -> None:
        self.runner = runner
        self.workload = workload
        self.objects = {**objects, **workload.objects}
        self.network = network
        self.states = [_GroupState(g) for g in workload.groups]
        for s in self.states:
            s.reset()
        self.pod_runs: dict[int, PodRun] = {}
        self.netns: dict[int, str] = {}
        for g in workload.groups:
            for p in g.pods:
                p.start_delay = runner.start_delays.get(p.index, 0.0)
                ns, address = network.add_pod()
                self.netns[p.index] = ns
                self.pod_runs[p.index] = PodRun(p, address)
        self.running: dict[int, _Running] = {}
        self.published: list[int] = []  # pods whose DNS records exist, in start order
        self.restarts = 0
        self.peers: list[_Run] = [self]  # the workloads that run beside it (itself included)
        self.status: str | None = None  # once it ended
        self.began = 0.0

    # -- DNS ---------------------------------------------------------------------------------------

    def _hosts_text(self, me: PodPlan) -> str:
        address = self.pod_runs[me.index].address
        own = [*me.dns_names[:1], me.hostname] if me.subdomain else [me.hostname]
        lines = [
            "# Kubernetes-managed hosts file (pod runner).",
            "127.0.0.1\tlocalhost",
            "::1\tlocalhost ip6-localhost ip6-loopback",
            f"{address}\t{' '.join(own)}",
        ]
        for peer in self.peers:
            for index in peer.published:
                other = peer.pod_runs[index]
                names = [
                    n for n in other.plan.dns_names if peer is not self or index != me.index or n not in own
                ]
                if names:
                    lines.append(f"{other.address}\t{' '.join(names)}")
        return "\n".join(lines) + "\n"

    def _publish(self, plan: PodPlan) -> None:
        if plan.index in self.published:
            return
        self.published.append(plan.index)
        for peer in self.peers:
            for index, running in peer.running.items():
                (running.pod_dir / "hosts").write_text(peer._hosts_text(peer.pod_runs[index].plan))

    # -- pods --------------------------------------------------------------------------------------

    def _start(self, state: _GroupState, position: int) -> None:
        plan = state.group.pods[position]
        run = self.pod_runs[plan.index]
        pod_dir = self.runner.workdir / "pods" / f"{plan.name}"
        if pod_dir.exists():  # a retry with restartPolicy Never is a new pod: fresh emptyDirs
            _unmount_below(pod_dir)
            shutil.rmtree(pod_dir, ignore_errors=True)
        if (index_failures := state.failures.get(position)) is not None:
            plan.annotations["batch.kubernetes.io/job-index-failure-count"] = str(index_failures)
        self._publish(plan)
        proc, out, err = podmod.start(
            plan, pod_dir, self.netns[plan.index], self.objects, self.runner.shared, run.address,
            self.runner.image_env, self._hosts_text(plan), self.runner.image_dirs, self.runner.image_files,
            self.runner.node_binds,
        )  # fmt: skip
        self.running[plan.index] = _Running(proc, out, err, pod_dir, plan)

    def _finish(self, index: int, rc: int | None) -> None:
        running = self.running.pop(index)
        running.out.close()
        running.err.close()
        out = (running.pod_dir / "stdout").read_text(errors="replace")
        err = (running.pod_dir / "stderr").read_text(errors="replace")
        self.pod_runs[index].attempts.append(Attempt(rc, out, err, running.plan.name))

    def _kill_all(self) -> None:
        for index, running in list(self.running.items()):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(running.proc.pid, signal.SIGKILL)
            running.proc.wait(timeout=30)
            self._finish(index, None)

    def _state_of(self, plan: PodPlan) -> tuple[_GroupState, int]:
        for s in self.states:
            for position, p in enumerate(s.group.pods):
                if p is plan:
                    return s, position
        raise KeyError(plan.name)

    def _may_start(self, state: _GroupState) -> bool:
        wanted = set(state.group.depends_on)
        if not wanted:
            return True
        ready = [s for s in self.states if s.group.role in wanted]
        return all(s.done(self._running_in(s)) and not s.failed for s in ready)

    def _running_in(self, state: _GroupState) -> int:
        return sum(1 for r in self.running.values() if self._state_of(r.plan)[0] is state)

    def _schedule(self, now: float) -> None:
        for state in self.states:
            if state.failed:
                continue
            if not state.started:
                if not self._may_start(state):
                    continue
                state.started, state.start_time = True, now
            free = state.group.parallelism - self._running_in(state)
            for position in list(state.pending):
                if free <= 0:
                    break
                plan = state.group.pods[position]
                if now < state.start_time + plan.start_delay or now < state.not_before.get(position, 0):
                    continue
                state.pending.remove(position)
                self._start(state, position)
                free -= 1

    def _reap(self) -> list[_GroupState]:
        """Collect ended pods; the groups that failed by it."""
        failed: list[_GroupState] = []
        for index, running in list(self.running.items()):
            rc = running.proc.poll()
            if rc is None:
                continue
            self._finish(index, rc)
            state, position = self._state_of(running.plan)
            if rc == 0:
                state.succeeded.add(position)
                continue
            state.failures[position] = state.failures.get(position, 0) + 1
            used = state.failures[position] if state.group.per_index else state.total_failures
            if used <= state.group.backoff_limit:
                workloads.fresh_names(running.plan)
                state.pending.append(position)
                state.not_before[position] = time.monotonic() + 0.2
            elif state.group.per_index:
                state.failed_indexes.add(position)
            else:
                state.failed = True
                failed.append(state)
        for state in self.states:
            if state.failed_indexes and not state.failed and state.done(self._running_in(state)):
                state.failed = True
                failed.append(state)
        return failed

    def _succeeded(self) -> bool:
        w = self.workload
        if w.success != "all":
            master = next((s for s in self.states if s.group.role == w.success), None)
            if master is not None:
                return len(master.succeeded) == len(master.group.pods)
        return all(len(s.succeeded) == len(s.group.pods) for s in self.states)

    def tick(self) -> str | None:
        """Start, reap, retry or restart pods once; the workload's status once it ended."""
        self._schedule(time.monotonic())
        failed = self._reap()
        if self._succeeded():
            if self.workload.keep_running and self.running:
                return None  # the pods that still run end on their own; the runner's timeout bounds them
            return "Complete"
        if failed:
            if not self.workload.gang or self.restarts >= self.workload.restarts:
                return "Failed"
            self._kill_all()
            self.restarts += 1
            for s in self.states:
                s.reset()
                for p in s.group.pods:
                    workloads.fresh_names(p)
                    for table in (p.labels, p.annotations):
                        if "jobset.sigs.k8s.io/restart-attempt" in table:
                            table["jobset.sigs.k8s.io/restart-attempt"] = str(self.restarts)
            return None
        if all(s.done(self._running_in(s)) for s in self.states) and not self.running:
            return "Failed"  # nothing left to run, and not all succeeded
        return None

    def result(self) -> RunResult:
        pods = [self.pod_runs[i] for i in sorted(self.pod_runs)]
        return RunResult(
            self.workload.kind,
            self.workload.name,
            self.status or "Timeout",
            pods,
            self.restarts,
            time.monotonic() - self.began,
        )


def _go(runner: PodRunner, runs: list[_Run]) -> list[RunResult]:
    """Drive the workloads side by side until each ended (or the runner's timeout); a workload that
    ended has its pods that still run killed, as its controller's cleanup would."""
    began = time.monotonic()
    deadline = began + runner.timeout
    for r in runs:
        r.began = began
    ended: dict[int, float] = {}
    try:
        while len(ended) < len(runs) and time.monotonic() < deadline:
            if runner.stop_when is not None and runner.stop_when():
                break
            for n, r in enumerate(runs):
                if n in ended:
                    continue
                r.status = r.tick()
                if r.status is not None:
                    ended[n] = time.monotonic()
                    r._kill_all()
            if len(ended) < len(runs):
                time.sleep(POLL)
    finally:
        for r in runs:
            r._kill_all()
        for running_dir in (runner.workdir / "pods").glob("*"):
            _unmount_below(running_dir)
    results = [r.result() for r in runs]
    for n, result in enumerate(results):
        result.seconds = ended.get(n, time.monotonic()) - began
    return results


def _unmount_below(path: Path) -> None:
    """Mounts live in the pods' own namespaces; this only guards against leftovers in ours."""
    with open("/proc/self/mounts") as fh:
        points = [line.split()[1] for line in fh]
    for point in sorted((p for p in points if p.startswith(str(path) + "/")), key=len, reverse=True):
        subprocess.run(["umount", "-l", point], capture_output=True, check=False)


__all__ = ["PodRunner", "RunnerError", "why_not"]
