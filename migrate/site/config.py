"""The site configuration, ``migrate.yaml``: mount table, partitions, images, thresholds.

Everything has a default so that a scan without a config still plans. The
thresholds default to the values in the decision tables (see ``migrate/plan/rules.py``);
the plan and the report cite them by name, so a site that disagrees changes one
number here instead of the code.

Validation is strict on purpose: an unknown key is almost always a typo that
would silently fall back to a default, so it is an error with its key path.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, TypeVar

import yaml

from migrate.site.slurmtime import parse_slurm_time

CONFIG_NAME = "migrate.yaml"
DEFAULT_GPUS_PER_NODE = 8  # the common 8-GPU server, when migrate.yaml says nothing

T = TypeVar("T")


# What `migrate init` writes where only the site knows the value; a key holding it counts as not given.
PLACEHOLDER = "REPLACE-ME"


class SiteConfigError(ValueError):
    """The site configuration cannot be used; the message names the key path and what is expected."""


@dataclass(frozen=True)
class Thresholds:
    """Numbers behind the recommendations and the plan's gates.

    Defaults come from the seeds: seed 000's decision tree splits training at
    4 nodes and cites 72-hour runs as where pod churn hurts; the pilot gates put
    numbers on seed 004's "validate on real jobs before decommissioning".
    """

    large_training_nodes: int = 4  # training above this stays on Slurm when moving to Kubernetes
    long_training_hours: int = 72  # a multi-node run at least this long counts as a long run
    pilot_consecutive_successes: int = 3  # runs in a row that must pass on both schedulers
    runtime_tolerance_pct: int = 10  # allowed runtime drift between the two schedulers
    pilot_max_units: int = 3  # migration units in the pilot phase
    pilot_max_risk: int = 30  # only units at or below this risk score may be piloted
    wave_max_units: int = 10  # migration units per wave after the pilot
    kubernetes_pods_soft_limit: int = 5000  # seed 000: the control plane strains around here
    demand_window_hours: int = 168  # demand is spread over a week when sizing capacity
    default_job_hours: int = 1  # assumed run time of a job with no time limit


@dataclass(frozen=True)
class FileSystemConfig:
    """One shared file system: where Slurm sees it and which PVC claims expose it."""

    prefix: str
    kind: str = "unknown"
    pvc: tuple[str, ...] = ()
    name: str | None = None

    @property
    def label(self) -> str:
        return self.name or self.prefix


@dataclass(frozen=True)
class PartitionConfig:
    """A Slurm partition and its Kubernetes mirror (queue, node selector, tolerations).

    What one node holds (``gpus_per_node``, ``gpu_type``, ``cpus_per_node``,
    ``mem_gb``, ``devices``) and the site's defaults for jobs that do not say
    (``def_mem_per_*``, ``def_cpu_per_gpu``, ``default_time``, ``max_time``,
    ``memory_scheduled``) are what ``migrate.site.allocation`` reads to tell
    what Slurm gives a job; ``docs/allocation.md`` shows each at work.
    """

    nodes: int = 0
    gpus_per_node: int = 0
    gpu_type: str | None = None
    cpus_per_node: int | None = None
    mem_gb: int | None = None
    queue: str | None = None
    node_selector: tuple[tuple[str, str], ...] = ()
    default: bool = False  # slurm.conf Default=YES: where a job without --partition runs
    # slurm.conf DefMemPerCPU / DefMemPerNode / DefMemPerGPU (MiB) and DefCpuPerGPU: what a job that
    # does not ask gets; the partition's value, else the global one.
    def_mem_per_cpu_mb: int | None = None
    def_mem_per_node_mb: int | None = None
    def_mem_per_gpu_mb: int | None = None
    def_cpu_per_gpu: int | None = None
    # DefaultTime and MaxTime in seconds; migrate.yaml writes them as Slurm durations under the keys
    # default_time and max_time (2-00:00:00, or minutes). A job without --time gets DefaultTime,
    # else MaxTime. None: unlimited or not known.
    default_time_s: int | None = None
    max_time_s: int | None = None
    # Memory is a consumable resource (SelectTypeParameters=CR_*_Memory, ParallelCluster
    # EnableMemoryBasedScheduling): without a default a job then holds the whole node's memory.
    memory_scheduled: bool | None = None
    # Node devices as Kubernetes extended resources (vpc.amazonaws.com/efa: 32), or Slurm GRES
    # names that ``gres:`` maps; whole-node jobs request them all.
    devices: tuple[tuple[str, int], ...] = ()
    # Tolerations the partition's node pool asks of its pods: a list of {key, operator, value, effect}.
    tolerations: tuple[tuple[tuple[str, str], ...], ...] = ()
    # How one GPU is split among pods on Kubernetes (mig, time-slicing, mps), None: whole GPUs only.
    gpu_sharing: str | None = None
    # Keys written in migrate.yaml, so that a slurm.conf or ParallelCluster inventory fills only the others.
    explicit: tuple[str, ...] = ()
    # Where the keys an inventory filled come from (key -> "slurm.conf line 12 (NodeName=...)").
    origins: tuple[tuple[str, str], ...] = ()

    def origin(self, key: str) -> str | None:
        for name, where in self.origins:
            if name == key:
                return where
        return None


@dataclass(frozen=True)
class KubernetesSettings:
    """How pods are sized on the Kubernetes side.

    ``cpu_limits``: ``except-whole-node`` (the default: a pod that stands for
    a whole Slurm node gets no CPU limit, so that it may use every core the
    kubelet leaves; other pods get limit = request), ``always`` or ``never``.
    ``reserved_cpus`` and ``reserved_memory_pct``: what a node keeps for the
    kubelet, the container runtime and the daemon sets (GPU and network
    device plugins, monitoring); whole-node pods request the rest. The
    defaults, 2 CPUs and 5 % of the memory, are in the range the managed
    offerings reserve on large GPU nodes; set the site's own from
    ``kubectl describe node`` (Capacity minus Allocatable).
    ``user`` and ``home``: who the pods run a job as, for the scripts that read
    ``$USER``, ``$LOGNAME`` or ``$HOME`` (sbatch passes the submitter's own):
    a name or ``{namespace}`` (a user per namespace, the default), and a folder
    in which ``{user}`` is the user (default: ``/home/{user}`` when a file
    system of the site holds ``/home``, else none: the image's).
    ``submit_dirs``: where the job files were submitted from on the cluster, the
    folder a script starts in and ``$SLURM_SUBMIT_DIR`` names: the folder of the
    job files as scanned (``jobs/training``; ``.`` for all) -> the cluster's
    folder (``/fsx/projects/training``, ``{user}`` filled in); the longest match
    wins and the rest of a file's folder is kept below it.
    """

    cpu_limits: str = "except-whole-node"
    reserved_cpus: int = 2
    reserved_memory_pct: int = 5
    user: str = "{namespace}"
    home: str | None = None
    submit_dirs: tuple[tuple[str, str], ...] = ()


CPU_LIMIT_POLICIES = ("except-whole-node", "always", "never")
GPU_SHARING = ("mig", "time-slicing", "mps")


@dataclass(frozen=True)
class SiteVersions:
    """The releases the site runs (``versions: {slurm: "24.05", kubernetes: "1.31"}``), as written."""

    slurm: str | None = None
    kubernetes: str | None = None


# How a SPANK option takes its value (struct spank_option's has_arg: 1, 0, 2).
TAKES_VALUE = ("required", "none", "optional")


@dataclass(frozen=True)
class SpankOption:
    """An ``#SBATCH`` option that a SPANK plugin of the site adds (its plugstack.conf), beyond the
    plugins migrate knows: ``spank_options: [{name: --ssd-size, plugin: site-ssd, takes_value: true}]``."""

    name: str  # the long name, without its dashes (SPANK options have no short form)
    plugin: str
    takes_value: str = "required"  # one of TAKES_VALUE


@dataclass(frozen=True)
class Defaults:
    image: str | None = None
    namespace: str = "default"
    shm_size: str | None = None  # sizeLimit of a translated pod's memory-backed /dev/shm


@dataclass(frozen=True)
class SiteConfig:
    site: str = "site"
    filesystems: tuple[FileSystemConfig, ...] = ()
    partitions: tuple[tuple[str, PartitionConfig], ...] = ()
    images: tuple[tuple[str, str], ...] = ()
    # Mappings only the site knows, each name -> value: account -> namespace, qos -> priority
    # class, GPU type -> nvidia.com/gpu.product, GRES -> extended resource, license -> counted
    # resource, and node feature (a --constraint word) -> node selector.
    accounts: tuple[tuple[str, str], ...] = ()
    qos: tuple[tuple[str, str], ...] = ()
    gpu_products: tuple[tuple[str, str], ...] = ()
    gres: tuple[tuple[str, str], ...] = ()
    licenses: tuple[tuple[str, str], ...] = ()
    features: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = ()
    defaults: Defaults = field(default_factory=Defaults)
    thresholds: Thresholds = field(default_factory=Thresholds)
    kubernetes: KubernetesSettings = field(default_factory=KubernetesSettings)
    versions: SiteVersions = field(default_factory=SiteVersions)
    spank_options: tuple[SpankOption, ...] = ()  # #SBATCH options of the site's own SPANK plugins
    # Where the site's slurm.conf sets JobFileAppend=1 (jobs without --open-mode append to their
    # output files), from an inventory; None: sbatch truncates them.
    job_file_append: str | None = None
    source: str | None = None  # the file it came from, for messages and the report
    # Keys still holding PLACEHOLDER (a starter file from `migrate init`): read as not given.
    unfilled: tuple[str, ...] = ()

    def partition(self, name: str) -> PartitionConfig | None:
        for part_name, part in self.partitions:
            if part_name == name:
                return part
        return None

    def default_partition(self) -> str | None:
        """The partition a Slurm job that names none runs in (``default: true``), if known."""
        for part_name, part in self.partitions:
            if part.default:
                return part_name
        return None

    def partition_for_queue(self, queue: str) -> str | None:
        """The Slurm partition whose Kubernetes mirror is ``queue``."""
        for part_name, part in self.partitions:
            if part.queue == queue:
                return part_name
        return None

    def image_for(self, *keys: str) -> str | None:
        """The image mapped to the first of ``keys`` that the ``images`` table names."""
        table = dict(self.images)
        for key in keys:
            if key in table:
                return table[key]
        return None

    def image_for_module(self, module: str) -> str | None:
        return self.image_for(f"module:{module}", module)

    def image_for_env(self, kind: str, name: str) -> str | None:
        """A conda env, venv or spack env: ``conda:vision``, or its path as written."""
        return self.image_for(f"{kind}:{name}", name)

    def filesystem_for_claim(self, claim: str) -> FileSystemConfig | None:
        for fs in self.filesystems:
            if claim in fs.pvc:
                return fs
        return None


# ---------------------------------------------------------------------------
# Loading


def load_site_config(path: str | Path | None = None) -> SiteConfig:
    """Read and validate ``migrate.yaml``; no path means the defaults."""
    if path is None:
        return SiteConfig()
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise SiteConfigError(f"{source}: cannot read: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise SiteConfigError(f"{source}: not valid UTF-8 at byte {exc.start}") from exc
    return parse_site_config_text(text, source)


def parse_site_config_text(text: str, source: str = CONFIG_NAME) -> SiteConfig:
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "invalid YAML"
        raise SiteConfigError(f"{source}: YAML error{where}: {problem}") from exc
    return parse_site_config(data, source)


def parse_site_config(data: object, source: str = CONFIG_NAME) -> SiteConfig:
    """Validate already-parsed YAML (a mapping, or None for an empty file)."""
    if data is None:
        return SiteConfig(source=source)
    top = _mapping(data, _Where(source, ""))
    where = _Where(source, "")
    _only_keys(
        top,
        where,
        (
            "site",
            "filesystems",
            "partitions",
            *_NAME_MAPS,
            "features",
            "defaults",
            "thresholds",
            "kubernetes",
            "versions",
            "spank_options",
        ),
    )
    return SiteConfig(
        site=_optional(top, "site", where, _string, "site"),
        filesystems=_filesystems(top.get("filesystems"), where.child("filesystems")),
        partitions=_partitions(top.get("partitions"), where.child("partitions")),
        **{key: _images(top.get(key), where.child(key)) for key in _NAME_MAPS},  # type: ignore[arg-type]
        features=_features(top.get("features"), where.child("features")),
        defaults=_defaults(top.get("defaults"), where.child("defaults")),
        thresholds=_thresholds(top.get("thresholds"), where.child("thresholds")),
        kubernetes=_kubernetes(top.get("kubernetes"), where.child("kubernetes")),
        versions=_versions(top.get("versions"), where.child("versions")),
        spank_options=_spank_options(top.get("spank_options"), where.child("spank_options")),
        source=source,
        unfilled=tuple(_unfilled(top, "")),
    )


def _unfilled(node: object, path: str) -> Iterator[str]:
    """The dotted keys whose value is still the starter file's PLACEHOLDER."""
    if isinstance(node, Mapping):
        for key, value in node.items():
            yield from _unfilled(value, f"{path}.{key}" if path else str(key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _unfilled(value, f"{path}[{index}]")
    elif node == PLACEHOLDER:
        yield path


# A folder holding one of these is a repository's root: the search for migrate.yaml stops there.
VCS_MARKERS = (".git", ".hg", ".svn")


def nearest_site_config(path: str) -> str | None:
    """The nearest ``migrate.yaml`` above ``path``: its own folder (a file: the folder it is in),
    then upwards, up to a repository's root or the file system's; shown relative when ``path`` is."""
    start = os.path.abspath(path)
    folder = start if os.path.isdir(start) else os.path.dirname(start)
    while True:
        candidate = os.path.join(folder, CONFIG_NAME)
        if os.path.isfile(candidate):
            return candidate if os.path.isabs(path) else os.path.relpath(candidate)
        parent = os.path.dirname(folder)
        if parent == folder or any(os.path.exists(os.path.join(folder, m)) for m in VCS_MARKERS):
            return None
        folder = parent


def find_site_configs(paths: Sequence[str]) -> list[str]:
    """The distinct nearest ``migrate.yaml`` files of ``paths``, in the order found (one file, twice
    reached through a link, counts once); more than one leaves the choice to the caller."""
    found: dict[str, str] = {}  # real path -> as shown
    for path in paths:
        nearest = nearest_site_config(path)
        if nearest is not None:
            found.setdefault(os.path.realpath(nearest), nearest)
    return list(found.values())


# ---------------------------------------------------------------------------
# Validation helpers: every failure names the key path and the expected shape.


@dataclass(frozen=True)
class _Where:
    source: str
    path: str

    def child(self, key: str | int) -> _Where:
        if isinstance(key, int):
            return _Where(self.source, f"{self.path}[{key}]")
        return _Where(self.source, f"{self.path}.{key}" if self.path else key)

    def fail(self, problem: str) -> SiteConfigError:
        at = self.path or "(top level)"
        return SiteConfigError(f"{self.source}: {at}: {problem}")


def _describe(value: object) -> str:
    shown = repr(value)
    if len(shown) > 40:
        shown = shown[:37] + "..."
    return f"{shown} ({type(value).__name__})"


def _mapping(value: object, where: _Where) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise where.fail(f"expected a mapping, got {_describe(value)}")
    for key in value:
        if not isinstance(key, str):
            raise where.fail(f"expected string keys, got {_describe(key)}")
    return value


def _only_keys(data: Mapping[str, Any], where: _Where, allowed: tuple[str, ...]) -> None:
    for key in sorted(data):
        if key not in allowed:
            raise where.child(key).fail(f"unknown key (expected one of: {', '.join(allowed)})")


def _string(value: object, where: _Where) -> str:
    if not isinstance(value, str) or not value.strip():
        raise where.fail(f"expected a non-empty string, got {_describe(value)}")
    return value.strip()


def _count(value: object, where: _Where) -> int:
    # bool is an int subclass in Python; "yes" for a node count is a mistake
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise where.fail(f"expected a non-negative integer, got {_describe(value)}")
    return value


def _scalar_text(value: object, where: _Where) -> str:
    # label values such as "true" or 8 arrive typed from YAML; Kubernetes wants strings
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str | int | float):
        return str(value)
    raise where.fail(f"expected a string, got {_describe(value)}")


def _optional(
    data: Mapping[str, Any], key: str, where: _Where, convert: Callable[[object, _Where], T], default: T
) -> T:
    if key not in data or data[key] is None:
        return default
    if data[key] == PLACEHOLDER and convert in _NUMBERS:  # a count or duration still to fill: unknown
        return default
    return convert(data[key], where.child(key))


def _string_list(value: object, where: _Where) -> tuple[str, ...]:
    if isinstance(value, str):
        return (_string(value, where),)
    if not isinstance(value, list):
        raise where.fail(f"expected a string or a list of strings, got {_describe(value)}")
    return tuple(_string(item, where.child(i)) for i, item in enumerate(value))


def _filesystems(value: object, where: _Where) -> tuple[FileSystemConfig, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise where.fail(f"expected a list of {{prefix, kind, pvc}} entries, got {_describe(value)}")
    out: list[FileSystemConfig] = []
    for i, item in enumerate(value):
        at = where.child(i)
        entry = _mapping(item, at)
        _only_keys(entry, at, ("prefix", "kind", "pvc", "name"))
        if "prefix" not in entry:
            raise at.child("prefix").fail("missing (expected a path such as /fsx or $SCRATCH)")
        prefix = _string(entry["prefix"], at.child("prefix"))
        if not (prefix.startswith("/") or prefix.startswith("$")):
            raise at.child("prefix").fail(f"expected an absolute path or $VARIABLE, got {_describe(prefix)}")
        out.append(
            FileSystemConfig(
                prefix=prefix.rstrip("/") or "/",
                kind=_optional(entry, "kind", at, _string, "unknown"),
                pvc=_optional(entry, "pvc", at, _string_list, ()),
                name=_optional(entry, "name", at, _string, None),
            )
        )
    return tuple(out)


def _node_selector(value: object, where: _Where) -> tuple[tuple[str, str], ...]:
    data = _mapping(value, where)
    return tuple(sorted((key, _scalar_text(data[key], where.child(key))) for key in data))


# migrate.yaml key -> PartitionConfig field, where the two differ (durations are written as Slurm
# writes them and kept in seconds).
_PARTITION_KEYS = {"default_time": "default_time_s", "max_time": "max_time_s"}


def _partitions(value: object, where: _Where) -> tuple[tuple[str, PartitionConfig], ...]:
    if value is None:
        return ()
    data = _mapping(value, where)
    by_key = {
        _yaml_key(f.name): f.name for f in fields(PartitionConfig) if f.name not in ("explicit", "origins")
    }
    allowed = tuple(by_key)
    out: list[tuple[str, PartitionConfig]] = []
    for name in sorted(data):
        at = where.child(name)
        entry = _mapping(data[name] if data[name] is not None else {}, at)
        _only_keys(entry, at, allowed)
        out.append(
            (
                name,
                PartitionConfig(
                    nodes=_optional(entry, "nodes", at, _count, 0),
                    gpus_per_node=_optional(entry, "gpus_per_node", at, _count, 0),
                    gpu_type=_optional(entry, "gpu_type", at, _string, None),
                    cpus_per_node=_optional(entry, "cpus_per_node", at, _count, None),
                    mem_gb=_optional(entry, "mem_gb", at, _count, None),
                    queue=_optional(entry, "queue", at, _string, None),
                    node_selector=_optional(entry, "node_selector", at, _node_selector, ()),
                    default=_optional(entry, "default", at, _flag, False),
                    def_mem_per_cpu_mb=_optional(entry, "def_mem_per_cpu_mb", at, _count, None),
                    def_mem_per_node_mb=_optional(entry, "def_mem_per_node_mb", at, _count, None),
                    def_mem_per_gpu_mb=_optional(entry, "def_mem_per_gpu_mb", at, _count, None),
                    def_cpu_per_gpu=_optional(entry, "def_cpu_per_gpu", at, _count, None),
                    default_time_s=_optional(entry, "default_time", at, _duration, None),
                    max_time_s=_optional(entry, "max_time", at, _duration, None),
                    memory_scheduled=_optional(entry, "memory_scheduled", at, _flag, None),
                    devices=_optional(entry, "devices", at, _devices, ()),
                    tolerations=_optional(entry, "tolerations", at, _tolerations, ()),
                    gpu_sharing=_optional(entry, "gpu_sharing", at, _gpu_sharing, None),
                    explicit=tuple(
                        sorted(by_key[key] for key in entry if entry[key] not in (None, PLACEHOLDER))
                    ),
                ),
            )
        )
    defaults = [name for name, part in out if part.default]
    if len(defaults) > 1:
        raise where.fail(f"{' and '.join(defaults)} both say default: true; Slurm has one default partition")
    return tuple(out)


def _yaml_key(field_name: str) -> str:
    for key, name in _PARTITION_KEYS.items():
        if name == field_name:
            return key
    return field_name


def _duration(value: object, where: _Where) -> int | None:
    """A Slurm duration (``2-00:00:00``, ``90:00``, ``UNLIMITED``) or a number of minutes, in seconds."""
    if isinstance(value, bool):
        raise where.fail(f"expected a Slurm duration such as 2-00:00:00, got {_describe(value)}")
    if isinstance(value, int) and value >= 0:
        return value * 60  # sbatch and slurm.conf read a bare number as minutes
    if not isinstance(value, str):
        raise where.fail(f"expected a Slurm duration such as 2-00:00:00, got {_describe(value)}")
    try:
        return parse_slurm_time(value.strip())
    except ValueError as exc:
        raise where.fail(str(exc)) from None


def _devices(value: object, where: _Where) -> tuple[tuple[str, int], ...]:
    data = _mapping(value, where)
    known = [key for key in data if data[key] != PLACEHOLDER]  # a count still to fill: no device yet
    return tuple(sorted((key, _count(data[key], where.child(key))) for key in known))


_SPANK_OPTION = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*\Z")
_TAKES_VALUE_WORDS: dict[object, str] = {True: "required", False: "none", "optional": "optional"}


def _spank_options(value: object, where: _Where) -> tuple[SpankOption, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise where.fail(f"expected a list of {{name, plugin, takes_value}} entries, got {_describe(value)}")
    out: list[SpankOption] = []
    for i, item in enumerate(value):
        at = where.child(i)
        entry = _mapping(item, at)
        _only_keys(entry, at, ("name", "plugin", "takes_value"))
        for key in ("name", "plugin"):
            if key not in entry:
                raise at.child(key).fail("missing (each entry names the option and the plugin that adds it)")
        name = _string(entry["name"], at.child("name")).strip()
        bare = name[2:] if name.startswith("--") else name
        if not _SPANK_OPTION.match(bare):
            raise at.child("name").fail(f"expected a long option such as --ssd-size, got {_describe(name)}")
        takes = entry.get("takes_value", True)
        if takes not in _TAKES_VALUE_WORDS or (isinstance(takes, int) and not isinstance(takes, bool)):
            raise at.child("takes_value").fail(f"expected true, false or optional, got {_describe(takes)}")
        plugin = _string(entry["plugin"], at.child("plugin")).strip()
        out.append(SpankOption(bare, plugin, _TAKES_VALUE_WORDS[takes]))
    return tuple(out)


_TOLERATION_KEYS = ("key", "operator", "value", "effect", "tolerationSeconds")


def _tolerations(value: object, where: _Where) -> tuple[tuple[tuple[str, str], ...], ...]:
    if not isinstance(value, list):
        raise where.fail(
            f"expected a list of {{key, operator, value, effect}} entries, got {_describe(value)}"
        )
    out: list[tuple[tuple[str, str], ...]] = []
    for i, item in enumerate(value):
        at = where.child(i)
        entry = _mapping(item, at)
        _only_keys(entry, at, _TOLERATION_KEYS)
        out.append(
            tuple((key, _scalar_text(entry[key], at.child(key))) for key in _TOLERATION_KEYS if key in entry)
        )
    return tuple(out)


def _flag(value: object, where: _Where) -> bool:
    if not isinstance(value, bool):
        raise where.fail(f"expected true or false, got {_describe(value)}")
    return value


_NAME_MAPS = ("images", "accounts", "qos", "gpu_products", "gres", "licenses")


def _features(value: object, where: _Where) -> tuple[tuple[str, tuple[tuple[str, str], ...]], ...]:
    if value is None:
        return ()
    data = _mapping(value, where)
    return tuple(sorted((key, _node_selector(data[key], where.child(key))) for key in data))


def _images(value: object, where: _Where) -> tuple[tuple[str, str], ...]:
    if value is None:
        return ()
    data = _mapping(value, where)
    return tuple(sorted((key, _string(data[key], where.child(key))) for key in data))


def _defaults(value: object, where: _Where) -> Defaults:
    if value is None:
        return Defaults()
    data = _mapping(value, where)
    _only_keys(data, where, ("image", "namespace", "shm_size"))
    return Defaults(
        image=_optional(data, "image", where, _string, None),
        namespace=_optional(data, "namespace", where, _string, "default"),
        shm_size=_optional(data, "shm_size", where, _scalar_text, None),
    )


def _kubernetes(value: object, where: _Where) -> KubernetesSettings:
    if value is None:
        return KubernetesSettings()
    data = _mapping(value, where)
    _only_keys(
        data, where, ("cpu_limits", "reserved_cpus", "reserved_memory_pct", "user", "home", "submit_dirs")
    )
    policy = _optional(data, "cpu_limits", where, _string, KubernetesSettings.cpu_limits)
    if policy not in CPU_LIMIT_POLICIES:
        raise where.child("cpu_limits").fail(
            f"expected one of {', '.join(CPU_LIMIT_POLICIES)}, got {policy!r}"
        )
    pct = _optional(data, "reserved_memory_pct", where, _count, KubernetesSettings.reserved_memory_pct)
    if pct >= 100:
        raise where.child("reserved_memory_pct").fail("expected a percentage below 100")
    return KubernetesSettings(
        cpu_limits=policy,
        reserved_cpus=_optional(data, "reserved_cpus", where, _count, KubernetesSettings.reserved_cpus),
        reserved_memory_pct=pct,
        user=_optional(data, "user", where, _string, KubernetesSettings.user),
        home=_optional(data, "home", where, _string, None),
        submit_dirs=_submit_dirs(data.get("submit_dirs"), where.child("submit_dirs")),
    )


def _submit_dirs(value: object, where: _Where) -> tuple[tuple[str, str], ...]:
    if value is None:
        return ()
    out = []
    for key, folder in _mapping(value, where).items():
        text = _string(folder, where.child(key))
        if not text.startswith("/"):
            raise where.child(key).fail(f"expected an absolute folder on the cluster, got {text!r}")
        scanned = key.strip().removeprefix("./").rstrip("/")
        out.append(("" if scanned == "." else scanned, text.rstrip("/") or "/"))
    return tuple(sorted(out, key=lambda pair: -len(pair[0])))


def _gpu_sharing(value: object, where: _Where) -> str:
    text = _string(value, where)
    if text not in GPU_SHARING:
        raise where.fail(f"expected one of {', '.join(GPU_SHARING)}, got {text!r}")
    return text


_VERSION = re.compile(r"^\d+(\.\d+)*$")


def _versions(value: object, where: _Where) -> SiteVersions:
    if value is None:
        return SiteVersions()
    data = _mapping(value, where)
    _only_keys(data, where, ("slurm", "kubernetes"))
    given: dict[str, str] = {}
    for key in ("slurm", "kubernetes"):
        if data.get(key) is None:
            continue
        if not isinstance(data[key], str):  # YAML reads 1.30 as the number 1.3
            raise where.child(key).fail(f'quote the release ("{data[key]}"): YAML reads it as a number')
        text = data[key].removeprefix("v")
        if not _VERSION.match(text):
            raise where.child(key).fail(f"expected a release number such as 24.05 or 1.31, got {text!r}")
        given[key] = text
    return SiteVersions(**given)


def _thresholds(value: object, where: _Where) -> Thresholds:
    if value is None:
        return Thresholds()
    data = _mapping(value, where)
    names = tuple(f.name for f in fields(Thresholds))
    _only_keys(data, where, names)
    given = {name: _count(data[name], where.child(name)) for name in names if name in data}
    if given.get("large_training_nodes", 1) < 1:
        raise where.child("large_training_nodes").fail("expected at least 1")
    return Thresholds(**given)


# The converters of counts and durations: the keys a PLACEHOLDER may stand in for.
_NUMBERS: tuple[Callable[..., object], ...] = (_count, _duration)

__all__ = [
    "CONFIG_NAME",
    "CPU_LIMIT_POLICIES",
    "GPU_SHARING",
    "PLACEHOLDER",
    "VCS_MARKERS",
    "Defaults",
    "FileSystemConfig",
    "KubernetesSettings",
    "PartitionConfig",
    "SiteConfig",
    "SiteConfigError",
    "SiteVersions",
    "Thresholds",
    "find_site_configs",
    "load_site_config",
    "nearest_site_config",
    "parse_site_config",
    "parse_site_config_text",
]
