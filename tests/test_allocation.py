"""The allocation model: one test per row of Slurm's precedence, each failing when that source is ignored."""

from __future__ import annotations

import pytest

from migrate import ir
from migrate.diagnostics import Collector
from migrate.site.allocation import allocate, missing_fabric_devices
from migrate.site.allocation_model import Source
from migrate.site.config import SiteConfig, parse_site_config_text
from migrate.site.inventory import merge_inventory, parse_inventory
from migrate.translators.slurm import directives, reader

SITE = parse_site_config_text(
    """\
partitions:
  gpu:   {nodes: 16, gpus_per_node: 8, gpu_type: h100, cpus_per_node: 192, mem_gb: 2048, default: true,
          def_mem_per_cpu_mb: 4096, max_time: 2-00:00:00, devices: {vpc.amazonaws.com/efa: 32}}
  small: {nodes: 4, gpus_per_node: 4, gpu_type: a10g, cpus_per_node: 48, mem_gb: 192,
          default_time: "04:00:00", max_time: 08:00:00, memory_scheduled: true}
  bare:  {nodes: 2, gpus_per_node: 8, cpus_per_node: 96, mem_gb: 1024}
""",
    "migrate.yaml",
)


def job_of(body: str, config: SiteConfig = SITE, path: str = "train.sbatch") -> tuple[ir.Job, object]:
    text = "#!/bin/bash\n" + body
    (job,) = reader.read(text, path, Collector(path))
    header = directives.read_header(directives.split_lines(text), Collector(path))
    lines = {(s.option.long, s.component): s.line for s in header.settings}
    return job, allocate(job, config, lines)


def main_of(body: str, config: SiteConfig = SITE):  # type: ignore[no-untyped-def]
    _, alloc = job_of(body, config)
    return alloc.components[0]  # type: ignore[attr-defined]


# ---------------------------------------------------------------------------
# 1. the job's own options


def test_options_outrank_the_partition_and_the_site_defaults() -> None:
    comp = main_of("#SBATCH -p gpu --gres=gpu:2 -c 8 --mem=100G\nsrun x\n")
    assert (comp.gpus_per_node.value, comp.gpus_per_node.source) == (2, Source.OPTION)
    assert comp.gpus_per_node.detail == "--gres=gpu:2 (line 2)"
    assert (comp.cpus_per_node.value, comp.cpus_per_node.source) == (8, Source.OPTION)
    assert (comp.mem_per_node_mb.value, comp.mem_per_node_mb.source) == (100 * 1024, Source.OPTION)


def test_a_time_option_outranks_default_time() -> None:
    _, alloc = job_of("#SBATCH -p small -t 30\nsrun x\n")
    assert (alloc.time_limit_s.value, alloc.time_limit_s.source) == (1800, Source.OPTION)


def test_a_named_partition_outranks_the_default() -> None:
    _, alloc = job_of("#SBATCH --partition=small\nsrun x\n")
    assert (alloc.partition.value, alloc.partition.source) == ("small", Source.OPTION)


# ---------------------------------------------------------------------------
# 2. the partition: the named one, else the default


def test_a_job_without_partition_runs_in_the_default_one() -> None:
    _, alloc = job_of("#SBATCH -N 4 --exclusive\nsrun x\n")
    assert (alloc.partition.value, alloc.partition.source) == ("gpu", Source.SITE_DEFAULT)
    assert alloc.partition.detail == "no --partition: default: true for partition gpu in migrate.yaml"
    assert alloc.components[0].gpus_per_node.value == 8  # the default partition's nodes have 8 GPUs
    assert alloc.total_gpus() == 32


def test_the_first_parallelcluster_queue_is_the_default_partition() -> None:
    pcluster = """\
Scheduling:
  Scheduler: slurm
  SlurmQueues:
    - Name: train
      ComputeResources: [{Name: p5, InstanceType: p5.48xlarge, MaxCount: 8, Efa: {Enabled: true}}]
    - Name: cpu
      ComputeResources: [{Name: c6i, InstanceType: c6i.32xlarge, MaxCount: 8}]
"""
    config, _ = merge_inventory(SiteConfig(), [parse_inventory(pcluster, "cluster.yaml")])
    _, alloc = job_of("#SBATCH -N 2 --exclusive\nsrun x\n", config)
    assert alloc.partition.value == "train"
    assert "the first queue of cluster.yaml" in alloc.partition.detail
    comp = alloc.components[0]
    assert (comp.gpus_per_node.value, comp.cpus_per_node.value) == (8, 192)
    assert [(d.value.name, d.value.quantity) for d in comp.devices] == [("vpc.amazonaws.com/efa", 32)]


