"""A tiny SVG writer: shapes and text in, one deterministic string out. No external libraries.

Colours live in one stylesheet (``SVG_STYLE``) keyed on classes, with a dark
variant under ``prefers-color-scheme``. A standalone picture (``img/*.svg``)
carries the stylesheet inside; pictures inlined in the HTML page leave it out
and the page includes it once, so the same class names serve both.
"""

from __future__ import annotations

from xml.sax.saxutils import escape

SVG_NS = "http://www.w3.org/2000/svg"
FONT = 'system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, "DejaVu Sans", sans-serif'
CHAR_EM = 0.6  # average glyph width in em for the fonts above; generous so labels never overflow

SVG_STYLE = (
    """
.mg-svg{--mg-bg:#ffffff;--mg-fg:#1f2328;--mg-muted:#59636e;--mg-grid:#d0d7de;--mg-box:#f6f8fa;
--mg-edge:#8c959f;--mg-move:#1f6feb;--mg-move-soft:#dbe9fe;--mg-stay:#c0620a;--mg-stay-soft:#fde9cf;
--mg-already:#0f8f80;--mg-already-soft:#d2f3ee;--mg-blocked:#cf222e;--mg-blocked-soft:#ffe1e1;
--mg-ext:#8c959f;--mg-ext-soft:#eef1f4;font-family:FONT;}
@media screen and (prefers-color-scheme: dark){.mg-svg{--mg-bg:#0d1117;--mg-fg:#e6edf3;--mg-muted:#9198a1;
--mg-grid:#30363d;--mg-box:#161b22;--mg-edge:#6e7681;--mg-move:#4c8dff;--mg-move-soft:#142a4c;
--mg-stay:#e8953f;--mg-stay-soft:#3b2710;--mg-already:#2fc4b1;--mg-already-soft:#0e2f2b;
--mg-blocked:#ff7b72;--mg-blocked-soft:#3d1517;--mg-ext:#8b949e;--mg-ext-soft:#1c2128;}}
.mg-svg .bg{fill:var(--mg-bg)}
.mg-svg text{fill:var(--mg-fg);font-size:12px}
.mg-svg text.muted{fill:var(--mg-muted)}
.mg-svg text.small{font-size:10.5px}
.mg-svg text.title{font-size:13px;font-weight:600}
.mg-svg text.on-bar{fill:#ffffff;font-size:10.5px;font-weight:600}
.mg-svg .grid{stroke:var(--mg-grid);stroke-width:1;fill:none}
.mg-svg .box{fill:var(--mg-box);stroke:var(--mg-grid);stroke-width:1}
.mg-svg .edge{stroke:var(--mg-edge);stroke-width:1.3;fill:none}
.mg-svg .edge.data{stroke-dasharray:5 3}
.mg-svg .edge.submits{stroke-dasharray:1.5 2.5}
.mg-svg .link{stroke:var(--mg-edge);fill:none;opacity:.35}
.mg-svg .arrowhead{fill:var(--mg-edge)}
.mg-svg .move{fill:var(--mg-move)}
.mg-svg .stay{fill:var(--mg-stay)}
.mg-svg .already{fill:var(--mg-already)}
.mg-svg .blocked{fill:var(--mg-blocked)}
.mg-svg .held{fill:var(--mg-stay);opacity:.55}
.mg-svg .external{fill:var(--mg-ext)}
.mg-svg .job{stroke-width:1.4}
.mg-svg .job.move{fill:var(--mg-move-soft);stroke:var(--mg-move)}
.mg-svg .job.stay{fill:var(--mg-stay-soft);stroke:var(--mg-stay)}
.mg-svg .job.held{fill:var(--mg-stay-soft);stroke:var(--mg-stay);stroke-dasharray:4 2;opacity:1}
.mg-svg .job.already{fill:var(--mg-already-soft);stroke:var(--mg-already)}
.mg-svg .job.blocked{fill:var(--mg-blocked-soft);stroke:var(--mg-blocked)}
.mg-svg .job.external{fill:var(--mg-ext-soft);stroke:var(--mg-ext);stroke-dasharray:3 2}
.mg-svg .unit{fill:none;stroke:var(--mg-grid);stroke-width:1.2}
.mg-svg .unit-fill{fill:var(--mg-bg);stroke:var(--mg-grid);stroke-width:1.2}
.mg-svg .store{fill:var(--mg-box);stroke:var(--mg-muted);stroke-width:1}
.mg-svg .store.both{stroke:var(--mg-move);stroke-width:2}
.mg-svg .monitor{fill:var(--mg-box);stroke:var(--mg-muted);stroke-width:1;stroke-dasharray:4 2}
.mg-svg .band{fill:none;stroke:var(--mg-grid);stroke-dasharray:2 4}
""".replace("FONT", FONT)
    .strip()
    .replace("\n", "")
)


BOLD = 1.1  # bold glyphs run about a tenth wider


def text_width(text: str, size: float = 12.0, bold: bool = False) -> float:
    return len(text) * size * CHAR_EM * (BOLD if bold else 1.0)


_WORD_ENDS = (" ", "-", "_", ".", "/", ",", ":")


