"""A LeaderWorkerSet that serves no port, translated to Slurm (translators/slurm/kube_groups.py).

The scripts run here with stand-ins for ``srun`` (each task in turn, its SLURM_PROCID set),
``scontrol show hostnames`` and ``sbatch``: the leader's program must run on task 0 with
LWS_WORKER_INDEX=0, the workers' on the others, each with the env the controller gives its
pod and its ``$(VAR)`` references expanded as the kubelet expands them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest

from migrate import ir
from migrate.diagnostics import Collector
from migrate.fidelity import Translation
from migrate.site.config import parse_site_config
from migrate.translate import translate_jobs
from migrate.translators.kubernetes import reader as k8s_reader
from migrate.translators.slurm import directives
from migrate.translators.slurm.writer import translate_job
from migrate.vocab import FidelityStatus, Format

SITE = parse_site_config(
    {"site": "t", "partitions": {"cpu": {"cpus_per_node": 16, "mem_gb": 64, "default": True}}}
)
# Each program says which role it is, its argument (a $(VAR) of its argv) and what its env holds.
SAY = (
    'echo "$0 arg=$1 rank=$RANK idx=$LWS_WORKER_INDEX size=$LWS_GROUP_SIZE lead=$LWS_LEADER_ADDRESS '
    'group=$GROUP_INDEX role=${ROLE-none} pod=$POD"'
)
GROUP_INDEX = "metadata.labels['leaderworkerset.sigs.k8s.io/group-index']"
GROUPS = """\
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: grp, namespace: ml}
spec:
  replicas: 3
  startupPolicy: LeaderReady
  rolloutStrategy: {type: RollingUpdate}
  networkConfig: {subdomainPolicy: UniquePerReplica}
  leaderWorkerTemplate:
    size: 3
    subGroupPolicy: {subGroupSize: 1}
    leaderTemplate:
      spec:
        containers:
          - name: lead
            image: busybox
            command: [sh, -c, 'SAY', leader, "$(LWS_WORKER_INDEX)"]
            env:
              - {name: LWS_WORKER_INDEX, value: "7"}
              - {name: RANK, value: "$(LWS_WORKER_INDEX)"}
              - name: GROUP_INDEX
                valueFrom: {fieldRef: {fieldPath: "INDEX_LABEL"}}
              - name: POD
                valueFrom: {fieldRef: {fieldPath: metadata.name}}
              - {name: ROLE, value: lead}
            resources: {requests: {cpu: "LEADER_CPU"}}
    workerTemplate:
      spec:
        containers:
          - name: work
            image: busybox
            command: [sh, -c, 'SAY', worker, "$(LWS_WORKER_INDEX)"]
            env:
              - {name: RANK, value: "$(LWS_WORKER_INDEX)"}
              - name: GROUP_INDEX
                valueFrom: {fieldRef: {fieldPath: "INDEX_LABEL"}}
              - name: POD
                valueFrom: {fieldRef: {fieldPath: metadata.name}}
            resources: {requests: {cpu: "2"}}
""".replace("SAY", SAY).replace("INDEX_LABEL", GROUP_INDEX)

needs_tools = pytest.mark.skipif(shutil.which("bash") is None or shutil.which("sh") is None, reason="no sh")


def translate(tmp_path: Path, leader_cpu: str = "2", text: str = GROUPS) -> Translation:
    path = tmp_path / "lws.yaml"
    path.write_text(text.replace("LEADER_CPU", leader_cpu), encoding="utf-8")
    (job,) = k8s_reader.read(path.read_text(encoding="utf-8"), str(path), Collector(str(path)))
    return translate_job(job, SITE, "none")


def options(text: str) -> list[dict[str, str | None]]:
    """The #SBATCH options of each component of a script."""
    parts = text.split("#SBATCH hetjob\n")
    out = []
    for part in parts:
        header = directives.read_header(directives.split_lines(part), Collector("x"))
        out.append({s.option.long: s.value for s in header.settings})
    return out


