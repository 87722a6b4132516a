"""Helm charts: a folder with ``Chart.yaml`` is one unit, rendered by ``helm template`` when helm is here.

``helm template`` renders the chart locally: it contacts no cluster and runs
nothing from the chart but its templates, which is why it is the one program
a scan ever starts. Its output marks each manifest with the template it came
from (``# Source: chart/templates/job.yaml``); each job is read with that file
as its source, and lines count within that template's rendered text. Without
helm, the chart gets one diagnostic with the command to run, and its template
files are not reported one by one (they are not manifests before rendering).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
from collections.abc import Sequence

from migrate import ir
from migrate.diagnostics import Collector, Diagnostic
from migrate.scan.discover import CHART_FILE
from migrate.scan.results import FileResult
from migrate.vocab import Format

HELM_TIMEOUT_S = 60
_SOURCE = re.compile(r"^# Source: (\S+)\s*$")
_CHART_NAME = re.compile(r"^name:\s*['\"]?([A-Za-z0-9][A-Za-z0-9._-]*)", re.MULTILINE)


def is_chart(path: str) -> bool:
    return os.path.basename(path) == CHART_FILE


def release_name(chart_file_text: str, folder: str) -> str:
    found = _CHART_NAME.search(chart_file_text)
    return found.group(1) if found else os.path.basename(os.path.abspath(folder)) or "release"


def helm_command(folder: str, name: str, values: Sequence[str], helm: str = "helm") -> list[str]:
    command = [helm, "template", name, folder]
    for path in values:
        command += ["--values", path]
    return command


def read_chart(chart_file: str, display: str, text: str, values: Sequence[str] = ()) -> FileResult:
    """The chart whose ``Chart.yaml`` is at ``chart_file`` (shown as ``display``), rendered and read."""
    from migrate.translators.kubernetes import reader as k8s_reader  # not loaded by a cached scan

    folder, shown_folder = os.path.dirname(chart_file) or ".", os.path.dirname(display) or "."
    name = release_name(text, folder)
    diags = Collector(display)
    helm = shutil.which("helm")
    if helm is None:
        command = shlex.join(helm_command(shown_folder, name, values))
        diags.add(
            "K8S-HELM-CHART",
            f"a Helm chart, and helm is not on PATH: its templates are not read. Render it and scan "
            f"the result: {command} > {name}-rendered.yaml && migrate scan {name}-rendered.yaml",
        )
        return FileResult(display, Format.UNKNOWN, [], diags.items)
    try:
        done = subprocess.run(
            helm_command(folder, name, values, helm),
            capture_output=True,
            text=True,
            timeout=HELM_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except subprocess.TimeoutExpired:
        diags.add("K8S-HELM-FAILED", f"helm template did not finish in {HELM_TIMEOUT_S} s; not read")
        return FileResult(display, Format.UNKNOWN, [], diags.items)
    except OSError as exc:
        diags.add("K8S-HELM-FAILED", f"helm could not be started: {exc.strerror or exc}")
        return FileResult(display, Format.UNKNOWN, [], diags.items)
    if done.returncode != 0:
        last = next((line for line in reversed(done.stderr.splitlines()) if line.strip()), "no message")
        diags.add("K8S-HELM-FAILED", f"helm template failed (exit {done.returncode}): {last.strip()}")
        return FileResult(display, Format.UNKNOWN, [], diags.items)
    jobs: list[ir.Job] = []
    found: list[Diagnostic] = list(diags.items)
    for template, rendered in split_sources(done.stdout):
        source = os.path.join(shown_folder, template.split("/", 1)[1] if "/" in template else template)
        local = Collector(source)
        jobs.extend(k8s_reader.read(rendered, source, local))
        found.extend(_named(d, template) for d in local.items)
    return FileResult(display, Format.KUBERNETES, jobs, found)


def split_sources(output: str) -> list[tuple[str, str]]:
    """helm's output as (template, its rendered text); lines count from the one after ``# Source:``."""
    parts: list[tuple[str, list[str]]] = []
    for line in output.split("\n"):
        source = _SOURCE.match(line)
        if source:
            if parts and parts[-1][1] and parts[-1][1][-1].strip() == "---":
                parts[-1][1].pop()  # the separator before the next template's comment
            parts.append((source.group(1), []))
        elif parts:
            parts[-1][1].append(line)
    # A template helm split into several documents comes as several parts, each counted from 1.
    return [(template, "\n".join(lines)) for template, lines in parts]


def _named(diag: Diagnostic, template: str) -> Diagnostic:
    """A diagnostic of the rendered template, its message naming the template (the file is the chart)."""
    return Diagnostic(diag.code, diag.severity, f"{template}: {diag.message}", diag.path, diag.line, diag.job)


__all__ = ["CHART_FILE", "helm_command", "is_chart", "read_chart", "split_sources"]
