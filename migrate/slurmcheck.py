"""Validation of generated sbatch scripts, by a real slurmctld when one answers.

``sbatch --test-only`` asks the controller whether it would accept the job
(partition, GRES, node counts, array and dependency syntax ...) and runs
nothing. It is used when a controller is reachable: ``SLURM_CONF`` is set and
``scontrol ping`` says it is up. Otherwise a static check runs: the ``#!``
line, every ``#SBATCH`` option known to the option table with a value its
parser accepts, and ``bash -n`` (parse only) on the script. Each result says
which method ran. Scripts are never executed.

Example::

    from migrate.slurmcheck import check_tree

    for result in check_tree("out/"):
        print(result.path, result.accepted, result.method, result.message)
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from migrate.diagnostics import ERROR, Collector
from migrate.translators.slurm import directives
from migrate.translators.slurm.options import OptionKind

TEST_ONLY = "sbatch --test-only"
STATIC = "static"
SCRIPT_SUFFIXES = (".sbatch",)
SCRONTAB_NAME = "scrontab"
_PING_TIMEOUT = 10
_SBATCH_TIMEOUT = 60
_REJECTING_CODES = frozenset(
    {"SLURM-NO-SHEBANG", "SLURM-UNKNOWN-OPTION", "SLURM-BAD-VALUE", "SLURM-MISSING-VALUE", "SLURM-TEMPLATED"}
)


@dataclass(frozen=True)
class CheckResult:
    path: str
    accepted: bool
    method: str  # TEST_ONLY or STATIC
    message: str

    def to_dict(self) -> dict[str, object]:
        return {"path": self.path, "accepted": self.accepted, "method": self.method, "message": self.message}


def controller_reachable(env: Mapping[str, str] | None = None) -> bool:
    """SLURM_CONF is set and ``scontrol ping`` reports the controller up."""
    environ = dict(os.environ if env is None else env)
    if not environ.get("SLURM_CONF") or shutil.which("scontrol", path=environ.get("PATH")) is None:
        return False
    try:
        done = subprocess.run(
            ["scontrol", "ping"],
            env=environ,
            capture_output=True,
            text=True,
            timeout=_PING_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0 and " is UP" in done.stdout


def check_script(
    path: str | Path,
    method: str = "auto",
    env: Mapping[str, str] | None = None,
    render: Callable[[str], str] | None = None,
) -> CheckResult:
    """One script: ``sbatch --test-only`` when ``method`` is "auto" and a controller answers, else static.

    ``render`` fills template values into the text both methods check. The
    user's file is never written: ``sbatch --test-only`` reads the filled text
    from a temporary copy, and the result names the user's file (filling keeps
    every line where it was).
    """
    if method == "auto":
        method = TEST_ONLY if controller_reachable(env) else STATIC
    if method not in (TEST_ONLY, STATIC):
        raise ValueError(f"unknown method {method!r}; expected auto, {TEST_ONLY!r} or {STATIC!r}")
    if method == TEST_ONLY and render is None:
        return _test_only(Path(path), env)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return CheckResult(str(path), False, method, f"cannot read the script: {exc}")
    if render:
        text = render(text)
    if method == TEST_ONLY:
        return _test_only_filled(Path(path), text, env)
    return check_text(text, str(path))


def check_tree(
    root: str | Path,
    method: str = "auto",
    env: Mapping[str, str] | None = None,
    render: Callable[[str], str] | None = None,
) -> list[CheckResult]:
    """Every ``*.sbatch`` script (and every ``scrontab`` file, statically) under ``root``, sorted by path.

    ``root`` may be one such file.
    """
    base = Path(root)
    if method == "auto":
        method = TEST_ONLY if controller_reachable(env) else STATIC
    results: list[CheckResult] = []
    files = [base] if base.is_file() else sorted(p for p in base.rglob("*") if p.is_file())
    for path in files:
        if path.suffix in SCRIPT_SUFFIXES:
            results.append(check_script(path, method, env, render))
        elif path.name == SCRONTAB_NAME:
            results.append(check_scrontab(path.read_text(encoding="utf-8"), str(path)))
    return results


def _test_only_filled(path: Path, text: str, env: Mapping[str, str] | None) -> CheckResult:
    """``sbatch --test-only`` on ``text`` in place of ``path``'s: a temporary copy, run from its folder."""
    with tempfile.TemporaryDirectory(prefix="migrate-validate-") as folder:
        copy = Path(folder) / path.name
        copy.write_text(text, encoding="utf-8")
        result = _test_only(copy, env, cwd=path.parent)
    # sbatch may name the script it read: name the user's file instead
    message = result.message.replace(str(copy), str(path))
    return CheckResult(str(path), result.accepted, result.method, message)


