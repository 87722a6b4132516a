"""Generate a site, measure the naive baseline and migrate on it, print a table, write JSON.

    python -m benchmarks --files 10000 --json /tmp/bench-10000.json

Every measurement runs in a fresh process: its peak memory is the largest
resident size of that process and of its workers (``wait4``), and the whole
tree's resident size is sampled too. ``seconds`` is the measured work after
the imports; ``process s`` is the whole command, start-up included.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import platform
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.generate import BUCKETS, SIZES

REPO = Path(__file__).resolve().parent.parent
CHANGED_SHARE = 0.01


@dataclass
class Step:
    name: str  # shown in the table
    measurement: str  # benchmarks.measure name
    jobs: int | None = None
    cache: bool = True
    before: str = ""  # "clear-cache" or "change-files"
    bucket: str = ""  # for scan-bucket
    output: str = ""  # for scan-cli: json or table


STEPS = (
    Step("baseline (regex + bashlex + yaml)", "baseline"),
    Step("scan cold, 1 process, no cache", "scan", jobs=1, cache=False),
    Step("scan cold, no cache", "scan", cache=False),
    Step("scan cold (fills the cache)", "scan", before="clear-cache"),
    Step("scan warm", "scan"),
    Step("scan after 1% changed", "scan", before="change-files"),
    # the command as people run it, piped: the JSON and the table, each cold and warm
    Step("scan --format json, cold (fills the cache)", "scan-cli", before="clear-cache", output="json"),
    Step("scan --format json, warm", "scan-cli", output="json"),
    Step("scan table, cold (fills the cache)", "scan-cli", before="clear-cache", output="table"),
    Step("scan table, warm", "scan-cli", output="table"),
    Step("plan (to kubernetes)", "plan"),
    Step("translate slurm -> kubernetes", "translate-k8s"),
    Step("translate kubernetes -> slurm", "translate-slurm"),
    Step("report", "report"),
    *(
        Step(f"scan {label}, 1 process, no cache", "scan-bucket", jobs=1, cache=False, bucket=label)
        for label, _ in BUCKETS
    ),
)
LINEAR_FROM = "1-4 KB"  # the bucket whose cost per byte predicts the others


@dataclass
class Measured:
    name: str
    measurement: str
    result: dict[str, Any]
    process_seconds: float
    cpu_seconds: float  # user + system time of the process and its workers (wait4)
    max_rss_mb: float  # the largest single process (wait4)
    tree_rss_mb: float  # sampled sum over the process and its workers
    load_before: float  # 1-minute load average: other work on the machine skews the figures
    busy_before: float | None  # share of the cores busy in the second before (with --wait-idle)
    ratios: dict[str, float] = field(default_factory=dict)


# -- memory of a process tree -----------------------------------------------------------


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*/children"):
        try:
            found.extend(int(p) for p in task.read_text().split())
        except OSError:
            continue
    return found


def _rss_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


class TreeSampler(threading.Thread):
    """Samples the summed resident size of a process and its descendants."""

    def __init__(self, pid: int, every_s: float = 0.02) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.every_s = every_s
        self.peak_kb = 0
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.is_set():
            pids, total = [self.pid], 0
            while pids:
                pid = pids.pop()
                total += _rss_kb(pid)
                pids.extend(_children(pid))
            self.peak_kb = max(self.peak_kb, total)
            self.done.wait(self.every_s)


def run_child(
    measurement: str, site: Path, cache: Path | None, jobs: int | None, bucket: str = "", output: str = ""
) -> tuple[dict[str, Any], float, float, float, float]:
    """Run one measurement: its result, wall and CPU seconds, peak RSS of one process and of the tree."""
    command = [sys.executable, "-m", "benchmarks.measure", measurement, "--site", str(site)]
    if bucket:
        command += ["--bucket", bucket]
    if output:
        command += ["--format", output]
    if cache is not None:
        command += ["--cache", str(cache)]
    if jobs is not None:
        command += ["--jobs", str(jobs)]
    start = time.perf_counter()
    proc = subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    sampler = TreeSampler(proc.pid)
    sampler.start()
    output: dict[str, bytes] = {}
    readers = [
        threading.Thread(target=lambda name=name, pipe=pipe: output.__setitem__(name, pipe.read()))
        for name, pipe in (("out", proc.stdout), ("err", proc.stderr))
    ]
    for reader in readers:
        reader.start()
    # wait4 rather than Popen.wait: it also gives the child's resource usage.
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.perf_counter() - start
    for reader in readers:
        reader.join()
    sampler.done.set()
    sampler.join()
    if proc.returncode:
        raise RuntimeError(f"{measurement} failed:\n{output['err'].decode(errors='replace')}")
    result = json.loads(output["out"].decode().strip().splitlines()[-1])
    # ru_maxrss is in KiB on Linux; it covers the child and the workers it waited for.
    cpu = usage.ru_utime + usage.ru_stime
    return result, seconds, cpu, usage.ru_maxrss / 1024, sampler.peak_kb / 1024


def _cpu_times() -> tuple[int, int]:
    fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]  # idle and iowait
    return sum(fields) - idle, sum(fields)


def wait_for_idle(timeout_s: float, busy_share: float = 0.15) -> float:
    """Wait until the machine's cores are mostly idle for a second (shared machines); the busy share."""
    deadline = time.monotonic() + timeout_s
    busy = 1.0
    while True:
        try:
            busy0, total0 = _cpu_times()
            time.sleep(1.0)
            busy1, total1 = _cpu_times()
        except OSError:
            return 0.0
        busy = (busy1 - busy0) / max(1, total1 - total0)
        if busy <= busy_share or time.monotonic() >= deadline:
            return busy


