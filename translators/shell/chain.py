"""Peel a command into the layers that run one another.

``srun --mpi=pmix nsys profile -o x apptainer exec img torchrun ... train.py``
is a launcher running a profiler running a container running a launcher
running a program. Each layer keeps its options and the words it runs; the
innermost words are the program. Wrappers that only change how a program
runs (``env``, ``nohup``, ``timeout``, ``numactl``, ``xargs``...) are skipped.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from migrate import ir

from . import slurm_cli
from .containers import container_at, pyxis
from .launchers import basename, launcher_at, names
from .model import Word

Resolve = Callable[[str], str]
_MAX_LAYERS = 8


class LayerKind(StrEnum):
    """What a layer of a command line does to the words it runs."""

    LAUNCHER = "launcher"  # srun, mpirun, torchrun ...
    CONTAINER = "container"  # apptainer exec, docker run ...
    PROFILER = "profiler"  # nsys profile, ncu ...


@dataclass(frozen=True)
class Layer:
    kind: LayerKind
    name: str  # srun, torchrun, apptainer, nsys ...
    word: Word  # the word naming the layer (its line is the layer's line)
    options: tuple[ir.KeyValue, ...] = ()
    runs: tuple[Word, ...] = ()  # the words this layer starts
    container: ir.Container | None = None
    own: tuple[Word, ...] = ()  # its own words: the name and its options


@dataclass(frozen=True)
class Chain:
    layers: tuple[Layer, ...]
    program: tuple[Word, ...]  # the innermost program and its arguments

    @property
    def name(self) -> str:
        return basename(self.program[0].value) if self.program else ""


def decompose(words: Sequence[Word], resolve: Resolve) -> list[Chain]:
    """Every chain of layers in a command (several for 'srun A : B')."""
    return _decompose(tuple(words), (), resolve)


def _decompose(words: tuple[Word, ...], layers: tuple[Layer, ...], resolve: Resolve) -> list[Chain]:
    values = [w.value for w in words]
    i = skip_wrappers(values, 0)
    if i >= len(words) or len(layers) >= _MAX_LAYERS:
        return [Chain(layers, words[i:])]
    word = words[i]
    launched = launcher_at(values, i)
    if launched is not None:
        out: list[Chain] = []
        for comp in launched.components:
            runs = words[comp.start : comp.end]
            container = None
            if launched.name == "srun":
                container = pyxis(comp.options, values[comp.start : comp.end], word.line, resolve)
            own = (word, *words[comp.options_start : comp.start])
            layer = Layer(LayerKind.LAUNCHER, launched.name, word, comp.options, runs, container, own)
            out.extend(_decompose(runs, (*layers, layer), resolve))
        return out
    started = container_at(values, i, word.line, resolve)
    if started is not None:
        runs = words[started.program :]
        own = words[i : started.program]
        layer = Layer(LayerKind.CONTAINER, started.runtime, word, (), runs, started.container, own)
        return _decompose(runs, (*layers, layer), resolve)
    profiled = _profiler(values, i)
    if profiled is not None:
        name, start = profiled
        runs = words[start:]
        layer = Layer(LayerKind.PROFILER, name, word, (), runs, None, words[i + 1 : start])
        return _decompose(runs, (*layers, layer), resolve)
    return [Chain(layers, words[i:])]


# ---------------------------------------------------------------------------
# Wrappers
# ---------------------------------------------------------------------------


def skip_wrappers(values: Sequence[str], i: int) -> int:
    """Index of the first word that is not a wrapper around the next one."""
    for _ in range(_MAX_LAYERS):
        if i >= len(values):
            return i
        nxt = _unwrap(values, i)
        if nxt is None or nxt == i:
            return i
        i = nxt
    return i


def _after_options(values: Sequence[str], i: int, with_value: frozenset[str]) -> int:
    """Skip '-x', '-x VALUE' (x in with_value), '--long[=v]' options from i."""
    n = len(values)
    while i < n and values[i].startswith("-") and values[i] != "-":
        word = values[i]
        if word == "--":
            return i + 1
        name = word.lstrip("-").split("=", 1)[0]
        i += 2 if ("=" not in word and name in with_value) else 1
    return i


_TIMEOUT_VALUES = frozenset({"s", "signal", "k", "kill-after"})
_NICE_VALUES = frozenset({"n", "adjustment"})
_NUMACTL_VALUES = frozenset(
    {"N", "cpunodebind", "m", "membind", "C", "physcpubind", "i", "interleave", "p", "preferred"}
)
_XARGS_VALUES = frozenset({"n", "P", "I", "d", "L", "s", "a", "E", "max-args", "max-procs", "delimiter"})
_TIME_VALUES = frozenset({"f", "o", "format", "output"})
_ENV_VALUES = frozenset({"u", "unset", "C", "chdir", "S", "split-string"})
_IONICE_VALUES = frozenset({"c", "n", "class", "classdata"})


def _unwrap(values: Sequence[str], i: int) -> int | None:
    """If values[i] is a wrapper, the index of what it runs; None otherwise."""
    name = basename(values[i])
    n = len(values)
    if name in ("nohup", "builtin", "unbuffer", "catchsegv"):
        return i + 1
    if name == "exec":
        return _after_options(values, i + 1, frozenset({"a"}))
    if name == "command":
        j = _after_options(values, i + 1, frozenset())
        return None if any(v in ("-v", "-V") for v in values[i + 1 : j]) else j
    if name == "env":
        j = _after_options(values, i + 1, _ENV_VALUES)
        while j < n and "=" in values[j] and not values[j].startswith("="):
            j += 1
        return j
    if name == "timeout":
        j = _after_options(values, i + 1, _TIMEOUT_VALUES)
        return j + 1  # the duration
    if name == "stdbuf":
        return _after_options(values, i + 1, frozenset({"i", "o", "e", "input", "output", "error"}))
    if name == "nice":
        return _after_options(values, i + 1, _NICE_VALUES)
    if name == "ionice":
        j = _after_options(values, i + 1, _IONICE_VALUES)
        return None if "-p" in values[i + 1 : j] else j
    if name == "numactl":
        j = _after_options(values, i + 1, _NUMACTL_VALUES)
        return None if any(v in ("-s", "--show", "-H", "--hardware") for v in values[i + 1 : j]) else j
    if name == "taskset":
        j = _after_options(values, i + 1, frozenset())
        return None if "-p" in values[i + 1 : j] else j + 1  # the mask
    if name == "xargs":
        return _after_options(values, i + 1, _XARGS_VALUES)
    if name == "salloc":  # an allocation that runs the rest of the line in it
        _, j = slurm_cli.parse_options(values, i + 1, slurm_cli.table("sbatch"))
        return j if j < n else None
    if name == "time":  # /usr/bin/time, or the keyword after a launcher
        return _after_options(values, i + 1, _TIME_VALUES)
    return None


# ---------------------------------------------------------------------------
# Profilers
# ---------------------------------------------------------------------------

_NCU_VALUES = names(
    "o export set section k kernel-name c launch-count s launch-skip target-processes metrics "
    "replay-mode kernel-name-base devices nvtx-include nvtx-exclude page print-summary log-file "
    "import clock-control cache-control profile-from-start section-folder kernel-id"
)
_NVPROF_VALUES = frozenset({"o", "log-file", "export-profile", "metrics", "events"})
_NSYS_FLAGS = frozenset({"help", "h"})


def _profiler(values: Sequence[str], i: int) -> tuple[str, int] | None:
    """nsys profile|launch ..., ncu ..., nvprof ...: the profiler and where its program starts."""
    name = basename(values[i])
    if name == "nsys" and i + 1 < len(values) and values[i + 1] in ("profile", "launch"):
        j = i + 2
        while j < len(values) and values[j].startswith("-"):
            word = values[j]
            if word == "--":
                j += 1
                break
            flag = word.lstrip("-")
            j += 1 if ("=" in word or flag in _NSYS_FLAGS) else 2  # nsys options nearly all take a value
        return "nsys", j
    if name in ("ncu", "nv-nsight-cu-cli"):
        return "ncu", _after_options(values, i + 1, _NCU_VALUES)
    if name == "nvprof":
        return "nvprof", _after_options(values, i + 1, _NVPROF_VALUES)
    return None
