"""What sbatch accepts is not an error, and what it refuses is one: the reader against the controller.

Each row of ``TABLE`` is a small batch script shaped around one diagnostic of the
Slurm reader that says sbatch would refuse something (every ``SLURM-*`` code of
severity error, and the codes raised as errors where sbatch refuses: an obsolete
spelling it no longer takes, a stray word), or around the edge of one (a value
the reader used to refuse that sbatch takes). Every row is submitted with
``sbatch --test-only`` to the project's Slurm sandbox (the session fixture of
``test_slurm_sandbox.py``) and read by the reader; the reader gives an error
exactly where the controller refuses the script. Where the sandbox cannot agree
for a reason outside the script (a SPANK plugin it does not load, an option its
Slurm 22.05 still had), the row says why, and the reader's verdict is checked
against what the row declares instead.

"Accepted" is what the controller says of a job it would queue ("Job N to start
at ..."): ``--gres=help`` makes sbatch print the GRES list and exit 0 without
submitting anything, which is a refusal for the purpose of the table.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
from test_slurm_sandbox import sandbox  # noqa: F401  (the session fixture, reused)

from migrate.diagnostics import CODES, ERROR, Collector
from migrate.translators.slurm import reader

pytestmark = pytest.mark.slurm

SHEBANG = "#!/bin/bash\n"


@dataclass(frozen=True)
class Row:
    """One script, the code it is about, and what the sandbox's controller says of it."""

    code: str
    directives: str  # #SBATCH lines (a #! line is added), or a whole script that starts otherwise
    accepted: bool
    declared: str = ""  # why the sandbox's verdict is not the reader's, when it cannot be

    @property
    def script(self) -> str:
        if self.directives.startswith("#SBATCH"):
            return SHEBANG + self.directives + "\nsrun hostname\n"
        return self.directives


def _rows(code: str, accepted: bool, *lines: str) -> list[Row]:
    return [Row(code, line, accepted) for line in lines]


NO_PLUGIN = (
    "the sandbox loads no SPANK plugin; where the plugin (pyxis, Shifter) is installed sbatch takes it"
)

