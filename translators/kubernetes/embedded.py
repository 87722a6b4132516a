"""Files that hold YAML-looking lines without being manifests, and manifests inside shell scripts.

A shell script, a Dockerfile, a Makefile or a document with YAML snippets may
have ``apiVersion:`` and ``kind:`` at the start of a line; none of them is a
manifest, and parsing one as YAML only gives syntax errors. A shell script
that feeds a here-document to ``kubectl apply -f -`` (or ``create``) does hold
manifests: they are read with their lines in the script, every other line
blanked so that the line numbers stay the script's.
"""

from __future__ import annotations

import re

from ..shell.launchers import SHELLS

# `cat <<EOF | kubectl apply -f -`, `kubectl create -f - <<'EOF'`, `kubectl apply -f- <<-EOF`
_KUBECTL_STDIN = re.compile(r"\bkubectl\b.*\b(?:apply|create)\b.*(?:\s-f\s*-|--filename[= ]-)(?:\s|$|\|)")
_HEREDOC = re.compile(r"<<(-?)\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\2")
_DOCKERFILE = re.compile(r"(?i)(?:FROM|ARG)\s+\S")
_MAKE_RULE = re.compile(r"^[A-Za-z0-9_./%$(){}-]+(?:\s+[A-Za-z0-9_./%$(){}-]+)*\s*::?(?!=)[^\n]*\n\t\S", re.M)
_MAKE_DEFINE = re.compile(r"^define\s+\w+\s*=?\s*$", re.M)
_DOC_FENCE = re.compile(r"^\s*(?:```|~~~)|^\.\. (?:code-block|code|sourcecode)::", re.M)
_LOOK_AT = 64 * 1024  # the head decides, as for the format sniff: a 50 MB manifest is not searched whole
_FIRST_LINE_PREFIX = 2048
# Literal text that _DOC_FENCE cannot match without.
_FENCE_TEXTS = ("```", "~~~", ".. code", ".. sourcecode")
_INTERPRETER = re.compile(r"#!\s*(\S+)(?:\s+(\S+))?")


def shell_script(text: str) -> bool:
    """A file that starts with a shell's ``#!`` line."""
    match = _INTERPRETER.match(text)
    if match is None:
        return False
    program = match.group(1).rsplit("/", 1)[-1]
    if program == "env" and match.group(2):
        program = match.group(2).rsplit("/", 1)[-1]
    return program in SHELLS


def other_language(text: str) -> str | None:
    """What a file with YAML-looking lines is instead of a manifest, or None when it may be one."""
    if text.startswith("#!"):
        return "a script"
    text = text[:_LOOK_AT]
    if _DOCKERFILE.match(_first_content_line(text)):
        return "a Dockerfile"
    # Each pattern needs its literal text: the cheap 'in' spares a line-by-line regex search of
    # the head of every file that has none.
    if ("define" in text and _MAKE_DEFINE.search(text)) or ("\n\t" in text and _MAKE_RULE.search(text)):
        return "a Makefile"
    if any(fence in text for fence in _FENCE_TEXTS) and _DOC_FENCE.search(text):
        return "a document with code snippets"
    return None


def _first_content_line(text: str) -> str:
    """The first line that is neither blank nor a comment ('' for none), as ``splitlines`` cuts lines.

    Looked for in a short prefix first: splitting the whole head makes a list of all its lines.
    """
    head = text[:_FIRST_LINE_PREFIX]
    lines = head.splitlines()
    if len(head) < len(text):
        lines = lines[:-1]  # the prefix may cut its last line short
    for line in lines:
        if _is_content(line):
            return line
    if len(head) == len(text):
        return ""
    return next((line for line in text.splitlines() if _is_content(line)), "")


def _is_content(line: str) -> bool:
    return bool(line.strip()) and not line.startswith("#")


def heredoc_manifests(text: str) -> str | None:
    """The here-documents a shell script feeds to ``kubectl apply|create -f -``, at their own lines.

    Lines outside them are blank and each one starts a YAML document, so that
    two here-documents never run into each other. None when there is none.
    """
    lines = text.split("\n")
    out = [""] * len(lines)
    found = False
    index = 0
    while index < len(lines):
        line = lines[index]
        heredoc = _HEREDOC.search(line)
        if heredoc is None or not _KUBECTL_STDIN.search(line):
            index += 1
            continue
        strip_tabs, delimiter = heredoc.group(1) == "-", heredoc.group(3)
        out[index] = "---"
        index += 1
        while index < len(lines):
            body = lines[index].lstrip("\t") if strip_tabs else lines[index]
            if body.rstrip("\r") == delimiter:
                break
            out[index] = body
            found = True
            index += 1
        index += 1
    return "\n".join(out) if found else None


__all__ = ["heredoc_manifests", "other_language", "shell_script"]