# ---------------------------------------------------------------------------
# 3. the node type of that partition (migrate.yaml, else an inventory file)


def test_the_node_type_comes_from_the_inventory_where_migrate_yaml_says_nothing() -> None:
    conf = "NodeName=n[1-4] CPUs=64 RealMemory=512000 Gres=gpu:a100:4\nPartitionName=batch Nodes=n[1-4]\n"
    config, _ = merge_inventory(
        parse_site_config_text("partitions:\n  batch: {queue: q}\n"), [parse_inventory(conf, "slurm.conf")]
    )
    comp = main_of("#SBATCH -p batch --exclusive\nsrun x\n", config)
    assert (comp.cpus_per_node.value, comp.gpus_per_node.value) == (64, 4)
    assert comp.node is not None and comp.node.cpus.source == Source.INVENTORY
    assert comp.node.cpus.detail == "NodeName=n[1-4] in slurm.conf line 1"


def test_migrate_yaml_node_values_win_over_the_inventory() -> None:
    conf = "NodeName=n[1-2] CPUs=64 Gres=gpu:8\nPartitionName=bare Nodes=n[1-2]\n"
    config, _ = merge_inventory(SITE, [parse_inventory(conf, "slurm.conf")])
    comp = main_of("#SBATCH -p bare --exclusive\nsrun x\n", config)
    assert comp.cpus_per_node.value == 96
    assert comp.node is not None and comp.node.cpus.source == Source.PARTITION


def test_tasks_that_do_not_fit_one_node_spread_over_the_nodes_slurm_would_use() -> None:
    comp = main_of("#SBATCH -p gpu -n 384\nsrun x\n")
    assert (comp.nodes.value, comp.tasks_per_node.value, comp.cpus_per_node.value) == (2, 192, 192)
    assert comp.nodes.detail.startswith("384 tasks x 1 CPU on 192-CPU nodes of partition gpu: 2 nodes")


def test_gpus_that_do_not_fit_one_node_spread_too() -> None:
    comp = main_of("#SBATCH -p gpu --gpus=16\nsrun x\n")
    assert (comp.nodes.value, comp.gpus_per_node.value) == (2, 8)


# ---------------------------------------------------------------------------
# 4. the site's defaults


def test_def_mem_per_cpu_times_the_allocated_cpus() -> None:
    comp = main_of("#SBATCH -p gpu -c 4\nsrun x\n")
    assert (comp.mem_per_node_mb.value, comp.mem_per_node_mb.source) == (4 * 4096, Source.SITE_DEFAULT)
    assert comp.mem_per_node_mb.detail == "no memory option: DefMemPerCPU=4096 x 4 CPUs of partition gpu"


def test_def_mem_per_gpu_and_def_cpu_per_gpu_from_slurm_conf() -> None:
    conf = (
        "NodeName=g[1-2] CPUs=96 RealMemory=1000000 Gres=gpu:8\n"
        "PartitionName=g Nodes=g[1-2] DefMemPerGPU=100000 DefCpuPerGPU=12\n"
    )
    config, _ = merge_inventory(SiteConfig(), [parse_inventory(conf, "slurm.conf")])
    comp = main_of("#SBATCH -p g --gpus-per-node=2\nsrun x\n", config)
    assert (comp.cpus_per_node.value, comp.cpus_per_node.source) == (24, Source.SITE_DEFAULT)
    assert (comp.mem_per_node_mb.value, comp.mem_per_node_mb.source) == (200000, Source.SITE_DEFAULT)
    assert "slurm.conf line 2" in comp.mem_per_node_mb.detail


