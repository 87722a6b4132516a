"""Which container commands are inline shell scripts (``sh -c "<script>"``).

A container's ``command`` + ``args`` is an argv, not a shell line. When it is
a shell given a script with ``-c``, the script is shell text: it goes to the
shell analyzer on its own, with its own first line.
"""

from __future__ import annotations

import os

from ..shell.launchers import SHELLS


def shell_script(words: list[str]) -> tuple[str, str] | None:
    """(shell, script) when the argv is ``sh -c <script>`` (also ``bash -lc``, ``-ec`` ...)."""
    if not words:
        return None
    shell = os.path.basename(words[0])
    if shell not in SHELLS:
        return None
    for i, word in enumerate(words[1:], start=1):
        if word.startswith("-") and not word.startswith("--") and "c" in word[1:]:
            if i + 1 < len(words):
                return shell, words[i + 1]
            return None
        if not word.startswith("-"):
            return None  # sh script.sh: a script file, not an inline script
    return None
