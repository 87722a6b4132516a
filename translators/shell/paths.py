"""Storage paths a body touches, with a read/write hint where the context gives one.

A candidate is an absolute path (system trees excluded), ``~/...``, or a
path rooted in a storage variable (``$SCRATCH``, ``$HOME``, ``$TMPDIR``...).
Variables the script itself set to a path are followed, so that
``mkdir -p "$CKPT"`` marks the directory ``CKPT`` names as written; other
variables are never expanded (``$SCRATCH/run1`` stays as written).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import lru_cache

from migrate import ir

from .launchers import basename, names
from .model import Word

READ, WRITE, READ_WRITE, UNKNOWN = ir.READ, ir.WRITE, ir.READ_WRITE, ir.UNKNOWN


# Variables that name storage at HPC sites; their paths are kept as written.
STORAGE_VARS = frozenset(
    {"HOME", "SCRATCH", "TMPDIR", "TMP", "TEMP", "TEMPDIR", "WORK", "WORKDIR", "PROJECT", "PSCRATCH",
     "CSCRATCH", "LOCAL_SCRATCH", "LOCALSCRATCH", "SLURM_TMPDIR", "SLURM_SUBMIT_DIR", "DW_JOB_STRIPED",
     "DW_JOB_PRIVATE", "BB_JOB_STRIPED", "SCRATCHDIR", "DATA", "DATADIR", "STORE", "GROUP_HOME",
     "GROUP_SCRATCH", "PROJECT_DIR", "SHARED", "LSCRATCH", "MEMDIR", "FSX"}
)  # fmt: skip
_SYSTEM_ROOTS = frozenset(
    {"dev", "proc", "sys", "usr", "bin", "sbin", "lib", "lib32", "lib64", "etc", "opt", "var", "run",
     "boot", "srv", "snap", "cvmfs"}
)  # fmt: skip
_DATA_WORDS = frozenset({"data", "datasets", "checkpoints", "ckpt", "models", "output", "results", "scratch"})

_URL = re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"]*")
_OBJECT_STORE = re.compile(r"\b(?:s3|gs)://(?:\$\([^()]*\)|[^\s'\"])+")
# A path character run: $( ... ) groups may hold spaces and quotes.
_RUN = r"(?:\$\([^()]*\)|\$\{[^}]*\}|[^\s:,;'\"<>()\[\]|&`{}]|[{}])*"
_CANDIDATE = re.compile(
    r"(?<![^\s=:,;\[(@'\"<>`])"
    r"(?:"
    rf"(?P<abs>/(?:[A-Za-z0-9_.~+-]|\$\{{?[A-Za-z_]){_RUN})"
    rf"|(?P<tilde>~(?:/{_RUN})?)(?=$|[\s:,;'\")\]])"
    rf"|(?P<var>\$(?:\{{(?P<braced>[A-Za-z_][A-Za-z0-9_]*)\}}|(?P<bare>[A-Za-z_][A-Za-z0-9_]*)){_RUN})"
    r")"
)
_TRAILING = ".,;:'\""


def normalize(path: str) -> str:
    """Strip trailing punctuation, unbalanced closers and slashes; keep variables verbatim."""
    while path:
        last = path[-1]
        if (
            last in _TRAILING
            or (last == ")" and path.count(")") > path.count("("))
            or (last == "}" and path.count("}") > path.count("{"))
            or (last == "]" and path.count("]") > path.count("["))
            or (last == "/" and len(path) > 1)
        ):
            path = path[:-1]
        else:
            break
    return path


def is_storage(path: str) -> bool:
    """Absolute paths outside system trees, ~ and variable-rooted paths."""
    if not path.startswith("/"):
        return bool(path)
    parts = [p for p in path.split("/") if p]
    if not parts:
        return False
    if path == "/dev/shm" or path.startswith(("/dev/shm/", "/var/tmp")):
        return True
    if parts[0] in _SYSTEM_ROOTS:
        return parts[0] == "opt" and any(p.lower() in _DATA_WORDS for p in parts[1:])
    return True


def candidates(value: str, path_vars: Mapping[str, str]) -> list[str]:
    """Storage paths mentioned in a word's value, script variables followed."""
    if "/" not in value and "~" not in value and "$" not in value:
        return []
    if "$" not in value:  # no variable to follow: the answer depends on the value alone
        return list(_literal_candidates(value))
    return _candidates(value, path_vars)


