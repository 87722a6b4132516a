"""The sbatch option table and the pure value parsers behind it.

One row per option of the current sbatch manual (Slurm 26.05). The same table
drives the reader (which IR field an option fills), the writer (how to spell a
field back) and the generated conversion matrix (``k8s``: what happens to the
option on Kubernetes). Value parsers are pure functions that raise
``ValueError`` on values sbatch would reject; the ``format_*`` functions are
their inverses for the writer.

Sources checked: SchedMD's ``src/common/slurm_opt.c`` (which options sbatch
accepts, their short letters and argument kinds), the Slurm 25.05, 25.11 and
26.05 release notes for options added since, and ``sbatch --test-only`` on a
local Slurm 22.05 for what the parsers accept (``4GB``, ``1-``, a bare ``%``,
mixed ``,``/``?`` dependencies and unchecked ``--export`` lists all pass).
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum

from migrate import ir
from migrate.site.config import SpankOption
from migrate.site.slurmtime import format_slurm_time, parse_slurm_time
from migrate.vocab import DependencyType, FidelityStatus, GresScope

# Argument kinds, as getopt_long knows them.
NONE = "none"
REQUIRED = "required"
OPTIONAL = "optional"

# Groups of the conversion matrix.
GROUPS = (
    "resources",
    "placement",
    "time",
    "arrays",
    "dependencies",
    "io",
    "mail",
    "accounting",
    "containers",
    "requeue",
    "submission",
)


# ---------------------------------------------------------------------------
# Numbers
# ---------------------------------------------------------------------------

_UINT = re.compile(r"[0-9]+\Z")  # never \d: it also matches digits of other scripts
_SINT = re.compile(r"[+-]?[0-9]+\Z")


def parse_count(text: str) -> int:
    """A positive integer (tasks, CPUs, GPUs...)."""
    if not _UINT.match(text) or int(text) < 1:
        raise ValueError(f"expected a positive integer, got {text!r}")
    return int(text)


def parse_uint(text: str) -> int:
    """A non-negative integer (core-spec, segment...)."""
    if not _UINT.match(text):
        raise ValueError(f"expected a non-negative integer, got {text!r}")
    return int(text)


_NICE_LIMIT = 2**31 - 3  # sbatch: |nice| <= NICE_OFFSET - 3


_LEADING_INT = re.compile(r"\s*([+-]?[0-9]+)")


def leading_int(text: str) -> int:
    """What C's ``strtoll`` reads: the leading integer, 0 when there is none (``abc``, ``5abc``)."""
    m = _LEADING_INT.match(text)
    return int(m.group(1)) if m else 0


def is_integer(text: str) -> bool:
    return bool(_SINT.match(text))


def parse_nice(text: str) -> int:
    """sbatch reads the adjustment with ``strtoll``: ``abc`` is 0 and ``5x`` is 5, both accepted."""
    value = leading_int(text)
    if abs(value) > _NICE_LIMIT:
        raise ValueError(f"nice adjustment {value} is out of range (+/- {_NICE_LIMIT})")
    return value


def parse_priority(text: str) -> str:
    """A non-negative priority or ``TOP``; kept as a string like ``Placement.priority``.

    sbatch reads the number with ``strtoll``, so text that does not start with one is 0.
    """
    if text.upper() == "TOP":
        return "TOP"
    value = leading_int(text)  # as sbatch reads it (strtoll): ``abc`` is 0
    if not 0 <= value < 0xFFFFFFFE:
        raise ValueError(f"expected a priority >= 0 and < 4294967294 or TOP, got {text!r}")
    return str(value)


def parse_bit(text: str) -> int:
    """0 or 1 (``--wait-all-nodes``, ``--oom-kill-step``)."""
    if text not in ("0", "1"):
        raise ValueError(f"expected 0 or 1, got {text!r}")
    return int(text)


def parse_yes_no(text: str) -> bool:
    lowered = text.lower()
    if lowered not in ("yes", "no"):
        raise ValueError(f"expected yes or no, got {text!r}")
    return lowered == "yes"


# ---------------------------------------------------------------------------
# Durations
# ---------------------------------------------------------------------------


def parse_time(text: str) -> int | None:
    """An sbatch duration in seconds; ``None`` for UNLIMITED/INFINITE (``migrate.site.slurmtime``)."""
    return parse_slurm_time(text)


def format_time(seconds: int | None) -> str:
    """The inverse of :func:`parse_time`: ``D-HH:MM:SS`` (``HH:MM:SS`` under a day)."""
    return format_slurm_time(seconds)


def parse_duration(text: str) -> int:
    """A duration that must be finite (``--delay-boot``, switch waits)."""
    seconds = parse_time(text)
    if seconds is None:
        raise ValueError(f"{text!r} must be a finite duration")
    return seconds


# ---------------------------------------------------------------------------
# Dates (--begin, --deadline): validated, then kept verbatim
# ---------------------------------------------------------------------------

_UNITS = r"(?:s|sec|secs|second|seconds|m|min|mins|minute|minutes|h|hour|hours|d|day|days|w|week|weeks)"
_CLOCK = r"[0-9]{1,2}:[0-9]{2}(?::[0-9]{2})?(?:am|pm)?"
_DATE = r"(?:[0-9]{4}-[0-9]{2}-[0-9]{2}|[0-9]{1,2}/[0-9]{1,2}(?:/[0-9]{2,4})?|[0-9]{6}|[0-9]{4})"
_WORDS = r"(?:midnight|noon|elevenses|fika|teatime|today|tomorrow|now)"
_DATE_RE = re.compile(
    rf"(?:now\s*\+\s*[0-9]+\s*{_UNITS}?"
    rf"|{_WORDS}"
    rf"|{_CLOCK}"
    rf"|{_DATE}(?:T[0-9]{{1,2}}(?::[0-9]{{2}}(?::[0-9]{{2}})?)?)?"
    rf"|{_CLOCK}\s+{_DATE})\Z",
    re.IGNORECASE,
)


def parse_date(text: str) -> str:
    """A ``--begin``/``--deadline`` time; kept verbatim as it may be relative."""
    if not _DATE_RE.match(text.strip()):
        raise ValueError(
            f"invalid date/time {text!r}: expected HH:MM[:SS], YYYY-MM-DD[THH:MM[:SS]], MM/DD[/YY], "
            "now+N[units], midnight, noon, fika, teatime, today or tomorrow"
        )
    return text


# ---------------------------------------------------------------------------
# Memory
# ---------------------------------------------------------------------------

_MEMORY = re.compile(r"([0-9]+)(?:([KMGT])B?)?\Z", re.IGNORECASE)  # sbatch takes 4G and 4GB, not 4B
_MIB_PER_UNIT = {"": 1, "M": 1, "G": 1024, "T": 1024 * 1024}


