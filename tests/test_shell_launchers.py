"""Launchers with their options and programs, nested and inside containers."""

from __future__ import annotations

import textwrap

import pytest

from migrate import ir
from migrate.diagnostics import Collector
from migrate.translators.shell.analyze import analyze
from migrate.translators.shell.facts import BodyFacts


def read(body: str, start: int = 1) -> BodyFacts:
    return analyze(textwrap.dedent(body).strip("\n"), start, Collector())


def opts(launcher: ir.Launcher) -> dict[str, str]:
    return {kv.key: kv.value for kv in launcher.options}


def test_srun_flags_long_short_and_pyxis() -> None:
    (srun,) = read(
        """
        srun -N2 -n 16 --ntasks-per-node=8 --mpi=pmix --het-group=0 -l \\
            --container-image=nvcr.io#nvidia/pytorch:24.01-py3 \\
            --container-mounts=/fsx:/fsx --container-workdir=/workspace \\
            --no-container-entrypoint ./app --flag
        """,
        30,
    ).launchers
    assert srun.name == "srun" and srun.line == 30
    assert opts(srun) == {
        "nodes": "2",
        "ntasks": "16",
        "ntasks-per-node": "8",
        "mpi": "pmix",
        "het-group": "0",
        "label": "",
        "container-image": "nvcr.io#nvidia/pytorch:24.01-py3",
        "container-mounts": "/fsx:/fsx",
        "container-workdir": "/workspace",
        "no-container-entrypoint": "",
    }
    assert srun.program == ("./app", "--flag")
    assert srun.text.startswith("srun -N2 -n 16")


def test_srun_optional_argument_options_do_not_take_the_program() -> None:
    (srun,) = read("srun --exclusive -K hostname").launchers
    assert srun.program == ("hostname",)
    assert opts(srun) == {"exclusive": "", "kill-on-bad-exit": ""}


def test_srun_then_torchrun_gives_both() -> None:
    facts = read(
        """
        srun --container-image=$IMAGE \\
             torchrun \\
                --nnodes=$NNODES --nproc_per_node=8 \\
                --rdzv_backend=c10d --rdzv_endpoint=$MASTER_ADDR:29500 \\
                train.py --bf16
        """,
        51,
    )
    srun, torchrun = facts.launchers
    assert srun.program[0] == "torchrun" and srun.line == 51
    assert torchrun.name == "torchrun" and torchrun.line == 52
    assert opts(torchrun) == {
        "nnodes": "$NNODES",
        "nproc_per_node": "8",
        "rdzv_backend": "c10d",
        "rdzv_endpoint": "$MASTER_ADDR:29500",
    }
    assert torchrun.program == ("train.py", "--bf16")
    assert torchrun.text == srun.text


@pytest.mark.parametrize(
    ("body", "name", "options", "program"),
    [
        (
            "torchrun --nproc-per-node 4 --master_addr h --master_port=1 --node_rank 0 --standalone t.py",
            "torchrun",
            {
                "nproc_per_node": "4",
                "master_addr": "h",
                "master_port": "1",
                "node_rank": "0",
                "standalone": "",
            },
            ("t.py",),
        ),
        (
            "python -m torch.distributed.run --nproc_per_node=4 main.py --x",
            "torch.distributed.run",
            {"nproc_per_node": "4"},
            ("main.py", "--x"),
        ),
        (
            "python3 -u -m torch.distributed.launch --use_env --nproc_per_node 2 m.py",
            "torch.distributed.launch",
            {"use_env": "", "nproc_per_node": "2"},
            ("m.py",),
        ),
        (
            "mpirun -np 64 --map-by ppr:8:node -x NCCL_DEBUG --hostfile hosts --mca btl ^openib ./a.out -v",
            "mpirun",
            {
                "np": "64",
                "map-by": "ppr:8:node",
                "x": "NCCL_DEBUG",
                "hostfile": "hosts",
                "mca": "btl ^openib",
            },
            ("./a.out", "-v"),
        ),
        ("mpiexec -n 4 -ppn 2 ./b", "mpiexec", {"np": "4", "ppn": "2"}, ("./b",)),
        (
            "deepspeed --hostfile /fsx/hostfile --num_nodes 2 --num_gpus 8 train.py --deepspeed ds.json",
            "deepspeed",
            {"hostfile": "/fsx/hostfile", "num_nodes": "2", "num_gpus": "8"},
            ("train.py", "--deepspeed", "ds.json"),
        ),
        (
            "python -m deepspeed.launcher.runner --num_gpus 8 train.py",
            "deepspeed",
            {"num_gpus": "8"},
            ("train.py",),
        ),
        (
            "accelerate launch --num_processes 16 --num_machines 2 --machine_rank $R "
            "--main_process_ip 10.0.0.1 --config_file acc.yaml train.py --lr 1",
            "accelerate",
            {
                "num_processes": "16",
                "num_machines": "2",
                "machine_rank": "$R",
                "main_process_ip": "10.0.0.1",
                "config_file": "acc.yaml",
            },
            ("train.py", "--lr", "1"),
        ),
        (
            "horovodrun -np 8 -H a:4,b:4 python t.py",
            "horovodrun",
            {"np": "8", "hosts": "a:4,b:4"},
            ("python", "t.py"),
        ),
    ],
)
def test_launchers(body: str, name: str, options: dict[str, str], program: tuple[str, ...]) -> None:
    (launcher,) = read(body).launchers
    assert (launcher.name, opts(launcher), launcher.program) == (name, options, program)