@lru_cache(maxsize=16384)
def _literal_candidates(value: str) -> tuple[str, ...]:
    return tuple(_candidates(value, {}))


def _candidates(value: str, path_vars: Mapping[str, str]) -> list[str]:
    out: list[str] = [normalize(m.group()) for m in _OBJECT_STORE.finditer(value)]
    text = _URL.sub(lambda m: " " * len(m.group()), value)
    for m in _CANDIDATE.finditer(text):
        path = _resolved(m, path_vars)
        if path:
            out.append(path)
    return out


def assigned_path(value: str, path_vars: Mapping[str, str]) -> str | None:
    """The path an assignment value names when it is exactly one path (for following NAME)."""
    value = normalize(value)
    m = _CANDIDATE.fullmatch(value) if value.startswith(("/", "~", "$")) else None
    return _resolved(m, path_vars) if m else None


def _resolved(m: re.Match[str], path_vars: Mapping[str, str]) -> str | None:
    path = m.group()
    if m.group("var"):
        name = m.group("braced") or m.group("bare") or ""
        if name in path_vars:
            prefix = len(name) + (3 if m.group("braced") else 1)
            path = path_vars[name] + path[prefix:]
        elif name not in STORAGE_VARS:
            return None
    path = normalize(path)
    return path if path and is_storage(path) else None


# ---------------------------------------------------------------------------
# Access hints
# ---------------------------------------------------------------------------

_READ_FIRST = names("resume load restore init pretrained from reads ref reference")
_WRITE_WORDS = frozenset(
    {"out", "output", "outdir", "outfile", "outputs", "save", "savedir", "ckpt", "checkpoint", "checkpoints",
     "log", "logs", "logdir", "logging", "tensorboard", "tb", "result", "results", "dump", "dest",
     "destination", "exp", "error", "err", "o", "report", "profile", "export", "target", "store"}
)  # fmt: skip
_READ_WRITE_WORDS = frozenset({"cache", "chdir", "workdir", "scratch", "tmp", "tmpdir", "cwd"})
_READ_WORDS = frozenset(
    {"data", "dataset", "datasets", "input", "in", "i", "config", "cfg", "conf", "model", "models",
     "tokenizer", "vocab", "db", "database", "src", "source", "file", "files", "path", "paths", "fasta",
     "hostfile", "machinefile", "license", "weights", "raw", "train", "eval", "val", "test", "corpus",
     "image", "sif", "bam", "fastq", "genome", "index", "script", "deck", "input_file", "base"}
)  # fmt: skip


def option_access(name: str) -> str | None:
    """Read or write, guessed from an option or parameter name (--output_dir, data.path)."""
    last = name.lower().lstrip("-").rsplit(".", 1)[-1].replace("-", "_")
    tokens = set(last.split("_"))
    if tokens & _READ_FIRST:
        return READ
    if tokens & _WRITE_WORDS:
        return WRITE
    if tokens & _READ_WRITE_WORDS:
        return READ_WRITE
    if tokens & _READ_WORDS:
        return READ
    return None


