"""A working directory named with shell variables: a pod's workingDir is taken as written, never expanded.

A container's directory, which the script's shell expands, gets the values the
script sets; ``--chdir``, which sbatch takes as written, gets ``--set`` values
(filled in before reading) and nothing else. A directory with a variable left
unfilled gets no workingDir, and the fidelity log says why.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from migrate import ir
from migrate.scan import scanner
from migrate.scan.results import ScanOptions
from migrate.translate import translate_jobs
from migrate.translators.kubernetes import workdir
from migrate.vocab import FidelityStatus

SCRIPT = """\
#!/bin/bash
#SBATCH --job-name=wd
#SBATCH --chdir=${RUN_DIR}
#SBATCH --nodes=1
CODE_DIR=/opt/code
srun --container-image=nvcr.io/nvidia/pytorch:24.05-py3 --container-workdir=WORKDIR python train.py
"""


def _translated(tmp_path: Path, container_dir: str, *values: tuple[str, str]) -> tuple[dict, dict]:
    source = tmp_path / "wd.sbatch"
    source.write_text(SCRIPT.replace("WORKDIR", container_dir), encoding="utf-8")
    jobs = scanner.scan([str(source)], ScanOptions(values=tuple(values))).jobs
    result = translate_jobs(jobs, to="kubernetes", style="emulate")  # SLURM_SUBMIT_DIR is the shims'
    [translation] = result.translations
    docs = [
        d
        for name, text in result.tree.files.items()
        if name.endswith(".yaml")
        for d in yaml.safe_load_all(text)
    ]
    manifest = next(d for d in docs if d and d.get("kind") == "Job")
    container = manifest["spec"]["template"]["spec"]["containers"][0]
    fidelity = {e.item: (e.status, e.reason) for e in translation.fidelity.entries}
    return container, fidelity


def test_a_variable_the_script_sets_is_filled_in(tmp_path: Path) -> None:
    container, fidelity = _translated(tmp_path, '"$CODE_DIR"')
    assert container["workingDir"] == "/opt/code"
    container, fidelity = _translated(tmp_path, '"${CODE_DIR}/src"')
    assert container["workingDir"] == "/opt/code/src"
    assert fidelity["working directory ${CODE_DIR}/src"][0] == FidelityStatus.MAPPED


def test_a_variable_with_no_value_leaves_workingdir_out_and_says_why(tmp_path: Path) -> None:
    container, fidelity = _translated(tmp_path, '"$SLURM_SUBMIT_DIR/src"')
    assert "workingDir" not in container
    assert "SLURM_SUBMIT_DIR" not in {e["name"] for e in container["env"]}  # not the placeholder either
    status, reason = fidelity["--chdir=${RUN_DIR}"]
    assert status == FidelityStatus.APPROXIMATED and "$RUN_DIR is a template placeholder" in reason
    status, reason = fidelity["working directory $SLURM_SUBMIT_DIR/src"]
    assert status == FidelityStatus.APPROXIMATED and "SLURM_SUBMIT_DIR has no value" in reason


def test_the_chdir_does_not_take_the_scripts_own_values(tmp_path: Path) -> None:
    """sbatch changes directory before the script sets anything: CODE_DIR=... cannot fill --chdir."""
    source = tmp_path / "chdir.sbatch"
    source.write_text("#!/bin/bash\n#SBATCH --chdir=$CODE_DIR\nCODE_DIR=/opt/code\nsrun true\n")
    result = translate_jobs(scanner.scan([str(source)]).jobs, to="kubernetes")
    docs = [
        d
        for text in result.tree.files.values()
        if text.startswith(("#", "apiVersion"))
        for d in yaml.safe_load_all(text)
    ]
    job = next(d for d in docs if d and d.get("kind") == "Job")
    assert "workingDir" not in job["spec"]["template"]["spec"]["containers"][0]


def test_a_set_value_fills_the_chdir(tmp_path: Path) -> None:
    container, fidelity = _translated(tmp_path, "/opt/app", ("RUN_DIR", "/scratch/run1"))
    assert container["workingDir"] == "/scratch/run1"
    # SLURM_SUBMIT_DIR is where sbatch ran, which --chdir does not change (tests/test_submit_dir.py)
    assert "SLURM_SUBMIT_DIR" not in {e["name"] for e in container["env"]}
    assert fidelity["--chdir=/scratch/run1"][0] == FidelityStatus.MAPPED


def test_only_single_literal_values_count() -> None:
    env = [
        ir.EnvVar("A", "/a"),
        ir.EnvVar("TWICE", "/x"),
        ir.EnvVar("TWICE", "/y"),
        ir.EnvVar("LATER", "$(pwd)/b"),
        ir.EnvVar("SAME", "/s"),
        ir.EnvVar("SAME", "/s"),
    ]
    values = workdir.static_values(env)
    assert values == {"A": "/a", "SAME": "/s"}
    assert workdir.resolved("$A/${SAME}", values) == ("/a//s", [])
    assert workdir.resolved("$A/$TWICE/$LATER", values) == (None, ["TWICE", "LATER"])
    assert workdir.resolved("$A/$(pwd)", values) == (None, [])  # a command substitution
