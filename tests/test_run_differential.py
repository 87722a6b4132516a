"""Translated jobs run the way they ran on Slurm, proven by running both and comparing what happened.

Every case under ``corpus/cases/run/`` runs twice: as sbatch on the project's
Slurm sandbox (4 nodes, real ``srun``), and translated to Kubernetes (every
flavor that can express it) in the pod runner (tests/podrunner). Both sides
run the same programs: bash, coreutils and ``torchrun`` from ``torch`` with
the gloo backend doing an ``all_reduce`` (tests/run_programs/allreduce.py, put
on the shared file system as a site would). Compared: the world size, every
rank's node index and local rank, the all_reduce result, the files written,
how often each statement outside ``srun`` ran (the cases append to a log),
and which node every host identity names, outside ``srun`` (node 0) and
inside each step (the step's own node).

The sandbox's nodes are slurmd processes on one host, so ``hostname`` is the
same on every Slurm node: there, node identity is ``SLURMD_NODENAME`` /
``SLURM_NODEID``; in the pods it is the pod's own host name and address, each
mapped to the pod's node index. The sandbox runs in a private mount namespace
that holds ``/mnt/shared`` (the test's folder) and an ``/etc/hosts`` naming
the nodes, so nothing on the host changes.

The tests skip, with the reason, only where torch, the sandbox (root on
Debian) or the pod runner (unshare) cannot be had; in CI (``CI=true``) they
fail instead.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import CORPUS, REPO, free_ports
from podrunner import RunResult
from podrunner import testing as pods

from migrate.diagnostics import Collector
from migrate.site.config import parse_site_config
from migrate.translate import translate_jobs
from migrate.translators.kubernetes import flavors
from migrate.translators.slurm import reader
from migrate.vocab import Format

pytestmark = pytest.mark.slurm

CASES = CORPUS / "cases" / "run"
PROGRAMS = [
    REPO / "tests" / "run_programs" / name
    for name in ("allreduce.py", "mpi_hello.py", "rank_env.py", "ray_probe.py")
]
SANDBOX = REPO / "scripts" / "slurm-sandbox.sh"
SANDBOX_BIN = REPO / "tests" / "run_programs" / "sandbox_bin"
NODES = 4
SHARED = "/mnt/shared"
SITE = parse_site_config(
    {
        "site": "run",
        "filesystems": [{"prefix": SHARED, "kind": "nfs", "pvc": "shared"}],
        "defaults": {"image": "stand-in", "namespace": "run"},
    }
)
FLAVORS = ("job", "jobset", "volcano", "pytorchjob", "mpijob", "slurm-bridge")
# Open MPI: root may run it, and its TCP traffic stays on the loopback addresses (the sandbox's
# one host; the pods' aliases are loopback ones too, on interfaces other than lo)
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
SLURM_MPI_ENV = {
    **MPI_ENV,
    "OMPI_MCA_btl_tcp_if_include": "lo",
    "OMPI_MCA_oob_tcp_if_include": "lo",
    "OMPI_MCA_btl": "self,tcp",  # the sandbox's "nodes" share one host: no shared memory across them
}
POD_MPI_FILES = {"/etc/openmpi/openmpi-mca-params.conf": "btl_tcp_if_exclude = lo\noob_tcp_if_exclude = lo\n"}
IDENTITY = ("hostname", "hostname_s", "hostname_f", "hostname_i", "hostname_I", "HOSTNAME")


def _unavailable(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"CI must run the differential tests: {reason}")
    pytest.skip(reason)


def _need_torch() -> None:
    try:
        import torch  # noqa: F401
    except ImportError:
        _unavailable("torch is not installed (scripts/test.sh installs torch==2.13.0)")


def _need_mpi(case: str) -> None:
    if "mpirun" in source(case).read_text() and not all(
        shutil.which(tool) for tool in ("mpirun", "orted", "/usr/sbin/sshd", "ssh-keygen")
    ):
        _unavailable("Open MPI and OpenSSH are not installed (scripts/test.sh installs them)")


def source(case: str) -> Path:
    return CASES / f"{case}.sbatch"


def translate(case: str, flavor: str) -> str | None:
    """The manifests of a case in a flavor, or None when the flavor cannot express it."""
    path = source(case)
    rel = str(path.relative_to(REPO))
    jobs = reader.read(path.read_text(encoding="utf-8"), rel, Collector(rel))
    style = "emulate" if case in EMULATED_CASES else "auto"
    t = translate_jobs(jobs, flavor=flavor, config=SITE, style=style).translations[0]
    if t.flavor != flavor:
        return None
    if case.startswith("native_") and t.style != "native":
        return None  # written for the native style: its emulation is what every other case runs
    if flavors.mpi_launcher(jobs[0]) is not None and flavor != "mpijob":
        return None  # mpirun reaches other pods only in an MPIJob
    (text,) = t.files.values()
    return text


# Cases that native could also express, run emulated: their point is the emulation's srun (in an
# MPIJob, srun becomes mpirun over ssh, and the ranks must still see the script's exports and SLURM_*).
EMULATED_CASES = ("srun_mpi_ranks",)
# Kueue wraps the same Job or JobSet in a queue (suspended until admitted): one case of each is enough.
KUEUE_CASES = ("array_task_files", "torchrun_hostname")
# Flavors that run the same emulated pods under another controller or scheduler run on a few cases:
# a Volcano Job's pods (its own names and env) and slurm-bridge's (the same Job or JobSet, annotated).
FEW_CASES = {"volcano": ("download_once", "hetjob_two_components"), "slurm-bridge": ("download_once",)}


def case_flavors() -> list[tuple[str, str]]:
    out = []
    for path in sorted(CASES.glob("*.sbatch")):
        for flavor in FLAVORS:
            if flavor in FEW_CASES and path.stem not in FEW_CASES[flavor]:
                continue
            if translate(path.stem, flavor) is not None:
                out.append((path.stem, flavor))
    out += [(case, "kueue") for case in KUEUE_CASES if translate(case, "kueue") is not None]
    return out


# ---------------------------------------------------------------------------
# Slurm side


@pytest.fixture(scope="module")
def slurm() -> Iterator[dict[str, Any]]:
    _need_torch()
    if os.geteuid() != 0 or not Path("/etc/debian_version").exists():
        _unavailable("the Slurm sandbox needs root on Debian")
    if shutil.which("unshare") is None:
        _unavailable("unshare is not installed")
    folder = Path(tempfile.mkdtemp(prefix="migrate-run-slurm-", dir="/tmp"))
    folder.chmod(0o755)
    shared = folder / "shared"
    shared.mkdir()
    hosts = folder / "hosts"
    names = " ".join(f"node{i}" for i in range(1, NODES + 1))
    hosts.write_text(Path("/etc/hosts").read_text() + f"\n127.0.0.1\t{names}\n")
    port = free_ports(NODES + 1)
    env = {
        **os.environ,
        # sandbox_bin: a `ray` whose worker start-ups take turns (the nodes share one host)
        "PATH": f"{SANDBOX_BIN}:{pods.VENV_BIN}:{os.environ.get('PATH', '/usr/bin:/bin')}",
        **SLURM_MPI_ENV,
        "SLURM_SANDBOX_DIR": str(folder / "sbx"),
        "SLURM_SANDBOX_NODES": str(NODES),
        "SLURM_SANDBOX_CPUS": "8",
        "SLURM_SANDBOX_MEM_MB": "16000",
        "SLURM_SANDBOX_GPUS": "0",
        "SLURM_SANDBOX_CTLD_PORT": str(port),
        "SLURM_SANDBOX_SLURMD_PORT": str(port + 1),
        "SLURM_SANDBOX_PARTITIONS": "cpu",
        "SLURM_SANDBOX_LICENSES": "",
    }
    # the daemons (and so the jobs) live in a mount namespace of their own
    private = (
        f"mkdir -p /mnt && mount -t tmpfs migrate-run /mnt && mkdir {SHARED} && "
        f"mount --bind {shared} {SHARED} && mount --bind {hosts} /etc/hosts && exec bash {SANDBOX} start"
    )
    for _attempt in range(2):  # a port taken between the check and the bind: once more, on others
        started = subprocess.run(
            ["unshare", "--mount", "--propagation", "private", "bash", "-c", private],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        if started.returncode == 0:
            break
        subprocess.run(
            ["bash", str(SANDBOX), "purge"], env=env, capture_output=True, timeout=120, check=False
        )
        port = free_ports(NODES + 1)
        env["SLURM_SANDBOX_CTLD_PORT"], env["SLURM_SANDBOX_SLURMD_PORT"] = str(port), str(port + 1)
    else:
        shutil.rmtree(folder, ignore_errors=True)
        pytest.fail(f"the Slurm sandbox did not start:\n{started.stdout}\n{started.stderr}")
    env["SLURM_CONF"] = str(folder / "sbx" / "etc" / "slurm.conf")
    try:
        sandbox = {"env": env, "shared": shared, "folder": folder, "results": {}, "jobs": {}}
        _submit_all(sandbox)
        yield sandbox
    finally:
        subprocess.run(
            ["bash", str(SANDBOX), "purge"], env=env, capture_output=True, timeout=120, check=False
        )
        shutil.rmtree(folder, ignore_errors=True)


def _submit_all(slurm: dict[str, Any]) -> None:
    """Submit every case at once: the sandbox has room for all, and they run while pods do."""
    shared: Path = slurm["shared"]
    for program in PROGRAMS:
        shutil.copy(program, shared / program.name)
    last_on_port: dict[str, str] = {}
    for path in sorted(CASES.glob("*.sbatch")):
        text = path.read_text()
        if "ray start" in text:
            continue  # a Ray cluster runs alone on the sandbox's one host (one /tmp/ray): its test submits it
        submit = slurm["folder"] / path.stem
        submit.mkdir()
        # Every sandbox node is the one host: two jobs listening on the same fixed port (a torchrun
        # rendezvous on :29500) would meet each other's store, which separate nodes never do. Such
        # jobs take turns.
        ports = _fixed_ports(text)
        after = sorted({last_on_port[p] for p in ports if p in last_on_port})
        wait = [f"--dependency=afterany:{':'.join(after)}"] if after else []
        done = subprocess.run(
            ["sbatch", "--parsable", *wait, str(path)],
            cwd=submit,
            env=slurm["env"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        job = done.stdout.strip().split(";")[0]
        slurm["jobs"][path.stem] = (done.returncode, job, done.stderr)
        if done.returncode == 0:
            last_on_port.update(dict.fromkeys(ports, job))


def _fixed_ports(script: str) -> set[str]:
    """The fixed TCP ports a script listens on or meets at (`host:29500`, `MASTER_PORT=29400`)."""
    return set(re.findall(r"(?:port=|:)(\d{4,5})\b", script, flags=re.IGNORECASE))


def slurm_run(slurm: dict[str, Any], case: str) -> dict[str, Any]:
    """What a case's sbatch run left in the shared folder (all cases were submitted at the start)."""
    if case in slurm["results"]:
        return slurm["results"][case]
    _need_mpi(case)
    shared: Path = slurm["shared"]
    submit = slurm["folder"] / case
    rc, job, stderr = slurm["jobs"][case]
    assert rc == 0, f"sbatch: {stderr}"
    states = _wait(slurm["env"], job)
    logs = "\n".join(p.read_text(errors="replace") for p in sorted(submit.glob("*.out")))
    assert states == {"COMPLETED"}, f"{case}: {states}\n{logs}"
    slurm.setdefault("logs", {})[case] = logs
    out = _case_dir(shared, case)
    nodes = _job_nodes(slurm["env"], job)  # node index = place in the job's own allocation

    def node_of(record: dict[str, str]) -> set[int]:
        found: set[int] = set()
        for key in ("SLURMD_NODENAME", "head"):
            if key in record:
                found.add(nodes.index(record[key]))
        return found  # host names are the one host's on every sandbox node

    slurm["results"][case] = observe(out, node_of)
    return slurm["results"][case]


