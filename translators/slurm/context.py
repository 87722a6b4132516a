"""State shared by the pieces of the Slurm writer while they translate one job."""

from __future__ import annotations

from dataclasses import dataclass, field

from migrate import ir
from migrate.diagnostics import Collector
from migrate.fidelity import FidelityLog
from migrate.site.config import SiteConfig

# Container runtimes the writer can target (``--container-runtime``).
PYXIS = "pyxis"
APPTAINER = "apptainer"
NO_RUNTIME = "none"
RUNTIMES = (PYXIS, APPTAINER, NO_RUNTIME)
DEFAULT_RUNTIME = PYXIS  # enroot/pyxis is the usual way GPU clusters run images under Slurm

# Where scripts look for provisioned secrets and ConfigMap files at run time.
SECRETS_DIR = '"${MIGRATE_SECRETS_DIR:-$HOME/.migrate/secrets}"'
CONFIG_DIR = '"${MIGRATE_CONFIG_DIR:-$HOME/.migrate/configmaps}"'


def runtime_for(runtime: str | None) -> str:
    """The container runtime a caller asked for (``auto``: the default one)."""
    if runtime in (None, "", "auto"):
        return DEFAULT_RUNTIME
    if runtime not in RUNTIMES:
        raise ValueError(f"unknown container runtime {runtime!r}; expected one of {', '.join(RUNTIMES)}")
    return runtime


@dataclass
class Context:
    job: ir.Job
    config: SiteConfig | None
    runtime: str
    name: str
    diags: Collector
    fidelity: FidelityLog = field(default_factory=FidelityLog)

    def diag(self, code: str, message: str, line: int | None = None) -> None:
        self.diags.add(code, message, line, self.job.id)

    def raw(self, key: str) -> list[ir.RawItem]:
        return [item for item in self.job.raw if item.key == key]


__all__ = [
    "APPTAINER",
    "CONFIG_DIR",
    "DEFAULT_RUNTIME",
    "NO_RUNTIME",
    "PYXIS",
    "RUNTIMES",
    "SECRETS_DIR",
    "Context",
    "runtime_for",
]