def fit(text: str, width: float, size: float = 12.0, bold: bool = False) -> str:
    """The text, cut with an ellipsis so that it fits ``width`` pixels: after a whole word when
    one fits (``1.data-…``, not ``1.data-preproces…``); the hover title keeps the whole text."""
    room = int(width / (size * CHAR_EM * (BOLD if bold else 1.0)))
    if len(text) <= room:
        return text
    if room <= 1:
        return ""
    keep = text[: room - 1]
    boundary = max(keep.rfind(c) for c in _WORD_ENDS)
    if boundary > 0:
        keep = keep[: boundary + 1]
    return keep.rstrip() + "…"


def _n(value: float) -> str:
    """Coordinates with at most one decimal: short files, identical bytes on every platform."""
    text = f"{value:.1f}"
    return text[:-2] if text.endswith(".0") else text


class Svg:
    """Collects elements in drawing order; ``render`` gives the SVG text."""

    def __init__(self, name: str, width: float, height: float, title: str, description: str) -> None:
        self.name = name  # prefixes ids so that several pictures can share one HTML page
        self.width = width
        self.height = height
        self.title = title
        self.description = description
        self.defs: list[str] = []
        self.parts: list[str] = []

    def rect(
        self, x: float, y: float, w: float, h: float, cls: str, rx: float = 0, tip: str | None = None
    ) -> None:
        corner = f' rx="{_n(rx)}"' if rx else ""
        head = (
            f'<rect class="{cls}" x="{_n(x)}" y="{_n(y)}" width="{_n(max(0.0, w))}" height="{_n(h)}"{corner}'
        )
        self.parts.append(f"{head}><title>{escape(tip)}</title></rect>" if tip else head + "/>")

    def text(
        self,
        x: float,
        y: float,
        content: str,
        cls: str = "",
        anchor: str = "start",
        tip: str | None = None,
    ) -> None:
        attrs = f' class="{cls}"' if cls else ""
        if anchor != "start":
            attrs += f' text-anchor="{anchor}"'
        body = escape(content) + (f"<title>{escape(tip)}</title>" if tip else "")
        self.parts.append(f'<text x="{_n(x)}" y="{_n(y)}"{attrs}>{body}</text>')

    def line(self, x1: float, y1: float, x2: float, y2: float, cls: str, width: float | None = None) -> None:
        stroke = f' style="stroke-width:{_n(width)}"' if width else ""
        self.parts.append(
            f'<line class="{cls}" x1="{_n(x1)}" y1="{_n(y1)}" x2="{_n(x2)}" y2="{_n(y2)}"{stroke}/>'
        )

    def curve(
        self,
        start: tuple[float, float],
        end: tuple[float, float],
        cls: str,
        arrow: bool = False,
        width: float | None = None,
        vertical: bool = True,
    ) -> None:
        """A smooth cubic from ``start`` to ``end``, leaving and arriving vertically (or horizontally)."""
        (x1, y1), (x2, y2) = start, end
        if vertical:
            bend = max(12.0, abs(y2 - y1) / 2)
            c1, c2 = (x1, y1 + bend if y2 >= y1 else y1 - bend), (x2, y2 - bend if y2 >= y1 else y2 + bend)
        else:
            bend = max(12.0, abs(x2 - x1) / 2)
            c1, c2 = (x1 + bend, y1), (x2 - bend, y2)
        d = f"M{_n(x1)} {_n(y1)}C{_n(c1[0])} {_n(c1[1])} {_n(c2[0])} {_n(c2[1])} {_n(x2)} {_n(y2)}"
        extra = f' marker-end="url(#{self.name}-arrow)"' if arrow else ""
        if width:
            extra += f' style="stroke-width:{_n(width)}"'
        self.parts.append(f'<path class="{cls}" d="{d}"{extra}/>')

    def arrow_marker(self) -> None:
        self.defs.append(
            f'<marker id="{self.name}-arrow" viewBox="0 0 8 8" refX="7" refY="4" markerWidth="7" '
            'markerHeight="7" orient="auto-start-reverse">'
            '<path class="arrowhead" d="M0 0L8 4L0 8z"/></marker>'
        )

    def raw(self, fragment: str) -> None:
        self.parts.append(fragment)

    def render(self, standalone: bool = True) -> str:
        """The SVG text; ``standalone`` adds the XML namespace and the stylesheet for use as a file."""
        ns = f' xmlns="{SVG_NS}"' if standalone else ""
        w, h = _n(self.width), _n(self.height)
        head = (
            f'<svg{ns} class="mg-svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" role="img" '
            f'aria-labelledby="{self.name}-title {self.name}-desc">'
        )
        out = [head, f'<title id="{self.name}-title">{escape(self.title)}</title>']
        out.append(f'<desc id="{self.name}-desc">{escape(self.description)}</desc>')
        defs = list(self.defs)
        if standalone:
            out.append(f"<style>{SVG_STYLE}</style>")
        if defs:
            out.append("<defs>" + "".join(defs) + "</defs>")
        out.append(f'<rect class="bg" x="0" y="0" width="{w}" height="{h}"/>')
        out.extend(self.parts)
        out.append("</svg>")
        return "\n".join(out) + "\n"


__all__ = ["FONT", "SVG_NS", "SVG_STYLE", "Svg", "fit", "text_width"]
