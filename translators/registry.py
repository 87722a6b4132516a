"""The readers and the writers, by format; each imported when it is first asked for.

A scan the cache answers reads no file, and importing the readers would cost it
a third of a second; so a reader or a writer is declared by a loader function
that imports its module, and only the scan of a file or the translation of a
job calls it. Readers are asked in the order of ``READERS``: the first whose
``sniff`` takes a file decides its format.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from migrate.translators.interfaces import Reader, Writer
from migrate.vocab import Format


@dataclass(frozen=True)
class ReaderEntry:
    format: Format
    load: Callable[[], Reader]
    # True: reads the files of ``format`` beside its main reader, those its own sniff takes;
    # it never makes a file one of that format by itself.
    alongside: bool = False


def _slurm_reader() -> Reader:
    from migrate.translators.slurm import reader

    return reader


def _kubernetes_reader() -> Reader:
    from migrate.translators.kubernetes import reader

    return reader


def _argo_reader() -> Reader:
    from migrate.translators.argo import reader

    return reader


def _kubernetes_writer() -> Writer:
    from migrate.translators.kubernetes import writer

    return writer


def _slurm_writer() -> Writer:
    from migrate.translators.slurm import writer

    return writer


READERS: list[ReaderEntry] = [
    ReaderEntry(Format.SLURM, _slurm_reader),
    ReaderEntry(Format.KUBERNETES, _kubernetes_reader),
    # Argo objects sit in manifests beside others; the Kubernetes reader leaves them to this one.
    ReaderEntry(Format.KUBERNETES, _argo_reader, alongside=True),
]

WRITERS: dict[str, Callable[[], Writer]] = {
    Format.KUBERNETES: _kubernetes_writer,
    Format.SLURM: _slurm_writer,
}


def register_reader(entry: ReaderEntry) -> None:
    """Ask ``entry`` after the readers already known."""
    READERS.append(entry)


def register_writer(target: str, load: Callable[[], Writer]) -> None:
    WRITERS[target] = load


def readers_of(fmt: str) -> list[ReaderEntry]:
    return [entry for entry in READERS if entry.format == fmt]


__all__ = ["READERS", "WRITERS", "ReaderEntry", "readers_of", "register_reader", "register_writer"]