FINISHED = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "BOOT_FAIL"}


def _wait(env: dict[str, str], job: str, seconds: float = 240) -> set[str]:
    """The states of a job (of every task of an array) once all have ended; sbatch --wait polls slowly."""
    deadline = time.monotonic() + seconds
    states: set[str] = set()
    while time.monotonic() < deadline:
        done = subprocess.run(["scontrol", "-o", "show", "job", job], env=env, capture_output=True, text=True)
        states = set(re.findall(r"JobState=(\S+)", done.stdout))
        if states and states <= FINISHED:
            break
        if "COMPLETING" in states and states <= FINISHED | {"COMPLETING"}:
            # every script has ended: what it left running would hold a step's output open (slurmstepd
            # waits 60 s for it), where a site's cgroup tracking kills it at once
            _end_leftovers(env, job)
        time.sleep(0.3)
    if states and states <= FINISHED:
        _end_leftovers(env, job)
    return states


def _end_leftovers(env: dict[str, str], job: str) -> None:
    """Kill what the job left running. A site's Slurm tracks a job's processes in a cgroup and kills
    them all when it ends; the sandbox's proctrack/linuxproc follows parents only, and `ray start
    --block` daemons outlive it, holding the next test's ports (127.0.0.1:6379)."""
    conf = f"SLURM_CONF={env['SLURM_CONF']}".encode()
    ids = {f"SLURM_JOB_ID={job}".encode(), f"SLURM_ARRAY_JOB_ID={job}".encode()}
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            environ = set((proc / "environ").read_bytes().split(b"\0"))
        except OSError:
            continue
        if conf in environ and ids & environ:
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(proc.name), signal.SIGKILL)


