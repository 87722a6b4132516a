"""What the command line tells about a real repository: which configuration, what fell back,
what was not translated, and output that stays readable at a terminal and whole when piped."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import subprocess
import sys
from pathlib import Path

import cli_runner
import pytest
from conftest import REPO

SITE = REPO / "corpus" / "sample-site"
ENTRY = [sys.executable, "-c", "from migrate.cli import main; main()"]
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")

SBATCH = (
    "#!/bin/bash\n#SBATCH --job-name={name}\n#SBATCH --nodes={nodes}\n#SBATCH --time=01:00:00\n"
    "{extra}srun {cmd}\n"
)
WRAPPER = (
    "#!/bin/bash\nfirst=$(sbatch --parsable prep.sbatch)\nsbatch --dependency=afterok:$first train.sbatch\n"
)
SALLOC = "#!/bin/bash\nsalloc --nodes=1 --gres=gpu:1 --time=02:00:00\n"
MANIFEST = (
    "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: hello\nspec:\n  template:\n    spec:\n"
    "      restartPolicy: Never\n      containers:\n      - name: c\n        image: busybox:1.36\n"
    "        command: [echo, hi]\n"
)
CONFIGMAP = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  a: b\n"


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return cli_runner.run(*args, cwd=cwd)


def run_tty(*args: str, cwd: Path, columns: int = 100) -> str:
    """The CLI at a terminal of ``columns`` columns: stdout and stderr both on the pseudo-terminal."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: a terminal of the given width
        os.chdir(cwd)
        env = {**os.environ, "COLUMNS": str(columns), "LINES": "60", "TERM": "xterm", "NO_COLOR": "1"}
        os.execve(sys.executable, [*ENTRY, *args], env)
    chunks: list[bytes] = []
    while True:
        ready, _, _ = select.select([fd], [], [], 120)
        if not ready:
            break
        try:
            data = os.read(fd, 65536)
        except OSError:  # the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(fd)
    os.waitpid(pid, 0)
    text = ANSI.sub("", b"".join(chunks).decode("utf-8", "replace"))
    return text.replace("\r\n", "\n").replace("\r", "\n")  # a progress line redrawn is a line


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def sbatch(name: str, nodes: int = 1, cmd: str = "python train.py", extra: str = "") -> str:
    return SBATCH.format(name=name, nodes=nodes, cmd=cmd, extra=extra)


# ---------------------------------------------------------------------------
# Which configuration


SITE_YAML = "site: lab\ndefaults:\n  image: registry.lab.example/base:7\n"


def test_translate_of_one_file_reads_the_site_config_above_it(tmp_path: Path) -> None:
    write(tmp_path / "site" / "migrate.yaml", SITE_YAML)
    job = write(tmp_path / "site" / "jobs" / "deep" / "train.sbatch", sbatch("train"))
    res = run("translate", str(job), "--to", "kubernetes", "--out", str(tmp_path / "out"))
    assert res.returncode == 0, res.stderr
    assert "registry.lab.example/base:7" in (tmp_path / "out" / "train" / "job.yaml").read_text()
    assert f"site configuration: {tmp_path / 'site' / 'migrate.yaml'}" in res.stderr


def test_the_search_for_a_site_config_stops_at_the_repository_root(tmp_path: Path) -> None:
    write(tmp_path / "migrate.yaml", SITE_YAML)
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    job = write(tmp_path / "repo" / "jobs" / "train.sbatch", sbatch("train"))
    res = run("translate", str(job), "--to", "kubernetes", "--out", str(tmp_path / "out"))
    assert res.returncode == 0, res.stderr
    assert "registry.lab.example" not in (tmp_path / "out" / "train" / "job.yaml").read_text()
    assert "site configuration: defaults" in res.stderr


def test_two_paths_under_two_site_configs_is_a_usage_error(tmp_path: Path) -> None:
    a = write(tmp_path / "a" / "migrate.yaml", "site: a\n")
    b = write(tmp_path / "b" / "migrate.yaml", "site: b\n")
    write(tmp_path / "a" / "x.sbatch", sbatch("x"))
    write(tmp_path / "b" / "y.sbatch", sbatch("y"))
    res = run("plan", str(tmp_path / "a"), str(tmp_path / "b"), "--to", "kubernetes")
    assert res.returncode == 2, res.stdout
    (line,) = res.stderr.splitlines()
    assert str(a) in line and str(b) in line and "--config" in line
    given = run("plan", str(tmp_path / "a"), str(tmp_path / "b"), "--to", "kubernetes", "--config", str(b))
    assert given.returncode == 0, given.stderr
    assert f"site configuration: {b}" in given.stderr


