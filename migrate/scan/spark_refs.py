"""The scan's second pass: bare Pods that another scanned file hands to Spark as a pod template.

A ``kind: Pod`` whose containers run no command may be a template that
``spark-submit`` fills in (``spark.kubernetes.driver.podTemplateFile``), which the
reader cannot tell from the file alone unless the container carries Spark's name
(``translators/kubernetes/pod_templates.py``). Once every file is read, the files
that name a template (a SparkApplication's ``sparkConf``, a ``spark-submit --conf``
in a script) are searched for those settings; a bare Pod file of the named file
name is then no job: its job is dropped, with the errors about fields Spark sets,
and an info says which file names it.
"""

from __future__ import annotations

import os
import re
from dataclasses import replace

from migrate import ir
from migrate.diagnostics import CODES, Diagnostic
from migrate.scan.results import FileResult
from migrate.translators.kubernetes import pod_templates
from migrate.vocab import Format, JobKind

_KEY = b"podTemplateFile"
_SETTING = re.compile(
    r"spark\.kubernetes\.(driver|executor)\.podTemplateFile[\"']?\s*[:=]\s*[\"']?([^\s\"',}\]]+)"
)
# What a template leaves to Spark: the reader's errors about it are not the template's.
_SPARKS_TO_SET = "K8S-MISSING-FIELD"


def mark(results: list[FileResult]) -> list[FileResult]:
    """The results with the bare Pods another file names as a Spark pod template taken out."""
    candidates = [i for i, r in enumerate(results) if _bare_pods(r)]
    if not candidates:
        return results
    named = _named_templates(results)
    if not named:
        return results
    out = list(results)
    for index in candidates:
        found = named.get(os.path.basename(results[index].path))
        if found is not None:
            out[index] = _as_template(results[index], *found)
    return out


def takes_part(result: FileResult, data: bytes) -> bool:
    """Whether :func:`mark` may name a pod template in the file or take the file's Pods out."""
    return _KEY in data or bool(_bare_pods(result))


def _bare_pods(result: FileResult) -> list[ir.Job]:
    """A manifest file's Pods whose containers run no command of their own."""
    if result.format != Format.KUBERNETES:
        return []
    return [
        job
        for job in result.jobs
        if job.kind == JobKind.POD
        and not any(c.command or c.args for comp in job.components for c in comp.containers)
    ]


def _named_templates(results: list[FileResult]) -> dict[str, tuple[str, str, int]]:
    """File name -> (Spark role, the file that names it, line), from every scanned file."""
    named: dict[str, tuple[str, str, int]] = {}
    for result in results:
        try:
            with open(result.path, "rb") as fh:
                data = fh.read()
        except OSError:
            continue  # gone since it was read
        if _KEY not in data:
            continue
        text = data.decode("utf-8", "replace")
        for match in _SETTING.finditer(text):
            role, value = match.group(1), match.group(2)
            line = text.count("\n", 0, match.start()) + 1
            named.setdefault(os.path.basename(value.rstrip("/")), (role, result.path, line))
    return named


def _as_template(result: FileResult, role: str, by: str, line: int) -> FileResult:
    pods = _bare_pods(result)
    spans = [(job.source.line or 0, job.source.end_line or job.source.line or 0) for job in pods]
    kept_jobs = [job for job in result.jobs if job not in pods]
    kept = [
        d
        for d in result.diagnostics
        if not (d.code == _SPARKS_TO_SET and any(a <= (d.line or 0) <= b for a, b in spans))
    ]
    for job in pods:
        what = f"Pod/{job.name or '-'}"
        text = pod_templates.message(what, role, f"{by}:{line} names it as its podTemplateFile")
        code = pod_templates.CODE
        kept.append(Diagnostic(code, CODES[code][0], text, result.path, job.source.line))
    kept.sort(key=lambda d: d.line or 0)
    return replace(result, jobs=kept_jobs, diagnostics=kept)


__all__ = ["mark", "takes_part"]
