"""A rank started once per pod (or task) with the operator's env: RANK, WORLD_SIZE, MASTER_ADDR/PORT.

No launcher of its own (or torchrun's): it joins a gloo group through ``env://``,
all-reduces (rank + 1), and writes ``<out>/rank-<RANK>.json`` with what it saw: the
world size, the folder it started in and the variables the case names on its
command line (``VAR=NAME`` arguments after the folder). ``<out>`` is made when it
is missing (one folder per group of a LeaderWorkerSet).
"""

from __future__ import annotations

import json
import os
import sys
from datetime import timedelta

import torch
import torch.distributed as dist


def main() -> None:
    out, names = sys.argv[1], sys.argv[2:]
    dist.init_process_group("gloo", init_method="env://", timeout=timedelta(seconds=60))
    rank = dist.get_rank()
    value = torch.tensor([float(rank + 1)])
    dist.all_reduce(value)
    record = {
        "rank": rank,
        "world_size": dist.get_world_size(),
        "cwd": os.getcwd(),
        "nodename": os.environ.get("SLURMD_NODENAME"),
        "env": {name: os.environ.get(name) for name in names},
        "allreduce": value.item(),
    }
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, f"rank-{rank}.json"), "w") as fh:
        json.dump(record, fh)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
