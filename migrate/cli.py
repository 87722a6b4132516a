"""The `migrate` command line: options, one call into the library, rendering.

This is the only module that imports typer or rich. Each command imports the
library it needs when it runs, and rich is loaded on the first output: the
readers, the planner and the report templates take most of a second to
import, which ``migrate --help`` or a scan of three files should not pay.
"""

from __future__ import annotations

import functools
import os
import sys
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated

import typer

from migrate import EXIT_INTERRUPTED, INTERRUPTED, __version__

if TYPE_CHECKING:
    from rich.console import Console

    from migrate import api
    from migrate.scan import results as scan_results

app = typer.Typer(
    name="migrate",
    help="Plan and carry out the move of batch workloads between Slurm and Kubernetes.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@functools.cache
def _out() -> Console:
    from rich.console import Console

    # Piped output keeps whole paths on one line instead of wrapping at 80 columns.
    return Console(highlight=False, soft_wrap=False, width=None if sys.stdout.isatty() else 220)


@functools.cache
def _err() -> Console:
    from rich.console import Console

    # Errors are one line each, however long: never wrapped at the terminal width.
    return Console(stderr=True, highlight=False, soft_wrap=True)


class OutputFormat(StrEnum):
    table = "table"
    json = "json"


def _version(value: bool) -> None:
    if value:
        _out().print(f"migrate {__version__}")
        raise typer.Exit()


@app.callback()
def main_options(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Show the version.")
    ] = False,
) -> None:
    """Plan and carry out the move of batch workloads between Slurm and Kubernetes."""


def _check_paths(paths: list[str]) -> None:
    missing = [p for p in paths if not os.path.lexists(p)]
    if missing:
        _err().print(f"migrate: no such file or folder: {', '.join(missing)}; check the path", markup=False)
        raise typer.Exit(2)


