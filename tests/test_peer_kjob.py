"""What kjob (kubernetes-sigs/kjob), which also runs sbatch scripts on Kubernetes, does with the
same options: the translation agrees with it, or says why not.

Each test names the kjob file that holds the expectation.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from k8s_run import documents, literal_env, pod_specs
from podrunner import testing as pods
from podrunner.testing import require_pods
from test_slurm_sandbox import started_sandbox

from migrate import ir, slurmcheck
from migrate.diagnostics import Collector
from migrate.fidelity import Translation
from migrate.scan import scanner
from migrate.site.config import parse_site_config
from migrate.translate import translate_jobs
from migrate.translators.kubernetes import validate
from migrate.translators.kubernetes.writer import translate_job
from migrate.translators.slurm import reader
from migrate.translators.slurm import writer as slurm_writer
from migrate.vocab import FidelityStatus

SITE = parse_site_config(
    {
        "site": "testsite",
        "filesystems": [{"prefix": "/fsx", "kind": "lustre", "pvc": "fsx-pvc"}],
        "gpu_products": {"a100": "NVIDIA-A100-SXM4-80GB", "a10g": "NVIDIA-A10G"},
        "defaults": {"image": "registry.example/base:1", "namespace": "batch"},
    }
)


def read(text: str) -> ir.Job:
    (job,) = reader.read(text, "job.sbatch", Collector("job.sbatch"))
    return job


def translate(text: str, style: str = "auto", config: Any = SITE) -> Translation:
    return translate_job(read(text), config, "job", style=style)


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


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash runs the entrypoint")
@pytest.mark.parametrize("option", ["--output=/fsx/missing/job.out", "--error=/fsx/missing/job.err"])
def test_an_output_file_that_cannot_be_opened_fails_the_job(option: str, tmp_path: Path) -> None:
    """sbatch opens the output files before the script starts; one in a folder that does not exist fails
    the job, the script never runs (tests/test_slurm_sandbox.py shows it on the sandbox). kjob's
    ``tee FILE`` goes on without the file."""
    require_pods()
    text = f"#!/bin/bash\n#SBATCH {option}\necho ran > /fsx/ran.txt\n"
    (job,) = reader.read(text, "job.sbatch", Collector("job.sbatch"))
    (manifest,) = translate_job(job, SITE, "job", name="job", style="emulate").files.values()
    fsx = tmp_path / "fsx"
    fsx.mkdir()
    result = pods.run(manifest, tmp_path / "pods", claims={"fsx-pvc": fsx})
    assert result.status == "Failed", result.describe()
    assert "could not open the" in result.pods[0].stderr and "/fsx/missing/job." in result.pods[0].stderr
    assert not (fsx / "ran.txt").exists()


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


# ---------------------------------------------------------------------------
# several GPU types in one request

GPU_SITE = parse_site_config(
    {
        "site": "testsite",
        "gpu_products": {
            "volta": "Tesla-V100-SXM2-32GB",
            "kepler": "Tesla-K80",
            "a100": "NVIDIA-A100-SXM4-80GB",
            "v100": "Tesla-V100-SXM2-32GB",
        },
        "defaults": {"image": "registry.example/base:1", "namespace": "batch"},
    }
)
MIXED = "#!/bin/bash\n#SBATCH --nodes=1 --ntasks-per-node=2\n#SBATCH {option}\nsrun python train.py\n"
GPU_PRODUCT = "nvidia.com/gpu.product"


def pod_spec(t: Translation) -> dict[str, Any]:
    (text,) = t.files.values()
    return pod_specs([d for d in documents(text) if d["kind"] != "ConfigMap"])[0]


def node_terms(t: Translation) -> list[dict[str, Any]]:
    node = pod_spec(t).get("affinity", {}).get("nodeAffinity", {})
    required = node.get("requiredDuringSchedulingIgnoredDuringExecution", {})
    return list(required.get("nodeSelectorTerms", []))


@pytest.mark.parametrize(
    ("option", "types", "per_pod", "products"),
    [
        (
            "--gpus-per-task=volta:3,kepler:1",
            [("volta", 3), ("kepler", 1)],
            "8",
            ["Tesla-V100-SXM2-32GB", "Tesla-K80"],
        ),
        (
            "--gres=gpu:a100:2,gpu:v100:1",
            [("a100", 2), ("v100", 1)],
            "3",
            ["NVIDIA-A100-SXM4-80GB", "Tesla-V100-SXM2-32GB"],
        ),
    ],
)
def test_several_gpu_types_stay_apart_and_the_pod_asks_their_total(
    option: str, types: list[tuple[str, int]], per_pod: str, products: list[str], tmp_path: Path
) -> None:
    """kjob, pkg/parser/slurm.go (GpusFlag) reads ``--gpus-per-task=volta:3,kepler:1`` as a count per
    type, and pkg/builder/slurm_builder.go keeps each type's count apart in the container's requests
    (pkg/cmd/create/create_slurm_test.go, "should create slurm with --mem-per-gpu flag"). sbatch asks
    for every type at once, on the same node; the device plugin's nvidia.com/gpu has no type, so the
    pod asks for the total (per task x tasks per node) on a node whose GPU product is one of the
    types, and the entry is approximated, saying so. Where the site does not say what its nodes hold,
    a node may hold every type: no warning beyond the entry."""
    text = MIXED.format(option=option)
    res = read(text).components[0].resources
    assert [(g.type, g.count) for g in res.gpu_types] == types and res.gpu_type is None
    t = translate(text, style="emulate", config=GPU_SITE)
    assert container(t)["resources"]["limits"]["nvidia.com/gpu"] == per_pod
    assert node_terms(t) == [
        {"matchExpressions": [{"key": GPU_PRODUCT, "operator": "In", "values": products}]}
    ]
    assert GPU_PRODUCT not in pod_spec(t).get("nodeSelector", {})
    found = entry(t, option)
    assert found.status == FidelityStatus.APPROXIMATED
    assert "nvidia.com/gpu has no type" in found.reason and "not kept apart" in found.reason
    assert "TRANSLATE-GPU-TYPES" not in [d.code for d in t.diagnostics]
    translate_jobs([read(text)], config=GPU_SITE, style="emulate").tree.commit(str(tmp_path / "out"))
    report = validate.validate_tree(tmp_path / "out")
    assert [p.render() for f in report.files for p in f.problems] == []


def test_no_affinity_where_no_node_of_the_partition_holds_every_type() -> None:
    """kjob, pkg/builder/slurm_builder.go asks for each type under its own resource name, whatever the
    nodes hold. A partition whose nodes the site gives one GPU type holds no node with two: Kubernetes
    cannot place the pod as asked, and the diagnostic says so (sbatch would find no node either)."""
    site = parse_site_config(
        {
            "site": "testsite",
            "gpu_products": {"a100": "NVIDIA-A100-SXM4-80GB", "v100": "Tesla-V100-SXM2-32GB"},
            "partitions": {
                "gpu": {
                    "nodes": 16,
                    "gpus_per_node": 8,
                    "gpu_type": "a100",
                    "cpus_per_node": 96,
                    "mem_gb": 1152,
                    "node_selector": {"node.kubernetes.io/instance-type": "p4d.24xlarge"},
                }
            },
            "defaults": {"image": "registry.example/base:1", "namespace": "batch"},
        }
    )
    text = MIXED.format(option="--partition=gpu --gres=gpu:a100:2,gpu:v100:1")
    t = translate(text, style="emulate", config=site)
    assert node_terms(t) == [] and GPU_PRODUCT not in pod_spec(t)["nodeSelector"]
    assert container(t)["resources"]["limits"]["nvidia.com/gpu"] == "3"
    assert entry(t, "--gres").status == FidelityStatus.APPROXIMATED
    (warning,) = [d for d in t.diagnostics if d.code == "TRANSLATE-GPU-TYPES"]
    assert "no single node has them all" in warning.message
    assert "Kubernetes cannot place the pod as asked" in warning.message
    assert "a100 GPUs only (partition gpu in migrate.yaml)" in warning.message


ROUND_TRIP = ("--gpus-per-task=a100:1,v100:2", "--gres=gpu:a100:2,gpu:v100:1")


def _back_to_slurm(tmp_path: Path, text: str) -> list[str]:
    """The scripts the Slurm writer makes of one sbatch script: written back from its IR, and made again
    from the manifests the Kubernetes writer wrote of it."""
    job = read(text)
    (native,) = slurm_writer.translate_job(job).files.values()
    k8s = translate_jobs([job], to="kubernetes", config=GPU_SITE, style="emulate")
    k8s.tree.commit(str(tmp_path / "k8s"))
    back = translate_jobs(scanner.scan([str(tmp_path / "k8s")]).jobs, to="slurm", config=GPU_SITE)
    (migrated,) = back.translations[0].files.values()
    return [native, migrated]


@pytest.mark.parametrize("option", ROUND_TRIP)
def test_several_gpu_types_come_back_from_the_slurm_writer(option: str, tmp_path: Path) -> None:
    """kjob, pkg/parser/slurm.go (GpusFlag): the list is one count per type. The Slurm writer writes it
    again, from the IR and from the manifests: the script it makes reads back with the same types and
    counts, and passes the static sbatch checks."""
    text = MIXED.format(option=option)
    asked = read(text).components[0].resources.gpu_types
    for script in _back_to_slurm(tmp_path, text):
        assert read(script).components[0].resources.gpu_types == asked, script
        assert slurmcheck.check_text(script).accepted, script


@pytest.fixture(scope="module")
def typed_gpu_sandbox() -> Iterator[dict[str, str]]:
    """A small sandbox whose nodes hold four A100s and four V100s each."""
    knobs = {"SLURM_SANDBOX_NODES": "2", "SLURM_SANDBOX_GPUS": "8", "SLURM_SANDBOX_GPU_TYPES": "a100 v100"}
    with started_sandbox(knobs) as env:
        yield env


@pytest.mark.slurm
@pytest.mark.parametrize("option", ROUND_TRIP)
def test_the_written_back_scripts_pass_test_only_on_nodes_with_both_types(
    option: str, typed_gpu_sandbox: dict[str, str], tmp_path: Path
) -> None:
    """kjob, pkg/parser/slurm.go (GpusFlag), as above: the controller takes the written-back list."""
    for index, script in enumerate(_back_to_slurm(tmp_path, MIXED.format(option=option))):
        path = tmp_path / f"job{index}.sbatch"
        path.write_text(script, encoding="utf-8")
        result = slurmcheck.check_script(path, env=typed_gpu_sandbox)
        assert (result.method, result.accepted) == (slurmcheck.TEST_ONLY, True), result.message