def _job_nodes(env: dict[str, str], job: str) -> list[str]:
    """The nodes of a job in allocation order (a het job's components one after the other)."""
    shown = subprocess.run(["scontrol", "-o", "show", "job", job], env=env, capture_output=True, text=True)
    nodes: list[str] = []
    for nodelist in re.findall(r"(?<![A-Za-z])NodeList=(\S+)", shown.stdout):
        if nodelist == "(null)":
            continue
        names = subprocess.run(
            ["scontrol", "show", "hostnames", nodelist], env=env, capture_output=True, text=True
        ).stdout.split()
        nodes += [n for n in names if n not in nodes]
    return nodes


def _case_dir(shared: Path, case: str) -> Path:
    """The folder a case writes to: its ``out=/mnt/shared/NAME`` line."""
    line = next(x for x in source(case).read_text().splitlines() if x.startswith(f"out={SHARED}/"))
    out = shared / line.split("/")[-1]
    assert out.is_dir(), f"{case} wrote nothing under {shared}: {sorted(p.name for p in shared.iterdir())}"
    return out


# ---------------------------------------------------------------------------
# Kubernetes side


def pod_run(
    case: str,
    flavor: str,
    workdir: Path,
    text: str | None = None,
    timeout: float = 90,
    folders: tuple[str, ...] = (),
    **options: Any,
) -> Any:
    """``folders``: made on the shared claim first, as a site's job folders are there before a job."""
    pods.require_pods()
    manifests = text if text is not None else translate(case, flavor)
    assert manifests is not None
    shared = workdir / "shared"
    shared.mkdir(parents=True)
    for program in PROGRAMS:
        shutil.copy(program, shared / program.name)
    for folder in folders:
        (shared / folder).mkdir(parents=True)
    options.setdefault("image_env", {"PATH": pods.IMAGE_PATH, **MPI_ENV})
    options.setdefault("image_files", POD_MPI_FILES)
    result = pods.run(manifests, workdir / "pods", claims={"shared": shared}, timeout=timeout, **options)
    return result, shared


