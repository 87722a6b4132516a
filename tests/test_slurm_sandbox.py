"""Translated scripts on a real Slurm: the project's sandbox (scripts/slurm-sandbox.sh).

A session fixture starts a private sandbox (its own folder and ports, enough
nodes, CPUs and memory for the corpus) and stops it at the end. Every script
translated from the corpus's Kubernetes files must pass ``sbatch --test-only``;
a few small translated jobs really run (one node, two nodes with srun, an
array, a dependency chain through submit.sh) and must complete. The tests
skip, with the reason shown, only where the sandbox cannot run: not root or
not Debian.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import textwrap
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from conftest import CORPUS, REPO, free_ports

from migrate import api, slurmcheck
from migrate.diagnostics import Collector
from migrate.scan import scanner
from migrate.site.config import load_site_config
from migrate.translate import translate_jobs
from migrate.translators.kubernetes import reader as k8s_reader

pytestmark = pytest.mark.slurm

SANDBOX = REPO / "scripts" / "slurm-sandbox.sh"
SITE = load_site_config(CORPUS / "sample-site" / "migrate.yaml")
NODES = 12  # the corpus's largest translated job asks for 8
JOB_TIMEOUT = 40


def _why_not() -> str | None:
    if os.geteuid() != 0:
        return "the Slurm sandbox runs its daemons as root; run the tests as root"
    if not Path("/etc/debian_version").exists():
        return "the Slurm sandbox installs Debian packages; this is not Debian"
    return None


@pytest.fixture(scope="session")
def sandbox() -> Iterator[dict[str, str]]:
    knobs = {
        "SLURM_SANDBOX_NODES": str(NODES),
        "SLURM_SANDBOX_CPUS": "192",  # the largest partition of the sample site
        "SLURM_SANDBOX_MEM_MB": "2200000",  # gpu-h100 nodes have 2 TB
        "SLURM_SANDBOX_TMP_MB": "7000000",  # local NVMe, as GPU nodes have it (pods ask ephemeral-storage)
        "SLURM_SANDBOX_GPUS": "8",
        "SLURM_SANDBOX_PARTITIONS": "cpu gpu debug gpu-h100 gpu-a100",
        "SLURM_SANDBOX_LICENSES": "matlab:4,ansys:2",
    }
    with started_sandbox(knobs) as env:
        yield env


@contextmanager
def started_sandbox(knobs: dict[str, str]) -> Iterator[dict[str, str]]:
    """A sandbox of its own folder and ports with these knobs, for the length of the block: the
    environment its clients need. Skips the test where the sandbox cannot run."""
    reason = _why_not()
    if reason:
        pytest.skip(reason)
    # munged wants every folder above its socket searchable by all: not pytest's 0700 tmp folders
    folder = Path(tempfile.mkdtemp(prefix="migrate-slurm-test-", dir="/tmp"))
    folder.chmod(0o755)
    port = free_ports(int(knobs.get("SLURM_SANDBOX_NODES", "8")) + 1)
    own = {
        "SLURM_SANDBOX_DIR": str(folder / "sbx"),
        "SLURM_SANDBOX_CTLD_PORT": str(port),
        "SLURM_SANDBOX_SLURMD_PORT": str(port + 1),
    }
    env = {**os.environ, **knobs, **own}
    started = subprocess.run(
        ["bash", str(SANDBOX), "start"], env=env, capture_output=True, text=True, timeout=300
    )
    env["SLURM_CONF"] = str(folder / "sbx" / "etc" / "slurm.conf")
    try:
        if started.returncode != 0:
            pytest.fail(f"the Slurm sandbox did not start:\n{started.stderr}")
        yield env
    finally:
        subprocess.run(
            ["bash", str(SANDBOX), "purge"], env=env, capture_output=True, timeout=120, check=False
        )
        shutil.rmtree(folder, ignore_errors=True)


def test_every_translated_kubernetes_job_passes_test_only(sandbox: dict[str, str], tmp_path: Path) -> None:
    paths = [
        CORPUS / "cases" / "kubernetes",
        CORPUS / "cases" / "argo",
        *sorted((CORPUS / "sample-site").glob("*/*.yaml")),
    ]
    jobs = [j for j in scanner.scan([str(p) for p in paths]).jobs if j.source.format == "kubernetes"]
    result = translate_jobs(jobs, to="slurm", config=SITE)
    result.tree.commit(str(tmp_path / "out"))
    checks = slurmcheck.check_tree(tmp_path / "out", env=sandbox)
    scripts = [c for c in checks if c.path.endswith(".sbatch")]
    assert len(scripts) >= 35
    assert all(c.method == slurmcheck.TEST_ONLY for c in scripts)
    rejected = [f"{c.path}: {c.message}" for c in checks if not c.accepted]
    assert rejected == []


def test_test_only_rejects_what_slurm_rejects(sandbox: dict[str, str], tmp_path: Path) -> None:
    bad = tmp_path / "bad.sbatch"
    bad.write_text("#!/bin/bash\n#SBATCH --partition=nosuch\ntrue\n")
    result = slurmcheck.check_script(bad, env=sandbox)
    assert (result.accepted, result.method) == (False, slurmcheck.TEST_ONLY)
    assert "invalid partition" in result.message.lower()
    assert slurmcheck.check_script(
        bad, method=slurmcheck.STATIC
    ).accepted  # only a controller knows partitions


TEMPLATED = "#!/bin/bash\n#SBATCH --job-name=t\n#SBATCH --nodes=${NUM_NODES} --partition=<PART>\nsrun true\n"


def test_test_only_sees_the_template_filled_with_the_given_values(
    sandbox: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SLURM_CONF", sandbox["SLURM_CONF"])
    script = tmp_path / "train.sbatch"
    script.write_text(TEMPLATED, encoding="utf-8")

    def slurm_results(*assignments: str) -> list[slurmcheck.CheckResult]:
        return api.run_validate(str(script), api.template_inputs(list(assignments), [])).slurm

    [bare] = slurm_results()
    assert (bare.accepted, bare.method) == (False, slurmcheck.TEST_ONLY)
    [filled] = slurm_results("NUM_NODES=4", "PART=gpu")
    assert (filled.path, filled.accepted, filled.method) == (str(script), True, slurmcheck.TEST_ONLY)
    assert "node[" in filled.message  # the controller placed 4 nodes
    [too_many] = slurm_results(f"NUM_NODES={NODES + 1}", "PART=gpu")
    assert (too_many.path, too_many.accepted) == (str(script), False)
    assert "node configuration is not available" in too_many.message
    [wrong_partition] = slurm_results("NUM_NODES=1", "PART=nosuch")
    assert "invalid partition" in wrong_partition.message.lower()
    assert script.read_text(encoding="utf-8") == TEMPLATED  # the user's file stays as written
    assert sorted(p.name for p in tmp_path.iterdir()) == ["train.sbatch"]


# ---------------------------------------------------------------------------
# Real runs


RUNS = """
apiVersion: batch/v1
kind: Job
metadata: {name: one-node}
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: c
          image: busybox
          command: ["printf", "%s|"]
          args: ["a b", "$(MSG)", "it's", "$(NOPE)", "`x`", "ünï"]
          env: [{name: MSG, value: "$$HOME"}]
