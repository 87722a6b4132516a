"""The differential sweep the other way: every Kubernetes manifest of the corpus run as itself in the
pod runner and, translated to Slurm (`migrate translate --to slurm`), on the Slurm sandbox, with the
same recording stand-ins; what each side's programs saw is compared per case.

    python tests/sweep/reverse.py [--report FILE] [--cases PATTERN] [--jobs N]

A manifest is a case when it holds one workload and its translation is one sbatch script. Compared:
the programs, their argv and node, and the variables a Kubernetes program reads to learn its place
(``JOB_COMPLETION_INDEX``, the training operators' ``MASTER_ADDR``/``RANK``/``PET_*`` ...) and those
the manifest's own containers set; the translation has to give the programs the same values under
sbatch. Each case ends as the forward sweep's do (``run.py``); declared differences are in
``declared.py``, and ``reverse_baseline.txt`` lists the cases that must stay equal.
"""

from __future__ import annotations

import fnmatch
import re
import sys
import time
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

import cases as case_finder  # noqa: E402
import pod_side  # noqa: E402
import run as forward  # noqa: E402
import slurm_side  # noqa: E402

from migrate.diagnostics import Collector  # noqa: E402
from migrate.translate import translate_jobs  # noqa: E402
from migrate.translators.interfaces import NO_CONTEXT  # noqa: E402
from migrate.translators.kubernetes import reader as kubernetes_reader  # noqa: E402
from migrate.translators.slurm import reader as slurm_reader  # noqa: E402
from migrate.vocab import Format  # noqa: E402

# What a Kubernetes program reads to learn its place: the Job controller's, the training operators'.
KUBE_COMPARED = (
    "JOB_COMPLETION_INDEX", "MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "RANK", "LOCAL_RANK", "NODE_RANK",
    "PET_NNODES", "PET_NODE_RANK", "PET_NPROC_PER_NODE", "PET_MASTER_ADDR", "PET_MASTER_PORT",
    "PET_RDZV_ENDPOINT", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK",
)  # fmt: skip
# the variables a pod has that no program reads for its place (the kubelet's, the image's)
_UNCOMPARED = frozenset(("PATH", "HOME", "HOSTNAME", "PWD", "TERM", "SHLVL", "LANG"))


def find(corpus: Path, chosen: str) -> tuple[list[case_finder.Case], dict[str, str], dict[str, Any]]:
    """The cases (each holding its translation's sbatch script), their manifests, and why others are
    left out."""
    cases: list[case_finder.Case] = []
    manifests: dict[str, str] = {}
    left: dict[str, Any] = {}
    for path in sorted(corpus.rglob("*")):
        rel = path.relative_to(corpus)
        if not path.is_file() or "golden" in rel.parts or path.suffix not in (".yaml", ".yml"):
            continue
        name = str(rel).replace("/", "__")
        if not fnmatch.fnmatch(name, chosen):
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        if not kubernetes_reader.sniff(text):
            continue
        source = str(path.relative_to(corpus.parent))
        said = Collector(source)
        jobs = kubernetes_reader.read(text, source, said, NO_CONTEXT)
        if len(jobs) != 1:
            continue  # several workloads (or none): each would need its own run
        if jobs[0].unresolved:
            left[name] = {"result": "left out", "why": "a template: values no file gives"}
            continue
        if "clusterSelector:" in text:
            left[name] = {"result": "left out", "why": "a RayJob on a RayCluster of another file"}
            continue
        if any(d.severity == "error" for d in said.items):
            # a manifest the API server would refuse (an alias bomb among them): nothing to run
            left[name] = {"result": "left out", "why": "the reader found errors"}
            continue
        written = translate_jobs(jobs, to=Format.SLURM).translations[0].files
        scripts = [body for file, body in written.items() if file.endswith(".sbatch")]
        if len(written) != 1 or len(scripts) != 1:
            left[name] = {"result": "left out", "why": f"translated to {sorted(written) or 'nothing'}"}
            continue
        (script,) = scripts
        read_back = slurm_reader.read(script, f"{name}.sbatch", Collector(name))
        if len(read_back) != 1:
            left[name] = {"result": "left out", "why": "the translation reads back as several jobs"}
            continue
        case = case_finder.Case(name, path, script, read_back[0])
        case.skipped = case_finder.too_large(read_back[0])
        case.array_tasks = case_finder.first_tasks(read_back[0])
        if case.skipped:
            left[name] = {"result": "left out", "why": case.skipped}
            continue
        containers = _containers(text)
        commands = "\n".join(_commands(containers))
        case.programs = case_finder.programs_at(script + "\n" + commands, [])
        # the folders both name, and the containers' working folders, which the image holds
        named = [*case_finder.folders_named(script + "\n" + commands), *_workdirs(containers)]
        case.folders = [f for f in dict.fromkeys(named) if f not in case.programs]
        case.submitted_from = str(path.parent.relative_to(corpus)).removeprefix(".")
        case.provisioned = _provisioned(script, containers)
        cases.append(case)
        manifests[name] = text
    return cases, manifests, left


