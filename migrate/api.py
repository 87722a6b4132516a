"""What the CLI commands call: one function per command, returning data.

The library never prints or exits; user mistakes come back as ``UsageError``
with a one-line message saying what is wrong and what to do.
"""

from __future__ import annotations

import io
import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import networkx as nx

from migrate import UsageError, init_config, ir, slurmcheck, translate
from migrate.fidelity import Translation
from migrate.graph import export as graph_export
from migrate.graph.builder import build_graph
from migrate.outputs import OutputError, OutputTree
from migrate.plan import planner as plan
from migrate.plan.coexistence import check_choice
from migrate.plan.coexistence_artifacts import coexistence_artifacts
from migrate.render import plural
from migrate.reports.model import build_model
from migrate.reports.plan_types import read_plan
from migrate.reports.render import render_report
from migrate.scan import cache, scanner, templates
from migrate.scan import results as scan_results
from migrate.scan.node_pools import read_node_pools
from migrate.site import config as siteconfig
from migrate.site.config import SiteConfig
from migrate.site.inventory import Inventory, InventoryError, merge_inventory, parse_inventory
from migrate.site.locate import load_config
from migrate.site.usage import AccountingError, AccountingFile, parse_accounting
from migrate.translate import TranslationSet
from migrate.translators.kubernetes import chains as k8s_chains
from migrate.translators.kubernetes import validate as k8s_validate
from migrate.vocab import AUTO_COEXISTENCE, Direction, FidelityStatus, Format

# The schedulers a plan or a translation can go to, with the way there.
TARGETS: dict[str, Direction] = {d.target: d for d in Direction}


def default_scan_options() -> scan_results.ScanOptions:
    """Commands re-read only what changed since the last scan (the cache is keyed by content)."""
    return scan_results.ScanOptions(cache=cache.default_dir())


def template_values(assignments: Sequence[str] = (), env_files: Sequence[str] = ()) -> templates.Values:
    """The values of ``--env-file`` files (in order) and ``--set NAME=VALUE`` (last wins)."""
    try:
        files = [templates.parse_env_file(_read_input(path, "--env-file"), path) for path in env_files]
        pairs = [templates.parse_assignment(text, "--set") for text in assignments]
    except templates.ValuesError as exc:
        raise UsageError(f"bad template value: {exc}") from None
    return templates.combine(files, pairs)


def template_inputs(
    assignments: Sequence[str] = (), env_files: Sequence[str] = (), helm_values: Sequence[str] = ()
) -> templates.TemplateInputs:
    """``--set``, ``--env-file`` and ``--values`` (values files for helm, checked to exist)."""
    for path in helm_values:
        if not Path(path).is_file():
            raise UsageError(f"no such file: {path}; check the path given to --values")
    values = template_values(assignments, env_files)
    return templates.TemplateInputs(values, tuple(os.path.abspath(p) for p in helm_values))


def scan_options(
    options: scan_results.ScanOptions | None,
    inputs: templates.TemplateInputs = templates.NO_TEMPLATE_INPUTS,
    site: SiteConfig | None = None,
) -> scan_results.ScanOptions:
    """The options of a command's scan, with the template values it was given and the site's own
    SPANK options (so that the sbatch reader knows them)."""
    return replace(
        options or default_scan_options(),
        values=inputs.values,
        helm_values=inputs.helm_values,
        spank_options=site.spank_options if site is not None else (),
    )


def load_accounting(paths: Sequence[str]) -> list[AccountingFile]:
    """The ``--accounting`` files: sacct dumps or kubectl Job lists, told apart by content."""
    try:
        return [parse_accounting(_read_input(path, "--accounting"), path) for path in paths]
    except AccountingError as exc:
        raise UsageError(f"bad accounting file: {exc}") from exc


def load_inventory(paths: Sequence[str]) -> list[Inventory]:
    """The ``--inventory`` files: slurm.conf or ParallelCluster configurations, told apart by content."""
    try:
        return [parse_inventory(_read_input(path, "--inventory"), path) for path in paths]
    except InventoryError as exc:
        raise UsageError(f"bad inventory file: {exc}") from exc


def _read_input(path: str, option: str) -> str:
    try:
        # sacct prints job names as users typed them: a stray byte must not lose the whole dump
        return Path(path).read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        raise UsageError(f"no such file: {path}; check the path given to {option}") from None
    except OSError as exc:
        raise UsageError(f"cannot read {path} (given to {option}): {exc.strerror or exc}") from None