@pytest.mark.parametrize("command", ["plan", "graph", "report", "translate"])
def test_every_command_that_reads_a_config_names_it_on_stderr(tmp_path: Path, command: str) -> None:
    write(tmp_path / "jobs" / "x.sbatch", sbatch("x"))
    argv = [command, str(tmp_path / "jobs")]
    if command in ("plan", "report", "translate"):
        argv += ["--to", "kubernetes"]
    if command != "plan":
        argv += ["--out", str(tmp_path / "out")]
    else:
        argv += ["--format", "json"]
    res = run(*argv)
    assert res.returncode == 0, res.stderr
    assert "site configuration: defaults" in res.stderr
    assert "site configuration: defaults" not in res.stdout
    if command == "plan":
        json.loads(res.stdout)  # stdout stays one JSON document


# ---------------------------------------------------------------------------
# Silent fallbacks and no-ops


def _fallback_tree(root: Path) -> Path:
    jobs = root / "jobs"
    write(jobs / "torch.sbatch", sbatch("torch", 2, "torchrun --nnodes=2 train.py"))
    write(jobs / "plain1.sbatch", sbatch("plain1", 2, "python a.py"))
    write(jobs / "plain2.sbatch", sbatch("plain2", 4, "python b.py"))
    return jobs


def test_flavor_fallbacks_are_counted_and_fail_strict(tmp_path: Path) -> None:
    jobs = _fallback_tree(tmp_path)
    argv = ["translate", str(jobs), "--to", "kubernetes", "--flavor", "pytorchjob"]
    res = run(*argv, "--out", str(tmp_path / "o1"))
    assert res.returncode == 0, res.stderr
    assert "2 of 3 jobs fell back from --flavor pytorchjob" in res.stdout
    assert "no torchrun/torch.distributed.run/accelerate/deepspeed launcher in the script" in res.stdout
    rows = [line for line in res.stdout.splitlines() if "plain1" in line or "plain2" in line]
    assert rows and all("fallback" in line for line in rows), rows
    strict = run(*argv, "--out", str(tmp_path / "o2"), "--strict")
    assert strict.returncode == 1
    assert "2 jobs fell back from --flavor pytorchjob" in strict.stderr


@pytest.mark.parametrize(
    ("name", "text", "target"), [("job.yaml", MANIFEST, "kubernetes"), ("a.sbatch", sbatch("a"), "slurm")]
)
def test_translating_jobs_already_in_the_target_format_is_a_usage_error(
    tmp_path: Path, name: str, text: str, target: str
) -> None:
    write(tmp_path / "jobs" / name, text)
    res = run("translate", str(tmp_path / "jobs"), "--to", target, "--out", str(tmp_path / "out"))
    assert res.returncode == 2, res.stdout
    (line,) = res.stderr.splitlines()
    assert line.startswith("migrate: ") and "already" in line and "--to" in line
    assert not (tmp_path / "out").exists()


def test_only_jobs_with_artifacts_count_as_translated(tmp_path: Path) -> None:
    jobs = tmp_path / "jobs"
    write(jobs / "prep.sbatch", sbatch("prep"))
    write(jobs / "train.sbatch", sbatch("train"))
    write(jobs / "pipeline.sh", WRAPPER)
    write(jobs / "devbox.sh", SALLOC)
    res = run("translate", str(jobs), "--to", "kubernetes", "--out", str(tmp_path / "out"))
    assert res.returncode == 0, res.stderr
    assert "\n2 jobs translated to kubernetes" in res.stdout
    assert "2 jobs got no files of their own" in res.stdout
    assert "1 submit.sh (a wrapper that submits other jobs" in res.stdout
    assert "1 none (an interactive allocation" in res.stdout


# ---------------------------------------------------------------------------
# Readable at 100 columns, whole when piped

DEEP = "newcomer-gpu-training-jobs/experiments/2024-q3/llama-family/finetuning/lora-sweeps/long-context"
FILE = "lora_70b.sbatch"


def _deep_tree(root: Path) -> Path:
    site = root / "repo"
    write(site / DEEP / FILE, sbatch("llama-lora", 2, "python train.py"))
    write(site / "deploy" / "settings.yaml", CONFIGMAP)  # a manifest with no job
    return site


def _table_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if "│" in line]


