"""Every error a user can cause: one line saying what is wrong and what to do, the right exit code.

Exit 2 for usage (bad path, bad config, unknown flavor or target, unwritable or
existing output, bad option values), 1 for findings under ``--strict``, 130
for Ctrl-C; never a traceback. Runs go through ``migrate.cli.main`` in a
child process (``tests/bounded.py``), or in this process where a failure must
be simulated (as root, permissions stop nothing).
"""

from __future__ import annotations

import builtins
import contextlib
import errno
import io
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from bounded import Probe
from conftest import REPO

from migrate import cli
from migrate.outputs import STAGING_PREFIX, OutputTree

SBATCH = "#!/bin/bash\n#SBATCH --job-name=demo\n#SBATCH --nodes=2\n#SBATCH --frobnicate=3\nsrun hostname\n"
# What a hint can start with: the message must say what to do, not only what is wrong.
DO = ("use ", "choose ", "check ", "see ", "fix ", "give ", "free ", "run ", "pass ", "remove ", "expected ")


@pytest.fixture(scope="module")
def probe() -> Iterator[Probe]:
    p = Probe()
    yield p
    p.close()


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "jobs").mkdir()
    (tmp_path / "jobs" / "demo.sbatch").write_text(SBATCH)
    return tmp_path


# Commands that read a site configuration name it on stderr before they end.
CONFIG_NOTE = "site configuration: "


def one_line(stderr: str, *what: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip() and not line.startswith(CONFIG_NOTE)]
    assert len(lines) == 1, f"expected one line, got {stderr!r}"
    (line,) = lines
    assert line.startswith("migrate: "), line
    assert "Traceback" not in stderr
    for word in what:
        assert word in line, f"{word!r} not in {line!r}"
    assert any(hint in line for hint in DO), f"no hint of what to do in {line!r}"
    return line


def cli_error(probe: Probe, *argv: str, code: int = 2, what: tuple[str, ...] = ()) -> str:
    run = probe.cli(*argv)
    assert run.exit_code == code, (run.exit_code, run.stderr)
    return one_line(run.stderr, *what)


def test_bad_path(probe: Probe, tree: Path) -> None:
    for command in (["scan"], ["plan", "--to", "kubernetes"], ["graph", "--out", str(tree / "o")]):
        cli_error(probe, *command, str(tree / "nope"), what=("no such file or folder", "nope"))
    cli_error(probe, "validate", str(tree / "nope"), what=("no such file or folder",))


@pytest.mark.parametrize(
    ("content", "what"),
    [
        ("partitions: [1\n", "YAML error at line 2"),
        ("partitions: 3\n", "partitions: expected a mapping"),
        ("frobnicate: 1\n", "frobnicate: unknown key"),
        ("defaults: {image: [1, 2]}\n", "defaults.image"),
        (b"site: caf\xe9\n", "not valid UTF-8"),
    ],
    ids=["yaml-error", "wrong-type", "unknown-key", "wrong-nested-type", "not-utf8"],
)
def test_bad_site_config(probe: Probe, tree: Path, content: str | bytes, what: str) -> None:
    config = tree / "site.yaml"
    if isinstance(content, bytes):
        config.write_bytes(content)
    else:
        config.write_text(content)
    for command in ("plan", "translate"):
        argv = [command, str(tree / "jobs"), "--to", "kubernetes", "--config", str(config)]
        if command == "translate":
            argv += ["--out", str(tree / "out")]
        cli_error(probe, *argv, what=("bad site configuration", what, "--config"))
    assert not (tree / "out").exists()


def test_site_config_at_the_root_is_checked_too(probe: Probe, tree: Path) -> None:
    (tree / "jobs" / "migrate.yaml").write_text("partitions: 3\n")
    cli_error(probe, "plan", str(tree / "jobs"), "--to", "slurm", what=("bad site configuration",))


def test_missing_or_folder_site_config(probe: Probe, tree: Path) -> None:
    jobs = str(tree / "jobs")
    cli_error(probe, "plan", jobs, "--to", "kubernetes", "-c", str(tree / "no.yaml"), what=("no such site",))
    cli_error(probe, "plan", jobs, "--to", "kubernetes", "-c", str(tree), what=("not a file",))