def direction_for(target: str) -> Direction:
    try:
        return TARGETS[target]
    except KeyError:
        raise UsageError(f"unknown target {target!r}; use one of: {', '.join(TARGETS)}") from None


@dataclass
class PlanRun:
    scan: scan_results.ScanResult
    plan: plan.Plan
    config_path: str | None
    written: list[str]


def run_plan(
    paths: Sequence[str],
    target: str,
    config: str | None = None,
    out: str | None = None,
    force: bool = False,
    options: scan_results.ScanOptions | None = None,
    templating: templates.TemplateInputs = templates.NO_TEMPLATE_INPUTS,
    accounting: Sequence[str] = (),
    inventory: Sequence[str] = (),
    coexistence: str = AUTO_COEXISTENCE,
) -> PlanRun:
    """Scan and plan; ``accounting`` and ``inventory`` are the files given to the options of those names.

    ``coexistence`` is a mode or ``auto``; ``out`` gets the mode's artifacts under ``coexistence/``.
    """
    direction = direction_for(target)
    coexistence = coexistence_choice(coexistence)
    site, config_path = load_config(config, paths)
    usage, clusters = load_accounting(accounting), load_inventory(inventory)
    result = scanner.scan(paths, scan_options(options, templating, site))
    the_plan = plan.build_plan(
        result.jobs,
        direction,
        site,
        usage=usage,
        inventory=clusters,
        coexistence=coexistence,
        diagnostics=result.diagnostics,
    )
    written: list[str] = []
    if out:
        tree = OutputTree()
        tree.add("plan.json", plan.plan_json(the_plan))
        _add_artifacts(tree, the_plan, site, clusters)
        written = _commit(tree, out, force)
    return PlanRun(result, the_plan, config_path, written)


@dataclass
class GraphRun:
    scan: scan_results.ScanResult
    graph: nx.MultiDiGraph
    written: list[str]
    config_path: str | None = None


def run_graph(
    paths: Sequence[str],
    out: str,
    config: str | None = None,
    force: bool = False,
    options: scan_results.ScanOptions | None = None,
    templating: templates.TemplateInputs = templates.NO_TEMPLATE_INPUTS,
) -> GraphRun:
    site, config_path = load_config(config, paths)
    result = scanner.scan(paths, scan_options(options, templating, site))
    graph = build_graph(result.jobs, site)
    buffer = io.BytesIO()
    graph_export.to_graphml(graph, buffer)
    tree = OutputTree()
    tree.add("graph.graphml", buffer.getvalue().decode("utf-8"))
    tree.add("graph.json", graph_export.to_json(graph))
    return GraphRun(result, graph, _commit(tree, out, force), config_path)


@dataclass
class ReportRun:
    scan: scan_results.ScanResult
    plan: plan.Plan
    graph: nx.MultiDiGraph
    config_path: str | None
    written: list[str]


def run_report(
    paths: Sequence[str],
    target: str,
    out: str,
    config: str | None = None,
    force: bool = False,
    translations: TranslationSet | Sequence[Translation] | None = None,
    options: scan_results.ScanOptions | None = None,
    templating: templates.TemplateInputs = templates.NO_TEMPLATE_INPUTS,
    artifact_root: str = "",
    accounting: Sequence[str] = (),
    inventory: Sequence[str] = (),
    coexistence: str = AUTO_COEXISTENCE,
) -> ReportRun:
    """Scan, plan and write ``report.md``, ``report.html``, ``img/*.svg`` and ``plan.json`` into ``out``.

    With ``translations`` (the plan stays the one ``run_plan`` makes) the report adds
    each job's fidelity table with links to its files, found at
    ``artifact_root`` (relative to ``out``; empty: the translation was written
    into ``out`` too). ``accounting`` and ``inventory`` are as for ``run_plan``.
    """
    direction = direction_for(target)
    coexistence = coexistence_choice(coexistence)
    site, config_path = load_config(config, paths)
    usage, clusters = load_accounting(accounting), load_inventory(inventory)
    result = scanner.scan(paths, scan_options(options, templating, site))
    # The plan is the one `migrate plan` makes of the same input: what the translations drop shows in
    # each job's fidelity table, and never moves a unit into or out of the pilot.
    the_plan, plan_graph = plan.build_plan_and_graph(
        result.jobs,
        direction,
        site,
        usage=usage,
        inventory=clusters,
        coexistence=coexistence,
        diagnostics=result.diagnostics,
    )
    # An inventory completes the partitions the plan's graph was built with; the report shows the site's own.
    graph = build_graph(result.jobs, site) if clusters else plan_graph
    text = plan.plan_json(the_plan)
    tree = OutputTree()
    tree.add("plan.json", text)
    coexistence_files = _add_artifacts(tree, the_plan, site, clusters)
    # The report reads back the very text written to plan.json: its figures cannot drift from the file.
    model = build_model(
        result,
        read_plan(text),
        graph,
        translations,
        paths=list(paths),
        config_path=config_path,
        artifact_root=artifact_root,
        coexistence_files=coexistence_files,
    )
    for rel, content in sorted(render_report(model).items()):
        tree.add(rel, content)
    return ReportRun(result, the_plan, graph, config_path, _commit(tree, out, force))


