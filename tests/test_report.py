"""The migration report: its figures match plan.json, it is self-contained, deterministic and scales.

The sample site is reported once per module; the checks read the Markdown and
HTML tables back and compare every figure with the plan.json written beside them.
"""

from __future__ import annotations

import json
import re
import time
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from conftest import CORPUS
from ir_builders import synthetic_site

from migrate import api
from migrate.graph.builder import build_graph
from migrate.plan import planner as plan
from migrate.reports import fmt
from migrate.reports.model import build_model
from migrate.reports.model_plan import UNITS_SHOWN, top_reason
from migrate.reports.plan_types import read_plan
from migrate.reports.render import render_report
from migrate.reports.svg_graph import DETAIL_MAX_JOBS, MAX_LINES
from migrate.scan import results as scan_results
from migrate.scan import scanner
from migrate.site.config import load_site_config
from migrate.translate import translate_jobs

SITE_DIR = CORPUS / "sample-site"
SITE = load_site_config(SITE_DIR / "migrate.yaml")
PICTURES = ("img/graph.svg", "img/phases.svg", "img/workload-mix.svg")


# ---------------------------------------------------------------------------
# Reading the outputs back


class Tables(HTMLParser):
    """Every <table id=...> of a page as rows of cell texts."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.tables: dict[str, list[list[str]]] = {}
        self._table: list[list[str]] | None = None
        self._cell: list[str] | None = None
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self._table = self.tables.setdefault(dict(attrs).get("id") or f"#{len(self.tables)}", [])
        elif tag == "tr" and self._table is not None:
            self._table.append([])
        elif tag in ("td", "th") and self._table is not None:
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._table is not None and self._cell is not None:
            self._table[-1].append(" ".join("".join(self._cell).split()))
            self._cell = None
        elif tag == "table":
            self._table = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def md_sections(text: str) -> dict[str, str]:
    """Heading text -> the body up to the next heading of any level."""
    out: dict[str, str] = {}
    parts = re.split(r"^(#{1,4} .*)$", text, flags=re.M)
    for head, body in zip(parts[1::2], parts[2::2], strict=True):
        out[head.lstrip("#").strip()] = body
    return out


def md_cells(line: str) -> list[str]:
    cells = re.split(r"(?<!\\)\|", line.strip())[1:-1]
    return [re.sub(r"\\(.)", r"\1", c.strip().strip("`").strip("*")) for c in cells]


def md_rows(body: str) -> list[list[str]]:
    """The rows of the first table in ``body``, header included, separator left out."""
    rows: list[list[str]] = []
    for line in body.splitlines():
        if line.startswith("|"):
            if not re.fullmatch(r"\|( -+:? \|)+", line):
                rows.append(md_cells(line))
        elif rows:
            break
    return rows


def slug(heading: str) -> str:
    """GitHub's anchor for a heading."""
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("report") / "out"
    run = api.run_report([str(SITE_DIR)], "kubernetes", str(out))
    files = {
        str(p.relative_to(out)): p.read_text(encoding="utf-8") for p in sorted(out.rglob("*")) if p.is_file()
    }
    return {
        "run": run,
        "files": files,
        "plan": json.loads(files["plan.json"]),
        "md": files["report.md"],
        "html": files["report.html"],
        "tables": Tables(files["report.html"]).tables,
        "sections": md_sections(files["report.md"]),
    }


# ---------------------------------------------------------------------------
# What is written


def test_writes_markdown_html_pictures_and_the_plan(sample: dict[str, Any]) -> None:
    written = ["plan.json", "report.html", "report.md", "coexistence/README.md", *PICTURES]
    assert sorted(sample["files"]) == sorted(written)  # auto kept static partitioning: its README
    assert sample["md"].count("](img/") == 3
    assert all(f"]({name})" in sample["md"] for name in PICTURES)


