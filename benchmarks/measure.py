"""One measurement, run in a fresh process so that its peak memory is its own.

    python -m benchmarks.measure scan --site /tmp/site --cache /tmp/cache

Prints one JSON object: ``seconds`` (the measured work, imports excluded),
``files`` and whatever else the measurement counts. Steps that the project
does not have yet are reported as ``{"skipped": "why"}``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks import baseline

Result = dict[str, Any]


def measure_baseline(args: argparse.Namespace) -> Result:
    start = time.perf_counter()
    result = baseline.run(args.site)
    return {
        "seconds": time.perf_counter() - start,
        "files": result.files,
        "lost": result.lost,
        "timeouts": result.timeouts,
        "scripts": result.scripts,
        "manifests": result.manifests,
    }


def _scan_options(args: argparse.Namespace) -> Any:
    from migrate.scan.results import ScanOptions

    return ScanOptions(cache=args.cache or None, jobs=args.jobs)


def measure_scan(args: argparse.Namespace) -> Result:
    """What ``migrate scan SITE --format json`` does, written to /dev/null."""
    from migrate.scan import jsonstream, scanner

    start = time.perf_counter()
    with open(os.devnull, "wb") as sink:
        summary = jsonstream.write_scan(scanner.iter_rendered([args.site], _scan_options(args)), sink)
    seconds = time.perf_counter() - start
    codes = summary.codes
    return {
        "seconds": seconds,
        "files": summary.files,
        "job_files": summary.job_files,
        "jobs": summary.jobs,
        "lost": codes["INTERNAL-ERROR"],
        "files_with_unparsed_statements": codes["SHELL-UNPARSED"],
    }


def measure_scan_cli(args: argparse.Namespace) -> Result:
    """``migrate scan SITE --format FORMAT`` as a user runs it, its output piped to /dev/null.

    The command line is imported first; what the command loads as it runs (the scan, the table's
    rendering) is measured: ``process s`` has the whole command, start-up included.
    """
    from migrate import cli

    argv = ["scan", args.site, "--format", args.format]
    argv += ["--cache-dir", args.cache] if args.cache else ["--no-cache"]
    if args.jobs is not None:
        argv += ["--jobs", str(args.jobs)]
    real = sys.stdout
    with open(os.devnull, "w", encoding="utf-8") as sink:
        sys.stdout = sink
        try:
            start = time.perf_counter()
            try:
                cli.app(argv, standalone_mode=False)
            except SystemExit as stop:  # --strict is not given: only a failure stops it
                if stop.code:
                    raise
            sink.flush()
            seconds = time.perf_counter() - start
        finally:
            sys.stdout = real
    from benchmarks.generate import site_files

    return {"seconds": seconds, "files": len(site_files(Path(args.site))), "format": args.format}


def measure_scan_bucket(args: argparse.Namespace) -> Result:
    """One process, no cache: the files of one size bucket, given to the scan by name."""
    from benchmarks.generate import bucket_of, site_files
    from migrate.scan import jsonstream, scanner
    from migrate.translators.shell import reader

    files = [str(p) for p in site_files(Path(args.site)) if bucket_of(p.stat().st_size) == args.bucket]
    if not files:
        return {"skipped": f"no file in the bucket {args.bucket}"}
    size = sum(os.path.getsize(f) for f in files)
    options = _scan_options(args)
    with open(os.devnull, "wb") as sink:
        jsonstream.write_scan(scanner.iter_rendered(files[:1], options), sink)  # the lazy imports
        reader.cache_clear()
        start, cpu_start = time.perf_counter(), time.process_time()
        summary = jsonstream.write_scan(scanner.iter_rendered(files, options), sink)
    return {
        "seconds": time.perf_counter() - start,
        "cpu_seconds": time.process_time() - cpu_start,  # one process: what load elsewhere does not change
        "files": summary.files,
        "bytes": size,
        "bucket": args.bucket,
        "lost": summary.codes["INTERNAL-ERROR"],
    }


def _scanned_jobs(args: argparse.Namespace) -> tuple[list[Any], float, Any]:
    from migrate import api
    from migrate.scan import scanner

    start = time.perf_counter()
    jobs = scanner.scan([args.site], _scan_options(args)).jobs
    config, _ = api.load_config(None, [args.site])
    return jobs, time.perf_counter() - start, config


def measure_plan(args: argparse.Namespace) -> Result:
    from migrate.plan import planner as plan

    jobs, scan_seconds, config = _scanned_jobs(args)
    start = time.perf_counter()
    document = plan.plan_json(plan.build_plan(jobs, "to_kubernetes", config))
    return {
        "seconds": time.perf_counter() - start,
        "files": len(jobs),
        "unit": "jobs",
        "scan_seconds": scan_seconds,
        "plan_bytes": len(document),
    }


def _translate(args: argparse.Namespace, target: str, source_format: str) -> Result:
    from migrate import translate
    from migrate.translators import registry

    if target not in registry.WRITERS:
        return {"skipped": f"no writer for {target} yet (migrate.translators.registry.WRITERS)"}
    jobs, scan_seconds, config = _scanned_jobs(args)
    wanted = [j for j in jobs if j.source.format == source_format]
    with tempfile.TemporaryDirectory(prefix="migrate-bench-") as tmp:
        start = time.perf_counter()
        result = translate.translate_jobs(wanted, to=target, config=config)
        written = result.tree.commit(os.path.join(tmp, "out"))
        seconds = time.perf_counter() - start
    return {
        "seconds": seconds,
        "files": len(wanted),
        "unit": "jobs",
        "scan_seconds": scan_seconds,
        "written": len(written),
    }


def measure_translate_k8s(args: argparse.Namespace) -> Result:
    return _translate(args, "kubernetes", "slurm")


def measure_translate_slurm(args: argparse.Namespace) -> Result:
    return _translate(args, "slurm", "kubernetes")


def measure_report(args: argparse.Namespace) -> Result:
    """``migrate report``: a scan (the cache is warm by now), the plan, and the report files."""
    from migrate import api

    run_report = getattr(api, "run_report", None)
    if run_report is None:
        return {"skipped": "no report yet (migrate.api.run_report)"}
    with tempfile.TemporaryDirectory(prefix="migrate-bench-") as tmp:
        start = time.perf_counter()
        run = run_report([args.site], "kubernetes", os.path.join(tmp, "report"), options=_scan_options(args))
        seconds = time.perf_counter() - start
    return {
        "seconds": seconds,
        "files": len(run.scan.jobs),
        "unit": "jobs",
        "note": "scan (warm cache), plan and report together",
    }


MEASUREMENTS: dict[str, Callable[[argparse.Namespace], Result]] = {
    "baseline": measure_baseline,
    "scan": measure_scan,
    "scan-cli": measure_scan_cli,
    "scan-bucket": measure_scan_bucket,
    "plan": measure_plan,
    "translate-k8s": measure_translate_k8s,
    "translate-slurm": measure_translate_slurm,
    "report": measure_report,
}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("name", choices=sorted(MEASUREMENTS))
    parser.add_argument("--site", required=True)
    parser.add_argument("--cache", default="")
    parser.add_argument("--jobs", type=int, default=None)
    parser.add_argument("--bucket", default="", help="for scan-bucket: a size bucket of benchmarks.generate")
    parser.add_argument("--format", default="json", choices=("json", "table"), help="for scan-cli")
    args = parser.parse_args(argv)
    result = MEASUREMENTS[args.name](args)
    sys.stdout.write(json.dumps(result) + "\n")


if __name__ == "__main__":
    main()