TABLE: tuple[Row, ...] = (
    # --- the first line --------------------------------------------------------------------------
    *_rows(
        "SLURM-NO-SHEBANG",
        False,
        "# one node\n#SBATCH --nodes=1\nhostname\n",
        "\ufeff#!/bin/bash\n#SBATCH --nodes=1\nhostname\n",
        "\n#!/bin/bash\n#SBATCH --nodes=1\nhostname\n",
    ),
    *_rows(
        "SLURM-NO-SHEBANG",
        True,
        "#!\n#SBATCH --nodes=1\nhostname\n",
        "#!/bin/sh -l\n#SBATCH -N 1\nhostname\n",
    ),
    *_rows("SLURM-DOS-LINE-BREAKS", False, "#!/bin/bash\r\n#SBATCH --job-name=win\r\nhostname\r\n"),
    # --- options sbatch does not know ------------------------------------------------------------
    *_rows(
        "SLURM-UNKNOWN-OPTION",
        False,
        "#SBATCH --frobnicate=3",
        "#SBATCH --Nodes=1",
        "#SBATCH --nod=1",  # ambiguous prefix
        "#SBATCH --cpu-bind=cores",  # srun's
        "#SBATCH -Z",
        "#SBATCH -j x",
        "#SBATCH --podman-image=ubuntu",  # no plugin of the table adds it
    ),
    *_rows("SLURM-UNKNOWN-OPTION", True, "#SBATCH --nodes=1 --job-n=x", "#SBATCH --ntasks 4 -c 2"),
    Row(
        "SLURM-PLUGIN-OPTION", "#SBATCH --container-image=nvcr.io/nvidia/pytorch:24.05-py3", False, NO_PLUGIN
    ),
    Row("SLURM-PLUGIN-OPTION", "#SBATCH --no-container-mount-home", False, NO_PLUGIN),
    Row("SLURM-PLUGIN-OPTION", "#SBATCH --image=docker:nersc/pytorch:24.06.01", False, NO_PLUGIN),
    Row("SLURM-PLUGIN-OPTION", "#SBATCH --module=gpu,nccl", False, NO_PLUGIN),
    # --- obsolete spellings ------------------------------------------------------------------------
    *_rows(
        "SLURM-OBSOLETE-OPTION",
        False,
        "#SBATCH --workdir=/tmp",
        "#SBATCH --share",
        "#SBATCH --mincores=2",
        "#SBATCH --checkpoint=10",
        "#SBATCH --jobid=5",
        "#SBATCH --mem_bind=local",
        "#SBATCH -P afterok:1",
        "#SBATCH -U acct",
        "#SBATCH -I",
    ),
    *_rows("SLURM-OBSOLETE-OPTION", True, "#SBATCH --tasks-per-node=2"),
    Row(
        "SLURM-OBSOLETE-OPTION",
        "#SBATCH --power=x",
        True,
        "the sandbox's Slurm 22.05 still has --power; current sbatch no longer takes it",
    ),
    # --- values ----------------------------------------------------------------------------------
    *_rows(
        "SLURM-BAD-VALUE",
        True,
        "#SBATCH --array=[0-2]",
        "#SBATCH --array=[1,3,5]%1",
        "#SBATCH --array=[0-9]%2",
        "#SBATCH --array=0-2,[4]",
        "#SBATCH --array=1,,2",
        "#SBATCH --array=0-9%x",
        "#SBATCH --array=0-9%",
        "#SBATCH --nice=abc",
        "#SBATCH --priority=5abc",
        "#SBATCH --signal=99",
        "#SBATCH --signal=sigusr1@90",
        "#SBATCH --export=ALL,,OMP_NUM_THREADS=8",
        "#SBATCH --mem=4GB",
        "#SBATCH --time=UNLIMITED",
        "#SBATCH --dependency=afterok:1,afterany:2?afternotok:3",
        "#SBATCH --begin=now+60",
        "#SBATCH --mail-type=END,FOO",
        "#SBATCH --open-mode=anything",
        "#SBATCH --exclusive=USER",
        "#SBATCH --profile=task,energy",
        "#SBATCH --propagate=STACK,NOFILE",
        "#SBATCH --get-user-env=10L",
        "#SBATCH --acctg-freq=task=30",
        "#SBATCH --wait-all-nodes=1",
        "#SBATCH --distribution=block:cyclic",
        "#SBATCH --output=a#b",
    ),
    *_rows(
        "SLURM-BAD-VALUE",
        False,
        "#SBATCH --array=0-x",
        "#SBATCH --array=[[0-2]",
        "#SBATCH --array=[0-2]]",
        "#SBATCH --array=0-2:",
        "#SBATCH --array=5-1",
        "#SBATCH --nodes=4-2",
        "#SBATCH --nodes=abc",
        "#SBATCH --ntasks=0",
        "#SBATCH --mem=4B",
        "#SBATCH --mem=4.5G",
        "#SBATCH --time=abc",
        "#SBATCH --time=1:2:3:4",
        "#SBATCH --signal=FOO",
        "#SBATCH --signal=0",
        "#SBATCH --signal=USR1@70000",
        "#SBATCH --nice=99999999999",
        "#SBATCH --priority=-1",
        "#SBATCH --dependency=afterfoo:1",
        "#SBATCH --dependency=afterok:abc",
        "#SBATCH --begin=garbage",
        "#SBATCH --mail-type=FOO",
        "#SBATCH --open-mode=x",
        "#SBATCH --exclusive=foo",
        "#SBATCH --gres=help",
        "#SBATCH --gres=gpu:x:y:z",
        "#SBATCH --profile=foo",
        "#SBATCH --hint=foo",
        "#SBATCH --distribution=foo",
        "#SBATCH --cpu-freq=foo",
        "#SBATCH --acctg-freq=foo",
        "#SBATCH --propagate=FOO",
        "#SBATCH --get-user-env=foo",
        "#SBATCH --wait-all-nodes=2",
        "#SBATCH --core-spec=abc",
        "#SBATCH --extra-node-info=abc",
        "#SBATCH --delay-boot=abc",
        "#SBATCH --gres-flags=foo",
        "#SBATCH --kill-on-invalid-dep=maybe",
        "#SBATCH --threads-per-core=0",
        "#SBATCH 'unterminated",
    ),
    # --- missing and empty values ----------------------------------------------------------------
    *_rows(
        "SLURM-MISSING-VALUE",
        False,
        "#SBATCH --nodes",
        "#SBATCH -n",
        "#SBATCH -N1 -n",
        "#SBATCH --nodes=",
        "#SBATCH --time=",
        "#SBATCH --mem=",
        "#SBATCH --partition=",
        "#SBATCH --mail-type=",
        "#SBATCH --cpus-per-task=",
        "#SBATCH -J ''",
        '#SBATCH --job-name ""',
    ),
    *_rows(
        "SLURM-MISSING-VALUE",
        True,
        "#SBATCH --mail-user=",
        "#SBATCH --mail-user=\n#SBATCH --mail-type=END",
        "#SBATCH --job-name=",
        "#SBATCH --output=",
        "#SBATCH --error=",
        "#SBATCH --account=",
        "#SBATCH --qos=",
        "#SBATCH --constraint=",
        "#SBATCH --array=",
        "#SBATCH --dependency=",
        "#SBATCH --chdir=",
        "#SBATCH --export=",
        "#SBATCH --gpus-per-node=",
        "#SBATCH --comment=",
    ),
    # --- words sbatch stops on ---------------------------------------------------------------------
    *_rows(
        "SLURM-UNEXPECTED-VALUE",
        False,
        "#SBATCH --hold=1",
        "#SBATCH --exclusive foo",
        "#SBATCH -- foo",
        "#SBATCH --nodes=1 stray",
    ),
    # --- what sbatch ignores ---------------------------------------------------------------------
    *_rows(
        "SLURM-DIRECTIVE-AFTER-COMMAND",
        True,
        "#!/bin/bash\nhostname\n#SBATCH --frobnicate\n#SBATCH --nodes=\n",
    ),
    *_rows("SLURM-HETJOB", True, "#SBATCH -N 1\n#SBATCH hetjob -N 2\n#SBATCH -N 1", "#SBATCH -N 1 hetjob"),
)

