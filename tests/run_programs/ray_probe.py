"""A Ray driver that reports the cluster it finds: its nodes and their resources, and a task on each.

Started as a RayJob's entrypoint (``python3 ray_probe.py OUT NAME...``): it joins the
cluster RAY_ADDRESS names (once RAY_PROBE_NODES nodes have joined, when set), runs one task
pinned to every live node, each writing ``<OUT>/node-<n>.json``, and writes
``<OUT>/driver.json``: each node's CPU, GPU and memory resources, the tasks' host identities,
and the variables the case names.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time

import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy


@ray.remote(num_cpus=0)
def where(out: str, n: int) -> dict[str, str | None]:
    seen = {"hostname": socket.gethostname(), "slurm_node": os.environ.get("SLURMD_NODENAME")}
    with open(os.path.join(out, f"node-{n}.json"), "w") as fh:
        json.dump(seen, fh)
    return seen


def main() -> None:
    out, names = sys.argv[1], sys.argv[2:]
    ray.init(logging_level="ERROR")
    wanted, deadline = int(os.environ.get("RAY_PROBE_NODES", "0")), time.time() + 120
    while sum(n["Alive"] for n in ray.nodes()) < wanted and time.time() < deadline:
        time.sleep(0.5)  # the workers of a script's own cluster are still joining
    nodes = sorted((n for n in ray.nodes() if n["Alive"]), key=lambda n: n["NodeID"])
    pinned = [NodeAffinitySchedulingStrategy(n["NodeID"], soft=False) for n in nodes]
    tasks = [where.options(scheduling_strategy=s).remote(out, i) for i, s in enumerate(pinned)]
    seen = ray.get(tasks)
    record = {
        "resources": sorted(
            ({key: n["Resources"].get(key, 0) for key in ("CPU", "GPU", "memory")} for n in nodes),
            key=lambda r: (r["CPU"], r["GPU"], r["memory"]),
        ),
        "hosts": len({(s["hostname"], s["slurm_node"]) for s in seen}),
        "env": {name: os.environ.get(name) for name in names},
        "ray_address_set": bool(os.environ.get("RAY_ADDRESS")),
    }
    with open(os.path.join(out, "driver.json"), "w") as fh:
        json.dump(record, fh, sort_keys=True)


if __name__ == "__main__":
    main()
