"""The Slurm side: every case submitted at once to the project's sandbox, inside a root of its own.

The sandbox's daemons and jobs run in a private mount namespace whose root is the host's folders
under a writable tmpfs layer (overlayfs), so that a case's ``/fsx/...`` or ``/scratch/...`` can be
made without touching the host; ``/sweep`` is the sweep's folder (scripts, stand-ins, records).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from cases import NODE_CPUS, NODE_GPUS, NODE_MEM_MB, Case, asks_mixed_gpus, features, node_gpu_types
from podrunner.pod import IMAGE_DIRS
from standins import BIN, RECORDS

SANDBOX = Path(__file__).resolve().parents[2] / "scripts" / "slurm-sandbox.sh"
LAYERED = (
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/etc",
    "/opt",
    "/root",
    "/var",
    "/home",
)
NODES = 18  # cases have at most 9 (cases.MAX_NODES): two of the largest run at once
PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"  # the stand-ins are in the first
# Open MPI as root, over TCP on the loopback: the sandbox's nodes share one host
MPI_ENV = (
    "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_tcp_if_include=lo "
    "OMPI_MCA_oob_tcp_if_include=lo OMPI_MCA_btl=self,tcp"
)

DRIVER = r"""#!/bin/bash
set -u
# job ids from 70001: an id is told apart from the counts a job's variables hold (compare.py)
export SLURM_SANDBOX_DIR=/var/sbx SLURM_SANDBOX_NODE_UTS=1 SLURM_SANDBOX_FIRST_JOB_ID=70001
# pyxis's options, as GPU sites take them (a stand-in: a container step's tasks run in a root of the
# pods' image folders and the step's mounts); the records folder is one of the site's enroot mounts,
# in every container, as the pods' node has it in every pod, and so are the site's file systems
export SLURM_SANDBOX_PLUGINS=pyxis SLURM_SANDBOX_PYXIS_MOUNTS=@CONTAINER_MOUNTS@
export SLURM_SANDBOX_PYXIS_JOB_MOUNTS=/sweep/job-mounts.txt SLURM_SANDBOX_PYXIS_IMAGE_DIRS=@IMAGE_DIRS@
# each node's name its own loopback address (compare.py: sandbox_address), as separate hosts have
for k in $(seq 1 "$SLURM_SANDBOX_NODES"); do printf '127.0.1.%d\tnode%d\n' "$k" "$k"; done >> /etc/hosts
if ! bash /sweep/slurm-sandbox.sh start > /sweep/sandbox.log 2>&1; then
  cat /sweep/sandbox.log /var/sbx/log/slurmd*.log >&2
  exit 3
fi
export SLURM_CONF=/var/sbx/etc/slurm.conf
# the nodes of several GPU types are reserved for the cases that ask such a mix (they submit with
# --reservation): an untyped --gpus-per-node=8 job there gets 4 a100 + 4 v100, and Slurm 22.05 then
# refuses its untyped step ("more than the job's gres_per_node")
[ -z "@MIXED_NODES@" ] || scontrol create reservation ReservationName=mixed-gpus Nodes=@MIXED_NODES@ \
  StartTime=now Duration=UNLIMITED Users=root Flags=IGNORE_JOBS > /dev/null
