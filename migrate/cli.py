"""The `migrate` command line: options, one call into the library, rendering.

This is the only module that imports typer or rich. Each command imports the
library it needs when it runs, and rich is loaded on the first output: the
readers, the planner and the report templates take most of a second to
import, which ``migrate --help`` or a scan of three files should not pay.
"""

from __future__ import annotations

import functools
import gc
import json
import os
import signal
import sys
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer

from migrate import EXIT_INTERRUPTED, INTERRUPTED, __version__
from migrate.vocab import AUTO_COEXISTENCE, FidelityStatus, Format

if TYPE_CHECKING:
    from rich.console import Console

    from migrate import api
    from migrate.fidelity import Translation
    from migrate.scan import results as scan_results
    from migrate.scan.overview import FileView
    from migrate.scan.templates import TemplateInputs

app = typer.Typer(
    name="migrate",
    help="Plan and carry out the move of batch workloads between Slurm and Kubernetes.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # plain help: readable at 80 columns, and no rich to load for --help
)
# Piped output is never wrapped: one line per row or message, whatever its length, for grep and tools.
PIPED_WIDTH = 1_000_000
# How narrow a table's columns may get at a terminal: the one that gives way first, and the others.
MIN_FIT_WIDTH = 24
MIN_TEXT_WIDTH = 6


@functools.cache
def _out() -> Console:
    from rich.console import Console

    tty = sys.stdout.isatty()
    return Console(highlight=False, soft_wrap=not tty, width=None if tty else PIPED_WIDTH)


def _say(text: str = "") -> None:
    """A line of output: written as it is when piped (rich need not load), through rich at a terminal."""
    if sys.stdout.isatty():
        _out().print(text, markup=False, highlight=False)
    else:
        sys.stdout.write(text + "\n")


def _note(text: str) -> None:
    """A line on stderr: written as it is when stderr is not a terminal (rich need not load)."""
    if sys.stderr.isatty():
        _err().print(text, markup=False)
    else:
        sys.stderr.write(text + "\n")
        sys.stderr.flush()


@functools.cache
def _err() -> Console:
    from rich.console import Console

    # Errors are one line each, however long: never wrapped at the terminal width.
    return Console(stderr=True, highlight=False, soft_wrap=True)


class OutputFormat(StrEnum):
    table = "table"
    json = "json"


def _plural(count: int, word: str, many: str | None = None) -> str:
    from migrate.render import plural

    return plural(count, word, many)


def _print_table(
    columns: Sequence[tuple[str, str]],
    rows: Sequence[Sequence[str]],
    *,
    fit: int | None = None,
    paths: bool = True,
    title: str | None = None,
    caption: str | None = None,
) -> None:
    """A table that fits the terminal: column ``fit`` gives way first, then the other text columns.

    A column of ``paths`` is shortened in the middle, keeping the file name; other
    text is cut at its end; numbers are never cut. Piped, nothing is cut at all.
    ``columns`` are (title, "left" or "right"): numbers are right-aligned.

    The lines are rich's table (the same rules and bars) written directly: widths come
    once from the data, so ten thousand rows cost no more than joining their cells.
    """
    rows = [row if "".join(row).isprintable() else [_printable(cell) for cell in row] for row in rows]
    cells_of = list(zip(*rows, strict=True)) or [()] * len(columns)
    widths = [_width([name, *cells]) for (name, _), cells in zip(columns, cells_of, strict=True)]
    at_terminal = sys.stdout.isatty()
    if fit is not None and at_terminal:
        room = _out().width - 3 * (len(columns) - 1)  # " │ " between columns
        fitted = _fit_widths(widths, [justify for _, justify in columns], fit, room)
        shorten = _shorten_middle if paths else _cut_end
        rows = [
            [
                (shorten if i == fit else _cut_end)(cell, width) if _cell_len(cell) > width else cell
                for i, (cell, width) in enumerate(zip(row, fitted, strict=True))
            ]
            for row in rows
        ]
        widths = fitted
    right = [justify == "right" for _, justify in columns]

    def line(cells: Sequence[str], bar: str) -> str:
        padded = (
            " " * (w - _cell_len(c)) + c if r else c + " " * (w - _cell_len(c))
            for c, w, r in zip(cells, widths, right, strict=True)
        )
        return bar.join(padded)

    # a row of printable ASCII (nearly every row) is padded by one format call: a character is a cell
    plain_row = " │ ".join(f"{{:{'>' if r else '<'}{w}}}" for w, r in zip(widths, right, strict=True)).format
    header = line([name for name, _ in columns], " ┃ ")
    rule = "━╇━".join("━" * w for w in widths)
    body = [
        header,
        rule,
        *(plain_row(*row) if _one_cell_each("".join(row)) else line(row, " │ ") for row in rows),
    ]
    if caption is not None:
        body.append(caption)
    if at_terminal:
        body = [_crop(text, _out().width) for text in body]
    if title is not None and at_terminal:
        _out().print(title, style="italic", markup=False, highlight=False, crop=True)
    elif title is not None:
        body.insert(0, title)
    if at_terminal:  # the header stands out, as rich's did; the rest is written as it is
        _out().print(body[0], style="bold", markup=False, highlight=False, crop=True)
        body = body[1:]
    sys.stdout.write("\n".join(body) + "\n")