def test_a_job_without_time_gets_default_time_else_max_time() -> None:
    _, small = job_of("#SBATCH -p small\nsrun x\n")
    assert (small.time_limit_s.value, small.time_limit_s.source) == (4 * 3600, Source.SITE_DEFAULT)
    assert small.time_limit_s.detail.startswith("no --time: DefaultTime=04:00:00 of partition small")
    _, gpu = job_of("#SBATCH -p gpu\nsrun x\n")
    assert (gpu.time_limit_s.value, gpu.time_limit_s.source) == (2 * 86400, Source.SITE_DEFAULT)
    assert "MaxTime=2-00:00:00" in gpu.time_limit_s.detail


def test_no_time_limit_anywhere_is_an_assumption_that_says_so() -> None:
    _, alloc = job_of("#SBATCH -p bare\nsrun x\n")
    assert (alloc.time_limit_s.value, alloc.time_limit_s.source) == (3600, Source.ASSUMED)
    assert "1 h assumed (thresholds.default_job_hours)" in alloc.time_limit_s.detail
    assert alloc.assumed == ("time_limit", "mem_per_node_mb")  # memory: no option, no default known


def test_counted_memory_without_a_default_is_the_whole_node() -> None:
    comp = main_of("#SBATCH -p small\nsrun x\n")
    assert (comp.mem_per_node_mb.value, comp.whole_node_memory) == (192 * 1024, True)
    assert comp.mem_per_node_mb.source == Source.SITE_DEFAULT


# ---------------------------------------------------------------------------
# 5. --exclusive: all CPUs and GRES of the nodes, memory as asked


def test_exclusive_gets_all_the_gpus_of_the_node_even_with_fewer_asked() -> None:
    comp = main_of("#SBATCH -p gpu --exclusive --gres=gpu:2\nsrun x\n")
    assert (comp.gpus_per_node.value, comp.gpus_per_node.source) == (8, Source.EXCLUSIVE)
    assert comp.gpus_per_node.detail.startswith("--exclusive with --gres=gpu:2: all 8 GPUs of a node")
    assert (comp.cpus_per_node.value, comp.cpus_per_node.source) == (192, Source.EXCLUSIVE)


def test_exclusive_memory_is_the_site_default_times_all_cpus() -> None:
    comp = main_of("#SBATCH -p gpu --exclusive\nsrun x\n")
    assert comp.mem_per_node_mb.value == 192 * 4096  # DefMemPerCPU x all the node's CPUs, not the node
    assert comp.whole_node_memory is False


def test_exclusive_memory_stays_what_was_asked() -> None:
    comp = main_of("#SBATCH -p gpu --exclusive --mem=64G\nsrun x\n")
    assert comp.mem_per_node_mb.value == 64 * 1024


def test_exclusive_without_any_memory_default_is_the_whole_node() -> None:
    comp = main_of("#SBATCH -p bare --exclusive\nsrun x\n")
    assert (comp.mem_per_node_mb.value, comp.mem_per_node_mb.source) == (1024 * 1024, Source.EXCLUSIVE)
    assert comp.whole_node_memory is True


def test_mem_zero_is_the_whole_node() -> None:
    comp = main_of("#SBATCH -p gpu --mem=0\nsrun x\n")
    assert (comp.mem_per_node_mb.value, comp.whole_node_memory) == (2048 * 1024, True)
    assert (
        comp.mem_per_node_mb.detail
        == "--mem=0 (line 2): all of a node's memory (partition gpu in migrate.yaml)"
    )


# ---------------------------------------------------------------------------
# 6. hints in the script, marked inferred, never outranking 1-5

GPU_VARIABLE = """\
#SBATCH -p bare -N 4
GPUS_PER_NODE=8
srun torchrun --nnodes 4 --nproc_per_node $GPUS_PER_NODE train.py
"""


def test_a_gpu_count_in_a_shell_variable_is_inferred() -> None:
    comp = main_of(GPU_VARIABLE)
    assert (comp.gpus_per_node.value, comp.gpus_per_node.source) == (8, Source.INFERRED)
    assert comp.gpus_per_node.detail == (
        "inferred from GPUS_PER_NODE=8 at train.sbatch:3 feeding torchrun --nproc_per_node at train.sbatch:4"
    )


