"""The site configuration, ``migrate.yaml``: mount table, partitions, images, thresholds.

Everything has a default so that a scan without a config still plans. The
thresholds default to the values in the decision tables (see ``migrate/classify_rules.py``);
the plan and the report cite them by name, so a site that disagrees changes one
number here instead of the code.

Validation is strict on purpose: an unknown key is almost always a typo that
would silently fall back to a default, so it is an error with its key path.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, TypeVar

import yaml

CONFIG_NAME = "migrate.yaml"
DEFAULT_GPUS_PER_NODE = 8  # the common 8-GPU server, when migrate.yaml says nothing

T = TypeVar("T")


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
    """A Slurm partition and its Kubernetes mirror (queue and node selector)."""

    nodes: int = 0
    gpus_per_node: int = 0
    gpu_type: str | None = None
    cpus_per_node: int | None = None
    mem_gb: int | None = None
    queue: str | None = None
    node_selector: tuple[tuple[str, str], ...] = ()
    default: bool = False  # slurm.conf Default=YES: where a job without --partition runs
    # Keys written in migrate.yaml, so that a slurm.conf or ParallelCluster inventory fills only the others.
    explicit: tuple[str, ...] = ()


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
    source: str | None = None  # the file it came from, for messages and the report

    def partition(self, name: str) -> PartitionConfig | None:
        for part_name, part in self.partitions:
            if part_name == name:
                return part
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
        top, where, ("site", "filesystems", "partitions", *_NAME_MAPS, "features", "defaults", "thresholds")
    )
    return SiteConfig(
        site=_optional(top, "site", where, _string, "site"),
        filesystems=_filesystems(top.get("filesystems"), where.child("filesystems")),
        partitions=_partitions(top.get("partitions"), where.child("partitions")),
        **{key: _images(top.get(key), where.child(key)) for key in _NAME_MAPS},  # type: ignore[arg-type]
        features=_features(top.get("features"), where.child("features")),
        defaults=_defaults(top.get("defaults"), where.child("defaults")),
        thresholds=_thresholds(top.get("thresholds"), where.child("thresholds")),
        source=source,
    )


def find_site_config(roots: list[str] | list[Path]) -> Path | None:
    """The first ``migrate.yaml`` at the top of one of the scanned roots, if any."""
    for root in roots:
        base = Path(root)
        candidate = base / CONFIG_NAME if base.is_dir() else base.parent / CONFIG_NAME
        if candidate.is_file():
            return candidate
    return None


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


def _partitions(value: object, where: _Where) -> tuple[tuple[str, PartitionConfig], ...]:
    if value is None:
        return ()
    data = _mapping(value, where)
    allowed = tuple(f.name for f in fields(PartitionConfig) if f.name != "explicit")
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
                    explicit=tuple(sorted(key for key in entry if entry[key] is not None)),
                ),
            )
        )
    defaults = [name for name, part in out if part.default]
    if len(defaults) > 1:
        raise where.fail(f"{' and '.join(defaults)} both say default: true; Slurm has one default partition")
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


__all__ = [
    "CONFIG_NAME",
    "Defaults",
    "FileSystemConfig",
    "PartitionConfig",
    "SiteConfig",
    "SiteConfigError",
    "Thresholds",
    "find_site_config",
    "load_site_config",
    "parse_site_config",
    "parse_site_config_text",
]
