"""Run a scan in a child process and measure it: wall and CPU time, peak RSS, exit status.

``Probe`` starts one helper process that imports ``migrate`` once; each
request forks a child from it, so that each measured run pays no interpreter
start-up and its numbers are its own (``os.wait4`` gives the rusage of that
one child, the per-child form of ``getrusage(RUSAGE_CHILDREN)``). The child
runs under an address-space limit and an alarm, so that an input that would
exhaust the machine ends the child, not the test run.

Modes: ``scan`` calls ``migrate.scan.scan`` and writes its JSON; ``file`` reads
one path as if the walk had listed it as a regular file; ``cli`` runs
``migrate.cli.main`` with the given arguments, stdout to a file.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ADDRESS_SPACE_LIMIT = 3 << 30  # a runaway child fails an allocation long before the machine does
CHILD_TIMEOUT_S = 30


@dataclass(frozen=True)
class Run:
    elapsed_s: float
    cpu_s: float  # the child's own user and system time: what a loaded machine does not inflate
    max_rss_mb: float
    exit_code: int | None  # None when a signal ended the child
    signal: int | None
    stdout: str
    stderr: str

    def json(self) -> Any:
        return json.loads(self.stdout)


def _child(request: dict[str, Any], out_path: str, err_path: str) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE_LIMIT, ADDRESS_SPACE_LIMIT))
    signal.alarm(int(request.get("timeout", CHILD_TIMEOUT_S)))
    null = os.open(os.devnull, os.O_RDONLY)  # stdin is the helper's request pipe: not the child's to read
    os.dup2(null, 0)
    if request.get("cwd"):
        os.chdir(request["cwd"])
    os.environ.update(request.get("env") or {})
    out_fd = os.open(out_path, os.O_WRONLY | os.O_TRUNC)
    err_fd = os.open(err_path, os.O_WRONLY | os.O_TRUNC)
    os.dup2(out_fd, 1)
    os.dup2(err_fd, 2)
    code = 0
    try:
        if request["mode"] == "scan":
            from migrate.scan import results as scan_results
            from migrate.scan import scanner

            options = scan_results.ScanOptions(
                max_bytes=request.get("max_bytes", scan_results.DEFAULT_MAX_BYTES)
            )
            result = scanner.scan(request["paths"], options)
            with os.fdopen(1, "w", closefd=False) as fh:
                json.dump(result.to_dict(), fh)
        elif request["mode"] == "file":  # one file as the walk listed it, whatever it has become since
            from migrate.scan import files as scan_files
            from migrate.scan.discover import Candidate

            path = request["paths"][0]
            one = scan_files.scan_file(Candidate(path, path, request.get("size", 100)))
            with os.fdopen(1, "w", closefd=False) as fh:
                json.dump(one.to_dict() if one else None, fh)
        else:
            from migrate import cli

            sys.argv = ["migrate", *request["argv"]]
            try:
                cli.main()
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:
        import traceback

        traceback.print_exc()
        code = 70
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(code)


def serve() -> None:
    """The helper process: one JSON request per line on stdin, one JSON answer per line on stdout."""
    import time

    # imported once, before any fork: what the commands import when they run
    from migrate import api, cli
    from migrate.scan import scanner

    del api, cli, scanner

    answers = os.fdopen(os.dup(1), "w")
    for line in sys.stdin:
        request = json.loads(line)
        out_path, err_path = request["stdout"], request["stderr"]
        start = time.monotonic()
        pid = os.fork()
        if pid == 0:
            _child(request, out_path, err_path)
        _, status, usage = os.wait4(pid, 0)
        elapsed = time.monotonic() - start
        answer = {
            "elapsed_s": elapsed,
            "cpu_s": usage.ru_utime + usage.ru_stime,
            "max_rss_mb": usage.ru_maxrss / 1024,
            "exit_code": os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else None,
            "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
        }
        answers.write(json.dumps(answer) + "\n")
        answers.flush()


class Probe:
    def __init__(self) -> None:
        self.tmp = tempfile.mkdtemp(prefix="migrate-probe-")
        self.proc = subprocess.Popen(
            [sys.executable, "-c", "import bounded; bounded.serve()"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=os.getcwd(),
            env={**os.environ, "PYTHONPATH": str(Path(__file__).parent)},
        )
        self.count = 0

    def run(self, request: dict[str, Any]) -> Run:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.count += 1
        out = os.path.join(self.tmp, f"{self.count}.out")
        err = os.path.join(self.tmp, f"{self.count}.err")
        Path(out).touch()
        Path(err).touch()
        self.proc.stdin.write(json.dumps({**request, "stdout": out, "stderr": err}) + "\n")
        self.proc.stdin.flush()
        answer = json.loads(self.proc.stdout.readline())
        run = Run(
            answer["elapsed_s"],
            answer["cpu_s"],
            answer["max_rss_mb"],
            answer["exit_code"],
            answer["signal"],
            Path(out).read_text(encoding="utf-8", errors="replace"),
            Path(err).read_text(encoding="utf-8", errors="replace"),
        )
        os.unlink(out)
        os.unlink(err)
        return run

    def scan(self, paths: list[str], max_bytes: int | None = None, timeout: int = CHILD_TIMEOUT_S) -> Run:
        request: dict[str, Any] = {"mode": "scan", "paths": paths, "timeout": timeout}
        if max_bytes is not None:
            request["max_bytes"] = max_bytes
        return self.run(request)

    def cli(
        self,
        *argv: str,
        timeout: int = CHILD_TIMEOUT_S,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
    ) -> Run:
        return self.run({"mode": "cli", "argv": list(argv), "timeout": timeout, "cwd": cwd, "env": env})

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(timeout=30)
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        for name in os.listdir(self.tmp):
            os.unlink(os.path.join(self.tmp, name))
        os.rmdir(self.tmp)
