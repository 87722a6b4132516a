"""Which site configuration a command uses: the one given, else the nearest ``migrate.yaml``.

Kept apart from ``migrate.api`` so that a scan finds its site without loading the planners.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from migrate import UsageError
from migrate.site import config as siteconfig
from migrate.site.config import SiteConfig, SiteConfigError


def load_config(config: str | None, roots: Sequence[str]) -> tuple[SiteConfig, str | None]:
    """The given site configuration, else the nearest ``migrate.yaml`` above ``roots``, else defaults."""
    found = find_config(roots) if not config else None
    path = Path(config) if config else (Path(found) if found else None)
    if config and not Path(config).exists():
        raise UsageError(f"no such site configuration: {config}; check the path given to --config")
    if config and not Path(config).is_file():
        raise UsageError(f"site configuration {config} is not a file; give the path of a migrate.yaml")
    try:
        return siteconfig.load_site_config(path), (str(path) if path else None)
    except SiteConfigError as exc:
        raise UsageError(f"bad site configuration: {exc}; fix it or pass another file with --config") from exc


def find_config(paths: Sequence[str]) -> str | None:
    """The nearest ``migrate.yaml`` above every path, the same one for all of them, or None."""
    found = siteconfig.find_site_configs(paths)
    if len(found) > 1:
        raise UsageError(
            f"the given paths are under two site configurations, {found[0]} and {found[1]}; "
            "pass the one to use with --config"
        )
    return found[0] if found else None