def parse_memory(text: str) -> int:
    """A size in MiB; sbatch's default unit is megabytes, suffixes K, M, G, T."""
    m = _MEMORY.match(text)
    if not m:
        raise ValueError(f"invalid size {text!r}: expected an integer with an optional K, M, G or T suffix")
    number, unit = int(m.group(1)), (m.group(2) or "").upper()
    if unit == "K":
        return -(-number // 1024)  # sbatch rounds kilobytes up to the next megabyte
    return number * _MIB_PER_UNIT[unit]


def format_memory(mib: int) -> str:
    """The inverse of :func:`parse_memory`, with the largest exact unit."""
    if mib < 0:
        raise ValueError("a size cannot be negative")
    if mib and mib % (1024 * 1024) == 0:
        return f"{mib // (1024 * 1024)}T"
    if mib and mib % 1024 == 0:
        return f"{mib // 1024}G"
    return f"{mib}M"


# ---------------------------------------------------------------------------
# Node counts
# ---------------------------------------------------------------------------

_NODE_RANGE = re.compile(r"([0-9]+)(?:-([0-9]+))?(?::([0-9]+))?\Z")


def parse_nodes(text: str) -> tuple[int, int | None]:
    """``min[-max]`` nodes; max is ``None`` when a single count is given.

    The newer size-string form (``1,4,8`` or ``2-16:2``) is reduced to its
    smallest and largest allowed size.
    """
    sizes: list[int] = []
    ranged = False
    for part in text.split(","):
        m = _NODE_RANGE.match(part)
        if not m:
            raise ValueError(f"invalid node count {text!r}: expected min[-max]")
        low = int(m.group(1))
        high = int(m.group(2)) if m.group(2) is not None else low
        step = m.group(3)
        if high < low:
            raise ValueError(f"invalid node count {text!r}: maximum below minimum")
        if step is not None and int(step) < 1:
            raise ValueError(f"invalid node count {text!r}: step must be positive")
        ranged = ranged or m.group(2) is not None
        sizes.extend((low, high))
    low, high = min(sizes), max(sizes)
    if "," not in text and not ranged:
        return low, None
    return low, high


def format_nodes(nodes_min: int, nodes_max: int | None) -> str:
    if nodes_max is None or nodes_max == nodes_min:
        return str(nodes_min)
    return f"{nodes_min}-{nodes_max}"


# ---------------------------------------------------------------------------
# Job arrays
# ---------------------------------------------------------------------------

# One item: N, N-M or N-M:step; each number may be followed by ']' and the item may start with '['
# (the controller strips them item by item, so ``[0-2]``, ``[1,3,5]`` and ``0-2,[3]`` are all taken).
_ARRAY_ITEM = re.compile(r"\[?([0-9]+)\]?(?:-([0-9]+)\]?(?::([0-9]+)\]?)?)?\Z")
MAX_ARRAY_INDEX = 4_000_000  # Slurm's hard ceiling for MaxArraySize
EXPAND_LIMIT = 10_000  # larger arrays keep only their count


def parse_array(text: str) -> ir.ArraySpec:
    """``--array=0-99:4%10``, ``1,3,7,42``, ``[0-15]%4``...

    As the controller reads it (checked with ``sbatch --test-only``): items are split on
    commas and empty ones skipped; an item may be bracketed; the ``%limit`` is read like C's
    ``atoi``, so a limit that is not a number (``%x``) is no limit.
    """
    spec, pct, limit = text.partition("%")
    max_concurrent: int | None = None
    if pct:
        number = leading_int(limit)
        max_concurrent = number if number > 0 else None  # a bare or non-numeric % is no limit
    ranges: list[range] = []
    for item in spec.split(","):
        if not item:
            continue
        m = _ARRAY_ITEM.match(item)
        if not m:
            raise ValueError(f"invalid array {text!r}: {item!r} is not N, N-M or N-M:step")
        first = int(m.group(1))
        last = int(m.group(2)) if m.group(2) is not None else first
        step = int(m.group(3)) if m.group(3) is not None else 1
        if last < first or step < 1 or last > MAX_ARRAY_INDEX:
            raise ValueError(f"invalid array {text!r}: bad range {item!r}")
        ranges.append(range(first, last + 1, step))
    if not ranges:
        raise ValueError(f"invalid array {text!r}: no index")
    total = sum(len(r) for r in ranges)
    indices: tuple[int, ...] = ()
    count = total
    if total <= EXPAND_LIMIT:
        indices = tuple(sorted({i for r in ranges for i in r}))
        count = len(indices)
    return ir.ArraySpec(spec=text, indices=indices, count=count, max_concurrent=max_concurrent)


# ---------------------------------------------------------------------------
# Dependencies
# ---------------------------------------------------------------------------

# The types sbatch takes with targets (singleton takes none; dependsOn is the manifests' own).
DEPENDENCY_TYPES = frozenset(DependencyType) - {DependencyType.SINGLETON, DependencyType.DEPENDS_ON}
_DEP_TARGET = re.compile(r"(?:[0-9]+(?:_[0-9]+)?|\$[A-Za-z_][A-Za-z0-9_]*|\$\{[A-Za-z_][A-Za-z0-9_]*\})\Z")


def parse_dependency(text: str) -> tuple[ir.Dependency, ...]:
    """``afterok:1:2?afterany:3``, ``after:5+10``, ``singleton``...

    ``,`` joins conditions that must all hold, ``?`` conditions of which one
    is enough; as in sbatch, one ``?`` makes the whole list "any of". Targets
    are job ids, array task ids (``12_3``) or shell variables from wrapper
    scripts; ``+minutes`` delays a target.
    """
    any_of = "?" in text
    out: list[ir.Dependency] = []
    for term in re.split(r"[,?]", text):
        out.extend(_dependency_term(term, text, any_of))
    return tuple(out)


def _dependency_term(term: str, whole: str, any_of: bool) -> list[ir.Dependency]:
    if term.lower() == DependencyType.SINGLETON:
        return [ir.Dependency(type=DependencyType.SINGLETON, any_of=any_of)]
    kind, colon, rest = term.partition(":")
    if not colon:
        if _DEP_TARGET.match(term):  # a bare job id means afterany
            return [ir.Dependency(type=DependencyType.AFTERANY, targets=(term,), any_of=any_of)]
        raise ValueError(f"invalid dependency {whole!r}: {term!r} is not type:jobid")
    kind = kind.lower()
    if kind not in DEPENDENCY_TYPES:
        raise ValueError(f"invalid dependency {whole!r}: unknown type {kind!r}")
    by_delay: dict[int | None, list[str]] = {}
    for target in rest.split(":"):
        job, plus, delay = target.partition("+")
        if not _DEP_TARGET.match(job):
            raise ValueError(f"invalid dependency {whole!r}: {job!r} is not a job id")
        if plus and not _UINT.match(delay):
            raise ValueError(f"invalid dependency {whole!r}: {delay!r} is not a number of minutes")
        by_delay.setdefault(int(delay) * 60 if plus else None, []).append(job)
    return [
        ir.Dependency(type=DependencyType(kind), targets=tuple(jobs), delay_s=delay_s, any_of=any_of)
        for delay_s, jobs in by_delay.items()
    ]


def format_dependencies(deps: tuple[ir.Dependency, ...]) -> str:
    """The inverse of :func:`parse_dependency`."""
    terms: list[str] = []
    for dep in deps:
        if dep.type == DependencyType.SINGLETON:
            terms.append(DependencyType.SINGLETON)
            continue
        delay = f"+{dep.delay_s // 60}" if dep.delay_s else ""
        terms.append(dep.type + "".join(f":{t}{delay}" for t in dep.targets))
    sep = "?" if any(d.any_of for d in deps) else ","
    return sep.join(terms)


# ---------------------------------------------------------------------------
# Signals
# ---------------------------------------------------------------------------

# Linux numbering, so that numeric specs read the same as named ones.
SIGNAL_NUMBERS = {
    1: "HUP", 2: "INT", 3: "QUIT", 4: "ILL", 5: "TRAP", 6: "ABRT", 7: "BUS", 8: "FPE", 9: "KILL",
    10: "USR1", 11: "SEGV", 12: "USR2", 13: "PIPE", 14: "ALRM", 15: "TERM", 16: "STKFLT",
    17: "CHLD", 18: "CONT", 19: "STOP", 20: "TSTP", 21: "TTIN", 22: "TTOU", 23: "URG",
    24: "XCPU", 25: "XFSZ", 26: "VTALRM", 27: "PROF", 28: "WINCH", 29: "IO", 30: "PWR", 31: "SYS",
}  # fmt: skip
SIGNAL_NAMES = frozenset(SIGNAL_NUMBERS.values()) | {"IOT", "POLL", "CLD"}
_SIGNAL = re.compile(r"(?:(?P<flags>[RB]{1,2}):)?(?P<sig>[A-Za-z0-9]+)(?:@(?P<time>[0-9]+))?\Z")
SIGNAL_DEFAULT_SECONDS = 60


def parse_signal(text: str) -> ir.Signal:
    """``[{R|B}:]<sig_num|sig_name>[@sig_time]``; the time defaults to 60 s."""
    m = _SIGNAL.match(text)
    if not m:
        raise ValueError(f"invalid signal {text!r}: expected [{{R|B}}:]SIG[@seconds]")
    flags = m.group("flags") or ""
    sig = m.group("sig").upper()
    if sig.isascii() and sig.isdigit():
        number = int(sig)
        if number < 1:  # sbatch takes any positive number (65, 999 ...); the kernel refuses it later
            raise ValueError(f"invalid signal number {number}")
        name = SIGNAL_NUMBERS.get(number, str(number))
    else:
        name = sig[3:] if sig.startswith("SIG") else sig
        if name not in SIGNAL_NAMES:
            raise ValueError(f"unknown signal {m.group('sig')!r}")
    seconds = SIGNAL_DEFAULT_SECONDS
    if m.group("time") is not None:
        seconds = int(m.group("time"))
        if seconds > 0xFFFF:
            raise ValueError(f"signal time {seconds} is over 65535 seconds")
    return ir.Signal(name=name, seconds_before=seconds, batch_only="B" in flags, reservation_too="R" in flags)


def format_signal(signal: ir.Signal) -> str:
    flags = ("R" if signal.reservation_too else "") + ("B" if signal.batch_only else "")
    prefix = f"{flags}:" if flags else ""
    return f"{prefix}{signal.name}@{signal.seconds_before}"


# ---------------------------------------------------------------------------
# GRES, GPUs, TRES and licenses
# ---------------------------------------------------------------------------

_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_.\-]*\Z")
_GRES_TYPE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]*\Z")
_SCALED = re.compile(r"([0-9]+)([KMGT]?)\Z", re.IGNORECASE)
_SCALE = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4}