# Utilities and what they do to their operands.
_COPIERS = frozenset({"cp", "rsync", "scp", "install", "mv", "ln", "rclone", "dd"})
_WRITERS = names("mkdir touch rm rmdir truncate tee chmod chown chgrp setfacl shred unlink fallocate")
_READERS = frozenset(
    {"cat", "head", "tail", "less", "more", "grep", "egrep", "fgrep", "zcat", "zgrep", "wc", "sort", "uniq",
     "cut", "awk", "gawk", "sed", "diff", "cmp", "md5sum", "sha256sum", "sha1sum", "stat", "du", "ls", "file",
     "readlink", "realpath", "find", "test", "[", "[[", "source", ".", "h5ls", "h5dump", "ncdump", "jq", "yq",
     "paste", "comm", "nl", "od", "xxd", "strings", "tree", "lfs", "df"}
)  # fmt: skip
QUIET = frozenset(
    {"echo", "printf", "logger", ":", "true", "false", "sleep", "kill", "wait", "exit", "return", "set",
     "shift", "trap", "export", "declare", "typeset", "local", "readonly", "unset", "module", "ml", "spack",
     "conda", "mamba", "micromamba", "sbatch", "scontrol", "squeue", "scancel", "mail", "mailx", "sendmail",
     "date", "hostname", "seq", "eval", "wandb", "nvidia-smi", "dcgmi", "sstat", "seff", "sacct", "basename",
     "dirname"}
)  # fmt: skip
_VALUE_OPTIONS = {
    "rsync": names(
        "e rsh exclude include exclude-from include-from files-from partial-dir log-file bwlimit chmod "
        "chown timeout temp-dir T compare-dest link-dest copy-dest backup-dir suffix max-size min-size "
        "filter f out-format"
    ),
    "cp": names("t target-directory S suffix"),
    "mv": names("t target-directory S suffix"),
    "ln": names("t target-directory S suffix"),
    "tar": names("C directory f file exclude T files-from X exclude-from use-compress-program I transform"),
    "grep": names("e f m A B C regexp file max-count"),
    "sed": names("e f expression file"),
    "awk": names("F v f"),
    "scp": names("P i o F c l"),
    "mkdir": names("m mode"),
    "head": names("n c lines bytes"),
    "tail": names("n c lines bytes"),
    "sort": names("k t o S T key field-separator output"),
    "cut": names("d f c b"),
    "du": names("d max-depth"),
}
_EMPTY: frozenset[str] = frozenset()
_PATTERN_FIRST = names("awk gawk sed grep egrep fgrep zgrep jq yq")
_SCRIPT_OPTIONS = names("-e -f --expression --file --regexp")


def operands(args: Sequence[Word], value_options: frozenset[str]) -> list[Word]:
    """Non-option arguments, skipping the values of options that take one."""
    out: list[Word] = []
    i = 0
    while i < len(args):
        word = args[i].value
        if word == "--":
            out.extend(args[i + 1 :])
            break
        if word.startswith("-") and len(word) > 1:
            name = word.lstrip("-")
            if "=" not in name and (name in value_options or (len(name) > 1 and name[-1] in value_options
                                                                and not word.startswith("--"))):  # fmt: skip
                i += 1
        else:
            out.append(args[i])
        i += 1
    return out


def utility_access(program: Sequence[Word]) -> list[tuple[Word, str]] | None:
    """Operands of a file utility with their access; None when the program is not one."""
    name = basename(program[0].value)
    args = program[1:]
    if name in QUIET:
        return []
    values = _VALUE_OPTIONS.get(name, _EMPTY)
    if name in ("cd", "pushd"):
        return [(w, READ_WRITE) for w in operands(args, _EMPTY)]
    if name in ("tar", "bsdtar"):
        return _tar(args)
    if name == "unzip":
        return _unzip(args)
    if name in ("aws", "gsutil", "gcloud", "azcopy", "s5cmd"):
        return _cloud_copy(args)
    if name in _COPIERS:
        if name == "rclone" or name == "dd":
            args = args[1:] if name == "rclone" else args
        ops = operands(args, values)
        if name == "dd":
            files = [w for w in args if w.value[:3] in ("if=", "of=")]
            return [(w, READ if w.value.startswith("if=") else WRITE) for w in files]
        if len(ops) < 2:
            return [(w, READ) for w in ops]
        source_access = READ_WRITE if name == "mv" else READ
        return [*((w, source_access) for w in ops[:-1]), (ops[-1], WRITE)]
    if name in _WRITERS:
        return [(w, WRITE) for w in operands(args, values)]
    if name == "lfs" and args:
        sub = args[0].value
        access = WRITE if sub in ("setstripe", "mkdir", "migrate", "mirror", "setdirstripe") else READ
        return [(w, access) for w in operands(args[1:], frozenset({"c", "S", "i", "o", "p", "type", "name"}))]
    if name in _READERS:
        ops = operands(args, values)
        if name in _PATTERN_FIRST and ops and not any(w.value in _SCRIPT_OPTIONS for w in args):
            ops = ops[1:]  # grep PATTERN FILE, awk 'PROGRAM' FILE, sed 'SCRIPT' FILE
        access = READ
        if name == "sed" and any(w.value.startswith("-i") or w.value == "--in-place" for w in args):
            access = READ_WRITE
        if name == "find" and any(w.value in ("-delete", "-exec") for w in args):
            access = WRITE if any(w.value == "-delete" for w in args) else READ
        return [(w, access) for w in ops]
    return None