def coexistence_choice(value: str) -> str:
    try:
        return check_choice(value)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _add_artifacts(
    tree: OutputTree, the_plan: plan.Plan, site: SiteConfig, clusters: Sequence[Inventory]
) -> tuple[str, ...]:
    """The chosen coexistence mode's files under ``coexistence/``; their names."""
    made = coexistence_artifacts(the_plan, merge_inventory(site, clusters)[0], clusters)
    for rel, content in sorted(made.items()):
        tree.add(f"coexistence/{rel}", content)
    return tuple(sorted(made))


def _commit(tree: OutputTree, out: str, force: bool) -> list[str]:
    try:
        return tree.commit(out, force=force)
    except OutputError as exc:
        raise UsageError(str(exc)) from exc


@dataclass
class TranslateRun:
    scan: scan_results.ScanResult
    result: translate.TranslationSet
    skipped: list[str]  # job ids already in the target format
    written: list[str]
    config_path: str | None = None
    out: str = ""

    def to_dict(self) -> dict[str, object]:
        """What ``translate --format json`` prints; README documents the shape."""
        translations = self.result.translations
        fell_back = {id(t) for t in self.result.fallbacks}
        totals: dict[str, int] = {
            status: sum(t.fidelity.counts()[status] for t in translations) for status in FidelityStatus
        }
        return {
            "ir_version": ir.IR_VERSION,
            "target": self.result.target,
            "out": self.out,
            "config": self.config_path,
            "jobs": [
                {
                    "source": t.source,
                    "line": t.line,
                    "job": t.job_id,
                    "name": t.name,
                    "flavor": t.flavor,
                    "flavor_reason": t.flavor_reason,
                    "fallback": id(t) in fell_back,
                    **({"style": t.style, "style_reason": t.style_reason} if t.style else {}),
                    "artifacts": [f"{t.name}/{rel}" for rel in sorted(t.files)],
                    "counts": t.fidelity.counts(),
                    "diagnostics": [d.to_dict() for d in t.diagnostics],
                }
                for t in translations
            ],
            "summary": {
                "jobs": len(translations),
                "translated": len(self.result.with_artifacts),
                "without_artifacts": len(self.result.without_artifacts),
                "fallbacks": len(fell_back),
                "already_in_target": len(self.skipped),
                **totals,
            },
        }


def run_translate(
    paths: Sequence[str],
    target: str,
    out: str,
    flavor: str = "auto",
    config: str | None = None,
    force: bool = False,
    options: scan_results.ScanOptions | None = None,
    templating: templates.TemplateInputs = templates.NO_TEMPLATE_INPUTS,
    runtime: str = "auto",
    inventory: Sequence[str] = (),
    workflow: str | None = None,
    style: str = "auto",
) -> TranslateRun:
    """``flavor`` picks the Kubernetes object, ``runtime`` how Slurm scripts run containers,
    ``workflow`` what runs dependency chains on Kubernetes (None: Argo when available, else
    submit.sh); ``inventory`` (slurm.conf or ParallelCluster files) completes the partitions the
    jobs are sized by, as for ``run_plan``."""
    direction = direction_for(target)
    if workflow is not None:
        _check_workflow(workflow)
    site, config_path = load_config(config, paths)
    clusters = load_inventory(inventory)
    if clusters:
        site, _ = merge_inventory(site, clusters)
    result = scanner.scan(paths, scan_options(options, templating, site))
    wanted = direction.source  # jobs already in the target's format are not translated again
    jobs = [j for j in result.jobs if j.source.format == wanted]
    skipped = [j.id for j in result.jobs if j.source.format != wanted]
    if not jobs:
        raise UsageError(_nothing_to_translate(target, len(skipped)))
    try:
        translated = translate.translate_jobs(
            jobs,
            to=direction.target,
            flavor=flavor,
            config=site,
            runtime=runtime,
            workflow=workflow,
            style=style,
        )
    except ValueError as exc:  # an unknown flavor or container runtime
        raise UsageError(str(exc)) from exc
    return TranslateRun(result, translated, skipped, _commit(translated.tree, out, force), config_path, out)