def _test_only(path: Path, env: Mapping[str, str] | None, cwd: Path | None = None) -> CheckResult:
    """``sbatch --test-only`` on ``path``, run from ``cwd`` (default: the script's folder, as users do)."""
    environ = dict(os.environ if env is None else env)
    try:
        done = subprocess.run(
            ["sbatch", "--test-only", str(path) if cwd else path.name],
            cwd=cwd or path.parent,
            env=environ,
            capture_output=True,
            text=True,
            timeout=_SBATCH_TIMEOUT,
            check=False,
        )
    except FileNotFoundError:
        return CheckResult(str(path), False, TEST_ONLY, "sbatch is not installed")
    except subprocess.TimeoutExpired:
        return CheckResult(
            str(path), False, TEST_ONLY, f"sbatch --test-only did not answer in {_SBATCH_TIMEOUT} s"
        )
    message = " ".join((done.stderr + done.stdout).split())
    return CheckResult(str(path), done.returncode == 0, TEST_ONLY, message)


def check_text(text: str, name: str = "<script>") -> CheckResult:
    """The static check of one batch script's text."""
    problems = header_problems(text, name)
    if not problems:
        problems = _bash_syntax(text)
    if problems:
        return CheckResult(name, False, STATIC, "; ".join(problems))
    return CheckResult(name, True, STATIC, "shebang, #SBATCH options and bash syntax are valid")


def header_problems(text: str, name: str = "<script>") -> list[str]:
    """What sbatch would refuse in the ``#SBATCH`` header: no ``#!``, unknown options, bad values."""
    lines = directives.split_lines(text)
    diags = Collector(name)
    header = directives.read_header(lines, diags)
    problems = [
        f"line {d.line}: {d.message}"
        for d in diags.items
        if d.code in _REJECTING_CODES or d.severity == ERROR
    ]
    problems += [f"line {u.line}: unknown option {u.spelled}" for u in header.unknown]
    problems += _value_problems(header.settings)
    return problems


def _value_problems(settings: tuple[directives.Setting, ...]) -> list[str]:
    problems = []
    for setting in settings:
        option = setting.option
        if setting.value is None or setting.dynamic or option.kind is OptionKind.FLAG:
            continue
        try:
            option.parse(setting.value)
        except ValueError as exc:
            problems.append(f"line {setting.line}: {setting.spelled}={setting.value}: {exc}")
    return problems


def _bash_syntax(text: str) -> list[str]:
    bash = shutil.which("bash")
    if bash is None:
        return []
    try:
        done = subprocess.run(
            [bash, "-n"], input=text, capture_output=True, text=True, timeout=_PING_TIMEOUT, check=False
        )
    except subprocess.TimeoutExpired:
        return ["bash -n did not finish"]
    if done.returncode == 0:
        return []
    return [" ".join(done.stderr.split()) or "bash -n failed"]


def check_scrontab(text: str, name: str = "<scrontab>") -> CheckResult:
    """A scrontab file: its ``#SCRON`` options, statically (scrontab has no dry run)."""
    diags = Collector(name)
    words: list[directives.Word] = []
    problems = []
    for number, line in enumerate(directives.split_lines(text), start=1):
        if line.startswith("#SCRON"):
            found, error, _ = directives.tokenize(line[len("#SCRON") :], number)
            if error:
                problems.append(f"line {number}: {error}")
            words += found
    settings, unknown = directives.parse_words(words, diags)
    problems += [f"line {u.line}: unknown option {u.spelled}" for u in unknown]
    problems += [f"line {d.line}: {d.message}" for d in diags.items if d.severity == ERROR]
    problems += _value_problems(tuple(settings))
    if problems:
        return CheckResult(name, False, STATIC, "; ".join(problems))
    return CheckResult(name, True, STATIC, "#SCRON options are valid")


__all__ = [
    "STATIC",
    "TEST_ONLY",
    "CheckResult",
    "check_script",
    "check_scrontab",
    "check_text",
    "check_tree",
    "controller_reachable",
    "header_problems",
]
