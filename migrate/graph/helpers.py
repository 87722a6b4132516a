"""Long-running objects that exist for jobs: a rendezvous store, a Ray cluster jobs submit to.

An etcd Deployment named as the ``--rdzv_endpoint`` of elastic training jobs, or a
RayCluster that a RayJob selects (``clusterSelector``) or a script submits to (``ray job
submit --address``), serves those jobs and no one else: it belongs to them. Each link
found here names the job that uses the helper, the helper, and the words that show it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from migrate import ir
from migrate.vocab import JobKind

RENDEZVOUS = "rendezvous store"
RAY_CLUSTER = "Ray cluster"

# Kinds that run until deleted and can be a job's helper.
HELPER_KINDS = frozenset((JobKind.DEPLOYMENT, JobKind.STATEFUL_SET, JobKind.RAY_CLUSTER))

_HOST = r"['\"]?(?:[a-z][a-z0-9+.-]*://)?([A-Za-z0-9][A-Za-z0-9.-]*)"
_RDZV = re.compile(r"--rdzv[_-]endpoint(?:=|\s+)" + _HOST + r"(:\d+)?")
_RAY_SUBMIT = re.compile(r"\bray\s+job\s+submit\b[^\n]*?--address(?:=|\s+)" + _HOST)
_RAY_ADDRESS = re.compile(r"\bRAY_ADDRESS=" + _HOST)
_RAY_CLUSTER_LABEL = "ray.io/cluster"
_RAY_HEAD_SUFFIXES = ("-head-svc", "-head")


@dataclass(frozen=True, slots=True)
class HelperLink:
    user: str  # the job id that uses the helper
    helper: str  # the helper's job id
    role: str  # RENDEZVOUS or RAY_CLUSTER
    path: str  # the user's file and line: where the link is written
    line: int | None
    evidence: str  # what the user says, e.g. "--rdzv_endpoint etcd-svc:2379; elasticPolicy.rdzvHost etcd-svc"


def helper_links(jobs: Iterable[ir.Job]) -> list[HelperLink]:
    """Every (user, helper) pair the jobs show, once each, sorted; a job is never its own helper."""
    jobs = list(jobs)
    by_host: dict[str, list[ir.Job]] = {}
    by_ray_label: dict[str, list[ir.Job]] = {}
    for job in jobs:
        if job.kind not in HELPER_KINDS:
            continue
        for host in _hosts_of(job):
            by_host.setdefault(host, []).append(job)
        if job.kind == JobKind.RAY_CLUSTER:
            for label in {
                job.name or "",
                *(kv.value for kv in job.labels if kv.key == _RAY_CLUSTER_LABEL),
            } - {""}:
                by_ray_label.setdefault(label, []).append(job)
    found: dict[tuple[str, str, str], set[str]] = {}
    where = {job.id: (job.source.path, job.source.line) for job in jobs}
    for job in jobs:
        for role, host, evidence in _references(job):
            table = (
                by_ray_label if role == RAY_CLUSTER and evidence.startswith("clusterSelector") else by_host
            )
            for helper in table.get(_short_host(host), []):
                wanted = JobKind.RAY_CLUSTER if role == RAY_CLUSTER else None
                if helper.id != job.id and (wanted is None or helper.kind == wanted):
                    found.setdefault((helper.id, job.id, role), set()).add(evidence)
    return [
        HelperLink(user, helper, role, *where[user], "; ".join(sorted(evidence)))
        for (helper, user, role), evidence in sorted(found.items())
    ]


def _hosts_of(job: ir.Job) -> set[str]:
    """The host names a helper answers to: its name, its Services, a Ray head's Service."""
    names = {job.name or ""}
    for service in job.services:
        names.add(service.name)
        names.update(service.addresses)
    if job.kind == JobKind.RAY_CLUSTER and job.name:
        names.update(job.name + suffix for suffix in _RAY_HEAD_SUFFIXES)
    return {n.lower() for n in names if n}


def _short_host(host: str) -> str:
    """``etcd-svc.training.svc.cluster.local`` and ``etcd-svc`` are the same Service."""
    return host.lower().split(".", 1)[0]


def _references(job: ir.Job) -> Iterator[tuple[str, str, str]]:
    """(role, host, evidence) for each helper the job names."""
    for item in job.raw:
        if item.key == "rdzvHost" and item.value:
            yield RENDEZVOUS, item.value, f"elasticPolicy.rdzvHost {item.value}"
        if item.key == "clusterSelector" and item.value:
            for value in _selector_values(item.value):
                yield RAY_CLUSTER, value, f"clusterSelector {_RAY_CLUSTER_LABEL}={value}"
        if item.key == "rayClusterOf" and item.value:  # the scan matched the selector's labels to it
            name = item.value.split(" (", 1)[0]
            named = {v for i in job.raw if i.key == "clusterSelector" for v in _selector_values(i.value)}
            if name not in named:  # said once: ray.io/cluster=NAME already names it
                yield RAY_CLUSTER, name, f"clusterSelector matches RayCluster {name}"
    for comp in job.components:
        for launcher in comp.launchers:
            for kv in launcher.options:
                if kv.key.replace("-", "_") == "rdzv_endpoint" and kv.value:
                    host = _host_only(kv.value)
                    yield RENDEZVOUS, host, f"--rdzv_endpoint {kv.value}"
        for env in comp.environment:
            if env.name == "RAY_ADDRESS" and env.value:
                host = _host_only(env.value)
                yield RAY_CLUSTER, host, f"RAY_ADDRESS={env.value}"
    for text in _texts(job):
        for match in _RDZV.finditer(text):
            yield RENDEZVOUS, match.group(1), f"--rdzv_endpoint {match.group(1)}{match.group(2) or ''}"
        for match in _RAY_SUBMIT.finditer(text):
            yield RAY_CLUSTER, match.group(1), f"ray job submit --address {match.group(1)}"
        for match in _RAY_ADDRESS.finditer(text):
            yield RAY_CLUSTER, match.group(1), f"RAY_ADDRESS={match.group(1)}"


def _texts(job: ir.Job) -> Iterator[str]:
    if job.script is not None and job.script.body:
        yield job.script.body
    for comp in job.components:
        for container in comp.containers:
            if container.command or container.args:
                yield " ".join((*container.command, *container.args))


def _host_only(value: str) -> str:
    match = re.match(_HOST, value.strip())
    return match.group(1) if match else value


def _selector_values(text: str) -> list[str]:
    try:
        data = json.loads(text)
    except ValueError:
        return []
    if not isinstance(data, dict):
        return []
    value = data.get(_RAY_CLUSTER_LABEL)
    return [value] if isinstance(value, str) and value else []


__all__ = ["HELPER_KINDS", "RAY_CLUSTER", "RENDEZVOUS", "HelperLink", "helper_links"]