# -- the run ----------------------------------------------------------------------------------


def compile_bytecode() -> None:
    """Compile the tool's modules once, as installing it does. The benchmark runs from the
    repository: with ``PYTHONDONTWRITEBYTECODE`` set, or after an edit, every measured process
    would compile the modules it imports again, inside its timings (0.1 s at a cold scan's start)."""
    for package in ("migrate", "translators"):
        compileall.compile_dir(REPO / package, quiet=1)


def run_generate(*args: str) -> str:
    """benchmarks.generate in its own process: a big site must not inflate this process; what it printed.

    A child's peak resident size (``ru_maxrss``) starts from this process's size
    at the fork, so this process stays small.
    """
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.generate", *args],
        cwd=REPO,
        check=True,
        stdout=subprocess.PIPE,
        text=True,
    )
    return done.stdout


def _ratios(result: dict[str, Any], seconds: float, base: Measured | None) -> dict[str, float]:
    if base is None or not result.get("seconds") or result.get("unit") == "jobs":
        return {}
    base_rate = base.result["files"] / base.result["seconds"]
    rate = result["files"] / result["seconds"]
    return {
        "files_per_s": rate,
        "x_baseline": rate / base_rate,
        "x_baseline_process": (result["files"] / seconds) / (base.result["files"] / base.process_seconds),
    }


def measure_step(step: Step, site: Path, cache: Path, seed: int, idle_wait_s: float) -> Measured:
    if step.before == "clear-cache":
        for leftover in cache.glob("*"):
            leftover.unlink()
    elif step.before == "change-files":
        run_generate("--out", str(site), "--seed", str(seed), "--change", str(CHANGED_SHARE))
    busy = wait_for_idle(idle_wait_s) if idle_wait_s else None
    note = f" (cores {busy:.0%} busy before)" if busy is not None else ""
    print(f"  {step.name} ...{note}", file=sys.stderr, flush=True)
    load = os.getloadavg()[0]
    result, seconds, cpu, max_rss, tree_rss = run_child(
        step.measurement, site, cache if step.cache else None, step.jobs, step.bucket, step.output
    )
    return Measured(step.name, step.measurement, result, seconds, cpu, max_rss, tree_rss, load, busy)


def measure_all(
    site: Path,
    cache: Path,
    seed: int,
    only: set[str] | None,
    idle_wait_s: float,
    repeat: int = 1,
    restore: Callable[[], object] | None = None,
) -> list[Measured]:
    """Every step, in ``repeat`` rounds; the fastest run of each step is kept.

    Other work on a shared machine only slows runs, and it comes and goes over minutes: run N
    times in a row, the baseline and the scan could each fall into a different spell. In rounds,
    each step is measured once per round, so every step sees every spell. ``restore`` puts the
    site back as generated before each round after the first, when a step changes its files.
    """
    steps = [s for s in STEPS if not only or s.measurement in only or s.name in only]
    runs: dict[str, list[Measured]] = {step.name: [] for step in steps}
    for number in range(repeat):
        if number and restore is not None and any(step.before == "change-files" for step in steps):
            restore()
        for step in steps:
            if repeat > 1:
                print(f"round {number + 1} of {repeat}:", end="", file=sys.stderr, flush=True)
            runs[step.name].append(measure_step(step, site, cache, seed, idle_wait_s))
    measured: list[Measured] = []
    base: Measured | None = None
    for step in steps:
        row = min(runs[step.name], key=lambda r: r.result.get("seconds", 0.0))
        row.ratios = _ratios(row.result, row.process_seconds, base)
        if step.measurement == "baseline":
            base = row
        measured.append(row)
    _linearity(measured)
    return measured


def _linearity(rows: list[Measured]) -> None:
    """Each bucket's files/s over what a cost linear in bytes predicts from the LINEAR_FROM bucket."""
    buckets = {r.result["bucket"]: r for r in rows if r.measurement == "scan-bucket" and "bucket" in r.result}
    reference = buckets.get(LINEAR_FROM)
    if reference is None:
        return
    # CPU seconds where measured: on a shared machine the wall time of one bucket is not comparable.
    key = "cpu_seconds" if "cpu_seconds" in reference.result else "seconds"
    seconds_per_byte = reference.result[key] / reference.result["bytes"]
    for row in buckets.values():
        res = row.result
        predicted = res["files"] / (seconds_per_byte * res["bytes"])
        row.ratios["of_linear"] = (res["files"] / res[key]) / predicted


