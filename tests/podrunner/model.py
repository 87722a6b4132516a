"""What the runner plans (pods of a workload) and what it reports (attempts, exit codes, outputs)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class PodPlan:
    """One pod as a controller would create it from a template."""

    name: str
    hostname: str
    namespace: str
    spec: dict[str, Any]
    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)
    subdomain: str | None = None
    role: str = ""  # replicated job, replica type or task
    index: int = 0  # position among the workload's pods (the node index of a translated job)
    completion_index: int | None = None  # Indexed Jobs
    group: str = ""  # pods of one child Job share retries and parallelism
    operator_env: dict[str, str] = field(default_factory=dict)  # env the operator adds
    dns_names: tuple[str, ...] = ()  # names other pods resolve to this pod
    uid: str = ""
    start_delay: float = 0.0  # seconds after its group may start (tests of late peers)
    node: int | None = None  # the node the pod stands for, when not its index (MPIJob Workers)


@dataclass
class Group:
    """Pods that share a child Job's retry budget and parallelism."""

    name: str
    pods: list[PodPlan]
    parallelism: int
    backoff_limit: int
    per_index: bool = False  # backoffLimitPerIndex
    depends_on: tuple[str, ...] = ()  # JobSet dependsOn: groups of these replicated jobs finish first
    role: str = ""


@dataclass
class Workload:
    kind: str
    name: str
    groups: list[Group]
    gang: bool  # a failed group fails (or restarts) the whole workload
    restarts: int = 0  # whole-workload restarts allowed (JobSet maxRestarts, Volcano maxRetry ...)
    success: str = "all"  # all, or the role whose success ends the job (PyTorchJob Master, MPIJob Launcher)
    keep_running: bool = False  # once it succeeded, pods still running run on (cleanPodPolicy None)
    objects: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)  # the operator's


@dataclass
class Attempt:
    rc: int | None  # None: killed by the runner (workload ended or timeout)
    stdout: str
    stderr: str
    pod_name: str


@dataclass
class PodRun:
    plan: PodPlan
    address: str
    attempts: list[Attempt] = field(default_factory=list)

    @property
    def rc(self) -> int | None:
        return self.attempts[-1].rc if self.attempts else None

    @property
    def stdout(self) -> str:
        return self.attempts[-1].stdout if self.attempts else ""

    @property
    def stderr(self) -> str:
        return self.attempts[-1].stderr if self.attempts else ""


@dataclass
class RunResult:
    kind: str
    name: str
    status: str  # Complete | Failed | Timeout | Suspended (suspend: true and no Kueue queue to admit it)
    pods: list[PodRun]
    restarts: int = 0  # whole-workload restarts done
    seconds: float = 0.0

    def pod(self, name: str) -> PodRun:
        return next(p for p in self.pods if p.plan.name == name or p.plan.hostname == name)

    def node_of(self, name: str) -> int:
        """The node index of the pod a host name, FQDN or address names."""
        short = name.split(".")[0]
        for p in self.pods:
            if short == p.plan.hostname or name == p.address or name in p.plan.dns_names:
                return p.plan.index if p.plan.node is None else p.plan.node
        raise KeyError(name)

    def describe(self) -> str:
        lines = [f"{self.kind}/{self.name}: {self.status} after {self.restarts} restart(s)"]
        for p in self.pods:
            for n, a in enumerate(p.attempts):
                lines.append(f"--- pod {a.pod_name} ({p.plan.hostname}) attempt {n}: rc={a.rc}")
                lines.append(a.stdout[-3000:])
                lines.append("--- stderr")
                lines.append(a.stderr[-3000:])
        return "\n".join(lines)