Container = dict[str, Any]


def _containers(text: str) -> list[Container]:
    """The containers of the manifest's pods, read once for the helpers below."""
    return [c for doc in yaml.safe_load_all(text) for c in pod_side.containers_of(doc)]


def _commands(containers: list[Container]) -> list[str]:
    """The containers' command lines, as a script would hold them (for the stand-ins and the folders
    their paths name)."""
    return [" ".join(str(w) for w in [*(c.get("command") or []), *(c.get("args") or [])]) for c in containers]


def _env(containers: list[Container]) -> list[dict[str, Any]]:
    return [e for c in containers for e in c.get("env") or [] if isinstance(e, dict) and "name" in e]


# migrate_read "${MIGRATE_SECRETS_DIR:-$HOME/.migrate/secrets}" NAME KEY: a file the user provisions
_READ = re.compile(r'migrate_read "\$\{MIGRATE_(SECRETS|CONFIG)_DIR:-\$HOME/([^}]+)\}" ([^\s)]+) ([^\s)]+)')


def _provisioned(script: str, containers: list[Container]) -> dict[str, str]:
    """The files the translation reads a Secret's or ConfigMap's key from, as the user writes them
    before submitting: the value the pods see (the sweep's Secrets hold ``stand-in``; a credential the
    manifest wrote literally, which the translation moved into a Secret, its literal)."""
    literal = {str(e["name"]): e["value"] for e in _env(containers) if isinstance(e.get("value"), str)}
    out: dict[str, str] = {}
    for _, folder, name, key in _READ.findall(script):
        name, key = name.strip("'\""), key.strip("'\"")
        out[f"/root/{folder}/{name}/{key}"] = literal.get(key, "stand-in") if name == "env" else "stand-in"
    return out


def _workdirs(containers: list[Container]) -> list[str]:
    """The containers' working folders: the image has them (a repository checked out at /repo)."""
    found = (c.get("workingDir") for c in containers)
    return sorted({w for w in found if isinstance(w, str) and w.startswith("/")})


def _env_names(containers: list[Container]) -> tuple[str, ...]:
    """The variables the manifest's containers set: what its programs read, so what the translation
    has to give them too."""
    return tuple(sorted({str(e["name"]) for e in _env(containers)} - _UNCOMPARED))


def container_site(
    runnable: list[case_finder.Case], manifests: dict[str, str], containers: dict[str, list[Container]]
) -> slurm_side.ContainerSite:
    """What the translation's container steps see beside their own mounts, each case on a site of
    its own as its pods are: its storage is what its manifest claims (PVCs, at their mount paths);
    the working folders and the folders of programs off that storage are its image's."""
    per_job: dict[str, set[str]] = {}
    for case in runnable:
        claimed = {at for ats in pod_side.claims_named(manifests[case.name]).values() for at in ats}
        held = [*_workdirs(containers[case.name]), *(p.rsplit("/", 1)[0] for p in case.programs)]
        image = {
            f for f in held if f and not any(f == at or f.startswith(at.rstrip("/") + "/") for at in claimed)
        }
        image = {f for f in image if f.strip("/").split("/")[0] not in case_finder.SYSTEM_TOPS}
        per_job.setdefault(slurm_side.job_name(case), set()).update(claimed | image)
    return slurm_side.ContainerSite(per_job={name: sorted(paths) for name, paths in per_job.items()})


def main(argv: list[str] | None = None) -> int:
    args = forward.arguments(argv, __doc__)
    started = time.monotonic()
    runnable, manifests, outcome = find(forward.CORPUS, args.cases)
    tops = case_finder.storage_tops(runnable)
    parts = case_finder.partitions(runnable)
    containers = {c.name: _containers(manifests[c.name]) for c in runnable}
    compared = {c.name: KUBE_COMPARED + _env_names(containers[c.name]) for c in runnable}
    pattern = "|".join(sorted({n for names in compared.values() for n in names} | {"SLURM_[A-Z0-9_]+"}))
    named = [c.text for c in runnable] + ["\n".join(_commands(containers[c.name])) for c in runnable]
    site = container_site(runnable, manifests, containers)
    judged = forward.both_sides(runnable, manifests, tops, parts, compared, pattern, args.jobs, named, site)
    for case in runnable:
        outcome[case.name] = {"direction": "kubernetes -> slurm", **judged[case.name]}
    seconds = time.monotonic() - started
    return forward.report(outcome, seconds, args.report, HERE / "reverse_baseline.txt", "manifest")


if __name__ == "__main__":
    sys.exit(main())
