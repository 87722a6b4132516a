"""Read a Slurm accounting dump: ``sacct --parsable2`` text, fields separated by ``|``, header first.

Any ``--format`` works as long as the header names the job (``JobID`` or
``JobIDRaw``, and ``JobName``); the rest is taken from whichever columns are
there, in this order of preference:

- nodes: ``AllocNodes``, ``NNodes``, then ``node=`` in ``AllocTRES``;
- GPUs: ``gres/gpu`` in ``AllocTRES`` (``ReqTRES`` when there is no AllocTRES);
- run time: ``ElapsedRaw``, ``Elapsed``, ``CPUTimeRAW`` / ``AllocCPUS``, then ``End - Start``.

Only the job's own line counts: step lines (``123.batch``, ``123.extern``,
``123.0``) repeat the same nodes and are left out. Array tasks (``123_4``) and
het-job parts (``123+1``) are allocations of their own, all under one run. The
same job id on several lines (``sacct --duplicates``: requeued jobs, and
scrontab jobs, which keep their id from one run to the next) is one run each.
Every line that cannot be read is skipped with its reason; nothing raises
except a file with no usable header.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from datetime import datetime

from migrate.site.usage_records import (
    SACCT,
    AccountingError,
    AccountingFile,
    RunRecord,
    Skipped,
    parse_timestamp,
)

DELIMITER = "|"
# 123, 123_4, 123_[5-9%2], 123+1, 123.batch, 123_4.0, 123+1.extern
_JOB_ID = re.compile(r"^([0-9]+)(?:_([0-9]+|\[[^\]]*\]))?(?:\+([0-9]+))?(?:\.(.+))?$")
_ELAPSED = re.compile(r"^(?:([0-9]+)-)?(?:([0-9]+):)?([0-9]+):([0-9]+)(?:\.[0-9]+)?$")
_NOT_STARTED = frozenset({"PENDING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED", "RESV_DEL_HOLD"})


class _BadLine(ValueError):
    """One line is unusable; the message is the reason the plan shows."""


def looks_like_sacct(text: str) -> bool:
    header = _first_line(text.split("\n", 50)[:50])  # the first lines only: dumps run to millions
    return header is not None and _is_header(header)


def parse_sacct(text: str, path: str) -> AccountingFile:
    lines = text.splitlines()
    header_text = _first_line(lines)
    if header_text is None or not _is_header(header_text):
        raise AccountingError(
            f"{path}: no sacct header line (JobID|JobName|...); dump it again with "
            "sacct --parsable2 --format=JobID,JobName,Partition,Account,AllocNodes,AllocTRES,"
            "ElapsedRaw,State,Start,End, without --noheader"
        )
    columns = _columns(header_text)
    _require_columns(columns, path)
    records: list[RunRecord] = []
    bad: list[Skipped] = []
    steps = not_started = 0
    seen: Counter[str] = Counter()
    for number, raw in enumerate(lines, start=1):
        line = raw.rstrip("\r")
        if not line.strip():
            continue
        if _is_header(line):  # the first line, or the header of a second dump appended to the first
            columns = _columns(line)
            try:
                _require_columns(columns, path)
            except AccountingError as exc:
                raise AccountingError(f"{exc} (header at line {number})") from None
            continue
        try:
            fields = _fields(line, columns)
            job_id = fields["jobidraw"] if "jobid" not in fields else fields["jobid"]
            shape = _JOB_ID.match(job_id.strip())
            if shape is None:
                raise _BadLine(f"job id {job_id!r} is not a Slurm job id")
            if shape.group(4) is not None:
                steps += 1
                continue
            # The same job id again (sacct --duplicates): a requeue or the next run of a scrontab job.
            again = seen[job_id.strip()]
            run = shape.group(1) if not again else f"{shape.group(1)}#{again}"
            record = _record(fields, run, job_id.strip(), path, number)
            seen[job_id.strip()] += 1
        except _BadLine as exc:
            bad.append(Skipped(path, number, str(exc)))
            continue
        if record is None:
            not_started += 1
        else:
            records.append(record)
    return AccountingFile(path, SACCT, tuple(records), tuple(bad), steps, not_started)


def _first_line(lines: Iterable[str]) -> str | None:
    for line in lines:
        if line.strip():
            return line.strip().lstrip("\ufeff")
    return None


def _is_header(line: str) -> bool:
    first = line.strip().lstrip("\ufeff").split(DELIMITER, 1)[0].strip().lower()
    return first in ("jobid", "jobidraw") and DELIMITER in line


def _columns(header: str) -> list[str]:
    names = [name.strip().lower() for name in header.strip().lstrip("\ufeff").split(DELIMITER)]
    if names and names[-1] == "":  # --parsable (not --parsable2) ends every line with the delimiter
        names.pop()
    return names


def _require_columns(columns: list[str], path: str) -> None:
    missing = [name for name in ("jobname",) if name not in columns]
    if missing:
        raise AccountingError(
            f"{path}: the sacct header has no JobName column, so records cannot be matched to "
            "scripts; add JobName to --format"
        )


def _fields(line: str, columns: list[str]) -> dict[str, str]:
    values = line.split(DELIMITER)
    if len(values) == len(columns) + 1 and values[-1] == "":
        values.pop()
    if len(values) != len(columns):
        raise _BadLine(f"{len(values)} fields where the header has {len(columns)}")
    return dict(zip(columns, values, strict=True))


def _record(fields: Mapping[str, str], run: str, job_id: str, path: str, line: int) -> RunRecord | None:
    """The allocation on this line, or None when it never held nodes."""
    state = (fields.get("state") or "").strip().split(" ", 1)[0].upper() or "UNKNOWN"
    start = parse_timestamp(fields.get("start"))
    end = parse_timestamp(fields.get("end"))
    alloc = _tres(fields.get("alloctres", ""), "AllocTRES")
    elapsed = _elapsed(fields, start, end)
    nodes = _nodes(fields, alloc)
    if state in _NOT_STARTED or elapsed == 0 or nodes == 0:
        return None
    # ReqTRES is what was asked for; it stands in only when the dump has no AllocTRES column.
    tres = alloc if "alloctres" in fields else _tres(fields.get("reqtres", ""), "ReqTRES")
    return RunRecord(
        origin=SACCT,
        path=path,
        line=line,
        job_id=job_id,
        run=run,
        name=fields["jobname"].strip(),
        account=(fields.get("account") or "").strip() or None,
        partition=(fields.get("partition") or "").strip() or None,
        owner=None,
        owner_kind=None,
        state=state,
        start=start,
        end=end,
        elapsed_s=elapsed,
        nodes=nodes,
        pods=0,
        gpus=_gpus(tres),
    )


def _elapsed(fields: Mapping[str, str], start: datetime | None, end: datetime | None) -> int:
    raw = (fields.get("elapsedraw") or "").strip()
    if raw:
        if not raw.isdecimal():
            raise _BadLine(f"ElapsedRaw {raw!r} is not a number of seconds")
        return int(raw)
    text = (fields.get("elapsed") or "").strip()
    if text:
        shape = _ELAPSED.match(text)
        if shape is None:
            raise _BadLine(f"Elapsed {text!r} is not [days-]hours:minutes:seconds")
        days, hours, minutes, seconds = (int(g) if g else 0 for g in shape.groups())
        return ((days * 24 + hours) * 60 + minutes) * 60 + seconds
    cpu_time = (fields.get("cputimeraw") or "").strip()
    cpus = (fields.get("alloccpus") or fields.get("ncpus") or "").strip()
    if cpu_time.isdecimal() and cpus.isdecimal() and int(cpus):
        return int(cpu_time) // int(cpus)
    if start is not None and end is not None:
        return max(0, int((end - start).total_seconds()))
    raise _BadLine("no run time: needs ElapsedRaw, Elapsed, CPUTimeRAW with AllocCPUS, or Start and End")


def _nodes(fields: Mapping[str, str], alloc: Mapping[str, int]) -> int:
    for column, label in (("allocnodes", "AllocNodes"), ("nnodes", "NNodes")):
        text = (fields.get(column) or "").strip()
        if text:
            if not text.isdecimal():
                raise _BadLine(f"{label} {text!r} is not a number")
            return int(text)
    if "node" in alloc:
        return alloc["node"]
    raise _BadLine("no node count: the dump needs AllocNodes, NNodes or node= in AllocTRES")


def _tres(text: str, column: str) -> dict[str, int]:
    """``cpu=192,gres/gpu:h100=8,gres/gpu=8,mem=2000G,node=1`` -> counts; memory and energy are ignored."""
    out: dict[str, int] = {}
    for item in text.strip().split(","):
        key, sep, value = item.partition("=")
        key = key.strip().lower()
        # gres/gpumem and gres/gpuutil (newer Slurm) are not GPU counts
        if not sep or not (key in ("node", "gres/gpu") or key.startswith("gres/gpu:")):
            continue
        if not value.strip().isdecimal():
            raise _BadLine(f"{column} {key}={value!r} is not a number")
        out[key] = int(value)
    return out


def _gpus(tres: Mapping[str, int]) -> int:
    if "gres/gpu" in tres:
        return tres["gres/gpu"]
    # Only typed counts (gres/gpu:h100=8) are present when the site tracks GPU types alone.
    return sum(count for key, count in tres.items() if key.startswith("gres/gpu:"))


__all__ = ["looks_like_sacct", "parse_sacct"]