def _width(cells: list[str]) -> int:
    """The widest of ``cells``, in terminal cells."""
    if _one_cell_each("".join(cells)):
        return max(map(len, cells))
    return max(map(_cell_len, cells))


def _one_cell_each(text: str) -> bool:
    """Printable ASCII: each character takes one cell (a control character takes none, 日 two)."""
    return text.isascii() and text.isprintable()


def _cell_len(text: str) -> int:
    """How many terminal cells ``text`` takes (rich's measure)."""
    if _one_cell_each(text):
        return len(text)
    from rich.cells import cell_len as measure

    return measure(text)


def _printable(text: str) -> str:
    """``text`` as rich printed it: without the control codes that move the cursor, tabs as spaces
    (counted from the start of each line)."""
    if text.isprintable() or ("\n" in text and text.replace("\n", " ").isprintable()):
        return text  # nearly always: checked in C, nothing to change (lines stay lines)
    from rich.control import strip_control_codes

    text = strip_control_codes(text)
    return text.expandtabs(8) if "\t" in text else text


def _cut_end(text: str, width: int) -> str:
    """``text`` in ``width`` cells, its end replaced by an ellipsis (as rich's overflow="ellipsis")."""
    from rich.cells import set_cell_size

    return set_cell_size(text, max(width - 1, 0)) + "…" if width > 0 else ""


def _crop(text: str, width: int) -> str:
    from rich.cells import set_cell_size

    return set_cell_size(text, width) if _cell_len(text) > width else text


def _fit_widths(widths: list[int], justify: list[str], fit: int, room: int) -> list[int]:
    """Column widths that add up to at most ``room``: ``fit`` shrinks first, down to MIN_FIT_WIDTH,
    then the widest other text column, one character at a time; numbers keep their width."""
    out = list(widths)
    out[fit] = max(min(widths[fit], MIN_FIT_WIDTH), room - sum(w for i, w in enumerate(widths) if i != fit))
    out[fit] = min(out[fit], widths[fit])
    shrinkable = [i for i, j in enumerate(justify) if j != "right" and i != fit]
    while sum(out) > room:
        widest = max(shrinkable, key=lambda i: out[i], default=None)
        if widest is None or out[widest] <= MIN_TEXT_WIDTH:
            break  # as narrow as it reads: the terminal crops the rest
        out[widest] -= 1
    return out


