"""The sweep's cases: every sbatch script of the corpus, what it needs to run, and what is left out.

A case is left out, with the reason, when the machine cannot hold it (more nodes than the sandbox
and the pod runner run for one job) or when its translation writes no pods. Of an array larger than
``MAX_ARRAY_TASKS``, both sides run the same first tasks of the array as written (``array_tasks``).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from inputs import Given, given

from migrate.diagnostics import Collector
from migrate.ir import Job
from migrate.translators.slurm import reader

MAX_NODES = 9
SUBMIT_ROOT = "/sweep/submit"  # the corpus's folders, as the site's job folders on both sides
MAX_ARRAY_TASKS = 6
# Top-level folders of the image and the host: a script's path there is not site storage.
SYSTEM_TOPS = frozenset(
    (
        "bin",
        "boot",
        "dev",
        "etc",
        "lib",
        "lib32",
        "lib64",
        "libx32",
        "opt",
        "proc",
        "root",
        "run",
        "sbin",
        "srv",
        "sys",
        "tmp",
        "usr",
        "var",
        "sweep",
    )
)
# a path where a word starts: not a URL's (scheme://host/path), not a ratio (a/b)
_ABSOLUTE = re.compile(r"(?<![\w$}./:@-])(/[a-z][a-z0-9_]*[a-z0-9](?:/[\w.+%-]+)+)")


# What a node of the sweep's sandbox holds; the pod side's site says the same of its partitions, so
# that both lay a job out alike (-n 256 on 192-CPU nodes: 192,64).
NODE_CPUS = 192
NODE_MEM_MB = 2200000
NODE_GPUS = 8


@dataclass
class Case:
    name: str  # unique: the path below corpus/ with / as __
    path: Path
    text: str
    job: Job
    skipped: str | None = None  # why the sweep does not run it
    folders: list[str] = field(default_factory=list)  # absolute folders its paths name
    sourced: list[str] = field(default_factory=list)  # files on site storage it sources (a venv's activate)
    programs: list[str] = field(default_factory=list)  # programs on site storage it starts by path
    submitted_from: str = ""  # its folder below corpus/: both sides submit it from there
    provisioned: dict[str, str] = field(default_factory=dict)  # files the user writes before (a Secret's key)
    # of a larger array, the task ids both sides run (its first ones); the others never start
    array_tasks: tuple[int, ...] = ()
    given: Given = field(default_factory=Given)  # what its submitter gives it (inputs.py)

    @property
    def submit_dir(self) -> str:
        return f"{SUBMIT_ROOT}/{self.submitted_from}".rstrip("/")

    def given_files(self) -> dict[str, str]:
        """The files its submitter made before (inputs.py), each at its absolute path."""
        return {
            path if path.startswith("/") else f"{self.submit_dir}/{path}": content
            for path, content in self.given.files.items()
        }

    @property
    def time_limit_minutes(self) -> int:
        """The time limit the sandbox gives it: a minute, so that a job that hangs ends; with --signal's
        lead (B:USR1@300) on top, so that the signal does not come at once, as with its real limit."""
        signal = self.job.failure.signal
        return 1 + (-(-signal.seconds_before // 60) if signal is not None else 0)

    @property
    def fills_nodes(self) -> bool:
        """Its tasks need more than a node's CPUs: how Slurm lays them out depends on each node's free
        CPUs, so it runs on nodes no other case holds (after them)."""
        cpus = [(c.resources.tasks or 0) * (c.resources.cpus_per_task or 1) for c in self.job.components]
        return max(cpus) > NODE_CPUS


def find(corpus: Path) -> list[Case]:
    out: list[Case] = []
    for path in sorted(corpus.rglob("*")):
        if not path.is_file() or "golden" in path.relative_to(corpus).parts:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        if not reader.sniff(text) or not text.startswith("#!"):
            continue
        rel = str(path.relative_to(corpus.parent))
        jobs = reader.read(text, rel, Collector(rel))
        if len(jobs) != 1:
            continue  # a wrapper that submits jobs: its jobs are cases of their own files
        case = Case(str(path.relative_to(corpus)).replace("/", "__"), path, text, jobs[0])
        case.skipped = too_large(jobs[0])
        case.array_tasks = first_tasks(jobs[0])
        case.given = given(case.name)
        case.sourced = files_sourced(text)
        case.programs = programs_at(text, case.sourced)
        case.folders = [f for f in folders_named(text) if f not in case.programs]  # a program is no folder
        case.submitted_from = str(path.parent.relative_to(corpus)).removeprefix(".")
        out.append(case)
    return out


def too_large(job: Job) -> str | None:
    nodes = job.total_nodes()
    if nodes > MAX_NODES:
        return f"{nodes} nodes: the sandbox and the pod runner run {MAX_NODES} per job"
    array = job.array
    if array is not None and array.count > MAX_ARRAY_TASKS and len(array.indices) < MAX_ARRAY_TASKS:
        return f"an array of {array.count} tasks whose ids the reader did not list"
    return None


def first_tasks(job: Job) -> tuple[int, ...]:
    """Of an array larger than the sweep runs, the ids of its first tasks: each side starts the array
    as written and runs only these (the Slurm side releases them from a held array, the pods' side
    cuts the workload's completions to as many), so both see the array's own size variables."""
    array = job.array
    if array is None or array.count <= MAX_ARRAY_TASKS:
        return ()
    return array.indices[:MAX_ARRAY_TASKS]


# Who the job runs as on both sides: %u in an output path names them.
USER = "root"


# what a path may run on into (`iter_$STEP`, `run_*`): its last part is then no name of its own
_RUNS_ON = frozenset("${`*?[")


def folders_named(text: str) -> list[str]:
    """The folders the script's absolute paths name (a path ending in a file name: its folder),
    with %u as the user, cut at the first other expansion; outside the system's own folders."""
    found: set[str] = set()
    named = [
        # a file the script writes to (`>> /lustre/cohorts/FAILED`): its folder
        m.group(1).rsplit("/", 1)[0]
        if text[max(0, m.start() - 8) : m.start()].rstrip(" ").endswith(">")
        else m.group(1) + ("$" if text[m.end() : m.end() + 1] in _RUNS_ON else "")
        for m in _ABSOLUTE.finditer(text)
    ]
    for path in [p.replace("%u", USER) for p in named]:
        cut = path.split("$")[0].split("%")[0]
        if cut != path:  # the expansion's own component is not known: up to the folder before it
            cut = cut.rsplit("/", 1)[0] + "/"
        path = cut.rstrip("/")
        parts = path.strip("/").split("/")
        if not parts or not parts[0] or parts[0] in SYSTEM_TOPS:
            continue
        if len(parts) > 1 and ("." in parts[-1] or parts[-2] in PROGRAM_FOLDERS):
            parts = parts[:-1]  # a file's name, or a program's in a bin folder (a venv's activate)
        found.add("/" + "/".join(parts))
    return sorted(found)


# `source /fsx/venvs/ft/bin/activate` or `. /home/etl/env.sh`: a literal absolute path only
_SOURCED = re.compile(r"(?:^|[\s;&|(])(?:source|\.)\s+(/[\w./+-]+)(?=$|[\s;&|)])")


def files_sourced(text: str) -> list[str]:
    """The files on site storage the script sources: both sides hold each (empty), as the site's
    storage holds the virtual environment or the settings file, so that the script goes on past it."""
    found = {p for code in code_lines(text) for p in _SOURCED.findall(code)}
    return sorted(p for p in found if p.strip("/").split("/")[0] not in SYSTEM_TOPS)


def code_lines(text: str) -> list[str]:
    """The script's lines without their comments (a line's own, or after ` #`)."""
    codes = (line.split(" #", 1)[0] for line in text.splitlines())
    return [code for code in codes if not code.lstrip().startswith("#")]


PROGRAM_FOLDERS = frozenset(("bin", "sbin"))


# a program a line or a step starts by its path: `/opt/flexlm/lmgrd -z`, `exec /opt/tools/bin/selftest`,
# `srun --mpi=pmix /opt/nccl-tests/build/all_reduce_perf`
_STARTED = re.compile(
    r"(?:^\s*(?:(?:exec|time|nohup)\s+)*|\bsrun(?:\s+-[^\s]+)*\s+)(/[\w.+-]+(?:/[\w.+-]+)+)(?=\s|$)"
)


def programs_at(text: str, sourced: list[str]) -> list[str]:
    """Programs the script names by path: on site storage (`/fsx/tools/bin/s5cmd`), or installed on
    the nodes where this host has none (`/opt/flexlm/lmgrd`, which the pods' image would hold). Each
    is a recording stand-in there on both sides, as the ones found on PATH are."""
    found = set()
    codes = code_lines(text)
    for path in (p for code in codes for p in _ABSOLUTE.findall(code)):
        parts = path.strip("/").split("/")
        if len(parts) > 2 and parts[-2] in PROGRAM_FOLDERS and parts[0] not in SYSTEM_TOPS:
            found.add(path)
    for code in codes:
        for started in _STARTED.finditer(code):
            if not os.path.lexists(started.group(1)):
                found.add(started.group(1))
    return sorted(found - set(sourced))


def storage_tops(cases: list[Case]) -> list[str]:
    """The top-level folders the cases' paths name: each is a site file system in the sweep."""
    return sorted({f.split("/")[1] for c in cases for f in c.folders})


def partitions(cases: list[Case]) -> list[str]:
    names = {"cpu"}
    for case in cases:
        names.update(case.job.placement.partitions)
        # a hetjob's later components keep theirs as raw items
        names.update(
            name
            for raw in case.job.raw
            if raw.key in ("--partition", "-p") and raw.component
            for name in (raw.value or "").split(",")
        )
    return sorted(n for n in names if re.fullmatch(r"[\w.-]+", n))


def licenses(cases: list[Case]) -> list[str]:
    counts: dict[str, int] = {}
    for case in cases:
        for comp in case.job.components:
            for lic in comp.resources.licenses:
                counts[lic.name] = max(counts.get(lic.name, 0), lic.count * 4)
    return [f"{name}:{count}" for name, count in sorted(counts.items())]


def asks_mixed_gpus(case: Case) -> bool:
    """It asks GPUs of several types on one node (a100 and v100): a node word of node_gpu_types with
    a comma."""
    return any("," in word for word in node_gpu_types([case]))


def node_gpu_types(cases: list[Case]) -> list[str]:
    """The GPU types the cases ask, one word per kind of node: `a100`, or `a100,v100` for a request
    of both on one node. The sandbox's nodes take the words in turn; untyped requests fit any."""
    words: set[str] = set()
    for case in cases:
        for comp in case.job.components:
            res = comp.resources
            if res.gpu_types:
                words.add(",".join(sorted({g.type for g in res.gpu_types})))
            elif res.gpu_type:
                words.add(res.gpu_type)
    return sorted(w for w in words if re.fullmatch(r"[\w.,-]+", w))


def features(cases: list[Case]) -> list[str]:
    """The node features the cases' --constraint expressions name: every sandbox node has them all."""
    found: set[str] = set()
    for case in cases:
        for comp in case.job.components:
            # `[rack1|rack2]`, `gpu&nvme`, `a100*2`: the names, not the counts
            found.update(re.findall(r"[A-Za-z_][\w.-]*", comp.resources.constraint or ""))
    return sorted(found)