def _gres_count(text: str) -> int | None:
    m = _SCALED.match(text)
    if not m:
        return None
    return int(m.group(1)) * _SCALE[m.group(2).upper()]


def parse_gres(text: str) -> tuple[ir.GenericResource, ...]:
    """``gpu:a100:4,nvme:1`` -> per-node generic resources (``none`` -> nothing)."""
    if text.lower() == "none":
        return ()
    if text.lower() in ("help", "list"):
        raise ValueError(f"--gres={text} makes sbatch print the GRES list and exit")
    out: list[ir.GenericResource] = []
    for entry in text.split(","):
        out.append(_gres_entry(entry, text, per=GresScope.NODE))
    return tuple(out)


def _gres_entry(entry: str, whole: str, per: GresScope) -> ir.GenericResource:
    body = entry[5:] if entry.lower().startswith("gres/") else entry
    parts = body.split(":")
    name = parts[0]
    if not _NAME.match(name) or len(parts) > 3:
        raise ValueError(f"invalid GRES {whole!r}: {entry!r} is not name[:type][:count]")
    gres_type: str | None = None
    count = 1
    if len(parts) == 3:
        gres_type, counted = parts[1], _gres_count(parts[2])
        if counted is None:
            raise ValueError(f"invalid GRES {whole!r}: count {parts[2]!r} is not a number")
        count = counted
    elif len(parts) == 2:
        counted = _gres_count(parts[1])
        if counted is None:
            gres_type = parts[1]
        else:
            count = counted
    if gres_type is not None and not _GRES_TYPE.match(gres_type):
        raise ValueError(f"invalid GRES {whole!r}: bad type {gres_type!r}")
    return ir.GenericResource(name=name, count=count, type=gres_type, per=per)


def format_gres(items: tuple[ir.GenericResource, ...]) -> str:
    return ",".join(":".join([g.name, *([g.type] if g.type else []), str(g.count)]) for g in items)


def parse_gpus(text: str) -> tuple[ir.GenericResource, ...]:
    """``--gpus``/``--gpus-per-*``: ``[type:]count[,[type:]count...]``."""
    out: list[ir.GenericResource] = []
    for entry in text.split(","):
        gpu_type, colon, number = entry.rpartition(":")
        if not _UINT.match(number) or (colon and not _GRES_TYPE.match(gpu_type)):
            raise ValueError(f"invalid GPU count {text!r}: expected [type:]count")
        out.append(ir.GenericResource(name="gpu", count=int(number), type=gpu_type or None))
    return tuple(out)


def format_gpus(counts: tuple[tuple[str | None, int], ...], gres: bool = False) -> str:
    """``(("a100", 1), ("v100", 2))`` -> ``a100:1,v100:2`` (``gpu:a100:1,gpu:v100:2`` for --gres);
    an item without a type is its count alone (see ``ir.Resources.gpu_counts``)."""
    prefix = "gpu:" if gres else ""
    return ",".join(f"{prefix}{kind}:{n}" if kind else f"{prefix}{n}" for kind, n in counts)


_TRES_ENTRY = re.compile(
    r"(?P<kind>[A-Za-z]+)(?:/(?P<name>[A-Za-z][A-Za-z0-9_.\-]*))?"
    r"(?::(?P<type>[^=:]+))?[=:](?P<count>[0-9]+[KMGT]?)\Z",
    re.IGNORECASE,
)


def parse_tres(text: str) -> tuple[ir.GenericResource, ...]:
    """``--tres-per-task=cpu=4,gres/gpu:a100=1``: one item per task resource."""
    out: list[ir.GenericResource] = []
    for entry in text.split(","):
        m = _TRES_ENTRY.match(entry)
        if not m:
            raise ValueError(f"invalid TRES {text!r}: {entry!r} is not kind[/name][:type]=count")
        name = m.group("name") or m.group("kind").lower()
        count = _gres_count(m.group("count")) or 0
        out.append(ir.GenericResource(name=name, count=count, type=m.group("type"), per=GresScope.TASK))
    return tuple(out)


_LICENSE = re.compile(r"(?P<name>[A-Za-z0-9_.\-]+(?:@[A-Za-z0-9_.\-]+)?)(?:[:=](?P<count>[0-9]+))?\Z")


def parse_licenses(text: str) -> tuple[ir.GenericResource, ...]:
    """``matlab:2,ansys@flex:1``; ``a|b`` (any one of, since 25.05) is split too."""
    out: list[ir.GenericResource] = []
    for entry in re.split(r"[,|]", text):
        m = _LICENSE.match(entry)
        if not m:
            raise ValueError(f"invalid license list {text!r}: {entry!r} is not name[@server][:count]")
        count = int(m.group("count")) if m.group("count") else 1
        out.append(ir.GenericResource(name=m.group("name"), count=count, per=GresScope.JOB))
    return tuple(out)


# ---------------------------------------------------------------------------
# Lists and keywords
# ---------------------------------------------------------------------------

MAIL_TYPES = frozenset(
    {
        "NONE", "BEGIN", "END", "FAIL", "REQUEUE", "ALL", "INVALID_DEPEND", "STAGE_OUT",
        "TIME_LIMIT", "TIME_LIMIT_90", "TIME_LIMIT_80", "TIME_LIMIT_50", "ARRAY_TASKS",
    }
)  # fmt: skip


def parse_mail_types(text: str) -> tuple[str, ...]:
    """Known mail types; like sbatch, unknown words are skipped unless nothing is left."""
    words = [t.strip().upper() for t in text.split(",")]
    types = tuple(t for t in words if t in MAIL_TYPES)
    if not types:
        raise ValueError(f"invalid mail type {text!r}; expected {', '.join(sorted(MAIL_TYPES))}")
    return types


def unknown_mail_types(text: str) -> tuple[str, ...]:
    """The words of a ``--mail-type`` value that sbatch skips."""
    return tuple(t for t in (w.strip() for w in text.split(",")) if t.upper() not in MAIL_TYPES)


@dataclass(frozen=True)
class ExportSpec:
    """``--export``: the policy word and the listed variables (value None: taken from the submitter)."""

    policy: str  # ALL | NONE | NIL | LIST (only the listed variables)
    variables: tuple[tuple[str, str | None], ...] = ()


def _split_unquoted(text: str, sep: str) -> list[str]:
    """Split on ``sep`` outside single or double quotes."""
    parts: list[str] = []
    current: list[str] = []
    quote = ""
    for ch in text:
        if quote:
            if ch == quote:
                quote = ""
            current.append(ch)
        elif ch in "'\"":
            quote = ch
            current.append(ch)
        elif ch == sep:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    parts.append("".join(current))
    return parts


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def parse_export(text: str) -> ExportSpec:
    """``ALL``, ``NONE``, ``NIL``, ``[ALL,]VAR[=value][,...]``.

    sbatch does not check the list: the first policy word counts, the other
    items are variables, names included as written, and empty items are skipped.
    """
    policy = "LIST"
    variables: list[tuple[str, str | None]] = []
    items = [item for item in _split_unquoted(text, ",") if item]  # sbatch skips empty items
    if not items:
        raise ValueError(f"invalid export list {text!r}: no item")
    for item in items:
        word = item.upper()
        if word in ("ALL", "NONE", "NIL"):
            policy = word if policy == "LIST" else policy
            continue
        name, eq, value = item.partition("=")
        variables.append((name, _unquote(value) if eq else None))
    return ExportSpec(policy=policy, variables=tuple(variables))