---
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: two-nodes}
spec:
  replicatedJobs:
    - name: ranks
      replicas: 1
      template:
        spec:
          parallelism: 2
          completions: 2
          completionMode: Indexed
          backoffLimit: 0
          template:
            spec:
              containers:
                - name: c
                  image: busybox
                  command: ["sh", "-c", "echo node=$SLURMD_NODENAME index=$0", "$(JOB_COMPLETION_INDEX)"]
---
apiVersion: batch/v1
kind: Job
metadata: {name: shards}
spec:
  completions: 3
  parallelism: 2
  completionMode: Indexed
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers:
        - {name: c, image: busybox, command: ["echo", "shard", "$(JOB_COMPLETION_INDEX)"]}
---
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: chain}
spec:
  replicatedJobs:
    - name: first
      replicas: 1
      template:
        spec:
          backoffLimit: 0
          template:
            spec:
              containers: [{name: c, image: busybox, command: ["sh", "-c", "sleep 1; date +%s.%N"]}]
    - name: second
      replicas: 1
      dependsOn: [{name: first, status: Complete}]
      template:
        spec:
          backoffLimit: 0
          template:
            spec:
              containers: [{name: c, image: busybox, command: ["date", "+%s.%N"]}]
"""


def _sbatch(env: dict[str, str], folder: Path, script: str) -> str:
    done = subprocess.run(
        ["sbatch", "--parsable", script], cwd=folder, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().split(";")[0]


def _states(env: dict[str, str], job_ids: list[str]) -> dict[str, str]:
    """JobState of each job (array jobs: of every task), from scontrol show job."""
    out: dict[str, str] = {}
    for job_id in job_ids:
        done = subprocess.run(
            ["scontrol", "-o", "show", "job", job_id], env=env, capture_output=True, text=True, timeout=30
        )
        for line in done.stdout.splitlines():
            task = re.search(r"JobId=(\S+)", line)
            state = re.search(r"JobState=(\S+)", line)
            if task and state:
                out[task.group(1)] = state.group(1)
    return out


def _node_idle(env: dict[str, str], node: str) -> bool:
    done = subprocess.run(
        ["scontrol", "-o", "show", "node", node], env=env, capture_output=True, text=True, timeout=30
    )
    return re.search(r"\bState=IDLE(\s|$)", done.stdout) is not None


def _what_slurm_says(env: dict[str, str], job: str) -> str:
    """The job as the controller shows it and the daemons' last log lines: why a job ended as it did."""
    shown = subprocess.run(["scontrol", "show", "job", job], env=env, capture_output=True, text=True)
    logs = Path(env["SLURM_SANDBOX_DIR"]) / "log"
    tails = [
        f"---- {log.name}\n" + "\n".join(log.read_text(errors="replace").splitlines()[-25:])
        for log in sorted(logs.glob("slurm*.log"))
    ]
    return "\n".join([shown.stdout, *tails])


