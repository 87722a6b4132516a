"""Container runtimes started from a script: image, mounts, workdir, program.

pyxis from ``srun --container-image``; every other runtime from its command
line, read as its declaration in ``translators/runtimes.py`` says (Apptainer's
``exec|run|shell|test``, ``docker run``, ``podman-hpc run``, ``shifter``,
``ch-run IMAGE -- cmd`` ...). Mount specs keep the host side as ``source`` and
the container side as ``target``; ``:ro`` makes them read-only. None of them
adds ``#SBATCH`` options but Shifter, whose SPANK plugin gives the job its image
(``#SBATCH --image``): a bare ``shifter prog`` runs in that one.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from migrate import ir
from migrate.vocab import ContainerRuntime, MountKind

from .. import runtimes
from ..runtimes import CommandLine, Runs, Verb
from .launchers import basename

Resolve = Callable[[str], str]


@dataclass(frozen=True)
class Started:
    runtime: ContainerRuntime
    # None where the image is the job's own, not named here (``shifter prog`` under ``#SBATCH --image``)
    container: ir.Container | None
    program: int  # index of the first word the container runs (len(words) when none)


def container_at(words: Sequence[str], i: int, line: int | None, resolve: Resolve) -> Started | None:
    """If words[i] starts a container runtime, read it."""
    runtime = runtimes.find(basename(words[i]))
    if runtime is None or runtime.line is None:
        return None
    return _read(runtime.name, runtime.line, words, i + 1, line, resolve)


def pyxis(
    options: Sequence[ir.KeyValue], program: Sequence[str], line: int | None, resolve: Resolve
) -> ir.Container | None:
    """The container an srun step runs in, from its pyxis options."""
    found = {kv.key: kv.value for kv in options}
    image = found.get("container-image")
    if not image:
        return None
    mounts: list[ir.Mount] = []
    for kv in options:
        if kv.key == "container-mounts":
            mounts.extend(split_mounts(resolve(kv.value), ",", line))
    return ir.Container(
        image=resolve(image),
        name=found.get("container-name") or None,
        runtime=ContainerRuntime.PYXIS,
        command=tuple(program),
        workdir=resolve(found.get("container-workdir") or "") or None,
        mounts=tuple(mounts),
        line=line,
    )


def split_mounts(spec: str, sep: str, line: int | None) -> list[ir.Mount]:
    """'src:dst[:flags]' entries, ``sep`` between them ("": one entry) (a bare 'path' mounts it at the
    same place)."""
    out: list[ir.Mount] = []
    for entry in spec.split(sep) if sep else [spec]:
        entry = entry.strip()
        if not entry:
            continue
        parts = entry.split(":")
        source = parts[0]
        target = parts[1] if len(parts) > 1 and parts[1] else source
        flags = set(re.split(r"[,+:]", ":".join(parts[2:])))
        read_only = "ro" in flags or "readonly" in flags
        out.append(
            ir.Mount(target=target, source=source, kind=MountKind.BIND, read_only=read_only, line=line)
        )
    return out


def _key_value_mount(spec: str, line: int | None) -> ir.Mount | None:
    """--mount type=bind,source=/a,target=/b[,readonly]."""
    fields: dict[str, str] = {}
    for item in spec.split(","):
        key, _, value = item.partition("=")
        fields[key.strip().lower()] = value.strip()
    source = fields.get("source") or fields.get("src")
    target = fields.get("target") or fields.get("destination") or fields.get("dst") or source
    if not target:
        return None
    read_only = "readonly" in fields or "ro" in fields or fields.get("readonly") == "true"
    kind = fields.get("type", "bind")
    return ir.Mount(
        target=target,
        source=source,
        kind=MountKind.BIND if kind == MountKind.BIND else MountKind.OTHER,
        read_only=read_only,
        line=line,
    )


def _options(
    words: Sequence[str], i: int, takes_value: Callable[[str], bool]
) -> tuple[list[tuple[str, str]], int]:
    """Generic '-x v', '--long v', '--long=v', '-abc' reading; stops at the first operand."""
    out: list[tuple[str, str]] = []
    n = len(words)
    while i < n:
        word = words[i]
        if word == "--":
            return out, i + 1
        if not word.startswith("-") or word == "-":
            break
        if word.startswith("--"):
            name, eq, value = word[2:].partition("=")
            if eq:
                out.append((name, value))
            elif takes_value(name) and i + 1 < n:
                out.append((name, words[i + 1]))
                i += 1
            else:
                out.append((name, ""))
        else:
            letters = word[1:]
            for k, letter in enumerate(letters):
                rest = letters[k + 1 :]
                if takes_value(letter):
                    if rest:
                        out.append((letter, rest.lstrip("=")))
                    elif i + 1 < n:
                        out.append((letter, words[i + 1]))
                        i += 1
                    break
                out.append((letter, ""))
        i += 1
    return out, i


def _verb(cmd: CommandLine, words: Sequence[str], i: int) -> tuple[Verb, int] | None:
    """The verb at words[i] and the index after it."""
    for verb in cmd.verbs:
        spelled = verb.words.split()
        if list(words[i : i + len(spelled)]) == spelled:
            return verb, i + len(spelled)
    return None


def _read(
    runtime: ContainerRuntime,
    cmd: CommandLine,
    words: Sequence[str],
    i: int,
    line: int | None,
    resolve: Resolve,
) -> Started | None:
    """``NAME [LEADING] [VERB] [OPTIONS] IMAGE PROGRAM`` read by the runtime's declaration."""
    n = len(words)
    runs = Runs.COMMAND
    if cmd.leading is not None:  # options before the verb: nothing of the job's
        _, i = _options(words, i, cmd.leading.takes_value)
    if cmd.verbs:
        found = _verb(cmd, words, i)
        if found is None:
            return None
        verb, i = found
        runs = verb.runs
    opts, j = _options(words, i, cmd.options.takes_value)
    if j >= n:
        return None
    if cmd.image_option:
        image = next((v for k, v in opts if k == cmd.image_option), None)
        if not image:  # the job's image, from its SPANK option
            return Started(runtime, None, j)
        program = j
    else:
        image = words[j]
        program = j + 1
        if cmd.dashes and program < n and words[program] == "--":
            program += 1
    mounts: list[ir.Mount] = []
    workdir = None
    name = None
    for key, value in opts:
        if key in cmd.binds:
            mounts.extend(split_mounts(resolve(value), cmd.binds_separator, line))
        elif key in cmd.mounts:
            mount = _key_value_mount(resolve(value), line)
            if mount:
                mounts.append(mount)
        elif key in cmd.workdir:
            workdir = value
        elif key in cmd.name:
            name = value
    if runs == Runs.NOTHING:
        program = n
    rest = tuple(words[program:]) if runs != Runs.SHELL else ()
    container = ir.Container(
        image=resolve(image),
        name=name,
        runtime=runtime,
        command=rest if runs == Runs.COMMAND else (),
        args=rest if runs == Runs.ARGUMENTS else (),
        workdir=resolve(workdir) if workdir else None,
        mounts=tuple(mounts),
        line=line,
    )
    return Started(runtime, container, program)