def test_unknown_flavor_and_target(probe: Probe, tree: Path) -> None:
    jobs, out = str(tree / "jobs"), str(tree / "out")
    cli_error(
        probe, "translate", jobs, "--to", "kubernetes", "--out", out, "--flavor", "swarm", what=("swarm",)
    )
    cli_error(probe, "translate", jobs, "--to", "mars", "--out", out, what=("--to", "mars"))
    cli_error(probe, "plan", jobs, "--to", "nomad", what=("--to", "nomad"))
    assert not (tree / "out").exists()


def test_options_of_the_other_direction(probe: Probe, tree: Path) -> None:
    """--flavor picks the Kubernetes object, --container-runtime how sbatch scripts run containers."""
    jobs, out = str(tree / "jobs"), str(tree / "out")
    towards_slurm = ("--flavor", "--to slurm", "--container-runtime")
    towards_kubernetes = ("--container-runtime", "--to kubernetes", "--flavor")
    cli_error(probe, "translate", jobs, "--to", "slurm", "--out", out, "--flavor", "none", what=towards_slurm)
    cli_error(probe, "translate", jobs, "--to", "slurm", "--out", out, "--flavor", "auto", what=towards_slurm)
    argv = ("translate", jobs, "--to", "kubernetes", "--out", out, "--container-runtime", "pyxis")
    cli_error(probe, *argv, what=towards_kubernetes)
    argv = ("report", jobs, "--to", "slurm", "--translate", "--out", out, "--flavor", "jobset")
    cli_error(probe, *argv, what=towards_slurm)
    argv = ("report", jobs, "--to", "kubernetes", "--out", out, "--container-runtime", "none")
    cli_error(probe, *argv, what=towards_kubernetes)
    argv = ("translate", jobs, "--to", "slurm", "--out", out, "--workflow", "jobflow")
    cli_error(probe, *argv, what=("--workflow", "--to slurm", "--dependency"))
    argv = ("report", jobs, "--to", "slurm", "--translate", "--out", out, "--workflow", "argo")
    cli_error(probe, *argv, what=("--workflow", "--to slurm", "--dependency"))
    assert not (tree / "out").exists()


def test_workflow_names(probe: Probe, tree: Path) -> None:
    """An unknown engine, and one this installation has no writer for, are usage errors."""
    jobs, out = str(tree / "jobs"), str(tree / "out")
    argv = ("translate", jobs, "--to", "kubernetes", "--out", out)
    cli_error(probe, *argv, "--workflow", "airflow", what=("unknown --workflow", "argo, jobflow, script"))
    argv = ("report", jobs, "--to", "kubernetes", "--translate", "--out", out, "--workflow", "airflow")
    cli_error(probe, *argv, what=("unknown --workflow", "argo, jobflow, script"))
    assert not (tree / "out").exists()


def test_bad_option_values_and_missing_arguments(probe: Probe, tree: Path) -> None:
    jobs = str(tree / "jobs")
    cli_error(probe, "scan", "--max-bytes", "0", jobs, what=("--max-bytes",))
    cli_error(probe, "scan", "--max-bytes", "lots", jobs, what=("--max-bytes",))
    cli_error(probe, "scan", "--format", "xml", jobs, what=("--format",))
    cli_error(probe, "translate", jobs, "--out", str(tree / "o"), what=("--to",))
    cli_error(probe, "scan", what=("PATHS",))
    cli_error(probe, "frobnicate", what=("frobnicate",))
    cli_error(probe, "scan", "--frob", jobs, what=("--frob",))


def test_unwritable_output(probe: Probe, tree: Path) -> None:
    jobs = str(tree / "jobs")
    (tree / "afile").write_text("not a folder\n")
    # as root a read-only folder stops nothing: a path under a regular file cannot be written by anyone
    for out in (tree / "afile", tree / "afile" / "sub" / "deeper"):
        for argv in (
            ["translate", jobs, "--to", "kubernetes", "--out", str(out)],
            ["plan", jobs, "--to", "kubernetes", "--out", str(out)],
            ["graph", jobs, "--out", str(out)],
            ["init", jobs, "--out", str(out / "migrate.yaml")],
        ):
            cli_error(probe, *argv, what=("afile", "not a folder", "--out"))
    assert (tree / "afile").read_text() == "not a folder\n"
    assert [p.name for p in tree.iterdir() if p.name.startswith(STAGING_PREFIX)] == []


