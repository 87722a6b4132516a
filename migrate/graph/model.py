"""Names shared by the graph builder, its analyses and its exports.

Node ids carry their type as a prefix (``job:``, ``fs:`` ...) so that a job and
a queue that happen to share a name never collide, and so that people reading
the exported GraphML can tell nodes apart without looking at attributes.
"""

from __future__ import annotations

import sys

# Node types, each also the id prefix.
JOB = "job"
FILESYSTEM = "fs"
PATH = "path"
MONITOR = "monitor"
IMAGE = "image"
MODULE = "module"
QUEUE = "queue"
EXTERNAL = "external"  # a dependency or script that is not among the scanned jobs

NODE_TYPES = (JOB, FILESYSTEM, PATH, MONITOR, IMAGE, MODULE, QUEUE, EXTERNAL)

# Edge types.
READS = "reads"
WRITES = "writes"
READWRITE = "readwrite"
USES = "uses"  # storage touched with no read/write hint
ON_FILESYSTEM = "on_filesystem"  # path -> the file system that holds it
DEPENDS_ON = "depends_on"  # dependent job -> prerequisite
SUBMITS = "submits"  # wrapper (or self-chaining job) -> the job it submits
PRODUCES_FOR = "produces_for"  # producer job -> consumer job
REPORTS_TO = "reports_to"
USES_IMAGE = "uses_image"
USES_MODULE = "uses_module"
SUBMITS_TO = "submits_to"
USES_HELPER = "uses_helper"  # job -> the long-running object it needs (rendezvous store, Ray cluster)

EDGE_TYPES = (
    READS,
    WRITES,
    READWRITE,
    USES,
    ON_FILESYSTEM,
    DEPENDS_ON,
    SUBMITS,
    PRODUCES_FOR,
    REPORTS_TO,
    USES_IMAGE,
    USES_MODULE,
    SUBMITS_TO,
    USES_HELPER,
)

# Edges that tie jobs into one migration unit: they must move together.
UNIT_EDGE_TYPES = (DEPENDS_ON, PRODUCES_FOR, SUBMITS, USES_HELPER)

STORAGE_NODE_TYPES = (FILESYSTEM, PATH)

GRAPH_SCHEMA = "migrate-graph/1"


class Attr:
    """The attribute keys of nodes and edges. Values stay plain strings, numbers and booleans:
    GraphML writes no other type, so a vocabulary member is written as ``str(member)``."""

    TYPE = "type"  # every node and edge: one of NODE_TYPES or EDGE_TYPES
    LABEL = "label"
    NOTE = "note"
    EVIDENCE = "evidence"  # path:line where an edge was read
    # job nodes
    KIND = "kind"  # also a file system's kind (lustre, nfs, local ...)
    FORMAT = "format"
    NODES = "nodes"
    GPUS = "gpus"
    PATH = "path"  # also a produces_for edge's shared directory
    LINE = "line"
    ARRAY_SIZE = "array_size"
    INTERNAL_DEPENDENCIES = "internal_dependencies"
    SELF_RESUBMIT = "self_resubmit"
    # file-system and path nodes
    PREFIX = "prefix"
    ORIGIN = "origin"  # also a storage edge's StoragePath.via values, joined
    CLAIMS = "claims"
    FILESYSTEM = "filesystem"  # a path node's file-system node
    UNRESOLVED = "unresolved"  # a placeholder (${CLAIM}, $dep), not a real thing
    # module and queue nodes
    SOFTWARE = "software"
    SCHEDULER = "scheduler"
    MIRROR = "mirror"
    # edges
    LOG = "log"
    DETAIL = "detail"
    ROLE = "role"
    DEP = "dep"  # a depends_on edge's dependency type
    VIA = "via"  # how a depends_on edge was found
    CONSUMER_EVIDENCE = "consumer_evidence"


def node_id(kind: str, name: str) -> str:
    # Interned: every edge keeps its own reference to both ends, and a job has dozens of edges.
    return sys.intern(f"{kind}:{name}")


def job_node(job_id: str) -> str:
    return node_id(JOB, job_id)


def split_node(node: str) -> tuple[str, str]:
    """``"job:a/b.sbatch#0"`` -> ``("job", "a/b.sbatch#0")``."""
    kind, _, name = node.partition(":")
    return kind, name


def evidence(path: str, line: int | None) -> str:
    return f"{path}:{line}" if line is not None else path


__all__ = [
    "DEPENDS_ON",
    "EDGE_TYPES",
    "EXTERNAL",
    "FILESYSTEM",
    "GRAPH_SCHEMA",
    "IMAGE",
    "JOB",
    "MODULE",
    "MONITOR",
    "NODE_TYPES",
    "ON_FILESYSTEM",
    "PATH",
    "PRODUCES_FOR",
    "QUEUE",
    "READS",
    "READWRITE",
    "REPORTS_TO",
    "STORAGE_NODE_TYPES",
    "SUBMITS",
    "SUBMITS_TO",
    "UNIT_EDGE_TYPES",
    "USES",
    "USES_HELPER",
    "USES_IMAGE",
    "USES_MODULE",
    "WRITES",
    "Attr",
    "evidence",
    "job_node",
    "node_id",
    "split_node",
]
