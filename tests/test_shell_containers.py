"""Containers: pyxis, Apptainer/Singularity, docker/podman, podman-hpc, Sarus, ch-run, enroot, shifter."""

from __future__ import annotations

import textwrap

import pytest

from migrate import ir
from migrate.diagnostics import Collector
from migrate.translators.shell.analyze import analyze
from migrate.translators.shell.facts import BodyFacts


def read(body: str, start: int = 1) -> BodyFacts:
    return analyze(textwrap.dedent(body).strip("\n"), start, Collector())


def mounts(container: ir.Container) -> list[tuple[str | None, str, bool]]:
    return [(m.source, m.target, m.read_only) for m in container.mounts]


@pytest.mark.parametrize(
    "image", ["docker://nvcr.io/nvidia/pytorch:24.01-py3", "nvcr.io#nvidia/pytorch:24.01-py3"]
)
def test_pyxis(image: str) -> None:
    (c,) = read(
        f"""
        srun --container-image={image} \\
             --container-mounts=/fsx:/fsx,/home:/home:ro \\
             --container-workdir=/fsx/code python t.py
        """,
        40,
    ).containers
    assert (c.runtime, c.image, c.workdir, c.line) == ("pyxis", image, "/fsx/code", 40)
    assert mounts(c) == [("/fsx", "/fsx", False), ("/home", "/home", True)]
    assert c.command == ("python", "t.py")


def test_pyxis_image_and_mounts_from_script_variables() -> None:
    facts = read(
        """
        IMAGE=nvcr.io#nvidia/pytorch:24.03-py3
        MOUNTS=/fsx:/fsx,/opt/amazon/efa:/opt/amazon/efa
        srun --container-image=$IMAGE --container-mounts=$MOUNTS torchrun t.py
        """
    )
    (c,) = facts.containers
    assert c.image == "nvcr.io#nvidia/pytorch:24.03-py3"
    assert [m.target for m in c.mounts] == ["/fsx", "/opt/amazon/efa"]
    assert facts.launchers[0].options[0] == ir.KeyValue("container-image", "$IMAGE")  # options stay verbatim


@pytest.mark.parametrize(
    ("body", "runtime", "image", "expected_mounts", "command", "args"),
    [
        (
            "apptainer exec --nv --bind /lustre:/lustre,$TMPDIR:/data:ro img.sif python t.py",
            "apptainer",
            "img.sif",
            [("/lustre", "/lustre", False), ("$TMPDIR", "/data", True)],
            ("python", "t.py"),
            (),
        ),
        (
            "singularity run --cleanenv -B /gpfs/bids:/data:ro /gpfs/c/fmriprep.sif /data /out participant",
            "singularity",
            "/gpfs/c/fmriprep.sif",
            [("/gpfs/bids", "/data", True)],
            (),
            ("/data", "/out", "participant"),
        ),
        (
            "docker run --rm --gpus all -v /fsx/data:/data:ro -w /work nvcr.io/nvidia/pytorch:24.01-py3 "
            "python t.py",
            "docker",
            "nvcr.io/nvidia/pytorch:24.01-py3",
            [("/fsx/data", "/data", True)],
            ("python", "t.py"),
            (),
        ),
        (
            "podman-hpc run -it --volume /pscratch:/pscratch img:2 bash",
            "podman-hpc",
            "img:2",
            [("/pscratch", "/pscratch", False)],
            ("bash",),
            (),
        ),
        (  # podman-hpc's module switches take no value: the image follows them
            "podman-hpc run --rm --gpu --mpi --nccl -v /pscratch/sd/u:/work registry.nersc.gov/m1/train:2 "
            "python t.py",
            "podman-hpc",
            "registry.nersc.gov/m1/train:2",
            [("/pscratch/sd/u", "/work", False)],
            ("python", "t.py"),
            (),
        ),
        (
            "podman-hpc --squash-dir /pscratch/sq shared-run --gpu img:3 python t.py",
            "podman-hpc",
            "img:3",
            [],
            ("python", "t.py"),
            (),
        ),
        (  # sarus' -m is --mpi, a switch
            "sarus run --mpi -m --mount=type=bind,source=/scratch/snx/data,destination=/data,readonly "
            "load/library/app:1.0 ./app --in /data",
            "sarus",
            "load/library/app:1.0",
            [("/scratch/snx/data", "/data", True)],
            ("./app", "--in", "/data"),
            (),
        ),
        (
            "ch-run -w -b /lustre/proj:/mnt/0 --set-env=/ch/env -c /mnt/0 /var/tmp/pytorch -- python t.py",
            "ch-run",
            "/var/tmp/pytorch",
            [("/lustre/proj", "/mnt/0", False)],
            ("python", "t.py"),
            (),
        ),
        (
            "enroot start --mount /fsx:/fsx --rw pytorch python t.py",
            "enroot",
            "pytorch",
            [("/fsx", "/fsx", False)],
            ("python", "t.py"),
            (),
        ),
        (
            "shifter --image=docker:nersc/app:1 --volume=/global/cfs:/data python t.py",
            "shifter",
            "docker:nersc/app:1",
            [("/global/cfs", "/data", False)],
            ("python", "t.py"),
            (),
        ),
    ],
)
def test_runtimes(
    body: str,
    runtime: str,
    image: str,
    expected_mounts: list[tuple[str, str, bool]],
    command: tuple[str, ...],
    args: tuple[str, ...],
) -> None:
    (c,) = read(body, 7).containers
    assert (c.runtime, c.image, c.line) == (runtime, image, 7)
    assert mounts(c) == expected_mounts
    assert (c.command, c.args) == (command, args)


def test_apptainer_pwd_and_mount_option() -> None:
    (c,) = read("apptainer exec --pwd /w --mount type=bind,src=/a,dst=/b,ro i.sif ls").containers
    assert c.workdir == "/w" and mounts(c) == [("/a", "/b", True)]


def test_the_same_container_twice_is_listed_once() -> None:
    facts = read("srun --container-image=x:1 a\nsrun --container-image=x:1 b\nsrun --container-image=x:2 c")
    assert [(c.image, c.line) for c in facts.containers] == [("x:1", 1), ("x:2", 3)]


def test_not_containers() -> None:
    assert read("docker ps\napptainer build x.sif x.def\nenroot import docker://x").containers == ()


def test_a_bare_shifter_runs_the_program_in_the_image_of_the_job() -> None:
    facts = read("srun shifter --workdir=/w python t.py")
    assert facts.containers == ()  # the image is the job's (#SBATCH --image), read with the header
    (launcher,) = facts.launchers
    assert launcher.program == ("shifter", "--workdir=/w", "python", "t.py")


def test_sarus_and_podman_hpc_without_run_are_not_containers() -> None:
    assert read("sarus pull ethcscs/mpich:ub1804\npodman-hpc images\nch-image build -t x .").containers == ()
