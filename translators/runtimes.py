"""The container runtimes, one declaration each.

A ``Runtime`` holds what the program knows of one ``ir.Container.runtime`` (the
names of ``vocab.ContainerRuntime``): how a script's line that starts it is read
(``CommandLine``: its verbs, the options that take a value, where the image and
the program are, which options mount folders or set the working directory),
how the Slurm writer starts a pod's container with it (``Launch``: one of the
``--container-runtime`` choices), and whether an emulated pod runs its lines
through a shim of its name (the pod is the container already: the shim skips
the runtime's options and image and runs the program).

The shell reader (``shell/containers.py``), the Slurm writer (``slurm/context.py``,
``slurm/launch.py``, ``slurm/kube_job.py``) and the pods' shims
(``kubernetes/shims.py``, ``kubernetes/pod_template.py``) read this registry.
The order of the declarations is the order of the ``--container-runtime``
choices and of the shims in a pod. The ``#SBATCH`` options of the SPANK plugins
(pyxis ``--container-image``, Shifter ``--image``) are sbatch options, in
``slurm/options.py`` with the others.

Adding a runtime is one declaration and one ``register`` call (or ``registered``
for a block, as the tests do); see docs/architecture.md.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace
from enum import StrEnum
from functools import cached_property

from migrate.declared import Declared
from migrate.vocab import ContainerRuntime


@dataclass(frozen=True)
class Options:
    """Which options take a value: those in ``values``, or, with ``switches``, every one but those;
    each is one string of names, a space between them."""

    values: str = ""
    switches: str | None = None

    @cached_property
    def _names(self) -> frozenset[str]:
        return frozenset((self.values if self.switches is None else self.switches).split())

    def takes_value(self, name: str) -> bool:
        return (name in self._names) == (self.switches is None)


class Runs(StrEnum):
    """What the words after the image are, by the verb that starts the container."""

    COMMAND = "command"  # the program the container runs (docker run IMAGE prog)
    ARGUMENTS = "arguments"  # the arguments of the image's own entrypoint (apptainer run IMAGE args)
    SHELL = "shell"  # a shell's words, neither (apptainer shell IMAGE)
    NOTHING = "nothing"  # no program: the container is left running (apptainer instance start)


@dataclass(frozen=True)
class Verb:
    words: str  # "run", or several words: "instance start"
    runs: Runs = Runs.COMMAND


@dataclass(frozen=True)
class CommandLine:
    """How a script's line that starts the runtime is read: ``NAME [LEADING] [VERB] [OPTIONS] IMAGE PROGRAM``.

    Options are read as '-x v', '-xv', '--long v', '--long=v' and '-abc'; the first word that is not
    one (or '--') ends them."""

    options: Options
    verbs: tuple[Verb, ...] = ()  # the subcommands that start a container; (): the options follow the name
    leading: Options | None = None  # the options before the verb; None: the verb comes first
    image_option: str = ""  # the option that names the image; "": the first word after the options
    dashes: bool = False  # a '--' may stand between the image and the program (ch-run)
    binds: tuple[str, ...] = ()  # the options of host folders in the container: 'host:container[:ro]'
    binds_separator: str = ""  # between the folders of one option; "": one folder an option
    mounts: tuple[str, ...] = ()  # the options in docker's --mount syntax (type=bind,source=...,target=...)
    workdir: tuple[str, ...] = ()  # the options of the program's working directory
    name: tuple[str, ...] = ()  # the options that name the container


def _as_is(image: str) -> str:
    return image


def enroot_image(image: str) -> str:
    """pyxis/enroot spell a registry host with '#': nvcr.io/nvidia/pytorch:24.03 -> nvcr.io#nvidia/..."""
    if "#" in image or image.startswith(("docker://", "/", "./")):
        return image
    first, slash, rest = image.partition("/")
    if slash and ("." in first or ":" in first or first == "localhost"):
        return f"{first}#{rest}"
    return image


def shifter_image(image: str) -> str:
    """Shifter names the image's type first: docker:REPO:TAG."""
    return image if image.startswith("docker:") else "docker:" + image.removeprefix("docker://")


