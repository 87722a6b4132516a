"""Run a translated pod's entrypoint with bash, as the container would, for tests."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path
from typing import Any

import yaml

from migrate.translators.kubernetes import shims


def documents(text: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(text) if d]


def find(docs: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    return next(d for d in docs if d["kind"] == kind)


def pod_specs(obj: Any) -> list[dict[str, Any]]:
    """Every pod spec inside an object (Job, JobSet, Volcano Job, PyTorchJob ...), in document order."""
    found: list[dict[str, Any]] = []
    if isinstance(obj, dict):
        if "containers" in obj and isinstance(obj["containers"], list):
            found.append(obj)
        for value in obj.values():
            found += pod_specs(value)
    elif isinstance(obj, list):
        for value in obj:
            found += pod_specs(value)
    return found


def kubelet_expand(value: str, defined: dict[str, str]) -> str:
    """What the kubelet makes of an env value: '$$' is '$', '$(NAME)' the value of an earlier entry."""
    out, i = [], 0
    while i < len(value):
        if value[i] != "$" or i + 1 == len(value):
            out.append(value[i])
            i += 1
        elif value[i + 1] == "$":
            out.append("$")
            i += 2
        elif value[i + 1] == "(" and ")" in value[i + 2 :]:
            close = value.index(")", i + 2)
            name = value[i + 2 : close]
            out.append(defined.get(name, value[i : close + 1]))
            i = close + 1
        elif value[i + 1] == "(":  # an unclosed reference stays as written
            out.append("$(")
            i += 2
        else:
            out.append(value[i : i + 2])
            i += 2
    return "".join(out)


def literal_env(container: dict[str, Any]) -> dict[str, str]:
    """The literal env entries as the container sees them, after the kubelet's expansion."""
    seen: dict[str, str] = {}
    for e in container.get("env", []):
        if "value" in e:
            seen[e["name"]] = kubelet_expand(e["value"], seen)
    return seen


def install(configmap: dict[str, Any], root: Path, script: str | None = None) -> Path:
    """Write the ConfigMap's files where the pod mounts them (under ``root``)."""
    for key, rel in shims.paths().items():
        if key not in configmap["data"]:
            continue
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        text = configmap["data"][key] if key != "job.sh" or script is None else script
        target.write_text(text)
        target.chmod(target.stat().st_mode | stat.S_IXUSR)
    return root


def run_pod(
    text: str,
    root: Path,
    extra_env: dict[str, str],
    script: str | None = None,
    pod: int = 0,
    timeout: int = 20,
) -> subprocess.CompletedProcess[str]:
    """Run the entrypoint of pod template ``pod`` with its literal env plus ``extra_env``."""
    docs = documents(text)
    install(find(docs, "ConfigMap"), root, script)
    container = pod_specs([d for d in docs if d["kind"] != "ConfigMap"])[pod]["containers"][0]
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(root)}
    env.update(literal_env(container))
    env["MIGRATE_DIR"] = str(root)
    env.setdefault("MIGRATE_JOB_UID", "uid-123")
    env.update(extra_env)
    return subprocess.run(
        ["/bin/bash", str(root / "entrypoint.sh")],
        env=env,
        cwd=root,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
