"""Environment variables, modules and software environments set up by a body.

Values are kept verbatim (``$(...)`` and ``$VAR`` included) except for
credentials: a credential-like variable set to a literal keeps no value,
only a ``SecretRef`` of kind ``literal-in-script``, and the caller warns.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from migrate import ir
from migrate.secrets import looks_like_secret
from migrate.vocab import EnvOrigin, SecretKind

from .launchers import basename
from .lexer import is_assignment
from .model import Word
from .raw_keys import CONDA_TOOLS, CONDA_VERBS, RAW_KEYS
from .redact import is_literal, looks_like_credential, redact

_COMMAND_SUB = re.compile(r"\$\((?!\()(.*)\)\Z|`(.*)`\Z", re.DOTALL)


@dataclass
class Setup:
    """What one command contributes to the job's environment."""

    env: list[ir.EnvVar] = field(default_factory=list)
    modules: list[str] = field(default_factory=list)
    software: list[ir.KeyValue] = field(default_factory=list)
    raw: list[ir.RawItem] = field(default_factory=list)
    secret_literals: list[tuple[str, int]] = field(default_factory=list)  # (name, line)

    def add_env(self, name: str, value: str | None, origin: EnvOrigin, line: int) -> None:
        var, literal = env_var(name, value, origin, line)
        self.env.append(var)
        if literal:
            self.secret_literals.append((name, line))


def env_var(name: str, value: str | None, origin: EnvOrigin, line: int) -> tuple[ir.EnvVar, bool]:
    """An EnvVar that never carries a credential; True when a literal one was withheld."""
    if value is None or value == "":
        return ir.EnvVar(name=name, value=value, origin=origin, line=line), False
    secret_name = looks_like_secret(name)
    command = _COMMAND_SUB.match(value)
    if secret_name and command:
        inner = (command.group(1) or command.group(2) or "").strip()
        key = None if looks_like_credential(inner) else redact(inner)
        ref = ir.SecretRef(name=name, key=key, kind=SecretKind.COMMAND)
        return ir.EnvVar(name=name, secret=ref, origin=origin, line=line), False
    if (secret_name and is_literal(value)) or looks_like_credential(value):
        ref = ir.SecretRef(name=name, kind=SecretKind.LITERAL)
        return ir.EnvVar(name=name, secret=ref, origin=origin, line=line), True
    return ir.EnvVar(name=name, value=value, origin=origin, line=line), False


def split_assignment(text: str) -> tuple[str, str]:
    name, _, value = text.partition("=")
    return name.rstrip("+"), value


def exported(words: Sequence[Word], known: dict[str, str], setup: Setup) -> None:
    """export / declare -x / typeset -x: every NAME=value or NAME that follows."""
    name = words[0].value
    flags = ""
    for word in words[1:]:
        value = word.value
        if value.startswith("-") and not is_assignment(word.raw):
            flags += value.lstrip("-")
            continue
        if name in ("declare", "typeset") and "x" not in flags:
            return
        if "n" in flags or "f" in flags or "p" in flags:
            return
        if is_assignment(word.raw) or "=" in value:
            var, val = split_assignment(value)
            if var.isidentifier():
                setup.add_env(var, val, EnvOrigin.EXPORT, word.line)
        elif value.isidentifier():
            setup.add_env(value, known.get(value), EnvOrigin.EXPORT, word.line)


def module_command(words: Sequence[Word], setup: Setup) -> None:
    """module load|add a b/1.2, ml a b, module purge|use (kept raw), spack load."""
    values = [w.value for w in words]
    name = basename(values[0])
    line = words[0].line
    if name == "spack":
        _spack(values, line, setup)
        return
    operands = [v for v in values[1:] if not v.startswith("-")]
    if name == "ml" and (not operands or operands[0] not in _MODULE_VERBS):
        # Lmod's shorthand: 'ml a b' loads a and b, 'ml -c' unloads c
        unloads = [v[1:] for v in values[1:] if v.startswith("-") and len(v) > 1]
        if unloads:
            setup.raw.append(RAW_KEYS.item("module", "unload " + " ".join(unloads), line, "shell"))
        setup.modules.extend(operands)
        return
    if not operands:
        return
    verb, rest = operands[0], operands[1:]
    if verb in ("load", "add", "try-load", "try-add", "load-any"):
        setup.modules.extend(rest)
    elif verb in _MODULE_KEPT:
        setup.raw.append(RAW_KEYS.item("module", " ".join([verb, *rest]), line, "shell"))