# The codes whose diagnostic says sbatch refuses the script: every SLURM-* error of CODES, and the
# codes the reader raises as errors where sbatch refuses (a stray word, an obsolete spelling).
REFUSING = {c for c, (severity, _) in CODES.items() if c.startswith("SLURM-") and severity == ERROR} | {
    "SLURM-UNEXPECTED-VALUE",
    "SLURM-OBSOLETE-OPTION",
}


def _controller_accepts(script: str, folder: Path, env: dict[str, str]) -> tuple[bool, str]:
    path = folder / "job.sbatch"
    path.write_bytes(script.encode("utf-8"))
    done = subprocess.run(
        ["sbatch", "--test-only", path.name],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    said = (done.stderr + done.stdout).strip()
    return done.returncode == 0 and " to start at " in said, said.splitlines()[-1] if said else ""


def _reader_errors(script: str) -> list[str]:
    diags = Collector("job.sbatch")
    reader.read(script, "job.sbatch", diags)
    return [f"{d.code}: {d.message}" for d in diags if d.severity == ERROR]


def test_the_table_covers_every_code_that_says_sbatch_refuses() -> None:
    refused = {row.code for row in TABLE if not row.accepted and not row.declared}
    accepted = {row.code for row in TABLE if row.accepted and not row.declared}
    assert refused >= REFUSING
    assert accepted >= {"SLURM-BAD-VALUE", "SLURM-MISSING-VALUE", "SLURM-NO-SHEBANG"}  # and their edges


def test_the_reader_refuses_exactly_what_the_controller_refuses(
    sandbox: dict[str, str],  # noqa: F811
    tmp_path: Path,
) -> None:
    disagreements: list[str] = []
    for row in TABLE:
        accepted, said = _controller_accepts(row.script, tmp_path, sandbox)
        errors = _reader_errors(row.script)
        if accepted != row.accepted:
            disagreements.append(
                f"{row.directives!r}: the table says accepted={row.accepted}, sbatch: {said}"
            )
        reader_accepts = not errors
        expected = row.accepted if not row.declared else not row.accepted
        if reader_accepts != expected:
            disagreements.append(
                f"{row.directives!r}: sbatch {'accepts' if accepted else 'refuses'} it ({said}); "
                f"the reader: {errors or 'no error'}"
            )
    assert disagreements == []


def test_the_reader_names_the_code_of_each_refusal() -> None:
    missing = []
    for row in TABLE:
        if row.accepted or row.declared or row.code not in REFUSING:
            continue
        errors = _reader_errors(row.script)
        if not any(e.startswith(row.code + ":") for e in errors):
            missing.append(f"{row.directives!r}: {errors}")
    assert missing == []
