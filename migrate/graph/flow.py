"""Producer -> consumer links: one job writes where another reads.

The naive way compares every writer with every reader; at 100,000 jobs that
is 10^10 pairs. Instead writers are indexed by their directory and by every
ancestor of it, so each read looks up only its own directory and its own
ancestors: O(total paths x depth) plus the links actually found.

Two paths meet at their longest common directory when one contains the other
(``/fsx/ckpt/detr`` written, ``/fsx/ckpt/detr/step100`` read; or ``/fsx/prep/coco``
written, ``/fsx/prep`` read). A path cut before a per-run component keeps that
component as a pattern, so ``/fsx/ckpt/vit-$SLURM_JOB_ID`` does not meet a
reader of ``/fsx/ckpt/sweeps``. The file-system root never counts as a meeting
point (every job on ``/fsx`` would be linked), nor do logs.

A project directory that many jobs write and many read links each writer to
each reader: the links grow with the square of the site (3.5 million at
100,000 jobs). So ``Flows`` keeps what they are made of instead: each distinct
read (directory and pattern) with the writes it meets, and each job's reads.
The links of a job are derived from that when asked, and which jobs the links
tie together (units, run order) needs only the reads: one "meeting" per read
ties its writers to its readers as all their links would.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from migrate import ir
from migrate.graph.storage import Location, component_matches, patterns_overlap
from migrate.vocab import FilesystemKind

READER_ACCESS = frozenset((ir.READ, ir.READ_WRITE, ir.UNKNOWN))  # a path named but not written is read
WRITER_ACCESS = frozenset((ir.WRITE, ir.READ_WRITE))


@dataclass(frozen=True, slots=True)
class FlowLink:
    producer: str
    consumer: str
    directory: str  # where the two meet
    producer_line: int | None
    consumer_line: int | None


# A write a read meets: (producer index, meeting directory, line of the write).
_Met = tuple[int, str, int | None]


@dataclass(frozen=True, slots=True)
class Meeting:
    """One distinct read and every job that makes it or writes where it looks (indexes into the jobs)."""

    writers: tuple[int, ...]
    readers: tuple[int, ...]


class Flows:
    """The data flow between jobs, as the reads each job makes and the writes each read meets."""

    def __init__(
        self, jobs: tuple[str, ...], reads: list[list[tuple[int, int | None]]], met: list[list[_Met]]
    ):
        self.jobs = jobs  # job ids, sorted; links name jobs by their index here
        self._reads = reads  # per job: (read index, line) in the order the job names them
        self._met = met  # per read: the writes it meets, in the order they are found
        self.index = {job: i for i, job in enumerate(jobs)}

    def links_to(self, consumer: int) -> dict[int, tuple[str, int | None, int | None]]:
        """Producer -> (meeting directory, producer line, consumer line) of the links into ``consumer``.

        A pair that meets in several places keeps the deepest meeting point (the
        most specific evidence); ties go to the smaller path, then to the first found.
        """
        best: dict[int, tuple[str, int | None, int | None]] = {}
        for read, line in self._reads[consumer]:
            for producer, directory, written_line in self._met[read]:
                if producer == consumer:
                    continue
                current = best.get(producer)
                if current is None or _deeper(directory, current[0]):
                    best[producer] = (directory, written_line, line)
        return best

    def links(self) -> Iterator[FlowLink]:
        """Every link, by producer then consumer."""
        found = [
            (producer, consumer, where)
            for consumer in range(len(self.jobs))
            for producer, where in self.links_to(consumer).items()
        ]
        found.sort(key=lambda link: (link[0], link[1]))
        for producer, consumer, (directory, producer_line, consumer_line) in found:
            yield FlowLink(self.jobs[producer], self.jobs[consumer], directory, producer_line, consumer_line)

    def meetings(self) -> Iterator[Meeting]:
        """Each read that meets a write, with its writers and readers.

        Every writer is linked to every reader other than itself, so the
        meetings tie the same jobs together (and in the same run order) as the
        links do, in a number of pairs that grows with the site, not its square.
        """
        readers: list[list[int]] = [[] for _ in self._met]
        for job, reads in enumerate(self._reads):
            for read, _ in reads:
                if not readers[read] or readers[read][-1] != job:
                    readers[read].append(job)
        for read, met in enumerate(self._met):
            if met and readers[read]:
                yield Meeting(tuple(dict.fromkeys(producer for producer, _, _ in met)), tuple(readers[read]))


def flows_of(locations: Iterable[tuple[str, list[Location]]]) -> Flows:
    """The flows between jobs (distinct ids), given each job's locations (``StorageResolver.locations``)."""
    per_job = sorted(
        ((job_id, [loc for loc in locs if _eligible(loc)]) for job_id, locs in locations), key=lambda j: j[0]
    )
    writers_at: dict[str, dict[int, list[Location]]] = defaultdict(lambda: defaultdict(list))
    writers_below: dict[str, dict[int, list[Location]]] = defaultdict(lambda: defaultdict(list))
    for job, (_, locs) in enumerate(per_job):
        for loc in locs:
            if loc.access not in WRITER_ACCESS:
                continue
            writers_at[loc.directory][job].append(loc)
            for ancestor in _ancestors(loc):
                writers_below[ancestor][job].append(loc)

    read_index: dict[tuple[str, int, str | None], int] = {}
    met: list[list[_Met]] = []
    reads: list[list[tuple[int, int | None]]] = []
    for _, locs in per_job:
        mine: list[tuple[int, int | None]] = []
        for loc in locs:
            if loc.access not in READER_ACCESS:
                continue
            # what a read meets depends on its directory (and depth) and pattern only
            key = (loc.directory, loc.depth, loc.tail)
            read = read_index.get(key)
            if read is None:
                read = read_index[key] = len(met)
                met.append(_meets(loc, writers_at, writers_below))
            mine.append((read, loc.line))
        reads.append(mine)
    return Flows(tuple(job_id for job_id, _ in per_job), reads, met)