def test_scan_table_at_100_columns_shortens_paths_in_the_middle(tmp_path: Path) -> None:
    site = _deep_tree(tmp_path)
    text = run_tty("scan", str(site), "--no-diagnostics", cwd=tmp_path)
    rows = _table_lines(text)
    assert rows, text
    assert all(len(line) <= 100 for line in text.splitlines()), text
    (row,) = [r for r in rows if FILE in r]  # the file name kept whole, on one line
    cell = row.split("│")[0].strip()
    start, cut, _ = cell.partition("…")
    assert cut and len(start) >= 5 and DEEP.startswith(start) and cell.endswith(FILE), cell
    assert not any(str(tmp_path) in r for r in rows)  # relative to the scanned root


def test_translate_table_at_100_columns_shortens_paths_in_the_middle(tmp_path: Path) -> None:
    site = _deep_tree(tmp_path)
    text = run_tty("translate", str(site), "--to", "kubernetes", "--out", str(tmp_path / "o"), cwd=tmp_path)
    rows = [r for r in _table_lines(text) if FILE in r]
    assert len(rows) == 1, text
    assert all(len(line) <= 100 for line in _table_lines(text)), text
    cell = rows[0].split("│")[0].strip()
    assert "…" in cell and cell.endswith(f"{FILE}:1"), cell


def test_numbers_are_right_aligned_in_tables(tmp_path: Path) -> None:
    site = _deep_tree(tmp_path)
    text = run_tty("translate", str(site), "--to", "kubernetes", "--out", str(tmp_path / "o"), cwd=tmp_path)
    (header,) = [line for line in text.splitlines() if "mapped" in line and "┃" in line]
    (row,) = [r for r in _table_lines(text) if FILE in r]
    cells = row.split("│")
    heads = header.split("┃")
    mapped = heads.index(next(h for h in heads if "mapped" in h))
    assert cells[mapped].endswith(" ") and cells[mapped].strip().isdigit()
    assert cells[mapped][-2].isdigit(), repr(cells[mapped])  # the digits touch the right padding


def test_piped_output_never_wraps_a_line(tmp_path: Path) -> None:
    deep = tmp_path / "p" / ("very-long-folder-name-" * 6) / ("and-deeper-still-" * 6)
    write(deep / "odd.sbatch", sbatch("odd", extra="#SBATCH --frobnicate-the-" + "x" * 200 + "=1\n"))
    found = run("scan", str(tmp_path / "p"), "--format", "json")
    diagnostics = [
        d
        for f in json.loads(found.stdout)["files"]
        for d in f["diagnostics"]
        if d["code"] == "SLURM-UNKNOWN-OPTION"
    ]
    assert diagnostics
    table = run("scan", str(tmp_path / "p"))
    assert table.returncode == 0, table.stderr
    lines = table.stdout.splitlines()
    for d in diagnostics:
        assert any(d["code"] in line and d["message"] in line for line in lines), table.stdout
    # a plan warning that names a long path stays one line too
    write(tmp_path / "p" / "migrate.yaml", "partitions:\n  cpu: {nodes: 4}\n")
    plan = run("plan", str(tmp_path / "p"), "--to", "kubernetes")
    assert plan.returncode == 0, plan.stderr
    warned = [line for line in plan.stdout.splitlines() if "is not planned:" in line]
    # one line, said once (in the phase that moves the job), with the path whole
    assert len(warned) == 1 and "odd.sbatch; give it a --partition" in warned[0], plan.stdout


def test_scan_jobs_only_lists_job_files_and_counts_the_rest(tmp_path: Path) -> None:
    site = _deep_tree(tmp_path)
    full = run("scan", str(site), "--no-diagnostics")
    assert "settings.yaml" in full.stdout
    res = run("scan", str(site), "--no-diagnostics", "--jobs-only")
    assert res.returncode == 0, res.stderr
    assert "settings.yaml" not in res.stdout and FILE in res.stdout
    assert "2 files, 1 job" in res.stdout


def test_translate_json_has_the_documented_shape(tmp_path: Path) -> None:
    jobs = _fallback_tree(tmp_path)
    write(jobs / "pipeline.sh", WRAPPER)
    res = run(
        "translate",
        str(jobs),
        "--to",
        "kubernetes",
        "--flavor",
        "pytorchjob",
        "--out",
        str(tmp_path / "o"),
        "--format",
        "json",
    )
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert set(doc) == {"ir_version", "target", "out", "config", "jobs", "summary"}
    assert doc["target"] == "kubernetes" and doc["out"] == str(tmp_path / "o") and doc["config"] is None
    assert set(doc["summary"]) == {
        "jobs",
        "translated",
        "without_artifacts",
        "fallbacks",
        "already_in_target",
        "mapped",
        "approximated",
        "dropped",
    }
    assert doc["summary"]["jobs"] == 4 and doc["summary"]["translated"] == 3
    assert doc["summary"]["without_artifacts"] == 1 and doc["summary"]["fallbacks"] == 2
    job = doc["jobs"][0]
    assert set(job) == {
        "source",
        "line",
        "job",
        "name",
        "flavor",
        "flavor_reason",
        "fallback",
        "artifacts",
        "counts",
        "diagnostics",
    }
    assert sum(j["fallback"] for j in doc["jobs"]) == 2


