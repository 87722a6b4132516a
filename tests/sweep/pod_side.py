"""The Kubernetes side: each case translated (flavor and style ``auto``, as a user runs it) and its
pods run by the project's pod runner, with the same stand-ins bound at ``/sweep/bin``.

Every path the scripts name under a top-level folder that is no system folder is a site file system
(a PVC) in the sweep's site configuration; each case's claims are folders of its own, holding the
folders its paths name, as the Slurm side's root holds them.
"""

from __future__ import annotations

import os
import shutil
import traceback
from pathlib import Path
from typing import Any

import yaml
from cases import NODE_CPUS, NODE_GPUS, NODE_MEM_MB, SUBMIT_ROOT, USER, Case
from podrunner import testing as pods
from podrunner.shrink import shrink
from standins import BIN, RECORDS

from migrate.site.config import SiteConfig, parse_site_config
from migrate.translate import translate_jobs

PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"  # the image default
# Open MPI as root, its TCP traffic off the loopback (the pods' addresses are aliases on other links)
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
MPI_FILES = {
    "/etc/openmpi/openmpi-mca-params.conf": "btl_tcp_if_exclude = lo\noob_tcp_if_exclude = lo\n",
    # the host's root profile puts its own Python first; an image's does not
    "/root/.bashrc": "",
}


SUBMIT_CLAIM = "fs-submit"


