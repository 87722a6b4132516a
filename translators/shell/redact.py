"""Keep credentials out of everything the analysis hands on.

Command texts, option values and hook details are copied into the IR and
from there into reports and generated manifests. A credential written
literally in a script must not travel with them. The rules that say what a
literal credential is live here; :mod:`.conceal` uses the same rules to
rewrite a script so that it reads each one from the environment instead.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import NamedTuple

from migrate.secrets import REDACTED, looks_like_secret

# Well-known token shapes, whatever variable holds them. Each is made of [A-Za-z0-9_-] only,
# so a variable holding one expands to the same single word in any shell context.
TOKEN_KINDS: tuple[tuple[str, str], ...] = (
    ("HF_TOKEN", r"hf_[A-Za-z0-9]{20,}"),
    ("GITHUB_TOKEN", r"gh[opsru]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}"),
    ("API_KEY", r"sk-[A-Za-z0-9_-]{20,}"),
    ("AWS_ACCESS_KEY_ID", r"AKIA[0-9A-Z]{16}"),
    ("SLACK_TOKEN", r"xox[abprs]-[A-Za-z0-9-]{10,}"),
    ("GITLAB_TOKEN", r"glpat-[A-Za-z0-9_-]{20,}"),
)
TOKEN = re.compile(r"\b(?:" + "|".join(f"(?P<{kind}>{shape})" for kind, shape in TOKEN_KINDS) + ")")
SLACK_PATH = re.compile(r"(?<=hooks\.slack\.com/)[A-Za-z0-9/_-]+")
# An option whose value is a credential: its name ends with the credential's word (--token,
# --hf-token, --api-key, --client-secret, --password); not --max-new-tokens, --token-file, --secret-name.
SECRET_OPTION = re.compile(
    r"--?(?:[A-Za-z0-9_-]*[-_])?(?:token|password|passwd|secret|api[_-]?key|(?:secret|access)[_-]?key)\Z",
    re.IGNORECASE,
)
_ASSIGN = re.compile(r"(?<![A-Za-z0-9_])([A-Za-z_][A-Za-z0-9_]*)=(\"[^\"]*\"|'[^']*'|[^\s;&|\"']+)")
_OPTION_VALUE = re.compile(
    r"(--?[A-Za-z0-9_-]*(?:token|password|passwd|secret|api[_-]?key)[A-Za-z0-9_-]*)"
    r"([= ]+)(\"[^\"]*\"|'[^']*'|[^\s;&|]+)",
    re.IGNORECASE,
)
WANDB_LOGIN = re.compile(r"(wandb\s+login(?:\s+--?[A-Za-z-]+)*\s+)([A-Za-z0-9]{20,})")
# What each rule above needs in a text before it can change it: a credential-like name
# (migrate.secrets) before its '=' and an option naming a credential (both in lower case, as the
# rules read them), ``wandb``, a Slack hook, a token's prefix. Each is a plain substring test in
# :func:`_hints` (the names also one short pattern), far cheaper than the rule's own search over a
# long script; keep them in step with the rules.
_ASSIGN_HINT = re.compile(r"(?:token|key|secret|pass|pwd|credential|auth)[a-z0-9_]*=")
_GITHUB_PREFIX = re.compile(r"gh[opsru]_")  # "gh" alone is in too many English words


class _Hints(NamedTuple):
    """Which rules may change a text; a rule left out cannot."""

    assign: bool
    option: bool
    wandb: bool
    slack: bool
    token: bool


_EVERY_RULE = _Hints(True, True, True, True, True)


def _hints(text: str) -> _Hints:
    """The case-insensitive rules' hints are tested in lower case, which for ASCII text is what
    those rules see; other text goes through every rule."""
    if not text.isascii():
        return _EVERY_RULE
    low = text.lower()
    # the words and prefixes spelled out rather than looped over: this runs for every script
    named = (  # each option word holds one of these
        "token" in low
        or "key" in low
        or "secret" in low
        or "pass" in low
        or "pwd" in low
        or "credential" in low
        or "auth" in low
    )
    return _Hints(
        assign=named and _ASSIGN_HINT.search(low) is not None,
        option=named and ("token" in low or "passw" in low or "secret" in low or "key" in low),
        # the rules below are case-sensitive: so are their hints
        wandb="wandb" in text,
        slack="hooks.slack.com/" in text,
        token="hf_" in text
        or "github_pat_" in text
        or "sk-" in text
        or "AKIA" in text
        or "xox" in text
        or "glpat-" in text
        or ("gh" in text and _GITHUB_PREFIX.search(text) is not None),
    )


def _may_hold(text: str) -> bool:
    """False when no rule can change ``text``; remembered for short texts, which repeat: every
    ``#SBATCH`` line of every script is asked."""
    if len(text) > _SHORT:
        return any(_hints(text))
    known = _MAY_HOLD.get(text)
    if known is None:
        if len(_MAY_HOLD) >= _MAY_HOLD_MAX:
            _MAY_HOLD.clear()
        known = _MAY_HOLD[text] = any(_hints(text))
    return known


