"""Read the inventory out of a ``slurm.conf``: its NodeName, NodeSet and PartitionName lines.

What is understood: ``#`` comments; lines continued with a trailing backslash;
keys in any case; ``NodeName=DEFAULT`` and ``PartitionName=DEFAULT`` lines
that set defaults for the lines after them; host lists such as
``gpu-[001-048]``, ``rack[1-2]-n[01-16]`` and ``a,b``; ``Nodes=ALL`` and
NodeSet names in a partition; per node ``CPUs`` (or sockets x cores x
threads), ``RealMemory`` (MiB), ``Gres=gpu:h100:8,nvme:1`` and ``Feature``;
per partition ``Default``, ``State``, ``DefaultTime`` and ``MaxTime``; the
memory defaults ``DefMemPerCPU``, ``DefMemPerNode``, ``DefMemPerGPU`` and
``DefCpuPerGPU``, per partition or for the whole cluster (the partition's
wins); and whether ``SelectTypeParameters`` makes memory a consumable
resource (Slurm's default for cons_tres, ``CR_Core_Memory``, does). Each
value keeps the line it was read from, for the allocation's provenance.

What is not: ``include`` lines are listed in the notes but not followed (the
file they name may live only on the cluster); every other parameter is
ignored. A line that cannot be read is a note, never an error.
"""

from __future__ import annotations

import itertools
import math
import re
import shlex
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import TypeVar

from migrate.render import plural
from migrate.site.inventory_model import SLURM_CONF, Inventory, InventoryPartition
from migrate.site.slurmtime import parse_slurm_time

T = TypeVar("T", int, str)
MAX_NODES = 100_000  # host names expanded per file; a typo like node[0-99999999] must not eat memory
MAX_NOTES = 20
_INVENTORY_LINE = re.compile(r"^[ \t]*(?:nodename|partitionname)[ \t]*=", re.IGNORECASE | re.MULTILINE)
_INCLUDE = re.compile(r"^include\s+(\S+)", re.IGNORECASE)
_FIRST_KEY = re.compile(r"^(\w+)=")
_BRACKETS = re.compile(r"(\[[^\]]*\])")


class LineKind(StrEnum):
    """The inventory lines of slurm.conf, by their first key (lower case: slurm.conf ignores case)."""

    NODE = "nodename"
    PARTITION = "partitionname"
    NODESET = "nodeset"


_INVENTORY_KEYS = frozenset(LineKind)

# Feature words that name a GPU, for nodes whose Gres gives a count but no type.
GPU_FEATURES = frozenset(
    ("h100", "h200", "b200", "gh200", "a100", "a10g", "a10", "a40", "a30", "l40s", "l40", "l4", "v100", "t4")
)


@dataclass(frozen=True)
class _Node:
    cpus: int | None
    mem_gb: int | None
    gpus: int
    gpu_type: str | None
    features: tuple[str, ...]
    future: bool  # State=FUTURE: declared, not yet in service
    line: int = 0  # the NodeName line
    names: str = ""  # the host list it was written for
    other_gres: tuple[tuple[str, int], ...] = ()  # GRES other than GPUs: nvme -> 1


# Memory and CPU defaults a partition line or the cluster may set (slurm.conf(5) spelling, field).
_DEFAULT_KEYS = (
    ("DefMemPerCPU", "def_mem_per_cpu_mb"),
    ("DefMemPerNode", "def_mem_per_node_mb"),
    ("DefMemPerGPU", "def_mem_per_gpu_mb"),
    ("DefCpuPerGPU", "def_cpu_per_gpu"),
)
_TIME_KEYS = (("DefaultTime", "default_time_s"), ("MaxTime", "max_time_s"))
_GLOBAL_KEYS = frozenset(k.lower() for k, _ in _DEFAULT_KEYS) | {
    "selecttypeparameters",
    "selecttype",
    "jobfileappend",
}
# What a Kubernetes-hosted slurmd or slurmrestd needs to know of the site's own controller.
CONTROLLER_KEYS = (
    "ClusterName",
    "SlurmctldHost",
    "SlurmctldPort",
    "AuthType",
    "AuthAltTypes",
    "AuthInfo",
    "SlurmctldParameters",
    "GresTypes",
)
_CONTROLLER_LOWER = {k.lower(): k for k in CONTROLLER_KEYS}


