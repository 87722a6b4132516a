"""Read a Kubernetes job history: the output of ``kubectl get jobs -A -o json``.

Each finished Job is one record: it ran from ``status.startTime`` to
``status.completionTime`` (or, when it failed, to the moment its ``Failed``
condition was set), with ``parallelism`` pods (never more than ``completions``)
each holding the GPUs its pod template asks for. What the record keeps for
matching: the Job's name and namespace, its Kueue queue
(``kueue.x-k8s.io/queue-name``), and who created it: the controlling owner
reference (a CronJob, JobSet, RayJob ...) or, when owner references were
stripped from the export, the JobSet label ``jobset.sigs.k8s.io/jobset-name``.

Jobs that never started (suspended by Kueue, still pending) and Jobs still
running when the export was taken are counted, not used; an item that is not a
readable Job is skipped with its reason ("item 7: ...").
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from enum import StrEnum
from typing import Any

from migrate.site.usage_records import (
    AccountingError,
    AccountingFile,
    RunRecord,
    Skipped,
    parse_timestamp,
)
from migrate.vocab import Format, JobKind

QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
JOBSET_LABEL = "jobset.sigs.k8s.io/jobset-name"
CRONJOB_TIMESTAMP = "batch.kubernetes.io/cronjob-scheduled-timestamp"
GROUPING_OWNERS = frozenset(("JobSet", "TrainJob"))  # owners whose several Jobs make one run


class _BadItem(ValueError):
    """One item is unusable; the message is the reason the plan shows."""


def looks_like_kubectl(text: str) -> bool:
    return text.lstrip("\ufeff \t\r\n")[:1] in ("{", "[")


def parse_kubectl_jobs(text: str, path: str) -> AccountingFile:
    try:
        data = json.loads(text.lstrip("\ufeff"))
    except json.JSONDecodeError as exc:
        raise AccountingError(f"{path}: not valid JSON at line {exc.lineno}: {exc.msg}") from None
    except RecursionError:
        raise AccountingError(f"{path}: JSON nested too deeply to read") from None
    items = _items(data, path)
    records: list[RunRecord] = []
    bad: list[Skipped] = []
    not_started = unfinished = 0
    for number, item in enumerate(items, start=1):
        try:
            record = _record(item, path, number)
        except _BadItem as exc:
            bad.append(Skipped(path, number, f"item {number}: {exc}"))
            continue
        if record == "not started":
            not_started += 1
        elif record == "unfinished":
            unfinished += 1
        elif isinstance(record, RunRecord):
            records.append(record)
    return AccountingFile(path, Format.KUBERNETES, tuple(records), tuple(bad), 0, not_started, unfinished)


def _items(data: object, path: str) -> list[Any]:
    if isinstance(data, list):
        return data
    if isinstance(data, dict) and isinstance(data.get("items"), list):
        return list(data["items"])
    if isinstance(data, dict) and data.get("kind") == JobKind.JOB:
        return [data]
    raise AccountingError(
        f"{path}: JSON without an 'items' list of Jobs; export the history with kubectl get jobs -A -o json"
    )


def _record(item: object, path: str, number: int) -> RunRecord | str:
    job = _mapping(item, "not an object")
    kind = job.get("kind", JobKind.JOB)
    if kind != JobKind.JOB:
        raise _BadItem(f"a {kind}, not a Job: only Jobs carry run times")
    meta = _mapping(job.get("metadata", {}), "metadata is not an object")
    name = meta.get("name")
    if not isinstance(name, str) or not name:
        raise _BadItem("no metadata.name")
    namespace = meta.get("namespace") if isinstance(meta.get("namespace"), str) else None
    status = _mapping(job.get("status", {}), "status is not an object")
    start = parse_timestamp(_text(status.get("startTime")))
    if start is None:
        return "not started"
    end, state = _end(status)
    if end is None:
        return "unfinished"
    elapsed = int((end - start).total_seconds())
    if elapsed < 0:
        raise _BadItem(f"ends before it starts ({status.get('startTime')} .. {end.isoformat()})")
    spec = _mapping(job.get("spec", {}), "spec is not an object")
    pod = _mapping(_mapping(spec.get("template", {}), "spec.template is not an object").get("spec", {}), "")
    pods = _count(spec.get("parallelism", 1), "spec.parallelism")
    if spec.get("completions") is not None:
        pods = min(pods, _count(spec.get("completions"), "spec.completions"))
    owner, owner_kind, owner_uid = _owner(meta)
    labels = _strings(meta.get("labels"))
    annotations = _strings(meta.get("annotations"))
    job_id = f"{namespace or '-'}/{name}"
    # The Jobs of one JobSet (one per replicated job) are parts of a single run of it.
    run = f"{namespace or '-'}/{owner}@{owner_uid}" if owner_kind in GROUPING_OWNERS else job_id
    return RunRecord(
        origin=Format.KUBERNETES,
        path=path,
        line=number,
        job_id=job_id,
        run=run,
        name=name,
        account=namespace,
        partition=labels.get(QUEUE_LABEL) or annotations.get(QUEUE_LABEL),
        owner=owner,
        owner_kind=owner_kind or ("CronJob" if CRONJOB_TIMESTAMP in annotations else None),
        state=state,
        start=start,
        end=end,
        elapsed_s=elapsed,
        nodes=0,
        pods=max(1, pods),
        gpus=max(1, pods) * _gpus_per_pod(pod),
        node_selector=tuple(sorted(_strings(pod.get("nodeSelector")).items())),
    )


class JobCondition(StrEnum):
    """The ``type`` of a finished Job's condition."""

    COMPLETE = "Complete"
    FAILED = "Failed"  # DeadlineExceeded among its reasons: Slurm's TIMEOUT