def test_summary_figures_match_plan_json(sample: dict[str, Any]) -> None:
    doc = sample["plan"]
    moving = sum(1 for j in doc["jobs"] if j["phase"])
    already = sum(len(u["already_there"]) for u in doc["units"])
    staying = sum(len(u["staying"]) for u in doc["units"])
    # 38: the sbatch --wrap probe in node-setup.sh is a job of its own
    assert moving + already + staying == doc["summary"]["jobs"] == 38
    node_hours = sum(j["demand"]["node_hours"] for j in doc["jobs"])
    expected = [
        ["move to Kubernetes", str(moving)],
        ["stay on Slurm", str(staying)],
        ["already on Kubernetes", str(already)],
        ["all jobs", "38"],
    ]
    md = md_rows(sample["sections"]["Summary"])
    html = sample["tables"]["table-outcomes"]
    for rows in (md, html):
        assert [r[:2] for r in rows[1:]] == expected
        assert rows[-1][2] == fmt.hours(round(node_hours, 2))  # the report rounds as plan.json does
    assert "Recommendation: hybrid." in sample["md"]
    pilot = next(p for p in doc["phases"] if p["id"] == "P1")
    first = f"moves {len(pilot['jobs'])} jobs in {len(pilot['units'])} units"
    assert first in sample["md"] and first in sample["html"]
    phases = f"{len(doc['phases'])} phases"
    assert phases in sample["md"] and phases in sample["html"]


def test_units_and_patterns_match_plan_json(sample: dict[str, Any]) -> None:
    doc = sample["plan"]
    units = doc["summary"]["units"]
    assert re.search(rf'kpi-value">{units}</span><span class="kpi-label">migration units', sample["html"])
    md_units = md_rows(sample["sections"]["Migration units"])[1:]
    html_units = sample["tables"]["table-units"][1:]
    for rows in (md_units, html_units):
        assert [r[0] for r in rows] == [u["id"] for u in doc["units"][:UNITS_SHOWN]]
        assert [int(r[3]) for r in rows] == [len(u["jobs"]) for u in doc["units"][:UNITS_SHOWN]]
        assert [int(r[2]) for r in rows] == [u["risk"]["score"] for u in doc["units"][:UNITS_SHOWN]]
    md_patterns = md_rows(sample["sections"]["Jobs by workload pattern"])[1:]
    html_patterns = sample["tables"]["table-by-pattern"][1:]
    for rows in (md_patterns, html_patterns):
        assert {r[1]: int(r[2]) for r in rows} == doc["summary"]["by_pattern"]
    mix = md_rows(sample["sections"]["Workload mix"])[1:]
    assert sum(int(r[1]) for r in mix) == doc["summary"]["jobs"]
    assert {r[5] for r in mix} == {j["rule"]["id"] for j in doc["jobs"]}
    assert fmt.md("large_training_nodes = 4") in sample["sections"]["Workload mix"]


def test_the_largest_risk_is_the_factor_with_the_most_points() -> None:
    """Points are read as numbers from ``risk.factors``, not out of the words of a reason."""
    factors = [
        {"points": 5, "reason": "+20: a reason that starts like a score"},
        {"points": 10, "reason": "1 job with strict placement: exclusive"},
        {"points": 10, "reason": "an equal one later"},
    ]
    assert top_reason(factors) == "1 job with strict placement: exclusive"
    assert top_reason([]) == ""


def test_phases_and_capacity_match_plan_json(sample: dict[str, Any]) -> None:
    doc = sample["plan"]
    md = md_rows(sample["sections"]["Phases"])[1:]
    html = sample["tables"]["table-phases"][1:]
    for rows in (md, html):
        assert [r[0] for r in rows] == doc["summary"]["phases"]
        for row, phase in zip(rows, doc["phases"], strict=True):
            assert int(row[2]) == len(phase["units"])
            assert int(row[3]) == len(phase["jobs"])
            assert int(row[6]) == len(phase["gates"])
            if phase["capacity"]:
                assert int(row[4]) == sum(c["target_nodes"] for c in phase["capacity"])
                assert int(row[5]) == sum(c["source_nodes"] for c in phase["capacity"])
    checked = 0
    for phase in doc["phases"]:
        if not phase["capacity"]:
            continue
        section = next(
            body for head, body in sample["sections"].items() if head.startswith(phase["id"] + ":")
        )
        md_caps = md_rows(section.split("**Capacity", 1)[1])[1:]
        html_caps = sample["tables"][f"capacity-{phase['id'].lower()}"][1:]
        expected = [
            [
                c["partition"],
                str(c["total_nodes"]),
                str(c["target_nodes"]),
                str(c["source_nodes"]),
                fmt.hours(c["moved_node_hours"]),
                fmt.hours(c["remaining_node_hours"]),
            ]
            for c in phase["capacity"]
        ]
        assert md_caps == expected
        assert [r[:4] + r[5:] for r in html_caps] == expected  # the HTML adds a split bar
        checked += 1
    assert checked == 4  # pilot, waves 1 and 2, end state
    p0 = sample["sections"]["P0: Foundations"]
    assert len(md_rows(p0)) - 1 == len(doc["phases"][0]["steps"])
    for phase in doc["phases"]:
        for gate in phase["gates"]:
            assert fmt.md(gate) in sample["md"]


