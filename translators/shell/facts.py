"""What a shell body tells about a job, independent of the scheduler."""

from __future__ import annotations

from dataclasses import dataclass

from migrate import ir


@dataclass(frozen=True)
class BodyFacts:
    """Everything the shell analysis found in one script body.

    Line numbers are absolute line numbers in the file, not in the body.
    """

    launchers: tuple[ir.Launcher, ...] = ()
    containers: tuple[ir.Container, ...] = ()
    modules: tuple[str, ...] = ()
    software_envs: tuple[ir.KeyValue, ...] = ()
    environment: tuple[ir.EnvVar, ...] = ()
    storage: tuple[ir.StoragePath, ...] = ()
    monitoring: tuple[ir.MonitoringHook, ...] = ()
    trackers_off: tuple[str, ...] = ()  # trackers a setting switches off (tracker_switches)
    submits: tuple[ir.Submission, ...] = ()
    slurm_vars: tuple[str, ...] = ()
    statements: int = 0
    understood: int = 0
    unparsed: tuple[ir.Unparsed, ...] = ()
    self_resubmit: bool = False
    signals_trapped: tuple[str, ...] = ()
    raw: tuple[ir.RawItem, ...] = ()
