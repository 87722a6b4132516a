"""Monitoring bolted onto jobs: GPU samplers, metrics pushes, experiment trackers, mail.

Each hook says what it is (``kind``), a short ``detail`` a reviewer can act
on (never a credential) and its line. On Kubernetes most become sidecars,
exporters or plain environment, so the kind matters more than the text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from migrate import ir
from migrate.secrets import looks_like_secret
from migrate.vocab import MonitoringKind

from .launchers import basename
from .model import Word
from .redact import redact
from .tracker_switches import env_switch, option_switch

_TRACKERS = ("wandb", "tensorboard", "mlflow", "comet_ml", "comet", "neptune", "clearml", "aim", "dvclive")
_TRACKER_KIND = {"comet_ml": "comet"}
_TRACKER_OPTIONS = frozenset({"report_to", "logger", "loggers", "log_with", "tracker", "trackers"})
_ENV_PREFIXES = {
    "WANDB_": "wandb",
    "MLFLOW_": "mlflow",
    "COMET_": "comet",
    "NEPTUNE_": "neptune",
    "CLEARML_": "clearml",
    "TENSORBOARD_": "tensorboard",
}
_PUSH_CALL = re.compile(r"\bpush_to_gateway\b|\bpushadd_to_gateway\b")
_PROM_FILE = re.compile(r"\.prom(?:\.[^/]*)?\Z")
_MAX_DETAIL = 160


def _detail(text: str) -> str:
    text = redact(" ".join(text.split()))
    return text if len(text) <= _MAX_DETAIL else text[: _MAX_DETAIL - 3] + "..."


def _hook(kind: str, detail: str, line: int | None) -> ir.MonitoringHook:
    return ir.MonitoringHook(kind=kind, detail=_detail(detail), line=line)


def program_hooks(
    program: Sequence[Word], background: bool, writes_to: str | None
) -> list[ir.MonitoringHook]:
    """Hooks a program is, by its name: nvidia-smi, dcgmi, curl to a pushgateway, wandb ..."""
    if not program:
        return []
    name = basename(program[0].value)
    args = [w.value for w in program[1:]]
    line = program[0].line
    extra = [
        part for part in ("background" if background else "", f"to {writes_to}" if writes_to else "") if part
    ]

    def described(main: str) -> str:
        return ", ".join([part for part in (main.strip(),) if part] + extra)

    if name == "nvidia-smi":
        return [_hook(MonitoringKind.NVIDIA_SMI, described(_nvidia_smi_mode(args)), line)]
    if name == "dcgmi":
        return [_hook(MonitoringKind.DCGM, described(" ".join(args)), line)]
    if name in ("dcgm-exporter", "dcgm_exporter"):
        return [_hook(MonitoringKind.DCGM_EXPORTER, described(" ".join(args)), line)]
    if name in ("curl", "wget", "http", "https"):
        return _http_hooks(args, line)
    if name in ("wandb", "mlflow", "tensorboard", "aim", "clearml-agent"):
        kind = MonitoringKind.CLEARML if name == "clearml-agent" else name
        if name == "wandb":
            return [_hook(MonitoringKind.WANDB, "wandb " + (args[0] if args else ""), line)]
        return [_hook(kind, described(f"{name} {' '.join(args)}"), line)]
    if name in ("mail", "mailx", "sendmail", "mutt"):
        recipients = _mail_recipients(args)
        return [_hook(MonitoringKind.MAIL, ("to " + " ".join(recipients)) if recipients else name, line)]
    if name in ("sstat", "seff"):
        return [_hook(name, " ".join([name, *args]), line)]
    if name in ("nvidia-dcgm", "nv-hostengine"):
        return [_hook(MonitoringKind.DCGM, described(name), line)]
    return []


def _nvidia_smi_mode(args: Sequence[str]) -> str:
    if args[:1] and args[0] in ("dmon", "pmon"):
        return " ".join(args)
    for i, a in enumerate(args):
        if a in ("-l", "--loop", "-lms", "--loop-ms") and i + 1 < len(args):
            unit = "ms" if "ms" in a else "s"
            return f"loop every {args[i + 1]}{unit}"
        if a.startswith(("--loop=", "--loop-ms=")):
            unit = "ms" if "ms" in a else "s"
            return f"loop every {a.split('=', 1)[1]}{unit}"
        if a.startswith("-l") and (a[2:].isascii() and a[2:].isdigit()):
            return f"loop every {a[2:]}s"
    if any(a.startswith("--query") for a in args):
        return "query once"
    return "once" if not args else "once: " + " ".join(args)


def _http_hooks(args: Sequence[str], line: int) -> list[ir.MonitoringHook]:
    out: list[ir.MonitoringHook] = []
    for a in args:
        lowered = a.lower()
        if "hooks.slack.com" in lowered:
            out.append(_hook(MonitoringKind.SLACK_WEBHOOK, "hooks.slack.com", line))
        elif "pushgateway" in lowered or re.search(r":9091(?:/|\b)", a):
            out.append(_hook(MonitoringKind.PROMETHEUS_PUSHGATEWAY, a, line))
        elif "webhook.office.com" in lowered or "discord.com/api/webhooks" in lowered:
            host = re.sub(r"^[a-z]+://", "", lowered).split("/", 1)[0]
            out.append(_hook(MonitoringKind.WEBHOOK, host, line))
    return out


def _mail_recipients(args: Sequence[str]) -> list[str]:
    out: list[str] = []
    skip = False
    for a in args:
        if skip:
            skip = False
            continue
        if a in ("-s", "-a", "-r", "-c", "-b", "-S", "-f", "-F", "-A", "-q"):
            skip = True
            continue
        if a.startswith("-"):
            continue
        out.append(a)
    return out


def argument_hooks(words: Sequence[Word]) -> list[ir.MonitoringHook]:
    """--report_to wandb, --logger tensorboard, --tb-logdir DIR, --wandb-project X ...

    One hook per tracker and command, its detail the options that name it.
    """
    found: dict[str, tuple[list[str], int]] = {}

    def note(kind: str, text: str, line: int) -> None:
        found.setdefault(kind, ([], line))[0].append(text)

    for i, word in enumerate(words):
        value = word.value
        if not value.startswith("-") and "=" not in value:
            continue
        name, eq, given = value.lstrip("-").partition("=")
        lowered = name.lower().replace("-", "_")
        nxt = words[i + 1].value if i + 1 < len(words) else ""
        option_value = given if eq else ("" if nxt.startswith("-") else nxt)
        shown = value if eq else f"{value} {option_value}".strip()
        if option_switch(name, option_value) is not None:
            continue  # --report_to none, create_wandb_logger=False: the tracker is off
        if lowered.rsplit(".", 1)[-1] in _TRACKER_OPTIONS:
            for tracker in _TRACKERS:
                kind = _TRACKER_KIND.get(tracker, tracker)
                if tracker in option_value.lower() and kind not in found:
                    note(kind, shown, word.line)
        elif "wandb" in lowered:
            note(
                MonitoringKind.WANDB, value.partition("=")[0] if looks_like_secret(name) else shown, word.line
            )
        elif "tensorboard" in lowered or lowered.startswith(("tb_log", "tb_dir")):
            note(MonitoringKind.TENSORBOARD, shown, word.line)
    return [_hook(kind, " ".join(parts), line) for kind, (parts, line) in found.items()]


def env_hook(name: str, value: str | None, line: int) -> ir.MonitoringHook | None:
    """WANDB_*, MLFLOW_*, ... exports configure a tracker (WANDB_MODE=disabled switches it off)."""
    if env_switch(name, value) is not None:
        return None
    for prefix, kind in _ENV_PREFIXES.items():
        if name.startswith(prefix):
            shown = name if (looks_like_secret(name) or value is None) else f"{name}={value}"
            return _hook(kind, shown, line)
    return None


def argument_switches(words: Sequence[Word]) -> list[str]:
    """The trackers the options of one command switch off (``--report_to none``: all of them)."""
    found: list[str] = []
    for i, word in enumerate(words):
        value = word.value
        if not value.startswith("-") and "=" not in value:
            continue
        name, eq, given = value.partition("=")
        nxt = words[i + 1].value if i + 1 < len(words) else ""
        off = option_switch(name, given if eq else ("" if nxt.startswith("-") else nxt))
        if off is not None:
            found.append(off)
    return found


def text_hooks(code: str, start_line: int) -> list[ir.MonitoringHook]:
    """prometheus_client's push_to_gateway called from inline Python."""
    if "push" not in code:  # a plain search is much cheaper than the pattern over a whole body
        return []
    return [
        _hook(MonitoringKind.PROMETHEUS_PUSHGATEWAY, m.group(), start_line + code.count("\n", 0, m.start()))
        for m in _PUSH_CALL.finditer(code)
    ]


def textfile_hook(path: str, line: int) -> ir.MonitoringHook | None:
    """A write to a node_exporter textfile collector file (*.prom, or its temp name)."""
    m = _PROM_FILE.search(path)
    if not m:
        return None
    return _hook(MonitoringKind.NODE_EXPORTER_TEXTFILE, path[: m.start()] + ".prom", line)


def profiler_hook(name: str, option_words: Sequence[Word], line: int) -> ir.MonitoringHook:
    values = [w.value for w in option_words]
    output = ""
    for i, v in enumerate(values):
        if v in ("-o", "--output", "--export") and i + 1 < len(values):
            output = values[i + 1]
        elif v.startswith(("--output=", "--export=")):
            output = v.split("=", 1)[1]
    verb = values[0] if name == "nsys" and values else ""
    return _hook(name, " ".join(p for p in (verb, f"-o {output}" if output else "") if p) or name, line)
