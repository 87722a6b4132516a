"""An MPIJob's Launcher runs the script; a bare `mpirun` in it starts ranks over ssh, which see none
of the script's environment. Under sbatch, mpirun starts them through srun and they inherit it: the
entrypoint's `mpirun` passes on what the script exported (the sweep's mpi_hello case showed ranks
without SLURM_JOB_ID before)."""

from __future__ import annotations

from pathlib import Path

from k8s_run import run_pod

from migrate.diagnostics import Collector
from migrate.site.config import parse_site_config
from migrate.translators.kubernetes.writer import translate_job
from migrate.translators.slurm import reader

SCRIPT = "#!/bin/bash\n#SBATCH -J ranks\n#SBATCH -N 2\n#SBATCH --ntasks-per-node=2\nmpirun ./hello\n"
SITE = parse_site_config({"site": "s", "defaults": {"image": "img:1", "namespace": "hpc"}})


def test_a_bare_mpirun_passes_the_scripts_exports_to_the_ranks(tmp_path: Path) -> None:
    (job,) = reader.read(SCRIPT, "t.sbatch", Collector("t.sbatch"))
    t = translate_job(job, SITE, "mpijob", style="emulate")
    assert t.flavor == "mpijob"
    (manifest,) = t.files.values()
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "mpirun").write_text('#!/bin/bash\nprintf "%s\\n" "$@"\n')
    (fake / "mpirun").chmod(0o755)
    script = "#!/bin/bash\nexport MY_SETTING=on\nmpirun -np 4 ./hello\n"
    done = run_pod(manifest, tmp_path / "pod", {"PATH": f"{fake}:/usr/bin:/bin"}, script=script)
    assert done.returncode == 0, done.stderr
    argv = done.stdout.splitlines()
    forwarded = {argv[i + 1] for i, word in enumerate(argv[:-1]) if word == "-x"}
    assert {"MY_SETTING", "SLURM_JOB_ID", "SLURM_JOB_NAME", "SLURM_NTASKS"} <= forwarded
    assert not forwarded & {"SLURM_PROCID", "SLURM_NODEID", "SLURMD_NODENAME", "MIGRATE_DIR"}
    assert argv[-3:] == ["-np", "4", "./hello"]  # the script's own arguments, after the forwarding


def test_an_srun_step_in_the_launcher_gives_its_ranks_the_steps_counts(tmp_path: Path) -> None:
    """Under sbatch, `srun -n 1 bands.x` in a two-node job is a step of one task on one node: its task
    sees SLURM_NNODES=1 and SLURM_NTASKS=1, the job's counts stay SLURM_JOB_NUM_NODES (the sweep's
    slurm/jobscript case on the sandbox). In an MPIJob's Launcher the step is an mpirun over ssh."""
    (job,) = reader.read(SCRIPT, "t.sbatch", Collector("t.sbatch"))
    (manifest,) = translate_job(job, SITE, "mpijob", style="emulate").files.values()
    fake = tmp_path / "bin"
    fake.mkdir()
    counts = "SLURM_NNODES SLURM_NTASKS SLURM_NPROCS SLURM_STEP_NUM_TASKS SLURM_STEP_NUM_NODES"
    (fake / "mpirun").write_text(
        f'#!/bin/bash\nfor v in {counts}; do printf "%s=%s " "$v" "${{!v}}"; done\necho\n'
        'for ((i = 1; i < $#; i++)); do [ "${!i}" = -x ] && j=$((i + 1)) && echo "x ${!j}"; done\nexit 0\n'
    )
    (fake / "mpirun").chmod(0o755)
    script = "#!/bin/bash\nsrun -n 1 ./bands\nsrun ./pw\n"
    done = run_pod(manifest, tmp_path / "pod", {"PATH": f"{fake}:/usr/bin:/bin"}, script=script)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    firsts = [line for line in lines if line.startswith("SLURM_NNODES=")]
    assert firsts == [
        "SLURM_NNODES=1 SLURM_NTASKS=1 SLURM_NPROCS=1 SLURM_STEP_NUM_TASKS=1 SLURM_STEP_NUM_NODES=1 ",
        "SLURM_NNODES=2 SLURM_NTASKS=4 SLURM_NPROCS=4 SLURM_STEP_NUM_TASKS=4 SLURM_STEP_NUM_NODES=2 ",
    ]
    for name in counts.split():  # each passed on to the ranks once
        assert lines.count(f"x {name}") == 2, name
