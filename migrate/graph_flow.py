"""Producer -> consumer links: one job writes where another reads.

The naive way compares every writer with every reader; at 100,000 jobs that
is 10^10 pairs. Instead writers are indexed by their directory and by every
ancestor of it, so each reader looks up only its own directory and its own
ancestors: O(total paths x depth) plus the links actually found.

Two paths meet at their longest common directory when one contains the other
(``/fsx/ckpt/detr`` written, ``/fsx/ckpt/detr/step100`` read; or ``/fsx/prep/coco``
written, ``/fsx/prep`` read). A path cut before a per-run component keeps that
component as a pattern, so ``/fsx/ckpt/vit-$SLURM_JOB_ID`` does not meet a
reader of ``/fsx/ckpt/sweeps``. The file-system root never counts as a meeting
point (every job on ``/fsx`` would be linked), nor do logs.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from migrate import ir
from migrate.graph_storage import Location, component_matches, patterns_overlap

READER_ACCESS = frozenset((ir.READ, ir.READ_WRITE, ir.UNKNOWN))  # a path named but not written is read
WRITER_ACCESS = frozenset((ir.WRITE, ir.READ_WRITE))


@dataclass(frozen=True)
class FlowLink:
    producer: str
    consumer: str
    directory: str  # where the two meet
    producer_at: Location
    consumer_at: Location


def producer_consumer_links(locations: Iterable[tuple[str, list[Location]]]) -> list[FlowLink]:
    """Links between jobs, given each job's locations (as from ``StorageResolver.locations``)."""
    per_job = [(job_id, [loc for loc in locs if _eligible(loc)]) for job_id, locs in locations]
    writers_at: dict[str, dict[str, list[Location]]] = defaultdict(lambda: defaultdict(list))
    writers_below: dict[str, dict[str, list[Location]]] = defaultdict(lambda: defaultdict(list))
    for job_id, locs in per_job:
        for loc in locs:
            if loc.access not in WRITER_ACCESS:
                continue
            writers_at[loc.directory][job_id].append(loc)
            for ancestor in _ancestors(loc):
                writers_below[ancestor][job_id].append(loc)

    best: dict[tuple[str, str], FlowLink] = {}
    for consumer, locs in per_job:
        for loc in locs:
            if loc.access not in READER_ACCESS:
                continue
            # writers at or under the directory read: they meet at the read directory
            for producer, written in writers_below.get(loc.directory, {}).items():
                for at in written:
                    if _reader_covers(loc, at):
                        _keep(best, producer, consumer, loc.directory, at, loc)
                        break
            # writers at an ancestor of the directory read: they meet at that ancestor
            for ancestor in _ancestors(loc)[1:]:
                below = _component_below(loc.directory, ancestor)
                for producer, written in writers_at.get(ancestor, {}).items():
                    for at in written:
                        if component_matches(below, at.tail):
                            _keep(best, producer, consumer, ancestor, at, loc)
                            break
    return [best[key] for key in sorted(best)]


def _reader_covers(read: Location, written: Location) -> bool:
    """A write at or below the read directory lands where the reader looks."""
    if written.directory == read.directory:
        return patterns_overlap(read.tail, written.tail)
    return component_matches(_component_below(written.directory, read.directory), read.tail)


def _component_below(path: str, ancestor: str) -> str:
    return path[len(ancestor) + 1 :].split("/", 1)[0]


def _eligible(loc: Location) -> bool:
    # node-local file systems (per-node NVMe) cannot carry data from one job to the next
    return not loc.log and loc.depth >= 1 and loc.filesystem.kind != "local"


def _ancestors(loc: Location) -> list[str]:
    """The directory itself, then each parent, down to one level below the file-system root."""
    out = [loc.directory]
    current = loc.directory
    for _ in range(loc.depth - 1):
        current = current.rsplit("/", 1)[0]
        out.append(current)
    return out


def _keep(
    best: dict[tuple[str, str], FlowLink],
    producer: str,
    consumer: str,
    directory: str,
    producer_at: Location,
    consumer_at: Location,
) -> None:
    if producer == consumer:
        return
    key = (producer, consumer)
    current = best.get(key)
    # the deepest meeting point is the most specific evidence; ties go to the smaller path
    if current is None or _deeper(directory, current.directory):
        best[key] = FlowLink(producer, consumer, directory, producer_at, consumer_at)


def _deeper(candidate: str, current: str) -> bool:
    if len(candidate) != len(current):
        return len(candidate) > len(current)
    return candidate < current


__all__ = ["FlowLink", "producer_consumer_links"]
