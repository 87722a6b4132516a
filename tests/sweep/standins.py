"""Stand-ins for the programs a case starts: each records its name, argv, folder and environment.

Every word of a script that could name a program becomes a recording stand-in, except the shell's
own builtins and keywords, the core utilities the scripts compute with (kept real, so that values
come out the same on both sides), the Slurm commands (real on the sandbox, the translation's shims
in the pods) and what the pods' entrypoint and shims themselves run. ``sleep`` is kept short, but
for a timer of an hour or more.
Records go to ``RECORDS/<job>/`` as NUL-separated key/value pairs.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

# The image's own program folder, first in every default PATH (ssh's, a login shell's profile, sbatch
# --export=NONE): the stand-ins stand where the site's programs would, and no PATH needs changing.
BIN = "/usr/local/sbin"
RECORDS = "/sweep/records"
# Variables a program learns its place from: Slurm's and the launchers' rendezvous ones.
# (a POSIX extended expression: bash's =~ matches it)
RECORDED_ENV = (
    "SLURM_[A-Z0-9_]+|SLURMD_NODENAME|MASTER_ADDR|MASTER_PORT|WORLD_SIZE|RANK|LOCAL_RANK|NODE_RANK|"
    "CUDA_VISIBLE_DEVICES|OMPI_COMM_WORLD_[A-Z_]+|PMIX_RANK|RAY_ADDRESS"
)
KEPT = frozenset(
    (
        "bash",
        "sh",
        "dash",
        "env",
        "true",
        "false",
        "echo",
        "printf",
        "cat",
        "ls",
        "mkdir",
        "rmdir",
        "cp",
        "mv",
        "rm",
        "ln",
        "touch",
        "head",
        "tail",
        "cut",
        "tr",
        "sort",
        "uniq",
        "wc",
        "grep",
        "egrep",
        "fgrep",
        "sed",
        "awk",
        "gawk",
        "mawk",
        "date",
        "hostname",
        "basename",
        "dirname",
        "realpath",
        "readlink",
        "id",
        "whoami",
        "seq",
        "expr",
        "xargs",
        "find",
        "tee",
        "chmod",
        "chown",
        "stat",
        "du",
        "df",
        "pwd",
        "nproc",
        "mktemp",
        "paste",
        "join",
        "comm",
        "split",
        "printenv",
        "getent",
        "perl",
        "timeout",
        "nohup",
        "kill",
        "ps",
        "pgrep",
        "pkill",
        "mpirun",
        "mpiexec",
        "orterun",
        "ssh",
        "scp",
        "sshd",
        "jq",
        "bc",
        "numfmt",
        "md5sum",
        "sha256sum",
        "base64",
        "od",
        "diff",
        "cmp",
        "tac",
        "rev",
        "fold",
        "fmt",
        "column",
        "shuf",
        "yes",
        "stdbuf",
        "flock",
        "which",
        "sync",
        "uname",
        "free",
        "lscpu",
        "ip",
        "logger",
        "tput",
        "clear",
        "sleep",
        "srun",
        "sbatch",
        "scontrol",
        "squeue",
        "sacct",
        "scancel",
        "sinfo",
        "sstat",
        "salloc",
        "sattach",
        "sbcast",
        "strigger",
        "sprio",
        "sshare",
    )
)
_WORD = re.compile(r"(?<![\w./$-])([A-Za-z][\w.+-]*)(?![\w/=])")

RECORDER = r"""#!/bin/bash
# a stand-in: records how it was started, starts nothing
# `monitor & ... kill %1`: a started program counts as started, however soon it is told to stop
trap '' TERM INT
key=${SLURM_HET_JOB_ID:-${SLURM_ARRAY_JOB_ID:-${SLURM_JOB_ID:-none}}}
mkdir -p "RECORDS/$key" 2>/dev/null
# written under another name and renamed when whole: a stand-in killed at the job's end (a step left
# in the background) leaves no half record
f=$(mktemp "RECORDS/$key/.part.XXXXXXXXXX") || exit 0
{
  printf 'prog\0%s\0' "${0##*/}"
  for a in "$@"; do printf 'arg\0%s\0' "$a"; done
  printf 'cwd\0%s\0' "$PWD"
  printf 'host\0%s\0' "$(hostname)"
  for v in $(compgen -e); do
    [[ $v =~ ^(PATTERN)$ ]] && printf 'env\0%s=%s\0' "$v" "${!v}"
  done
} > "$f"
mv "$f" "${f%/.part.*}/rec.${f##*.part.}"
exit 0
"""
# `sleep 30` while a Ray head starts, `sleep infinity` behind a server: a second is enough here; a
# sleep of an hour or more is a timer for the time limit (the pods' entrypoint sends --signal's signal
# so), which no job of the sweep reaches: kept. A sleep after `srun ... &` is there to let the
# background step start; on a busy sandbox a second is not always enough for srun to launch every
# task, and the script's end would kill the ones left. So the sleep then also waits, no longer than
# it asked, until its shell's other children (the stand-ins end at once) have ended.
SLEEP = """#!/bin/bash
case "${1:-}" in [0-9]*) [ "${1%%[!0-9]*}" -lt 3600 ] || exec /bin/sleep "$@" ;; esac
/bin/sleep 1
asked=${1%%[!0-9]*}
tenths=$(( (${asked:-10} > 30 ? 30 : ${asked:-10}) * 10 - 10 ))
# only a shell's children are the script's background commands (`bash -c 'sleep 5'` execs the sleep);
# the program, not the name (a batch script's process is named slurm_script)
case "$(readlink /proc/$PPID/exe)" in */bash | */sh | */dash) ;; *) exit 0 ;; esac
children=/proc/$PPID/task/$PPID/children
for (( i = 0; i < tenths; i++ )); do
  others=" $(< "$children") " || exit 0
  others=${others/ $$ / }
  [ -z "${others// /}" ] && exit 0
  /bin/sleep 0.1