def test_every_diagnostic_is_in_the_appendix_with_file_and_line(sample: dict[str, Any]) -> None:
    result = sample["run"].scan
    appendix = sample["md"].split("## Appendix: diagnostics", 1)[1]
    html_appendix = sample["html"].split('id="appendix-diagnostics"', 1)[1]
    prefix = f"{SITE_DIR}/"  # the report writes paths relative to the scanned folder
    assert result.summary()["by_code"]
    for code, count in result.summary()["by_code"].items():
        assert f"### {code} (" in appendix
        assert f'id="diag-{code.lower()}"' in html_appendix
        assert re.search(
            rf"{code}</code> <span[^>]*>\w+</span> <span class=\"count\">{count}</span>", html_appendix
        )
    for diag in result.diagnostics:
        where = (diag.path or "").removeprefix(prefix) + (f":{diag.line}" if diag.line is not None else "")
        assert f"- `{where}`: {fmt.md(diag.message)}" in appendix


def test_html_needs_no_network(sample: dict[str, Any]) -> None:
    html = sample["html"]
    assert not re.search(
        r"""\b(?:src|href|xlink:href|action|poster)\s*=\s*["']?\s*(?:[a-z]+:)?//""", html, re.I
    )
    assert not re.search(r"<(?:link|img|iframe|object|embed)\b", html, re.I)
    assert not re.search(r"<script\b[^>]*\bsrc", html, re.I)
    assert "@import" not in html
    assert not re.search(r"url\(\s*['\"]?(?!#)", html)  # only references inside the page (SVG markers)
    assert html.count('<svg class="mg-svg"') == 3  # the pictures are inline
    assert "http" not in html  # not even a namespace: inline SVG needs none


def test_pictures_are_well_formed_svg_with_size(sample: dict[str, Any]) -> None:
    for name in PICTURES:
        root = ET.fromstring(sample["files"][name])
        assert root.tag == "{http://www.w3.org/2000/svg}svg"
        assert float(root.get("width", "0")) > 300 and float(root.get("height", "0")) > 150
        assert root.get("viewBox") == f"0 0 {root.get('width')} {root.get('height')}"
        assert root.find("{http://www.w3.org/2000/svg}title") is not None
        assert "prefers-color-scheme: dark" in sample["files"][name]  # readable on dark Markdown hosts too
    for inline in re.findall(r"<svg .*?</svg>", sample["html"], re.S):
        ET.fromstring(inline)


def test_graph_shows_every_unit_job_and_storage_of_the_sample_site(sample: dict[str, Any]) -> None:
    graph = sample["files"]["img/graph.svg"]
    doc = sample["plan"]
    assert doc["summary"]["jobs"] <= DETAIL_MAX_JOBS  # small enough to draw job by job
    for unit in doc["units"]:
        assert f">{unit['id']} · {unit['action']} · risk {unit['risk']['score']}<" in graph
    assert graph.count("moves to Kubernetes in ") == sum(1 for j in doc["jobs"] if j["phase"])
    for fs in ("/fsx", "/home", "/scratch"):
        assert f">{fs}<" in graph
    assert "marker-end" in graph  # dependency edges are drawn


def test_markdown_tables_are_rectangular_and_links_resolve(sample: dict[str, Any]) -> None:
    md = sample["md"]
    width = 0
    for line in md.splitlines():
        if not line.startswith("|"):
            width = 0
            continue
        cells = len(re.split(r"(?<!\\)\|", line)) - 2
        width = width or cells
        assert cells == width, line
    headings = {slug(h) for h in md_sections(md)}
    for anchor in re.findall(r"\]\(#([^)]+)\)", md):
        assert anchor in headings, anchor


def test_reports_are_deterministic(sample: dict[str, Any], tmp_path: Path) -> None:
    again = tmp_path / "again"
    api.run_report([str(SITE_DIR)], "kubernetes", str(again))
    for name, text in sample["files"].items():
        assert (again / name).read_text(encoding="utf-8") == text, name


