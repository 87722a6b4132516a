"""Build the report's view model from a scan, the plan document, the graph and optional translations.

The plan comes in as the document written to plan.json, read back from the
very text that was written (``read_plan``), so every number the report prints
can be found in that file. The result is pure data: rendering it twice gives
the same bytes.

Example::

    doc = read_plan(plan_json(the_plan))
    model = build_model(scan_result, doc, build_graph(jobs, site), paths=["site/"])
    files = render_report(model)        # {"report.md": ..., "report.html": ..., "img/...svg": ...}
"""

from __future__ import annotations

from collections.abc import Sequence

import networkx as nx

from migrate import __version__
from migrate.diagnostics import ERROR
from migrate.fidelity import Translation
from migrate.reports import fmt, model_coexistence, model_plan, model_scan
from migrate.reports.model_graph import graph_view
from migrate.reports.plan_types import PlanDoc
from migrate.reports.scan_facts import job_facts
from migrate.reports.view import ReportModel
from migrate.scan.results import ScanResult
from migrate.translate import TranslationSet
from migrate.vocab import FidelityStatus


def build_model(
    result: ScanResult,
    plan: PlanDoc,
    graph: nx.MultiDiGraph,
    translations: TranslationSet | Sequence[Translation] | None = None,
    *,
    paths: Sequence[str] = (),
    config_path: str | None = None,
    artifact_root: str = "",
    coexistence_files: tuple[str, ...] = (),
) -> ReportModel:
    """``artifact_root`` is the folder the translated files were written to, relative to the report;
    ``coexistence_files`` the names written under ``coexistence/`` beside it."""
    facts = job_facts(result, {j["id"]: j for j in plan["jobs"]})
    names = {job_id: info.name for job_id, info in facts.items()}
    found = model_scan.all_diagnostics(result, model_scan.translation_list(translations))
    rel = fmt.Relative.common([j["id"] for j in plan["jobs"]] + [path for _, path in found if path != "-"])
    phases = model_plan.phases(plan, names, rel)
    translated = model_scan.job_translations(translations, rel, artifact_root)
    diagnostics = model_scan.diagnostic_groups(found, rel)
    counts = model_scan.severity_counts(diagnostics)
    errors = dict(counts).get(ERROR, 0)
    dropped = (sum(t.dropped for t in translated), sum(1 for t in translated if t.dropped))
    totals = {status: sum(getattr(t, status) for t in translated) for status in FidelityStatus}
    site, source, target = plan["site"], plan["source"], plan["target"]
    return ReportModel(
        title=f"Migration plan: {source} to {target}" + (f" for {site}" if site else ""),
        tool=f"migrate {__version__}",
        site=site,
        source=source,
        target=target,
        direction=plan["direction"],
        scanned=model_scan.scanned(result, paths, config_path, rel, counts, facts),
        verdict=model_plan.verdict(plan),
        overview=model_plan.overview(plan, phases),
        assumptions=model_plan.assumptions(plan),
        risks=model_plan.risks(plan, errors, dropped, rel),
        inventory=model_scan.inventory(result, plan, facts),
        diagnostics_summary=model_scan.diagnostics_table(diagnostics),
        mix=model_plan.mix(plan, rel),
        thresholds=tuple(sorted(plan["thresholds"].items())),
        graph=graph_view(plan, graph),
        phases=phases,
        units=model_plan.units_table(plan),
        jobs=model_plan.jobs_table(plan, facts, rel),
        allocation=model_plan.allocation_table(plan, rel),
        translations=translated,
        translation_totals=tuple(totals.items()) if translated else (),
        diagnostics=diagnostics,
        warnings=tuple(plan["warnings"]),
        cycles=tuple(tuple(map(rel, c)) for c in plan["cycles"]),
        coexistence=model_coexistence.coexistence(plan, coexistence_files),
    )


__all__ = ["ReportModel", "build_model"]