def parse_open_mode(text: str) -> str:
    first = text[:1].lower()
    if first == "a":
        return "append"
    if first == "t":
        return "truncate"
    raise ValueError(f"invalid open mode {text!r}: expected append or truncate")


EXCLUSIVE_VALUES = {
    "exclusive": "node",
    "user": "user",
    "mcs": "mcs",
    "topo": "topo",
    "oversubscribe": "oversubscribe",
}


def parse_exclusive(text: str) -> str:
    """``--exclusive[=user|mcs|topo]`` -> node | user | mcs | topo (| oversubscribe)."""
    value = EXCLUSIVE_VALUES.get(text.lower())
    if value is None:
        raise ValueError(f"invalid --exclusive value {text!r}: expected user, mcs or topo")
    return value


def parse_no_kill(text: str) -> bool:
    lowered = text.lower()
    if lowered == "set":
        return True
    if lowered in ("off", "no"):
        return False
    raise ValueError(f"invalid --no-kill value {text!r}: expected off")


def parse_requeue(text: str) -> str:
    if text.lower() != "expedite":
        raise ValueError(f"invalid --requeue value {text!r}: expected expedite")
    return "expedite"


def parse_switches(text: str) -> str:
    """``count[@max-time]``; validated and kept verbatim for the topology hints."""
    count, at, wait = text.partition("@")
    parse_count(count)
    if at:
        parse_duration(wait)
    return text


def _keywords(name: str, allowed: frozenset[str], sep: str = ",") -> Callable[[str], str]:
    def parse(text: str) -> str:
        bad = [w for w in text.split(sep) if w.lower() not in allowed]
        if bad:
            raise ValueError(f"invalid {name} {', '.join(bad)}; expected {', '.join(sorted(allowed))}")
        return text

    return parse


parse_profile = _keywords(
    "profile type", frozenset({"all", "none", "energy", "task", "lustre", "filesystem", "network"})
)
parse_gres_flags = _keywords(
    "--gres-flags",
    frozenset({"disable-binding", "enforce-binding", "multiple-tasks-per-sharing", "one-task-per-sharing"}),
)
parse_hint = _keywords(
    "--hint", frozenset({"compute_bound", "memory_bound", "multithread", "nomultithread", "help"})
)
parse_propagate = _keywords(
    "rlimit",
    frozenset(
        {"all", "none", "as", "core", "cpu", "data", "fsize", "memlock", "nofile", "nproc", "rss", "stack"}
    ),
)

_ACCTG_ITEM = r"(?:task|energy|network|filesystem)=[0-9]+"
_ACCTG = re.compile(rf"(?:[0-9]+|{_ACCTG_ITEM}(?:,{_ACCTG_ITEM})*)\Z")
_CPU_FREQ_WORD = r"(?:[0-9]+|low|medium|high|highm1|conservative|ondemand|performance|powersave|userspace)"
_CPU_FREQ = re.compile(rf"{_CPU_FREQ_WORD}(?:-{_CPU_FREQ_WORD})?(?::{_CPU_FREQ_WORD})?\Z", re.IGNORECASE)
_DIST = re.compile(
    r"(?:\*|block|cyclic|arbitrary|plane=[0-9]+)(?::(?:\*|block|cyclic|fcyclic)){0,2}(?:,(?:pack|nopack))?\Z",
    re.IGNORECASE,
)
_SOCKETS = re.compile(r"(?:\*|[0-9]+(?:-[0-9]+)?)(?::(?:\*|[0-9]+(?:-[0-9]+)?)){0,2}\Z")
_USER_ENV = re.compile(r"[0-9]*[SsLl]?\Z")


def _matching(name: str, pattern: re.Pattern[str]) -> Callable[[str], str]:
    def parse(text: str) -> str:
        if not pattern.match(text):
            raise ValueError(f"invalid {name} {text!r}")
        return text

    return parse


def parse_string(text: str) -> str:
    """Any non-empty string, kept verbatim."""
    if not text:
        raise ValueError("an empty value")
    return text


def parse_list(text: str) -> tuple[str, ...]:
    """A comma-separated list (partitions)."""
    items = tuple(text.split(","))
    if not all(items):
        raise ValueError(f"invalid list {text!r}: empty item")
    return items


def parse_flag(text: str) -> bool:
    """Options without a value; the reader never passes one here."""
    raise ValueError(f"takes no value, got {text!r}")


class OptionKind(StrEnum):
    """The syntax of an option's value; the conversion matrix names it."""

    FLAG = "flag"
    COUNT = "count"
    UINT = "uint"
    NICE = "nice"
    PRIORITY = "priority"
    BIT = "bit"
    YES_NO = "yes-no"
    TIME = "time"
    DURATION = "duration"
    DATE = "date"
    MEMORY = "memory"
    NODES = "nodes"
    ARRAY = "array"
    DEPENDENCY = "dependency"
    SIGNAL = "signal"
    GRES = "gres"
    GPUS = "gpus"
    TRES = "tres"
    LICENSES = "licenses"
    MAIL_TYPES = "mail-types"
    EXPORT = "export"
    OPEN_MODE = "open-mode"
    EXCLUSIVE = "exclusive"
    NO_KILL = "no-kill"
    REQUEUE = "requeue"
    SWITCHES = "switches"
    PROFILE = "profile"
    GRES_FLAGS = "gres-flags"
    HINT = "hint"
    RLIMITS = "rlimits"
    ACCTG_FREQ = "acctg-freq"
    CPU_FREQ = "cpu-freq"
    DISTRIBUTION = "distribution"
    SOCKETS = "sockets"
    USER_ENV = "user-env"
    STRING = "string"
    LIST = "list"


# Value kind -> parser. Kinds name the syntax in the conversion matrix.
VALUE_PARSERS: dict[OptionKind, Callable[[str], object]] = {
    OptionKind.FLAG: parse_flag,
    OptionKind.COUNT: parse_count,
    OptionKind.UINT: parse_uint,
    OptionKind.NICE: parse_nice,
    OptionKind.PRIORITY: parse_priority,
    OptionKind.BIT: parse_bit,
    OptionKind.YES_NO: parse_yes_no,
    OptionKind.TIME: parse_time,
    OptionKind.DURATION: parse_duration,
    OptionKind.DATE: parse_date,
    OptionKind.MEMORY: parse_memory,
    OptionKind.NODES: parse_nodes,
    OptionKind.ARRAY: parse_array,
    OptionKind.DEPENDENCY: parse_dependency,
    OptionKind.SIGNAL: parse_signal,
    OptionKind.GRES: parse_gres,
    OptionKind.GPUS: parse_gpus,
    OptionKind.TRES: parse_tres,
    OptionKind.LICENSES: parse_licenses,
    OptionKind.MAIL_TYPES: parse_mail_types,
    OptionKind.EXPORT: parse_export,
    OptionKind.OPEN_MODE: parse_open_mode,
    OptionKind.EXCLUSIVE: parse_exclusive,
    OptionKind.NO_KILL: parse_no_kill,
    OptionKind.REQUEUE: parse_requeue,
    OptionKind.SWITCHES: parse_switches,
    OptionKind.PROFILE: parse_profile,
    OptionKind.GRES_FLAGS: parse_gres_flags,
    OptionKind.HINT: parse_hint,
    OptionKind.RLIMITS: parse_propagate,
    OptionKind.ACCTG_FREQ: _matching("--acctg-freq", _ACCTG),
    OptionKind.CPU_FREQ: _matching("--cpu-freq", _CPU_FREQ),
    OptionKind.DISTRIBUTION: _matching("--distribution", _DIST),
    OptionKind.SOCKETS: _matching("--extra-node-info", _SOCKETS),
    OptionKind.USER_ENV: _matching("--get-user-env", _USER_ENV),
    OptionKind.STRING: parse_string,
    OptionKind.LIST: parse_list,
}