def looks_like_slurm_conf(text: str) -> bool:
    return _INVENTORY_LINE.search(text) is not None


def parse_slurm_conf(text: str, path: str) -> Inventory:
    reader = _Reader(path)
    for number, line in _logical_lines(text):
        reader.read(number, line)
    return Inventory(
        path,
        SLURM_CONF,
        tuple(reader.partitions()),
        tuple(reader.finished_notes()),
        tuple(sorted(reader.controller.items())),
        reader.job_file_append(),
    )


class _Reader:
    def __init__(self, path: str) -> None:
        self.path = path
        self.nodes: dict[str, _Node] = {}
        self.nodesets: dict[str, Mapping[str, str]] = {}
        # partitions in file order: name, properties, line, key -> line it was read from
        self.declared: list[tuple[str, dict[str, str], int, dict[str, int]]] = []
        self.node_defaults: dict[str, str] = {}
        self.partition_defaults: dict[str, str] = {}
        self.partition_default_lines: dict[str, int] = {}  # key -> line of its PartitionName=DEFAULT
        self.cluster: dict[str, tuple[str, int]] = {}  # cluster-wide parameters: key -> (value, line)
        self.controller: dict[str, tuple[str, int]] = {}  # CONTROLLER_KEYS as written -> (value, line)
        self.includes: list[str] = []
        self.notes: list[str] = []
        self.budget = MAX_NODES

    def read(self, number: int, line: str) -> None:
        include = _INCLUDE.match(line)
        if include:
            self.includes.append(f"{include.group(1)} (line {number})")
            return
        first = _FIRST_KEY.match(line)
        kind = first.group(1).lower() if first else ""
        if kind in _GLOBAL_KEYS:
            self._cluster_parameter(number, line)
            return
        if kind in _CONTROLLER_LOWER:
            # the first SlurmctldHost is the primary; later ones are backups
            value = line.split("=", 1)[1].strip() if "=" in line else ""
            self.controller.setdefault(_CONTROLLER_LOWER[kind], (value, number))
            return
        if kind not in _INVENTORY_KEYS:
            return  # other scheduler parameters: not inventory
        try:
            pairs = _pairs(line)
        except ValueError as exc:
            self.notes.append(f"line {number}: {exc}; skipped")
            return
        name = pairs.get(kind, "")
        if not name:
            self.notes.append(f"line {number}: {first.group(1) if first else kind}= has no name; skipped")
            return
        if kind == LineKind.NODESET:
            self.nodesets[name] = pairs
        elif name.upper() == "DEFAULT":
            defaults = self.node_defaults if kind == LineKind.NODE else self.partition_defaults
            defaults.update((k, v) for k, v in pairs.items() if k != kind)
            if kind == LineKind.PARTITION:
                self.partition_default_lines.update((k, number) for k in pairs if k != kind)
        elif kind == LineKind.PARTITION:
            lines = self.partition_default_lines | dict.fromkeys(pairs, number)
            self.declared.append((name, self.partition_defaults | pairs, number, lines))
        else:
            self._add_nodes(name, self.node_defaults | pairs, number)

    def _cluster_parameter(self, number: int, line: str) -> None:
        try:
            pairs = _pairs(line)
        except ValueError as exc:
            self.notes.append(f"line {number}: {exc}; skipped")
            return
        for key, value in pairs.items():
            self.cluster[key] = (value, number)

    def job_file_append(self) -> str | None:
        value, line = self.cluster.get("jobfileappend", ("0", 0))
        return f"{self.path} line {line}" if value.strip() == "1" else None

    def _add_nodes(self, names: str, props: Mapping[str, str], number: int) -> None:
        try:
            hosts = self._expand(names)
            spec = _node_spec(props)
        except ValueError as exc:
            self.notes.append(f"line {number}: {exc}; skipped")
            return
        spec = replace(spec, line=number, names=names)
        for host in hosts:
            self.nodes[host] = spec

    def _expand(self, expression: str) -> list[str]:
        hosts = expand_hostlist(expression, self.budget)
        self.budget -= len(hosts)
        return hosts

    def partitions(self) -> list[InventoryPartition]:
        out: list[InventoryPartition] = []
        members_of: dict[str, set[str]] = {}
        for name, props, number, lines in self.declared:
            try:
                members = self._members(props.get("nodes", ""))
            except ValueError as exc:
                self.notes.append(f"line {number}: partition {name}: {exc}; its nodes are not counted")
                members = []
            members_of[name] = set(members)
            part = self._partition(name, props, members)
            out.append(self._with_defaults(part, props, number, lines, members))
        self._note_overlaps(members_of)
        return out

    def _members(self, listing: str) -> list[str]:
        found: dict[str, None] = {}
        for item in split_hostlist(listing):
            if item.upper() == "ALL":
                found.update(dict.fromkeys(self.nodes))
            elif item in self.nodesets:
                found.update(dict.fromkeys(self._nodeset(self.nodesets[item])))
            elif item:
                found.update(dict.fromkeys(self._expand(item)))
        return list(found)

    def _nodeset(self, pairs: Mapping[str, str]) -> list[str]:
        if "nodes" in pairs:
            return self._expand(pairs["nodes"])
        feature = pairs.get("feature", "").lower()
        return [host for host, spec in self.nodes.items() if feature in spec.features]

    def _partition(self, name: str, props: Mapping[str, str], members: list[str]) -> InventoryPartition:
        specs = [self.nodes[m] for m in members if m in self.nodes]
        missing = [m for m in members if m not in self.nodes]
        if missing:
            self.notes.append(
                f"partition {name}: {plural(len(missing), 'node')} without a NodeName line "
                f"({missing[0]} ...): "
                "counted, but what they hold is unknown"
            )
        future = sum(1 for s in specs if s.future)
        if future:
            self.notes.append(
                f"partition {name}: {plural(future, 'node')} {'is' if future == 1 else 'are'} "
                "State=FUTURE (not in service yet)"
            )
        state = props.get("state", "UP").upper()
        if state != "UP":
            self.notes.append(f"partition {name} is State={state}: its nodes are counted all the same")
        gpus = _most_common([s.gpus for s in specs])
        kinds = Counter(s.gpus for s in specs)
        if len(kinds) > 1:
            mix = ", ".join(f"{count} with {g} GPUs" for g, count in sorted(kinds.items()))
            self.notes.append(f"partition {name} mixes nodes ({mix}); planned as {gpus} GPUs per node")
        return InventoryPartition(
            name=name,
            nodes=len(members),
            gpus_per_node=gpus,
            gpu_type=_most_common([s.gpu_type for s in specs if s.gpu_type and s.gpus == gpus]),
            cpus_per_node=_most_common([s.cpus for s in specs if s.cpus is not None]),
            mem_gb=_most_common([s.mem_gb for s in specs if s.mem_gb is not None]),
            default=props.get("default", "NO").upper() == "YES",
            detail=props.get("nodes", ""),
        )

    def _with_defaults(
        self,
        part: InventoryPartition,
        props: Mapping[str, str],
        number: int,
        lines: Mapping[str, int],
        members: list[str],
    ) -> InventoryPartition:
        """The partition with its defaults, node devices and where each value was read."""
        where = self.path
        origins: dict[str, str] = {}
        values: dict[str, object] = {}
        node = self._main_node(part, members)
        if node is not None:
            node_line = f"NodeName={node.names} in {where} line {node.line}"
            for key in ("gpus_per_node", "gpu_type", "cpus_per_node", "mem_gb"):
                if getattr(part, key) is not None:
                    origins[key] = node_line
            if node.other_gres:
                values["devices"] = node.other_gres
                origins["devices"] = f"Gres of {node_line}"
        origins["nodes"] = (
            f"PartitionName={part.name} Nodes={props.get('nodes', '')} in {where} line {number}"
        )
        if part.default:
            origins["default"] = f"Default=YES in {where} line {number}"
        for label, key in _DEFAULT_KEYS:
            found = self._default(props, lines, label)
            if found is not None:
                value, at = found
                values[key] = value
                origins[key] = f"{label}={value} in {where} line {at}"
        for label, key in _TIME_KEYS:
            text = props.get(label.lower())
            if text is None:
                continue
            at = lines.get(label.lower(), number)
            try:
                values[key] = parse_slurm_time(text)
            except ValueError:
                self.notes.append(
                    f"line {at}: partition {part.name}: {label}={text!r} is not a duration; ignored"
                )
                continue
            origins[key] = f"{label}={text} in {where} line {at}"
        scheduled = self._memory_scheduled()
        if scheduled is not None:
            values["memory_scheduled"], origins["memory_scheduled"] = scheduled
        return replace(part, **values, origins=tuple(sorted(origins.items())))  # type: ignore[arg-type]

    def _main_node(self, part: InventoryPartition, members: list[str]) -> _Node | None:
        """The NodeName line of the nodes the partition is planned with (the most common kind)."""
        for member in members:
            node = self.nodes.get(member)
            if (
                node is not None
                and node.gpus == (part.gpus_per_node or 0)
                and node.cpus == part.cpus_per_node
            ):
                return node
        return next((self.nodes[m] for m in members if m in self.nodes), None)

    def _default(
        self, props: Mapping[str, str], lines: Mapping[str, int], label: str
    ) -> tuple[int, int] | None:
        """A memory or CPU default: the partition's, else the cluster's; 0 means none (unlimited)."""
        key = label.lower()
        if key in props:
            text, at = props[key], lines.get(key, 0)
        elif key in self.cluster:
            text, at = self.cluster[key]
        else:
            return None
        if not text.isdecimal():
            self.notes.append(f"line {at}: {label}={text!r} is not a number; ignored")
            return None
        return (int(text), at) if int(text) else None

    def _memory_scheduled(self) -> tuple[bool, str] | None:
        params = self.cluster.get("selecttypeparameters")
        select = self.cluster.get("selecttype")
        if params is not None:
            value, at = params
            scheduled = "memory" in value.lower()
            return scheduled, f"SelectTypeParameters={value} in {self.path} line {at}"
        if select is not None and select[0].lower() in ("select/cons_tres", "select/cons_res"):
            # slurm.conf(5): cons_res and cons_tres default to CR_Core_Memory
            return True, f"SelectType={select[0]} in {self.path} line {select[1]} (default CR_Core_Memory)"
        return None

    def _note_overlaps(self, members_of: Mapping[str, set[str]]) -> None:
        names = list(members_of)
        for i, first in enumerate(names):
            for second in names[i + 1 :]:
                shared = len(members_of[first] & members_of[second])
                if shared:
                    self.notes.append(
                        f"partitions {first} and {second} share {plural(shared, 'node')}: "
                        "capacity is planned per "
                        "partition, so those nodes count in both"
                    )

    def finished_notes(self) -> list[str]:
        notes = list(self.notes)
        if self.includes:
            notes.insert(0, "include lines not followed: " + ", ".join(self.includes))
        if len(notes) > MAX_NOTES:
            notes = [*notes[:MAX_NOTES], f"and {plural(len(notes) - MAX_NOTES, 'more note')}"]
        return notes


