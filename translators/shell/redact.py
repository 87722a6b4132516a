"""Keep credentials out of everything the analysis hands on.

Command texts, option values and hook details are copied into the IR and
from there into reports and generated manifests. A credential written
literally in a script must not travel with them.
"""

from __future__ import annotations

import re

from migrate.secrets import REDACTED, looks_like_secret

# Well-known token shapes, whatever variable holds them.
_TOKEN = re.compile(
    r"\b(?:hf_[A-Za-z0-9]{20,}|gh[opsru]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|"
    r"sk-[A-Za-z0-9_-]{20,}|AKIA[0-9A-Z]{16}|xox[abprs]-[A-Za-z0-9-]{10,}|glpat-[A-Za-z0-9_-]{20,})"
)
_SLACK_PATH = re.compile(r"(hooks\.slack\.com/)[A-Za-z0-9/_-]+")
_ASSIGN = re.compile(r"(?<![A-Za-z0-9_])([A-Za-z_][A-Za-z0-9_]*)=(\"[^\"]*\"|'[^']*'|[^\s;&|\"']+)")
_SECRET_OPTION = re.compile(
    r"(--?[A-Za-z0-9_-]*(?:token|password|passwd|secret|api[_-]?key)[A-Za-z0-9_-]*)"
    r"([= ]+)(\"[^\"]*\"|'[^']*'|[^\s;&|]+)",
    re.IGNORECASE,
)
_WANDB_LOGIN = re.compile(r"(wandb\s+login(?:\s+--?[A-Za-z-]+)*\s+)([A-Za-z0-9]{20,})")


def is_literal(value: str) -> bool:
    """A value written out in full, not read from a variable, a command or a file path."""
    if not value or "$" in value or "`" in value:
        return False
    return not value.startswith(("/", "~", "./", "../"))


def looks_like_credential(value: str) -> bool:
    """A value shaped like a known token (Hugging Face, GitHub, OpenAI, AWS, Slack, GitLab)."""
    return bool(_TOKEN.search(value))


def _unquoted(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def redact(text: str) -> str:
    """Replace literal credentials in a piece of shell text."""
    if not text:
        return text

    def assignment(m: re.Match[str]) -> str:
        name, value = m.group(1), m.group(2)
        if looks_like_secret(name) and is_literal(_unquoted(value)):
            return f"{name}={REDACTED}"
        return m.group(0)

    def option(m: re.Match[str]) -> str:
        if is_literal(_unquoted(m.group(3))):
            return f"{m.group(1)}{m.group(2)}{REDACTED}"
        return m.group(0)

    text = _ASSIGN.sub(assignment, text)
    text = _SECRET_OPTION.sub(option, text)
    text = _WANDB_LOGIN.sub(lambda m: m.group(1) + REDACTED, text)
    text = _SLACK_PATH.sub(lambda m: m.group(1) + REDACTED, text)
    return _TOKEN.sub(REDACTED, text)