def test_secret_values_never_reach_the_report(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "train.sbatch").write_text(
        "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --export=ALL,HF_TOKEN=hf_SeCrEt0123456789\n"
        "export WANDB_API_KEY=wandb-SeCrEt-abcdef0123\nsrun python train.py\n",
        encoding="utf-8",
    )
    (site / "job.yaml").write_text(
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n  template:\n    spec:\n"
        "      restartPolicy: Never\n      containers:\n      - name: c\n        image: busybox\n"
        "        env:\n        - {name: DB_PASSWORD, value: pw-SeCrEt-998877}\n",
        encoding="utf-8",
    )
    out = tmp_path / "out"
    api.run_report([str(site)], "kubernetes", str(out))
    for path in out.rglob("report.*"):
        text = path.read_text(encoding="utf-8")
        assert "SeCrEt" not in text, path
        assert "HF_TOKEN" not in text or "SeCrEt" not in text


def test_translations_add_fidelity_tables_and_artifact_links(tmp_path: Path) -> None:
    result = scanner.scan([str(SITE_DIR)])
    translated = translate_jobs(result.jobs, to="kubernetes", config=SITE)
    out = tmp_path / "out"
    translated.tree.commit(str(out))
    api.run_report([str(SITE_DIR)], "kubernetes", str(out), translations=translated, force=True)
    md = (out / "report.md").read_text(encoding="utf-8")
    html = (out / "report.html").read_text(encoding="utf-8")
    table = Tables(html).tables["table-translation"][1:]
    assert len(table) == len(translated.translations)
    for row, t in zip(table, translated.translations, strict=True):
        counts = t.fidelity.counts()
        assert row[:5] == [
            t.name,
            t.flavor,
            str(counts["mapped"]),
            str(counts["approximated"]),
            str(counts["dropped"]),
        ]
    links = re.findall(r'class="artifact" href="([^"]+)"', html)
    assert links and all((out / link).is_file() for link in links)  # every link opens a written file
    assert all((out / link).is_file() for link in re.findall(r"\]\(([^)#]+\.ya?ml)\)", md))
    dropped = [e for t in translated.translations for e in t.fidelity.entries if e.status == "dropped"]
    assert dropped
    for entry in dropped:
        assert fmt.md(entry.reason.replace(f"{SITE_DIR}/", "")) in md
    assert "## Translation" in md


def test_report_without_translations_has_no_translation_section(sample: dict[str, Any]) -> None:
    assert "## Translation" not in sample["md"] and 'id="translation"' not in sample["html"]


def test_reverse_direction_and_an_empty_scan_render(tmp_path: Path) -> None:
    api.run_report([str(SITE_DIR)], "slurm", str(tmp_path / "to-slurm"))
    md = (tmp_path / "to-slurm" / "report.md").read_text(encoding="utf-8")
    assert md.startswith("# Migration plan: Kubernetes to Slurm")
    empty = tmp_path / "empty"
    empty.mkdir()
    api.run_report([str(empty)], "kubernetes", str(tmp_path / "none"))
    md = (tmp_path / "none" / "report.md").read_text(encoding="utf-8")
    assert "No jobs were found in the scanned files" in md
    for name in PICTURES:
        ET.fromstring((tmp_path / "none" / name).read_text(encoding="utf-8"))


def _report_of(pipelines: int) -> tuple[dict[str, str], dict[str, float]]:
    jobs = synthetic_site(pipelines)
    result = scan_results.ScanResult(
        [scan_results.FileResult(j.source.path, j.source.format, [j], []) for j in jobs]
    )
    started = time.process_time()
    the_plan = plan.build_plan(jobs, "to_kubernetes", SITE)
    doc = read_plan(plan.plan_json(the_plan))
    graph = build_graph(jobs, SITE)
    planned = time.process_time()
    model = build_model(result, doc, graph, paths=["site"])
    modelled = time.process_time()
    files = render_report(model)
    done = time.process_time()
    return files, {"plan": planned - started, "model": modelled - planned, "render": done - modelled}


def _elements(svg: str) -> int:
    return sum(1 for _ in ET.fromstring(svg).iter())


def test_ten_thousand_jobs_render_in_seconds_with_a_bounded_graph() -> None:
    files, seconds = _report_of(2000)  # 5 jobs per pipeline
    print("10,000 jobs: " + ", ".join(f"{k} {v:.2f} s" for k, v in seconds.items()))
    print(f"report.html {len(files['report.html']):,} bytes, report.md {len(files['report.md']):,} bytes")
    assert seconds["model"] + seconds["render"] < 30  # CPU seconds, not minutes; measured ~1 s
    graph = files["img/graph.svg"]
    assert "units grouped by the phase they move in" in graph
    assert _elements(graph) < 600  # boxes, pills and at most MAX_LINES links
    assert graph.count('class="link"') <= MAX_LINES
    assert _elements(files["img/phases.svg"]) < 400  # the middle waves fold into one column
    assert len(files["report.html"]) < 2_000_000 and len(files["report.md"]) < 1_000_000
    assert "10,000 jobs" in files["report.md"]


