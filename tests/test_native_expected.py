"""Native translations against manifests written by hand for the same scripts.

Each ``corpus/cases/native/NAME.sbatch`` has ``NAME.expected.yaml``: the workload a Kubernetes
engineer writes for that script (the launcher in the container, its arguments written out, the
pods, the devices, the env). The translation must say the same, field by field, for every
container the expected manifest lists; fields the expected manifest leaves out (labels,
annotations, tolerations, CPU requests) are not compared.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import CORPUS

from migrate.diagnostics import Collector
from migrate.site.config import load_site_config
from migrate.translate import translate_jobs
from migrate.translators.slurm import reader

CASES = CORPUS / "cases" / "native"
SITE = load_site_config(CORPUS / "sample-site" / "migrate.yaml")
WORKLOADS = ("Job", "JobSet", "PyTorchJob", "MPIJob", "RayJob", "LeaderWorkerSet")


def _workload(docs: list[dict[str, Any]]) -> dict[str, Any]:
    return next(d for d in docs if d and d.get("kind") in WORKLOADS)


def _roles(doc: dict[str, Any]) -> dict[str, tuple[int, dict[str, Any]]]:
    """Each pod role: (how many pods, the pod spec)."""
    spec = doc["spec"]
    kind = doc["kind"]
    if kind in ("PyTorchJob", "MPIJob"):
        replicas = spec["pytorchReplicaSpecs" if kind == "PyTorchJob" else "mpiReplicaSpecs"]
        return {role: (int(r.get("replicas", 1)), r["template"]["spec"]) for role, r in replicas.items()}
    if kind == "RayJob":
        cluster = spec["rayClusterSpec"]
        roles = {"head": (1, cluster["headGroupSpec"]["template"]["spec"])}
        for group in cluster.get("workerGroupSpecs") or ():
            roles[group["groupName"]] = (int(group.get("replicas", 1)), group["template"]["spec"])
        return roles
    if kind == "LeaderWorkerSet":
        groups, template = int(spec.get("replicas", 1)), spec["leaderWorkerTemplate"]
        workers = template["workerTemplate"]["spec"]
        leaders = (template.get("leaderTemplate") or template["workerTemplate"])["spec"]
        return {"leader": (groups, leaders), "worker": (groups * (int(template.get("size", 1)) - 1), workers)}
    if kind == "JobSet":
        return {
            r["name"]: (int(r.get("replicas", 1)), r["template"]["spec"]["template"]["spec"])
            for r in spec["replicatedJobs"]
        }
    return {"pod": (int(spec.get("completions", 1)), spec["template"]["spec"])}


def _env(container: dict[str, Any]) -> dict[str, object]:
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in container.get("env") or ()}


def _devices(container: dict[str, Any]) -> dict[str, str]:
    limits = (container.get("resources") or {}).get("limits") or {}
    return {k: str(v) for k, v in limits.items() if "/" in k}


def _compare(where: str, want: dict[str, Any], got: dict[str, Any]) -> list[str]:
    problems = []

    def differ(field: str, a: object, b: object) -> None:
        if a != b:
            problems.append(f"{where} {field}: expected {a!r}, got {b!r}")

    differ("command", want.get("command"), got.get("command"))
    differ("args", _script_lines(want), _script_lines(got))
    differ("env", _env(want), _env(got))
    differ("devices", _devices(want), _devices(got))
    for field in ("workingDir", "ports"):
        if field in want:
            differ(field, want[field], got.get(field))
    if "readinessProbe" in want:
        differ(
            "readinessProbe",
            want["readinessProbe"].get("tcpSocket"),
            got.get("readinessProbe", {}).get("tcpSocket"),
        )
    if "volumeMounts" in want:
        mounts = {m["mountPath"] for m in want["volumeMounts"]}
        found = {m["mountPath"] for m in got.get("volumeMounts") or ()}
        differ("mounts", mounts, found & (mounts | {"/dev/shm"}))
    return problems


def _script_lines(container: dict[str, Any]) -> list[str]:
    """The arguments; a shell script (``bash -c``) by its statements, not its blank lines or indents."""
    args = [str(a) for a in container.get("args") or ()]
    if container.get("command") == ["/bin/bash", "-c"] and args:
        return [line.strip() for line in args[0].splitlines() if line.strip()] + args[1:]
    return args


def _normalised_init(container: dict[str, Any]) -> dict[str, Any]:
    """An init script compared by its statements, not its blank lines."""
    command = list(container.get("command") or ())
    if command[:2] == ["/bin/bash", "-c"]:
        command[2] = "\n".join(line.strip() for line in command[2].splitlines() if line.strip())
    return {**container, "command": command}


@pytest.mark.parametrize("source", sorted(CASES.glob("*.sbatch")), ids=lambda p: p.stem)
def test_native_translation_is_what_an_engineer_writes(source: Path) -> None:
    expected = _workload(list(yaml.safe_load_all(source.with_suffix(".expected.yaml").read_text())))
    rel = str(source.relative_to(CORPUS.parent))
    jobs = reader.read(source.read_text(encoding="utf-8"), rel, Collector(rel))
    t = translate_jobs(jobs, config=SITE).translations[0]
    assert t.style == "native", t.style_reason
    (text,) = t.files.values()
    got = _workload(list(yaml.safe_load_all(text)))
    assert (got["kind"], got["apiVersion"]) == (expected["kind"], expected["apiVersion"])
    want_roles, got_roles = _roles(expected), _roles(got)
    assert sorted(got_roles) == sorted(want_roles)
    problems = []
    for role, (pods, want_pod) in want_roles.items():
        got_pods, got_pod = got_roles[role]
        if pods != got_pods:
            problems.append(f"{role}: expected {pods} pods, got {got_pods}")
        for key in ("containers", "initContainers"):
            wanted = want_pod.get(key) or []
            found = got_pod.get(key) or []
            if len(wanted) != len(found):
                problems.append(f"{role} {key}: expected {len(wanted)}, got {len(found)}")
                continue
            for want, have in zip(wanted, found, strict=True):
                if key == "initContainers":
                    want, have = _normalised_init(want), _normalised_init(have)
                    have = {k: v for k, v in have.items() if k in want or k == "command"}
                problems += _compare(f"{role} {key} {want['name']}", want, have)
    problems += _ray(expected, got)
    problems += _group(expected, got, docs_of(source), list(yaml.safe_load_all(text)))
    if "elasticPolicy" in expected["spec"] and expected["spec"]["elasticPolicy"] != got["spec"].get(
        "elasticPolicy"
    ):
        problems.append(
            f"elasticPolicy: expected {expected['spec']['elasticPolicy']}, "
            f"got {got['spec'].get('elasticPolicy')}"
        )
    assert problems == [], "\n".join(problems)


def docs_of(source: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(source.with_suffix(".expected.yaml").read_text()) if d]


def _group(
    want: dict[str, Any], got: dict[str, Any], want_docs: list[dict[str, Any]], got_docs: list[dict[str, Any]]
) -> list[str]:
    """A LeaderWorkerSet's group (size, restart policy) and the Service that selects its leader."""
    if want["kind"] != "LeaderWorkerSet":
        return []
    problems = []
    for key in ("size", "restartPolicy"):
        a, b = want["spec"]["leaderWorkerTemplate"].get(key), got["spec"]["leaderWorkerTemplate"].get(key)
        if a != b:
            problems.append(f"leaderWorkerTemplate.{key}: expected {a!r}, got {b!r}")

    def service(docs: list[dict[str, Any]]) -> tuple[object, ...] | None:
        found = [d for d in docs if d and d.get("kind") == "Service"]
        if len(found) != 1:
            return None
        spec = found[0]["spec"]
        ports = [(p.get("name"), p["port"], p.get("targetPort")) for p in spec.get("ports") or ()]
        return found[0]["metadata"]["name"], spec.get("selector"), ports

    if service(want_docs) != service(got_docs):
        problems.append(f"Service: expected {service(want_docs)}, got {service(got_docs)}")
    return problems


def _ray(want: dict[str, Any], got: dict[str, Any]) -> list[str]:
    """A RayJob's driver and each group's Ray start parameters."""
    if want["kind"] != "RayJob":
        return []
    problems = []
    if want["spec"]["entrypoint"].strip() != got["spec"]["entrypoint"].strip():
        problems.append(
            f"entrypoint: expected {want['spec']['entrypoint']!r}, got {got['spec']['entrypoint']!r}"
        )

    def params(doc: dict[str, Any]) -> dict[str, dict[str, str]]:
        cluster = doc["spec"]["rayClusterSpec"]
        out = {"head": cluster["headGroupSpec"].get("rayStartParams") or {}}
        out |= {g["groupName"]: g.get("rayStartParams") or {} for g in cluster.get("workerGroupSpecs") or ()}
        return {role: {k: str(v) for k, v in p.items()} for role, p in out.items()}

    if params(want) != params(got):
        problems.append(f"rayStartParams: expected {params(want)}, got {params(got)}")
    return problems
