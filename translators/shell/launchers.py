"""Parallel launchers: which words are their options and where the program starts.

srun options come from the sbatch table (``slurm_cli``); the others are
small specs of the options that take a value. Keys are canonical so that a
writer can rely on them: srun and mpirun use long names (``-N2`` ->
``nodes``, ``-n`` -> ``np``), the Python launchers use underscores
(``--nproc-per-node`` -> ``nproc_per_node``). ``srun`` and ``mpirun`` run one
program per ``:``-separated component (heterogeneous steps, MPMD).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from migrate import ir

from . import slurm_cli

# Python modules that are launchers, and the launcher name they stand for.
# Programs that run a script given to them as text or a file (bash -c, sh script.sh).
SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ash", "ksh", "mksh"})
# Builtins that set (and may export) variables: export X=1, declare -x X=1, local X=1.
DECLARING = frozenset({"export", "declare", "typeset", "local", "readonly"})

PYTHON_MODULES = {
    "torch.distributed.run": "torch.distributed.run",
    "torch.distributed.launch": "torch.distributed.launch",
    "deepspeed.launcher.runner": "deepspeed",
    "accelerate.commands.launch": "accelerate",
}
_PYTHON = re.compile(r"python[0-9.]*\Z")
_SCRIPT = re.compile(r".*\.(py|sh|bash)\Z|python[0-9.]*\Z|bash\Z|sh\Z")
_NUMBER = re.compile(r"-[0-9.]+\Z")


@dataclass(frozen=True)
class Spec:
    """The options of one launcher, by normalized name."""

    values: frozenset[str]  # take one value
    flags: frozenset[str] = frozenset()  # take none
    pairs: frozenset[str] = frozenset()  # take two (mpirun --mca key value)
    aliases: dict[str, str] = field(default_factory=dict)
    underscores: bool = False  # normalize '-' to '_' in names (Python argparse launchers)
    unknown_value: bool = True  # guess that an unknown option takes a value


def names(text: str) -> frozenset[str]:
    """A set of names written as one space-separated string."""
    return frozenset(text.split())


_TORCH = Spec(
    values=names(
        "nnodes nproc_per_node rdzv_backend rdzv_endpoint rdzv_id rdzv_conf max_restarts monitor_interval "
        "start_method role node_rank master_addr master_port local_addr log_dir redirects r tee t "
        "local_ranks_filter logs_specs numa_binding event_log_handler"
    ),
    flags=names("standalone no_python run_path module m use_env"),
    aliases={"r": "redirects", "t": "tee", "m": "module"},
    underscores=True,
)
_DEEPSPEED = Spec(
    values=names(
        "hostfile H include i exclude e num_nodes num_gpus num_accelerators master_port master_addr "
        "launcher launcher_args node_rank autotuning min_elastic_nodes max_elastic_nodes ssh_port "
        "comment venv_script bind_core_list enable_each_rank_log"
    ),
    flags=names(
        "no_python module no_local_rank force_multi elastic_training save_pid bind_cores_to_rank "
        "no_ssh_check no_ssh"
    ),
    aliases={"H": "hostfile", "i": "include", "e": "exclude"},
    underscores=True,
)
_ACCELERATE = Spec(
    values=names(
        "config_file num_processes num_machines machine_rank main_process_ip main_process_port "
        "mixed_precision dynamo_backend dynamo_mode gpu_ids rdzv_backend rdzv_conf max_restarts "
        "monitor_interval num_cpu_threads_per_process deepspeed_config_file zero_stage "
        "offload_optimizer_device offload_param_device gradient_accumulation_steps gradient_clipping "
        "zero3_init_flag zero3_save_16bit_model deepspeed_hostfile deepspeed_exclusion_filter "
        "deepspeed_inclusion_filter deepspeed_multinode_launcher main_training_function "
        "fsdp_sharding_strategy fsdp_auto_wrap_policy fsdp_transformer_layer_cls_to_wrap "
        "fsdp_state_dict_type fsdp_offload_params fsdp_backward_prefetch fsdp_min_num_params "
        "fsdp_use_orig_params fsdp_cpu_ram_efficient_loading fsdp_sync_module_states fsdp_version "
        "tpu_vm tpu_name tpu_zone env_file log_dir"
    ),
    flags=names(
        "cpu multi_gpu tpu ipex use_deepspeed use_fsdp use_megatron_lm use_xpu same_network module m "
        "no_python debug quiet q enable_cpu_affinity tpu_use_cluster downcast_bf16"
    ),
    aliases={"m": "module", "q": "quiet"},
    underscores=True,
)
_MPI = Spec(
    values=names(
        "np n c N npernode ppn perhost map-by bind-to rank-by x hostfile machinefile f H host hosts "
        "wdir wd prefix envlist genvlist launcher bootstrap iface configfile app output-filename "
        "timeout cpus-per-proc cpus-per-rank cpu-set am tune rankfile display"
    ),
    pairs=names("mca gmca genv env"),
    flags=names(
        "oversubscribe report-bindings tag-output timestamp-output allow-run-as-root display-map "
        "display-allocation use-hwthread-cpus pernode bynode byslot l v q rr genvall genvnone "
        "verbose quiet noprefix nooversubscribe"
    ),
    aliases={
        "n": "np",
        "c": "np",
        "N": "npernode",
        "perhost": "ppn",
        "machinefile": "hostfile",
        "f": "hostfile",
        "H": "host",
        "hosts": "host",
        "wd": "wdir",
    },
    unknown_value=False,
)
_HOROVOD = Spec(
    values=names("np H hostfile p ssh-port start-timeout network-interface output-filename"),
    flags=names("gloo mpi verbose v"),
    aliases={"H": "hosts", "p": "ssh-port"},
    unknown_value=False,
)

SPECS: dict[str, Spec] = {
    "torchrun": _TORCH,
    "torch.distributed.run": _TORCH,
    "torch.distributed.launch": _TORCH,
    "deepspeed": _DEEPSPEED,
    "accelerate": _ACCELERATE,
    "mpirun": _MPI,
    "mpiexec": _MPI,
    "horovodrun": _HOROVOD,
}
_COMMANDS = {
    "srun": "srun",
    "mpirun": "mpirun",
    "orterun": "mpirun",
    "prterun": "mpirun",
    "mpiexec": "mpiexec",
    "mpiexec.hydra": "mpiexec",
    "torchrun": "torchrun",
    "deepspeed": "deepspeed",
    "horovodrun": "horovodrun",
}


@dataclass(frozen=True)
class Component:
    """One program a launcher starts: its options and where its words are."""

    options: tuple[ir.KeyValue, ...]
    options_start: int  # index of the component's first option word
    start: int  # index of the program's first word
    end: int  # index after its last word


@dataclass(frozen=True)
class Parsed:
    name: str
    components: tuple[Component, ...]


def basename(word: str) -> str:
    return word.rsplit("/", 1)[-1] if "/" in word else word


def launcher_at(words: Sequence[str], i: int) -> Parsed | None:
    """If words[i] starts a launcher, parse its options and components."""
    name = basename(words[i])
    if name in _COMMANDS:
        canonical = _COMMANDS[name]
        if canonical == "srun":
            return Parsed("srun", _multi(words, i + 1, _srun_options))
        if canonical in ("mpirun", "mpiexec"):
            return Parsed(canonical, _multi(words, i + 1, lambda w, s: _spec_options(w, s, _MPI, (":",))))
        return Parsed(canonical, (_single(words, i + 1, SPECS[canonical]),))
    if name == "accelerate" and i + 1 < len(words) and words[i + 1] == "launch":
        return Parsed("accelerate", (_single(words, i + 2, _ACCELERATE),))
    if _PYTHON.match(name):
        module, after = python_module(words, i)
        if module in PYTHON_MODULES:
            launcher = PYTHON_MODULES[module]
            return Parsed(launcher, (_single(words, after, SPECS[launcher]),))
    return None


def python_module(words: Sequence[str], i: int) -> tuple[str, int]:
    """For 'python [flags] -m module ...': the module and the index after it."""
    j = i + 1
    while j < len(words) and words[j].startswith("-"):
        word = words[j]
        if word == "-m":
            return (words[j + 1], j + 2) if j + 1 < len(words) else ("", j + 1)
        if word.startswith("-m"):
            return word[2:], j + 1
        j += 2 if word in ("-W", "-X") else 1
    return "", j


def _single(words: Sequence[str], start: int, spec: Spec) -> Component:
    options, program = _spec_options(words, start, spec, ())
    return Component(tuple(options), start, program, len(words))


OptionReader = Callable[[Sequence[str], int], tuple[list[ir.KeyValue], int]]


def _multi(words: Sequence[str], start: int, read: OptionReader) -> tuple[Component, ...]:
    """srun/mpirun: 'OPTS PROG ARGS : OPTS PROG ARGS ...'."""
    out: list[Component] = []
    i = start
    while True:
        options, program = read(words, i)
        end = program
        while end < len(words) and words[end] != ":":
            end += 1
        out.append(Component(tuple(options), i, program, end))
        if end >= len(words) - 1:
            return tuple(out)
        i = end + 1


def _srun_options(words: Sequence[str], start: int) -> tuple[list[ir.KeyValue], int]:
    return slurm_cli.parse_options(words, start, slurm_cli.table("srun"), stop=frozenset({":"}))


def _spec_options(
    words: Sequence[str], start: int, spec: Spec, stop: tuple[str, ...]
) -> tuple[list[ir.KeyValue], int]:
    out: list[ir.KeyValue] = []
    i = start
    n = len(words)
    while i < n:
        word = words[i]
        if word in stop:
            break
        if word == "--":
            i += 1
            break
        if not word.startswith("-") or word == "-" or _NUMBER.match(word):
            break
        name, eq, value = word.lstrip("-").partition("=")
        if spec.underscores:
            name = name.replace("-", "_")
        key = spec.aliases.get(name, name)
        if eq:
            out.append(ir.KeyValue(key, value))
        elif name in spec.pairs and i + 2 < n:
            out.append(ir.KeyValue(key, f"{words[i + 1]} {words[i + 2]}"))
            i += 2
        elif name in spec.values and i + 1 < n:
            out.append(ir.KeyValue(key, words[i + 1]))
            i += 1
        elif name in spec.flags or name in spec.values or name in spec.pairs:
            out.append(ir.KeyValue(key, ""))
        elif spec.unknown_value and i + 1 < n and _takes_value(words[i + 1]):
            out.append(ir.KeyValue(key, words[i + 1]))
            i += 1
        else:
            out.append(ir.KeyValue(key, ""))
        i += 1
    return out, i


def _takes_value(nxt: str) -> bool:
    """For an unknown option: is the next word its value rather than the program?"""
    return not nxt.startswith("-") and not _SCRIPT.match(basename(nxt))
