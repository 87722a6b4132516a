"""A batch script that serves a model across its nodes, read as the group of a LeaderWorkerSet.

Sites write it in two ways, and both read as one group of one pod per node:

- every node runs the server, told its rank and the first node's address
  (``srun python -m sglang.launch_server --nnodes $SLURM_NNODES --node-rank
  $SLURM_NODEID --dist-init-addr $head:5000 ...``, ``head`` from ``scontrol show
  hostnames``): each pod runs that program; the node count is the group's
  ``LWS_GROUP_SIZE``, the node's index its ``LWS_WORKER_INDEX``, node 0's
  address the leader's, ``LWS_LEADER_ADDRESS``;
- a Ray cluster over the nodes, started as Ray's Slurm guide does, and the
  server on node 0 (``vllm serve ... --pipeline-parallel-size 2``): the leader
  starts the Ray head and then the server, each worker joins the head.

The server is the step's program (or the Ray driver) when the table of
:mod:`..shell.servers` names it; its port is the one its command gives, else
the server's own default. The rest of the script reads as for the other native
shapes (:mod:`.native_shape`, :mod:`.native_ray`). Nothing is executed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from migrate import ir

from ..shell.servers import Server, server_in
from . import native_ray
from .flavors import serves_across_nodes
from .native_ray import RayShape, read_ray
from .native_shape import Shape, read_shape
from .native_words import Ref, RefKind, Unknown, Variable, Words, literal

GROUP_SIZE = "$(LWS_GROUP_SIZE)"  # the controller's env, first in every container: $(...) reads it
WORKER_INDEX = "$(LWS_WORKER_INDEX)"
LEADER_ADDRESS = "$(LWS_LEADER_ADDRESS)"
NODE_COUNTS = ("SLURM_NNODES", "SLURM_JOB_NUM_NODES")
# A node's own index: a value of node 0 when the batch shell expands it (see read_serving)
NODE_INDEXES = ("SLURM_NODEID", "SLURM_PROCID")
# Why a Ray start-up statement is not written, said of a group's pods rather than of KubeRay's
_RAY_START_UP = {
    native_ray.WAITS_FOR_HEAD: "waits for the head: the workers join it again until it answers",
    native_ray.KEEPS_NODE_PID: "keeps a started node's process id: each pod's Ray node stops with its pod",
    native_ray.PAUSE_AT_START: (
        "a pause while the nodes start: the workers join the head again until it answers, and the leader "
        "starts the server once they have"
    ),
    native_ray.STOPS_WITH_DRIVER: "the group's Ray nodes stop with its pods",
}


@dataclass
class ServingShape:
    shape: Shape  # the variables, the statements and the step (or the Ray driver) that serves
    server: Server
    ray: RayShape | None = None  # the Ray cluster the server runs on, when the script starts one


def constants(base: Mapping[str, str]) -> dict[str, str | Variable]:
    """The job's values as a group's pods have them: the node count as the group's size (its number
    still known for ``$((...))``), and a node's index as the pod's own.

    On Slurm the batch shell expands ``$SLURM_NODEID`` to node 0's 0 before srun starts the step on
    every node, so a server passed ``--node-rank $SLURM_NODEID`` gets rank 0 everywhere and cannot
    form its group; each pod gets its own index instead, and the fidelity log says so.
    """
    out: dict[str, str | Variable] = {k: v for k, v in base.items() if k not in NODE_INDEXES}
    for name in NODE_COUNTS:
        if name in base:
            out[name] = Variable([[Ref(RefKind.SLURM, name, base[name])]], constant=True)
    return out


def read_serving(job: ir.Job, known: Mapping[str, str | Variable]) -> ServingShape | None:
    """The script as a model server over its nodes; None when its step (or driver) serves nothing."""
    if not serves_across_nodes(job):  # a text search first: most scripts start no server
        return None
    ray = read_ray(job, known)
    shape = ray.shape if ray is not None else read_shape(job, known)
    if shape.step is None:
        return None  # read no further than a statement that keeps it emulated: the others say which
    server = server_in(" ".join(_text(word) for word in shape.step.argv))
    if server is None:
        return None
    shape.dropped = [(st, _RAY_START_UP.get(why, why)) for st, why in shape.dropped]
    return ServingShape(shape, server, ray)


def served_port(argv: Words, server: Server) -> int:
    """The port the server's command gives, else the server's default; Unknown when neither is known."""
    for i, word in enumerate(argv):
        text = literal(word) or ""
        for option in server.port_options:
            if text == option and i + 1 < len(argv):
                return _port(argv[i + 1], option)
            if text.startswith(option + "="):
                return _port([text[len(option) + 1 :]], option)
    if server.port is None:
        raise Unknown(f"{server.name} is given no {' or '.join(server.port_options) or 'port'}")
    return server.port


def _port(word: list[str | Ref], option: str) -> int:
    text = literal(word)
    if text is None or not text.isdigit():
        raise Unknown(f"{option} is known when the job runs only")
    return int(text)


def _text(word: list[str | Ref]) -> str:
    return "".join(seg for seg in word if isinstance(seg, str))


__all__ = [
    "GROUP_SIZE",
    "LEADER_ADDRESS",
    "WORKER_INDEX",
    "ServingShape",
    "constants",
    "read_serving",
    "served_port",
]
