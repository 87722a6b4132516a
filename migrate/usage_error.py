"""The error of something the user can fix, shared by the library's entry points."""

from __future__ import annotations


class UsageError(Exception):
    """Something the user can fix; the message says what and how."""