def pod_observe(result: RunResult, shared: Path, case: str) -> dict[str, Any]:
    # a native JobSet's prepare pod runs before the nodes and is none of them
    prepare = sum(1 for p in result.pods if "-prepare-" in p.plan.hostname)

    def node_of(record: dict[str, str]) -> set[int]:
        found: set[int] = set()
        for key in ("SLURMD_NODENAME", "head", *IDENTITY):
            if record.get(key):
                found.add(result.node_of(record[key]) - prepare)
        return found

    return observe(_case_dir(shared, case), node_of)


# ---------------------------------------------------------------------------
# What happened, without what differs by nature (names, ids, addresses)


def _records(text: str) -> list[dict[str, str]]:
    out, current = [], {}
    for line in [*text.splitlines(), ""]:
        if not line.strip():
            if current:
                out.append(current)
            current = {}
            continue
        key, _, value = line.partition("=")
        current[key] = value
    return out


def observe(out: Path, find: Callable[[dict[str, str]], set[int]]) -> dict[str, Any]:
    def node_of(record: dict[str, str]) -> list[object]:
        """The nodes a record's names and addresses name, and its SLURM_NODEID (in a step: the step's)."""
        return [*sorted(find(record)), f"SLURM_NODEID={record.get('SLURM_NODEID')}"]

    seen: dict[str, Any] = {}
    log = out / "statements.log"
    seen["statements"] = sorted(Counter(log.read_text().splitlines()).items()) if log.exists() else []
    batch = out / "batch.env"
    if batch.exists():
        seen["batch host"] = [node_of(r) for r in _records(batch.read_text())]
    steps = {}
    for path in sorted(out.glob("*.env")):
        if path.stem in ("batch", "pinned"):
            continue
        (record,) = _records(path.read_text())
        name, _, procid = path.stem.rpartition("-")
        steps[procid if name == "step" else path.stem] = {
            "nodes": node_of(record),
            **{k: record[k] for k in ("local", "sum") if k in record},
        }
    if steps:
        seen["steps"] = steps
    pinned = out / "pinned.env"
    if pinned.exists():
        seen["pinned step"] = [node_of(r) for r in _records(pinned.read_text())]
    ranks = [json.loads(p.read_text()) for p in sorted(out.glob("rank-*.json"))]
    if ranks:
        # by name only: MPI ranks started over ssh in an MPIJob have no SLURM_* variables
        rank_nodes = [
            sorted(find({"SLURMD_NODENAME": r["nodename"], "hostname": str(r["hostname"])})) for r in ranks
        ]
        seen["world sizes"] = sorted({r["world_size"] for r in ranks})
        seen["ranks"] = len(ranks)
        pairs = zip(rank_nodes, ranks, strict=True)
        seen["node and local rank"] = sorted((n, r["local_rank"]) for n, r in pairs)
        seen["all_reduce"] = sorted({r["allreduce"] for r in ranks})
        if any(r.get("env") for r in ranks):  # the variables each rank was asked to report
            seen["rank env"] = sorted((r["rank"], sorted(r["env"].items())) for r in ranks)
    seen["files"] = {
        p.name: p.read_text()
        for p in sorted(out.iterdir())
        if p.suffix == ".txt" or p.name.startswith("task-")
    }
    return seen


# ---------------------------------------------------------------------------
# The tests


@pytest.mark.parametrize(("case", "flavor"), case_flavors())
def test_translated_job_runs_as_on_slurm(
    case: str, flavor: str, slurm: dict[str, Any], tmp_path: Path
) -> None:
    on_slurm = slurm_run(slurm, case)
    result, shared = pod_run(case, flavor, tmp_path)
    assert result.status == "Complete", result.describe()
    manifests = translate(case, flavor) or ""
    # the native cases run with no script, shims or step service; the others as emulated
    assert ("entrypoint.sh" not in manifests) == case.startswith("native_"), case
    in_pods = pod_observe(result, shared, case)
    assert in_pods == on_slurm, f"Slurm's output:\n{slurm['logs'][case]}\nthe pods':\n{result.describe()}"


