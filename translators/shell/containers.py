"""Container runtimes started from a script: image, mounts, workdir, program.

Covers pyxis (``srun --container-image``), Apptainer/Singularity
(``exec|run|shell|test``), ``docker|podman|nvidia-docker run``, NERSC's
``podman-hpc run|shared-run`` and ``shifter``, CSCS's ``sarus run``,
Charliecloud's ``ch-run`` and ``enroot start``. Mount specs keep the host side
as ``source`` and the container side as ``target``; ``:ro`` makes them read-only.
None of them adds ``#SBATCH`` options but Shifter, whose SPANK plugin gives the
job its image (``#SBATCH --image``): a bare ``shifter prog`` runs in that one.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from migrate import ir
from migrate.vocab import ContainerRuntime, MountKind

from .launchers import basename, names

Resolve = Callable[[str], str]


@dataclass(frozen=True)
class Started:
    runtime: ContainerRuntime
    # None where the image is the job's own, not named here (``shifter prog`` under ``#SBATCH --image``)
    container: ir.Container | None
    program: int  # index of the first word the container runs (len(words) when none)


_APPTAINER_VALUES = names(
    "bind B mount home H workdir W pwd env env-file overlay o security network network-args "
    "hostname scratch S app dns apply-cgroups fusemount drop-caps add-caps cpus memory "
    "memory-reservation memory-swap cpu-shares cpuset-cpus cpuset-mems blkio-weight "
    "blkio-weight-device no-mount oci-runtime sif-fuse-options"
)
_DOCKER_FLAGS = names(
    "rm d detach i interactive t tty privileged init read-only P publish-all q quiet "
    "no-healthcheck oom-kill-disable sig-proxy"
)
_SHIFTER_VALUES = frozenset({"image", "volume", "V", "workdir", "entrypoint", "env", "e", "module", "m"})
_DOCKER_RUNTIMES = frozenset(
    {ContainerRuntime.DOCKER, ContainerRuntime.PODMAN, ContainerRuntime.NVIDIA_DOCKER}
)
_APPTAINER_RUNTIMES = frozenset({ContainerRuntime.APPTAINER, ContainerRuntime.SINGULARITY})
# podman-hpc's site modules are switches of its own (NERSC/podman-hpc etc/modules.d, cli_arg)
_PODMAN_HPC_FLAGS = _DOCKER_FLAGS | names(
    "gpu mpi cuda-mpi nccl openmpi-pmi2 openmpi-pmix pmi2 pmix cfs cvmfs home jupyter scratch"
)
# sarus run: its switches; every other option takes a value (eth-cscs/sarus src/cli/CommandRun.hpp)
_SARUS_FLAGS = names("centralized-repository glibc init mpi m ssh tty t")
# ch-run [OPTION...] IMAGE -- COMMAND: the options that take a value (hpc/charliecloud bin/ch-run.c);
# --set-env, --set-env0 and --write-fake take one only as --name=value
_CH_RUN_VALUES = names(
    "bind b cd c feature gid g join-pid join-ct join-tag test mount m storage s uid u unset-env warnings"
)


def container_at(words: Sequence[str], i: int, line: int | None, resolve: Resolve) -> Started | None:
    """If words[i] starts a container runtime, read it."""
    name = basename(words[i])
    if name in _APPTAINER_RUNTIMES:
        return _apptainer(ContainerRuntime(name), words, i + 1, line, resolve)
    if name in _DOCKER_RUNTIMES:
        return _docker(ContainerRuntime(name), words, i + 1, line, resolve)
    if name == ContainerRuntime.PODMAN_HPC:
        return _podman_hpc(words, i + 1, line, resolve)
    if name == ContainerRuntime.SARUS:
        return _docker(
            ContainerRuntime.SARUS, words, i + 1, line, resolve, lambda key: key not in _SARUS_FLAGS
        )
    if name == ContainerRuntime.CH_RUN:
        return _ch_run(words, i + 1, line, resolve)
    if name == ContainerRuntime.ENROOT:
        return _enroot(words, i + 1, line, resolve)
    if name == ContainerRuntime.SHIFTER:
        return _shifter(words, i + 1, line, resolve)
    return None


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
    """'src:dst[:flags]' entries (a bare 'path' mounts it at the same place)."""
    out: list[ir.Mount] = []
    for entry in spec.split(sep):
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


def _apptainer(
    runtime: ContainerRuntime, words: Sequence[str], i: int, line: int | None, resolve: Resolve
) -> Started | None:
    n = len(words)
    while i < n and words[i].startswith("-"):  # global flags: --debug, --quiet, -s
        i += 1
    if i >= n or words[i] not in ("exec", "run", "shell", "test", "instance"):
        return None
    sub = words[i]
    if sub == "instance":  # instance start [opts] IMAGE NAME
        if i + 1 >= n or words[i + 1] != "start":
            return None
        i += 1
    opts, j = _options(words, i + 1, lambda name: name in _APPTAINER_VALUES)
    if j >= n:
        return None
    mounts: list[ir.Mount] = []
    workdir = None
    for name, value in opts:
        if name in ("bind", "B"):
            mounts.extend(split_mounts(resolve(value), ",", line))
        elif name == "mount":
            mount = _key_value_mount(resolve(value), line)
            if mount:
                mounts.append(mount)
        elif name == "pwd":
            workdir = value
    rest = tuple(words[j + 1 :]) if sub != "instance" else ()
    container = ir.Container(
        image=resolve(words[j]),
        runtime=runtime,
        command=rest if sub == "exec" else (),
        args=rest if sub in ("run", "test") else (),
        workdir=resolve(workdir) if workdir else None,
        mounts=tuple(mounts),
        line=line,
    )
    return Started(runtime, container, j + 1 if sub != "instance" else n)


def _docker(
    runtime: ContainerRuntime,
    words: Sequence[str],
    i: int,
    line: int | None,
    resolve: Resolve,
    takes_value: Callable[[str], bool] = lambda name: name not in _DOCKER_FLAGS,
    verbs: tuple[str, ...] = ("run",),
) -> Started | None:
    n = len(words)
    if i >= n or words[i] not in verbs:
        return None
    opts, j = _options(words, i + 1, takes_value)
    if j >= n:
        return None
    mounts: list[ir.Mount] = []
    workdir = None
    name = None
    for key, value in opts:
        if key in ("v", "volume"):
            mounts.extend(split_mounts(resolve(value), "\0", line))
        elif key == "mount":
            mount = _key_value_mount(resolve(value), line)
            if mount:
                mounts.append(mount)
        elif key in ("w", "workdir"):
            workdir = value
        elif key == "name" or (key == "n" and runtime == ContainerRuntime.SARUS):
            name = value
    return _started(runtime, words[j], words, j + 1, mounts, workdir, line, resolve, name)


def _podman_hpc(words: Sequence[str], i: int, line: int | None, resolve: Resolve) -> Started | None:
    """``podman-hpc [--squash-dir D] run|shared-run [podman and module options] IMAGE cmd``."""
    opts, j = _options(words, i, lambda name: name in ("squash-dir", "additional-stores"))
    del opts  # where squashed images are kept: nothing of the job's
    verbs = ("run", "shared-run")
    return _docker(
        ContainerRuntime.PODMAN_HPC,
        words,
        j,
        line,
        resolve,
        lambda name: name not in _PODMAN_HPC_FLAGS,
        verbs,
    )


def _ch_run(words: Sequence[str], i: int, line: int | None, resolve: Resolve) -> Started | None:
    """``ch-run [OPTION...] IMAGE -- COMMAND``: the image is a directory, a SquashFS file or a name."""
    opts, j = _options(words, i, lambda name: name in _CH_RUN_VALUES)
    n = len(words)
    if j >= n:
        return None
    program = j + 1
    if program < n and words[program] == "--":
        program += 1
    mounts: list[ir.Mount] = []
    workdir = None
    for key, value in opts:
        if key in ("bind", "b"):
            mounts.extend(split_mounts(resolve(value), "\0", line))
        elif key in ("cd", "c"):
            workdir = value
    return _started(ContainerRuntime.CH_RUN, words[j], words, program, mounts, workdir, line, resolve)


def _enroot(words: Sequence[str], i: int, line: int | None, resolve: Resolve) -> Started | None:
    n = len(words)
    if i >= n or words[i] != "start":
        return None
    opts, j = _options(words, i + 1, lambda name: name in ("conf", "c", "env", "e", "mount", "m"))
    if j >= n:
        return None
    mounts: list[ir.Mount] = []
    for key, value in opts:
        if key in ("mount", "m"):
            mounts.extend(split_mounts(resolve(value), "\0", line))
    return _started(ContainerRuntime.ENROOT, words[j], words, j + 1, mounts, None, line, resolve)


def _shifter(words: Sequence[str], i: int, line: int | None, resolve: Resolve) -> Started | None:
    opts, j = _options(words, i, lambda name: name in _SHIFTER_VALUES)
    image = next((v for k, v in opts if k == "image"), None)
    if j >= len(words):
        return None
    if not image:  # the job's image, from its SPANK option
        return Started(ContainerRuntime.SHIFTER, None, j)
    mounts: list[ir.Mount] = []
    workdir = None
    for key, value in opts:
        if key in ("volume", "V"):
            mounts.extend(split_mounts(resolve(value), ";", line))
        elif key == "workdir":
            workdir = value
    return _started(ContainerRuntime.SHIFTER, image, words, j, mounts, workdir, line, resolve)


def _started(
    runtime: ContainerRuntime,
    image: str,
    words: Sequence[str],
    program: int,
    mounts: list[ir.Mount],
    workdir: str | None,
    line: int | None,
    resolve: Resolve,
    name: str | None = None,
) -> Started:
    """The container of a runtime that runs ``words[program:]`` in ``image``."""
    container = ir.Container(
        image=resolve(image),
        name=name,
        runtime=runtime,
        command=tuple(words[program:]),
        workdir=resolve(workdir) if workdir else None,
        mounts=tuple(mounts),
        line=line,
    )
    return Started(runtime, container, program)
