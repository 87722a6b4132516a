"""Jobs as their wrappers submit them: the sbatch command line over SBATCH_* over #SBATCH lines."""

from __future__ import annotations

from pathlib import Path

from conftest import CORPUS, REPO, site_of_cases

from migrate import ir
from migrate.graph.submitted import as_submitted
from migrate.plan.planner import build_plan, plan_json
from migrate.scan import scanner
from migrate.site.allocation import allocate
from migrate.translate import translate_jobs
from migrate.vocab import Direction

CASES = CORPUS / "cases" / "allocation"
SCRIPT = """#!/bin/bash
#SBATCH --job-name=train
#SBATCH --partition=cpu
#SBATCH --nodes=1
#SBATCH --time=00:30:00
srun python train.py
"""


def _scan(tmp_path: Path, files: dict[str, str]) -> list[ir.Job]:
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    return scanner.scan([str(tmp_path)]).jobs


def _job(jobs: list[ir.Job], name: str) -> ir.Job:
    (found,) = [j for j in jobs if j.source.path.endswith("/" + name)]
    return found


def test_the_wrapper_records_the_sbatch_variables_it_exports_or_sets_on_the_line(tmp_path: Path) -> None:
    wrapper = """#!/bin/bash
SBATCH_QOS=ignored            # not exported: sbatch never sees it
export SBATCH_PARTITION=gpu
export SBATCH_ACCOUNT=$TEAM   # read at run time: not known here
SBATCH_TIMELIMIT=2:00:00 sbatch train.sbatch
"""
    jobs = _scan(tmp_path, {"run.sh": wrapper, "train.sbatch": SCRIPT})
    (sub,) = _job(jobs, "run.sh").submits
    assert sub.environment == (
        ir.KeyValue("SBATCH_PARTITION", "gpu"),
        ir.KeyValue("SBATCH_TIMELIMIT", "2:00:00"),
    )


def test_the_command_line_outranks_the_variables_which_outrank_the_script(tmp_path: Path) -> None:
    wrapper = """#!/bin/bash
export SBATCH_PARTITION=gpu
export SBATCH_TIMELIMIT=04:00:00
sbatch --time=12:00:00 -N 4 train.sbatch
"""
    jobs = as_submitted(_scan(tmp_path, {"run.sh": wrapper, "train.sbatch": SCRIPT}))
    train = _job(jobs, "train.sbatch")
    assert train.placement.partitions == ("gpu",)  # SBATCH_PARTITION over #SBATCH --partition=cpu
    assert train.time_limit_s == 12 * 3600  # --time on the command line over SBATCH_TIMELIMIT
    assert train.components[0].resources.nodes_min == 4
    assert train.submitted_by is not None and train.submitted_by.endswith("run.sh")
    assert [d.text for d in train.submitted] == [
        "SBATCH_PARTITION=gpu",
        "SBATCH_TIMELIMIT=04:00:00",
        "--time=12:00:00",
        "--nodes=4",
    ]
    assert train.launcher_names() == ("srun",)  # the body is the script's own


def test_a_script_submitted_two_ways_keeps_its_own_options(tmp_path: Path) -> None:
    wrapper = "#!/bin/bash\nsbatch -p gpu train.sbatch\nsbatch -p debug train.sbatch\n"
    jobs = as_submitted(_scan(tmp_path, {"run.sh": wrapper, "train.sbatch": SCRIPT}))
    assert _job(jobs, "train.sbatch").placement.partitions == ("cpu",)
    again = as_submitted(_scan(tmp_path, {"run.sh": "#!/bin/bash\nsbatch train.sbatch\n"}))
    assert _job(again, "train.sbatch").submitted == ()  # no option given: nothing changes
    loop = "#!/bin/bash\nfor i in 1 2; do sbatch -J run-$i --export=ALL,I=$i train.sbatch; done\n"
    dynamic = _job(as_submitted(_scan(tmp_path, {"run.sh": loop})), "train.sbatch")
    assert dynamic.name == "train" and dynamic.submitted == ()  # set at run time: not known here


def test_the_pretraining_run_gets_the_nodes_its_wrapper_asks_for(in_repo: Path) -> None:
    """launch_pretrain.sh: a100 by SBATCH_PARTITION, 36 h by SBATCH_TIMELIMIT, 4 whole nodes."""
    jobs = scanner.scan([str(CASES.relative_to(REPO))]).jobs
    site = site_of_cases("allocation")
    (alone,) = [j for j in jobs if j.source.path.endswith("wrapped_pretrain.sbatch")]
    own = allocate(alone, site)
    assert (own.partition.value, own.total_nodes(), own.time_limit_s.value) == ("p5", 1, 1800)  # as written
    (pretrain,) = [j for j in as_submitted(jobs) if j.source.path.endswith("wrapped_pretrain.sbatch")]
    got = allocate(pretrain, site)
    assert got.partition.value == "a100" and got.time_limit_s.value == 36 * 3600
    assert got.total_nodes() == 4 and got.components[0].gpus_per_node.value == 8  # --exclusive: all of them
    assert pretrain.name == "pretrain-a100"
    doc = plan_json(build_plan(jobs, Direction.TO_KUBERNETES, site))
    assert '"gpu_hours": 1152.0' in doc  # 4 nodes x 8 GPUs x 36 h
    translated = translate_jobs(jobs, config=site)
    (t,) = [t for t in translated.translations if t.source.endswith("wrapped_pretrain.sbatch")]
    items = [e.item for e in t.fidelity.entries]
    assert any(i.startswith("--nodes=4 (sbatch in ") and "launch_pretrain.sh line 9" in i for i in items), (
        items
    )
