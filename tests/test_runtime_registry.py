"""A container runtime added in one declaration is read from a script, written by the Slurm writer and
given a shim in the pods; the built-in runtimes are declared the same way."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import cast

import pytest
from k8s_run import documents, find, run_pod
from typer.testing import CliRunner

from migrate import cli, ir
from migrate.diagnostics import Collector
from migrate.translate import translate_jobs
from migrate.translators import runtimes
from migrate.translators.kubernetes import reader as k8s_reader
from migrate.translators.kubernetes import shims
from migrate.translators.kubernetes.writer import translate_job
from migrate.translators.runtimes import CommandLine, Launch, Options, Runtime, Verb
from migrate.translators.slurm import reader as slurm_reader
from migrate.vocab import ContainerRuntime, Format

README = Path(__file__).resolve().parent.parent / "README.md"

# The whole toy runtime: `kraken run [--bind HOST:CONTAINER] [--cwd DIR] [-e NAME=V] [--quiet] IMAGE prog`.
# Its name is a plain string where a built-in one has its member in vocab.ContainerRuntime.
KRAKEN = Runtime(
    cast(ContainerRuntime, "kraken"),
    CommandLine(Options("bind b cwd env e"), verbs=(Verb("run"),), binds=("bind", "b"), workdir=("cwd",)),
    Launch(("kraken", "run"), gpus="--gpus", bind="--bind", workdir="--cwd"),
    shim=True,
)

STEP = "srun kraken run --bind /scratch/in:/data:ro --quiet -e X=1 --cwd /data reg.example/lab/tool:2"
SCRIPT = f"#!/bin/bash\n#SBATCH --job-name=toy\n#SBATCH -N 1\n{STEP} python3 train.py --epochs 2\n"

JOB = """
apiVersion: batch/v1
kind: Job
metadata: {name: toy}
spec:
  backoffLimit: 0
  template: {spec: {restartPolicy: Never, volumes: [{name: host, hostPath: {path: /scratch/in}}],
    containers: [{name: c, image: "reg.example/lab/tool:2", command: [python3, train.py],
      args: ["--epochs", "2"], workingDir: /work, resources: {limits: {nvidia.com/gpu: 1}},
      volumeMounts: [{name: host, mountPath: /data}]}]}}