# Kinds whose values are free text: a templated or $VAR value can still be kept in a typed field.
TEXT_KINDS = frozenset((OptionKind.STRING, OptionKind.LIST, OptionKind.DATE))


# ---------------------------------------------------------------------------
# The table
# ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Outcome:
    """What becomes of an option on Kubernetes, and why."""

    status: FidelityStatus
    reason: str


def _mapped(reason: str) -> Outcome:
    return Outcome(FidelityStatus.MAPPED, reason)


def _approximated(reason: str) -> Outcome:
    return Outcome(FidelityStatus.APPROXIMATED, reason)


def _dropped(reason: str) -> Outcome:
    return Outcome(FidelityStatus.DROPPED, reason)


@dataclass(frozen=True, slots=True)
class Option:
    """One sbatch option.

    ``target`` is a dotted descriptor of the IR field the reader fills
    (``resources.cpus_per_task``, ``placement.qos``, ``job.time_limit_s``...)
    or ``raw`` for a ``RawItem``; ``k8s`` is what happens to it on Kubernetes, and why.
    """

    long: str
    short: str | None
    arg: str
    kind: OptionKind
    target: str
    group: str
    k8s: Outcome
    example: str | None = None  # a value sbatch accepts, for tests and docs
    default: object = True  # the value of a NONE option, or of an OPTIONAL one given bare
    accumulate: bool = False  # repeats add up instead of the last one winning
    plugin: str | None = None  # SPANK plugin that adds the option (pyxis, shifter)

    @property
    def parse(self) -> Callable[[str], object]:
        return VALUE_PARSERS[self.kind]

    @property
    def spelling(self) -> str:
        return f"--{self.long}"


def _o(
    long: str,
    short: str | None,
    arg: str,
    kind: str,
    target: str,
    group: str,
    example: str | None,
    k8s: Outcome,
    *,
    default: object = True,
    accumulate: bool = False,
    plugin: str | None = None,
) -> Option:
    value_kind = OptionKind(kind)  # the table spells it; a misspelling fails at import
    return Option(long, short, arg, value_kind, target, group, k8s, example, default, accumulate, plugin)


REQ, OPT, NO = REQUIRED, OPTIONAL, NONE

