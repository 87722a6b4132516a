"""State shared by the pieces of the Slurm writer while they translate one job."""

from __future__ import annotations

from dataclasses import dataclass, field

from migrate import ir
from migrate.diagnostics import Collector
from migrate.fidelity import FidelityLog
from migrate.site.config import SiteConfig
from migrate.translators.job_variables import SLURM, bash_value

# Container runtimes the writer can target (``--container-runtime``).
PYXIS = "pyxis"
APPTAINER = "apptainer"
SHIFTER = "shifter"  # NERSC: the job's image in #SBATCH --image, `shifter` before each program
PODMAN_HPC = "podman-hpc"  # NERSC: `podman-hpc run` per step
NO_RUNTIME = "none"
# Runtimes told the job's variables by name: pyxis --container-env (the host's value over the
# image's), podman -e (the container sees no others).
NAMES_VARIABLES = (PYXIS, PODMAN_HPC)
RUNTIMES = (PYXIS, APPTAINER, SHIFTER, PODMAN_HPC, NO_RUNTIME)
DEFAULT_RUNTIME = PYXIS  # enroot/pyxis is the usual way GPU clusters run images under Slurm

# Where scripts look for provisioned secrets and ConfigMap files at run time.
SECRETS_DIR = f'"{bash_value(SLURM.SECRETS_DIR)}"'
CONFIG_DIR = f'"{bash_value(SLURM.CONFIG_DIR)}"'


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
    job_image: str | None = None  # the image the script's #SBATCH --image names (Shifter)

    def diag(self, code: str, message: str, line: int | None = None) -> None:
        self.diags.add(code, message, line, self.job.id)

    def raw(self, key: str) -> list[ir.RawItem]:
        return [item for item in self.job.raw if item.key == key]


__all__ = [
    "APPTAINER",
    "CONFIG_DIR",
    "DEFAULT_RUNTIME",
    "NAMES_VARIABLES",
    "NO_RUNTIME",
    "PODMAN_HPC",
    "PYXIS",
    "RUNTIMES",
    "SECRETS_DIR",
    "SHIFTER",
    "Context",
    "runtime_for",
]