def _scan_with_progress(paths: list[str], options: scan_results.ScanOptions) -> scan_results.ScanResult:
    from migrate.scan import results as scan_results
    from migrate.scan import scanner

    if not _err().is_terminal:
        return scanner.scan(paths, options)
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    files: list[scan_results.FileResult] = []
    columns = (TextColumn("scanning"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=_err(), transient=True) as progress:
        task = progress.add_task("scan", total=None)
        for result in scanner.iter_scan(paths, options):
            progress.advance(task)
            files.append(result)
    return scan_results.ScanResult(files)


@app.command("scan")
def scan_command(
    paths: Annotated[list[str], typer.Argument(help="Files or folders to scan.")],
    output_format: Annotated[
        OutputFormat, typer.Option("--format", "-f", help="table for people, json for tools.")
    ] = OutputFormat.table,
    strict: Annotated[bool, typer.Option(help="Exit 1 when any error diagnostic is found.")] = False,
    max_bytes: Annotated[
        int | None,
        # The default is the library's, named here so that --help needs no import of the readers.
        typer.Option(help="Files larger than this are reported, not read (default: 1 MiB).", min=1),
    ] = None,
    show_diagnostics: Annotated[
        bool, typer.Option("--diagnostics/--no-diagnostics", help="List every diagnostic.")
    ] = True,
    jobs: Annotated[
        int | None, typer.Option("--jobs", "-j", help="Worker processes (default: one per core).", min=1)
    ] = None,
    cache_dir: Annotated[
        str | None,
        typer.Option(help="Cache folder (default: $MIGRATE_CACHE_DIR, else $XDG_CACHE_HOME/migrate)."),
    ] = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Read every file again.")] = False,
) -> None:
    """Find every job file under PATHS (by content) and read it into the job IR."""
    from migrate.scan import cache, jsonstream, scanner
    from migrate.scan import results as scan_results

    _check_paths(paths)
    cache_folder = None if no_cache else (cache_dir or cache.default_dir())
    limit = scan_results.DEFAULT_MAX_BYTES if max_bytes is None else max_bytes
    options = scan_results.ScanOptions(max_bytes=limit, cache=cache_folder, jobs=jobs)
    if output_format is OutputFormat.json:  # streamed: memory stays flat on any tree size
        errors = jsonstream.write_scan(scanner.iter_rendered(paths, options), sys.stdout).errors
    else:
        result = _scan_with_progress(paths, options)
        _print_scan_table(result, show_diagnostics)
        errors = sum(1 for d in result.diagnostics if d.severity == "error")
    if strict and errors:
        raise typer.Exit(1)


def _print_scan_table(result: scan_results.ScanResult, show_diagnostics: bool) -> None:
    from rich.table import Table

    from migrate.render import job_row, shell_coverage

    table = Table(show_edge=False, pad_edge=False)
    for title, justify in (
        ("file", "left"),
        ("format", "left"),
        ("kind", "left"),
        ("nodes", "right"),
        ("GPUs", "right"),
        ("time", "right"),
        ("launcher", "left"),
        ("storage", "left"),
        ("diag", "right"),
    ):
        table.add_column(title, justify=justify)  # type: ignore[arg-type]
    for f in result.files:
        if not f.jobs:
            table.add_row(f.path, f.format, "-", "", "", "", "", "", str(len(f.diagnostics)))
        for i, job in enumerate(f.jobs):
            row = job_row(job)
            ndiag = (
                sum(1 for d in f.diagnostics if d.job in (None, job.id))
                if i == 0
                else sum(1 for d in f.diagnostics if d.job == job.id)
            )
            table.add_row(
                f.path if i == 0 else "",
                f.format,
                row["kind"],
                row["nodes"],
                row["gpus"],
                row["time"],
                row["launcher"],
                row["storage"],
                str(ndiag),
            )
    _out().print(table)
    summary = result.summary()
    kinds = ", ".join(f"{k} {n}" for k, n in summary["by_kind"].items()) or "none"
    sev = summary["diagnostics"]
    _out().print(
        f"\n{summary['files']} files, {summary['jobs']} jobs ({kinds}); "
        f"{summary['nodes']} nodes and {summary['gpus']} GPUs requested; "
        f"diagnostics: {sev['error']} errors, {sev['warning']} warnings, {sev['info']} info"
    )
    understood, statements = shell_coverage(result.jobs)
    if statements:
        _out().print(
            f"shell bodies: {understood} of {statements} statements read by the full parser "
            f"({100 * understood / statements:.1f}%); the rest by the tolerant reader (SHELL-UNPARSED)"
        )
    if show_diagnostics and result.diagnostics:
        _out().print()
        for d in result.diagnostics:
            _out().print(d.render(), markup=False)


class Target(StrEnum):
    kubernetes = "kubernetes"
    slurm = "slurm"


def _usage_error(exc: api.UsageError) -> typer.Exit:
    _err().print(f"migrate: {exc}", markup=False)
    return typer.Exit(2)


ConfigOption = Annotated[
    str | None,
    typer.Option("--config", "-c", help="Site configuration (default: migrate.yaml at a scanned root)."),
]
ForceOption = Annotated[bool, typer.Option("--force", help="Replace files that already exist in --out.")]
AccountingOption = Annotated[
    list[str] | None,
    typer.Option(
        "--accounting",
        help="What ran: sacct --parsable2 output or kubectl get jobs -A -o json (repeatable).",
    ),
]
InventoryOption = Annotated[
    list[str] | None,
    typer.Option(
        "--inventory", help="Nodes per partition: a slurm.conf or ParallelCluster config (repeatable)."
    ),
]


@app.command("plan")
def plan_command(
    paths: Annotated[list[str], typer.Argument(help="Files or folders to scan.")],
    to: Annotated[Target, typer.Option("--to", help="The scheduler to move to.")],
    out: Annotated[str | None, typer.Option("--out", "-o", help="Write plan.json into this folder.")] = None,
    config: ConfigOption = None,
    force: ForceOption = False,
    output_format: Annotated[
        OutputFormat, typer.Option("--format", "-f", help="table for people, json prints plan.json.")
    ] = OutputFormat.table,
    accounting: AccountingOption = None,
    inventory: InventoryOption = None,
) -> None:
    """Classify every job, group them into migration units and lay out the phased plan."""
    from migrate import api
    from migrate.plan.planner import plan_json

    _check_paths(paths)
    try:
        run = api.run_plan(
            paths,
            to.value,
            config=config,
            out=out,
            force=force,
            accounting=accounting or [],
            inventory=inventory or [],
        )
    except api.UsageError as exc:
        raise _usage_error(exc) from None
    if output_format is OutputFormat.json:
        sys.stdout.write(plan_json(run.plan))
        return
    _print_plan(run)


def _print_plan(run: api.PlanRun) -> None:
    from rich.table import Table

    doc = run.plan.to_dict()
    summary = doc["summary"]
    _out().print(
        f"[bold]Plan: {doc['source']} -> {doc['target']}[/bold] for site {doc['site'] or '-'}"
        f" (config: {run.config_path or 'defaults'})"
    )
    actions = ", ".join(f"{k} {v}" for k, v in summary["by_action"].items())
    patterns = ", ".join(f"{k} {v}" for k, v in summary["by_pattern"].items())
    _out().print(f"{summary['jobs']} jobs in {summary['units']} migration units: {actions}")
    _out().print(f"workload patterns: {patterns}")
    if doc["shared_filesystems"]:
        _out().print(f"shared file systems (mount on both sides): {', '.join(doc['shared_filesystems'])}")
    for cycle in doc["cycles"]:
        _out().print(f"[red]dependency cycle:[/red] {' -> '.join(cycle)}", markup=True)
    table = Table(show_edge=False, pad_edge=False, title="phases", title_justify="left")
    for title in ("phase", "name", "steps", "units", "jobs", "target nodes", "gates"):
        table.add_column(title)
    for phase in doc["phases"]:
        target_nodes = sum(c.get("target_nodes", 0) for c in phase.get("capacity", []))
        table.add_row(
            phase["id"],
            phase["name"],
            str(len(phase.get("steps", []))),
            str(len(phase.get("units", []))),
            str(len(phase.get("jobs", []))),
            str(target_nodes) if phase.get("capacity") else "",
            str(len(phase.get("gates", []))),
        )
    _out().print(table)
    if "usage" in doc:
        usage = doc["usage"]
        _out().print(
            f"demand from accounting: {usage['matched_jobs']} jobs matched, "
            f"{len(usage['never_ran'])} did not run, {len(usage['unmatched'])} names not in the scan",
            markup=False,
        )
    for warning in doc["warnings"]:
        _out().print(f"warning: {warning}", markup=False)
    if run.written:
        _out().print(f"wrote {', '.join(run.written)}")


@app.command("report")
def report_command(
    paths: Annotated[list[str], typer.Argument(help="Files or folders to scan.")],
    to: Annotated[Target, typer.Option("--to", help="The scheduler to move to.")],
    out: Annotated[str, typer.Option("--out", "-o", help="Folder for report.md, report.html and plan.json.")],
    config: ConfigOption = None,
    force: ForceOption = False,
    translate: Annotated[
        bool,
        typer.Option(
            "--translate/--no-translate",
            help="Also translate the jobs into OUT/translated and show every job's fidelity table.",
        ),
    ] = False,
    flavor: Annotated[str, typer.Option(help="Kubernetes object to write with --translate.")] = "auto",
    accounting: AccountingOption = None,
    inventory: InventoryOption = None,
) -> None:
    """Write the migration report: Markdown and a self-contained HTML page with pictures."""
    from migrate import api

    _check_paths(paths)
    try:
        translations = None
        if translate:
            translated = api.run_translate(
                paths, to.value, os.path.join(out, "translated"), flavor=flavor, config=config, force=force
            )
            translations = translated.result
        run = api.run_report(
            paths,
            to.value,
            out,
            config=config,
            force=force,
            translations=translations,
            artifact_root="translated" if translate else "",
            accounting=accounting or [],
            inventory=inventory or [],
        )
    except api.UsageError as exc:
        raise _usage_error(exc) from None
    summary = run.plan.to_dict()["summary"]
    _out().print(
        f"{summary['jobs']} jobs, {summary['units']} migration units, phases {', '.join(summary['phases'])}"
        f" (end: {summary['end_state']})"
    )
    if translate:
        _out().print(f"translated jobs in {os.path.join(out, 'translated')}")
    _out().print(f"wrote {', '.join(p for p in run.written if not p.endswith('.svg'))} and the pictures")


@app.command("graph")
def graph_command(
    paths: Annotated[list[str], typer.Argument(help="Files or folders to scan.")],
    out: Annotated[str, typer.Option("--out", "-o", help="Folder for graph.graphml and graph.json.")],
    config: ConfigOption = None,
    force: ForceOption = False,
) -> None:
    """Export the graph of jobs, storage, monitoring, images, queues and dependencies."""
    from migrate import api

    _check_paths(paths)
    try:
        run = api.run_graph(paths, out, config=config, force=force)
    except api.UsageError as exc:
        raise _usage_error(exc) from None
    _out().print(
        f"{run.graph.number_of_nodes()} nodes, {run.graph.number_of_edges()} edges; "
        f"wrote {', '.join(run.written)}"
    )


@app.command("translate")
def translate_command(
    paths: Annotated[list[str], typer.Argument(help="Files or folders to translate.")],
    to: Annotated[Target, typer.Option("--to", help="The format to write.")],
    out: Annotated[str, typer.Option("--out", "-o", help="Folder for the translated jobs.")],
    flavor: Annotated[
        str,
        typer.Option(
            help="Kubernetes object to write: auto, job, jobset, volcano, kueue, pytorchjob, mpijob, cronjob."
        ),
    ] = "auto",
    container_runtime: Annotated[
        str, typer.Option(help="How sbatch scripts run containers: pyxis, apptainer or none (--to slurm).")
    ] = "pyxis",
    config: ConfigOption = None,
    force: ForceOption = False,
    strict: Annotated[
        bool, typer.Option(help="Exit 1 when anything was dropped or a job gets less than Slurm gave it.")
    ] = False,
    inventory: InventoryOption = None,
) -> None:
    """Translate job files to the other scheduler, recording what was mapped, approximated or dropped."""
    from rich.table import Table

    from migrate import api

    _check_paths(paths)
    # Towards Slurm the writer's one choice is how containers run; towards Kubernetes, the object.
    choice = container_runtime if to is Target.slurm else flavor
    try:
        run = api.run_translate(
            paths, to.value, out, flavor=choice, config=config, force=force, inventory=inventory or []
        )
    except api.UsageError as exc:
        raise _usage_error(exc) from None
    table = Table(show_edge=False, pad_edge=False)
    for title in ("source", "output", "flavor", "mapped", "approx.", "dropped", "diag"):
        table.add_column(title)
    totals = {"mapped": 0, "approximated": 0, "dropped": 0}
    for t in run.result.translations:
        counts = t.fidelity.counts()
        for key in totals:
            totals[key] += counts[key]
        table.add_row(
            f"{t.source}:{t.line}" if t.line else t.source,
            t.name,
            t.flavor,
            str(counts["mapped"]),
            str(counts["approximated"]),
            str(counts["dropped"]),
            str(len(t.diagnostics)),
        )
    _out().print(table)
    _out().print(
        f"\n{len(run.result.translations)} jobs translated to {to.value} in {out}: "
        f"{totals['mapped']} items mapped, {totals['approximated']} approximated, {totals['dropped']} dropped"
        + (f"; {len(run.skipped)} jobs already in that format were left alone" if run.skipped else "")
    )
    _out().print("every decision and its reason: " + os.path.join(out, "translation.json"), markup=False)
    if strict and run.result.strict:
        lost = sum(len(t.losses) for t in run.result.translations)
        _err().print(
            "migrate: --strict: some items were dropped"
            + (f", and {lost} item(s) give jobs less than Slurm allocated them" if lost else "")
            + " (see translation.json)"
        )
        raise typer.Exit(1)


@app.command("init")
def init_command(
    paths: Annotated[list[str], typer.Argument(help="Files or folders to scan.")],
    out: Annotated[
        str, typer.Option("--out", "-o", help="Where to write the configuration.")
    ] = "migrate.yaml",
    site: Annotated[str, typer.Option(help="The site's name.")] = "site",
    force: ForceOption = False,
) -> None:
    """Write a starter migrate.yaml from a scan, with REPLACE-ME where only the site knows the answer."""
    from migrate import api

    _check_paths(paths)
    try:
        run = api.run_init(paths, out, site=site, force=force)
    except api.UsageError as exc:
        raise _usage_error(exc) from None
    placeholders = run.text.count("REPLACE-ME")
    _out().print(f"wrote {', '.join(run.written)}: {placeholders} values to fill in (REPLACE-ME)")


@app.command("validate")
def validate_command(
    path: Annotated[str, typer.Argument(help="A translated output folder or one file.")],
) -> None:
    """Check generated manifests (strict OpenAPI and CRD schemas) and sbatch scripts (sbatch --test-only)."""
    from migrate import api

    try:
        run = api.run_validate(path)
    except api.UsageError as exc:
        raise _usage_error(exc) from None
    report = run.kubernetes
    for problem in report.problems:
        _out().print(problem.render(), markup=False)
    if report.files:
        kinds = ", ".join(f"{k} {n}" for k, n in report.kinds.items()) or "none"
        _out().print(
            f"kubernetes: {report.objects} objects in {len(report.files)} files checked in strict mode "
            f"against Kubernetes {report.k8s_version} and the CRD schemas ({kinds}): "
            f"{len(report.problems)} problems"
        )
    for result in run.slurm:
        if not result.accepted:
            _out().print(f"{result.path}: rejected ({result.method}): {result.message}", markup=False)
    if run.slurm:
        methods = sorted({r.method for r in run.slurm})
        rejected = sum(1 for r in run.slurm if not r.accepted)
        _out().print(
            f"slurm: {len(run.slurm)} scripts checked by {' and '.join(methods)}: {rejected} rejected"
        )
    if not run.ok:
        raise typer.Exit(1)


def main() -> None:
    """Run the CLI; usage errors and Ctrl-C end in one line on stderr, never a traceback."""
    try:
        code = app(standalone_mode=False)
    except KeyboardInterrupt:
        code = EXIT_INTERRUPTED  # typer turns Ctrl-C into 130 itself; this catches it outside a command
    except Exception as exc:
        sys.exit(_click_error(exc))
    if code == EXIT_INTERRUPTED:
        _err().print(INTERRUPTED, markup=False)
    sys.exit(code if isinstance(code, int) else 0)


def _click_error(exc: Exception) -> int:
    """A command-line usage error (bad option, missing argument) as one line; re-raise anything else."""
    message = getattr(exc, "format_message", None)
    exit_code = getattr(exc, "exit_code", None)
    if type(exc).__name__ == "Abort":
        _err().print("migrate: aborted")
        return 1
    if not callable(message) or not isinstance(exit_code, int):
        raise exc
    ctx = getattr(exc, "ctx", None)
    command = getattr(ctx, "command_path", None) or "migrate"
    if type(exc).__name__ == "NoArgsIsHelpError" and ctx is not None:
        _out().print(ctx.get_help(), markup=False)
        return exit_code
    text = " ".join(str(message()).split()).replace("Value error, ", "")
    _err().print(f"migrate: {text.rstrip('.')}; see '{command} --help'", markup=False)
    return exit_code


__all__ = ["app", "main"]
