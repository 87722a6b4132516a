"""A rank of a small gloo job: all_reduce of (rank + 1), then one JSON record of what it saw.

Started by torchrun on both sides of the differential tests; writes
``<out>/rank-<RANK>.json`` with the world size, its local rank, the node it ran
on (SLURM_NODEID and the host name, which the test maps to a node index), and
the reduced value.
"""

from __future__ import annotations

import json
import os
import socket
import sys
from datetime import timedelta

import torch
import torch.distributed as dist


def main() -> None:
    out = sys.argv[1]
    dist.init_process_group("gloo", timeout=timedelta(seconds=60))
    rank = dist.get_rank()
    value = torch.tensor([float(rank + 1)])
    dist.all_reduce(value)
    record = {
        "rank": rank,
        "world_size": dist.get_world_size(),
        "local_rank": int(os.environ["LOCAL_RANK"]),
        "node_id": os.environ.get("SLURM_NODEID"),
        "nodename": os.environ.get("SLURMD_NODENAME"),
        "hostname": socket.gethostname(),
        "allreduce": value.item(),
    }
    with open(os.path.join(out, f"rank-{rank}.json"), "w") as fh:
        json.dump(record, fh)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