def _check_workflow(workflow: str) -> None:
    if workflow not in k8s_chains.workflows():
        raise UsageError(
            f"unknown --workflow {workflow!r}; expected one of {', '.join(k8s_chains.workflows())}"
        )


def _nothing_to_translate(target: str, already: int) -> str:
    if not already:
        return "no jobs found in the given paths, nothing to translate; check them with migrate scan"
    other = next(t for t in TARGETS if t != target)
    them = "it" if already == 1 else "them"
    return (
        f"nothing to translate to {target}: the {plural(already, 'job')} found "
        f"{'is' if already == 1 else 'are'} already {target}; use --to {other} to translate {them}"
    )


@dataclass
class ValidateRun:
    kubernetes: k8s_validate.TreeReport
    slurm: list[slurmcheck.CheckResult]

    @property
    def ok(self) -> bool:
        return self.kubernetes.ok and all(r.accepted for r in self.slurm)

    @property
    def controller(self) -> bool:
        """Whether a Slurm controller answered, so that ``sbatch --test-only`` checked the scripts."""
        return any(r.method == slurmcheck.TEST_ONLY for r in self.slurm)

    def to_dict(self) -> dict[str, object]:
        """What ``validate --format json`` prints; README documents the shape."""
        return {
            "ok": self.ok,
            "kubernetes": self.kubernetes.to_dict(),
            "slurm": {
                "controller": self.controller,
                "scripts": len(self.slurm),
                "rejected": sum(1 for r in self.slurm if not r.accepted),
                "results": [r.to_dict() for r in self.slurm],
            },
        }


def run_validate(
    path: str, templating: templates.TemplateInputs = templates.NO_TEMPLATE_INPUTS
) -> ValidateRun:
    """Manifests against the strict schemas; sbatch scripts with ``sbatch --test-only`` or statically.

    Template values (``templating``) are filled in first, as for a scan.
    """
    if not Path(path).exists():
        raise UsageError(f"no such file or folder: {path}; check the path")
    values = templating.values

    def manifest(text: str) -> str:
        return templates.fill(text, Format.KUBERNETES, values)

    def script(text: str) -> str:
        return templates.fill(text, Format.SLURM, values)

    try:
        manifests = k8s_validate.validate_tree(path, render=manifest if values else None)
    except k8s_validate.SchemaUnavailableError as exc:
        raise UsageError(f"cannot validate: {exc}") from exc
    return ValidateRun(manifests, slurmcheck.check_tree(path, render=script if values else None))


@dataclass
class InitRun:
    scan: scan_results.ScanResult
    text: str
    written: list[str]
    # The migrate.yaml plan and translate read for the same paths when given no --config
    # (the nearest above them): the one written, unless another is nearer or none is found.
    plan_reads: str | None = None

    @property
    def placeholders(self) -> int:
        """The values left for the site to fill in."""
        return init_config.placeholders(self.text)


def init_target(paths: Sequence[str]) -> str:
    """Where init writes by default: the folder the scanned paths share (a file's: the folder it is in),
    so that plan and translate on the same paths find it as the nearest migrate.yaml above them."""
    folders = [p if os.path.isdir(p) else os.path.dirname(p) or "." for p in paths]
    common = os.path.commonpath([os.path.abspath(f) for f in folders])
    shown = common if all(os.path.isabs(p) for p in paths) else os.path.relpath(common)
    return os.path.join(shown, siteconfig.CONFIG_NAME)


def run_init(
    paths: Sequence[str],
    out: str | None = None,
    site: str = "site",
    force: bool = False,
    options: scan_results.ScanOptions | None = None,
    templating: templates.TemplateInputs = templates.NO_TEMPLATE_INPUTS,
) -> InitRun:
    """Write a starter ``migrate.yaml`` from a scan of ``paths``, at ``out`` (None: ``init_target``)."""
    out = out or init_target(paths)
    values = scan_options(options, templating).values
    result = scanner.scan(paths, scan_options(options, templating))
    pools = read_node_pools(result.files, values)
    text = init_config.render_starter(result.jobs, site, pools)
    siteconfig.parse_site_config_text(text, out)  # what init writes, plan and translate must read
    tree = OutputTree()
    folder, name = os.path.split(os.path.abspath(out))
    tree.add(name, text)
    written = _commit(tree, folder, force)
    found = siteconfig.find_site_configs(paths)
    return InitRun(result, text, written, found[0] if len(found) == 1 else None)
