"""What the writer asks of the site configuration, in one place.

The writer works without a config (every lookup then misses and the caller
writes a placeholder plus a diagnostic). Mappings that ``SiteConfig`` does not
have yet are read by attribute name when present, so the writer picks them up
as soon as the config grows them; the expected shape of each is documented on
its method (a tuple of ``(key, value)`` pairs, like ``SiteConfig.images``).
"""

from __future__ import annotations

from dataclasses import dataclass

from migrate.site.config import FileSystemConfig, KubernetesSettings, PartitionConfig, SiteConfig, SpankOption


def _pairs(config: SiteConfig | None, attr: str) -> tuple[tuple[str, object], ...]:
    value = getattr(config, attr, None) if config is not None else None
    if isinstance(value, dict):
        return tuple(sorted(value.items()))
    if isinstance(value, tuple):
        return tuple(p for p in value if isinstance(p, tuple) and len(p) == 2)
    return ()


def _lookup(config: SiteConfig | None, attr: str, key: str) -> object | None:
    for k, v in _pairs(config, attr):
        if k == key:
            return v
    return None


def _selector(value: object) -> tuple[tuple[str, str], ...]:
    """A node selector given as a mapping, pairs, or one ``key=value`` string."""
    if isinstance(value, dict):
        return tuple(sorted((str(k), str(v)) for k, v in value.items()))
    if isinstance(value, tuple) and all(isinstance(p, tuple) and len(p) == 2 for p in value):
        return tuple((str(k), str(v)) for k, v in value)
    if isinstance(value, str) and "=" in value:
        key, _, val = value.partition("=")
        return ((key.strip(), val.strip()),)
    return ()


@dataclass(frozen=True)
class Site:
    config: SiteConfig | None = None

    @property
    def name(self) -> str:
        return self.config.site if self.config else "site"

    @property
    def default_image(self) -> str | None:
        return self.config.defaults.image if self.config else None

    @property
    def default_namespace(self) -> str | None:
        # None when there is no config: the manifests then carry no namespace
        return self.config.defaults.namespace if self.config else None

    @property
    def kubernetes(self) -> KubernetesSettings:
        """How pods are sized: CPU limits and what each node keeps for itself."""
        return self.config.kubernetes if self.config else KubernetesSettings()

    @property
    def spank_options(self) -> tuple[SpankOption, ...]:
        """The #SBATCH options of the site's own SPANK plugins."""
        return self.config.spank_options if self.config else ()

    def partition(self, name: str | None) -> PartitionConfig | None:
        if self.config is None or not name:
            return None
        return self.config.partition(name)

    def image_for(self, key: str) -> str | None:
        return self.config.image_for(key) if self.config else None

    def filesystem_for(self, path: str) -> FileSystemConfig | None:
        """The configured file system with the longest prefix that holds ``path``."""
        if self.config is None:
            return None
        best: FileSystemConfig | None = None
        for fs in self.config.filesystems:
            prefix = fs.prefix
            if (path == prefix or path.startswith(prefix.rstrip("/") + "/")) and (
                best is None or len(prefix) > len(best.prefix)
            ):
                best = fs
        return best

    # Mappings read by name (not in SiteConfig yet; see the module docstring).

    def namespace_for_account(self, account: str) -> str | None:
        """``accounts``: Slurm account -> namespace."""
        value = _lookup(self.config, "accounts", account)
        return str(value) if value else None

    def priority_class_for_qos(self, qos: str) -> str | None:
        """``qos``: Slurm QOS -> PriorityClass / WorkloadPriorityClass name."""
        value = _lookup(self.config, "qos", qos)
        return str(value) if value else None

    def gpu_product(self, gpu_type: str) -> str | None:
        """``gpu_products``: GRES type (a100) -> ``nvidia.com/gpu.product`` label value."""
        value = _lookup(self.config, "gpu_products", gpu_type)
        return str(value) if value else None

    def feature_selector(self, feature: str) -> tuple[tuple[str, str], ...]:
        """``features``: node feature (``--constraint`` word) -> node selector."""
        return _selector(_lookup(self.config, "features", feature))

    def extended_resource(self, gres: str) -> str | None:
        """``gres``: GRES name (nvme, efa) -> extended resource name (vpc.amazonaws.com/efa)."""
        value = _lookup(self.config, "gres", gres)
        return str(value) if value else None

    def license_resource(self, license_name: str) -> str | None:
        """``licenses``: license name -> Kueue-counted resource (licenses.example.com/matlab)."""
        value = _lookup(self.config, "licenses", license_name)
        return str(value) if value else None


__all__ = ["Site"]