# fmt: off
OPTIONS: tuple[Option, ...] = (
    # --- resources -------------------------------------------------------------
    _o("nodes", "N", REQ, "nodes", "resources.nodes", "resources", "2-4",
       _mapped("pod count (parallelism/replicas); a min-max range is only approximated by elastic training")),
    _o("ntasks", "n", REQ, "count", "resources.tasks", "resources", "16",
       _mapped("total ranks, split into pods x processes per pod")),
    _o("ntasks-per-node", None, REQ, "count", "resources.tasks_per_node", "resources", "8",
       _mapped("processes per pod (nproc_per_node, slotsPerWorker)")),
    _o("ntasks-per-core", None, REQ, "count", "raw", "resources", "1",
       _dropped("no per-core task placement")),
    _o("ntasks-per-socket", None, REQ, "count", "raw", "resources", "4",
       _dropped("no per-socket placement (topology manager is node policy)")),
    _o("ntasks-per-gpu", None, REQ, "count", "resources.tasks_per_gpu", "resources", "1",
       _mapped("the task count: this many per GPU the job asks (per pod: per GPU of its node), as "
               "sbatch derives it; with --ntasks, the GPUs from the tasks")),
    _o("ntasks-per-tres", None, REQ, "count", "raw", "resources", "1",
       _approximated("like --ntasks-per-gpu, for any TRES (undocumented alias)")),
    _o("cpus-per-task", "c", REQ, "count", "resources.cpus_per_task", "resources", "8",
       _mapped("cpu request = cpus-per-task x tasks per pod")),
    _o("mincpus", None, REQ, "count", "resources.cpus_per_node", "resources", "16",
       _approximated("a per-pod cpu request")),
    _o("cpus-per-gpu", None, REQ, "count", "resources.cpus_per_gpu", "resources", "12",
       _mapped("cpu request = cpus-per-gpu x GPUs per pod")),
    _o("mem", None, REQ, "memory", "resources.mem_per_node_mb", "resources", "64G",
       _mapped("memory request and limit per pod; --mem=0 (whole node) becomes a node-sized request")),
    _o("mem-per-cpu", None, REQ, "memory", "resources.mem_per_cpu_mb", "resources", "4000",
       _mapped("memory = mem-per-cpu x cpus per pod")),
    _o("mem-per-gpu", None, REQ, "memory", "resources.mem_per_gpu_mb", "resources", "80G",
       _mapped("memory = mem-per-gpu x GPUs per pod")),
    _o("mem-update", None, REQ, "string", "raw", "resources", "10@30",
       _dropped("in-place shrinking of the memory limit has no Job equivalent (26.05)")),
    _o("tmp", None, REQ, "memory", "resources.tmp_disk_mb", "resources", "100G",
       _mapped("ephemeral-storage request")),
    _o("gpus", "G", REQ, "gpus", "resources.gpus", "resources", "a100:8",
       _mapped("nvidia.com/gpu spread over the pods; a type is a node selector, several a node affinity")),
    _o("gpus-per-node", None, REQ, "gpus", "resources.gpus_per_node", "resources", "8",
       _mapped("nvidia.com/gpu per pod; a type is a node selector, several a node affinity")),
    _o("gpus-per-task", None, REQ, "gpus", "resources.gpus_per_task", "resources", "1",
       _mapped("nvidia.com/gpu = gpus-per-task x tasks per pod")),
    _o("gpus-per-socket", None, REQ, "gpus", "raw", "resources", "2",
       _approximated("only the per-pod total is kept, socket placement is lost")),
    _o("gres", None, REQ, "gres", "resources.gres", "resources", "gpu:a100:4",
       _mapped("gpu to nvidia.com/gpu, other GRES to extended resources or DRA claims")),
    _o("gres-flags", None, REQ, "gres-flags", "raw", "resources", "enforce-binding",
       _dropped("GRES-to-core binding is node policy (topology manager)")),
    _o("tres-per-task", None, REQ, "tres", "resources.tres_per_task", "resources", "cpu=4,gres/gpu:1",
       _mapped("per-task cpu and GPUs multiplied by tasks per pod")),
    _o("licenses", "L", REQ, "licenses", "resources.licenses", "resources", "matlab:2",
       _approximated("no licenses on Kubernetes; a Kueue quota on a fake resource can count them")),
    _o("exclusive", None, OPT, "exclusive", "resources.exclusive", "resources", "user",
       _approximated("whole-node pods (requests = allocatable) or pod anti-affinity"), default="node"),
    _o("oversubscribe", "s", NO, "flag", "raw", "resources", None,
       _mapped("pods share nodes by default")),
    _o("overcommit", "O", NO, "flag", "raw", "resources", None,
       _dropped("Kubernetes does not overcommit requests")),
    _o("constraint", "C", REQ, "string", "resources.constraint", "resources", "a100&ib",
       _approximated("simple features and AND lists become node selectors or affinity; counts and [a|b] "
       "matching OR have no equivalent")),
    _o("prefer", None, REQ, "string", "raw", "resources", "nvlink",
       _approximated("preferred node affinity")),
    _o("core-spec", "S", REQ, "uint", "raw", "resources", "2",
       _dropped("reserved system cores are kubelet configuration")),
    _o("thread-spec", None, REQ, "uint", "raw", "resources", "2",
       _dropped("reserved system threads are kubelet configuration")),
    _o("cores-per-socket", None, REQ, "count", "raw", "resources", "8",
       _dropped("no socket geometry requests")),
    _o("sockets-per-node", None, REQ, "count", "raw", "resources", "2",
       _dropped("no socket geometry requests")),
    _o("threads-per-core", None, REQ, "count", "raw", "resources", "1",
       _dropped("SMT use is node policy (cpu manager)")),
    _o("extra-node-info", "B", REQ, "sockets", "raw", "resources", "2:8:1",
       _dropped("no socket/core/thread geometry requests")),
    _o("bb", None, REQ, "string", "raw", "resources", "capacity=100G",
       _dropped("no burst buffers; stage through a PVC or an init container")),
    _o("bbf", None, REQ, "string", "raw", "resources", "bb.conf",
       _dropped("no burst buffers; stage through a PVC or an init container")),
    _o("network", None, REQ, "string", "raw", "resources", "unique-channel-per-segment",
       _dropped("interconnect settings are device-plugin or CNI configuration")),
    _o("resources", None, REQ, "string", "raw", "resources", "power",
       _dropped("hierarchical resources have no Kubernetes equivalent")),
    # --- placement -------------------------------------------------------------
    _o("partition", "p", REQ, "list", "placement.partitions", "placement", "gpu",
       _mapped("LocalQueue / ClusterQueue (Kueue) or a node pool selector")),
    _o("qos", "q", REQ, "string", "placement.qos", "placement", "high",
       _approximated("ClusterQueue limits and WorkloadPriorityClass")),
    _o("priority", None, REQ, "priority", "placement.priority", "placement", "100",
       _approximated("PriorityClass / WorkloadPriorityClass")),
    _o("nice", None, OPT, "nice", "placement.nice", "placement", "10",
       _approximated("a lower PriorityClass"), default=100),
    _o("account", "A", REQ, "string", "placement.account", "placement", "proj123",
       _approximated("namespace or a cost-center label")),
    _o("reservation", None, REQ, "string", "placement.reservation", "placement", "maint",
       _dropped("no reservations; a tainted node pool with tolerations comes closest")),
    _o("nodelist", "w", REQ, "string", "placement.nodelist", "placement", "node[01-04]",
       _approximated("required node affinity on hostnames")),
    _o("nodefile", "F", REQ, "string", "raw", "placement", "hosts.txt",
       _approximated("the host file must be read and turned into node affinity")),
    _o("exclude", "x", REQ, "string", "placement.exclude", "placement", "node07",
       _approximated("node affinity with NotIn on hostnames")),
    _o("clusters", "M", REQ, "string", "placement.clusters", "placement", "east,west",
       _approximated("MultiKueue dispatch to worker clusters")),
    _o("cluster-constraint", None, REQ, "string", "raw", "placement", "gpu",
       _dropped("federation features have no equivalent")),
    _o("switches", None, REQ, "switches", "placement.topology", "placement", "1@01:00:00",
       _approximated("Kueue topology-aware scheduling or JobSet exclusive topology")),
    _o("segment", None, REQ, "count", "placement.topology", "placement", "4",
       _approximated("Kueue topology-aware slices (podset slice size)")),
    _o("spread-segments", None, NO, "flag", "placement.topology", "placement", None,
       _approximated("Kueue topology-aware scheduling")),
    _o("consolidate-segments", None, NO, "flag", "placement.topology", "placement", None,
       _approximated("Kueue topology-aware scheduling (required topology)")),
    _o("contiguous", None, NO, "flag", "placement.topology", "placement", None,
       _dropped("nodes have no order on Kubernetes")),
    _o("spread-job", None, NO, "flag", "raw", "placement", None,
       _dropped("the pod count is set when the job is written (the nodes it asks, else one pod); Slurm "
                "spreads the tasks over as many nodes as are free when it starts")),
    _o("use-min-nodes", None, NO, "flag", "raw", "placement", None,
       _dropped("the pod count is fixed at submit time")),
    _o("distribution", "m", REQ, "distribution", "raw", "placement", "block:cyclic",
       _dropped("a step-level (srun) setting with no pod equivalent; kept for the Slurm side")),
    _o("hint", None, REQ, "hint", "raw", "placement", "nomultithread",
       _dropped("CPU pinning is kubelet policy (cpu manager)")),
    _o("mem-bind", None, REQ, "string", "raw", "placement", "local",
       _dropped("NUMA binding is kubelet policy (memory/topology manager)")),
    _o("gpu-bind", None, REQ, "string", "raw", "placement", "closest",
       _dropped("GPU-CPU affinity is topology manager policy")),
    _o("tres-bind", None, REQ, "string", "raw", "placement", "gres/gpu:closest",
       _dropped("GPU-CPU affinity is topology manager policy")),
    _o("cpu-freq", None, REQ, "cpu-freq", "raw", "placement", "high",
       _dropped("CPU frequency is node configuration")),
    _o("gpu-freq", None, REQ, "string", "raw", "placement", "high",
       _dropped("GPU clocks are node configuration")),
    _o("reboot", None, NO, "flag", "raw", "placement", None,
       _dropped("pods cannot reboot nodes")),
    _o("delay-boot", None, REQ, "duration", "raw", "placement", "10",
       _dropped("pods cannot reboot nodes")),
    _o("mcs-label", None, REQ, "string", "raw", "placement", "group1",
       _approximated("namespace isolation")),
    # --- time ------------------------------------------------------------------
    _o("time", "t", REQ, "time", "job.time_limit_s", "time", "2-00:00:00",
       _mapped("activeDeadlineSeconds (or Kueue maximum execution time)")),
    _o("time-min", None, REQ, "time", "job.time_min_s", "time", "12:00:00",
       _dropped("no backfill with a shrinking limit")),
    _o("begin", "b", REQ, "date", "job.begin", "time", "now+1hour",
       _approximated("created suspended and resumed at that time by the tool or a CronJob")),
    _o("deadline", None, REQ, "date", "job.deadline", "time", "2026-12-01T08:00:00",
       _dropped("no start-by deadline; activeDeadlineSeconds only bounds run time")),
    _o("hold", "H", NO, "flag", "job.hold", "time", None,
       _mapped("spec.suspend: true")),
    # --- arrays ----------------------------------------------------------------
    _o("array", "a", REQ, "array", "job.array", "arrays", "0-99:4%10",
       _mapped("Indexed Job (completions, parallelism = %limit); sparse or stepped indices are remapped "
       "through a lookup table")),
    # --- dependencies ----------------------------------------------------------
    _o("dependency", "d", REQ, "dependency", "job.dependencies", "dependencies", "afterok:123:124",
       _approximated("JobSet dependsOn, Volcano JobFlow or Argo; aftercorr and singleton have no "
       "equivalent")),
    _o("kill-on-invalid-dep", None, REQ, "yes-no", "raw", "dependencies", "yes",
       _dropped("belongs to the workflow engine that replaces dependencies")),
    # --- io --------------------------------------------------------------------
    _o("chdir", "D", REQ, "string", "io.workdir", "io", "/scratch/run1",
       _mapped("workingDir")),
    _o("output", "o", REQ, "string", "io.stdout", "io", "%x-%j.out",
       _approximated("stdout goes to the pod log; tee to a volume to keep the file")),
    _o("error", "e", REQ, "string", "io.stderr", "io", "%x-%j.err",
       _approximated("stderr goes to the pod log; tee to a volume to keep the file")),
    _o("input", "i", REQ, "string", "io.stdin", "io", "input.txt",
       _approximated("stdin redirected from a mounted file in the command")),
    _o("open-mode", None, REQ, "open-mode", "io.open_mode", "io", "append",
       _dropped("pod logs are always appended per container run")),
    _o("export", None, REQ, "export", "job.export", "io", "ALL,OMP_NUM_THREADS=8",
       _approximated("listed variables become env entries; the submitter's environment (ALL) does not "
       "exist on Kubernetes")),
    _o("export-file", None, REQ, "string", "raw", "io", "env.list",
       _approximated("a ConfigMap with the file's variables as envFrom")),
    _o("get-user-env", None, OPT, "user-env", "raw", "io", "10L",
       _dropped("there is no login environment in a container"), default=""),
    _o("propagate", None, OPT, "rlimits", "raw", "io", "STACK,NOFILE",
       _dropped("resource limits of the submit shell do not exist on Kubernetes"), default="ALL"),
    # --- mail ------------------------------------------------------------------
    _o("mail-type", None, REQ, "mail-types", "mail.types", "mail", "END,FAIL",
       _dropped("no mail; an event exporter or a notifier sidecar can send it"), accumulate=True),
    _o("mail-user", None, REQ, "string", "mail.user", "mail", "me@example.org",
       _dropped("no mail; an event exporter or a notifier sidecar can send it")),
    # --- accounting ------------------------------------------------------------
    _o("job-name", "J", REQ, "string", "job.name", "accounting", "train-llm",
       _mapped("metadata.name (sanitised)")),
    _o("comment", None, REQ, "string", "raw", "accounting", "exp 42",
       _mapped("an annotation")),
    _o("wckey", None, REQ, "string", "raw", "accounting", "projA",
       _approximated("a label for cost reports")),
    _o("extra", None, REQ, "string", "raw", "accounting", "color=blue",
       _mapped("an annotation")),
    _o("acctg-freq", None, REQ, "acctg-freq", "raw", "accounting", "task=30",
       _dropped("metrics sampling is the monitoring stack's")),
    _o("profile", None, REQ, "profile", "raw", "accounting", "task,energy",
       _dropped("profiling is the monitoring stack's (DCGM, node exporter)")),
    _o("uid", None, REQ, "string", "raw", "accounting", "1000",
       _approximated("securityContext.runAsUser")),
    _o("gid", None, REQ, "string", "raw", "accounting", "1000",
       _approximated("securityContext.runAsGroup")),
    _o("context", None, REQ, "string", "raw", "accounting", "unconfined_u:unconfined_r:unconfined_t",
       _approximated("securityContext.seLinuxOptions")),
    # --- containers ------------------------------------------------------------
    _o("container", None, REQ, "string", "container.oci_bundle", "containers", "/bundles/ubuntu",
       _approximated("an OCI bundle directory must be pushed as an image first")),
    _o("container-id", None, REQ, "string", "raw", "containers", "run42",
       _dropped("container names are generated by Kubernetes")),
    # --- requeue ---------------------------------------------------------------
    _o("requeue", None, OPT, "requeue", "failure.requeue", "requeue", "expedite",
       _approximated("backoffLimit / podFailurePolicy restart on node failure"), default="requeue"),
    _o("no-requeue", None, NO, "flag", "failure.no_requeue", "requeue", None,
       _mapped("backoffLimit: 0")),
    _o("signal", None, REQ, "signal", "failure.signal", "requeue", "B:USR1@300",
       _approximated("only SIGTERM at termination plus terminationGracePeriodSeconds; no warning before "
       "the time limit")),
    _o("no-kill", "k", OPT, "no-kill", "failure.no_kill", "requeue", "off",
       _approximated("podFailurePolicy Ignore on node failure")),
    _o("oom-kill-step", None, OPT, "bit", "raw", "requeue", "1",
       _mapped("an OOM kills the container, as on Kubernetes"), default=1),
    # --- submission ------------------------------------------------------------
    _o("parsable", None, NO, "flag", "raw", "submission", None,
       _dropped("output format of sbatch itself")),
    _o("wait", "W", NO, "flag", "raw", "submission", None,
       _approximated("kubectl wait --for=condition=complete")),
    _o("test-only", None, NO, "flag", "raw", "submission", None,
       _approximated("kubectl apply --dry-run=server")),
    _o("wrap", None, REQ, "string", "raw", "submission", "hostname",
       _mapped("the command of the container")),
    _o("batch", None, REQ, "string", "raw", "submission", "haswell",
       _dropped("which node runs the batch script has no meaning for pods")),
    _o("ignore-pbs", None, NO, "flag", "raw", "submission", None,
       _dropped("no #PBS directives on Kubernetes")),
    _o("quiet", "Q", NO, "flag", "raw", "submission", None,
       _dropped("sbatch verbosity"), accumulate=True),
    _o("verbose", "v", NO, "flag", "raw", "submission", None,
       _dropped("sbatch verbosity"), accumulate=True),
    _o("help", "h", NO, "flag", "raw", "submission", None,
       _dropped("makes sbatch print help and exit")),
    _o("usage", None, NO, "flag", "raw", "submission", None,
       _dropped("makes sbatch print usage and exit")),
    _o("version", "V", NO, "flag", "raw", "submission", None,
       _dropped("makes sbatch print its version and exit")),
    _o("wait-all-nodes", None, REQ, "bit", "raw", "submission", "1",
       _approximated("JobSet startupPolicy InOrder or a readiness gate")),
    _o("stepmgr", None, NO, "flag", "raw", "submission", None,
       _dropped("a slurmctld offload mode")),
    _o("resv-ports", None, OPT, "uint", "raw", "submission", "4",
       _dropped("ports are per pod on Kubernetes"), default=""),
)

