"""Helpers for tests that run translated pods: skip (or, in CI, fail) where pods cannot run."""

from __future__ import annotations

import base64
import os
import secrets
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


STEP_SECRET_SUFFIX = "-steps"  # <job>-steps, key token: the token a job's pods share for their steps
STEP_TOKEN_KEY = "token"


def _secret_refs(node: Any) -> list[dict[str, Any]]:
    if isinstance(node, dict):
        found = [node["secretKeyRef"]] if isinstance(node.get("secretKeyRef"), dict) else []
        return found + [ref for value in node.values() for ref in _secret_refs(value)]
    if isinstance(node, list):
        return [ref for value in node for ref in _secret_refs(value)]
    return []


def with_step_secrets(text: str) -> str:
    """The manifests and, as submit.sh creates them, a Secret with a random token for each
    ``<job>-steps`` Secret (key ``token``) their pods read and they do not hold."""
    docs = [d for d in yaml.safe_load_all(text) if isinstance(d, dict)]
    held = {d["metadata"]["name"] for d in docs if d.get("kind") == "Secret"}
    wanted = sorted(
        {
            str(ref["name"])
            for ref in _secret_refs(docs)
            if str(ref.get("name", "")).endswith(STEP_SECRET_SUFFIX) and ref.get("key") == STEP_TOKEN_KEY
        }
        - held
    )
    if not wanted:
        return text
    made = [
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": name},
            "type": "Opaque",
            "data": {STEP_TOKEN_KEY: base64.b64encode(secrets.token_hex(32).encode()).decode()},
        }
        for name in wanted
    ]
    return text.rstrip("\n") + "\n---\n" + yaml.safe_dump_all(made, sort_keys=False)


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
    return PodRunner(workdir, timeout=timeout, **options).run(with_step_secrets(text))


def run_together(
    texts: list[str],
    workdir: Path,
    *,
    scripts: list[str | None] | None = None,
    timeout: float = 60,
    **options: Any,
) -> list[RunResult]:
    """Several workloads at once in one cluster network, each with its own step token, as :func:`run`."""
    options.setdefault("image_env", {"PATH": IMAGE_PATH})
    scripts = scripts or [None] * len(texts)
    ready = [
        with_step_secrets(with_script(text, script) if script is not None else text)
        for text, script in zip(texts, scripts, strict=True)
    ]
    return PodRunner(workdir, timeout=timeout, **options).run_together(ready)


__all__ = ["IMAGE_PATH", "require_pods", "run", "run_together", "with_script", "with_step_secrets"]