def test_the_cases_check_what_they_claim(slurm: dict[str, Any]) -> None:
    """The Slurm side itself: node 0 outside srun, one line per statement, 4 ranks summing to 10."""
    hostname = slurm_run(slurm, "torchrun_hostname")
    assert hostname["batch host"] == [[0, "SLURM_NODEID=0"]]
    assert hostname["statements"] == [("epilog", 1), ("prolog", 1)]
    assert hostname["world sizes"] == [4] and hostname["all_reduce"] == [10.0]
    node = [[n, f"SLURM_NODEID={n}"] for n in range(2)]
    assert hostname["node and local rank"] == [([0], 0), ([0], 1), ([1], 0), ([1], 1)]
    assert hostname["steps"] == {"0": {"nodes": node[0]}, "1": {"nodes": node[1]}}
    download = slurm_run(slurm, "download_once")
    assert download["statements"] == [("download", 1), ("epilog 0", 1), ("prepared 1000", 1)]
    assert sorted(s["nodes"][0] for s in download["steps"].values()) == [0, 0, 1, 1, 2, 2, 3, 3]
    assert download["batch host"] == [[0, "SLURM_NODEID=None"]]
    assert download["pinned step"] == [[3, "SLURM_NODEID=0"]]  # in a step, the step's node index
    mpi = slurm_run(slurm, "mpi_hello")
    assert mpi["world sizes"] == [4] and mpi["all_reduce"] == [10.0]
    assert mpi["node and local rank"] == [([0], 0), ([0], 1), ([1], 0), ([1], 1)]
    array = slurm_run(slurm, "array_task_files")
    assert sorted(array["files"]) == [f"task-{i}.txt" for i in range(4)]


def per_pod(text: str) -> str:
    """The translation as it was before batch-host semantics: every pod runs the whole script.

    Every pod skips serving steps and runs the script itself, with its own host
    name; srun runs only this pod's share.
    """
    import yaml

    docs = [d for d in yaml.safe_load_all(text) if d]
    for doc in docs:
        if doc["kind"] != "ConfigMap":
            continue
        data = doc["data"]
        serve = 'if [ "$SLURM_NODEID" != 0 ]; then\n    exec perl'
        assert serve in data["entrypoint.sh"]
        data["entrypoint.sh"] = (
            data["entrypoint.sh"]
            .replace(serve, "if false; then\n    exec perl")
            .replace("__m_multi=1", "__m_multi=0")
        )
        local = 'if [ "${MIGRATE_IN_STEP:-0}" = 1 ]; then'
        assert local in data["srun"]
        data["srun"] = data["srun"].replace(local, "if true; then")
    return yaml.safe_dump_all(docs, sort_keys=False)


def test_running_the_script_in_every_pod_fails_the_hostname_rendezvous(
    slurm: dict[str, Any], tmp_path: Path
) -> None:
    """The tests can fail: without batch-host semantics each pod's torchrun waits at its own name."""
    on_slurm = slurm_run(slurm, "torchrun_hostname")
    text = translate("torchrun_hostname", "jobset")
    assert text is not None
    log = tmp_path / "shared" / "rdzv-hostname" / "statements.log"
    began = time.monotonic()

    def waited_enough() -> bool:
        # six seconds of hanging, and both pods past their prolog (a loaded machine takes longer)
        prologs = log.read_text().splitlines().count("prolog") if log.exists() else 0
        return time.monotonic() - began >= 6 and prologs == 2

    result, shared = pod_run(
        "torchrun_hostname", "jobset", tmp_path, per_pod(text), timeout=60, stop_when=waited_enough
    )
    assert result.status != "Complete" or pod_observe(result, shared, "torchrun_hostname") != on_slurm
    statements = (shared / "rdzv-hostname" / "statements.log").read_text().splitlines()
    assert statements.count("prolog") == 2  # and the statements outside srun ran once per pod


def test_a_pod_that_starts_late_is_waited_for(slurm: dict[str, Any], tmp_path: Path) -> None:
    """Its name does not resolve, and nothing listens, until it starts: the batch pod retries."""
    on_slurm = slurm_run(slurm, "download_once")
    result, shared = pod_run("download_once", "job", tmp_path, start_delays={3: 3.0})
    assert result.status == "Complete", result.describe()
    assert pod_observe(result, shared, "download_once") == on_slurm


# ---------------------------------------------------------------------------
# The other direction: a manifest's pods in the runner, its sbatch translation on Slurm

# Each pod's index (an Indexed Job's completion index, a JobSet's job-index label) is its srun task's.
REVERSE = ("indexed_shards", "jobset_pair")


