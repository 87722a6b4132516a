"""What the scan asks of a reader and what translation asks of a writer.

A reader or a writer is a module of its format's sub-package (``slurm/reader.py``,
``kubernetes/writer.py`` ...) with the functions of ``Reader`` or ``Writer``;
``registry.py`` names them by format. This module imports no reader and no
writer, so that each of them can import it; its imports are for types only, so
that a scan the cache answers loads nothing more with it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from migrate import ir
    from migrate.diagnostics import Collector
    from migrate.fidelity import Edge, Translation
    from migrate.site.config import SiteConfig, SpankOption
    from migrate.translators.argo.scopes import Library


@dataclass(frozen=True)
class ReadContext:
    """What reading a file may need beyond its text; each reader takes what its format uses."""

    library: Library | None = None  # Argo: the WorkflowTemplates of the other scanned files
    spank: tuple[SpankOption, ...] = ()  # Slurm: the #SBATCH options of the site's own SPANK plugins


NO_CONTEXT = ReadContext()


class Reader(Protocol):
    def sniff(self, text: str) -> bool:
        """Whether ``text`` is of the reader's format, from its head and without parsing it."""
        ...

    def read(self, text: str, path: str, diags: Collector, context: ReadContext, /) -> list[ir.Job]:
        """Every job of the file; problems go to ``diags``. Never raises."""
        ...


class Writer(Protocol):
    NAME_MAX: int
    RESERVED: frozenset[str]

    def translate_job(
        self,
        job: ir.Job,
        config: SiteConfig | None,
        choice: str,
        /,
        *,
        name: str | None = None,
        style: str = "auto",
    ) -> Translation:
        """``choice`` is the writer's one choice: the Kubernetes flavor, or the Slurm container runtime;
        ``style`` how a job's steps run (Kubernetes: ``native``, ``emulate``, ``auto``), which a writer
        with one way leaves unused."""
        ...

    def render_shared(self, translations: list[Translation], config: SiteConfig | None) -> dict[str, str]: ...

    def render_index(self, paths: list[str]) -> dict[str, str]: ...

    def render_chain(
        self,
        translations: list[Translation],
        edges: list[Edge],
        folders: dict[str, str],
        workflow: str | None,
    ) -> dict[str, str]:
        """The files that run the dependency chains (``submit.sh``, a JobFlow ...); may rewrite job files."""
        ...

    def chain_file(self, workflow: str | None) -> str:
        """The file that runs the chains on ``workflow`` (``submit.sh``, ``workflow.yaml`` ...)."""
        ...

    def chain_flavor(self, workflow: str | None) -> str | None:
        """The flavor a job in a chain must have on ``workflow``, when it needs one."""
        ...

    def translate_wrapper(self, job: ir.Job, name: str) -> Translation: ...


__all__ = ["NO_CONTEXT", "ReadContext", "Reader", "Writer"]