def _logical_lines(text: str) -> Iterator[tuple[int, str]]:
    """(first line number, text) with comments removed and backslash continuations joined."""
    pending, start = "", 1
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].rstrip()
        if not pending:
            start = number
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        pending += line
        if pending.strip():
            yield start, pending.strip()
        pending = ""
    if pending.strip():
        yield start, pending.strip()


def _pairs(line: str) -> dict[str, str]:
    try:
        words = shlex.split(line)
    except ValueError as exc:
        raise ValueError(f"cannot split the line ({exc})") from None
    out: dict[str, str] = {}
    for word in words:
        key, sep, value = word.partition("=")
        if not sep:
            raise ValueError(f"{word!r} is not key=value")
        out[key.lower()] = value
    return out


def _node_spec(props: Mapping[str, str]) -> _Node:
    cpus = _int(props, "cpus") or _int(props, "procs")
    if cpus is None:
        parts = [_int(props, k) for k in ("sockets", "corespersocket", "threadspercore")]
        cpus = math.prod(p for p in parts if p) if any(parts) else None
    memory = _int(props, "realmemory")
    gpus, gpu_type = _gres(props.get("gres", ""))
    other = _other_gres(props.get("gres", ""))
    features = tuple(f.strip().lower() for f in props.get("feature", props.get("features", "")).split(","))
    if gpus and gpu_type is None:
        gpu_type = next((f for f in features if f in GPU_FEATURES), None)
    return _Node(
        cpus=cpus,
        mem_gb=memory // 1024 if memory else None,
        gpus=gpus,
        gpu_type=gpu_type,
        features=tuple(f for f in features if f),
        future=props.get("state", "").upper() == "FUTURE",
        other_gres=other,
    )