def test_existing_output_needs_force(probe: Probe, tree: Path) -> None:
    jobs, out = str(tree / "jobs"), tree / "out"
    out.mkdir()
    (out / "plan.json").write_text("mine\n")
    cli_error(probe, "plan", jobs, "--to", "kubernetes", "--out", str(out), what=("plan.json", "--force"))
    assert (out / "plan.json").read_text() == "mine\n"
    first = probe.cli("translate", jobs, "--to", "kubernetes", "--out", str(out))
    assert first.exit_code == 0, first.stderr
    cli_error(probe, "translate", jobs, "--to", "kubernetes", "--out", str(out), what=("--force",))
    (manifest,) = (out / "demo").glob("*.yaml")
    (out / "demo").rename(out / "moved")
    (out / "demo").mkdir()
    manifest.mkdir()  # a folder where a file must go: even --force stops
    argv = ("translate", jobs, "--to", "kubernetes", "--out", str(out), "--force")
    cli_error(probe, *argv, what=(manifest.name, "folder"))
    assert manifest.is_dir() and (out / "moved").is_dir()


def test_findings_under_strict_exit_1(probe: Probe, tree: Path) -> None:
    jobs = str(tree / "jobs")
    assert probe.cli("scan", jobs).exit_code == 0
    assert probe.cli("scan", "--strict", jobs).exit_code == 1  # SLURM-UNKNOWN-OPTION is an error
    assert probe.cli("scan", "--strict", "--format", "json", jobs).exit_code == 1
    (tree / "clean").mkdir()
    (tree / "clean" / "ok.sbatch").write_text("#!/bin/bash\n#SBATCH -N 1\nsrun hostname\n")
    assert probe.cli("scan", "--strict", str(tree / "clean")).exit_code == 0
    (tree / "mail").mkdir()
    (tree / "mail" / "m.sbatch").write_text("#!/bin/bash\n#SBATCH --mail-type=END\nsrun hostname\n")
    run = probe.cli(
        "translate", str(tree / "mail"), "--to", "kubernetes", "--out", str(tree / "o"), "--strict"
    )
    assert run.exit_code == 1
    one_line(run.stderr, "--strict", "dropped")


# ---------------------------------------------------------------------------
# failures that need simulating: in this process


def run_here(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *argv: str
) -> tuple[int, str]:
    monkeypatch.setattr(sys, "argv", ["migrate", *argv])
    with pytest.raises(SystemExit) as exit_info:
        cli.main()
    code = exit_info.value.code
    return (code if isinstance(code, int) else 0), capsys.readouterr().err