def test_a_hint_never_outranks_an_option_or_the_node_type() -> None:
    assert main_of(GPU_VARIABLE.replace("-N 4", "-N 4 --gres=gpu:2")).gpus_per_node.value == 2
    # 8 expected, but the nodes of small have 4: the node type wins
    comp = main_of(GPU_VARIABLE.replace("-p bare", "-p small"))
    assert comp.gpus_per_node.value == 4
    assert any("have 4 GPUs" in note for note in comp.notes)


@pytest.mark.parametrize(
    ("body", "gpus"),
    [
        ("#SBATCH -p bare\nsrun --gpus-per-node=4 python x.py\n", 4),
        ("#SBATCH -p bare\nexport CUDA_VISIBLE_DEVICES=0,1\npython x.py\n", 2),
        ("#SBATCH -p bare\ntorchrun --nproc_per_node=${NGPU:-4} x.py\n", 4),
        ('#SBATCH -p bare\nN=2\nARGS=(--nproc_per_node=$N)\nsrun torchrun "${ARGS[@]}" x.py\n', 2),
    ],
)
def test_other_gpu_hints(body: str, gpus: int) -> None:
    comp = main_of(body)
    assert (comp.gpus_per_node.value, comp.gpus_per_node.source) == (gpus, Source.INFERRED)


def test_gpu_use_without_a_count_is_said_not_guessed() -> None:
    comp = main_of("#SBATCH -p bare\nnvidia-smi\npython x.py\n")
    assert comp.gpus_per_node.value == 0
    assert any("uses GPUs" in note for note in comp.notes)


# ---------------------------------------------------------------------------
# Devices and fabric


def test_whole_node_jobs_get_every_device_and_others_a_share_when_they_use_the_fabric() -> None:
    whole = main_of("#SBATCH -p gpu --exclusive\nexport FI_PROVIDER=efa\nsrun x\n")
    assert [(d.value.quantity, d.source) for d in whole.devices] == [(32, Source.EXCLUSIVE)]
    part = main_of("#SBATCH -p gpu --gpus-per-node=2\nexport FI_PROVIDER=efa\nsrun x\n")
    assert [(d.value.quantity, d.source) for d in part.devices] == [(8, Source.INFERRED)]
    assert main_of("#SBATCH -p gpu --gpus-per-node=2\nsrun x\n").devices == ()


def test_fabric_variables_on_a_partition_without_devices_are_missing_devices() -> None:
    comp = main_of(
        "#SBATCH -p bare --exclusive\nexport NCCL_IB_HCA=mlx5\nexport FI_EFA_USE_DEVICE_RDMA=1\nsrun x\n"
    )
    assert [f.variable for f in missing_fabric_devices(comp)] == [
        "NCCL_IB_HCA=mlx5",
        "FI_EFA_USE_DEVICE_RDMA=1",
    ]
    assert missing_fabric_devices(main_of("#SBATCH -p gpu\nexport FI_PROVIDER=efa\nsrun x\n")) == ()


def test_tasks_beyond_a_node_fill_the_first_node_before_the_next_as_slurm_lays_them_out() -> None:
    comp = main_of("#SBATCH -p gpu -n 256\nsrun x\n")
    assert (comp.nodes.value, comp.task_layout, comp.tasks_per_node.value) == (2, (192, 64), 192)
    assert comp.cpus_per_node.value == 192  # the fullest node's: the pods share one spec
    assert "192,64" in comp.tasks_per_node.detail and "192-CPU nodes" in comp.tasks_per_node.detail
    assert comp.to_dict()["task_layout"] == [192, 64]


def test_tasks_per_node_or_whole_nodes_keep_the_layout_even_or_dealt() -> None:
    assert main_of("#SBATCH -p gpu -N 2 -n 6 --ntasks-per-node=4\nsrun x\n").task_layout == ()
    assert main_of("#SBATCH -p gpu -N 3 -n 7 --exclusive\nsrun x\n").task_layout == (3, 2, 2)
    assert main_of("#SBATCH -p gpu -N 2 -n 16\nsrun x\n").task_layout == (15, 1)
