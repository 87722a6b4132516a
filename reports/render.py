"""Render the view model: ``report.md``, a self-contained ``report.html`` and the pictures under ``img/``.

Markdown references the pictures as files (``img/*.svg``), which every common
Markdown host shows; the HTML page inlines them and its stylesheet, so it
opens from disk with no network at all.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import jinja2
from markupsafe import Markup

from migrate.reports import fmt
from migrate.reports.svg import GRAPH, MIX, PHASES, SVG_STYLE, pictures
from migrate.reports.view import ReportModel

TEMPLATES = Path(__file__).resolve().parent / "templates"


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        autoescape=jinja2.select_autoescape(enabled_extensions=("html.j2",), default_for_string=False),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(
        md=fmt.md,
        md_code=fmt.md_code,
        md_link=lambda artifact: fmt.md_link(artifact.label, artifact.href),
        num=fmt.num,
        hours=fmt.hours,
        plural=fmt.plural,
        slug=fmt.slug,
    )
    return env


def render_report(model: ReportModel) -> dict[str, str]:
    """File name -> text: ``report.md``, ``report.html`` and ``img/*.svg``."""
    drawn = pictures(model)
    env = environment()
    images = {"mix": MIX, "graph": GRAPH, "phases": PHASES}
    markdown = env.get_template("report.md.j2").render(m=model, img=images)
    inline = {name: Markup(svg.render(standalone=False)) for name, svg in drawn.items()}
    html = env.get_template("report.html.j2").render(
        m=model,
        img=images,
        svg=inline,
        svg_style=Markup(SVG_STYLE),
        css=Markup((TEMPLATES / "report.css").read_text(encoding="utf-8")),
    )
    files = {"report.md": _tidy(markdown), "report.html": html}
    files |= {name: svg.render(standalone=True) for name, svg in drawn.items()}
    return files


def _tidy(text: str) -> str:
    """At most one blank line in a row, and one newline at the end: templates stay readable."""
    lines: list[str] = []
    for line in text.splitlines():
        line = line.rstrip()
        if not line and (not lines or not lines[-1]):
            continue
        lines.append(line)
    return "\n".join(lines).strip("\n") + "\n"


__all__ = ["render_report"]
