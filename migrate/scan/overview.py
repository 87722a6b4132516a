"""The scan as its table shows it: each file's rows as they were made where it was read, and
the cross-file passes run over only the files that take part in them.

Turning a file's JSON back into jobs costs more than all else a table of a cached
site does, so only the files that take part in a cross-file pass
(:mod:`migrate.scan.links`, a fifth of a large site) are turned back, and the
passes' outcome for them is kept in the cache under their keys and paths: a
table of a site that did not change reads it back. What it gives equals the
rows of :func:`migrate.scan.scanner.scan`'s results.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, NamedTuple

from migrate.scan import cache
from migrate.scan.garbage import freeze_survivors
from migrate.scan.jsonstream import Rendered, from_rendered
from migrate.scan.results import FileFacts, FileResult, Summary, job_sizes, read_json
from migrate.scan.rows import FileRows
from migrate.scan.templates import Values

if TYPE_CHECKING:
    from migrate.scan import links


class FileView(NamedTuple):
    path: str
    format: str
    facts: FileFacts
    rows: FileRows


def build(files: Iterable[Rendered], values: Values = (), cache_dir: str | None = None) -> list[FileView]:
    """The view of every file of a scan, in its order; ``values``: the scan's template values."""
    views: list[FileView] = []
    linked: list[tuple[int, Rendered]] = []
    early = _Early()
    for f in files:
        rows = FileRows.from_json(f.rows)
        if rows.linked:
            early.add(f)
            linked.append((len(views), f))
        views.append(FileView(f.path, f.facts.format, f.facts, rows))
        # kept to the end, as the linked files' jobs are: the collector need not walk them again
        freeze_survivors()
    if linked:
        resolved = _resolved([f for _, f in linked], [views[i] for i, _ in linked], values, cache_dir, early)
        for (index, _), view in zip(linked, resolved, strict=True):
            views[index] = view
    return views


class _Early:
    """The linked files read fresh, turned back into jobs as they come in, with what their workers
    found for the passes: while the workers still read the rest of the site, not after them."""

    def __init__(self) -> None:
        self.results: dict[str, FileResult] = {}
        self.ahead: links.ReadAhead | None = None

    def add(self, f: Rendered) -> None:
        if not f.json:
            return  # found in the cache: its JSON is read only if the passes run
        self.results[f.path] = from_rendered(f)
        if f.ahead is not None:
            if self.ahead is None:
                from migrate.scan import links  # the passes import readers: only a site with linked files

                self.ahead = links.ReadAhead()
            self.ahead.add(f.path, f.ahead)

    def result(self, f: Rendered) -> FileResult:
        known = self.results.get(f.path)
        return known if known is not None else from_rendered(f)


def summary(views: Sequence[FileView]) -> Summary:
    return Summary.of(view.facts for view in views)


class FragmentsGone(Exception):
    """The JSON of a file the table read from the cache is no longer there (another scan replaced the
    cache meanwhile): the scan runs again, reading the JSON with the rows."""


def _resolved(
    files: list[Rendered], read: list[FileView], values: Values, cache_dir: str | None, early: _Early
) -> list[FileView]:
    """The views of the linked files after the passes: kept in the cache, else worked out (and kept);
    ``read``: their views as each file was read."""
    keys = [(f.path, f.key) for f in files if f.key is not None]
    if cache_dir is None:
        return _passes(files, read, values, early)
    store = cache.ScanCache(cache_dir)
    try:
        if len(keys) < len(files):
            return _passes(_with_json(files, store), read, values, early)
        key = cache.linked_key(keys, values)
        kept = _decode(store.get_linked(key), files)
        if kept is not None:
            return kept
        views = _passes(_with_json(files, store), read, values, early)
        store.put_linked(key, json.dumps([[v.facts, v.rows] for v in views]))
        return views
    finally:
        store.close()


def _with_json(files: list[Rendered], store: cache.ScanCache) -> list[Rendered]:
    """The files with their JSON: the table read the cached ones' rows only, and the passes read jobs."""
    wanted = [f.key for f in files if not f.json and f.key is not None]
    if not wanted:
        return files
    found = store.get_fragments(wanted)
    out = []
    for f in files:
        if f.json or f.key is None:
            out.append(f)
        elif f.key in found:
            out.append(replace(f, json=cache.stamp(found[f.key], f.path)))
        else:
            raise FragmentsGone(f.path)
    return out


def _passes(files: list[Rendered], read: list[FileView], values: Values, early: _Early) -> list[FileView]:
    from migrate.scan import links  # the passes import readers: only a scan with linked files needs them

    views = []
    before = [early.result(f) for f in files]
    for old, result, view in zip(before, links.resolve(before, values, early.ahead), read, strict=True):
        if result is old:  # no pass changed the file: its rows as it was read stand
            views.append(view)
            continue
        sizes = job_sizes(result)
        views.append(
            FileView(
                result.path, result.format, FileFacts.of(result, sizes), FileRows.of(result, sizes, True)
            )
        )
    return views


def _decode(kept: str | None, files: list[Rendered]) -> list[FileView] | None:
    if kept is None:
        return None
    try:
        value = read_json(kept)
        views = [
            FileView(f.path, f.facts.format, FileFacts.from_value(facts), FileRows.from_value(rows))
            for f, (facts, rows) in zip(files, value, strict=True)
        ]
    except (ValueError, TypeError):
        return None  # damaged: worked out again
    return views


__all__ = ["FileView", "FragmentsGone", "build", "summary"]