def run_translated(
    slurm: dict[str, Any], path: Path, name: str, config: Any, options: tuple[str, ...] = ()
) -> tuple[Path, str]:
    """A manifest translated to sbatch (no container runtime: the sandbox has no pyxis), run to its end.

    ``options``: sbatch options given on its command line, which win over the script's own.
    Returns the script and its output, once the job has COMPLETED.
    """
    from migrate.translators.kubernetes import reader as k8s_reader

    rel = str(path.relative_to(REPO))
    jobs = k8s_reader.read(path.read_text(encoding="utf-8"), rel, Collector(rel))
    return run_jobs(slurm, jobs, name, config, options)


def run_jobs(
    slurm: dict[str, Any], jobs: list[Any], name: str, config: Any, options: tuple[str, ...] = ()
) -> tuple[Path, str]:
    """Jobs of the IR translated to sbatch and run on the sandbox, as :func:`run_translated`."""
    translated = translate_jobs(jobs, to=Format.SLURM, runtime="none", config=config)
    out = slurm["folder"] / name
    translated.tree.commit(str(out))
    (script,) = out.glob("*/job.sbatch")
    done = subprocess.run(
        ["sbatch", "--parsable", *options, script.name],
        cwd=script.parent,
        env=slurm["env"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    states = _wait(slurm["env"], done.stdout.strip().split(";")[0])
    logs = "\n".join(p.read_text(errors="replace") for p in sorted(script.parent.glob("*.out")))
    assert states == {"COMPLETED"}, f"{states}\n{logs}\n{script.read_text()}"
    return script, logs


def _written(folder: Path) -> dict[str, Any]:
    log = folder / "statements.log"
    return {
        "statements": sorted(Counter(log.read_text().splitlines()).items()) if log.exists() else [],
        "files": {p.name: p.read_text() for p in sorted(folder.iterdir()) if p.name != "statements.log"},
    }


@pytest.mark.parametrize("name", REVERSE)
def test_a_manifest_runs_on_slurm_as_in_its_pods(name: str, slurm: dict[str, Any], tmp_path: Path) -> None:

    path = CASES / f"{name}.yaml"
    text = path.read_text(encoding="utf-8")
    folder = re.search(rf"mkdir -p {SHARED}/(\S+)", text)
    assert folder is not None
    result, shared = pod_run(name, "", tmp_path, text)
    assert result.status == "Complete", result.describe()
    in_pods = _written(shared / folder.group(1))

    run_translated(slurm, path, f"reverse-{name}", SITE)
    assert _written(slurm["shared"] / folder.group(1)) == in_pods


# What each operator starts, run both ways: ranks, world size, the folder each rank starts in, the
# variables it sees, and how the ranks share Slurm's nodes (pods packed as the site's nodes hold them).
SANDBOX_SITE = parse_site_config(
    {
        "site": "run",
        "filesystems": [{"prefix": SHARED, "kind": "nfs", "pvc": "shared"}],
        "defaults": {"image": "stand-in", "namespace": "run"},
        # the sandbox's nodes: 8 CPUs and 16000 MB each, in its one partition
        "partitions": {"cpu": {"cpus_per_node": 8, "mem_gb": 15, "default": True}},
    }
)
# case -> (its folder on the shared claim, the ranks per Slurm node the packing gives, its pods)
OPERATOR_CASES = {
    "pytorchjob_python_per_pod": ("ptj-python", [4], 4),  # four 1-CPU pods share one 8-CPU node
    "pytorchjob_torchrun_per_pod": ("ptj-torchrun", [2, 2], 2),  # a 4-CPU pod per node, 2 processes each
    "mpijob_wdir": ("mpi-wdir", [2, 2], 2),  # 2 slots on each of 2 workers; the Launcher is no node
}


def _ranks(folder: Path) -> dict[str, Any]:
    ranks = [json.loads(p.read_text()) for p in sorted(folder.glob("rank-*.json"))]
    assert ranks, f"no rank wrote under {folder}"
    return {
        "ranks": sorted(r["rank"] for r in ranks),
        "world sizes": sorted({r["world_size"] for r in ranks}),
        "all_reduce": sorted({r["allreduce"] for r in ranks}),
        "local ranks": sorted(r["local_rank"] for r in ranks if "local_rank" in r),
        "folders": sorted({r["cwd"] for r in ranks if "cwd" in r}),
        "env": sorted(json.dumps(r["env"], sort_keys=True) for r in ranks if "env" in r),
    }


def _per_node(folder: Path) -> list[int]:
    found = Counter(json.loads(p.read_text())["nodename"] for p in folder.glob("rank-*.json"))
    return sorted(found.values())


@pytest.mark.parametrize("name", sorted(OPERATOR_CASES))
def test_what_an_operator_starts_runs_on_slurm_as_in_its_pods(
    name: str, slurm: dict[str, Any], tmp_path: Path
) -> None:

    out, per_node, pods_run = OPERATOR_CASES[name]
    path = CASES / f"{name}.yaml"
    text = path.read_text(encoding="utf-8")
    if "mpirun" in text and not all(
        shutil.which(t) for t in ("mpirun", "orted", "/usr/sbin/sshd", "ssh-keygen")
    ):
        _unavailable("Open MPI and OpenSSH are not installed (scripts/test.sh installs them)")
    result, shared = pod_run(name, "", tmp_path, text, folders=(out,))
    assert result.status == "Complete", result.describe()
    in_pods = _ranks(shared / out)

    (slurm["shared"] / out).mkdir()
    script, logs = run_translated(slurm, path, f"operator-{name}", SANDBOX_SITE)
    on_slurm = _ranks(slurm["shared"] / out)
    if len(per_node) < pods_run and in_pods["local ranks"]:
        # pods packed onto fewer Slurm nodes: a rank's local rank counts its node's ranks, not its
        # pod's (declared: on Kubernetes each pod is a host of its own)
        assert on_slurm.pop("local ranks") == sorted(i for n in per_node for i in range(n))
        in_pods.pop("local ranks")
    assert on_slurm == in_pods, f"{logs}\n{script.read_text()}"
    assert _per_node(slurm["shared"] / out) == per_node, script.read_text()


# RayJobs run both ways: KubeRay's cluster in the pod runner (its own, or the RayCluster the selector
# names), and the translation's cluster started by srun inside the allocation. Compared: the nodes
# the entrypoint finds, each node's CPUs, GPUs and memory as Ray counts them, a task run on every
# node (each on a host of its own), and the env the entrypoint sees.
RAY_CASES = {
    "rayjob_own_cluster": ("ray-probe", ("rayjob_own_cluster.yaml",)),
    "ray-on-cluster": ("ray-shared", ("ray-on-cluster/raycluster.yaml", "ray-on-cluster/rayjob.yaml")),
}


def _scanned_rayjobs(paths: list[Path]) -> list[Any]:
    """The RayJobs of the files as a scan reads them (a selected RayCluster's roles linked in)."""
    from migrate.scan import scanner
    from migrate.scan.results import ScanOptions
    from migrate.vocab import JobKind

    scanned = scanner.scan([str(p) for p in paths], ScanOptions(jobs=1))
    return [job for f in scanned.files for job in f.jobs if job.kind == JobKind.RAY_JOB]


@pytest.mark.parametrize("name", sorted(RAY_CASES))
def test_a_rayjob_runs_on_slurm_on_the_cluster_kuberay_would_start(
    name: str, slurm: dict[str, Any], tmp_path: Path
) -> None:
    try:
        import ray  # noqa: F401
    except ImportError:
        _unavailable("ray is not installed (scripts/test.sh installs it)")
    out, files = RAY_CASES[name]
    paths = [CASES / f for f in files]
    text = "\n---\n".join(p.read_text(encoding="utf-8") for p in paths)
    # KubeRay runs ray start in a login shell: Debian's /etc/profile resets PATH, which a Ray image's
    # does not, and the host's own start-up files are no image's: the stand-in's ~/.profile sets PATH
    image_files = {**POD_MPI_FILES, "/root/.profile": f'export PATH="{pods.IMAGE_PATH}"\n'}
    result, shared = pod_run(name, "", tmp_path, text, timeout=240, folders=(out,), image_files=image_files)
    assert result.status == "Complete", result.describe()
    in_pods = json.loads((shared / out / "driver.json").read_text())

    (slurm["shared"] / out).mkdir()
    jobs = _scanned_rayjobs(paths)
    assert len(jobs) == 1 and jobs[0].images(), jobs
    script, logs = run_jobs(slurm, jobs, f"ray-{name}", SANDBOX_SITE)
    on_slurm = json.loads((slurm["shared"] / out / "driver.json").read_text())
    nodes = [p.read_text() for p in sorted((slurm["shared"] / out).glob("node-*.json"))]
    assert on_slurm == in_pods, f"{nodes}\n{logs}\n{script.read_text()}"
    assert in_pods["hosts"] == len(in_pods["resources"]) > 1


def test_a_scripts_ray_cluster_runs_as_its_native_rayjob(slurm: dict[str, Any], tmp_path: Path) -> None:
    """The Ray cluster a batch script starts (head, workers, driver, as Ray's Slurm guide does it), run
    as that script on the sandbox and as its native RayJob in the pod runner. Compared as for the
    RayJobs above, but for memory, which Ray sizes from the sandbox's host on Slurm and from the pod's
    limit under KubeRay; the head's address (ip_head) is compared as being the GCS port of a host."""
    try:
        import ray  # noqa: F401
    except ImportError:
        _unavailable("ray is not installed (scripts/test.sh installs it)")
    case, out = "native_ray", "native-ray"
    path = source(case)
    rel = str(path.relative_to(REPO))
    t = translate_jobs(reader.read(path.read_text(encoding="utf-8"), rel, Collector(rel)), config=SITE)
    (translation,) = t.translations
    assert (translation.flavor, translation.style) == ("rayjob", "native"), translation.style_reason
    (text,) = translation.files.values()
    image_files = {**POD_MPI_FILES, "/root/.profile": f'export PATH="{pods.IMAGE_PATH}"\n'}
    result, shared = pod_run(case, "", tmp_path, text, timeout=240, folders=(out,), image_files=image_files)
    assert result.status == "Complete", result.describe()

    submit = slurm["folder"] / case
    submit.mkdir()
    done = subprocess.run(
        ["sbatch", "--parsable", str(path)], cwd=submit, env=slurm["env"], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    states = _wait(slurm["env"], done.stdout.strip().split(";")[0])
    logs = "\n".join(p.read_text(errors="replace") for p in sorted(submit.glob("*.out")))
    assert states == {"COMPLETED"}, f"{states}\n{logs}"

    def seen(folder: Path) -> dict[str, Any]:
        record = json.loads((folder / "driver.json").read_text())
        for node in record["resources"]:
            node.pop("memory")
        address = record["env"].pop("ip_head") or ""
        record["head at the GCS port"] = bool(re.fullmatch(r"[0-9.]+:6379", address))
        return record

    in_pods = seen(shared / out)
    assert seen(slurm["shared"] / out) == in_pods, logs
    assert in_pods["hosts"] == len(in_pods["resources"]) == 3 and in_pods["head at the GCS port"], in_pods


# ---------------------------------------------------------------------------
# A LeaderWorkerSet's groups: each group's pods in the runner, each group an array task on Slurm

LWS_CASE, LWS_OUT = "lws_groups", "lws-groups"


def _groups(folder: Path) -> dict[str, Any]:
    """Per group folder: its ranks, world sizes, all_reduce results, start folders and env."""
    out: dict[str, Any] = {}
    for group in sorted(folder.glob("group-*")):
        ranks = [json.loads(p.read_text()) for p in sorted(group.glob("rank-*.json"))]
        out[group.name] = {
            "files": sorted(p.name for p in group.iterdir()),
            "ranks": sorted(r["rank"] for r in ranks),
            "world sizes": sorted({r["world_size"] for r in ranks}),
            "all_reduce": sorted({r["allreduce"] for r in ranks}),
            "folders": sorted({r["cwd"] for r in ranks}),
            "env": sorted(
                json.dumps({k: v for k, v in r["env"].items() if k != "LWS_LEADER_ADDRESS"}, sort_keys=True)
                for r in ranks
            ),
        }
    return out


def _leader_addresses(folder: Path) -> dict[str, list[tuple[str, str | None]]]:
    """Per group: each rank's LWS_LEADER_ADDRESS beside the Slurm node it ran on (None in a pod)."""
    found: dict[str, list[tuple[str, str | None]]] = {}
    for group in sorted(folder.glob("group-*")):
        ranks = [json.loads(p.read_text()) for p in sorted(group.glob("rank-*.json"))]
        found[group.name] = [(r["env"]["LWS_LEADER_ADDRESS"], r["nodename"]) for r in ranks]
    return found


def test_lws_groups_run_on_slurm_as_in_their_pods(slurm: dict[str, Any], tmp_path: Path) -> None:
    """Two groups of a leader and a worker, each pod a torchrun agent of its group's gloo world.

    In the runner every pod is a host of its own; on Slurm each group is one array task whose two
    tasks share a node (1-CPU pods). The sandbox's nodes are one host, whose ports every group would
    share: its array tasks run one at a time (``--array=0-1%1`` given to sbatch), as they would run
    side by side on nodes of their own.
    """
    path = CASES / f"{LWS_CASE}.yaml"
    began = time.monotonic()
    result, shared = pod_run(LWS_CASE, "", tmp_path, path.read_text(encoding="utf-8"), folders=(LWS_OUT,))
    assert result.status == "Complete", result.describe()
    in_pods = _groups(shared / LWS_OUT)
    assert sorted(in_pods) == ["group-0", "group-1"], in_pods
    for group, seen in _leader_addresses(shared / LWS_OUT).items():
        # the leader pod's DNS name, <name>-<group>.<name>.<namespace>, which every pod resolved
        assert {address for address, _ in seen} == {f"lws-groups-{group[-1]}.lws-groups.default"}

    (slurm["shared"] / LWS_OUT).mkdir()
    script, logs = run_translated(slurm, path, "lws-groups", SANDBOX_SITE, ("--array=0-1%1",))
    on_slurm = _groups(slurm["shared"] / LWS_OUT)
    assert on_slurm == in_pods, f"{logs}\n{script.read_text()}"
    for group, seen in _leader_addresses(slurm["shared"] / LWS_OUT).items():
        # the first host of the group's allocation, which its leader's task runs on; one node per group
        assert len({node for _, node in seen}) == 1, (group, seen)
        assert {address for address, _ in seen} == {seen[0][1]}, (group, seen)
    per_node = {
        group: sorted(Counter(node for _, node in seen).values())
        for group, seen in _leader_addresses(slurm["shared"] / LWS_OUT).items()
    }
    assert per_node == {"group-0": [2], "group-1": [2]}, script.read_text()
    print(f"LeaderWorkerSet both ways: {time.monotonic() - began:.1f} s")