_SHORT = 200
_MAY_HOLD: dict[str, bool] = {}
_MAY_HOLD_MAX = 4096  # under 1 MB


def is_literal(value: str) -> bool:
    """A value written out in full, not read from a variable, a command or a file path."""
    if not value or "$" in value or "`" in value:
        return False
    return not value.startswith(("/", "~", "./", "../"))


def looks_like_credential(value: str) -> bool:
    """A value shaped like a known token (Hugging Face, GitHub, OpenAI, AWS, Slack, GitLab)."""
    return bool(TOKEN.search(value))


def literal_credential(name: str, value: str) -> bool:
    """``name=value`` sets a credential to a literal: a credential-like name, or a token-shaped value."""
    return (looks_like_secret(name) and is_literal(value)) or (
        "$" not in value and "`" not in value and looks_like_credential(value)
    )


def secret_option_value(option: str, value: str) -> bool:
    """``--api-key VALUE``: the option takes a credential and the value is written out."""
    return bool(SECRET_OPTION.match(option)) and is_literal(value) and not value.startswith("-")


def _unquoted(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def redact(text: str, any_case: bool = True) -> str:
    """Replace literal credentials in a piece of shell text.

    ``any_case=False`` takes only upper-case names for variables, as in text that may be
    another language's code (a here-document of Python: ``key=scores.get``).
    """
    if not text or (len(text) <= _SHORT and not _may_hold(text)):
        return text
    hints = _hints(text)
    if not any(hints):
        return text

    def assignment(m: re.Match[str]) -> str:
        name, value = m.group(1), m.group(2)
        if not any_case and not name.isupper():
            return m.group(0)
        if looks_like_secret(name) and is_literal(_unquoted(value)):
            return f"{name}={REDACTED}"
        return m.group(0)

    # Each rule runs only where its hint is in the text: its matches all hold the hint, and no
    # rule's edit adds one for the rules after it (REDACTED holds none, nor do its edges).
    if hints.assign:
        text = _ASSIGN.sub(assignment, text)
    if hints.option:
        text = _secret_option_values(text)
    if hints.wandb:
        text = WANDB_LOGIN.sub(lambda m: m.group(1) + REDACTED, text)
    if hints.slack:
        text = SLACK_PATH.sub(REDACTED, text)
    if hints.token:
        text = TOKEN.sub(REDACTED, text)
    return text


# _OPTION_VALUE as written, case-sensitive: on lower-cased ASCII text it matches where the
# case-insensitive one matches on the text, at the same places, several times faster.
_OPTION_VALUE_LOWER = re.compile(_OPTION_VALUE.pattern)


def _secret_option_values(text: str) -> str:
    """``--api-key VALUE`` with a written-out credential as ``--api-key <redacted>``."""
    if not text.isascii():
        matches = [m.span(1) + m.span(2) + m.span(3) for m in _OPTION_VALUE.finditer(text)]
    else:
        matches = [m.span(1) + m.span(2) + m.span(3) for m in _OPTION_VALUE_LOWER.finditer(text.lower())]
    out: list[str] = []
    at = 0
    for start, option_end, gap_start, gap_end, value_start, value_end in matches:
        option, value = text[start:option_end], text[value_start:value_end]
        if secret_option_value(option, _unquoted(value)):
            out += (text[at:start], option, text[gap_start:gap_end], REDACTED)
            at = value_end
    if not out:
        return text
    out.append(text[at:])
    return "".join(out)


def export_names_only(text: str, names: Iterable[str] = ()) -> str:
    """``--export=ALL,HF_TOKEN=abc`` as ``--export=ALL,HF_TOKEN``: listed credentials keep their name only.

    An item is cut to its name when ``names`` lists it or when it sets a credential to a literal
    (see :func:`literal_credential`). A name without a value tells sbatch to take the variable
    from the environment, which is where the translated job provides it; the rest of ``text``
    is redacted as usual.
    """
    listed = set(names)
    if not _may_hold(text) and not any(name in text for name in listed):
        return text

    def item(m: re.Match[str]) -> str:
        name, value = m.group(1), _unquoted(m.group(2))
        return name if name in listed or literal_credential(name, value) else m.group(0)

    return redact(_EXPORT_ITEM.sub(item, text))


def export_names_only_lines(lines: Sequence[str], names: Iterable[str] = ()) -> str:
    """:func:`export_names_only` of each line, each ended by a newline. The whole text is asked
    first: a rule or a name found in no line is in no line, and most headers hold neither."""
    listed = tuple(names)
    whole = "\n".join(lines)
    if lines and not any(_hints(whole)) and not any(name in whole for name in listed):
        return whole + "\n"
    return "".join(export_names_only(line, listed) + "\n" for line in lines)


# One NAME=value item of a comma-separated --export list (or of a line that holds one).
_EXPORT_ITEM = re.compile(r"(?<=[=,\s])([A-Za-z_][A-Za-z0-9_]*)=(\"[^\"]*\"|'[^']*'|[^,\s]*)")
