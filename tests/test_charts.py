"""Helm charts: one unit; rendered by helm template when helm is on PATH (a stand-in here), else one hint."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from conftest import CORPUS

from migrate.scan import charts, scanner
from migrate.scan.results import ScanOptions

CHART = CORPUS / "cases/helm/finetune-chart"

# What helm 3 prints for the chart with its default values: each template after a "# Source:" line.
RENDERED = """---
# Source: finetune/templates/configmap.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: ft-settings
data:
  dataset: "/fsx/datasets/alpaca"
---
# Source: finetune/templates/job.yaml
apiVersion: batch/v1
kind: Job
metadata:
  name: ft-train
  labels:
    app.kubernetes.io/name: finetune
spec:
  completions: 2
  parallelism: 2
  completionMode: Indexed
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: train
          image: "123456789012.dkr.ecr.us-west-2.amazonaws.com/finetune:2024.06"
          args: ["--data", "/fsx/datasets/alpaca"]
          resources:
            limits:
              nvidia.com/gpu: 8
"""


def _stand_in_helm(folder: Path, exit_code: int = 0) -> Path:
    """A helm on PATH that records its arguments and prints RENDERED (or fails)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "rendered.yaml").write_text(RENDERED)
    helm = folder / "helm"
    helm.write_text(
        "#!/bin/sh\n"
        f'printf "%s\\n" "$@" > "{folder}/args"\n'
        + (f'cat "{folder}/rendered.yaml"\n' if exit_code == 0 else 'echo "Error: parse error" >&2\n')
        + f"exit {exit_code}\n"
    )
    helm.chmod(helm.stat().st_mode | stat.S_IXUSR)
    return folder


def _with_path(monkeypatch: pytest.MonkeyPatch, folder: Path | None) -> None:
    monkeypatch.setenv("PATH", f"{folder}:/usr/bin:/bin" if folder else "/usr/bin:/bin")


def test_without_helm_one_diagnostic_with_the_command_and_no_template_files(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _with_path(monkeypatch, tmp_path / "empty")
    result = scanner.scan([str(CHART.parent)])
    assert [f.path for f in result.files] == [str(CHART / "Chart.yaml")]
    (diag,) = result.diagnostics
    assert diag.code == "K8S-HELM-CHART"
    assert f"helm template finetune {CHART}" in diag.message


def test_with_helm_the_rendered_manifests_are_read_with_their_template_as_source(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    bin_dir = _stand_in_helm(tmp_path / "bin")
    _with_path(monkeypatch, bin_dir)
    values = tmp_path / "prod.yaml"
    values.write_text("gpus: 8\n")
    result = scanner.scan([str(CHART.parent)], ScanOptions(helm_values=(str(values),)))
    args = (bin_dir / "args").read_text().split("\n")
    assert args[:3] == ["template", "finetune", str(CHART)]
    assert args[3:5] == ["--values", str(values)]
    (job,) = result.jobs
    assert job.source.path == str(CHART / "templates/job.yaml")
    assert job.source.line == 1  # the first line of that template's rendered text
    assert job.total_gpus() == 8 and job.array is not None and job.array.count == 2
    assert [d.code for d in result.diagnostics] == ["K8S-IGNORED-KIND"]
    assert result.diagnostics[0].message.startswith("finetune/templates/configmap.yaml: ")


def test_a_failing_helm_is_a_diagnostic(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _with_path(monkeypatch, _stand_in_helm(tmp_path / "bin", exit_code=1))
    result = scanner.scan([str(CHART)])
    (diag,) = result.diagnostics
    assert diag.code == "K8S-HELM-FAILED" and "parse error" in diag.message and diag.severity == "error"


def test_split_sources_counts_lines_per_template() -> None:
    parts = charts.split_sources(RENDERED)
    assert [name for name, _ in parts] == ["finetune/templates/configmap.yaml", "finetune/templates/job.yaml"]
    assert parts[1][1].split("\n")[0] == "apiVersion: batch/v1"
    assert os.path.basename(charts.CHART_FILE) == "Chart.yaml"