def docker_uri(image: str) -> str:
    """Apptainer pulls a registry image by its docker:// URI."""
    return "docker://" + image


@dataclass(frozen=True)
class Launch:
    """How the Slurm writer starts a pod's container with the runtime (a ``--container-runtime`` choice).

    The pieces go between srun's options and the program in this order: the words, the GPU switch,
    the image option, the folders, the working directory, the variables, the image operand. An option
    spelled with a final '=' takes its value in the same word, any other in the next one. With
    ``srun_options`` the pieces are srun's own options (a SPANK plugin's) and nothing precedes the
    program."""

    words: tuple[str, ...] = ()  # what starts the container: ("apptainer", "exec")
    srun_options: bool = False
    gpus: str = ""  # the switch that gives the container the node's GPUs
    image: str = ""  # the option that names the image; "": the image is the word after the options
    image_form: Callable[[str], str] = _as_is  # a registry image as the runtime spells it
    bind: str = ""  # the option of a host folder in the container ('host:container[:ro]')
    binds_joined: str = ""  # all the folders in one option, this between them; "": an option each
    workdir: str = ""  # the option of the program's working directory
    env: str = ""  # the option that passes a variable by name; "": the environment passes through
    env_joined: str = ""  # all the names in one option, this between them; "": an option each
    env_always: tuple[str, ...] = ()  # what that option passes for every job, before the names
    entrypoint: str = ""  # the switch that runs the image's entrypoint, the program its arguments
    entrypoint_words: tuple[str, ...] = ()  # the words that run the image's entrypoint in place of words
    no_entrypoint: str = ""  # the switch that keeps the image's entrypoint from running the program
    runs_entrypoint: bool = True  # False: it runs a named program only, never the image's own command
    entrypoint_needs_arguments: bool = False  # the entrypoint runs only with a word to give it (srun's)
    job_image: str = ""  # the #SBATCH option that gives the job its image; a step in that image names none
    job_image_note: str = ""  # the generated script's comment on that line

    @property
    def names_variables(self) -> bool:
        """The container sees the job's variables only as they are named to it (the host's value over
        the image's)."""
        return bool(self.env)


@dataclass(frozen=True)
class Runtime:
    name: ContainerRuntime  # the IR's name, and the command word that starts it
    line: CommandLine | None = None  # None: no command of its own (pyxis: srun's options; a pod's)
    launch: Launch | None = None  # None: the Slurm writer does not start containers with it
    shim: bool = False  # an emulated pod runs its lines through a shim of its name


_RUNTIMES: Declared[Runtime] = Declared("container runtime", lambda runtime: _problem(runtime))
_REGISTRY = _RUNTIMES.table


def runtimes() -> tuple[Runtime, ...]:
    """Every registered runtime, in the order of the declarations."""
    return tuple(_REGISTRY.values())


def find(word: str) -> Runtime | None:
    """The runtime a command word starts, or None."""
    return _REGISTRY.get(word)


def get(name: str) -> Runtime:
    if name not in _REGISTRY:
        raise ValueError(f"unknown container runtime {name!r}; expected one of {', '.join(_REGISTRY)}")
    return _REGISTRY[name]


def launch_of(name: str) -> Launch | None:
    """How the Slurm writer starts a container with ``name``; None for one it does not start with."""
    runtime = _REGISTRY.get(name)
    return runtime.launch if runtime is not None else None


def launched() -> tuple[str, ...]:
    """The runtimes the Slurm writer can start containers with, in the order it lists them."""
    return tuple(r.name for r in _REGISTRY.values() if r.launch is not None)


def shimmed() -> tuple[Runtime, ...]:
    """The runtimes an emulated pod has a shim for."""
    return tuple(r for r in _REGISTRY.values() if r.shim)


