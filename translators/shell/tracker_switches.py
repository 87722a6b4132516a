"""Settings that switch an experiment tracker off: a job that says so is not monitored by it.

``WANDB_MODE=disabled`` (no logging) or ``offline`` (logs kept on local disk,
nothing sent), ``WANDB_DISABLED=true``, an option naming W&B set to false
(``exp_manager.create_wandb_logger=False``, ``--use_wandb false``) and
``--report_to none`` (Hugging Face's Trainer: no integration at all).

Example::

    env_switch("WANDB_MODE", "disabled")          # "wandb"
    option_switch("--report_to", "none")          # ALL_TRACKERS
    without_switched_off(hooks, {"wandb"})        # the hooks of other trackers
"""

from __future__ import annotations

from collections.abc import Iterable

from migrate import ir

ALL_TRACKERS = "*"  # --report_to none: every tracker the option could name is off
# The tracker kinds monitoring.py gives hooks of; an off switch removes only these.
TRACKER_KINDS = frozenset({"wandb", "tensorboard", "mlflow", "comet", "neptune", "clearml", "aim", "dvclive"})
_FALSE = frozenset({"false", "0", "no", "off", "none", "disabled"})
_TRUE = frozenset({"true", "1", "yes", "on"})
_OFF_MODES = {"WANDB_MODE": ("wandb", frozenset({"disabled", "offline", "dryrun"}))}
_OFF_FLAGS = {"WANDB_DISABLED": "wandb"}
_REPORT_OPTIONS = frozenset({"report_to", "log_with"})


def env_switch(name: str, value: str | None) -> str | None:
    """The tracker an environment variable switches off, if it does."""
    if value is None:
        return None
    text = value.strip().strip("'\"").lower()
    if name in _OFF_MODES:
        kind, modes = _OFF_MODES[name]
        return kind if text in modes else None
    if name in _OFF_FLAGS and text in _TRUE:
        return _OFF_FLAGS[name]
    return None


def option_switch(name: str, value: str) -> str | None:
    """The tracker an option (``--name value`` or ``name=value``) switches off: W&B, or all of them."""
    key = name.lstrip("-").lower().replace("-", "_").rsplit(".", 1)[-1]
    text = value.strip().strip("'\"").lower()
    if key in _REPORT_OPTIONS:
        return ALL_TRACKERS if text in ("none", "") and value else None
    if "wandb" in key and text in _FALSE:
        return "wandb"
    return None


def without_switched_off(hooks: Iterable[ir.MonitoringHook], off: Iterable[str]) -> list[ir.MonitoringHook]:
    """The hooks left once the trackers in ``off`` are known to be off."""
    gone = set(off)
    if ALL_TRACKERS in gone:
        gone |= TRACKER_KINDS
    return [hook for hook in hooks if hook.kind not in gone]


__all__ = ["ALL_TRACKERS", "TRACKER_KINDS", "env_switch", "option_switch", "without_switched_off"]
