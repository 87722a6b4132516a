"""The step service of the shims (migrate-stepd), run with perl on this machine, without pods.

It is what lets the batch pod's srun start steps in the other pods: output and
exit codes come back, the environment and working folder go along (the serving
pod keeps its own identity), signals reach the tasks, and a release ends the
service with the job's exit code. Only a request that carries the job's token
(MIGRATE_STEP_TOKEN, shared by its pods) runs anything.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from migrate.translators.kubernetes import shims

pytestmark = pytest.mark.skipif(shutil.which("perl") is None, reason="perl runs the step service")


TOKEN = "9f2c4e1a7b3d5f60"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def stepd(tmp_path: Path) -> Iterator[tuple[Path, dict[str, str], subprocess.Popen[str]]]:
    program = tmp_path / "migrate-stepd"
    program.write_text(shims.STEPD)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "MIGRATE_STEP_PORT": str(_free_port()),
        "MIGRATE_STEP_WAIT": "10",
        "MIGRATE_STEP_TOKEN": TOKEN,
    }
    scratch = tmp_path / "scratch"  # the serving pod's TMPDIR: the stdin of a step goes there
    scratch.mkdir()
    server_env = {**env, "SLURMD_NODENAME": "pod-1", "MIGRATE_NODE_INDEX": "1", "HOSTNAME": "pod-1"}
    server_env["TMPDIR"] = str(scratch)
    server = subprocess.Popen(
        ["perl", str(program), "serve"],
        env=server_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        yield program, env, server
    finally:
        if server.poll() is None:
            server.kill()
        server.wait(timeout=10)


def _run(
    program: Path, env: dict[str, str], *argv: str, cwd: Path, **extra: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["perl", str(program), "run", "127.0.0.1", *argv],
        env={**env, **extra},
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=30,
    )


def test_a_step_runs_its_tasks_there_with_the_batch_env_and_its_own_identity(
    stepd: tuple[Path, dict[str, str], subprocess.Popen[str]], tmp_path: Path
) -> None:
    program, env, _ = stepd
    script = (
        'echo "$SLURM_PROCID $SLURM_LOCALID $SLURMD_NODENAME $MIGRATE_NODE_INDEX $FROM_BATCH $PWD"; '
        "echo err >&2"
    )
    done = _run(
        program, env, "4", "2", "bash", "-c", script,
        cwd=tmp_path, FROM_BATCH="exported", SLURMD_NODENAME="pod-0", MIGRATE_NODE_INDEX="0",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert sorted(done.stdout.splitlines()) == [
        f"4 0 pod-1 1 exported {tmp_path}",
        f"5 1 pod-1 1 exported {tmp_path}",
    ]
    assert done.stderr.splitlines() == ["err", "err"]


def test_exit_codes_signals_and_release(
    stepd: tuple[Path, dict[str, str], subprocess.Popen[str]], tmp_path: Path
) -> None:
    program, env, server = stepd
    assert _run(program, env, "0", "1", "bash", "-c", "exit 3", cwd=tmp_path).returncode == 3
    assert _run(program, env, "0", "1", "/no/such/program", cwd=tmp_path).returncode == 127
    waiting = subprocess.Popen(
        ["perl", str(program), "run", "127.0.0.1", "0", "1", "sleep", "30"], env=env, cwd=tmp_path
    )
    time.sleep(1)
    waiting.send_signal(signal.SIGTERM)  # srun passes it on to the tasks
    assert waiting.wait(timeout=20) == 128 + signal.SIGTERM
    released = subprocess.run(["perl", str(program), "release", "127.0.0.1", "7"], env=env, timeout=30)
    assert released.returncode == 0
    assert server.wait(timeout=20) == 7  # the serving pod ends with the job's exit code


def test_a_step_for_a_host_that_never_serves_fails_after_the_wait(tmp_path: Path) -> None:
    program = tmp_path / "migrate-stepd"
    program.write_text(shims.STEPD)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "MIGRATE_STEP_PORT": str(_free_port())}
    began = time.monotonic()
    done = subprocess.run(
        ["perl", str(program), "run", "no-such-host.invalid", "0", "1", "true"],
        env={**env, "MIGRATE_STEP_WAIT": "2"},
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 1 and "does not serve job steps" in done.stderr
    assert time.monotonic() - began >= 1  # it kept retrying the name for the wait (whole seconds)


def test_sigterm_to_the_service_reaches_the_running_tasks(
    stepd: tuple[Path, dict[str, str], subprocess.Popen[str]], tmp_path: Path
) -> None:
    program, env, server = stepd
    marker = tmp_path / "got-term"
    script = f"trap 'touch {marker}; exit 0' TERM; sleep 30 & wait"
    argv = ["perl", str(program), "run", "127.0.0.1", "0", "1", "bash", "-c", script]
    step = subprocess.Popen(argv, env=env)
    time.sleep(1)
    server.send_signal(signal.SIGTERM)  # the kubelet, when the pod is deleted
    assert step.wait(timeout=20) == 0  # the task caught it and ended well
    assert marker.exists()
    assert server.poll() is None  # the service stays until the release (or SIGKILL)
    subprocess.run(["perl", str(program), "release", "127.0.0.1", "0"], env=env, timeout=30, check=True)
    assert server.wait(timeout=20) == 0


@pytest.mark.parametrize("token", [None, "", "9f2c4e1a7b3d5f61", TOKEN + "0", TOKEN[:-1]])
def test_a_step_without_the_jobs_token_is_refused_and_runs_nothing(
    stepd: tuple[Path, dict[str, str], subprocess.Popen[str]], tmp_path: Path, token: str | None
) -> None:
    program, env, server = stepd
    marker = tmp_path / "ran"
    client = {k: v for k, v in env.items() if k != "MIGRATE_STEP_TOKEN"}
    if token is not None:
        client["MIGRATE_STEP_TOKEN"] = token
    done = subprocess.run(
        ["perl", str(program), "run", "127.0.0.1", "0", "1", "touch", str(marker)],
        env=client, cwd=tmp_path, capture_output=True, text=True, timeout=30,
    )  # fmt: skip
    assert done.returncode == 1
    assert "refused the request" in done.stderr and "MIGRATE_STEP_TOKEN" in done.stderr
    assert not marker.exists()
    released = subprocess.run(
        ["perl", str(program), "release", "127.0.0.1", "5"], env=client, capture_output=True, text=True,
        timeout=30,
    )  # fmt: skip
    assert released.returncode == 1 and "refused the request" in released.stderr
    time.sleep(0.3)
    assert server.poll() is None  # a refused release ends nothing
    assert _run(program, env, "0", "1", "touch", str(marker), cwd=tmp_path).returncode == 0
    assert marker.exists()  # the job's own token still works


def test_a_service_without_a_token_refuses_every_step(tmp_path: Path) -> None:
    """Fail closed: a pod whose Secret gave no token starts nothing, and says why."""
    program = tmp_path / "migrate-stepd"
    program.write_text(shims.STEPD)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "MIGRATE_STEP_PORT": str(_free_port())}
    server = subprocess.Popen(
        ["perl", str(program), "serve"], env={**env, "MIGRATE_STEP_TOKEN": ""},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        marker = tmp_path / "ran"
        for token in ("", TOKEN):
            done = _run(
                program, {**env, "MIGRATE_STEP_TOKEN": token}, "0", "1", "touch", str(marker), cwd=tmp_path
            )
            assert done.returncode == 1 and "has no token" in done.stderr
        assert not marker.exists()
    finally:
        server.kill()
        _, err = server.communicate(timeout=10)
    assert "MIGRATE_STEP_TOKEN is empty" in err and "refused a request from 127.0.0.1" in err


def test_a_request_framed_without_a_token_gets_the_refusal_framed(
    stepd: tuple[Path, dict[str, str], subprocess.Popen[str]], tmp_path: Path
) -> None:
    """A request as it was framed before tokens (R<len>, then Q<rc>) runs nothing and ends nothing."""
    program, env, server = stepd
    marker = tmp_path / "ran"
    payload = "\0".join(["run", str(tmp_path), "0", "1", "0", "touch", str(marker)]).encode()
    port = int(env["MIGRATE_STEP_PORT"])
    assert _run(program, env, "0", "1", "true", cwd=tmp_path).returncode == 0  # it serves by now
    for request in (b"R%d\n" % len(payload) + payload, b"Q3\n"):
        with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
            s.sendall(request)
            answer = b""
            while chunk := s.recv(65536):
                answer += chunk
        head, _, rest = answer.partition(b"\n")
        assert head.startswith(b"E") and rest[int(head[1:]) :] == b"X1\n"
        assert b"carries no token" in rest
    assert not marker.exists() and server.poll() is None


def test_srun_stdin_reaches_every_task_there_or_the_one_it_names(
    stepd: tuple[Path, dict[str, str], subprocess.Popen[str]], tmp_path: Path
) -> None:
    """srun gives its stdin to all tasks by default (--input=all), to task N with --input=N: a
    here-document fed to `srun bash -s` runs on every node, as under Slurm."""
    program, env, _ = stepd
    given = tmp_path / "stdin"
    given.write_text('echo "task $SLURM_PROCID read this"\n')
    with given.open() as stdin:
        done = subprocess.run(
            ["perl", str(program), "run", "127.0.0.1", "2", "2", "bash", "-s"],
            env=env, cwd=tmp_path, stdin=stdin, capture_output=True, text=True, timeout=30,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert sorted(done.stdout.splitlines()) == ["task 2 read this", "task 3 read this"]
    with given.open() as stdin:
        done = subprocess.run(
            ["perl", str(program), "run", "127.0.0.1", "2", "2", "bash", "-s"],
            env={**env, "MIGRATE_STDIN_TASK": "3"}, cwd=tmp_path, stdin=stdin, capture_output=True,
            text=True, timeout=30,
        )  # fmt: skip
    assert done.stdout.splitlines() == ["task 3 read this"], done.stderr
    assert list((tmp_path / "scratch").iterdir()) == []  # each step's copy of srun's stdin is gone
    assert _run(program, env, "0", "1", "cat", cwd=tmp_path).stdout == ""  # no stdin: nothing to read