# the submitter's start-up files as a fresh account has them: this host's own (a pyenv first on PATH)
# would come before the stand-ins in a login shell (--get-user-env, #!/bin/bash -l), and no pod has them
cp /etc/skel/.profile /etc/skel/.bashrc /root/ 2>/dev/null || true
while read -r d; do mkdir -p "$d"; done < /sweep/folders.txt
while read -r f; do mkdir -p "${f%/*}" && touch "$f"; done < /sweep/sourced.txt
while IFS=$'\t' read -r f v; do mkdir -p "${f%/*}" && printf '%b' "$v" > "$f"; done < /sweep/provisioned.txt
while read -r f; do mkdir -p "${f%/*}" && ln -sf STANDINS/.recorder "$f"; done < /sweep/programs.txt
mkdir -p /sweep/jobs
# --begin=now: a job that waits for tomorrow (--begin=now+1day) runs now, as its CronJob would
# A case that fills nodes (cases.py: fills_nodes) starts once every case before it ended, on empty
# nodes: its layout depends on each node's free CPUs.
others=""
# An array larger than the sweep runs (a fourth column: the task ids to run) is submitted held; those
# tasks are released and the others cancelled before any starts. The fifth and sixth columns are the
# variables of the submitter's environment and the script's arguments (tests/sweep/inputs.py); "-"
# is an empty column.
minutes=()
while IFS=$'\t' read -r c dir alone tasks given_env given_args reserved limit; do
  mkdir -p "$dir/logs"
  after=()
  [ "$alone" = 1 ] && [ -n "$others" ] && after=(--dependency="afterany$others")
  [ "$tasks" = - ] && tasks=""
  hold=()
  [ -n "$tasks" ] && hold=(--hold)
  [ "$reserved" = 1 ] && [ -n "@MIXED_NODES@" ] && hold+=(--reservation=mixed-gpus)
  read -r -a submitter_env <<< "${given_env#-}"
  read -r -a script_args <<< "${given_args#-}"
  (cd "$dir" && env -i HOME=/root USER=root LOGNAME=root PATH="SWEEP_PATH" \
     SLURM_CONF="$SLURM_CONF" MPI_ENV "${submitter_env[@]}" sbatch --parsable --begin=now "${hold[@]}" \
     "${after[@]}" "/sweep/scripts/$c" "${script_args[@]}" > "/sweep/jobs/$c.id" 2> "/sweep/jobs/$c.err")
  id=$(cut -d';' -f1 "/sweep/jobs/$c.id" 2>/dev/null)
  if [ -n "$id" ] && [ -n "$tasks" ]; then
    for t in ${tasks//,/ }; do scontrol release "${id}_$t"; done
    # one task a line (squeue -r); the array's own record (70019_[997] of 1-1000:4) shows only once
    # the others are gone, so a second pass takes it
    for _ in 1 2 3; do
      held=$(squeue -h -r -j "$id" -o '%i %r' | awk '$2 == "JobHeldUser" {gsub(/[][]/, "", $1); print $1}')
      [ -n "$held" ] || break
      echo "$held" | xargs -r scancel
    done
  fi
  [ -z "$id" ] || others+=":$id"  # a case that fills nodes waits for every case before it, those too
  [ -z "$id" ] || minutes+=("$id=$limit")
done < /sweep/cases.txt
# with stand-ins a job ends in seconds: one that hangs (a step waiting for what it cannot get) ends
# at a minute instead of holding its nodes from the others; one with --signal=...@LEAD a minute after
# its signal would be sent (eighth column), which a job of stand-ins never reaches
for id in $(squeue -h -o %i 2>/dev/null); do scontrol update jobid="$id" TimeLimit=1 2>/dev/null; done
for m in "${minutes[@]}"; do
  [ "${m#*=}" = 1 ] || scontrol update jobid="${m%%=*}" TimeLimit="${m#*=}" 2>/dev/null
done
deadline=$(( SECONDS + WAIT ))
while [ "$SECONDS" -lt "$deadline" ]; do
  # a job a case submits for later (a nightly job's next night, --begin=tomorrow) waits for its time,
  # and one it submits held (a suspended Job's translation) for a release: neither starts here
  left=$(squeue -h -o %r 2>/dev/null | grep -cv -e '^BeginTime$' -e '^JobHeldUser$')
  [ "$left" -eq 0 ] && break
  sleep 0.5
done
squeue -h -o '%i %T %r' > /sweep/unfinished.txt 2>/dev/null
scancel --full $(squeue -h -o %i 2>/dev/null) 2>/dev/null
while IFS=$'\t' read -r c dir _; do
  id=$(cut -d';' -f1 "/sweep/jobs/$c.id" 2>/dev/null)
  [ -n "$id" ] && scontrol -o show job "$id" > "/sweep/jobs/$c.state" 2>&1
  # the end of what the job printed: why a run failed
  for out in $(grep -o 'StdOut=[^ ]*' "/sweep/jobs/$c.state" 2>/dev/null | cut -d= -f2- | sort -u); do
    [ -f "$out" ] && tail -c 1500 "$out" >> "/sweep/jobs/$c.log"
  done
done < /sweep/cases.txt
bash /sweep/slurm-sandbox.sh purge >/dev/null 2>&1
exit 0
"""


@dataclass
class ContainerSite:
    """What a container step sees beside its own --container-mounts (the pyxis stand-in): the site's
    file systems, in every container (its enroot mounts); those of each job name, where each case
    stands on a site of its own; the top-level folders the image holds beyond the system's."""

    mounts: list[str] = field(default_factory=list)
    per_job: dict[str, list[str]] = field(default_factory=dict)
    image_tops: list[str] = field(default_factory=list)


_JOB_NAME = re.compile(r"^#SBATCH\s+(?:--job-name[= ]|-J\s*)(\S+)", re.M)


def _node_words(types: list[str]) -> list[str]:
    """Each sandbox node's GPU types: the single types in turn over all nodes but the last ones, which
    hold a case's mix (a100,v100), one node each: a job that asks no type (--gpus-per-node=8) then
    finds nodes of one type, as on a real site, where Slurm 22.05 refuses its untyped step on a mixed
    node ("more than the job's gres_per_node")."""
    mixed = [t for t in types if "," in t]
    single = [t for t in types if "," not in t]
    if not mixed or not single:
        return types
    return [single[i % len(single)] for i in range(NODES - len(mixed))] + mixed


def _mixed_nodes(types: list[str]) -> str:
    """The sandbox's nodes of several GPU types (the last ones, _node_words), as Slurm names them."""
    if all("," in t for t in types):  # no node of one type: nothing to keep apart
        return ""
    words = _node_words(types)
    return ",".join(f"node{i + 1}" for i in range(NODES) if "," in words[i % len(words)])


def _escaped(content: str) -> str:
    """A file's content on one line, as printf %b writes it back."""
    return content.replace("\\", "\\\\").replace("\n", "\\n").replace("\t", "\\t")


def job_name(case: Case) -> str:
    """The name sbatch gives the case's job: its --job-name, else the script's file name."""
    found = _JOB_NAME.search(case.text)
    return found.group(1).strip("'\"") if found else case.name


def run(
    cases: list[Case],
    work: Path,
    bin_dir: Path,
    partitions: list[str],
    licenses: list[str],
    wait: int,
    site: ContainerSite | None = None,
) -> None:
    site = site or ContainerSite()
    sweep = work / "sweep"
    (sweep / "scripts").mkdir(parents=True)
    (sweep / "records").mkdir()
    shutil.copytree(bin_dir, sweep / "bin", symlinks=True)
    shutil.copy(SANDBOX, sweep / "slurm-sandbox.sh")
    shutil.copy(SANDBOX.parent / "pyxis-standin.c", sweep / "pyxis-standin.c")
    for case in cases:
        (sweep / "scripts" / case.name).write_text(case.text)
    # the cases that fill nodes last: they wait for all the others
    ordered = sorted(cases, key=lambda c: c.fills_nodes)
    (sweep / "cases.txt").write_text(
        "".join(
            "\t".join(
                [
                    c.name,
                    c.submit_dir,
                    str(int(c.fills_nodes)),
                    ",".join(map(str, c.array_tasks)) or "-",
                    " ".join(f"{k}={v}" for k, v in c.given.env.items()) or "-",
                    " ".join(c.given.args) or "-",
                    str(int(asks_mixed_gpus(c))),
                    str(c.time_limit_minutes),
                ]
            )
            + "\n"
            for c in ordered
        )
    )
    programs = {f for c in cases for f in c.programs}  # a program one case starts is no other's folder
    storage = {*site.mounts, *(m for ms in site.per_job.values() for m in ms)}
    (sweep / "folders.txt").write_text(
        "".join(f"{f}\n" for f in sorted(({f for c in cases for f in c.folders} | storage) - programs))
    )
    (sweep / "job-mounts.txt").write_text(
        "".join(f"{name}\t{','.join(ms)}\n" for name, ms in sorted(site.per_job.items()) if ms)
    )
    provisioned = {
        path: value for c in cases for path, value in [*c.provisioned.items(), *c.given_files().items()]
    }
    (sweep / "provisioned.txt").write_text(
        "".join(f"{p}\t{_escaped(v)}\n" for p, v in sorted(provisioned.items()))
    )
    (sweep / "sourced.txt").write_text(
        "".join(f"{f}\n" for f in sorted({f for c in cases for f in c.sourced}))
    )
    (sweep / "programs.txt").write_text(
        "".join(f"{f}\n" for f in sorted({f for c in cases for f in c.programs}))
    )
    driver = sweep / "driver.sh"
    driver.write_text(
        DRIVER.replace("SWEEP_PATH", PATH)
        .replace("STANDINS", BIN)
        .replace("@CONTAINER_MOUNTS@", ",".join([RECORDS, *site.mounts]))
        .replace("@IMAGE_DIRS@", ",".join([*IMAGE_DIRS, *(f"/{t}" for t in site.image_tops)]))
        .replace("WAIT", str(wait))
        .replace("MPI_ENV", MPI_ENV)
        .replace("@MIXED_NODES@", _mixed_nodes(node_gpu_types(cases)))
    )
    root, layers = work / "root", work / "layers"
    root.mkdir()
    layers.mkdir()
    lines = ["set -e", f"mount -t tmpfs sweeproot {root}", f"mount -t tmpfs sweeplayers {layers}"]
    for d in LAYERED:
        if os.path.islink(d):
            lines.append(f"ln -s {os.readlink(d)} {root}{d}")
        elif os.path.isdir(d):
            name = d.strip("/")
            lines.append(f"mkdir -p {root}{d} {layers}/{name}.up {layers}/{name}.work")
            lines.append(
                f"mount -t overlay overlay -o lowerdir={d},upperdir={layers}/{name}.up,"
                f"workdir={layers}/{name}.work {root}{d}"
            )
    lines += [
        f"mkdir -p {root}/proc {root}/dev {root}/sys {root}/tmp {root}/run {root}/sweep",
        f"chmod 1777 {root}/tmp",
        f"mount --rbind /dev {root}/dev",
        f"mount --rbind /sys {root}/sys",
        f"mount -t proc proc {root}/proc",
        f"mount -t tmpfs run {root}/run",
        f"mount --bind {sweep} {root}/sweep",
        f"mount --bind {sweep}/bin {root}{BIN}",
        f"exec chroot {root} /bin/bash /sweep/driver.sh",
    ]
    env = {
        "PATH": "/usr/sbin:/usr/bin:/sbin:/bin",
        "SLURM_SANDBOX_NODES": str(NODES),
        "SLURM_SANDBOX_CPUS": str(NODE_CPUS),
        "SLURM_SANDBOX_MEM_MB": str(NODE_MEM_MB),
        "SLURM_SANDBOX_TMP_MB": "7000000",
        "SLURM_SANDBOX_GPUS": str(NODE_GPUS),
        "SLURM_SANDBOX_PARTITIONS": " ".join(partitions),
        "SLURM_SANDBOX_LICENSES": ",".join(licenses),
        # as the cases' site has them: nodes of the GPU types they ask, the features they constrain to
        "SLURM_SANDBOX_NODE_GPU_TYPES": " ".join(_node_words(node_gpu_types(cases))),
        "SLURM_SANDBOX_FEATURES": " ".join(features(cases)),
        "SLURM_SANDBOX_CTLD_PORT": str(_free_port()),
    }
    env["SLURM_SANDBOX_SLURMD_PORT"] = str(int(env["SLURM_SANDBOX_CTLD_PORT"]) + 1)
    done = subprocess.run(
        ["unshare", "--mount", "--propagation", "private", "--fork", "bash", "-c", "\n".join(lines)],
        env=env,
        capture_output=True,
        text=True,
        timeout=wait + 240,
    )
    if done.returncode != 0:
        raise RuntimeError(f"the Slurm side did not run ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    unfinished = (sweep / "unfinished.txt").read_text().strip() if (sweep / "unfinished.txt").exists() else ""
    if unfinished:  # cancelled: a case waiting on one that never ended (wait) did not run
        print(
            f"sweep: queued when the sweep stopped waiting (at most {wait} s), cancelled:\n{unfinished}",
            file=sys.stderr,
        )


def _free_port() -> int:
    import socket

    for _ in range(50):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port < 60000:
            with socket.socket() as a, socket.socket() as b:
                try:
                    a.bind(("127.0.0.1", port))
                    b.bind(("127.0.0.1", port + 1 + NODES))
                    return port
                except OSError:
                    continue
    raise RuntimeError("no free ports")


_TASK_ID = re.compile(r"\bArrayTaskId=(\S+)")


def _task_id(shown: str) -> str | None:
    found = _TASK_ID.search(shown)
    return found.group(1) if found else None


def outcome(work: Path, case: Case) -> dict[str, object]:
    """What sbatch said, the job's end state and exit code, and its id (records are kept by id)."""
    jobs = work / "sweep" / "jobs"
    given = jobs / f"{case.name}.id"
    jobid = given.read_text().split(";")[0].strip() if given.exists() else ""
    if not jobid:
        said = jobs / f"{case.name}.err"
        err = said.read_text().strip() if said.exists() else "?"
        return {"submitted": False, "why": err.splitlines()[-1] if err else "no job id"}
    state = jobs / f"{case.name}.state"
    shown = state.read_text() if state.exists() else ""
    if case.array_tasks:  # the tasks cancelled before they started are not the case's
        ran = {str(t) for t in case.array_tasks}
        shown = "\n".join(line for line in shown.splitlines() if _task_id(line) in ran)
    states = sorted(set(re.findall(r"JobState=(\S+)", shown)))
    codes = sorted(set(re.findall(r"\bExitCode=(\S+)", shown)))
    ids = sorted(set(re.findall(r"JobId=(\d+)", shown)) | {jobid})
    printed = jobs / f"{case.name}.log"
    log = printed.read_text(errors="replace") if printed.exists() else ""
    return {"submitted": True, "jobid": jobid, "ids": ids, "states": states, "exit": codes, "log": log}
