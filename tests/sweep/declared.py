"""Differences the translation makes on purpose, each with its reason: a case whose first difference
matches an entry is counted apart, not as a failure."""

from __future__ import annotations

import fnmatch

# (case name pattern, difference pattern, reason)
DECLARED: tuple[tuple[str, str, str], ...] = (
    (
        "*",
        "argv: * --rdzv_id=<job> *, pods * --rdzv_id=* (in torchrun)",
        "a native PyTorchJob's rendezvous id is the job's name, unique while the job runs, as Slurm's "
        "job id is",
    ),
    (
        "*",
        "only on Slurm: module [[]*",
        "native pods load no modules: the image holds the software the modules gave (recorded as "
        "approximated)",
    ),
    (
        "*torchrun*",
        "SLURM_GPUS_ON_NODE: Slurm None, pods *",
        "a job that asks no GPUs but runs torchrun --nproc_per_node=N is given N GPUs a node (recorded as "
        "inferred from the script): on the sandbox it asked none and got none",
    ),
    (
        "*native_ray*",
        "*",
        "a RayJob's cluster is KubeRay's and its entrypoint goes through Ray's job API: with `ray` a "
        "stand-in neither side has a cluster; tests/test_run_differential.py runs this case with real Ray "
        "on both sides",
    ),
)


def reason(case: str, difference: str) -> str | None:
    for case_pattern, difference_pattern, why in DECLARED:
        if fnmatch.fnmatch(case, case_pattern) and fnmatch.fnmatch(difference, difference_pattern):
            return why
    return None
