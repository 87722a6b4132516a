"""Storage paths with read/write hints."""

from __future__ import annotations

import textwrap

import pytest

from migrate.diagnostics import Collector
from migrate.translators.shell.analyze import analyze
from migrate.translators.shell.paths import candidates, normalize, option_access


def storage(body: str, start: int = 1) -> list[tuple[str, str, str, int | None]]:
    facts = analyze(textwrap.dedent(body).strip("\n"), start, Collector())
    return [(s.path, s.access, s.via, s.line) for s in facts.storage]


def test_shell_operations() -> None:
    assert storage(
        """
        mkdir -p /fsx/out/run1
        cp /weka/bams/$SAMPLE.bam* $TMPDIR/
        rsync -a --exclude '*.trr' $WORK/ $HOME/results/
        cat /gpfs/in.txt > /lustre/out.txt 2>> /scratch/err.log
        python prep.py < /gpfs/input.csv
        cd /home/alice/exp
        lfs setstripe -c 8 /lustre/big
        tar czf $HOME/results/r.tgz /scratch/a/out
        tar -xf /gpfs/archive.tar -C /dev/shm/unpacked
        sed -n "1p" /gpfs/files.txt
        ln -sf /lustre/static/geo_em.d0* .
        aws s3 sync /fsx/ckpt s3://bucket/ckpt/
        """,
        11,
    ) == [
        ("/fsx/out/run1", "write", "body", 11),
        ("/weka/bams/$SAMPLE.bam*", "read", "body", 12),
        ("$TMPDIR", "write", "body", 12),
        ("$WORK", "read", "body", 13),
        ("$HOME/results", "write", "body", 13),
        ("/gpfs/in.txt", "read", "body", 14),
        ("/lustre/out.txt", "write", "body", 14),
        ("/scratch/err.log", "write", "body", 14),
        ("/gpfs/input.csv", "read", "body", 15),
        ("/home/alice/exp", "readwrite", "body", 16),
        ("/lustre/big", "write", "body", 17),
        ("$HOME/results/r.tgz", "write", "body", 18),
        ("/scratch/a/out", "read", "body", 18),
        ("/gpfs/archive.tar", "read", "body", 19),
        ("/dev/shm/unpacked", "write", "body", 19),
        ("/gpfs/files.txt", "read", "body", 20),
        ("/lustre/static/geo_em.d0*", "read", "body", 21),
        ("/fsx/ckpt", "read", "body", 22),
        ("s3://bucket/ckpt", "write", "body", 22),
    ]


def test_program_arguments_by_option_name() -> None:
    assert storage(
        """
        srun python train.py \\
            --data_path /fsx/data/tok \\
            --output_dir=/fsx/ckpt/run \\
            --resume_from /fsx/ckpt/old/last.pt \\
            --config /fsx/cfg/a.yaml \\
            --save_dir /fsx/save \\
            --checkpoint-dir /fsx/cd \\
            --ckpt /fsx/c2 \\
            --out $SCRATCH/o \\
            --input ~/in.txt \\
            --dataset /datasets/imagenet \\
            model.restore_from_path=/fsx/models/m.nemo \\
            exp_manager.exp_dir=/fsx/results/nemo \\
            /gpfs/positional
        """,
        5,
    ) == [
        ("/fsx/data/tok", "read", "argument", 6),
        ("/fsx/ckpt/run", "write", "argument", 7),
        ("/fsx/ckpt/old/last.pt", "read", "argument", 8),
        ("/fsx/cfg/a.yaml", "read", "argument", 9),
        ("/fsx/save", "write", "argument", 10),
        ("/fsx/cd", "write", "argument", 11),
        ("/fsx/c2", "write", "argument", 12),
        ("$SCRATCH/o", "write", "argument", 13),
        ("~/in.txt", "read", "argument", 14),
        ("/datasets/imagenet", "read", "argument", 15),
        ("/fsx/models/m.nemo", "read", "argument", 16),
        ("/fsx/results/nemo", "write", "argument", 17),
        ("/gpfs/positional", "unknown", "argument", 18),
    ]