def _wait_completed(env: dict[str, str], job_ids: list[str]) -> dict[str, str]:
    deadline = time.monotonic() + JOB_TIMEOUT
    while True:
        states = _states(env, job_ids)
        if states and all(
            s not in ("PENDING", "RUNNING", "CONFIGURING", "COMPLETING") for s in states.values()
        ):
            return states
        if time.monotonic() > deadline:
            return states
        time.sleep(0.3)


def test_small_translated_jobs_run_to_completion(sandbox: dict[str, str], tmp_path: Path) -> None:
    source = tmp_path / "runs.yaml"
    source.write_text(textwrap.dedent(RUNS), encoding="utf-8")
    jobs = k8s_reader.read(source.read_text(encoding="utf-8"), str(source), Collector(str(source)))
    result = translate_jobs(jobs, to="slurm", runtime="none", config=SITE)
    out = tmp_path / "out"
    result.tree.commit(str(out))
    ids = {
        "one": _sbatch(sandbox, out / "one-node", "job.sbatch"),
        "two": _sbatch(sandbox, out / "two-nodes", "job.sbatch"),
        "shards": _sbatch(sandbox, out / "shards", "job.sbatch"),
    }
    chain = subprocess.run(
        ["bash", str(out / "chain" / "submit.sh")], env=sandbox, capture_output=True, text=True, timeout=60
    )
    assert chain.returncode == 0, chain.stderr
    chained = re.findall(r"job (\d+)", chain.stdout)
    assert len(chained) == 2
    states = _wait_completed(sandbox, [*ids.values(), *chained])
    assert states and set(states.values()) == {"COMPLETED"}, states

    one = (out / "one-node" / f"one-node-{ids['one']}.out").read_text(encoding="utf-8")
    assert one == "a b|$HOME|it's|$(NOPE)|`x`|ünï|"  # byte for byte, after Kubernetes' own expansion

    two = (out / "two-nodes" / f"two-nodes-{ids['two']}.out").read_text(encoding="utf-8").split()
    assert sorted(w for w in two if w.startswith("index=")) == ["index=0", "index=1"]
    assert len({w for w in two if w.startswith("node=")}) == 2

    shard_files = sorted((out / "shards").glob(f"shards-{ids['shards']}_*.out"))
    assert [f.read_text().strip() for f in shard_files] == ["shard 0", "shard 1", "shard 2"]

    first = float((out / "chain" / f"chain-first-{chained[0]}.out").read_text().split()[-1])
    second = float((out / "chain" / f"chain-second-{chained[1]}.out").read_text().split()[-1])
    assert second > first  # afterok: the second job started after the first one ended


ARGO_STEPS = """\
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: order}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {name: first, template: stamp}
    - - {name: left, template: stamp}
      - {name: right, template: stamp}
    - - {name: last, template: stamp}
  - name: stamp
    container:
      image: busybox
      command: [sh, -c, "date +%s.%N; sleep 1; date +%s.%N"]
      resources: {requests: {cpu: "1", memory: 100Mi}}
"""