def stand_ins(tmp: Path) -> Path:
    """srun runs its command once per task of its component (FAKE_TASKS_<group>), in order."""
    folder = tmp / "bin"
    folder.mkdir(exist_ok=True)
    (folder / "srun").write_text(
        "#!/bin/bash\n"
        "group=0; tasks=\n"
        "while [[ ${1:-} == -* ]]; do\n"
        "  case $1 in --het-group=*) group=${1#*=};; --ntasks=*) tasks=${1#*=};; esac; shift\n"
        "done\n"
        'var="FAKE_TASKS_$group"; tasks=${tasks:-${!var}}\n'
        'for ((i = 0; i < tasks; i++)); do SLURM_PROCID=$i "$@" || exit $?; done\n'
    )
    (folder / "scontrol").write_text('#!/bin/bash\n[ "$1 $2" = "show hostnames" ] && tr , "\\n" <<<"$3"\n')
    for tool in ("srun", "scontrol"):
        (folder / tool).chmod(0o755)
    return folder


def run(tmp_path: Path, text: str, env: dict[str, str]) -> list[str]:
    path = tmp_path / "job.sbatch"
    path.write_text(text, encoding="utf-8")
    full = {"PATH": f"{stand_ins(tmp_path)}:{os.environ['PATH']}", "LC_ALL": "C.UTF-8", **env}
    done = subprocess.run(
        ["bash", str(path)], env=full, capture_output=True, text=True, timeout=30, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr + text
    return sorted(line for line in done.stdout.splitlines() if line.startswith(("leader", "worker")))


def expected(group: int, leader: str) -> list[str]:
    return [
        f"leader arg=0 rank=0 idx=0 size=3 lead={leader} group={group} role=lead pod=grp-{group}",
        f"worker arg=1 rank=1 idx=1 size=3 lead={leader} group={group} role=none pod=grp-{group}-1",
        f"worker arg=2 rank=2 idx=2 size=3 lead={leader} group={group} role=none pod=grp-{group}-2",
    ]


@needs_tools
def test_alike_roles_are_an_array_of_groups_the_leader_on_task_0(tmp_path: Path) -> None:
    t = translate(tmp_path)
    text = t.files["job.sbatch"]
    (header,) = options(text)
    assert header["array"] == "0-2"  # one array task per group
    assert (header["nodes"], header["ntasks-per-node"], header["cpus-per-task"]) == ("1", "3", "2")
    assert "submit.sh" not in t.files and t.flavor == "sbatch-array"
    env = {"SLURM_ARRAY_TASK_ID": "1", "SLURM_JOB_NODELIST": "n7,n8", "FAKE_TASKS_0": "3"}
    # the controller's LWS_WORKER_INDEX wins over the pod's own "7"; ROLE is the leader's alone
    assert run(tmp_path, text, env) == expected(1, "n7")


@needs_tools
def test_roles_asking_for_different_resources_are_a_hetjob_submitted_once_per_group(tmp_path: Path) -> None:
    t = translate(tmp_path, leader_cpu="6")
    text = t.files["job.sbatch"]
    leader, workers = options(text)
    assert "array" not in leader  # Slurm has no arrays of heterogeneous jobs
    assert (leader["nodes"], leader["ntasks-per-node"], leader["cpus-per-task"]) == ("1", "1", "6")
    assert (workers["nodes"], workers["ntasks-per-node"], workers["cpus-per-task"]) == ("1", "2", "2")
    assert t.flavor == "hetjob" and "submitted 3 times" in t.flavor_reason
    env = {
        "MIGRATE_LWS_GROUP": "2",
        "SLURM_JOB_NODELIST": "h1,h2",
        "SLURM_JOB_NODELIST_HET_GROUP_0": "h1",
        "FAKE_TASKS_0": "1",
        "FAKE_TASKS_1": "2",
    }
    assert run(tmp_path, text, env) == expected(2, "h1")
    status, reason = next((e.status, e.reason) for e in t.fidelity.entries if e.item == "replicas 3")
    assert status == FidelityStatus.APPROXIMATED and "submits the script 3 times" in reason


@needs_tools
def test_submit_sh_submits_each_group_with_its_index(tmp_path: Path) -> None:
    t = translate(tmp_path, leader_cpu="6")
    (tmp_path / "job.sbatch").write_text(t.files["job.sbatch"])
    (tmp_path / "submit.sh").write_text(t.files["submit.sh"])
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "sbatch").write_text('#!/bin/bash\necho "$*" >> calls\necho $((41 + $(wc -l < calls)))\n')
    (bin_dir / "sbatch").chmod(0o755)
    done = subprocess.run(
        ["bash", "submit.sh"],
        cwd=tmp_path,
        env={**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"},
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    calls = (tmp_path / "calls").read_text().splitlines()
    assert calls == [f"--parsable --export=ALL,MIGRATE_LWS_GROUP={g} job.sbatch" for g in range(3)]


def test_the_tree_submit_sh_waits_for_every_group() -> None:
    job = ir.Job(
        "g",
        ir.SourceRef("g.yaml", Format.KUBERNETES),
        "LeaderWorkerSet",
        name="g",
        components=(
            ir.Component("leader", 2, resources=ir.Resources(cpus_per_node=4), line=1),
            ir.Component("worker", 2, resources=ir.Resources(cpus_per_node=2), line=1),
        ),
    )
    after = ir.Job(
        "a",
        ir.SourceRef("a.yaml", Format.KUBERNETES),
        "Job",
        name="after",
        components=(ir.Component(containers=(ir.Container("busybox", command=("true",)),)),),
        dependencies=(ir.Dependency("afterok", ("g",)),),
    )
    tree = translate_jobs([job, after], to=Format.SLURM, config=SITE).tree.files
    text = tree["submit.sh"]
    assert "for copy in $(seq 0 1); do" in text and "ALL,MIGRATE_LWS_GROUP=$copy" in text
    assert '--dependency="afterok:${jid_g}"' in text  # every group's id, joined by ':'


def test_a_group_of_one_is_its_leader_alone(tmp_path: Path) -> None:
    text = textwrap.dedent(
        """\
        apiVersion: leaderworkerset.x-k8s.io/v1
        kind: LeaderWorkerSet
        metadata: {name: solo}
        spec:
          replicas: 4
          leaderWorkerTemplate:
            workerTemplate:
              spec:
                containers: [{name: w, image: busybox, command: [echo, "$(LWS_WORKER_INDEX)"]}]
        """
    )
    t = translate(tmp_path, text=text)
    (header,) = options(t.files["job.sbatch"])
    assert header["array"] == "0-3" and header["ntasks-per-node"] == "1"
    assert "LWS_WORKER_INDEX=0; export LWS_WORKER_INDEX; exec echo" in t.files["job.sbatch"]


def test_every_field_of_the_group_has_its_fate(tmp_path: Path) -> None:
    t = translate(tmp_path)
    fates = {e.item.split(":")[0]: (e.status, e.reason) for e in t.fidelity.entries}
    assert fates["spec.startupPolicy"][0] == FidelityStatus.APPROXIMATED  # LeaderReady: no readiness
    assert fates["spec.rolloutStrategy"][0] == FidelityStatus.DROPPED
    assert fates["spec.networkConfig"][0] == FidelityStatus.APPROXIMATED
    assert fates["spec.leaderWorkerTemplate.subGroupPolicy"][0] == FidelityStatus.DROPPED
    restart = fates["restartPolicy (default RecreateGroupOnPodRestart)"]
    assert restart[0] == FidelityStatus.APPROXIMATED and "--kill-on-bad-exit=1" in restart[1]
    assert "--kill-on-bad-exit=1" in t.files["job.sbatch"]
    assert fates["pods that end"][0] == FidelityStatus.APPROXIMATED
    assert fates["env LWS_LEADER_ADDRESS"][0] == FidelityStatus.APPROXIMATED
    assert fates["env LWS_WORKER_INDEX of leader"][0] == FidelityStatus.MAPPED  # the controller's wins
    assert not [e for e in t.fidelity.entries if e.reason == "no Slurm counterpart"]