def producer_consumer_links(locations: Iterable[tuple[str, list[Location]]]) -> list[FlowLink]:
    """Links between jobs, given each job's locations (as from ``StorageResolver.locations``)."""
    return list(flows_of(locations).links())


def _meets(
    loc: Location,
    writers_at: dict[str, dict[int, list[Location]]],
    writers_below: dict[str, dict[int, list[Location]]],
) -> list[_Met]:
    found: list[_Met] = []
    # writers at or under the directory read: they meet at the read directory
    for producer, written in writers_below.get(loc.directory, {}).items():
        for at in written:
            if _reader_covers(loc, at):
                found.append((producer, loc.directory, at.line))
                break
    # writers at an ancestor of the directory read: they meet at that ancestor
    for ancestor in _ancestors(loc)[1:]:
        below = _component_below(loc.directory, ancestor)
        for producer, written in writers_at.get(ancestor, {}).items():
            for at in written:
                if component_matches(below, at.tail):
                    found.append((producer, ancestor, at.line))
                    break
    return found


def _reader_covers(read: Location, written: Location) -> bool:
    """A write at or below the read directory lands where the reader looks."""
    if written.directory == read.directory:
        return patterns_overlap(read.tail, written.tail)
    return component_matches(_component_below(written.directory, read.directory), read.tail)


def _component_below(path: str, ancestor: str) -> str:
    return path[len(ancestor) + 1 :].split("/", 1)[0]


def _eligible(loc: Location) -> bool:
    # node-local file systems (per-node NVMe) cannot carry data from one job to the next
    return not loc.log and loc.depth >= 1 and loc.filesystem.kind != FilesystemKind.LOCAL


def _ancestors(loc: Location) -> list[str]:
    """The directory itself, then each parent, down to one level below the file-system root."""
    out = [loc.directory]
    current = loc.directory
    for _ in range(loc.depth - 1):
        current = current.rsplit("/", 1)[0]
        out.append(current)
    return out


def _deeper(candidate: str, current: str) -> bool:
    if len(candidate) != len(current):
        return len(candidate) > len(current)
    return candidate < current


__all__ = ["FlowLink", "Flows", "Meeting", "flows_of", "producer_consumer_links"]