def test_an_argo_steps_workflow_runs_in_its_order_on_slurm(sandbox: dict[str, str], tmp_path: Path) -> None:
    source = tmp_path / "order.yaml"
    source.write_text(ARGO_STEPS, encoding="utf-8")
    result = translate_jobs(scanner.scan([str(source)]).jobs, to="slurm", runtime="none", config=SITE)
    out = tmp_path / "out"
    result.tree.commit(str(out))
    chain = subprocess.run(
        ["bash", str(out / "submit.sh")], env=sandbox, capture_output=True, text=True, timeout=60
    )
    assert chain.returncode == 0, chain.stderr
    ids = dict(re.findall(r"submitted (order-[a-z]+)/job.sbatch: job (\d+)", chain.stdout))
    assert sorted(ids) == ["order-first", "order-last", "order-left", "order-right"]
    states = _wait_completed(sandbox, list(ids.values()))
    assert states and set(states.values()) == {"COMPLETED"}, states
    spans = {}
    for name, job_id in ids.items():
        # submit.sh runs sbatch from its own folder: the output files are there
        stamps = [float(w) for w in (out / f"{name}-{job_id}.out").read_text().split()]
        spans[name] = (stamps[0], stamps[-1])
    for group in ("order-left", "order-right"):
        assert spans[group][0] >= spans["order-first"][1]  # afterok on the group before
        assert spans["order-last"][0] >= spans[group][1]


ARGO_ITEMS = """\
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: sweep}
spec:
  entrypoint: main
  templates:
  - name: main
    dag:
      tasks:
      - {name: lr, template: show, withItems: ["1e-3", "it's a b", {x: 1}]}
      - {name: shard, template: show, withSequence: {start: "3", count: "2", format: "part-%02d"}}
  - name: show
    container: {image: busybox, command: [printf, "%s|"], args: ["{{item}}"]}
"""


def test_each_task_of_an_argo_fan_out_gets_its_own_item_on_slurm(
    sandbox: dict[str, str], tmp_path: Path
) -> None:
    source = tmp_path / "sweep.yaml"
    source.write_text(ARGO_ITEMS, encoding="utf-8")
    result = translate_jobs(scanner.scan([str(source)]).jobs, to="slurm", runtime="none", config=SITE)
    out = tmp_path / "out"
    result.tree.commit(str(out))
    ids = {name: _sbatch(sandbox, out / name, "job.sbatch") for name in ("sweep-lr", "sweep-shard")}
    states = _wait_completed(sandbox, list(ids.values()))
    assert states and set(states.values()) == {"COMPLETED"}, states

    def printed(name: str) -> list[str]:
        files = sorted((out / name).glob(f"{name}-{ids[name]}_*.out"))
        return [f.read_text(encoding="utf-8") for f in files]

    assert printed("sweep-lr") == ["1e-3|", "it's a b|", '{"x":1}|']
    assert printed("sweep-shard") == ["part-03|", "part-04|"]


NO_SHIFTER_PLUGIN = re.compile(r"^#SBATCH --image=.*\n", re.MULTILINE)


@pytest.mark.parametrize("runtime", ["shifter", "podman-hpc"])
def test_translated_jobs_for_nersc_runtimes_pass_test_only(
    sandbox: dict[str, str], tmp_path: Path, runtime: str
) -> None:
    """Shifter's #SBATCH --image is a SPANK plugin option the sandbox does not load (where Shifter is
    installed sbatch takes it): it is left out of what the controller sees, the rest is checked."""
    paths = [CORPUS / "cases" / "kubernetes", *sorted((CORPUS / "sample-site").glob("*/*.yaml"))]
    jobs = [j for j in scanner.scan([str(p) for p in paths]).jobs if j.source.format == "kubernetes"]
    result = translate_jobs(jobs, to="slurm", config=SITE, runtime=runtime)
    result.tree.commit(str(tmp_path / "out"))
    texts = [p.read_text() for p in (tmp_path / "out").rglob("*.sbatch")]
    assert any(runtime in text for text in texts)
    if runtime == "shifter":
        assert any(NO_SHIFTER_PLUGIN.search(text) for text in texts)
    checks = slurmcheck.check_tree(
        tmp_path / "out", env=sandbox, render=lambda text: NO_SHIFTER_PLUGIN.sub("", text)
    )
    assert all(c.method == slurmcheck.TEST_ONLY for c in checks if c.path.endswith(".sbatch"))
    assert [f"{c.path}: {c.message}" for c in checks if not c.accepted] == []


def test_an_output_file_that_cannot_be_opened_fails_the_job(sandbox: dict[str, str], tmp_path: Path) -> None:
    """What the pods do when the file cannot be opened (tests/test_peer_kjob.py): the job fails before
    its script runs."""
    ran = tmp_path / "ran.txt"
    (tmp_path / "lost.sbatch").write_text(
        f"#!/bin/bash\n#SBATCH --output={tmp_path}/missing/job.out\necho ran > {ran}\n", encoding="utf-8"
    )
    job = _sbatch(sandbox, tmp_path, "lost.sbatch")
    assert _wait_completed(sandbox, [job]) == {job: "FAILED"}
    assert not ran.exists()


