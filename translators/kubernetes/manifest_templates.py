"""Manifests that are templates, not objects: Helm/Go ``{{ }}``, Jinja, envsubst ``${VAR}``.

Helm and Jinja syntax is found on the raw text (it usually breaks the YAML).
``${VAR}`` and ``$(VAR)`` need the parsed tree: inside a shell script (``sh -c``,
a ConfigMap's script) they are shell, and ``$(VAR)`` in a container's command,
args or env value is Kubernetes' own reference to another env var. Anywhere
else they are placeholders some tool was meant to fill in before ``kubectl apply``.
"""

from __future__ import annotations

import re
from typing import Any

from migrate.yamlload import LineDict, LineList

from .manifest_commands import shell_script

_GO_ACTION = re.compile(
    r"\{\{-?\s*(?:[.$]|/\*|(?:if|else|end|range|with|define|template|include|block|toYaml|toJson|tpl|"
    r"required|default|quote|squote|printf|print|lookup|fail|nindent|indent|trim|upper|lower|not|eq|ne)\b)"
)
_JINJA_BLOCK = re.compile(r"\{%-?\s*\w")
_MUSTACHE = re.compile(r"(?<!\$)\{\{-?\s*[A-Za-z_][\w.]*\s*(?:\|[^}]*)?-?\}\}")
# Argo Workflows' own parameters look like mustache but are filled in by Argo, not before apply.
_ARGO = re.compile(r"\{\{\s*=?\s*(?:inputs|outputs|workflow|steps|tasks|item|pod|node|retries|lastRetry)\b")

# envsubst's ${VAR} and $VAR (a $$ is Kubernetes' escape, not a reference).
_BRACE = re.compile(r"(?<!\$)\$(?:\{([A-Za-z_][A-Za-z0-9_]*)(?:[:?+=-][^}]*)?\}|([A-Za-z_][A-Za-z0-9_]*))")
_PAREN = re.compile(r"(?<!\$)\$\(([A-Za-z_][A-Za-z0-9_]*)\)")

# Keys whose values are shell text: any $ syntax there is the shell's.
_SHELL_KEYS = frozenset(
    {"entrypoint", "script", "source", "runtimeEnvYAML", "data", "stringData", "binaryData"}
)
_ARGV_KEYS = frozenset({"command", "args"})


# Set in every login environment: a bare $HOME in a manifest is a literal or a shell's, never a value
# someone forgot to give (envsubst would fill it from whoever runs it).
_LOGIN_ENVIRONMENT = frozenset(
    {"HOME", "USER", "LOGNAME", "PATH", "PWD", "SHELL", "LANG", "TERM", "HOSTNAME"}
)


def _is_placeholder(match: re.Match[str]) -> bool:
    return match.group(1) is not None or match.group(2) not in _LOGIN_ENVIRONMENT


def has_placeholder(value: Any) -> bool:
    """A value that is a template expression rather than data (so not worth a type error)."""
    if not isinstance(value, str):
        return False
    return "{{" in value or "{%" in value or any(_is_placeholder(m) for m in _BRACE.finditer(value))


def placeholder_names(value: str) -> list[str]:
    """The variables a templated value names (``${A}-$B`` -> A, B), in order; Helm syntax names none."""
    found = (next(g for g in m.groups() if g) for m in _BRACE.finditer(value) if _is_placeholder(m))
    return list(dict.fromkeys(found))


def template_lines(text: str) -> list[int]:
    """Lines with Helm/Go or Jinja template syntax, found on the raw text."""
    if "{{" not in text and "{%" not in text:
        return []
    found = []
    for number, line in enumerate(text.splitlines(), start=1):
        if "{" not in line or line.lstrip().startswith("#"):
            continue
        go_or_jinja = _GO_ACTION.search(line) or _JINJA_BLOCK.search(line)
        if go_or_jinja or (_MUSTACHE.search(line) and not _ARGO.search(line)):
            found.append(number)
    return found


def may_hold_placeholders(text: str) -> bool:
    """Whether a file's parsed values can contain a '$' at all (written, or as a YAML escape)."""
    return "$" in text or "\\" in text


def placeholders(data: Any) -> list[tuple[int, str]]:
    """``${VAR}``, ``$VAR`` and ``$(VAR)`` placeholders outside shell text and env references: line, name."""
    found: list[tuple[int, str]] = []
    _walk(data, 0, False, False, found)
    return found


def _walk(node: Any, line: int, brace_ok: bool, paren_ok: bool, found: list[tuple[int, str]]) -> None:
    if isinstance(node, str):
        _scan(node, line, brace_ok, paren_ok, found)
    elif isinstance(node, LineDict):
        for key, value in node.items():
            if isinstance(key, str) and "$" in key:
                _scan(key, node.key_line(key), False, False, found)
            child_brace, child_paren = brace_ok, paren_ok
            if key in _SHELL_KEYS:
                child_brace = child_paren = True
            elif key in _ARGV_KEYS:
                # Kubernetes expands $(VAR) in an argv; ${VAR} only means something to a shell.
                child_brace, child_paren = brace_ok or _runs_shell(node), True
            elif key == "env":
                _walk_env(value, brace_ok, found)
                continue
            if _may_hold_placeholders(value):  # most values are plain text: no line to look up
                _walk(value, node.value_line(key), child_brace, child_paren, found)
    elif isinstance(node, LineList):
        for index, item in enumerate(node):
            _walk(item, node.item_line(index), brace_ok, paren_ok, found)


def _may_hold_placeholders(value: Any) -> bool:
    """Whether _walk can find anything in ``value``: a '$' in a string, or a mapping or list."""
    if isinstance(value, str):
        return "$" in value
    return isinstance(value, _NODES)


_NODES = (LineDict, LineList)  # a tuple: ``LineDict | LineList`` would be built at every call


def _walk_env(env: Any, brace_ok: bool, found: list[tuple[int, str]]) -> None:
    if not isinstance(env, LineList):
        _walk(env, getattr(env, "line", 0), brace_ok, False, found)
        return
    for item in env:
        if isinstance(item, LineDict):
            for key, value in item.items():
                _walk(value, item.value_line(key), brace_ok, key == "value", found)
        else:
            _walk(item, env.line, brace_ok, False, found)


def _runs_shell(node: LineDict) -> bool:
    words: list[str] = []
    for key in ("command", "args"):
        value = node.get(key)
        if isinstance(value, list):
            words.extend(str(word) for word in value)
    return shell_script(words) is not None


def _scan(text: str, line: int, brace_ok: bool, paren_ok: bool, found: list[tuple[int, str]]) -> None:
    if "$" not in text:
        return
    for pattern, allowed in ((_BRACE, brace_ok), (_PAREN, paren_ok)):
        if allowed:
            continue
        for match in pattern.finditer(text):
            if pattern is _BRACE and not _is_placeholder(match):
                continue
            name = next(group for group in match.groups() if group)
            found.append((line + text.count("\n", 0, match.start()), name))
