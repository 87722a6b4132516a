"""MPI hello world through Debian's Open MPI, without a compiler: libmpi called with ctypes.

Each rank all-reduces (rank + 1) over MPI_COMM_WORLD and writes
``<out>/rank-<rank>.json`` with the world size, its local rank (Open MPI's
OMPI_COMM_WORLD_LOCAL_RANK, else SLURM_LOCALID under srun), the node it ran on and the sum.
"""

from __future__ import annotations

import ctypes
import json
import os
import socket
import sys


def main() -> None:
    out = sys.argv[1]
    mpi = ctypes.CDLL("libmpi.so.40", mode=ctypes.RTLD_GLOBAL)

    def handle(name: str) -> ctypes.c_void_p:  # Open MPI's predefined handles are global structs
        return ctypes.c_void_p(ctypes.addressof(ctypes.c_char.in_dll(mpi, name)))

    world = handle("ompi_mpi_comm_world")
    mpi.MPI_Init(None, None)
    rank, size, total = ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
    mpi.MPI_Comm_rank(world, ctypes.byref(rank))
    mpi.MPI_Comm_size(world, ctypes.byref(size))
    mine = ctypes.c_int(rank.value + 1)
    mpi.MPI_Allreduce(
        ctypes.byref(mine), ctypes.byref(total), 1, handle("ompi_mpi_int"), handle("ompi_mpi_op_sum"), world
    )
    record = {
        "rank": rank.value,
        "world_size": size.value,
        # mpirun's, else srun's (a rank srun starts through PMIx has Slurm's identity, not Open MPI's)
        "local_rank": int(
            os.environ.get("OMPI_COMM_WORLD_LOCAL_RANK") or os.environ.get("SLURM_LOCALID") or -1
        ),
        "node_id": os.environ.get("SLURM_NODEID"),
        "nodename": os.environ.get("SLURMD_NODENAME"),
        "hostname": socket.gethostname(),
        "allreduce": float(total.value),
        "cwd": os.getcwd(),
        "env": {name: os.environ.get(name) for name in sys.argv[2:]},
    }
    with open(os.path.join(out, f"rank-{rank.value}.json"), "w") as fh:
        json.dump(record, fh)
    mpi.MPI_Finalize()


if __name__ == "__main__":
    main()
