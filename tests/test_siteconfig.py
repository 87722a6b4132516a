"""migrate.yaml: defaults, a full file, and one clear error per kind of mistake."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from migrate.site.config import (
    FileSystemConfig,
    SiteConfig,
    SiteConfigError,
    Thresholds,
    find_site_configs,
    load_site_config,
    parse_site_config,
    parse_site_config_text,
)

FULL = """\
site: example-ai
filesystems:
  - {prefix: /fsx, kind: lustre, pvc: fsx-claim}
  - prefix: /home/
    kind: nfs
    pvc: [home-rwx, home-ro]
    name: home
partitions:
  gpu-h100:
    nodes: 16
    gpus_per_node: 8
    gpu_type: h100
    cpus_per_node: 192
    mem_gb: 2048
    queue: h100-queue
    node_selector: {node.kubernetes.io/instance-type: p5.48xlarge, efa: true}
  cpu:
    nodes: 32
images:
  gcc/12: registry.example.com/hpc/gcc:12
  "conda:neox": registry.example.com/llm/neox:2.0
defaults: {image: registry.example.com/base:1, namespace: research}
thresholds:
  large_training_nodes: 8
  pilot_consecutive_successes: 5
"""


def test_defaults_without_a_file() -> None:
    config = load_site_config(None)
    assert config == SiteConfig()
    assert config.thresholds.large_training_nodes == 4
    assert config.thresholds.pilot_consecutive_successes == 3
    assert config.thresholds.runtime_tolerance_pct == 10
    assert config.defaults.namespace == "default"
    assert config.filesystems == () and config.partitions == ()


def test_empty_file_is_the_defaults(tmp_path: Path) -> None:
    path = tmp_path / "migrate.yaml"
    path.write_text("# nothing yet\n")
    config = load_site_config(path)
    assert dataclasses.replace(config, source=None) == SiteConfig()
    assert config.source == str(path)


def test_full_file(tmp_path: Path) -> None:
    path = tmp_path / "migrate.yaml"
    path.write_text(FULL)
    config = load_site_config(path)
    assert config.site == "example-ai"
    assert config.filesystems == (
        FileSystemConfig(prefix="/fsx", kind="lustre", pvc=("fsx-claim",)),
        FileSystemConfig(prefix="/home", kind="nfs", pvc=("home-rwx", "home-ro"), name="home"),
    )
    assert config.filesystem_for_claim("home-ro") is config.filesystems[1]
    assert config.filesystem_for_claim("nope") is None
    assert [name for name, _ in config.partitions] == ["cpu", "gpu-h100"]  # sorted
    h100 = config.partition("gpu-h100")
    assert h100 is not None
    assert (h100.nodes, h100.gpus_per_node, h100.gpu_type, h100.mem_gb) == (16, 8, "h100", 2048)
    # YAML booleans in a node selector become the strings Kubernetes wants
    assert h100.node_selector == (("efa", "true"), ("node.kubernetes.io/instance-type", "p5.48xlarge"))
    assert config.partition_for_queue("h100-queue") == "gpu-h100"
    assert config.partition("cpu") is not None and config.partition("cpu").gpus_per_node == 0  # type: ignore[union-attr]
    assert config.image_for("gcc/12") == "registry.example.com/hpc/gcc:12"
    assert config.image_for("conda:neox") == "registry.example.com/llm/neox:2.0"
    assert config.defaults.image == "registry.example.com/base:1"
    assert config.defaults.namespace == "research"
    assert config.thresholds == Thresholds(large_training_nodes=8, pilot_consecutive_successes=5)


def test_config_is_frozen_and_hashable() -> None:
    config = parse_site_config_text(FULL)
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.site = "x"  # type: ignore[misc]
    assert hash(config) == hash(parse_site_config_text(FULL))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("sites: x\n", "migrate.yaml: sites: unknown key (expected one of: site, filesystems,"),
        ("- a\n- b\n", "migrate.yaml: (top level): expected a mapping, got ['a', 'b'] (list)"),
        ("site: [a]\n", "migrate.yaml: site: expected a non-empty string"),
        ("filesystems: /fsx\n", "migrate.yaml: filesystems: expected a list of {prefix, kind, pvc} entries"),
        ("filesystems:\n  - {kind: lustre}\n", "migrate.yaml: filesystems[0].prefix: missing"),
        (
            "filesystems:\n  - {prefix: fsx}\n",
            "migrate.yaml: filesystems[0].prefix: expected an absolute path",
        ),
        ("filesystems:\n  - {prefix: /fsx, pvcs: a}\n", "migrate.yaml: filesystems[0].pvcs: unknown key"),
        (
            "filesystems:\n  - {prefix: /fsx, pvc: {a: b}}\n",
            "filesystems[0].pvc: expected a string or a list",
        ),
        (
            "partitions:\n  gpu: {nodes: sixteen}\n",
            "migrate.yaml: partitions.gpu.nodes: expected a non-negative",
        ),
        (
            "partitions:\n  gpu: {nodes: -1}\n",
            "partitions.gpu.nodes: expected a non-negative integer, got -1",
        ),
        (
            "partitions:\n  gpu: {nodes: true}\n",
            "partitions.gpu.nodes: expected a non-negative integer, got True",
        ),
        (
            "partitions:\n  gpu: {gpus: 8}\n",
            "migrate.yaml: partitions.gpu.gpus: unknown key (expected one of: nodes,",
        ),
        ("partitions:\n  gpu: {node_selector: [a]}\n", "partitions.gpu.node_selector: expected a mapping"),
        ("partitions: [gpu]\n", "migrate.yaml: partitions: expected a mapping"),
        ("partitions:\n  cpu: {default: yes please}\n", "partitions.cpu.default: expected true or false"),
        (
            "partitions:\n  a: {default: true}\n  b: {default: true}\n",
            "migrate.yaml: partitions: a and b both say default: true",
        ),
        ("images:\n  gcc/12: 12\n", "migrate.yaml: images.gcc/12: expected a non-empty string, got 12 (int)"),
        ("defaults: {namespace: ''}\n", "migrate.yaml: defaults.namespace: expected a non-empty string"),
        ("defaults: {cluster: x}\n", "migrate.yaml: defaults.cluster: unknown key (expected one of: image,"),
        (
            "thresholds: {large_training_nodes: 4.5}\n",
            "thresholds.large_training_nodes: expected a non-negative",
        ),
        ("thresholds: {large_training_nodes: 0}\n", "thresholds.large_training_nodes: expected at least 1"),
        ("thresholds: {big_nodes: 4}\n", "migrate.yaml: thresholds.big_nodes: unknown key (expected one of:"),
        ("site: [unclosed\n", "migrate.yaml: YAML error at line 2"),
        ("partitions:\n  gpu: {max_time: soon}\n", "partitions.gpu.max_time: invalid time 'soon'"),
        ("partitions:\n  gpu: {devices: [efa]}\n", "partitions.gpu.devices: expected a mapping"),
        (
            "partitions:\n  gpu: {devices: {efa: many}}\n",
            "partitions.gpu.devices.efa: expected a non-negative",
        ),
        (
            "partitions:\n  gpu: {tolerations: [{key: a, colour: b}]}\n",
            "partitions.gpu.tolerations[0].colour",
        ),
        (
            "partitions:\n  gpu: {memory_scheduled: 1}\n",
            "partitions.gpu.memory_scheduled: expected true or false",
        ),
        ("kubernetes: {cpu_limits: sometimes}\n", "kubernetes.cpu_limits: expected one of except-whole-node"),
        ("kubernetes: {reserved_memory_pct: 100}\n", "kubernetes.reserved_memory_pct: expected a percentage"),
        ("kubernetes: {reserve: 1}\n", "kubernetes.reserve: unknown key (expected one of: cpu_limits"),
    ],
)
def test_errors_name_the_key_and_what_is_expected(text: str, message: str) -> None:
    with pytest.raises(SiteConfigError) as caught:
        parse_site_config_text(text)
    assert str(caught.value).startswith(message) or message in str(caught.value)
    assert "\n" not in str(caught.value)


def test_partition_defaults_devices_and_kubernetes_settings() -> None:
    config = parse_site_config_text(
        """\