_MODULE_KEPT = frozenset(
    {"purge", "use", "unuse", "unload", "rm", "del", "remove", "swap", "switch", "sw", "restore", "reset",
     "refresh", "reload", "save", "initadd", "initrm"}
)  # fmt: skip
_MODULE_VERBS = _MODULE_KEPT | {"load", "add", "try-load", "load-any", "avail", "av", "list", "spider",
                                "show", "display", "help", "whatis", "keyword", "is-loaded"}  # fmt: skip


def _spack(values: Sequence[str], line: int, setup: Setup) -> None:
    if len(values) < 2:
        return
    verb = values[1]
    rest = values[2:]
    if verb == "load":
        specs: list[str] = []
        for v in rest:
            if v.startswith("-"):
                continue
            if specs and (v[:1] in "%@+~^" or v.startswith(("arch=", "target=", "os="))):
                specs[-1] += " " + v  # compiler, version or variant of the previous spec
            else:
                specs.append(v)
        setup.modules.extend(specs)
    elif verb == "env" and rest[:1] == ["activate"]:
        args = rest[1:]
        target = _after_flag(args, ("-d", "--dir")) or next((a for a in args if not a.startswith("-")), "")
        if target:
            setup.software.append(ir.KeyValue("spack", target))
    elif verb in ("unload", "env"):
        setup.raw.append(RAW_KEYS.item("spack", " ".join(values[1:]), line, "shell"))


def _after_flag(args: Sequence[str], flags: tuple[str, ...]) -> str:
    for i, a in enumerate(args):
        if a in flags and i + 1 < len(args):
            return args[i + 1]
        for f in flags:
            if f.startswith("--") and a.startswith(f + "="):
                return a.split("=", 1)[1]
    return ""


def software_command(words: Sequence[Word], setup: Setup) -> None:
    """source/. activate scripts, conda|mamba|micromamba activate, pip install."""
    values = [w.value for w in words]
    name = basename(values[0])
    line = words[0].line
    rest = values[1:]
    if name in ("source", "."):
        if not rest:
            return
        target = rest[0]
        if target == "activate" or (basename(target) == "activate" and len(rest) > 1):
            # conda's own activate script takes the environment name
            setup.software.append(ir.KeyValue("conda", rest[1] if len(rest) > 1 else "base"))
        elif basename(target) == "deactivate":
            return
        elif target.endswith("bin/activate"):
            venv = target[: -len("bin/activate")].rstrip("/") or "."
            setup.software.append(ir.KeyValue("venv", venv))
        else:
            setup.raw.append(RAW_KEYS.item("source", redact(" ".join(rest)), line, "shell"))
        return
    if name in CONDA_TOOLS:
        if rest[:1] == ["activate"]:
            args = rest[1:]
            target = _after_flag(args, ("-p", "--prefix", "-n", "--name")) or next(
                (a for a in args if not a.startswith("-")), "base"
            )
            setup.software.append(ir.KeyValue("conda", target))
        elif rest[:1] and rest[0] in CONDA_VERBS:
            setup.raw.append(RAW_KEYS.item(f"{name}-{rest[0]}", redact(" ".join(rest[1:])), line, "shell"))
        return
    install = _pip_install(values)
    if install is not None:
        setup.raw.append(RAW_KEYS.item("pip-install", redact(install), line, "shell"))
        return
    if name == "ulimit":
        setup.raw.append(RAW_KEYS.item("ulimit", " ".join(rest), line, "shell"))


def _pip_install(values: Sequence[str]) -> str | None:
    """The arguments of 'pip install', 'python -m pip install' or 'uv pip install'."""
    for i, v in enumerate(values):
        if basename(v) in ("pip", "pip3") or (v == "pip" and i and values[i - 1] == "-m"):
            if i + 1 < len(values) and values[i + 1] == "install":
                return " ".join(values[i + 2 :])
            return None
    return None
