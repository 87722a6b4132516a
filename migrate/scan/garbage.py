"""Collecting cyclic garbage less often while a stage makes objects by the hundred thousand.

Reading files and translating jobs make hundreds of thousands of short-lived,
acyclic objects per second (tokens, words, commands, manifests), so the default
young threshold runs a collection every few statements; and what lives through
the stage (the caches of parsed statements, the scanned jobs a translation reads)
is walked again by every full collection, while almost no cyclic garbage is made.
What exists before the stage starts is left out of collections altogether.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

# A young collection per 20,000 allocations (Python's default: 700) and one full collection per
# 100 middle ones (default: 10).
YOUNG_COLLECTION_AFTER = 20_000
FULL_COLLECTION_EVERY = 100


def collect_less() -> None:
    """From now on, for this process: what exists is frozen, and collections come less often."""
    gc.freeze()
    gc.set_threshold(YOUNG_COLLECTION_AFTER, gc.get_threshold()[1], FULL_COLLECTION_EVERY)


def freeze_survivors() -> None:
    """Leave what is alive now out of collections: after a window of files is read, that is the
    caches' new entries, which every young and middle collection would otherwise walk again.

    Reading makes no cyclic garbage (a scan of 10,000 files leaves none to collect), so nothing is
    kept that a collection would have freed; what :func:`collecting_less` froze is collected as
    usual once it ends.
    """
    gc.freeze()


@contextlib.contextmanager
def collecting_less() -> Iterator[None]:
    """:func:`collect_less` for as long as the block runs; then the thresholds as before."""
    before = gc.get_threshold()
    collect_less()
    try:
        yield
    finally:
        gc.set_threshold(*before)
        gc.unfreeze()


__all__ = [
    "FULL_COLLECTION_EVERY",
    "YOUNG_COLLECTION_AFTER",
    "collect_less",
    "collecting_less",
    "freeze_survivors",
]