def test_a_hundred_jobs_draw_one_box_per_unit() -> None:
    files, _ = _report_of(20)
    graph = files["img/graph.svg"]
    assert "one box per unit" in graph
    assert _elements(graph) < 600


def test_phases_are_told_apart_by_their_kind_not_their_id() -> None:
    """Ids renamed so that neither their shape nor their sort order says which phase is which."""
    jobs = synthetic_site(60)
    result = scan_results.ScanResult(
        [scan_results.FileResult(j.source.path, j.source.format, [j], []) for j in jobs]
    )
    doc = read_plan(plan.plan_json(plan.build_plan(jobs, "to_kubernetes", SITE)))
    kinds = [p["kind"] for p in doc["phases"]]
    assert kinds == ["foundations", "pilot", *["wave"] * 6, "end"]
    renamed = {"P0": "setup", "P1": "trial", "END": "finish"}
    renamed |= {p["id"]: f"step-{chr(ord('z') - i)}" for i, p in enumerate(doc["phases"][2:-1], 1)}
    for phase in doc["phases"]:
        phase["id"] = renamed[phase["id"]]
    for job in doc["jobs"]:
        job["phase"] = renamed[job["phase"]] if job["phase"] else None
    model = build_model(result, doc, build_graph(jobs, SITE), paths=["site"])
    assert [p.kind for p in model.phases] == kinds
    assert [p.title for p in model.phases][:4] == ["Foundations", "Pilot", "Wave 1", "Wave 2"]
    assert "a pilot, 6 waves, then the end state" in model.overview.sentence
    graph = render_report(model)["img/graph.svg"]
    groups = ["trial", *(f"step-{c}" for c in "yxwvut")]
    where = [graph.index(f">{name}</text>") for name in groups]
    assert where == sorted(where)  # the pilot, then the waves in the plan's order


def test_each_jobs_allocation_is_shown_with_its_sources(sample: dict[str, Any]) -> None:
    """The table reads plan.json's allocation: every Slurm job, its values, and where each came from."""
    doc = sample["plan"]
    allocated = {j["id"]: j["allocation"] for j in doc["jobs"] if "allocation" in j}
    assert allocated and all(".yaml" not in job_id for job_id in allocated)  # Slurm's jobs only
    rows = sample["tables"]["table-allocation"]
    md = md_rows(sample["sections"]["What each job gets"])
    assert len(rows) == len(md) == len(allocated) + 1
    by_job = {r[0]: r for r in md[1:]}
    # A 32-node whole-node job: its CPUs come from --exclusive, its GPUs from its own options.
    pretrain = by_job["training/pretrain_llm13b.sbatch"]
    (got,) = [a for job_id, a in allocated.items() if job_id.endswith("training/pretrain_llm13b.sbatch")]
    assert got["cpus_per_node"]["source"] == "exclusive"
    assert pretrain[2] == str(got["nodes"]["value"]) == "32"
    assert pretrain[3] == f"{got['cpus_per_node']['value']} · exclusive"
    assert pretrain[5] == f"{got['gpus_per_node']['value']} {got['gpu_type']}"
    assert got["details"]["cpus_per_node"] in pretrain[7]
    # A value nothing told is marked assumed, with the reason in the last column.
    devbox = by_job["dev/devbox.sh"]
    assert devbox[6].endswith("· assumed") and "default_job_hours" in devbox[7]


def test_the_summary_says_what_the_demand_assumes_and_for_how_many_jobs(sample: dict[str, Any]) -> None:
    doc = sample["plan"]
    untimed = [j for j in doc["jobs"] if "time_limit" in j.get("demand", {}).get("assumed", ())]
    assert untimed
    summary = sample["sections"]["Summary"]
    verb = "has" if len(untimed) == 1 else "have"
    said = f"{fmt.plural(len(untimed), 'job')} {verb} no time limit anywhere"
    assert said in summary and said in sample["html"]


def test_an_empty_folder_gets_no_phases_and_no_coexistence(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    api.run_report([str(tmp_path / "empty")], "slurm", str(tmp_path / "out"))
    report = (tmp_path / "out" / "report.md").read_text()
    assert "- **Plan:** No phases: there is nothing to move." in report
    assert "## Coexistence" not in report and "decommission" not in report