def test_a_requeued_job_truncates_its_output_and_counts_the_restart(tmp_path: Path) -> None:
    """What the pods do on a restart (tests/test_peer_kjob.py): without --open-mode=append the file holds
    the last start's output only, and SLURM_RESTART_COUNT counts the requeues (unset before the first)."""
    # a sandbox of its own: the session one holds the other tests' jobs
    with started_sandbox({"SLURM_SANDBOX_NODES": "1", "SLURM_SANDBOX_GPUS": "0"}) as sandbox:
        script = tmp_path / "requeued.sbatch"
        script.write_text(
            "#!/bin/bash\n#SBATCH --requeue\n#SBATCH --output=" + str(tmp_path) + "/requeued.out\n"
            'echo "start ${SLURM_RESTART_COUNT-unset}"\n'
            '[ "${SLURM_RESTART_COUNT:-0}" -ge 1 ] || sleep 60\n',
            encoding="utf-8",
        )
        job = _sbatch(sandbox, tmp_path, "requeued.sbatch")
        out = tmp_path / "requeued.out"
        deadline = time.monotonic() + 30
        while not (out.exists() and out.read_text().strip()) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert out.read_text().splitlines() == ["start unset"]
        done = subprocess.run(
            ["scontrol", "requeue", job], env=sandbox, capture_output=True, text=True, timeout=30
        )
        assert done.returncode == 0, done.stderr
        # A requeued job waits for a begin time, so that slurmd no longer holds the credential it
        # revoked when it killed the first start: it compares whole seconds, and a start within the
        # second of the kill is refused ("Job credential revoked") and the job ends FAILED. Once the
        # job is pending, the node idle and that second over, let it start now.
        requeued = time.monotonic()
        deadline = requeued + JOB_TIMEOUT
        while (state := _states(sandbox, [job]).get(job)) != "COMPLETED" and time.monotonic() < deadline:
            if state == "PENDING" and time.monotonic() > requeued + 2 and _node_idle(sandbox, "node1"):
                subprocess.run(
                    ["scontrol", "update", f"jobid={job}", "StartTime=now"],
                    env=sandbox,
                    capture_output=True,
                    timeout=30,
                )
            time.sleep(0.3)
        assert _states(sandbox, [job]) == {job: "COMPLETED"}, _what_slurm_says(sandbox, job)
        assert out.read_text().splitlines() == ["start 1"]


def test_a_pyxis_container_step_sees_its_mounts_and_not_the_hosts_folders(tmp_path: Path) -> None:
    """The pyxis stand-in: a --container-image step's task runs in a root of the host's system
    folders, with each --container-mounts SRC at DST (a missing DST made inside the container only,
    ro honoured); a host folder no image has is not there; the host keeps no trace of DST."""
    with started_sandbox(
        {"SLURM_SANDBOX_NODES": "1", "SLURM_SANDBOX_GPUS": "0", "SLURM_SANDBOX_PLUGINS": "pyxis"}
    ) as sandbox:
        shared = tmp_path / "shared"
        shared.mkdir()
        (shared / "run.sh").write_text("echo from-the-mount\n", encoding="utf-8")
        inside = f"/pyxis-test-{tmp_path.name}"
        probe = (
            f"bash {inside}/run.sh; test -e {tmp_path} && echo host-folder-seen; "
            f"touch {inside}/written 2>/dev/null || echo read-only; echo in $(pwd); "
            "test -x /usr/bin/env && echo image-has-usr"
        )
        script = tmp_path / "container.sbatch"
        script.write_text(
            f"#!/bin/bash\n#SBATCH --output={tmp_path}/container.out\n"
            f"srun --container-image=busybox --container-mounts={shared}:{inside}:ro bash -c '{probe}'\n"
            "srun bash -c 'echo host $(pwd)'\n",
            encoding="utf-8",
        )
        job = _sbatch(sandbox, tmp_path, "container.sbatch")
        assert _wait_completed(sandbox, [job]) == {job: "COMPLETED"}, _what_slurm_says(sandbox, job)
        printed = (tmp_path / "container.out").read_text().splitlines()
        expected = ["from-the-mount", "read-only", "in /", "image-has-usr", f"host {tmp_path}"]
        assert printed == expected, "\n".join(printed)
        assert not Path(inside).exists()