_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def _problem(runtime: Runtime) -> str | None:
    line, launch = runtime.line, runtime.launch
    if not _WORD.fullmatch(runtime.name):
        return "its name is the command word that starts it: letters, digits, '.', '_', '-'"
    if runtime.shim:
        if line is None:
            return "a shim skips the runtime's command line, which it has not"
        if any(verb.runs != Runs.COMMAND or " " in verb.words for verb in line.verbs):
            return "a shim runs a program: every verb is one word that runs one (Runs.COMMAND)"
        spelled = [
            line.options.values,
            line.options.switches or "",
            line.leading.values if line.leading else "",
            *(verb.words for verb in line.verbs),
        ]
        if not all(_WORD.fullmatch(name) for text in spelled for name in text.split()):
            return "its shim spells its options and verbs as they are: letters, digits, '.', '_', '-'"
        if not line.options.values and line.options.switches is None:
            return "a shim lists the options that take a value or the switches"
    if launch is not None and bool(launch.words) == launch.srun_options:
        return "a launch either starts with words or is srun's options"
    return None


def register(runtime: Runtime) -> Runtime:
    """Make ``runtime`` known everywhere: the shell reader, the Slurm writer, the pods' shims."""
    return _RUNTIMES.register(runtime)


def registered(*added: Runtime) -> AbstractContextManager[None]:
    """The runtimes registered for the block; the registry as it was afterwards."""
    return _RUNTIMES.registered(*added)


# The declarations, in the order --container-runtime lists them and a pod's shims are written.

# pyxis (NVIDIA's SPANK plugin): srun's --container-* options; enroot runs the image.
register(
    Runtime(
        ContainerRuntime.PYXIS,
        launch=Launch(
            srun_options=True,
            image="--container-image=",
            image_form=enroot_image,
            bind="--container-mounts=",
            binds_joined=",",
            workdir="--container-workdir=",
            env="--container-env=",  # the host's value over the image's
            env_joined=",",
            entrypoint="--container-entrypoint",
            entrypoint_needs_arguments=True,
        ),
    )
)

# apptainer|singularity [global switches] exec|run|shell|test|instance start [options] IMAGE ...
_APPTAINER = CommandLine(
    Options(
        "bind B mount home H workdir W pwd env env-file overlay o security network network-args "
        "hostname scratch S app dns apply-cgroups fusemount drop-caps add-caps cpus memory "
        "memory-reservation memory-swap cpu-shares cpuset-cpus cpuset-mems blkio-weight "
        "blkio-weight-device no-mount oci-runtime sif-fuse-options"
    ),
    verbs=(
        Verb("exec"),
        Verb("run", Runs.ARGUMENTS),
        Verb("shell", Runs.SHELL),
        Verb("test", Runs.ARGUMENTS),
        Verb("instance start", Runs.NOTHING),
    ),
    leading=Options(),  # --debug, --quiet, -s
    binds=("bind", "B"),
    binds_separator=",",
    mounts=("mount",),
    workdir=("pwd",),
)
register(
    Runtime(
        ContainerRuntime.APPTAINER,
        _APPTAINER,
        Launch(
            ("apptainer", "exec"),
            gpus="--nv",
            image_form=docker_uri,
            bind="--bind",
            workdir="--pwd",
            entrypoint_words=("apptainer", "run"),  # the image's entrypoint and default command
        ),
    )
)
register(Runtime(ContainerRuntime.SINGULARITY, _APPTAINER))

# NERSC's Shifter: the job's image in its SPANK option (#SBATCH --image), `shifter` before each
# program; a bare `shifter prog` runs in the job's image.
register(
    Runtime(
        ContainerRuntime.SHIFTER,
        CommandLine(
            Options("image volume V workdir entrypoint env e module m"),
            image_option="image",
            binds=("volume", "V"),
            binds_separator=";",
            workdir=("workdir",),
        ),
        Launch(
            ("shifter",),
            image="--image=",
            image_form=shifter_image,
            bind="--volume=",
            binds_joined="';'",  # one word, the maps apart by a quoted ';'
            workdir="--workdir=",
            runs_entrypoint=False,
            job_image="image",
            job_image_note="Shifter's SPANK option",
        ),
        shim=True,
    )
)

