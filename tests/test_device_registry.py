"""A device added in one declaration is read, counted and written like the built-in ones; unregistered,
it is an unknown extended resource again. The built-in devices are declared the same way."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from migrate import devices, ir
from migrate.devices import DeviceKind, DeviceType
from migrate.diagnostics import Collector
from migrate.site.config import parse_site_config
from migrate.site.job_size import job_size
from migrate.translate import translate_jobs
from migrate.translators.kubernetes import reader
from migrate.vocab import Format

# The whole toy device: an accelerator its device plugin calls example.com/npu, a GRES npu on Slurm.
NPU = DeviceType(
    "example.com/npu", DeviceKind.ACCELERATOR, "example", "NPU", "npu", dra_driver="npu.example.com"
)

# Two pods of 4 NPUs each, on nodes of 8; the default partition has none.
SITE = {
    "site": "toy",
    "partitions": {
        "cpu": {"cpus_per_node": 64, "mem_gb": 512, "default": True},
        "npu": {"cpus_per_node": 64, "mem_gb": 512, "devices": {"example.com/npu": 8}},
    },
}
LIMITS = "{example.com/npu: 4, cpu: 16, memory: 64Gi}"
CLAIM = """
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: four-npus}
spec:
  spec:
    devices:
      requests:
        - name: npus
          exactly: {deviceClassName: npu.example.com, count: 4}
---
"""


def pytorchjob(limits: str = LIMITS, claims: bool = False) -> str:
    claimed = "resourceClaims: [{name: npus, resourceClaimTemplateName: four-npus}]" if claims else ""
    return f"""{CLAIM if claims else ""}
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {{name: npu-train}}
spec:
  pytorchReplicaSpecs:
    Worker:
      template:
        spec:
          {claimed}
          containers:
            - {{name: pytorch, image: train:1, command: [python, train.py], resources: {{limits: {limits}}}}}
      replicas: 2
"""


@pytest.fixture
def npu() -> Iterator[DeviceType]:
    with devices.registered(NPU):
        yield NPU


def job_of(text: str) -> ir.Job:
    (job,) = reader.read(text, "job.yaml", Collector("job.yaml"))
    return job


def _script(job: ir.Job, gres: dict[str, str]) -> tuple[str, list[str]]:
    config = parse_site_config({**SITE, "gres": gres})
    (t,) = translate_jobs([job], to=Format.SLURM, config=config).translations
    (script,) = [text for name, text in t.files.items() if name.endswith(".sbatch")]
    return script, [d.message for d in t.diagnostics]


def test_the_npu_is_read_from_the_pods_limits_and_from_a_claim_of_its_driver(npu: DeviceType) -> None:
    for text in (pytorchjob(), pytorchjob("{cpu: 16, memory: 64Gi}", claims=True)):
        (comp,) = job_of(text).components
        assert comp.resources.generic == (ir.GenericResource("example.com/npu", 4),)
        assert not comp.resources.gpus_per_node
    assert devices.device_type("example.com/npu") is NPU
    assert devices.dra_resource("npu.example.com") == "example.com/npu"


def test_the_plan_counts_the_npus_as_accelerators(npu: DeviceType) -> None:
    size = job_size(job_of(pytorchjob()), parse_site_config(SITE))
    assert size.accelerators == (("npu", 8),)  # two pods of 4 on one node of 8
    assert size.gpus == 0 and size.nodes == 1


def test_the_slurm_writer_asks_for_the_npus_as_their_gres(npu: DeviceType) -> None:
    script, _ = _script(job_of(pytorchjob()), {"npu": "example.com/npu"})
    # the partition whose nodes have NPUs; the two pods share a node of 8, as the device plugin packs them
    assert "#SBATCH --partition=npu\n" in script
    assert "#SBATCH --nodes=1\n" in script and "#SBATCH --gres=npu:8\n" in script
    # a site that does not name the GRES is told the name the declaration gives
    script, messages = _script(job_of(pytorchjob()), {})
    assert "--gres" not in script
    assert any("add gres: {npu: example.com/npu}" in m for m in messages), messages


def test_unregistered_the_npu_is_an_unknown_resource_again() -> None:
    assert devices.device_type("example.com/npu") is None
    assert devices.dra_resource("npu.example.com") is None and devices.gres_for("example.com/npu") is None
    (comp,) = job_of(pytorchjob("{cpu: 16, memory: 64Gi}", claims=True)).components
    assert comp.resources.generic == ()  # a claim of an unknown driver is left to the raw items
    size = job_size(job_of(pytorchjob()), parse_site_config(SITE))
    assert size.accelerators == ()
    script, messages = _script(job_of(pytorchjob()), {"npu": "example.com/npu"})
    assert "#SBATCH --partition=npu\n" not in script  # nothing says the NPUs are an accelerator
    assert not any("add gres: {npu:" in m for m in messages)
    with devices.registered(NPU):
        assert devices.devices()[-1] is NPU
    assert devices.devices() == devices.DEVICES


@pytest.mark.parametrize(
    ("device", "problem"),
    [
        (DeviceType("nvidia.com/gpu", DeviceKind.GPU, "nvidia"), "already registered"),
        (DeviceType("npu", DeviceKind.ACCELERATOR, "example"), "has a domain"),
        (DeviceType("example.com/gpu", DeviceKind.GPU, "x", dra_driver="gpu.nvidia.com"), "DRA driver"),
    ],
)
def test_a_device_that_would_clash_is_refused(device: DeviceType, problem: str) -> None:
    with pytest.raises(ValueError, match=problem), devices.registered(device):
        pass
    assert devices.devices() == devices.DEVICES