_TAR_MODES = {"create": "c", "append": "c", "update": "c", "extract": "x", "get": "x", "list": "t"}


def _tar(args: Sequence[Word]) -> list[tuple[Word, str]]:
    mode = ""
    archive: Word | None = None
    directory: Word | None = None
    rest: list[Word] = []
    i = 0
    while i < len(args):
        word = args[i].value
        bundled = i == 0 and not word.startswith("-")
        if word.startswith("--"):
            name, eq, value = word[2:].partition("=")
            if name in _TAR_MODES:
                mode = mode or _TAR_MODES[name]
            elif name in ("file", "directory"):
                target = args[i] if eq else (args[i + 1] if i + 1 < len(args) else None)
                if target is not None and eq:
                    target = Word(target.raw, value, target.line)
                if name == "file":
                    archive = target
                else:
                    directory = target
                i += 0 if eq else 1
        elif word.startswith("-") or bundled:
            letters = word.lstrip("-")
            for k, letter in enumerate(letters):
                if letter in "cxtru":
                    mode = mode or ("c" if letter in "cru" else letter)
                if letter in "fC" and i + 1 < len(args):
                    value_word = args[i + 1]
                    if letter == "f":
                        archive = value_word
                    else:
                        directory = value_word
                    i += 1
                    if k < len(letters) - 1:
                        break
        else:
            rest.append(args[i])
        i += 1
    out: list[tuple[Word, str]] = []
    if archive is not None:
        out.append((archive, WRITE if mode == "c" else READ))
    if directory is not None:
        out.append((directory, WRITE if mode == "x" else READ))
    out.extend((w, READ if mode == "c" else UNKNOWN) for w in rest)
    return out


def _unzip(args: Sequence[Word]) -> list[tuple[Word, str]]:
    out: list[tuple[Word, str]] = []
    ops = operands(args, frozenset({"d", "x"}))
    for i, w in enumerate(args):
        if w.value == "-d" and i + 1 < len(args):
            out.append((args[i + 1], WRITE))
    if ops:
        out.append((ops[0], READ))
    return out


def _cloud_copy(args: Sequence[Word]) -> list[tuple[Word, str]]:
    """aws s3 cp|sync|mv SRC DST, gsutil [-m] cp|rsync SRC DST, azcopy copy SRC DST."""
    ops = operands(
        args, names("exclude include profile region storage-class sse numworkers log endpoint-url")
    )
    verbs = [w.value for w in ops]
    for i, verb in enumerate(verbs):
        if verb in ("cp", "sync", "mv", "rsync", "copy"):
            files = ops[i + 1 :]
            if len(files) >= 2:
                return [*((w, READ) for w in files[:-1]), (files[-1], WRITE)]
            return [(w, READ) for w in files]
        if verb in ("rm", "rb"):
            return [(w, WRITE) for w in ops[i + 1 :]]
    return [(w, READ) for w in ops[1:]]


def redirect_access(op: str) -> str | None:
    if op in (">", ">>", "&>", "&>>", ">|", ">&"):
        return WRITE
    if op == "<":
        return READ
    if op == "<>":
        return READ_WRITE
    return None