# Keys are read in any case; messages name them as slurm.conf(5) writes them.
_LABELS = {
    "cpus": "CPUs",
    "procs": "Procs",
    "sockets": "Sockets",
    "corespersocket": "CoresPerSocket",
    "threadspercore": "ThreadsPerCore",
    "realmemory": "RealMemory",
}


def _int(props: Mapping[str, str], key: str) -> int | None:
    text = props.get(key)
    if text is None:
        return None
    if not text.isdecimal():
        raise ValueError(f"{_LABELS.get(key, key)}={text!r} is not a number")
    return int(text)


def _gres(text: str) -> tuple[int, str | None]:
    """``gpu:h100:8(S:0-1),nvme:1`` -> (8, "h100"); counts of several GPU entries add up."""
    count, kind = 0, None
    for item in _split_outside(text, "(", ")"):
        fields = item.split("(", 1)[0].strip().split(":")
        if fields[0].lower() != "gpu" or len(fields) < 2:
            continue
        number = fields[-1]
        if not number.isdecimal():
            raise ValueError(f"Gres {item!r} has no GPU count")
        count += int(number)
        if len(fields) >= 3 and kind is None:
            kind = fields[1].lower()
    return count, kind


def _other_gres(text: str) -> tuple[tuple[str, int], ...]:
    """``gpu:h100:8,nvme:2`` -> (("nvme", 2),): the node's other GRES, by name; unreadable counts skipped."""
    found: dict[str, int] = {}
    for item in _split_outside(text, "(", ")"):
        fields = item.split("(", 1)[0].strip().split(":")
        name = fields[0].lower()
        if not name or name == "gpu":
            continue
        number = fields[-1] if len(fields) >= 2 else "1"
        if number.isdecimal():
            found[name] = found.get(name, 0) + int(number)
    return tuple(sorted(found.items()))


