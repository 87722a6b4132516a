"""Monitoring hooks: GPU samplers, metrics pushes, trackers, profilers, mail, webhooks."""

from __future__ import annotations

import textwrap

import pytest

from migrate.diagnostics import Collector
from migrate.translators.shell.analyze import analyze


def hooks(body: str, start: int = 1) -> list[tuple[str, str, int | None]]:
    facts = analyze(textwrap.dedent(body).strip("\n"), start, Collector())
    return [(h.kind, h.detail, h.line) for h in facts.monitoring]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            "nvidia-smi --query-gpu=utilization.gpu --format=csv -l 30 > /fsx/gpu.log &",
            ("nvidia-smi", "loop every 30s, background, to /fsx/gpu.log"),
        ),
        ("nvidia-smi --loop=5", ("nvidia-smi", "loop every 5s")),
        (
            "nvidia-smi dmon -s u -d 10 > dmon.log &",
            ("nvidia-smi", "dmon -s u -d 10, background, to dmon.log"),
        ),
        ("nvidia-smi -L", ("nvidia-smi", "once: -L")),
        (
            "dcgmi dmon -e 1001,1004 -d 1000 > $OUT/d.csv &",
            ("dcgm", "dmon -e 1001,1004 -d 1000, background, to $OUT/d.csv"),
        ),
        ("dcgmi stats -j $SLURM_JOB_ID -v", ("dcgm", "stats -j $SLURM_JOB_ID -v")),
        ("dcgmi diag -r 3", ("dcgm", "diag -r 3")),
        ("dcgm-exporter &", ("dcgm-exporter", "background")),
        (
            "curl -s --data-binary @- http://pushgateway.monitoring:9091/metrics/job/etl < m.txt",
            ("prometheus-pushgateway", "http://pushgateway.monitoring:9091/metrics/job/etl"),
        ),
        (
            "wget -qO- --post-file=m http://gw:9091/metrics/job/x",
            ("prometheus-pushgateway", "http://gw:9091/metrics/job/x"),
        ),
        (
            "python -c 'from prometheus_client import push_to_gateway'",
            ("prometheus-pushgateway", "push_to_gateway"),
        ),
        ("wandb login --relogin $(cat ~/.wandb)", ("wandb", "wandb login")),
        ("wandb agent ent/proj/abc", ("wandb", "wandb agent")),
        ("export WANDB_PROJECT=llama", ("wandb", "WANDB_PROJECT=llama")),
        ("export WANDB_API_KEY=$(cat k)", ("wandb", "WANDB_API_KEY")),
        ("python t.py --report_to wandb", ("wandb", "--report_to wandb")),
        (
            "tensorboard --logdir /fsx/tb --port 6006 &",
            ("tensorboard", "tensorboard --logdir /fsx/tb --port 6006, background"),
        ),
        ("python t.py --report_to=tensorboard", ("tensorboard", "--report_to=tensorboard")),
        ("python t.py --tb-logdir /fsx/tb", ("tensorboard", "--tb-logdir /fsx/tb")),
        (
            "export MLFLOW_TRACKING_URI=http://mlflow:5000",
            ("mlflow", "MLFLOW_TRACKING_URI=http://mlflow:5000"),
        ),
        (
            "nsys profile -t cuda -o $OUT/rank%q{SLURM_PROCID} python t.py",
            ("nsys", "profile -o $OUT/rank%q{SLURM_PROCID}"),
        ),
        ("ncu --set full -o prof python x.py", ("ncu", "-o prof")),
        ('echo done | mail -s "spinup done" $USER', ("mail", "to $USER")),
        ("mailx -s subj ops@example.org < report.txt", ("mail", "to ops@example.org")),
        (
            "sstat -j $SLURM_JOB_ID.0 --format=JobID,MaxRSS",
            ("sstat", "sstat -j $SLURM_JOB_ID.0 --format=JobID,MaxRSS"),
        ),
        ("seff $SLURM_JOB_ID", ("seff", "seff $SLURM_JOB_ID")),
        (
            'curl -X POST --data \'{"text":"ok"}\' https://hooks.slack.com/services/T0/B0/SECRET',
            ("slack-webhook", "hooks.slack.com"),
        ),
    ],
)
def test_hooks(body: str, expected: tuple[str, str]) -> None:
    assert hooks(body, 9) == [(*expected, 9)]


def test_node_exporter_textfile_collector() -> None:
    body = """
        cat <<EOF > /var/lib/node_exporter/textfile/purge.prom.$$
        purge_files_deleted $N
        EOF
        mv /var/lib/node_exporter/textfile/purge.prom.$$ /var/lib/node_exporter/textfile/purge.prom
        """
    assert hooks(body, 21) == [("node-exporter-textfile", "/var/lib/node_exporter/textfile/purge.prom", 21)]


def test_monitoring_loop_in_the_background() -> None:
    assert hooks("while true; do nvidia-smi >> /fsx/gpu.log; sleep 60; done &") == [
        ("nvidia-smi", "once, background, to /fsx/gpu.log", 1)
    ]


def test_hooks_inside_bash_c_and_srun() -> None:
    body = """
        srun --ntasks-per-node=1 bash -c '
          nvidia-smi --query-gpu=index --format=csv
          dcgmi diag -r 3
        '
        """
    assert hooks(body, 17) == [("nvidia-smi", "query once", 18), ("dcgm", "diag -r 3", 19)]


def test_one_hook_per_tracker_and_command() -> None:
    assert hooks("python t.py --log-wandb --wandb-project vision --report_to wandb,tensorboard") == [
        ("wandb", "--log-wandb --wandb-project vision", 1),
        ("tensorboard", "--report_to wandb,tensorboard", 1),
    ]


def test_no_hook_details_carry_credentials() -> None:
    details = " ".join(
        d
        for _, d, _ in hooks(
            """
            wandb login 3f2a9c1de4b7a8801c55e0f6d2b94a7713c0e5ab
            curl https://hooks.slack.com/services/T0/B0/XYZSECRET
            python t.py --wandb_api_key abcdefabcdefabcdefabcdef
            """
        )
    )
    assert "3f2a9c" not in details and "XYZSECRET" not in details and "abcdefabcdef" not in details


@pytest.mark.parametrize(
    "body",
    [
        "export WANDB_MODE=disabled\nexport WANDB_PROJECT=llm\npython train.py --report_to wandb",
        "export WANDB_MODE=offline\npython train.py --wandb-project llm",
        "export WANDB_DISABLED=true\nexport WANDB_ENTITY=team\npython train.py",
        "python /opt/eval.py exp_manager.create_wandb_logger=False trainer.devices=1",
        "python finetune.py --use_wandb false",
        "export WANDB_PROJECT=llm\npython finetune.py --report_to none",
    ],
)
def test_a_tracker_switched_off_is_no_monitoring(body: str) -> None:
    assert [kind for kind, _, _ in hooks(body)] == []


@pytest.mark.parametrize(
    "body",
    [
        "export WANDB_MODE=online\npython train.py",
        "python /opt/train.py exp_manager.create_wandb_logger=True",
        "python finetune.py --report_to wandb",
    ],
)
def test_a_tracker_switched_on_is_monitoring(body: str) -> None:
    assert [kind for kind, _, _ in hooks(body)] == ["wandb"]