def test_mpirun_keeps_repeated_x_options_in_order() -> None:
    (mpirun,) = read("mpirun -x A -x B=1 ./a").launchers
    assert [(kv.key, kv.value) for kv in mpirun.options] == [("x", "A"), ("x", "B=1")]


def test_heterogeneous_srun_gives_one_launcher_per_component() -> None:
    first, second = read(
        """
        srun --het-group=0 python learner.py --port 50051 : \\
             --het-group=1 python actor.py
        """,
        17,
    ).launchers
    assert (opts(first), first.program, first.line) == (
        {"het-group": "0"},
        ("python", "learner.py", "--port", "50051"),
        17,
    )
    assert (opts(second), second.program) == ({"het-group": "1"}, ("python", "actor.py"))


def test_mpmd_mpiexec() -> None:
    a, b = read("mpiexec -n 1 ./master : -n 8 ./worker").launchers
    assert (a.program, opts(b)) == (("./master",), {"np": "8"})


def test_launchers_inside_containers_and_wrappers() -> None:
    facts = read(
        """
        srun --ntasks=2 apptainer exec --nv -B /fsx:/data img.sif torchrun --nproc_per_node=4 train.py
        exec env OMP_NUM_THREADS=4 numactl --cpunodebind=0 timeout 3600 srun -n 2 ./x
        srun nsys profile -o /fsx/p/r python -m torch.distributed.run --nnodes 1 t.py
        """
    )
    assert [(launcher.name, launcher.line) for launcher in facts.launchers] == [
        ("srun", 1),
        ("torchrun", 1),
        ("srun", 2),
        ("srun", 3),
        ("torch.distributed.run", 3),
    ]
    assert facts.launchers[2].program == ("./x",)


def test_launcher_inside_bash_c_has_its_own_line() -> None:
    facts = read(
        """
        srun --kill-on-bad-exit=1 bash -c '
        accelerate launch \\
            --num_machines '"$SLURM_NNODES"' \\
            --machine_rank $SLURM_NODEID \\
            sft.py --report_to wandb
        '
        """,
        27,
    )
    srun, accelerate = facts.launchers
    assert srun.program[:2] == ("bash", "-c")
    assert (accelerate.name, accelerate.line) == ("accelerate", 28)
    assert opts(accelerate) == {"num_machines": "$SLURM_NNODES", "machine_rank": "$SLURM_NODEID"}
    assert facts.statements == 2 and facts.understood == 2


@pytest.mark.parametrize(
    ("body", "found"),
    [
        ("bash -o pipefail -c 'srun a'", ["srun"]),
        ("srun -N1 sh -ec 'torchrun t.py'", ["srun", "torchrun"]),
        ("srun bash -s <<'X'\nsrun --overlap b\nX", ["srun", "srun"]),
        ("bash run.sh <<EOF\nsrun not-a-script\nEOF", []),
        ('eval "srun c"', ["srun"]),
    ],
)
def test_scripts_inside_scripts(body: str, found: list[str]) -> None:
    assert [launcher.name for launcher in read(body).launchers] == found


def test_launcher_held_in_a_variable() -> None:
    facts = read(
        """
        PW="srun --mpi=pmix pw.x -nk 4"
        $PW -i si.scf.in > si.scf.out
        """,
        17,
    )
    (srun,) = facts.launchers
    assert (srun.line, opts(srun), srun.program) == (
        18,
        {"mpi": "pmix"},
        ("pw.x", "-nk", "4", "-i", "si.scf.in"),
    )


def test_launcher_text_has_no_literal_credentials() -> None:
    (srun,) = read(
        "srun env HF_TOKEN=hf_abcdefghijklmnopqrstuvwx python t.py --api-key sk-abcdefghijklmnopqrstuvwx"
    ).launchers
    assert "hf_abc" not in srun.text and "sk-abc" not in srun.text
    assert "sk-abc" not in " ".join(srun.program)


def test_launcher_options_kept_in_an_array_or_a_variable_after_srun() -> None:
    facts = read(
        """
        GPUS_PER_NODE=8
        declare -a TORCHRUN_ARGS=(
            --nproc_per_node=$GPUS_PER_NODE
            --nnodes=4
        )
        LAUNCHER="python -m torch.distributed.run --nproc_per_node $GPUS_PER_NODE"
        srun -l torchrun "${TORCHRUN_ARGS[@]}" train.py
        srun $LAUNCHER eval.py
        srun torchrun "$LAUNCHER" quoted.py
        """,
        10,
    )
    torch = [(x.name, opts(x), x.line) for x in facts.launchers if x.name != "srun"]
    assert torch == [
        ("torchrun", {"nproc_per_node": "$GPUS_PER_NODE", "nnodes": "4"}, 16),
        ("torch.distributed.run", {"nproc_per_node": "$GPUS_PER_NODE"}, 17),
        ("torchrun", {}, 18),  # a quoted "$X" is one word, as bash passes it
    ]
    # the value the option names stays in the environment, with its line, for the allocation's hints
    assert [(e.value, e.line) for e in facts.environment if e.name == "GPUS_PER_NODE"] == [("8", 10)]