# Options that SPANK plugins add to sbatch; valid only where the plugin is installed.
PLUGIN_OPTIONS: tuple[Option, ...] = (
    _o("container-image", None, REQ, "string", "container.pyxis_image", "containers",
       "nvidia/cuda:12.4.0-base-ubuntu22.04",
       _mapped("the container image (enroot's 'registry#image' becomes 'registry/image')"), plugin="pyxis"),
    _o("container-mounts", None, REQ, "string", "container.pyxis_mounts", "containers", "/fsx:/fsx",
       _mapped("volumes and volumeMounts (hostPath or PVC)"), plugin="pyxis"),
    _o("container-workdir", None, REQ, "string", "container.pyxis_workdir", "containers", "/workspace",
       _mapped("workingDir"), plugin="pyxis"),
    _o("container-name", None, REQ, "string", "container.pyxis_name", "containers", "train",
       _dropped("enroot container reuse has no pod equivalent"), plugin="pyxis"),
    _o("container-save", None, REQ, "string", "raw", "containers", "/fsx/img.sqsh",
       _dropped("saving the container filesystem needs a build step"), plugin="pyxis"),
    _o("container-mount-home", None, NO, "flag", "raw", "containers", None,
       _approximated("a home volume mount"), plugin="pyxis"),
    _o("no-container-mount-home", None, NO, "flag", "raw", "containers", None,
       _mapped("no home mount is the Kubernetes default"), plugin="pyxis"),
    _o("container-remap-root", None, NO, "flag", "raw", "containers", None,
       _approximated("securityContext.runAsUser: 0"), plugin="pyxis"),
    _o("no-container-remap-root", None, NO, "flag", "raw", "containers", None,
       _mapped("the image user is the Kubernetes default"), plugin="pyxis"),
    _o("container-entrypoint", None, NO, "flag", "raw", "containers", None,
       _mapped("the image entrypoint runs unless command is set"), plugin="pyxis"),
    _o("no-container-entrypoint", None, NO, "flag", "raw", "containers", None,
       _mapped("command overrides the entrypoint"), plugin="pyxis"),
    _o("container-entrypoint-log", None, NO, "flag", "raw", "containers", None,
       _dropped("an enroot logging switch"), plugin="pyxis"),
    _o("container-writable", None, NO, "flag", "raw", "containers", None,
       _mapped("container filesystems are writable by default"), plugin="pyxis"),
    _o("container-readonly", None, NO, "flag", "raw", "containers", None,
       _mapped("securityContext.readOnlyRootFilesystem"), plugin="pyxis"),
    _o("container-env", None, REQ, "string", "raw", "containers", "NCCL_DEBUG",
       _mapped("env entries of the container"), plugin="pyxis"),
    # NERSC's Shifter (NERSC/shifter wlm_integration/slurm/wrapper.c): the image (docker:REPO:TAG or
    # REPO:TAG) is the job's and `shifter` runs a step in it. A site may register the same options
    # as --shifter.image, --shifter.volume and --shifter.module instead; --ccm only where enabled.
    *(
        _o(f"{prefix}image", None, REQ, "string", "container.shifter_image", "containers",
           "docker:nersc/pytorch:24.06.01",
           _mapped("the container image (Shifter's docker: type prefix removed)"), plugin="shifter")
        for prefix in ("", "shifter.")
    ),
    *(
        _o(f"{prefix}module", None, REQ, "string", "raw", "containers", "gpu,nccl",
           _dropped("Shifter modules inject host libraries (GPU driver, MPI, NCCL); "
                    "the image must carry them"),
           plugin="shifter")
        for prefix in ("", "shifter.")
    ),
    *(
        _o(f"{prefix}volume", None, REQ, "string", "container.shifter_volume", "containers",
           "/global/cfs/cdirs/m1:/data",
           _approximated("volumes mounted at the host path (hostPath or PVC), not at the container path"),
           accumulate=True, plugin="shifter")
        for prefix in ("", "shifter.")
    ),
    _o("ccm", None, NO, "flag", "raw", "containers", None,
       _dropped("Cray CCM emulation (ssh between the nodes) has no pod equivalent"), plugin="shifter"),
)
# fmt: on


