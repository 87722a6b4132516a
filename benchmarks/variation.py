"""Text-level variation of corpus files: same shape, different values.

A real site holds many scripts copied from a few templates and then edited:
other node counts, times, job names, paths, image tags, a few extra comment
or echo lines, options in another order. These functions make such edits
with a seeded ``random.Random`` and keep every file valid for its format (a
shell script stays a script with the same header, a manifest stays YAML).
"""

from __future__ import annotations

import random
import re

_PATH_ROOTS = re.compile(r"(?<![\w.])/(fsx|lustre|gpfs|weka|scratch)/")
_PORT = re.compile(r"\b29500\b")
_REGISTRY_TAG = re.compile(
    r"((?:nvcr\.io|docker\.io|ghcr\.io|quay\.io|registry\.[\w.-]+)[\w./#-]*):([\w][\w.-]*)"
)
_IMAGE_FILE = re.compile(r"(\d{4})\.(\d{2})(\.(?:sqsh|sif))")
_TEAMS = tuple(f"{prefix}{n:02d}" for prefix in ("proj", "team", "grp") for n in range(1, 41))
_USERS = ("akumar", "bchen", "cdiaz", "dnovak", "eokafor", "fsato", "gmuller", "hpatel", "ilopez")


def vary_paths(text: str, rng: random.Random) -> str:
    """Put the file's shared-storage paths under one project folder; vary ports and image tags."""
    team = rng.choice(_TEAMS)
    text = _PATH_ROOTS.sub(lambda m: f"/{m.group(1)}/{team}/", text)
    port = str(29500 + rng.randrange(1, 400))
    text = _PORT.sub(port, text)
    tag = f"{rng.randrange(22, 26)}.{rng.randrange(1, 13):02d}-r{rng.randrange(1, 9)}"
    text = _REGISTRY_TAG.sub(lambda m: f"{m.group(1)}:{tag}", text)
    year, month = rng.randrange(2021, 2026), rng.randrange(1, 13)
    return _IMAGE_FILE.sub(lambda m: f"{year}.{month:02d}{m.group(3)}", text)


# ---------------------------------------------------------------------------
# sbatch headers
# ---------------------------------------------------------------------------

_TIMES = ("00:30:00", "01:00:00", "02:00:00", "04:00:00", "08:00:00", "12:00:00", "1-00:00:00", "2-00:00:00")
_NODES = (1, 1, 1, 2, 2, 4, 8, 16, 32)
_CPUS = (1, 2, 4, 8, 16, 24, 32)
_MEMS = ("16G", "32G", "64G", "128G", "256G", "480G", "0")

_JOB_NAME = re.compile(r"(--job-name[= ]|-J ?)([\"']?)([\w.+-]+)")
_NODES_OPT = re.compile(r"(--nodes[= ]|-N ?)(\d+)(?=\s|$)")
_TIME_OPT = re.compile(r"(--time[= ]|-t ?)(\d[\d:-]*)(?=\s|$)")
_CPUS_OPT = re.compile(r"(--cpus-per-task[= ]|-c ?)(\d+)(?=\s|$)")
_MEM_OPT = re.compile(r"(--mem[= ])(\d+[MGT]?)(?=\s|$)")
_ARRAY_RANGE = re.compile(r"(--array[= ]|-a ?)(\d+)-(\d+)(%\d+)?(?=\s|$)")


def vary_directive(line: str, serial: int, rng: random.Random) -> str:
    """New values in one ``#SBATCH`` / ``#SCRON`` line; the options it holds stay the same."""
    line = _JOB_NAME.sub(lambda m: f"{m.group(1)}{m.group(2)}{m.group(3)}-s{serial}", line)
    line = _NODES_OPT.sub(lambda m: f"{m.group(1)}{rng.choice(_NODES)}", line)
    line = _TIME_OPT.sub(lambda m: f"{m.group(1)}{rng.choice(_TIMES)}", line)
    line = _CPUS_OPT.sub(lambda m: f"{m.group(1)}{rng.choice(_CPUS)}", line)
    line = _MEM_OPT.sub(lambda m: f"{m.group(1)}{rng.choice(_MEMS)}", line)

    def array(m: re.Match[str]) -> str:
        size = rng.randrange(2, 500)
        throttle = f"%{rng.randrange(1, 33)}" if m.group(4) else ""
        return f"{m.group(1)}0-{size - 1}{throttle}"

    return _ARRAY_RANGE.sub(array, line)


def shuffle_directive_runs(lines: list[str], rng: random.Random) -> list[str]:
    """Re-order each run of consecutive ``#SBATCH`` lines (a hetjob separator ends a run)."""
    out: list[str] = []
    run: list[str] = []
    for line in [*lines, ""]:
        if line.startswith("#SBATCH") and not re.match(r"#SBATCH\s+(hetjob|packjob)\b", line):
            run.append(line)
            continue
        rng.shuffle(run)
        out.extend(run)
        run = []
        out.append(line)
    return out[:-1]


