"""A table of declarations by name, in the order they were registered.

The variants declared once each (the workload kinds, the devices, the Kubernetes flavors, the container
runtimes) keep theirs in a ``Declared``: ``register`` adds one that passes the variant's own check,
``registered`` adds some for a ``with`` block and restores the table after it, as the tests do. It is
in the core, where the workload kinds and the devices are declared.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Generic, Protocol, TypeVar


class _Named(Protocol):
    @property
    def name(self) -> str: ...


T = TypeVar("T", bound=_Named)


class Declared(Generic[T]):
    def __init__(self, what: str, problem: Callable[[T], str | None]) -> None:
        self.what = what  # what a declaration is, in messages: "flavor"
        self.problem = problem  # why a declaration cannot be registered; None: it can
        self.table: dict[str, T] = {}

    def register(self, item: T) -> T:
        if item.name in self.table:
            raise ValueError(f"{self.what} {item.name!r} is already registered")
        problem = self.problem(item)
        if problem is not None:
            raise ValueError(f"{self.what} {item.name!r}: {problem}")
        self.table[item.name] = item
        return item

    @contextmanager
    def registered(self, *added: T) -> Iterator[None]:
        """The declarations registered for the block; the table as it was afterwards."""
        before = dict(self.table)
        try:
            for item in added:
                self.register(item)
            yield
        finally:
            self.table.clear()
            self.table.update(before)


__all__ = ["Declared"]