@dataclass(frozen=True)
class Obsolete:
    """An old spelling: what it became and whether current sbatch still takes it."""

    replacement: str | None  # long name in OPTIONS, or None when the option was removed
    accepted: bool
    note: str


OBSOLETE: dict[str, Obsolete] = {
    "tasks-per-node": Obsolete("ntasks-per-node", True, "deprecated spelling of --ntasks-per-node"),
    "cluster": Obsolete("clusters", True, "undocumented alias of --clusters"),
    "workdir": Obsolete("chdir", False, "old name of --chdir"),
    "share": Obsolete("oversubscribe", False, "old name of --oversubscribe"),
    "mincores": Obsolete("cores-per-socket", False, "old form of --cores-per-socket"),
    "minsockets": Obsolete("sockets-per-node", False, "old form of --sockets-per-node"),
    "minthreads": Obsolete("threads-per-core", False, "old form of --threads-per-core"),
    "mem_bind": Obsolete("mem-bind", False, "old spelling of --mem-bind"),
    "checkpoint": Obsolete(None, False, "checkpoint plugins were removed from Slurm (20.11)"),
    "checkpoint-dir": Obsolete(None, False, "checkpoint plugins were removed from Slurm (20.11)"),
    "immediate": Obsolete(None, False, "an salloc/srun option that sbatch no longer takes"),
    "jobid": Obsolete(None, False, "sbatch no longer takes a job id"),
    "power": Obsolete(None, False, "power management options were removed from sbatch"),
}
OBSOLETE_SHORT: dict[str, str] = {"P": "dependency", "U": "account", "I": "immediate"}

# Options whose empty value (``--mail-user=``, often an unset template variable) sbatch accepts
# as if the option were not given; an empty value of any other option makes it refuse the script.
# Checked one by one with ``sbatch --test-only`` (Slurm 22.05, the project's sandbox).
EMPTY_ACCEPTED = frozenset(
    {
        "account", "acctg-freq", "array", "bb", "chdir", "cluster-constraint", "comment", "constraint",
        "container", "context", "core-spec", "dependency", "error", "exclude", "export", "extra-node-info",
        "gpus", "gpus-per-node", "gpus-per-socket", "gpus-per-task", "input", "job-name", "licenses",
        "mail-user", "mcs-label", "network", "nodelist", "output", "prefer", "priority", "qos",
        "reservation", "wait-all-nodes", "wckey", "wrap",
    }
)  # fmt: skip

# Frequent srun-only options, so that the message can say so.
SRUN_ONLY = frozenset(
    {
        "cpu-bind", "cpu_bind", "mpi", "label", "multi-prog", "overlap", "exact", "pty", "het-group",
        "pack-group", "kill-on-bad-exit", "relative", "unbuffered", "accel-bind", "bcast", "task-prolog",
        "task-epilog", "prolog", "epilog", "whole", "send-libs", "ntasks-per-gpu-bind", "slurmd-debug",
    }
)  # fmt: skip

# Lines of these words separate hetjob components (packjob is the pre-20.02 name).
HETJOB_WORDS = ("hetjob", "packjob")

BY_LONG: dict[str, Option] = {o.long: o for o in (*OPTIONS, *PLUGIN_OPTIONS)}
BY_SHORT: dict[str, Option] = {o.short: o for o in OPTIONS if o.short}

# sbatch(1), INPUT ENVIRONMENT VARIABLES: the SBATCH_* variables sbatch reads as options. A variable
# overrides the script's #SBATCH line, and an option on the command line overrides the variable.
# Most are the option's long name; these are not (SBATCH_DEBUG, SBATCH_WAIT4SWITCH and the
# SBATCH_MEM_BIND_* parts are left out: they set no option of their own).
_ENVIRONMENT_NAMES = {
    "SBATCH_ARRAY_INX": "array",
    "SBATCH_MEM_PER_NODE": "mem",
    "SBATCH_REQ_SWITCH": "switches",
    "SBATCH_TIMELIMIT": "time",
}
_ENVIRONMENT_OPTIONS = (
    "account", "acctg-freq", "batch", "clusters", "constraint", "container", "core-spec", "cpus-per-gpu",
    "delay-boot", "distribution", "error", "exclusive", "export", "get-user-env", "gpu-bind", "gpu-freq",
    "gpus", "gpus-per-node", "gpus-per-task", "gres", "gres-flags", "hint", "ignore-pbs", "input",
    "job-name", "mem-bind", "mem-per-cpu", "mem-per-gpu", "network", "no-kill", "no-requeue",
    "open-mode", "output", "overcommit", "partition", "power", "profile", "qos", "requeue",
    "reservation", "signal", "spread-job", "thread-spec", "threads-per-core", "use-min-nodes", "wait",
    "wait-all-nodes", "wckey",
)  # fmt: skip
INPUT_ENVIRONMENT: dict[str, str] = {
    **{"SBATCH_" + long.upper().replace("-", "_"): long for long in _ENVIRONMENT_OPTIONS if long in BY_LONG},
    **{name: long for name, long in _ENVIRONMENT_NAMES.items() if long in BY_LONG},
}


@dataclass(frozen=True)
class Table:
    """The long options sbatch takes at one site: its own, the known plugins' and those the site's
    migrate.yaml lists under ``spank_options`` (which win over a known plugin's of the same name)."""

    by_long: dict[str, Option]
    site: frozenset[str] = frozenset()  # the names the site's migrate.yaml gave
    _sorted: tuple[str, ...] = field(default=(), repr=False)

    def lookup_long(self, name: str) -> tuple[Option | None, tuple[str, ...]]:
        """An option by long name as getopt_long finds it: exact, else an unambiguous prefix.

        Returns the option and, when the name is ambiguous or unknown, the
        candidate names (empty when unknown).
        """
        exact = self.by_long.get(name)
        if exact is not None:
            return exact, ()
        if not name:
            return None, ()
        start = bisect.bisect_left(self._sorted, name)
        matches: list[str] = []
        for candidate in self._sorted[start:]:
            if not candidate.startswith(name):
                break
            matches.append(candidate)
        if len(matches) == 1:
            return self.by_long[matches[0]], ()
        return None, tuple(matches)

    def names(self) -> tuple[str, ...]:
        """Every long name sbatch accepts here, for suggestions."""
        return self._sorted


def site_option(spank: SpankOption) -> Option:
    """The row of a site's own SPANK option: kept raw, its meaning known to the site only."""
    arg = {"none": NONE, "optional": OPTIONAL}.get(spank.takes_value, REQUIRED)
    k8s = _dropped(
        f"an option of the site's {spank.plugin} SPANK plugin; nothing says what it does on Kubernetes"
    )
    kind = OptionKind.FLAG if arg == NONE else OptionKind.STRING
    return Option(spank.name, None, arg, kind, "raw", "site plugins", k8s, None, True, True, spank.plugin)


@functools.lru_cache(maxsize=32)
def table(site: tuple[SpankOption, ...] = ()) -> Table:
    """The option table with the site's SPANK options (``SiteConfig.spank_options``)."""
    rows = {**BY_LONG, **{o.long: o for o in map(site_option, site)}}
    return Table(rows, frozenset(o.name for o in site), tuple(sorted(rows)))


SBATCH = table()


def lookup_long(name: str) -> tuple[Option | None, tuple[str, ...]]:
    """An option by long name, as sbatch without the site's own plugins finds it (see ``Table``)."""
    return SBATCH.lookup_long(name)


def option_names() -> tuple[str, ...]:
    """Every long name sbatch accepts, for suggestions."""
    return SBATCH.names()