# docker|podman run: every option but these switches takes a value
_DOCKER_SWITCHES = (
    "rm d detach i interactive t tty privileged init read-only P publish-all q quiet no-healthcheck "
    "oom-kill-disable sig-proxy"
)


def _docker(switches: str = _DOCKER_SWITCHES, verbs: tuple[str, ...] = ("run",)) -> CommandLine:
    """A command line read as ``docker run``'s: -v/--volume and --mount folders, -w, --name."""
    return CommandLine(
        Options(switches=switches),
        tuple(Verb(verb) for verb in verbs),
        binds=("v", "volume"),
        mounts=("mount",),
        workdir=("w", "workdir"),
        name=("name",),
    )


# NERSC's podman-hpc [--squash-dir D] run|shared-run: podman's options and its site modules' switches
# (NERSC/podman-hpc etc/modules.d, cli_arg); `podman-hpc run --rm` per step.
register(
    Runtime(
        ContainerRuntime.PODMAN_HPC,
        replace(
            _docker(
                _DOCKER_SWITCHES + " gpu mpi cuda-mpi nccl openmpi-pmi2 openmpi-pmix pmi2 pmix cfs "
                "cvmfs home jupyter scratch",
                ("run", "shared-run"),
            ),
            leading=Options("squash-dir additional-stores"),  # where squashed images are kept
        ),
        Launch(
            ("podman-hpc", "run", "--rm"),
            gpus="--gpu",
            bind="-v",
            workdir="-w",
            # the container sees only the variables it is given: the task's Slurm variables and the
            # rendezvous the script exports pass by pattern
            env="-e",
            env_always=("'SLURM_*'", "'MASTER_*'"),
            # the pod's command replaces the image's entrypoint: an empty one runs the words after the image
            no_entrypoint="--entrypoint=",
        ),
        shim=True,
    )
)

# CSCS's sarus run: its switches; every other option takes a value (eth-cscs/sarus src/cli/CommandRun.hpp)
register(
    Runtime(
        ContainerRuntime.SARUS,
        replace(_docker("centralized-repository glibc init mpi m ssh tty t"), name=("name", "n")),
        shim=True,
    )
)

# Charliecloud's ch-run [OPTION...] IMAGE -- COMMAND: the options that take a value (hpc/charliecloud
# bin/ch-run.c); --set-env, --set-env0 and --write-fake take one only as --name=value. The image is a
# directory, a SquashFS file or a name.
register(
    Runtime(
        ContainerRuntime.CH_RUN,
        CommandLine(
            Options(
                "bind b cd c feature gid g join-pid join-ct join-tag test mount m storage s uid u "
                "unset-env warnings"
            ),
            dashes=True,
            binds=("bind", "b"),
            workdir=("cd", "c"),
        ),
        shim=True,
    )
)

# enroot start [options] IMAGE cmd
register(
    Runtime(
        ContainerRuntime.ENROOT,
        CommandLine(Options("conf c env e mount m"), verbs=(Verb("start"),), binds=("mount", "m")),
    )
)
register(Runtime(ContainerRuntime.DOCKER, _docker()))
register(Runtime(ContainerRuntime.PODMAN, _docker()))
register(Runtime(ContainerRuntime.NVIDIA_DOCKER, _docker()))
# sbatch --container: an OCI bundle the Slurm runtime starts (an #SBATCH option, no command of its own)
register(Runtime(ContainerRuntime.OCI_BUNDLE))
# a pod's container: the cluster runs it
register(Runtime(ContainerRuntime.KUBERNETES))

RUNTIMES = tuple(_REGISTRY)  # the built-in runtimes; ``runtimes()`` also has those registered later

__all__ = [
    "RUNTIMES",
    "CommandLine",
    "Launch",
    "Options",
    "Runs",
    "Runtime",
    "Verb",
    "docker_uri",
    "enroot_image",
    "find",
    "get",
    "launch_of",
    "launched",
    "register",
    "registered",
    "runtimes",
    "shifter_image",
    "shimmed",
]