partitions:
  gpu:
    gpus_per_node: 8
    def_mem_per_cpu_mb: 4096
    def_cpu_per_gpu: 12
    default_time: "04:00:00"
    max_time: 2-00:00:00
    memory_scheduled: true
    devices: {vpc.amazonaws.com/efa: 32}
    tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
  cpu: {max_time: 90, default_time: UNLIMITED}
kubernetes: {cpu_limits: always, reserved_cpus: 4, reserved_memory_pct: 3}
"""
    )
    gpu, cpu = config.partition("gpu"), config.partition("cpu")
    assert gpu is not None and cpu is not None
    assert (gpu.def_mem_per_cpu_mb, gpu.def_cpu_per_gpu, gpu.memory_scheduled) == (4096, 12, True)
    assert (gpu.default_time_s, gpu.max_time_s) == (4 * 3600, 2 * 86400)
    assert gpu.devices == (("vpc.amazonaws.com/efa", 32),)
    assert gpu.tolerations == ((("key", "nvidia.com/gpu"), ("operator", "Exists"), ("effect", "NoSchedule")),)
    assert "default_time_s" in gpu.explicit and "max_time_s" in gpu.explicit  # field names, for merging
    assert (cpu.max_time_s, cpu.default_time_s) == (90 * 60, None)  # a bare number is minutes
    assert (config.kubernetes.cpu_limits, config.kubernetes.reserved_cpus) == ("always", 4)
    assert parse_site_config_text("site: x\n").kubernetes.cpu_limits == "except-whole-node"


def test_unreadable_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(SiteConfigError, match="cannot read"):
        load_site_config(tmp_path / "missing.yaml")
    bad = tmp_path / "latin1.yaml"
    bad.write_bytes(b"site: caf\xe9\n")
    with pytest.raises(SiteConfigError, match="not valid UTF-8"):
        load_site_config(bad)


def test_error_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "site.yaml"
    path.write_text("thresholds: {large_training_nodes: many}\n")
    with pytest.raises(SiteConfigError, match=r"site\.yaml: thresholds\.large_training_nodes"):
        load_site_config(path)


def test_find_site_configs(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()  # the search stops at a repository's root
    (tmp_path / "jobs").mkdir()
    job = tmp_path / "jobs" / "train.sbatch"
    job.write_text("#!/bin/bash\n")
    assert find_site_configs([str(tmp_path)]) == []
    (tmp_path / "migrate.yaml").write_text("site: x\n")
    top = str(tmp_path / "migrate.yaml")
    assert find_site_configs([str(tmp_path / "jobs"), str(tmp_path)]) == [top]  # found from below, once
    (tmp_path / "jobs" / "migrate.yaml").write_text("site: y\n")
    assert find_site_configs([str(job)]) == [str(tmp_path / "jobs" / "migrate.yaml")]
    assert find_site_configs([str(job), str(tmp_path)]) == [str(tmp_path / "jobs" / "migrate.yaml"), top]


def test_parse_accepts_already_loaded_yaml() -> None:
    config = parse_site_config({"filesystems": [{"prefix": "$SCRATCH", "kind": "gpfs"}]}, source="inline")
    assert config.filesystems[0].prefix == "$SCRATCH"
    assert config.source == "inline"


def test_site_mappings_for_translation() -> None:
    from migrate.site.config import SiteConfigError, parse_site_config_text

    config = parse_site_config_text(
        "accounts: {llm: llm-team}\nqos: {high: batch-high}\ngpu_products: {h100: NVIDIA-H100-80GB-HBM3}\n"
        "gres: {efa: vpc.amazonaws.com/efa}\nlicenses: {matlab: licenses.example.com/matlab}\n"
        "features: {ib: {network: infiniband}}\n"
    )
    assert config.accounts == (("llm", "llm-team"),)
    assert config.qos == (("high", "batch-high"),)
    assert config.gpu_products == (("h100", "NVIDIA-H100-80GB-HBM3"),)
    assert config.gres == (("efa", "vpc.amazonaws.com/efa"),)
    assert config.licenses == (("matlab", "licenses.example.com/matlab"),)
    assert config.features == (("ib", (("network", "infiniband"),)),)
    try:
        parse_site_config_text("features: {ib: infiniband}\n")
    except SiteConfigError as exc:
        assert "features.ib" in str(exc)
    else:
        raise AssertionError("a feature must map to a node selector")


def test_spank_options_name_the_plugin_and_how_each_takes_its_value() -> None:
    config = parse_site_config(
        {
            "spank_options": [
                {"name": "--ssd-size", "plugin": "nvme-scratch", "takes_value": True},
                {"name": "ssd-keep", "plugin": "nvme-scratch", "takes_value": False},
                {"name": "--trace", "plugin": "tracer", "takes_value": "optional"},
                {"name": "--tier", "plugin": "burst"},
            ]
        }
    )
    assert [(o.name, o.plugin, o.takes_value) for o in config.spank_options] == [
        ("ssd-size", "nvme-scratch", "required"),
        ("ssd-keep", "nvme-scratch", "none"),
        ("trace", "tracer", "optional"),
        ("tier", "burst", "required"),
    ]


@pytest.mark.parametrize(
    ("entries", "message"),
    [
        ("--ssd-size", "spank_options: expected a list"),
        ([{"name": "-s", "plugin": "x"}], "spank_options[0].name: expected a long option"),
        ([{"name": "--s"}], "spank_options[0].plugin: missing"),
        ([{"name": "--s", "plugin": "x", "takes_value": 1}], "takes_value: expected true, false or optional"),
        ([{"name": "--s", "plugin": "x", "short": "s"}], "spank_options[0].short: unknown key"),
    ],
)
def test_bad_spank_options_name_the_entry(entries: object, message: str) -> None:
    with pytest.raises(SiteConfigError, match=re.escape(message)):
        parse_site_config({"spank_options": entries})
