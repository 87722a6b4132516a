"""The ConfigMaps a job uses from its own manifest file, as the IR carries them.

The reader keeps the data of each ConfigMap of the job's file that the job
mounts or reads variables from (``ir.Job.config_maps``), literal credentials
already taken out; ConfigMaps in other files are not known, and the scripts
then read the files at run time. A variable in ``credentials`` stands for a
credential that was taken out: the job script reads it from a provisioned file.
"""

from __future__ import annotations

from dataclasses import dataclass

from migrate import ir


@dataclass(frozen=True)
class Credential:
    """A variable that now stands for a literal credential of a ConfigMap."""

    variable: str
    config_map: str
    key: str


class ConfigMaps(dict[str, dict[str, str]]):
    """name -> data, without literal credentials; ``credentials`` names the variables that replace them."""

    credentials: tuple[Credential, ...] = ()


def for_job(job: ir.Job) -> ConfigMaps:
    """The ConfigMaps of the job's own file that it uses."""
    out = ConfigMaps()
    for config_map in job.config_maps:
        out[config_map.name] = {kv.key: kv.value for kv in config_map.data}
    out.credentials = tuple(
        Credential(c.variable, m.name, c.key) for m in job.config_maps for c in m.credentials
    )
    return out


__all__ = ["ConfigMaps", "Credential", "for_job"]