def _end(status: Mapping[str, Any]) -> tuple[datetime | None, str]:
    finished = parse_timestamp(_text(status.get("completionTime")))
    conditions = status.get("conditions")
    for cond in conditions if isinstance(conditions, list) else []:
        if not isinstance(cond, dict) or str(cond.get("status")) != "True":
            continue
        if cond.get("type") == JobCondition.FAILED:
            moment = parse_timestamp(_text(cond.get("lastTransitionTime")))
            state = "TIMEOUT" if cond.get("reason") == "DeadlineExceeded" else "FAILED"
            return finished or moment, state
    return finished, "COMPLETED"


def _owner(meta: Mapping[str, Any]) -> tuple[str | None, str | None, str]:
    """Name, kind and uid of the object that created the Job."""
    refs = meta.get("ownerReferences")
    usable = [r for r in refs if isinstance(r, dict)] if isinstance(refs, list) else []
    # The controller is the object that created the Job; other references are bookkeeping.
    usable.sort(key=lambda r: not r.get("controller", False))
    for ref in usable:
        if isinstance(ref.get("name"), str) and isinstance(ref.get("kind"), str):
            return ref["name"], ref["kind"], str(ref.get("uid", ""))
    jobset = _strings(meta.get("labels")).get(JOBSET_LABEL)
    return (jobset, "JobSet", "") if jobset else (None, None, "")


def _gpus_per_pod(pod: Mapping[str, Any]) -> int:
    total = 0
    containers = pod.get("containers")
    for container in containers if isinstance(containers, list) else []:
        resources = container.get("resources") if isinstance(container, dict) else None
        if not isinstance(resources, dict):
            continue
        # Extended resources must be equal in limits and requests; either one may be written.
        written = {
            **_quantities(resources.get("requests")),
            **_quantities(resources.get("limits")),
        }
        for key, value in written.items():
            if str(key).endswith("/gpu"):
                total += _count(value, f"{key} of container {container.get('name', '?')}")
    return total


def _quantities(value: object) -> dict[str, object]:
    return {str(k): v for k, v in value.items()} if isinstance(value, dict) else {}


def _mapping(value: object, problem: str) -> Mapping[str, Any]:
    if not isinstance(value, dict):
        raise _BadItem(problem or "not an object")
    return value


def _count(value: object, what: str) -> int:
    if isinstance(value, bool):
        raise _BadItem(f"{what} is {value!r}, not a count")
    if isinstance(value, int) and value >= 0:
        return value
    if isinstance(value, str) and value.isdecimal():
        return int(value)
    raise _BadItem(f"{what} is {value!r}, not a count")


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _strings(value: object) -> dict[str, str]:
    if not isinstance(value, dict):
        return {}
    return {str(k): str(v) for k, v in value.items() if isinstance(v, str | int | float | bool)}


__all__ = ["CRONJOB_TIMESTAMP", "JOBSET_LABEL", "QUEUE_LABEL", "looks_like_kubectl", "parse_kubectl_jobs"]