def _shorten_middle(path: str, width: int) -> str:
    """``repo/experim…/train.sbatch``: the start of the path and the whole file name, cut between them."""
    if len(path) <= width:
        return path
    folder, slash, name = path.rpartition("/")
    if slash and len(name) + 2 <= width:
        return folder[: width - len(name) - 2] + "…/" + name
    keep = width - 1
    return path[: keep // 2] + "…" + path[len(path) - (keep - keep // 2) :]


def _relative_to(paths: Sequence[str]) -> tuple[Callable[[str], str], str]:
    """How tables show a scanned file: relative to the folder the given paths share; and that folder."""
    folders = [os.path.abspath(p) if os.path.isdir(p) else os.path.dirname(os.path.abspath(p)) for p in paths]
    base = os.path.commonpath(folders)

    inside = os.path.join(base, "")

    def shown(path: str) -> str:
        full = path if path.startswith(inside) else os.path.abspath(path)
        if full.startswith(inside):  # nearly every path: what relpath would give, without its work
            return full[len(inside) :]
        rel = os.path.relpath(full, base)
        return path if rel.startswith(os.pardir) else rel

    return shown, (base if any(os.path.isabs(p) for p in paths) else os.path.relpath(base))


def _say_config(path: str | None) -> None:
    """Which site configuration a command read, on stderr: stdout may be a JSON document."""
    shown = path or "defaults (no migrate.yaml above the given paths; pass one with --config)"
    _note(f"site configuration: {shown}")


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


def _scan_overview(paths: list[str], options: scan_results.ScanOptions) -> list[FileView]:
    from migrate.scan import scanner

    if not sys.stderr.isatty():  # no progress bar: rich need not load
        return scanner.overview(paths, options)
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    columns = (TextColumn("scanning"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=_err(), transient=True) as progress:
        task = progress.add_task("scan", total=None)
        return scanner.overview(paths, options, on_file=lambda: progress.advance(task))


@app.command("scan")
def scan_command(
    paths: Annotated[list[str], typer.Argument(help="Files or folders to scan.", metavar="PATHS")],
    output_format: Annotated[
        OutputFormat, typer.Option("--format", "-f", help="table for people, json for tools.")
    ] = OutputFormat.table,
    strict: Annotated[
        bool, typer.Option("--strict", help="Exit 1 when any error diagnostic is found.")
    ] = False,
    max_bytes: Annotated[
        int | None,
        # The default is the library's, named here so that --help needs no import of the readers.
        typer.Option(
            help="Files larger than this are reported, not read (default: 1 MiB).", min=1, metavar="N"
        ),
    ] = None,
    show_diagnostics: Annotated[
        bool, typer.Option("--diagnostics/--no-diagnostics", help="List every diagnostic.")
    ] = True,
    jobs_only: Annotated[
        bool,
        typer.Option(
            "--jobs-only", help="List only files with jobs (the summary still counts all); table only."
        ),
    ] = False,
    jobs: Annotated[
        int | None,
        typer.Option("--jobs", "-j", help="Worker processes (default: one per core).", min=1, metavar="N"),
    ] = None,
    cache_dir: Annotated[
        str | None,
        typer.Option(
            help="Cache folder (default: $MIGRATE_CACHE_DIR, else $XDG_CACHE_HOME/migrate).", metavar="DIR"
        ),
    ] = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Read every file again.")] = False,
    set_values: SetOption = None,
    env_file: EnvFileOption = None,
    helm_values: HelmValuesOption = None,
    config: ConfigOption = None,
) -> None:
    """Find every job file under PATHS (by content) and read it into the job IR."""
    from migrate.scan import cache, jsonstream, scanner
    from migrate.scan import results as scan_results

    _check_paths(paths)
    templating = _template_inputs(set_values, env_file, helm_values)
    cache_folder = None if no_cache else (cache_dir or cache.default_dir())
    limit = scan_results.DEFAULT_MAX_BYTES if max_bytes is None else max_bytes
    from migrate import UsageError
    from migrate.site.locate import load_config

    try:  # the site's own SPANK options are #SBATCH options there
        site, config_path = load_config(config, paths)
    except UsageError as exc:
        if config is not None:
            raise _usage_error(exc) from None
        # a scan needs no site: a nearest migrate.yaml it cannot read only costs its SPANK options
        _note(f"migrate: warning: {exc}; scanning without the site's SPANK options")
        site, config_path = load_config(None, [])
    if site.spank_options:
        _note(f"site configuration: {config_path} (its spank_options are read)")
    options = scan_results.ScanOptions(
        max_bytes=limit,
        cache=cache_folder,
        jobs=jobs,
        values=templating.values,
        helm_values=templating.helm_values,
        spank_options=site.spank_options,
    )
    if output_format is OutputFormat.json:  # streamed: memory stays flat on any tree size
        sys.stdout.flush()
        # each file's JSON is bytes from the cache or the workers, written as it is
        errors = jsonstream.write_scan(scanner.iter_rendered(paths, options), sys.stdout.buffer).errors
        sys.stdout.buffer.flush()
    else:
        views = _scan_overview(paths, options)
        errors = _print_scan_table(views, paths, show_diagnostics, jobs_only)
    if strict and errors:
        raise typer.Exit(1)


SCAN_COLUMNS = (
    ("file", "left"),
    ("format", "left"),
    ("kind", "left"),
    ("nodes", "right"),
    ("GPUs", "right"),
    ("time", "right"),
    ("launcher", "left"),
    ("storage", "left"),
    ("diag", "right"),
)


def _requested(summary: dict[str, Any]) -> str:
    """'45 nodes, 124 GPUs and 192 neuron': what the scanned jobs hold, as the allocation packs them."""
    parts = [_plural(summary["nodes"], "node"), _plural(summary["gpus"], "GPU")]
    parts += [f"{n} {name}" for name, n in summary.get("accelerators", {}).items()]
    return ", ".join(parts[:-1]) + " and " + parts[-1]


# From this many files on, the scan's counts come before its rows: they are what a large site is read for.
SUMMARY_FIRST_FILES = 500


def _print_scan_table(
    views: Sequence[FileView], paths: Sequence[str], show_diagnostics: bool, jobs_only: bool
) -> int:
    """The scan table, its summary and the diagnostics; the number of errors found (for --strict)."""
    gc.freeze()  # the views are kept to the end: the collector need not walk them again
    try:
        return _print_scan_views(views, paths, show_diagnostics, jobs_only)
    finally:
        gc.unfreeze()


def _print_scan_views(
    views: Sequence[FileView], paths: Sequence[str], show_diagnostics: bool, jobs_only: bool
) -> int:
    from migrate.scan import overview

    counted = overview.summary(views)
    summary = counted.to_dict()
    if len(views) >= SUMMARY_FIRST_FILES:
        _print_counts(summary)
    shown, base = _relative_to(paths)
    rows: list[list[str]] = []
    for view in views:
        jobs = view.rows.jobs
        if not jobs and not jobs_only:
            rows.append(
                [shown(view.path), view.format, "-", "", "", "", "", "", str(len(view.rows.diagnostics))]
            )
        for i, cells in enumerate(jobs):
            rows.append([shown(view.path) if i == 0 else "", view.format, *cells])
    _print_table(SCAN_COLUMNS, rows, fit=0, caption=f"paths relative to {base}")
    kinds = ", ".join(f"{k} {n}" for k, n in summary["by_kind"].items()) or "none"
    sev = summary["diagnostics"]
    _say(
        f"\n{_plural(summary['files'], 'file')}, {_plural(summary['jobs'], 'job')} ({kinds}); "
        f"{_requested(summary)} requested; "
        f"diagnostics: {_plural(sev['error'], 'error')}, {_plural(sev['warning'], 'warning')}, "
        f"{sev['info']} info"
    )
    unknown = sum(view.rows.unknown for view in views)
    if unknown:
        _say(
            f"{_plural(unknown, 'job')} with a node or GPU count that a template placeholder leaves unknown "
            "(counted as one node, no GPUs; give the values with --set or --env-file)"
        )
    understood = sum(view.rows.understood for view in views)
    statements = sum(view.rows.statements for view in views)
    if statements:
        _say(
            f"shell bodies: {understood} of {_plural(statements, 'statement')} read by the full parser "
            f"({100 * understood / statements:.1f}%); the rest by the tolerant reader (SHELL-UNPARSED)"
        )
    lines = [line for view in views for line in view.rows.diagnostics]
    if show_diagnostics and lines:
        # one write: a line per diagnostic, as many as there are (tens of thousands on a large site)
        sys.stdout.write("\n" + _printable("\n".join(lines)) + "\n")
    return counted.errors


def _print_counts(summary: dict[str, Any]) -> None:
    """The counts of a large scan, before its rows: files by format, jobs by kind, diagnostics by code."""

    def listed(counts: dict[str, int]) -> str:
        return ", ".join(f"{name} {n}" for name, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))

    _say(f"{_plural(summary['files'], 'file')}: {listed(summary['by_format']) or 'none'}")
    _say(f"{_plural(summary['jobs'], 'job')}: {listed(summary['by_kind']) or 'none'}")
    found = sum(summary["by_code"].values())
    _say(f"{_plural(found, 'diagnostic')}: {listed(summary['by_code']) or 'none'}")
    _say()


class Target(StrEnum):
    """The --to choices: the schedulers a job can go to."""

    kubernetes = Format.KUBERNETES.value
    slurm = Format.SLURM.value


def _usage_error(exc: api.UsageError) -> typer.Exit:
    _err().print(f"migrate: {exc}", markup=False)
    return typer.Exit(2)


@contextmanager
def _usage_errors() -> Iterator[None]:
    """A usage error inside the block is its one line on stderr and exit status 2."""
    from migrate import UsageError

    try:
        yield
    except UsageError as exc:
        raise _usage_error(exc) from None


def _checked_inputs(
    paths: list[str], set_values: list[str] | None, env_file: list[str] | None, helm_values: list[str] | None
) -> TemplateInputs:
    """The paths checked, then the template values the command was given."""
    _check_paths(paths)
    return _template_inputs(set_values, env_file, helm_values)


def _template_inputs(
    set_values: list[str] | None, env_file: list[str] | None, helm_values: list[str] | None
) -> TemplateInputs:
    if not (set_values or env_file or helm_values):
        # no values to check: the api, which loads the planner and the writers, is not needed
        from migrate.scan.templates import NO_TEMPLATE_INPUTS

        return NO_TEMPLATE_INPUTS
    from migrate import api

    try:
        return api.template_inputs(set_values or [], env_file or [], helm_values or [])
    except api.UsageError as exc:
        raise _usage_error(exc) from None


DEFAULT_FLAVOR = "auto"
DEFAULT_CONTAINER_RUNTIME = "pyxis"
FlavorOption = Annotated[
    str | None,
    typer.Option(
        "--flavor",
        help="Kubernetes object to write (--to kubernetes): auto, job, jobset, volcano, kueue, pytorchjob, "
        "mpijob, cronjob, slurm-bridge, rayjob, lws. Default: auto.",
    ),
]
StyleOption = Annotated[
    str,
    typer.Option(
        "--style",
        help="How the pods run a Slurm script (--to kubernetes): native (the step's launcher in the "
        "container, no shims), emulate (the script with srun/scontrol shims) or auto (native when "
        "every statement allows it). Default: auto.",
    ),
]
ContainerRuntimeOption = Annotated[
    str | None,
    typer.Option(
        "--container-runtime",
        help=(
            "How sbatch scripts run containers (--to slurm): pyxis, apptainer, shifter, podman-hpc or none. "
            "Default: pyxis."
        ),
    ),
]


WorkflowOption = Annotated[
    str | None,
    typer.Option(
        "--workflow",
        help="What runs dependency chains (--to kubernetes): argo (an Argo Workflow), jobflow (a Volcano "
        "JobFlow) or script (submit.sh with kubectl). Default: argo when available, else script.",
    ),
]


def _workflow_choice(to: Target, workflow: str | None) -> str | None:
    """``--workflow`` is for Kubernetes only: Slurm chains jobs itself with --dependency."""
    if to is Target.slurm and workflow is not None:
        _err().print(
            "migrate: --workflow picks what runs the dependency chains on Kubernetes and does not apply to "
            "--to slurm; the sbatch scripts chain themselves with --dependency in submit.sh (use "
            "--container-runtime to choose how they run containers)",
            markup=False,
        )
        raise typer.Exit(2)
    return workflow


STYLES = ("auto", "native", "emulate")


def _style_choice(to: Target, style: str) -> str:
    """``--style`` is for Kubernetes only, and one of STYLES."""
    if style not in STYLES:
        _err().print(f"migrate: unknown --style {style!r}; expected one of {', '.join(STYLES)}", markup=False)
        raise typer.Exit(2)
    if to is Target.slurm and style != "auto":
        _err().print(
            "migrate: --style chooses how pods run a Slurm script and does not apply to --to slurm",
            markup=False,
        )
        raise typer.Exit(2)
    return style


def _writer_choice(to: Target, flavor: str | None, container_runtime: str | None) -> str:
    """The one choice the writer of ``to`` takes; the option of the other direction is a usage error."""
    wrong = None
    if to is Target.slurm and flavor is not None:
        wrong = (
            "--flavor picks the Kubernetes object and does not apply to --to slurm; use "
            "--container-runtime pyxis|apptainer|shifter|podman-hpc|none to choose how the sbatch scripts "
            "run containers"
        )
    elif to is Target.kubernetes and container_runtime is not None:
        wrong = (
            "--container-runtime chooses how sbatch scripts run containers and does not apply to "
            "--to kubernetes; use --flavor to choose the Kubernetes object"
        )
    if wrong is not None:
        _err().print(f"migrate: {wrong}", markup=False)
        raise typer.Exit(2)
    if to is Target.slurm:
        return container_runtime or DEFAULT_CONTAINER_RUNTIME
    return flavor or DEFAULT_FLAVOR


ConfigOption = Annotated[
    str | None,
    typer.Option(
        "--config",
        "-c",
        help="Site configuration (default: the nearest migrate.yaml above the given paths).",
        metavar="FILE",
    ),
]
ForceOption = Annotated[bool, typer.Option("--force", help="Replace files that already exist in --out.")]


def _repeatable(flag: str, help_text: str, metavar: str) -> Any:
    """A --flag VALUE that may be given several times."""
    return typer.Option(flag, help=help_text, metavar=metavar)


SetOption = Annotated[
    list[str] | None,
    _repeatable(
        "--set",
        "A value for templates: $NAME and ${NAME} in manifests, ${NAME} and <NAME> in #SBATCH lines "
        "(repeatable; wins over --env-file).",
        "NAME=VALUE",
    ),
]
EnvFileOption = Annotated[
    list[str] | None,
    _repeatable(
        "--env-file",
        "Values for templates from NAME=value or export NAME=value lines (repeatable).",
        "FILE",
    ),
]
HelmValuesOption = Annotated[
    list[str] | None,
    _repeatable(
        "--values", "A values file for helm template, for the Helm charts scanned (repeatable).", "FILE"
    ),
]
AccountingOption = Annotated[
    list[str] | None,
    _repeatable(
        "--accounting",
        "What ran: sacct --parsable2 output or kubectl get jobs -A -o json (repeatable).",
        "FILE",
    ),
]
InventoryOption = Annotated[
    list[str] | None,
    _repeatable(
        "--inventory",
        "Nodes per partition: a slurm.conf or ParallelCluster config (repeatable).",
        "FILE",
    ),
]

CoexistenceOption = Annotated[
    str,
    typer.Option(
        "--coexistence",
        help="How both schedulers share the nodes: partition, slinky, slurm-bridge, or auto (the plan "
        "chooses and says why).",
        metavar="MODE",
    ),
]


@app.command("plan")
def plan_command(
    paths: Annotated[list[str], typer.Argument(help="Files or folders to scan.", metavar="PATHS")],
    to: Annotated[Target, typer.Option("--to", help="The scheduler to move to.")],
    out: Annotated[
        str | None, typer.Option("--out", "-o", help="Write plan.json into this folder.", metavar="DIR")
    ] = None,
    config: ConfigOption = None,
    force: ForceOption = False,
    output_format: Annotated[
        OutputFormat, typer.Option("--format", "-f", help="table for people, json prints plan.json.")
    ] = OutputFormat.table,
    accounting: AccountingOption = None,
    inventory: InventoryOption = None,
    coexistence: CoexistenceOption = AUTO_COEXISTENCE,
    set_values: SetOption = None,
    env_file: EnvFileOption = None,
    helm_values: HelmValuesOption = None,
) -> None:
    """Classify every job, group them into migration units and lay out the phased plan."""
    from migrate import api
    from migrate.plan.planner import plan_json

    templating = _checked_inputs(paths, set_values, env_file, helm_values)
    with _usage_errors():
        run = api.run_plan(
            paths,
            to.value,
            config=config,
            out=out,
            force=force,
            templating=templating,
            accounting=accounting or [],
            inventory=inventory or [],
            coexistence=coexistence,
        )
    _say_config(run.config_path)
    if output_format is OutputFormat.json:
        sys.stdout.write(plan_json(run.plan))
        return
    _print_plan(run)


PHASE_COLUMNS = (
    ("phase", "left"),
    ("name", "left"),
    ("steps", "right"),
    ("units", "right"),
    ("jobs", "right"),
    ("target nodes", "right"),
    ("by partition", "left"),
    ("gates", "right"),
)


def _print_plan(run: api.PlanRun) -> None:
    doc = run.plan.to_dict()
    summary = doc["summary"]
    _out().print(
        f"[bold]Plan: {doc['source']} -> {doc['target']}[/bold] for site {doc['site'] or '-'}"
        f" (config: {run.config_path or 'defaults'})"
    )
    actions = ", ".join(f"{k} {v}" for k, v in summary["by_action"].items())
    patterns = ", ".join(f"{k} {v}" for k, v in summary["by_pattern"].items())
    _out().print(
        f"{_plural(summary['jobs'], 'job')} in {_plural(summary['units'], 'migration unit')}: {actions}"
    )
    _out().print(f"workload patterns: {patterns}")
    if doc["shared_filesystems"]:
        _out().print(f"shared file systems (mount on both sides): {', '.join(doc['shared_filesystems'])}")
    for cycle in doc["cycles"]:
        _out().print(f"[red]dependency cycle:[/red] {' -> '.join(cycle)}", markup=True)
    rows: list[list[str]] = []
    for phase in doc["phases"]:
        capacity = phase.get("capacity", [])
        target_nodes = sum(c.get("target_nodes", 0) for c in capacity)
        rows.append(
            [
                phase["id"],
                phase["name"],
                str(len(phase.get("steps", []))),
                str(len(phase.get("units", []))),
                str(len(phase.get("jobs", []))),
                str(target_nodes) if capacity else "",
                ", ".join(f"{c['partition']} {c['target_nodes']}" for c in capacity if c.get("target_nodes")),
                str(len(phase.get("gates", []))),
            ]
        )
    _print_table(PHASE_COLUMNS, rows, fit=6, paths=False, title="phases")
    if "usage" in doc:
        usage = doc["usage"]
        _out().print(
            f"demand from accounting: {_plural(usage['matched_jobs'], 'job')} matched, "
            f"{len(usage['never_ran'])} did not run, "
            f"{_plural(len(usage['unmatched']), 'name')} not in the scan",
            markup=False,
        )
    if "coexistence" in doc:
        mode = doc["coexistence"]
        why = "; ".join(r["detail"] for r in mode["reasons"])
        _out().print(f"coexistence: {mode['mode']} ({why})", markup=False)
    for warning in doc["warnings"]:
        _out().print(f"warning: {warning}", markup=False)
    if run.written:
        _out().print(f"wrote {', '.join(run.written)}")


@app.command("report")
def report_command(
    paths: Annotated[list[str], typer.Argument(help="Files or folders to scan.", metavar="PATHS")],
    to: Annotated[Target, typer.Option("--to", help="The scheduler to move to.")],
    out: Annotated[
        str,
        typer.Option("--out", "-o", help="Folder for report.md, report.html and plan.json.", metavar="DIR"),
    ],
    config: ConfigOption = None,
    force: ForceOption = False,
    translate: Annotated[
        bool,
        typer.Option(
            "--translate/--no-translate",
            help="Also translate the jobs into OUT/translated and show every job's fidelity table.",
        ),
    ] = False,
    flavor: FlavorOption = None,
    style: StyleOption = "auto",
    container_runtime: ContainerRuntimeOption = None,
    workflow: WorkflowOption = None,
    accounting: AccountingOption = None,
    inventory: InventoryOption = None,
    coexistence: CoexistenceOption = AUTO_COEXISTENCE,
    set_values: SetOption = None,
    env_file: EnvFileOption = None,
    helm_values: HelmValuesOption = None,
) -> None:
    """Write the migration report: Markdown and a self-contained HTML page with pictures."""
    from migrate import api

    choice = _writer_choice(to, flavor, container_runtime)
    chain_engine = _workflow_choice(to, workflow)
    templating = _checked_inputs(paths, set_values, env_file, helm_values)
    with _usage_errors():
        translations = None
        if translate:
            translated = api.run_translate(
                paths,
                to.value,
                os.path.join(out, "translated"),
                flavor=choice if to is Target.kubernetes else DEFAULT_FLAVOR,
                config=config,
                force=force,
                runtime=choice if to is Target.slurm else DEFAULT_CONTAINER_RUNTIME,
                workflow=chain_engine,
                templating=templating,
                style=_style_choice(to, style),
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
            coexistence=coexistence,
            templating=templating,
        )
    _say_config(run.config_path)
    summary = run.plan.to_dict()["summary"]
    _out().print(
        f"{_plural(summary['jobs'], 'job')}, {_plural(summary['units'], 'migration unit')}, "
        + (
            f"phases {', '.join(summary['phases'])} (end: {summary['end_state']})"
            if summary["phases"]
            else "no phases: nothing to move"
        )
    )
    if translate:
        _out().print(f"translated jobs in {os.path.join(out, 'translated')}")
    _out().print(f"wrote {', '.join(p for p in run.written if not p.endswith('.svg'))} and the pictures")


@app.command("graph")
def graph_command(
    paths: Annotated[list[str], typer.Argument(help="Files or folders to scan.", metavar="PATHS")],
    out: Annotated[
        str, typer.Option("--out", "-o", help="Folder for graph.graphml and graph.json.", metavar="DIR")
    ],
    config: ConfigOption = None,
    force: ForceOption = False,
    set_values: SetOption = None,
    env_file: EnvFileOption = None,
    helm_values: HelmValuesOption = None,
) -> None:
    """Export the graph of jobs, storage, monitoring, images, queues and dependencies."""
    from migrate import api

    templating = _checked_inputs(paths, set_values, env_file, helm_values)
    with _usage_errors():
        run = api.run_graph(paths, out, config=config, force=force, templating=templating)
    _say_config(run.config_path)
    _out().print(
        f"{_plural(run.graph.number_of_nodes(), 'node')}, {_plural(run.graph.number_of_edges(), 'edge')}; "
        f"wrote {', '.join(run.written)}"
    )


@app.command("translate")
def translate_command(
    paths: Annotated[list[str], typer.Argument(help="Files or folders to translate.", metavar="PATHS")],
    to: Annotated[Target, typer.Option("--to", help="The format to write.")],
    out: Annotated[str, typer.Option("--out", "-o", help="Folder for the translated jobs.", metavar="DIR")],
    flavor: FlavorOption = None,
    style: StyleOption = "auto",
    container_runtime: ContainerRuntimeOption = None,
    workflow: WorkflowOption = None,
    config: ConfigOption = None,
    force: ForceOption = False,
    strict: Annotated[
        bool,
        typer.Option(
            "--strict",
            help="Exit 1 when anything was dropped, a job gets less than Slurm gave it, or one fell back.",
        ),
    ] = False,
    output_format: Annotated[
        OutputFormat, typer.Option("--format", "-f", help="table for people, json for tools.")
    ] = OutputFormat.table,
    inventory: InventoryOption = None,
    set_values: SetOption = None,
    env_file: EnvFileOption = None,
    helm_values: HelmValuesOption = None,
) -> None:
    """Translate job files to the other scheduler, recording what was mapped, approximated or dropped."""
    from migrate import api

    # Towards Slurm the writer's one choice is how containers run; towards Kubernetes, the object.
    choice = _writer_choice(to, flavor, container_runtime)
    chain_engine = _workflow_choice(to, workflow)
    templating = _checked_inputs(paths, set_values, env_file, helm_values)
    with _usage_errors():
        run = api.run_translate(
            paths,
            to.value,
            out,
            flavor=choice if to is Target.kubernetes else DEFAULT_FLAVOR,
            config=config,
            force=force,
            runtime=choice if to is Target.slurm else DEFAULT_CONTAINER_RUNTIME,
            inventory=inventory or [],
            workflow=chain_engine,
            templating=templating,
            style=_style_choice(to, style),
        )
    _say_config(run.config_path)
    if output_format is OutputFormat.json:
        sys.stdout.write(json.dumps(run.to_dict(), indent=1, ensure_ascii=False) + "\n")
    else:
        _print_translation(run, paths, choice)
    if strict:
        problems = _strict_problems(run.result.translations, len(run.result.fallbacks), choice)
        if problems:
            _err().print(f"migrate: --strict: {' and '.join(problems)} (see translation.json)", markup=False)
            raise typer.Exit(1)


TRANSLATE_COLUMNS = (
    ("source", "left"),
    ("output", "left"),
    ("flavor", "left"),
    ("mapped", "right"),
    ("approx.", "right"),
    ("dropped", "right"),
    ("diag", "right"),
)


# What a fallback's reason says the requested flavor could not do (see translators/kubernetes/flavors.py).
def _print_translation(run: api.TranslateRun, paths: Sequence[str], requested: str) -> None:
    result = run.result
    shown, base = _relative_to(paths)
    fell_back = {id(t) for t in result.fallbacks}
    totals: Counter[str] = Counter()
    rows: list[list[str]] = []
    for t in result.translations:
        counts = t.fidelity.counts()
        totals.update(counts)
        source = shown(t.source)
        rows.append(
            [
                f"{source}:{t.line}" if t.line else source,
                t.name,
                f"{t.flavor} (fallback)" if id(t) in fell_back else t.flavor,
                str(counts[FidelityStatus.MAPPED]),
                str(counts[FidelityStatus.APPROXIMATED]),
                str(counts[FidelityStatus.DROPPED]),
                str(len(t.diagnostics)),
            ]
        )
    columns: tuple[tuple[str, str], ...] = TRANSLATE_COLUMNS
    if any(t.style for t in result.translations):  # Kubernetes: native or emulated, and what decided
        columns = (*columns[:3], ("style", "left"), *columns[3:])
        for row, t in zip(rows, result.translations, strict=True):
            row.insert(3, _style_cell(t))
    _print_table(columns, rows, fit=0, caption=f"sources relative to {base}")
    translated = len(result.with_artifacts)
    summary = (
        f"\n{_plural(translated, 'job')} translated to {result.target} in {run.out}: "
        f"{_plural(totals[FidelityStatus.MAPPED], 'item')} mapped, "
        f"{totals[FidelityStatus.APPROXIMATED]} approximated, {totals[FidelityStatus.DROPPED]} dropped"
    )
    if fell_back:
        summary += f"; {len(fell_back)} of {_plural(translated, 'job')} fell back from --flavor {requested}"
    if run.skipped:
        left = len(run.skipped)
        summary += (
            f"; {_plural(left, 'job')} already in that format {'was' if left == 1 else 'were'} left alone"
        )
    _out().print(summary, markup=False)
    without = Counter((t.flavor, t.flavor_reason) for t in result.without_artifacts)
    if without:
        groups = sorted(without.items(), key=lambda item: (-item[1], item[0]))
        _out().print(
            f"{_plural(without.total(), 'job')} got no files of their own: "
            + ", ".join(f"{n} {flavor} ({reason})" for (flavor, reason), n in groups),
            markup=False,
        )
    reasons = Counter(_fallback_reason(t) for t in result.fallbacks)
    for reason, n in sorted(reasons.items(), key=lambda item: (-item[1], item[0])):
        _out().print(
            f"fell back from --flavor {requested}: {_plural(n, 'job')}, {reason}; "
            "each got the flavor auto picks (--strict fails on this)",
            markup=False,
        )
    styled = [t for t in result.translations if t.style]
    if styled:
        native_count = sum(t.style == "native" for t in styled)
        _out().print(
            f"{native_count} of {_plural(len(styled), 'job')} run natively (the step's launcher in the "
            "container); the others run the script with Slurm shims (the style column names the line "
            "that decided it)",
            markup=False,
        )
    _out().print("every decision and its reason: " + os.path.join(run.out, "translation.json"), markup=False)


def _style_cell(t: Translation) -> str:
    if not t.style or t.style == "native":
        return t.style
    return f"emulate (line {t.style_line})" if t.style_line else "emulate"


def _fallback_reason(t: Translation) -> str:
    return t.fallback or t.flavor_reason


def _strict_problems(translations: Sequence[Translation], fallbacks: int, requested: str) -> list[str]:
    dropped = sum(len(t.dropped) for t in translations)
    problems = []
    if dropped:
        problems.append(f"{_plural(dropped, 'item')} {'was' if dropped == 1 else 'were'} dropped")
    lost = sum(len(t.losses) for t in translations)
    if lost:
        problems.append(f"{_plural(lost, 'item')} give jobs less than Slurm allocated them")
    if fallbacks:
        problems.append(f"{_plural(fallbacks, 'job')} fell back from --flavor {requested}")
    return problems


@app.command("init")
def init_command(
    paths: Annotated[list[str], typer.Argument(help="Files or folders to scan.", metavar="PATHS")],
    out: Annotated[
        str | None,
        typer.Option(
            "--out",
            "-o",
            help="Where to write the configuration (default: migrate.yaml in the folder the paths share, "
            "where plan and translate look for it).",
            metavar="FILE",
        ),
    ] = None,
    site: Annotated[str, typer.Option(help="The site's name.", metavar="NAME")] = "site",
    force: ForceOption = False,
    set_values: SetOption = None,
    env_file: EnvFileOption = None,
    helm_values: HelmValuesOption = None,
) -> None:
    """Write a starter migrate.yaml from a scan, with REPLACE-ME where only the site knows the answer."""
    from migrate import api

    templating = _checked_inputs(paths, set_values, env_file, helm_values)
    with _usage_errors():
        run = api.run_init(paths, out, site=site, force=force, templating=templating)
    _out().print(
        f"wrote {', '.join(run.written)}: {_plural(run.placeholders, 'value')} to fill in (REPLACE-ME)"
    )
    written = os.path.realpath(run.written[0]) if run.written else None
    if run.plan_reads is not None and os.path.realpath(run.plan_reads) == written:
        _out().print(f"plan and translate on {' '.join(paths)} read it (the nearest migrate.yaml above them)")
    else:
        instead = f"read {run.plan_reads}" if run.plan_reads else "find no migrate.yaml"
        _out().print(
            f"plan and translate on {' '.join(paths)} {instead}: "
            f"pass --config {run.written[0]} to use this one"
        )


@app.command("validate")
def validate_command(
    path: Annotated[str, typer.Argument(help="A translated output folder or one file.", metavar="PATH")],
    output_format: Annotated[
        OutputFormat, typer.Option("--format", "-f", help="table for people, json for tools.")
    ] = OutputFormat.table,
    set_values: SetOption = None,
    env_file: EnvFileOption = None,
) -> None:
    """Check generated manifests (strict OpenAPI and CRD schemas) and sbatch scripts (sbatch --test-only)."""
    from migrate import api

    templating = _template_inputs(set_values, env_file, None)
    try:
        run = api.run_validate(path, templating)
    except api.UsageError as exc:
        raise _usage_error(exc) from None
    if output_format is OutputFormat.json:
        sys.stdout.write(json.dumps(run.to_dict(), indent=1, ensure_ascii=False) + "\n")
    else:
        _print_validation(run)
    if not run.ok:
        raise typer.Exit(1)


def _print_validation(run: api.ValidateRun) -> None:
    report = run.kubernetes
    for problem in report.problems:
        _out().print(problem.render(), markup=False)
    if report.files:
        kinds = ", ".join(f"{k} {n}" for k, n in report.kinds.items()) or "none"
        _out().print(
            f"kubernetes: {_plural(report.objects, 'object')} in {_plural(len(report.files), 'file')} "
            f"checked in strict mode against Kubernetes {report.k8s_version} and the CRD schemas ({kinds}): "
            f"{_plural(len(report.problems), 'problem')}",
            markup=False,
        )
    for result in run.slurm:
        if not result.accepted:
            _out().print(f"{result.path}: rejected ({result.method}): {result.message}", markup=False)
    if not run.slurm:
        return
    rejected = sum(1 for r in run.slurm if not r.accepted)
    how = (
        "by sbatch --test-only"
        if run.controller
        else "statically (the #! line, every #SBATCH option, bash -n)"
    )
    _out().print(
        f"slurm: {_plural(len(run.slurm), 'script')} checked {how}: {rejected} rejected", markup=False
    )
    if not run.controller:
        _out().print(
            "no Slurm controller answered (SLURM_CONF is not set, or scontrol ping found no slurmctld), "
            "so sbatch --test-only did not run; for a private one on this machine run "
            'scripts/slurm-sandbox.sh start, then eval "$(scripts/slurm-sandbox.sh env)" and validate again',
            markup=False,
        )


def main() -> None:
    """Run the CLI; usage errors and Ctrl-C end in one line on stderr, never a traceback."""
    try:
        code = app(standalone_mode=False)
    except KeyboardInterrupt:
        code = EXIT_INTERRUPTED  # typer turns Ctrl-C into 130 itself; this catches it outside a command
    except Exception as exc:
        _exit(_click_error(exc))
    if code == EXIT_INTERRUPTED:
        _err().print(INTERRUPTED, markup=False)
    _exit(code if isinstance(code, int) else 0)


def _exit(code: int) -> NoReturn:
    # The command is over and what it wrote is complete. The interpreter's shutdown puts back the
    # default Ctrl-C handler, which would end the process by the signal, with no line said.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    sys.exit(code)


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
