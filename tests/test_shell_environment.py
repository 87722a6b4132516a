"""Environment variables (and credentials), modules, software environments, raw items."""

from __future__ import annotations

import textwrap

from migrate import ir
from migrate.diagnostics import Collector
from migrate.translators.shell.analyze import analyze
from migrate.translators.shell.facts import BodyFacts


def read(body: str, start: int = 1) -> tuple[BodyFacts, Collector]:
    diags = Collector("job.sbatch")
    return analyze(textwrap.dedent(body).strip("\n"), start, diags), diags


def test_exports_and_assignments() -> None:
    facts, _ = read(
        """
        export A=b
        export B="b c" C
        MASTER_PORT=29500
        export MASTER_PORT
        declare -x D=1
        local L=2
        X=1 cmd
        if true; then export INSIDE=1; fi
        """,
        20,
    )
    assert [(e.name, e.value, e.origin, e.line) for e in facts.environment] == [
        ("A", "b", "export", 20),
        ("B", "b c", "export", 21),
        ("C", None, "export", 21),
        ("MASTER_PORT", "29500", "assign", 22),
        ("MASTER_PORT", "29500", "export", 23),
        ("D", "1", "export", 24),
    ]


def test_command_substitution_values_are_kept_verbatim() -> None:
    facts, _ = read("export MASTER_ADDR=$(scontrol show hostnames $SLURM_JOB_NODELIST | head -n1)")
    (var,) = facts.environment
    assert var.value == "$(scontrol show hostnames $SLURM_JOB_NODELIST | head -n1)" and var.secret is None


def test_secret_read_by_a_command_is_a_reference() -> None:
    facts, diags = read("export HF_TOKEN=$(cat ~/.hf_token)", 14)
    (var,) = facts.environment
    assert var == ir.EnvVar(
        name="HF_TOKEN", secret=ir.SecretRef(name="HF_TOKEN", key="cat ~/.hf_token", kind="command"), line=14
    )
    assert not [d for d in diags if d.code == "SHELL-SECRET-LITERAL"]


def test_literal_credentials_are_not_kept() -> None:
    facts, diags = read(
        """
        export WANDB_API_KEY=8d1e44b0a7c39f2e6b15d0c8a4f7e3b2901c6d5e
        DB_PASSWORD='hunter2'
        export HUB=hf_abcdefghijklmnopqrstuvwxyz
        export MY_TOKEN=$OTHER
        export SSL_KEY=/etc/ssl/key.pem
        export TOKENIZERS_PARALLELISM=false
        """,
        16,
    )
    secrets = [(e.name, e.value, e.secret) for e in facts.environment if e.secret]
    assert secrets == [
        ("WANDB_API_KEY", None, ir.SecretRef(name="WANDB_API_KEY", kind="literal-in-script")),
        ("DB_PASSWORD", None, ir.SecretRef(name="DB_PASSWORD", kind="literal-in-script")),
        ("HUB", None, ir.SecretRef(name="HUB", kind="literal-in-script")),
    ]
    kept = {e.name: e.value for e in facts.environment if not e.secret}
    assert kept == {"MY_TOKEN": "$OTHER", "SSL_KEY": "/etc/ssl/key.pem", "TOKENIZERS_PARALLELISM": "false"}
    warnings = [(d.line, d.severity) for d in diags if d.code == "SHELL-SECRET-LITERAL"]
    assert warnings == [(16, "warning"), (17, "warning"), (18, "warning")]
    assert all("8d1e44" not in d.message and "hunter2" not in d.message for d in diags)


def test_modules() -> None:
    facts, _ = read(
        """
        module purge
        module load gcc/12.2.0 openmpi/4.1.5
        module add cuda
        ml python/3.11 scipy
        ml purge
        module use /opt/site/modules
        module unload gcc
        module list
        spack load wrf@4.5.1 %intel netcdf-fortran
        MODS="hdf5/1.14 fftw"
        module load $MODS
        """,
        10,
    )
    assert facts.modules == (
        "gcc/12.2.0",
        "openmpi/4.1.5",
        "cuda",
        "python/3.11",
        "scipy",
        "wrf@4.5.1 %intel",
        "netcdf-fortran",
        "hdf5/1.14",
        "fftw",
    )
    assert [(r.key, r.value, r.line) for r in facts.raw] == [
        ("module", "purge", 10),
        ("module", "purge", 14),
        ("module", "use /opt/site/modules", 15),
        ("module", "unload gcc", 16),
    ]


def test_software_environments() -> None:
    facts, _ = read(
        """
        conda activate medseg
        source activate detr
        mamba activate fast
        conda activate --prefix /fsx/envs/x
        source /fsx/venvs/llm/bin/activate
        . venv/bin/activate
        source /opt/conda/bin/activate base2
        spack env activate -p myenv
        """
    )
    assert [(kv.key, kv.value) for kv in facts.software_envs] == [
        ("conda", "medseg"),
        ("conda", "detr"),
        ("conda", "fast"),
        ("conda", "/fsx/envs/x"),
        ("venv", "/fsx/venvs/llm"),
        ("venv", "venv"),
        ("conda", "base2"),
        ("spack", "myenv"),
    ]


def test_installs_and_other_sourced_files_are_kept_raw() -> None:
    facts, _ = read(
        """
        pip install -r requirements.txt
        python -m pip install torch==2.3
        source ~/miniconda3/etc/profile.d/conda.sh
        ulimit -s unlimited
        """
    )
    assert [(r.key, r.value, r.line) for r in facts.raw] == [
        ("pip-install", "-r requirements.txt", 1),
        ("pip-install", "torch==2.3", 2),
        ("source", "~/miniconda3/etc/profile.d/conda.sh", 3),
        ("ulimit", "-s unlimited", 4),
    ]


def test_trap_signals() -> None:
    facts, _ = read(
        """
        trap 'save_ckpt; scontrol requeue $SLURM_JOB_ID' USR1 SIGTERM
        trap cleanup EXIT 2
        trap - INT
        trap -p
        """
    )
    assert facts.signals_trapped == ("USR1", "TERM", "EXIT", "INT")
    assert facts.self_resubmit