def test_variables_the_script_set_are_followed() -> None:
    assert storage(
        """
        CKPT=/fsx/checkpoints/run-$SLURM_JOB_ID
        DATA=/fsx/datasets/tok
        OUT=$CKPT/eval
        mkdir -p "$CKPT"
        srun python t.py --data-path $DATA --save ${CKPT}
        echo done > $OUT/done.txt
        """
    ) == [
        ("/fsx/checkpoints/run-$SLURM_JOB_ID/eval", "unknown", "body", 3),
        ("/fsx/checkpoints/run-$SLURM_JOB_ID", "write", "body", 4),
        ("/fsx/datasets/tok", "read", "argument", 5),
        ("/fsx/checkpoints/run-$SLURM_JOB_ID/eval/done.txt", "write", "body", 6),
    ]


def test_container_mounts_and_paths_inside_containers() -> None:
    assert storage(
        """
        singularity run -B /gpfs/bids:/data:ro -B /gpfs/out:/out -B $TMPDIR:/work /gpfs/c/prep.sif \\
            /data /out participant -w /work --fs-license-file $HOME/license.txt
        srun --container-mounts=/fsx:/fsx,/opt/amazon/efa:/opt/amazon/efa --container-image=x:1 ls /fsx/a
        """
    ) == [
        ("/gpfs/c/prep.sif", "read", "argument", 1),
        ("/gpfs/bids", "read", "container-mount", 1),
        ("/gpfs/out", "readwrite", "container-mount", 1),
        ("$TMPDIR", "readwrite", "container-mount", 1),
        ("$HOME/license.txt", "read", "argument", 2),
        ("/fsx", "readwrite", "container-mount", 3),
        ("/fsx/a", "read", "body", 3),
    ]


def test_system_paths_messages_and_urls_are_skipped() -> None:
    assert (
        storage(
            """
        source /etc/profile.d/modules.sh
        echo "writing to /fsx/out" > /dev/null
        curl -s http://pushgateway:9091/metrics/job/x
        /opt/tools/bin/selftest --quick
        export NCCL_TUNER_PLUGIN=/opt/amazon/lib/tuner.so
        sed 's/$/ slots=8/' hosts
        """
        )
        == []
    )


def test_same_path_and_access_kept_once_at_first_line() -> None:
    result = storage("touch /fsx/a\nrm -f /fsx/a\nCKPT=/fsx/c\ncat $CKPT/x /fsx/c")
    assert result == [
        ("/fsx/a", "write", "body", 1),
        ("/fsx/c/x", "read", "body", 4),
        ("/fsx/c", "read", "body", 4),
    ]


@pytest.mark.parametrize(
    ("value", "found"),
    [
        ("--bind=/lustre:/lustre,/home", ["/lustre", "/lustre", "/home"]),
        ("model.data.file_names=[/fsx/d/train.jsonl]", ["/fsx/d/train.jsonl"]),
        ("/fsx/eval/$(basename $x).json", ["/fsx/eval/$(basename $x).json"]),
        ("${TMPDIR}", ["${TMPDIR}"]),
        ("$SCRATCHPAD/x", []),
        ("'/home/u/config.mat'", ["/home/u/config.mat"]),
        ("docker://ghcr.io/x/y:1", []),
        ('s3://bucket/$(basename "$d")/', ['s3://bucket/$(basename "$d")']),
        ("1/2", []),
    ],
)
def test_candidates(value: str, found: list[str]) -> None:
    assert candidates(value, {}) == found


def test_normalize() -> None:
    assert normalize("/fsx/a/,") == "/fsx/a"
    assert normalize("/fsx/x)") == "/fsx/x"
    assert normalize("${X}") == "${X}"


@pytest.mark.parametrize(
    ("name", "access"),
    [
        ("--output_dir", "write"),
        ("save-dir", "write"),
        ("ckpt", "write"),
        ("data_path", "read"),
        ("resume_from_checkpoint", "read"),
        ("exp_manager.exp_dir", "write"),
        ("cache_dir", "readwrite"),
        ("lr", None),
    ],
)
def test_option_access(name: str, access: str | None) -> None:
    assert option_access(name) == access