def test_validate_json_has_the_documented_shape(tmp_path: Path) -> None:
    jobs = tmp_path / "jobs"
    write(jobs / "job.yaml", MANIFEST)
    write(jobs / "a.sbatch", sbatch("a"))
    out_k, out_s = tmp_path / "k", tmp_path / "s"
    assert run("translate", str(jobs), "--to", "kubernetes", "--out", str(out_k)).returncode == 0
    assert run("translate", str(jobs), "--to", "slurm", "--out", str(out_s)).returncode == 0
    for out in (out_k, out_s):
        res = run("validate", str(out), "--format", "json")
        assert res.returncode == 0, res.stdout + res.stderr
        doc = json.loads(res.stdout)
        assert set(doc) == {"ok", "kubernetes", "slurm"} and doc["ok"] is True
        assert set(doc["slurm"]) == {"controller", "scripts", "rejected", "results"}
    assert json.loads(run("validate", str(out_s), "--format", "json").stdout)["slurm"]["scripts"] == 1


# ---------------------------------------------------------------------------
# validate says what it checked


def test_static_slurm_check_says_no_controller_answered(tmp_path: Path) -> None:
    write(tmp_path / "jobs" / "job.yaml", MANIFEST)
    out = tmp_path / "s"
    assert run("translate", str(tmp_path / "jobs"), "--to", "slurm", "--out", str(out)).returncode == 0
    env = {k: v for k, v in os.environ.items() if k != "SLURM_CONF"}
    res = subprocess.run([*ENTRY, "validate", str(out)], capture_output=True, text=True, env=env, timeout=120)
    assert res.returncode == 0, res.stdout
    assert "no Slurm controller answered" in res.stdout
    assert "scripts/slurm-sandbox.sh start" in res.stdout


# ---------------------------------------------------------------------------
# Messages


def test_one_of_a_thing_is_singular(tmp_path: Path) -> None:
    write(tmp_path / "jobs" / "x.sbatch", sbatch("x", extra="#SBATCH --frobnicate=1\n"))
    scan = run("scan", str(tmp_path / "jobs"))
    assert "1 file, 1 job (sbatch 1)" in scan.stdout and "1 error," in scan.stdout, scan.stdout
    translate = run("translate", str(tmp_path / "jobs"), "--to", "kubernetes", "--out", str(tmp_path / "o"))
    assert "\n1 job translated" in translate.stdout, translate.stdout
    plan = run("plan", str(tmp_path / "jobs"), "--to", "kubernetes")
    assert "1 job in 1 migration unit:" in plan.stdout, plan.stdout
    for text in (scan.stdout, translate.stdout, plan.stdout):
        assert not re.search(r"\b1 [a-z]+s\b", text), text


def test_the_capacity_warning_says_what_to_do_with_the_figures_of_the_table() -> None:
    res = run("plan", str(SITE), "--to", "kubernetes")
    assert res.returncode == 0, res.stderr
    (warning,) = [line for line in res.stdout.splitlines() if "W1: partition gpu-a100" in line]
    assert "node(s)" not in warning
    assert "the target gets 14 nodes in this phase and the source keeps 2" in warning
    assert "partitions.gpu-a100.nodes" in warning and "--inventory" in warning
    (row,) = [line for line in res.stdout.splitlines() if line.startswith("W1 ")]
    assert "gpu-a100 14" in row


@pytest.mark.parametrize("command", ["scan", "plan", "report", "graph", "translate", "init", "validate"])
def test_help_is_readable_at_80_columns(command: str) -> None:
    res = subprocess.run(
        [*ENTRY, command, "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "COLUMNS": "80"},
    )
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert all(len(line) <= 80 for line in lines), res.stdout
    assert "…" not in res.stdout  # no option name cut
    # every option's help starts on the option's line or the next, and no word is split over lines
    assert not any(line.rstrip().endswith("-") for line in lines), res.stdout