def test_unreadable_site_config(
    tree: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tree / "site.yaml"
    config.write_text("site: x\n")
    real_open = builtins.open

    def refusing(file: Any, *args: Any, **kwargs: Any) -> Any:
        if str(file) == str(config):
            raise PermissionError(errno.EACCES, "Permission denied", str(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", refusing)
    monkeypatch.setattr(io, "open", refusing)  # what pathlib opens with
    code, stderr = run_here(
        monkeypatch, capsys, "plan", str(tree / "jobs"), "--to", "kubernetes", "-c", str(config)
    )
    assert code == 2
    one_line(stderr, "Permission denied", "--config")


def test_disk_full_keeps_the_old_files(
    tree: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tree / "out"
    argv = ("translate", str(tree / "jobs"), "--to", "kubernetes", "--out", str(out))
    assert run_here(monkeypatch, capsys, *argv)[0] == 0
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    (tree / "jobs" / "demo.sbatch").write_text(SBATCH.replace("--nodes=2", "--nodes=3"))
    written: list[str] = []
    real_write = OutputTree._write_file

    def filling(path: str, content: str, mode: int) -> None:
        if len(written) == 2:
            raise OSError(errno.ENOSPC, "No space left on device", path)
        written.append(path)
        real_write(path, content, mode)

    monkeypatch.setattr(OutputTree, "_write_file", staticmethod(filling))
    code, stderr = run_here(monkeypatch, capsys, *argv, "--force")
    assert code == 2
    one_line(stderr, "No space left on device", str(out))
    after = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert after == before
    assert [p for p in tree.rglob(f"{STAGING_PREFIX}*")] == []


# ---------------------------------------------------------------------------
# Ctrl-C


# The command as the console script starts it, with its 50th file written only after saying
# "paused" on stdout and reading a line of stdin, which the test writes once it has sent Ctrl-C:
# the signal lands while the files are being written, however loaded the machine is.
_PAUSED_TRANSLATE = """
import sys
import signal
# SIGINT as at a terminal: a shell that started this run in the background ignored it for its children
signal.signal(signal.SIGINT, signal.default_int_handler)
from migrate.outputs import OutputTree
write = OutputTree._write_file
written = 0
def paused(path, content, mode):
    global written
    written += 1
    if written == 50:
        print("paused", flush=True)
        sys.stdin.readline()
    write(path, content, mode)
OutputTree._write_file = staticmethod(paused)
from migrate.entrypoint import main
main()
"""


def test_ctrl_c_is_exit_130_and_one_line(tmp_path: Path) -> None:
    jobs = tmp_path / "jobs"
    jobs.mkdir()
    for i in range(150):  # under the size at which scans start worker processes
        (jobs / f"job{i:03d}.sbatch").write_text(SBATCH.replace("demo", f"demo{i}") + "echo pad\n" * 300)
    out = tmp_path / "out"
    command = ["translate", str(jobs), "--to", "kubernetes", "--out", str(out)]
    proc = subprocess.Popen(
        [sys.executable, "-c", _PAUSED_TRANSLATE, *command],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
        start_new_session=True,  # Ctrl-C at a terminal signals the whole process group
    )
    assert proc.stdout is not None
    while (line := proc.stdout.readline()) not in ("paused\n", ""):
        pass
    assert line == "paused\n", "the command ended before it wrote its 50th file"
    os.killpg(proc.pid, signal.SIGINT)
    _, stderr = proc.communicate(input="sent\n", timeout=60)
    assert proc.returncode == 130, stderr
    one_line(stderr, "interrupted")
    assert not out.exists()  # killed while writing: nothing of it
    assert [p for p in tmp_path.iterdir() if p.name.startswith(STAGING_PREFIX)] == []


def _loading_argv() -> list[str]:
    migrate = Path(sys.executable).with_name("migrate")
    if migrate.exists():
        return [str(migrate)]
    return [sys.executable, "-c", "from migrate.entrypoint import main; main()"]


def test_ctrl_c_while_the_command_line_loads_is_one_line(tmp_path: Path) -> None:
    """A Ctrl-C right after start, while the modules are still being imported."""
    jobs = tmp_path / "jobs"
    jobs.mkdir()
    for i in range(20):
        (jobs / f"job{i:02d}.sbatch").write_text(SBATCH.replace("demo", f"demo{i}"))
    # Python reports each import on stderr as it completes: the signal is sent once typer
    # is loaded (the interpreter's own start-up is behind, the command line's loading is not).
    env = {**os.environ, "PYTHONPROFILEIMPORTTIME": "1"}
    interrupted = 0
    for delay in (0.0, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2):
        proc = subprocess.Popen(
            [*_loading_argv(), "scan", "--no-cache", str(jobs)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            cwd=REPO,
            env=env,
            start_new_session=True,
        )
        assert proc.stderr is not None
        lines: list[str] = []
        for line in proc.stderr:
            lines.append(line)
            if "typer" in line:
                break
        time.sleep(delay)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGINT)
        lines.extend(proc.stderr)
        proc.wait(timeout=60)
        stderr = "".join(line for line in lines if not line.startswith("import time:"))
        assert "Traceback" not in stderr, stderr
        if proc.returncode == 0:
            continue  # finished before the signal landed
        assert proc.returncode == 130, (delay, proc.returncode, stderr)
        one_line(stderr, "interrupted")
        interrupted += 1
    assert interrupted, "every run finished before Ctrl-C could be sent"
