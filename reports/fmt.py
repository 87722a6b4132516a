"""Number and text formatting shared by the view model, the pictures and the templates.

One place decides how a node-hour or a share is written, so the Markdown, the
HTML and the SVG text never disagree about the same figure.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable
from urllib.parse import quote

_SLUG = re.compile(r"[^a-z0-9]+")


def num(value: int) -> str:
    """12,345"""
    return f"{value:,}"


def hours(value: float) -> str:
    """Whole hours without a decimal point, fractions with one digit: 1,544 and 38.7."""
    if abs(value - round(value)) < 0.05:
        return f"{round(value):,}"
    return f"{value:,.1f}"


def share(part: float, whole: float) -> str:
    """A percentage that never rounds a non-zero part to 0% or a partial one to 100%."""
    if whole <= 0:
        return "–"
    value = 100.0 * part / whole
    if 0 < value < 1:
        return "<1%"
    if 99 < value < 100:
        return ">99%"
    return f"{value:.0f}%"


def plural(count: int, word: str, many: str | None = None) -> str:
    """``plural(1, "job")`` is "1 job", ``plural(3, "job")`` "3 jobs"."""
    return f"{num(count)} {word if count == 1 else (many or word + 's')}"


def slug(text: str) -> str:
    """A lower-case anchor made of letters, digits and dashes."""
    return _SLUG.sub("-", text.lower()).strip("-") or "x"


_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|])")


def md(text: object) -> str:
    """Text safe inside Markdown prose and table cells (one line, special characters escaped)."""
    flat = " ".join(str(text).split())
    return _MD_SPECIAL.sub(r"\\\1", flat)


def md_code(text: object) -> str:
    """A Markdown code span that survives table cells (pipes escaped, backticks fenced)."""
    flat = " ".join(str(text).split()).replace("|", "\\|")
    fence = "``" if "`" in flat else "`"
    pad = " " if flat.startswith("`") or flat.endswith("`") else ""
    return f"{fence}{pad}{flat}{pad}{fence}" if flat else ""


def md_link(label: str, href: str) -> str:
    """A Markdown link to a relative path; the target is percent-encoded so spaces and brackets survive."""
    return f"[{md(label)}]({quote(href, safe='/#._-~')})"


class Relative:
    """Writes paths under the scanned folder relative to it, in ids and in free text alike.

    Every job id of a site starts with the same folder ("corpus/sample-site/..."); repeating it in
    every cell hides the part that differs. The report says once what the paths are relative to.
    """

    def __init__(self, prefix: str = "") -> None:
        self.prefix = prefix
        # Only a whole leading path: "/fsx/site/x" must not lose "site/" when the prefix is "site/".
        self._pattern = re.compile(r"(?<![\w/.~$-])" + re.escape(prefix)) if prefix else None

    @classmethod
    def common(cls, ids: Iterable[str]) -> Relative:
        folders = [posixpath.dirname(re.split(r"[#@]", i, maxsplit=1)[0]) for i in ids]
        if not folders or any(f.startswith("/") != folders[0].startswith("/") for f in folders):
            return cls()
        try:
            common = posixpath.commonpath(folders)
        except ValueError:
            return cls()
        return cls(common + "/" if common not in ("", "/", ".") else "")

    def __call__(self, text: str) -> str:
        return self._pattern.sub("", text) if self._pattern else text


__all__ = [
    "Relative",
    "hours",
    "md",
    "md_code",
    "md_link",
    "num",
    "plural",
    "share",
    "slug",
]
