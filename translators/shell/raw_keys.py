"""The raw-item keys the shell analysis gives what it keeps from a script, and what each holds.

Both readers analyse scripts (sbatch bodies, the commands of pods), so both
writers have a row for each of these keys.
"""

from __future__ import annotations

from migrate import ir

CONDA_TOOLS = ("conda", "mamba", "micromamba")
CONDA_VERBS = ("install", "create", "env", "update")  # kept; 'activate' becomes a software environment

RAW_KEYS = ir.RawKeys(
    {
        "module": "a module command other than load (purge, use, unload, swap ...)",
        "spack": "a spack command other than load and env activate",
        "source": "a file sourced into the shell that is no environment's activate script",
        "pip-install": "the arguments of a pip install",
        "ulimit": "the arguments of ulimit",
        **{
            f"{tool}-{verb}": f"the arguments of {tool} {verb}"
            for tool in CONDA_TOOLS
            for verb in CONDA_VERBS
        },
    }
)

__all__ = ["CONDA_TOOLS", "CONDA_VERBS", "RAW_KEYS"]