def _most_common(values: list[T]) -> T | None:
    counts = Counter(values)
    if not counts:
        return None
    # the most nodes; on a tie the larger value, so the choice never depends on line order
    return max(counts.items(), key=lambda kv: (kv[1], str(kv[0])))[0]


def split_hostlist(text: str) -> list[str]:
    """``a[1-3],b,c[01,05]`` -> ``["a[1-3]", "b", "c[01,05]"]``: commas inside brackets stay."""
    return [item.strip() for item in _split_outside(text, "[", "]") if item.strip()]


def _split_outside(text: str, opening: str, closing: str) -> list[str]:
    items: list[str] = []
    current: list[str] = []
    depth = 0
    for char in text:
        if char == opening:
            depth += 1
        elif char == closing:
            depth = max(0, depth - 1)
        if char == "," and depth == 0:
            items.append("".join(current))
            current = []
        else:
            current.append(char)
    items.append("".join(current))
    return items


def expand_hostlist(text: str, limit: int = MAX_NODES) -> list[str]:
    """Every host a Slurm host list names, in order: ``gpu-[001-003]`` -> gpu-001, gpu-002, gpu-003."""
    hosts: list[str] = []
    for item in split_hostlist(text):
        choices: list[list[str]] = []
        for piece in _BRACKETS.split(item):
            if piece.startswith("[") and piece.endswith("]"):
                choices.append(_numbers(piece[1:-1], limit))
            elif "[" in piece or "]" in piece:
                raise ValueError(f"unbalanced brackets in host list {item!r}")
            elif piece:
                choices.append([piece])
        total = math.prod(len(c) for c in choices)
        if len(hosts) + total > limit:
            raise ValueError(f"host list {text!r} names more than {limit} nodes")
        hosts.extend("".join(combo) for combo in itertools.product(*choices))
    return hosts


def _numbers(body: str, limit: int) -> list[str]:
    out: list[str] = []
    for item in body.split(","):
        low, dash, high = item.strip().partition("-")
        if not low.isdecimal() or (dash and not high.isdecimal()):
            raise ValueError(f"[{body}] is not a list of numbers and ranges")
        if not dash:
            out.append(low)
            continue
        first, last = int(low), int(high)
        if last < first or last - first + 1 + len(out) > limit:
            raise ValueError(f"range {item.strip()} is reversed or names more than {limit} nodes")
        out.extend(str(n).zfill(len(low)) for n in range(first, last + 1))  # gpu-[001-048] keeps 3 digits
    return out


__all__ = ["GPU_FEATURES", "MAX_NODES", "expand_hostlist", "looks_like_slurm_conf", "parse_slurm_conf"]
