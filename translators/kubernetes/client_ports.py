"""Which ports of a long-running workload are there for clients, and whether a Ray cluster serves.

A Ray head listens on Ray's own ports (GCS, dashboard, client server, metrics): a
cluster that declares them runs jobs, it serves nobody. Ray Serve's HTTP port is
for clients only when Serve runs: a RayService's Serve config, or ``serve run`` /
``serve deploy`` in a container's command. The ports are listed per kind in
the workload kinds' declarations (``migrate/workloads.py``: ``own_ports``, ``serve_port``,
``serve_config``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from migrate import ir, workloads

from . import kinds

_SERVE_COMMAND = re.compile(r"\bserve\s+(?:run|deploy)\b")


def serve_command(texts: Iterable[str]) -> bool:
    """Whether a command line or script among ``texts`` starts Ray Serve applications."""
    return any(_SERVE_COMMAND.search(text) for text in texts)


def container_texts(containers: Iterable[ir.Container]) -> Iterable[str]:
    """Each container's command and arguments as one line."""
    for container in containers:
        yield " ".join((*container.command, *container.args))


def for_clients(workload: kinds.WorkloadKind, ports: Iterable[int], serves: bool) -> list[int]:
    """``ports`` without the operator's own (the Serve port counts only when the workload serves)."""
    own = set(workload.own_ports)
    if workload.serve_port is not None and not serves:
        own.add(workload.serve_port)
    return list(dict.fromkeys(port for port in ports if port not in own))


def pod_ports(workload: kinds.WorkloadKind, ports: Iterable[int], serves: bool) -> list[int]:
    """The ports of a workload's pods that clients use: the Serve port first when it serves, as
    Serve listens there whether or not a container declares it."""
    kept = for_clients(workload, ports, serves)
    if serves and workload.serve_port is not None and workload.serve_port not in kept:
        kept.insert(0, workload.serve_port)
    return kept


def by_ir_kind(kind: str) -> kinds.WorkloadKind | None:
    """The table entry of an IR job's kind (for a second pass that has only the job)."""
    return workloads.declared(kind)


def serves(job_ports: Iterable[int], workload: kinds.WorkloadKind) -> bool:
    """Whether a job read earlier serves: the reader keeps the Serve port only when Serve runs."""
    return workload.serve_port is not None and workload.serve_port in set(job_ports)


__all__ = ["by_ir_kind", "container_texts", "for_clients", "pod_ports", "serve_command", "serves"]
