"""What kjob (kubernetes-sigs/kjob), which also runs sbatch scripts on Kubernetes, does with the
same options: the translation agrees with it, or says why not.

Each test names the kjob file that holds the expectation.
"""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from k8s_run import documents, literal_env, pod_specs
from podrunner import testing as pods
from podrunner.testing import require_pods

from migrate.diagnostics import Collector
from migrate.fidelity import Translation
from migrate.site.config import parse_site_config
from migrate.translators.kubernetes.writer import translate_job
from migrate.translators.slurm import reader
from migrate.vocab import FidelityStatus

SITE = parse_site_config(
    {
        "site": "testsite",
        "filesystems": [{"prefix": "/fsx", "kind": "lustre", "pvc": "fsx-pvc"}],
        "gpu_products": {"a100": "NVIDIA-A100-SXM4-80GB", "a10g": "NVIDIA-A10G"},
        "defaults": {"image": "registry.example/base:1", "namespace": "batch"},
    }
)


def translate(text: str, style: str = "auto", config: Any = SITE) -> Translation:
    (job,) = reader.read(text, "job.sbatch", Collector("job.sbatch"))
    return translate_job(job, config, "job", style=style)


def container(t: Translation) -> dict[str, Any]:
    (text,) = t.files.values()
    return pod_specs([d for d in documents(text) if d["kind"] != "ConfigMap"])[0]["containers"][0]


def entry(t: Translation, prefix: str) -> Any:
    found = [e for e in t.fidelity.entries if e.item.startswith(prefix)]
    assert found, f"no fidelity entry for {prefix!r}: {[e.item for e in t.fidelity.entries]}"
    return found[0]


# ---------------------------------------------------------------------------
# output files


LOGGED = """#!/bin/bash
#SBATCH --job-name=nightly
#SBATCH --output=/fsx/logs/nightly.out
{mode}echo "run $RUN_MARK"
echo "warning of $RUN_MARK" >&2
"""


def _run_twice(tmp_path: Path, mode: str) -> list[str]:
    """The output file's lines after the translated job ran twice, as two submissions of the script
    would, over a file an older job left."""
    text = LOGGED.format(mode=f"#SBATCH --open-mode={mode}\n" if mode else "")
    (manifest,) = translate(text, style="emulate").files.values()
    fsx = tmp_path / "fsx"
    (fsx / "logs").mkdir(parents=True)
    (fsx / "logs" / "nightly.out").write_text("left by an older job\n")
    for mark in ("first", "second"):
        script = text.replace("$RUN_MARK", mark)
        result = pods.run(manifest, tmp_path / mark, script=script, claims={"fsx-pvc": fsx})
        assert result.status == "Complete", result.describe()
    return (fsx / "logs" / "nightly.out").read_text().splitlines()


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash runs the entrypoint")
def test_output_file_is_truncated_unless_open_mode_append(tmp_path: Path) -> None:
    """kjob, pkg/builder/slurm_builder.go (buildEntrypointCommand): the script's output goes through
    ``tee FILE``, which truncates, as sbatch does without --open-mode (slurm.conf JobFileAppend=0);
    --open-mode=append keeps what earlier runs wrote. stdout and stderr share the file; their
    order within one run is the tees' and is not compared."""
    require_pods()
    assert sorted(_run_twice(tmp_path / "default", "")) == ["run second", "warning of second"]
    appended = _run_twice(tmp_path / "append", "append")
    assert appended[0] == "left by an older job"
    assert sorted(appended[1:3]) == ["run first", "warning of first"]
    assert sorted(appended[3:]) == ["run second", "warning of second"]


REQUEUED = """#!/bin/bash
#SBATCH --job-name=requeued
#SBATCH --nodes=2
#SBATCH --requeue
#SBATCH --output=/fsx/logs/requeued.out
echo "start ${SLURM_RESTART_COUNT-unset}"
srun true
[ "${SLURM_RESTART_COUNT:-0}" -ge 1 ] || exit 1
"""


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash runs the entrypoint")
def test_a_restarted_jobset_is_the_job_requeued_and_truncates_its_output(tmp_path: Path) -> None:
    """Slurm truncates the output file when a requeued job starts again and counts the start in
    SLURM_RESTART_COUNT, unset before (tests/test_slurm_sandbox.py requeues a job on the sandbox to show
    it); the JobSet's restart is that requeue, counted by its restart-attempt annotation."""
    require_pods()
    (job,) = reader.read(REQUEUED, "job.sbatch", Collector("job.sbatch"))
    t = translate_job(job, SITE, "jobset", name="job", style="emulate")
    assert t.flavor == "jobset"
    (manifest,) = t.files.values()
    fsx = tmp_path / "fsx"
    (fsx / "logs").mkdir(parents=True)
    result = pods.run(manifest, tmp_path / "pods", claims={"fsx-pvc": fsx})
    assert result.status == "Complete" and result.restarts == 1, result.describe()
    assert (fsx / "logs" / "requeued.out").read_text().splitlines() == ["start 1"]


def test_open_mode_truncate_and_the_default_need_no_env_but_append_does() -> None:
    """kjob, pkg/builder/slurm_builder.go: the output file is truncated by default."""
    plain = container(translate(LOGGED.format(mode=""), style="emulate"))
    assert "MIGRATE_OPEN_MODE" not in literal_env(plain)
    t = translate(LOGGED.format(mode="#SBATCH --open-mode=append\n"), style="emulate")
    assert literal_env(container(t))["MIGRATE_OPEN_MODE"] == "append"
    assert entry(t, "--open-mode").status == FidelityStatus.MAPPED
    assert "appends" in entry(t, "--open-mode").reason


def test_job_file_append_in_slurm_conf_makes_append_the_default() -> None:
    """slurm.conf JobFileAppend=1 turns sbatch's default to append; without it kjob's truncation holds."""
    appending = replace(SITE, job_file_append="cluster/slurm.conf line 4")
    t = translate(LOGGED.format(mode=""), style="emulate", config=appending)
    assert literal_env(container(t))["MIGRATE_OPEN_MODE"] == "append"
    assert "cluster/slurm.conf line 4" in entry(t, "JobFileAppend=1").reason
    kept = translate(LOGGED.format(mode="#SBATCH --open-mode=truncate\n"), style="emulate", config=appending)
    assert literal_env(container(kept))["MIGRATE_OPEN_MODE"] == "truncate"


# ---------------------------------------------------------------------------
# SLURM_CPUS_PER_GPU


def test_cpus_per_gpu_is_in_the_environment() -> None:
    """kjob, pkg/builder/slurm_builder.go (buildInitEntrypointScript): SLURM_CPUS_PER_GPU is among the
    variables the job sees; sbatch sets it when --cpus-per-gpu is given, and only then."""
    text = "#!/bin/bash\n#SBATCH --gpus-per-node=2\n#SBATCH --cpus-per-gpu=6\necho $SLURM_CPUS_PER_GPU\n"
    assert literal_env(container(translate(text, style="emulate")))["SLURM_CPUS_PER_GPU"] == "6"
    without = text.replace("#SBATCH --cpus-per-gpu=6\n", "")
    assert "SLURM_CPUS_PER_GPU" not in literal_env(container(translate(without, style="emulate")))
    native = translate(text.replace("echo", "python train.py --workers"))
    assert native.style == "native" and container(native)["args"] == ["train.py", "--workers", "6"]