"""


@pytest.fixture
def kraken() -> Iterator[Runtime]:
    with runtimes.registered(KRAKEN):
        yield KRAKEN


def _script_job(text: str = SCRIPT) -> ir.Job:
    (job,) = slurm_reader.read(text, "toy.sbatch", Collector())
    return job


def _manifest_job() -> ir.Job:
    (job,) = k8s_reader.read(JOB, "job.yaml", Collector())
    return job


def _srun_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("srun ")]


def test_a_script_line_of_the_toy_runtime_reads_as_its_container(kraken: Runtime) -> None:
    (container,) = _script_job().components[0].containers
    assert (container.runtime, container.image) == ("kraken", "reg.example/lab/tool:2")
    assert container.command == ("python3", "train.py", "--epochs", "2")  # --quiet takes no value
    assert container.workdir == "/data"
    assert [(m.source, m.target, m.read_only) for m in container.mounts] == [("/scratch/in", "/data", True)]


def test_the_slurm_writer_starts_the_container_with_the_toy_runtime(kraken: Runtime) -> None:
    result = translate_jobs([_manifest_job()], to=Format.SLURM, runtime="kraken")
    (t,) = result.translations
    (line,) = _srun_lines(t.files["job.sbatch"])
    runs = "kraken run --gpus --bind /scratch/in:/data --cwd /work reg.example/lab/tool:2"
    assert line == f"srun {runs} python3 train.py --epochs 2"
    assert any(e.item == "container c (reg.example/lab/tool:2)" for e in t.fidelity.entries)
    assert {e.reason for e in t.fidelity.entries if e.item == "container c (reg.example/lab/tool:2)"} == {
        "runs in the image through kraken"
    }


def test_the_cli_takes_the_toy_runtime(kraken: Runtime, tmp_path: Path) -> None:
    (tmp_path / "job.yaml").write_text(JOB, encoding="utf-8")
    out = tmp_path / "out"
    args = ["translate", str(tmp_path / "job.yaml"), "--to", "slurm", "--container-runtime", "kraken"]
    done = CliRunner().invoke(cli.app, [*args, "--out", str(out)])
    assert done.exit_code == 0, done.output
    (written,) = out.glob("*/job.sbatch")
    assert any(" kraken run " in line for line in _srun_lines(written.read_text(encoding="utf-8")))


def test_an_emulated_pod_gets_a_shim_for_the_toy_runtime(kraken: Runtime) -> None:
    t = translate_job(_script_job(), None, "job", style="emulate")
    (manifest,) = t.files.values()
    configmap = find(documents(manifest), "ConfigMap")
    assert configmap["data"]["kraken"] == shims.container_run(KRAKEN)
    assert '__m_verbs="run"' in configmap["data"]["kraken"]
    items = [
        v for d in documents(manifest) if d["kind"] == "Job" for v in d["spec"]["template"]["spec"]["volumes"]
    ]
    paths = {
        item["key"]: item["path"] for volume in items for item in volume.get("configMap", {}).get("items", [])
    }
    assert paths["kraken"] == "bin/kraken"


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is needed to run the entrypoint")
def test_the_toy_shim_runs_the_program_in_the_pod(kraken: Runtime, tmp_path: Path) -> None:
    t = translate_job(_script_job(), None, "job", style="emulate")
    (manifest,) = t.files.values()
    script = f"#!/bin/bash\n{STEP} echo 'a b' c\nkraken build x\n"
    done = run_pod(manifest, tmp_path, {}, script)
    assert done.stdout.splitlines() == ["a b c"], done.stderr
    assert "migrate: 'kraken build x' has no equivalent inside a Kubernetes pod" in done.stderr
    assert done.returncode == 1


def test_a_native_pod_runs_the_program_the_toy_runtime_starts(kraken: Runtime) -> None:
    t = translate_job(_script_job(), None, "job", style="native")
    assert t.style == "native"
    (manifest,) = t.files.values()
    (spec,) = [d for d in documents(manifest) if d["kind"] == "Job"]
    (container,) = spec["spec"]["template"]["spec"]["containers"]
    assert container["image"] == "reg.example/lab/tool:2"
    words = [*container.get("command", []), *container.get("args", [])]
    assert words[-4:] == ["python3", "train.py", "--epochs", "2"]
    assert not {"kraken", "run", "--bind", "--quiet"} & set(words)  # the pod is the container


def test_unregistered_the_toy_runtime_is_unknown_everywhere() -> None:
    assert runtimes.find("kraken") is None
    assert _script_job().components[0].containers == ()
    with pytest.raises(ValueError, match="unknown container runtime 'kraken'"):
        translate_jobs([_manifest_job()], to=Format.SLURM, runtime="kraken")
    t = translate_job(_script_job(), None, "job", style="emulate")
    (manifest,) = t.files.values()
    assert "kraken" not in find(documents(manifest), "ConfigMap")["data"]
    assert "kraken" not in shims.paths()
    with runtimes.registered(KRAKEN):
        assert runtimes.runtimes()[-1] == KRAKEN
    assert runtimes.runtimes() == tuple(runtimes.get(name) for name in runtimes.RUNTIMES)


@pytest.mark.parametrize(
    ("runtime", "problem"),
    [
        (Runtime(ContainerRuntime.DOCKER), "already registered"),
        (Runtime(cast(ContainerRuntime, "a b")), "command word"),
        (Runtime(cast(ContainerRuntime, "toy"), shim=True), "has not"),
        (
            Runtime(
                cast(ContainerRuntime, "toy"), CommandLine(Options("x"), verbs=(Verb("a b"),)), shim=True
            ),
            "one word",
        ),
        (Runtime(cast(ContainerRuntime, "toy"), CommandLine(Options("x'y")), shim=True), "spells"),
        (Runtime(cast(ContainerRuntime, "toy"), CommandLine(Options()), shim=True), "lists the options"),
        (Runtime(cast(ContainerRuntime, "toy"), launch=Launch()), "starts with words"),
    ],
)
def test_a_runtime_the_shims_or_the_writer_could_not_use_is_refused(runtime: Runtime, problem: str) -> None:
    with pytest.raises(ValueError, match=problem), runtimes.registered(runtime):
        pass
    assert tuple(r.name for r in runtimes.runtimes()) == runtimes.RUNTIMES


def test_every_runtime_of_the_ir_is_declared_once() -> None:
    assert sorted(runtimes.RUNTIMES) == sorted(ContainerRuntime)


def test_the_cli_help_and_the_readme_name_every_runtime_the_slurm_writer_starts() -> None:
    choices = [*runtimes.launched(), "none"]
    assert choices == ["pyxis", "apptainer", "shifter", "podman-hpc", "none"]
    help_text = cli.ContainerRuntimeOption.__metadata__[0].help
    listed = help_text.split("(--to slurm): ", 1)[1].split(". Default", 1)[0]
    assert re.split(r", | or ", listed) == choices
    (row,) = [
        line
        for line in README.read_text(encoding="utf-8").splitlines()
        if "| `--container-runtime NAME` | `--to slurm`" in line
    ]
    assert all(f"`{name}`" in row for name in choices)