# ---------------------------------------------------------------------------
# shell bodies
# ---------------------------------------------------------------------------

_EXTRA_COMMENTS = (
    "# owner: {user}; ask before changing the node count",
    "# run {serial}: copied from the team template",
    "# TODO({user}): move the data to the new file system",
    "# ticket HPC-{serial}",
)
_EXTRA_COMMANDS = (
    'echo "[$(date -Is)] starting run {serial} on $(hostname)"',
    "export RUN_TAG=r{serial}",
    'echo "nodes=$SLURM_JOB_NUM_NODES tasks=${{SLURM_NTASKS:-1}}"',
    "export OMP_NUM_THREADS={threads}",
    "ulimit -n {files}",
)


def _first_command_index(lines: list[str]) -> int:
    for i, line in enumerate(lines):
        stripped = line.strip()
        if stripped and not stripped.startswith("#") and not line.startswith("{%"):
            return i
    return len(lines)


def _fill(template: str, serial: int, rng: random.Random) -> str:
    return template.format(
        user=rng.choice(_USERS),
        serial=serial,
        threads=rng.choice((1, 2, 4, 8)),
        files=rng.choice((4096, 8192, 65536)),
    )


def vary_script(text: str, serial: int, rng: random.Random, cron: bool) -> str:
    """An sbatch script, wrapper or scrontab file with new values and a few extra lines."""
    lines = text.split("\n")
    lines = [
        vary_directive(line, serial, rng) if line.startswith(("#SBATCH", "#SCRON")) else line
        for line in lines
    ]
    lines = shuffle_directive_runs(lines, rng)
    at = _first_command_index(lines)
    extra = [_fill(rng.choice(_EXTRA_COMMENTS), serial, rng) for _ in range(rng.randrange(0, 3))]
    if not cron:  # a scrontab file holds cron lines only: no commands between them
        extra += [_fill(rng.choice(_EXTRA_COMMANDS), serial, rng) for _ in range(rng.randrange(0, 3))]
    if not cron and rng.random() < 0.5:
        if lines and lines[-1] == "":
            lines.pop()
        lines += [_fill('echo "[$(date -Is)] run {serial} finished"', serial, rng), ""]
    lines[at:at] = extra
    return vary_paths(_join(lines, text), rng)


# ---------------------------------------------------------------------------
# manifests
# ---------------------------------------------------------------------------

_TOP_NAME = re.compile(r"^metadata:\s*\n\s+name:\s*[\"']?([\w.-]+)", re.MULTILINE)
_COUNT = re.compile(r"(\b(?:completions|parallelism|replicas|numWorkers):[ \t]*)(\d+)")
_GPUS = re.compile(r"(nvidia\.com/gpu[\"']?:[ \t]*[\"']?)(\d+)")
_CRON_MINUTE = re.compile(r"(schedule:[ \t]*[\"']?)(\d+)(?= )")


def vary_manifest(text: str, serial: int, rng: random.Random) -> str:
    """New object names (references follow), counts, GPU numbers, tags and comment lines."""
    for name in sorted(set(_TOP_NAME.findall(text)), key=len, reverse=True):
        text = re.sub(rf"(?<![\w./-]){re.escape(name)}(?![\w-])", f"{name}-s{serial}", text)
    text = _COUNT.sub(lambda m: f"{m.group(1)}{rng.randrange(1, 65)}", text)
    gpus = rng.choice((1, 2, 4, 8))
    text = _GPUS.sub(lambda m: f"{m.group(1)}{gpus}", text)
    text = _CRON_MINUTE.sub(lambda m: f"{m.group(1)}{rng.randrange(0, 60)}", text)
    lines = text.split("\n")
    # Comments go only before lines at indent 0: never inside a block scalar.
    top = [i for i, line in enumerate(lines) if line[:1].isalpha()]
    for i in sorted(rng.sample(top, min(len(top), rng.randrange(0, 3))), reverse=True):
        lines.insert(i, _fill(rng.choice(_EXTRA_COMMENTS), serial, rng))
    if rng.random() < 0.5:
        lines.insert(0, f"# generated for environment {rng.choice(_TEAMS)}, revision {serial}")
    return vary_paths(_join(lines, text), rng)


def _join(lines: list[str], original: str) -> str:
    """Join lines again; added lines take the file's CRLF endings when it has them."""
    if "\r\n" not in original:
        return "\n".join(lines)
    return "\n".join(line if line.endswith("\r") or not line else line + "\r" for line in lines)
