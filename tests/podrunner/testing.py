"""Helpers for tests that run translated pods: skip (or, in CI, fail) where pods cannot run."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from .model import RunResult
from .runner import PodRunner, why_not

VENV_BIN = str(Path(sys.executable).parent)
IMAGE_PATH = f"{VENV_BIN}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def require_pods() -> None:
    """Skip with the reason where the runner cannot work; in CI (CI=true) fail instead."""
    reason = why_not()
    if reason is None:
        return
    if os.environ.get("CI"):
        pytest.fail(f"CI must run the pod tests: {reason}")
    pytest.skip(reason)


def with_script(text: str, script: str) -> str:
    """The manifests with another job script in their ConfigMap (the shims unchanged)."""
    docs = [d for d in yaml.safe_load_all(text) if d]
    for doc in docs:
        if doc["kind"] == "ConfigMap" and "job.sh" in doc.get("data", {}):
            doc["data"]["job.sh"] = script
    return yaml.safe_dump_all(docs, sort_keys=False)


def run(
    text: str,
    workdir: Path,
    *,
    script: str | None = None,
    timeout: float = 60,
    **options: Any,
) -> RunResult:
    options.setdefault("image_env", {"PATH": IMAGE_PATH})
    if script is not None:
        text = with_script(text, script)
    return PodRunner(workdir, timeout=timeout, **options).run(text)


__all__ = ["IMAGE_PATH", "require_pods", "run", "with_script"]
