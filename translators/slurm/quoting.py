"""Quoting for what the Slurm writer puts into scripts.

``shell_word`` makes bash hand a program exactly the bytes of one argv word:
inside single quotes bash expands nothing (no ``$(...)``, backticks, ``!``
history, globs) and keeps newlines and non-ASCII text as they are, so the
only character that needs care is the single quote itself. ``directive_word``
quotes a value for an ``#SBATCH`` line, which sbatch splits with its own,
smaller rules (double quotes group, a backslash escapes, an unquoted ``#``
ends the line, no newlines at all).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

# Words made only of these characters mean the same to bash quoted or not.
_PLAIN = re.compile(r"[A-Za-z0-9_@%+=:,./-]+\Z")
# Words bash reads as syntax in command position.
RESERVED = frozenset(
    [
        "!",
        "case",
        "coproc",
        "do",
        "done",
        "elif",
        "else",
        "esac",
        "fi",
        "for",
        "function",
        "if",
        "in",
        "select",
        "then",
        "time",
        "until",
        "while",
        "{",
        "}",
        "[[",
        "]]",
    ]
)
_DIRECTIVE_PLAIN = re.compile(r"[^\s\"'\\#]+\Z")


class UnquotableError(ValueError):
    """A value that no quoting can carry (NUL in an argv word, a newline in a directive)."""


def shell_word(word: str) -> str:
    """``word`` as one bash word that expands to exactly ``word``.

    A NUL byte cannot be in a bash word (nor in any argv word): the word ends
    there, as it does for a program that Kubernetes starts with execve().
    """
    word = c_string(word)
    if _PLAIN.match(word):
        return word
    return "'" + word.replace("'", "'\\''") + "'"


def shell_words(words: Iterable[str]) -> str:
    """Argument words (not in command position)."""
    return " ".join(shell_word(w) for w in words)


def command_words(words: Iterable[str]) -> str:
    """A whole command: its first word must not read as a keyword or an assignment."""
    out = [shell_word(w) for w in words]
    if out and out[0][:1] != "'" and (out[0] in RESERVED or "=" in out[0] or out[0].startswith("%")):
        out[0] = "'" + out[0] + "'"  # plain words hold no quote, so this is safe
    return " ".join(out)


def double_quoted(text: str) -> str:
    """``text`` inside double quotes with nothing expanded: for literal parts next to ``"${VAR}"``."""
    if "\0" in text:
        raise UnquotableError("a NUL byte cannot be part of a shell string")
    return '"' + re.sub(r'([\\"$`])', r"\\\1", text) + '"'


def directive_word(value: str) -> str:
    """``value`` for an ``#SBATCH``/``#SCRON`` line, read back by sbatch as one word."""
    if "\n" in value or "\r" in value or "\0" in value:
        raise UnquotableError(f"an #SBATCH value cannot hold a line break: {value!r}")
    if _DIRECTIVE_PLAIN.match(value):
        return value
    return '"' + re.sub(r'([\\"])', r"\\\1", value) + '"'


def c_string(text: str) -> str:
    """What an argv word, an env value or a printf argument can hold: the text up to its first NUL.

    execve() reads C strings, so a program started by Kubernetes gets the same cut.
    """
    return text.split("\0", 1)[0]


def comment_text(text: str) -> str:
    """``text`` on one comment line: line breaks become spaces so nothing leaks into code."""
    return " ".join(text.split())


__all__ = [
    "RESERVED",
    "UnquotableError",
    "c_string",
    "command_words",
    "comment_text",
    "directive_word",
    "double_quoted",
    "shell_word",
    "shell_words",
]
