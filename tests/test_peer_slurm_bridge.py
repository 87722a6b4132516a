"""What Slinky's slurm-bridge (SlinkyProject/slurm-bridge) reads of the annotations the
slurm-bridge flavor writes: the translation writes what the bridge means, or says why not.

Each test names the bridge file that holds the expectation. Goldens:
corpus/golden/peers/<case>.slurm-bridge.json (pytest --update-golden rewrites them).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import CORPUS, GOLDEN, REPO, site_for
from golden import check_json

from migrate.diagnostics import Collector
from migrate.fidelity import Translation
from migrate.translators.kubernetes.slurm_bridge import PREFIX
from migrate.translators.kubernetes.writer import translate_job
from migrate.translators.slurm import reader
from migrate.vocab import FidelityStatus

CASES = ("dask_workers_elastic.sbatch", "nightly_eval_no_time.sbatch")


def bridge(text: str, rel: str = "job.sbatch", site: Any = None) -> Translation:
    (job,) = reader.read(text, rel, Collector(rel))
    return translate_job(job, site, "slurm-bridge")


def annotations(t: Translation) -> dict[str, str]:
    docs = [d for text in t.files.values() for d in yaml.safe_load_all(text) if d]
    (workload,) = [d for d in docs if d["kind"] in ("Job", "JobSet")]
    return {
        k.removeprefix(PREFIX): v
        for k, v in workload["metadata"]["annotations"].items()
        if k.startswith(PREFIX)
    }


def entry(t: Translation, item: str) -> Any:
    (found,) = [e for e in t.fidelity.entries if e.item == item]
    return found


def script(*options: str) -> str:
    return "#!/bin/bash\n#SBATCH -J w\n" + "".join(f"#SBATCH {o}\n" for o in options) + "srun ./w\n"


@pytest.mark.parametrize("spelling", ["UNLIMITED", "INFINITE", "infinite", "0", "-1"])
def test_an_unlimited_time_is_no_timelimit_annotation(spelling: str) -> None:
    """slurm-bridge internal/wellknown/annotations.go and internal/utils/slurmjobir/: the timelimit
    annotation is an int32 of minutes; there is no number for unlimited, and without the
    annotation Slurm applies the partition's default."""
    t = bridge(script(f"--time={spelling}"))
    assert "timelimit" not in annotations(t)
    found = entry(t, f"--time={spelling}")
    assert found.status == FidelityStatus.APPROXIMATED and "partition's default" in found.reason


def test_no_time_leaves_the_partition_default_and_says_so() -> None:
    """slurm-bridge internal/utils/slurmjobir/: an absent timelimit leaves Slurm's partition default;
    the plan's assumed hour is not written."""
    t = bridge(script())
    assert "timelimit" not in annotations(t)
    assert "partition's default" in entry(t, "allocation: time limit").reason
    assert annotations(bridge(script("--time=1:30:00")))["timelimit"] == "90"


def test_a_node_range_is_not_min_and_max_nodes_of_every_pod() -> None:
    """slurm-bridge internal/utils/slurmjobir/: one Slurm job per pod, so min-nodes/max-nodes of the
    workload would ask every pod's one-node job for 2 to 4 nodes."""
    t = bridge(script("--nodes=2-4"))
    assert not {"min-nodes", "max-nodes"} & set(annotations(t))
    found = entry(t, "--nodes=2-4")
    assert found.status == FidelityStatus.APPROXIMATED and "one-node Slurm job" in found.reason


def test_a_partition_list_is_passed_through_unchanged() -> None:
    """slurm-bridge internal/wellknown/annotations.go (AnnotationPartition) and slurmjobir: the value
    goes to Slurm as written, and Slurm takes a list of partitions."""
    t = bridge(script("--partition=gpu,debug"))
    assert annotations(t)["partition"] == "gpu,debug"
    assert entry(t, "--partition=gpu,debug").status == FidelityStatus.MAPPED


@pytest.mark.parametrize("name", CASES)
def test_bridge_golden(name: str, in_repo: Path, update_golden: bool) -> None:
    """The bridge's annotations and fidelity entries for corpus cases shaped by the facts above."""
    path = CORPUS / "cases" / "slurm" / name
    rel = str(path.relative_to(REPO))
    t = bridge(path.read_text(encoding="utf-8"), rel, site_for(rel))
    doc = {
        "source": rel,
        "annotations": annotations(t),
        "fidelity": t.fidelity.to_list(),
        "diagnostics": [d.to_dict() for d in t.diagnostics if d.code.startswith("TRANSLATE-")],
    }
    check_json(GOLDEN / "peers" / f"{name}.slurm-bridge.json", doc, update_golden)
