"""Performance helpers shared by the graph builder and its analyses."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector while building large graphs.

    A site of 100,000 jobs allocates millions of small dicts and tuples that all
    live until the graph is dropped; the collector walks them again and again
    for nothing (about 40% of build time at 20,000 jobs). Reference counting
    still frees memory as usual, and the previous state is always restored.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


__all__ = ["paused_gc"]