done
exit 0
"""


def builtins() -> frozenset[str]:
    done = subprocess.run(
        ["bash", "-c", "compgen -b; compgen -k"], capture_output=True, text=True, check=True
    )
    return frozenset(done.stdout.split())


def names(texts: list[str], keep: frozenset[str]) -> list[str]:
    """The stand-ins the scripts need: every program-like word of their lines outside comments."""
    found: set[str] = set()
    for text in texts:
        for line in text.splitlines():
            code = line.split(" #", 1)[0]
            if code.lstrip().startswith("#"):
                continue
            found.update(_WORD.findall(code))
    return sorted(n for n in found if n not in keep and n not in KEPT)


def write_bin(folder: Path, programs: list[str], pattern: str = RECORDED_ENV) -> None:
    """The stand-ins, recording the variables whose names match ``pattern``."""
    folder.mkdir(parents=True, exist_ok=True)
    recorder = folder / ".recorder"
    recorder.write_text(RECORDER.replace("RECORDS", RECORDS).replace("PATTERN", pattern))
    recorder.chmod(0o755)
    for name in programs:
        (folder / name).symlink_to(".recorder")
    sleep = folder / "sleep"
    sleep.write_text(SLEEP)
    sleep.chmod(0o755)


def parse(path: Path) -> dict[str, object]:
    """One record: prog, args, cwd, host and the recorded variables."""
    fields = path.read_bytes().decode(errors="replace").split("\0")
    record: dict[str, object] = {"args": [], "env": {}}
    for key, value in zip(fields[0::2], fields[1::2], strict=False):
        if key == "arg":
            record["args"].append(value)  # type: ignore[union-attr]
        elif key == "env":
            name, _, val = value.partition("=")
            record["env"][name] = val  # type: ignore[index]
        else:
            record[key] = value
    return record
