"""Recognising credentials by name, so that their values never reach an artifact."""

from __future__ import annotations

import re

# Names that hold credentials at real sites: *_TOKEN, *_KEY, *PASSWORD*, *SECRET*, ...
_SECRET_NAME = re.compile(
    r"(^|_)(TOKEN|API_?KEY|ACCESS_?KEY|SECRET(_ACCESS)?_?KEY|SECRET|PASSWORD|PASSWD|PASS|PWD|"
    r"CREDENTIALS?|AUTH|PRIVATE_?KEY|SESSION_?TOKEN|KEY)($|_)",
    re.IGNORECASE,
)
# Names that match the pattern but are not credentials.
_NOT_SECRET = frozenset({"PWD", "OLDPWD", "KEY_PATH", "SSH_AUTH_SOCK", "TOKENIZERS_PARALLELISM"})


def looks_like_secret(name: str) -> bool:
    """True for environment variable names that by convention hold credentials."""
    upper = name.upper()
    if upper in _NOT_SECRET:
        return False
    return bool(_SECRET_NAME.search(upper))


REDACTED = "<redacted>"