def machine() -> dict[str, Any]:
    cpu = platform.processor()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "cpu": cpu,
        "cores": len(os.sched_getaffinity(0)),
        "python": platform.python_version(),
        "system": platform.platform(),
        "load_average_before": os.getloadavg(),
    }


def table(rows: list[Measured]) -> str:
    head = (
        "measurement",
        "files",
        "seconds",
        "process s",
        "cpu s",
        "files/s",
        "x base",
        "x base (proc)",
        "max RSS MB",
        "tree MB",
        "load",
        "notes",
    )
    lines: list[tuple[str, ...]] = [head]
    for r in rows:
        res = r.result
        if "skipped" in res:
            lines.append((r.name, *[""] * (len(head) - 2), f"skipped: {res['skipped']}"))
            continue
        unit = res.get("unit", "files")
        notes = []
        if "lost" in res:
            notes.append(f"lost {res['lost']}")
        if unit == "jobs":
            notes.append(f"{res['files']} jobs")
        if "scan_seconds" in res:
            notes.append(f"scan before it {res['scan_seconds']:.2f}s")
        if "note" in res:
            notes.append(res["note"])
        if "bytes" in res:
            kb_per_s = res["bytes"] / 1024 / res.get("cpu_seconds", res["seconds"])
            notes.append(f"mean {res['bytes'] / res['files'] / 1024:.1f} KB, {kb_per_s:,.0f} KB per CPU s")
        if "of_linear" in r.ratios:
            notes.append(f"{r.ratios['of_linear']:.2f}x the linear prediction from {LINEAR_FROM}")
        rate = r.ratios.get("files_per_s")
        lines.append(
            (
                r.name,
                str(res.get("files") or ""),
                f"{res['seconds']:.2f}",
                f"{r.process_seconds:.2f}",
                f"{r.cpu_seconds:.2f}",
                f"{rate:,.0f}" if rate else "",
                f"{r.ratios['x_baseline']:.1f}" if "x_baseline" in r.ratios else "",
                f"{r.ratios['x_baseline_process']:.1f}" if "x_baseline_process" in r.ratios else "",
                f"{r.max_rss_mb:.0f}",
                f"{r.tree_rss_mb:.0f}",
                f"{r.load_before:.1f}",
                "; ".join(notes),
            )
        )
    widths = [max(len(row[i]) for row in lines) for i in range(len(head))]
    return "\n".join(
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in lines
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--files", type=int, default=1000, help="1000, 10000 or 100000 (any count works)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--sizes", choices=SIZES, default="real", help="real-sized files or the corpus's")
    parser.add_argument("--workdir", type=Path, help="where the site and cache go (default: a temp folder)")
    parser.add_argument("--json", type=Path, help="write the figures here")
    parser.add_argument("--only", nargs="*", help="measurement names to run (baseline, scan, plan, ...)")
    parser.add_argument(
        "--repeat", type=int, default=1, help="measure every step in N rounds, keep the fastest run of each"
    )
    parser.add_argument(
        "--wait-idle",
        type=float,
        default=0,
        metavar="SECONDS",
        help="before each measurement, wait up to this long for the cores to be idle (shared machines)",
    )
    args = parser.parse_args(argv)
    workdir = args.workdir or Path(tempfile.gettempdir()) / "migrate-bench"
    site, cache = workdir / f"site-{args.sizes}-{args.files}", workdir / f"cache-{args.sizes}-{args.files}"
    cache.mkdir(parents=True, exist_ok=True)
    info = machine()
    compile_bytecode()
    print(f"generating {args.files} files under {site} ...", file=sys.stderr, flush=True)
    site_args = (
        "--out",
        str(site),
        "--files",
        str(args.files),
        "--seed",
        str(args.seed),
        "--sizes",
        args.sizes,
    )
    distribution = run_generate(*site_args).strip().splitlines()[-1]
    only = set(args.only) if args.only else None
    # the same arguments give the same bytes: a round after a step changed the site starts from it again
    rows = measure_all(
        site, cache, args.seed, only, args.wait_idle, args.repeat, lambda: run_generate(*site_args)
    )
    where = f"{info['cpu']}, {info['cores']} cores, Python {info['python']}"
    print(f"\n{args.files} files ({args.sizes} sizes), seed {args.seed}; {where}")
    print(f"site: {distribution}")
    print(table(rows))
    if args.json:
        document = {
            "files": args.files,
            "seed": args.seed,
            "sizes": args.sizes,
            "distribution": distribution,
            "repeat": args.repeat,
            "machine": info,
            "results": [asdict(r) for r in rows],
        }
        args.json.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
        print(f"\nfigures written to {args.json}")


if __name__ == "__main__":
    main()