def site(tops: list[str], partitions: list[str]) -> SiteConfig:
    """Every top-level folder the scripts name a file system; the corpus's folders the job folders,
    on one of their own (kubernetes.submit_dirs), as the Slurm side submits from them; the
    partitions' nodes the sandbox's (the first the default, as there)."""
    node = {"cpus_per_node": NODE_CPUS, "gpus_per_node": NODE_GPUS, "mem_gb": NODE_MEM_MB // 1024}
    return parse_site_config(
        {
            "site": "sweep",
            "partitions": {name: {**node, "default": k == 0} for k, name in enumerate(partitions)},
            "filesystems": [
                *({"prefix": f"/{t}", "kind": "nfs", "pvc": f"fs-{t}"} for t in tops),
                {"prefix": SUBMIT_ROOT, "kind": "nfs", "pvc": SUBMIT_CLAIM},
            ],
            "defaults": {"image": "stand-in", "namespace": "sweep"},
            # the submitter the Slurm side's sbatch passes on (root, HOME=/root), as the site says it
            "kubernetes": {"submit_dirs": {"corpus": SUBMIT_ROOT}, "user": USER, "home": "/root"},
        }
    )


def translate(case: Case, config: SiteConfig) -> tuple[str | None, str, str]:
    """The case's manifests (None when no pods are written), its flavor and style."""
    t = translate_jobs([case.job], config=config).translations[0]
    if len(t.files) != 1:
        return None, t.flavor, t.style
    (text,) = t.files.values()
    return text, t.flavor, t.style


def image_programs(text: str, programs: list[str], tops: list[str], folder: Path) -> dict[str, Path]:
    """The programs the pods' image would hold that this host has not: those the script starts by a
    path off the site's storage (`/opt/flexlm/lmgrd`, a stand-in on the Slurm side's nodes too), and
    what a native translation's containers start (`sarus run IMAGE /usr/local/libexec/osu/osu_allreduce`
    ran it in its container). Each folder of them as the image has it, with a recording stand-in."""
    binds: dict[str, Path] = {}
    commands = [(c.get("command") or [""])[0] for doc in yaml.safe_load_all(text) for c in containers_of(doc)]
    off_storage = [p for p in programs if p.strip("/").split("/")[0] not in tops]
    for program in [*off_storage, *commands]:
        if not program.startswith("/") or os.path.lexists(program):
            continue
        where, name = program.rsplit("/", 1)
        held = folder / where.strip("/")
        held.mkdir(parents=True, exist_ok=True)
        if not (held / name).is_symlink():
            (held / name).symlink_to(f"{BIN}/.recorder")
        binds[where] = held
    return binds


def claims_named(text: str) -> dict[str, set[str]]:
    """Every PersistentVolumeClaim the manifests' pods mount, with the folders it is mounted at."""
    found: dict[str, set[str]] = {}

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            volumes = {
                v.get("name"): v["persistentVolumeClaim"]["claimName"]
                for v in node.get("volumes") or []
                if isinstance(v, dict) and isinstance(v.get("persistentVolumeClaim"), dict)
                and v["persistentVolumeClaim"].get("claimName")
            }  # fmt: skip
            for claim in volumes.values():
                found.setdefault(str(claim), set())
            for container in [*(node.get("containers") or []), *(node.get("initContainers") or [])]:
                for mount in container.get("volumeMounts") or [] if isinstance(container, dict) else []:
                    if isinstance(mount, dict) and mount.get("name") in volumes and mount.get("mountPath"):
                        found[str(volumes[mount["name"]])].add(str(mount["mountPath"]))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    for doc in yaml.safe_load_all(text):
        walk(doc)
    return found


def containers_of(node: Any) -> list[dict[str, Any]]:
    if isinstance(node, dict):
        found = [c for c in node.get("containers") or [] if isinstance(c, dict)]
        return found + [c for v in node.values() for c in containers_of(v)]
    if isinstance(node, list):
        return [c for v in node for c in containers_of(v)]
    return []


def run(
    case: Case, text: str, work: Path, bin_dir: Path, tops: list[str], timeout: float, image: list[str]
) -> dict[str, Any]:
    """``image``: the programs off the site's storage that any case starts by path; the Slurm side's
    nodes have them all, and so has the pods' image. A claim the manifests name that the sweep's
    site does not (a manifest of the corpus run as it is) is a folder of its own."""
    folder = work / "pods" / case.name
    records = folder / "records"
    records.mkdir(parents=True)
    claims = {}
    for top in tops:
        claims[f"fs-{top}"] = folder / "fs" / top
        claims[f"fs-{top}"].mkdir(parents=True)
    for path in case.folders:
        (folder / "fs" / path.strip("/")).mkdir(parents=True, exist_ok=True)
    # on the claims, as the Slurm side's root holds them: the files it sources (empty) and the
    # programs it names by path (the recording stand-in)
    for path in [*case.sourced, *case.programs]:
        if path.strip("/").split("/")[0] not in tops:
            continue
        at = folder / "fs" / path.strip("/")
        at.parent.mkdir(parents=True, exist_ok=True)
        if path in case.programs:
            at.symlink_to(f"{BIN}/.recorder")
        else:
            at.touch()
    binds = {BIN: bin_dir, RECORDS: records}
    binds.update(image_programs(text, image, tops, folder / "image"))
    for name, mounted_at in claims_named(text).items():
        if name in claims:
            continue
        claims[name] = folder / "claims" / name
        claims[name].mkdir(parents=True)
        for at in mounted_at:  # the folders the case names there, as the Slurm side has them
            for path in case.folders:
                if path.startswith(at.rstrip("/") + "/"):
                    (claims[name] / path[len(at.rstrip("/")) + 1 :]).mkdir(parents=True, exist_ok=True)
    claims[SUBMIT_CLAIM] = folder / "fs" / "submit"
    (claims[SUBMIT_CLAIM] / case.submitted_from / "logs").mkdir(parents=True)
    for path, content in case.given_files().items():  # on the claim that holds it, as on the Slurm side
        if path.startswith(SUBMIT_ROOT + "/"):
            at = claims[SUBMIT_CLAIM] / path.removeprefix(SUBMIT_ROOT + "/")
        else:
            at = folder / "fs" / path.strip("/")
        at.parent.mkdir(parents=True, exist_ok=True)
        at.write_text(content)
    if case.array_tasks:
        text = first_tasks_only(text, len(case.array_tasks))
    if case.given.env or case.given.args:
        text = with_submitters(text, case.given.env, case.given.args)
    try:
        result = pods.run(
            with_secrets(text),
            folder / "run",
            timeout=timeout,
            claims=claims,
            image_env={"PATH": PATH, **MPI_ENV},
            image_files=MPI_FILES,
            node_binds=binds,
        )
    except Exception:  # the runner could not run it: a result of the sweep, not its end
        return {
            "status": "NotRun",
            "why": traceback.format_exc(limit=2).strip().splitlines()[-1],
            "records": records,
        }
    # a node's index within its own allocation: an array task's pods count from 0 each
    per_task = case.job.total_nodes() if case.job.array is not None else 0
    hosts = {}
    for p in result.pods:
        index = p.plan.index if p.plan.node is None else p.plan.node
        hosts[p.plan.hostname] = index % per_task if per_task and index >= 0 else index
    for p in result.pods:
        hosts.update({name: hosts[p.plan.hostname] for name in p.plan.dns_names})
        if p.address:
            hosts[p.address] = hosts[p.plan.hostname]
    return {"status": result.status, "records": records, "hosts": hosts, "describe": result.describe}


def first_tasks_only(text: str, tasks: int) -> str:
    """The manifests with their workload cut to an array's first ``tasks`` (its completions, or its
    JobSet's replicas): the tasks the Slurm side releases. What the pods are told of the array's
    size as written (the translation's SLURM_ARRAY_TASK_COUNT) stays."""
    docs = [d for d in yaml.safe_load_all(text) if d is not None]
    return yaml.safe_dump_all([shrink(d, tasks) if isinstance(d, dict) else d for d in docs], sort_keys=False)


def with_submitters(text: str, env: dict[str, str], args: tuple[str, ...]) -> str:
    """The manifests with what the submitter gave the script on Slurm (inputs.py) added as the user
    adds it after the translation said the job needs it: env entries in every container, the
    script's arguments after the entrypoint's own."""
    docs = [d for d in yaml.safe_load_all(text) if d is not None]
    for container in containers_of(docs):
        container["env"] = [*(container.get("env") or []), *({"name": k, "value": v} for k, v in env.items())]
        if args:
            container["args"] = [*(container.get("args") or []), *args]
    return yaml.safe_dump_all(docs, sort_keys=False)


def with_secrets(text: str) -> str:
    """The manifests and a Secret for each one their pods read that they do not hold (a site's
    credentials, which the user creates before submitting), with every key the pods read."""
    docs = [d for d in yaml.safe_load_all(text) if isinstance(d, dict)]
    held = {d["metadata"]["name"] for d in docs if d.get("kind") == "Secret"}
    wanted: dict[str, set[str]] = {}

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            ref = node.get("secretKeyRef")
            if isinstance(ref, dict) and ref.get("name"):
                wanted.setdefault(str(ref["name"]), set()).add(str(ref.get("key", "value")))
            secret = node.get("secret")
            if isinstance(secret, dict) and secret.get("secretName"):
                wanted.setdefault(str(secret["secretName"]), set()).add("value")
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(docs)
    made = [
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": name},
            "stringData": {key: "stand-in" for key in sorted(keys)},
        }
        for name, keys in sorted(wanted.items())
        if name not in held and not name.endswith("-steps")  # the step token: the runner makes it
    ]
    return text if not made else text.rstrip("\n") + "\n---\n" + yaml.safe_dump_all(made, sort_keys=False)


def clean(work: Path) -> None:
    shutil.rmtree(work / "pods", ignore_errors=True)
