"""State shared by the pieces of the Slurm writer while they translate one job."""

from __future__ import annotations

from dataclasses import dataclass, field

from migrate import ir
from migrate.diagnostics import Collector
from migrate.fidelity import FidelityLog
from migrate.site.config import SiteConfig
from migrate.translators import runtimes
from migrate.translators.job_variables import SLURM, bash_value
from migrate.translators.runtimes import Launch
from migrate.vocab import ContainerRuntime

# The container runtimes the writer can target (``--container-runtime``) are those of
# translators/runtimes.py with a Launch; ``none`` runs the programs on the nodes.
NO_RUNTIME = "none"
DEFAULT_RUNTIME = ContainerRuntime.PYXIS  # enroot/pyxis is the usual way GPU clusters run images under Slurm

# Where scripts look for provisioned secrets and ConfigMap files at run time.
SECRETS_DIR = f'"{bash_value(SLURM.SECRETS_DIR)}"'
CONFIG_DIR = f'"{bash_value(SLURM.CONFIG_DIR)}"'


def choices() -> tuple[str, ...]:
    """What ``--container-runtime`` takes, besides ``auto``."""
    return (*runtimes.launched(), NO_RUNTIME)


def runtime_for(runtime: str | None) -> str:
    """The container runtime a caller asked for (``auto``: the default one)."""
    if runtime in (None, "", "auto"):
        return DEFAULT_RUNTIME
    if runtime not in choices():
        raise ValueError(f"unknown container runtime {runtime!r}; expected one of {', '.join(choices())}")
    return runtime


@dataclass
class Context:
    job: ir.Job
    config: SiteConfig | None
    runtime: str
    name: str
    diags: Collector
    fidelity: FidelityLog = field(default_factory=FidelityLog)
    job_image: str | None = None  # the image the script's #SBATCH --image names (Shifter)

    @property
    def launch(self) -> Launch | None:
        """How the chosen runtime starts a container; None without one (``none``)."""
        return runtimes.launch_of(self.runtime)

    @property
    def names_variables(self) -> bool:
        """The container sees the job's variables only as the srun line names them to it."""
        return self.launch is not None and self.launch.names_variables

    def diag(self, code: str, message: str, line: int | None = None) -> None:
        self.diags.add(code, message, line, self.job.id)

    def raw(self, key: str) -> list[ir.RawItem]:
        return [item for item in self.job.raw if item.key == key]


__all__ = [
    "CONFIG_DIR",
    "DEFAULT_RUNTIME",
    "NO_RUNTIME",
    "SECRETS_DIR",
    "Context",
    "choices",
    "runtime_for",
]
