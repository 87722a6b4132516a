"""The report's pictures, drawn by the project as SVG: workload mix, graph, phases.

``pictures`` returns them by file name; each can be rendered standalone (a
file under ``img/`` for the Markdown report) or inline (inside the HTML page,
which carries the shared stylesheet once).
"""

from __future__ import annotations

from migrate.reports.svg_canvas import SVG_STYLE, Svg
from migrate.reports.svg_graph import dependency_graph
from migrate.reports.svg_mix import workload_mix
from migrate.reports.svg_timeline import phases_timeline
from migrate.reports.view import ReportModel

MIX = "img/workload-mix.svg"
GRAPH = "img/graph.svg"
PHASES = "img/phases.svg"


def pictures(model: ReportModel) -> dict[str, Svg]:
    return {
        MIX: workload_mix(model.mix, model.source, model.target, model.verdict.window_hours),
        GRAPH: dependency_graph(model.graph),
        PHASES: phases_timeline(model.phases, model.source, model.target),
    }


__all__ = ["GRAPH", "MIX", "PHASES", "SVG_STYLE", "Svg", "pictures"]
