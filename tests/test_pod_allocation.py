"""What Kubernetes gives a pod: devices typed by vendor, pods packed per node, what operators add."""

from __future__ import annotations

from pathlib import Path

import pytest

from migrate.devices import DeviceKind, device_type, gres_for
from migrate.diagnostics import Collector
from migrate.site.allocation import allocate
from migrate.site.config import parse_site_config
from migrate.translators.kubernetes import reader

SITE = parse_site_config(
    {
        "site": "eks",
        "partitions": {
            "p5": {
                "gpus_per_node": 8,
                "cpus_per_node": 192,
                "mem_gb": 2048,
                "node_selector": {"node.kubernetes.io/instance-type": "p5.48xlarge"},
            },
            "trn1": {
                "cpus_per_node": 128,
                "mem_gb": 512,
                "node_selector": {"node.kubernetes.io/instance-type": "trn1.32xlarge"},
                "devices": {"aws.amazon.com/neuron": 16, "vpc.amazonaws.com/efa": 8},
            },
            "cpu": {"cpus_per_node": 96, "mem_gb": 384, "default": True},
        },
        "gres": {"neuron": "aws.amazon.com/neuron"},
    }
)


def job_of(text: str):  # type: ignore[no-untyped-def]
    jobs = reader.read(text, "job.yaml", Collector("job.yaml"))
    return next(j for j in jobs if j.kind not in ("ConfigMap",))


def pytorchjob(pool: str, replicas: int, limits: str, command: str = '["python", "train.py"]') -> str:
    return f"""
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {{name: t}}
spec:
  pytorchReplicaSpecs:
    Worker:
      replicas: {replicas}
      template:
        spec:
          nodeSelector: {{node.kubernetes.io/instance-type: {pool}}}
          containers:
            - name: pytorch
              image: train:1
              command: {command}
              resources: {{limits: {limits}}}
"""


@pytest.mark.parametrize(
    ("resource", "kind", "vendor", "gres"),
    [
        ("nvidia.com/gpu", DeviceKind.GPU, "nvidia", "gpu"),
        ("nvidia.com/mig-1g.10gb", DeviceKind.GPU_SLICE, "nvidia", "gpu"),
        ("amd.com/gpu", DeviceKind.GPU, "amd", "gpu"),
        ("gpu.intel.com/xe", DeviceKind.GPU, "intel", "gpu"),
        ("habana.ai/gaudi", DeviceKind.ACCELERATOR, "intel", "gaudi"),
        ("aws.amazon.com/neuron", DeviceKind.ACCELERATOR, "aws", "neuron"),
        ("aws.amazon.com/neuroncore", DeviceKind.ACCELERATOR_CORE, "aws", None),
        ("google.com/tpu", DeviceKind.ACCELERATOR, "google", "tpu"),
        ("vpc.amazonaws.com/efa", DeviceKind.NIC, "aws", None),
        ("rdma/hca_shared_devices_a", DeviceKind.NIC, "", None),
        ("xilinx.com/fpga-xilinx_u250_gen3x16", DeviceKind.FPGA, "amd", "fpga"),
    ],
)
def test_every_device_kind_is_typed_by_its_resource_name(
    resource: str, kind: DeviceKind, vendor: str, gres: str | None
) -> None:
    found = device_type(resource)
    assert found is not None and (found.kind, found.vendor, found.gres) == (kind, vendor, gres)
    assert device_type("example.com/widget") is None and device_type("cpu") is None


def test_the_sites_gres_table_names_a_device_before_the_default() -> None:
    assert gres_for("aws.amazon.com/neuron", (("trn", "aws.amazon.com/neuron"),)) == "trn"
    assert gres_for("aws.amazon.com/neuron") == "neuron"


def test_neuron_devices_are_accelerators_on_their_partition() -> None:
    text = pytorchjob(
        "trn1.32xlarge", 12, '{aws.amazon.com/neuron: 16, vpc.amazonaws.com/efa: 8, cpu: "120"}'
    )
    alloc = allocate(job_of(text), SITE)
    (comp,) = alloc.components
    assert alloc.partition.value == "trn1"
    assert (alloc.total_nodes(), comp.gpus_per_node.value, comp.accelerator) == (
        12,
        16,
        "aws.amazon.com/neuron",
    )
    assert alloc.total_gpus() == 192 and comp.whole_node


def test_one_gpu_pods_pack_eight_to_a_node() -> None:
    text = pytorchjob("p5.48xlarge", 8, '{nvidia.com/gpu: 1, cpu: "16", memory: 64Gi}')
    alloc = allocate(job_of(text), SITE)
    (comp,) = alloc.components
    assert (alloc.total_nodes(), comp.pods, comp.pods_per_node.value if comp.pods_per_node else 0) == (
        1,
        8,
        8,
    )
    assert comp.gpus_per_node.value == 8 and not comp.whole_node
    assert "bounded by its 8 GPUs" in comp.nodes.detail


def test_pods_pack_by_the_tightest_resource() -> None:
    # 50 CPUs of 190 allocatable: 3 per node, though 8 GPUs would fit 8
    text = pytorchjob("p5.48xlarge", 6, '{nvidia.com/gpu: 1, cpu: "50"}')
    alloc = allocate(job_of(text), SITE)
    assert alloc.total_nodes() == 2
    assert "190 allocatable CPUs" in alloc.components[0].nodes.detail


MPIJOB = """
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata: {name: nccl}
spec:
  slotsPerWorker: 8
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template:
        spec:
          containers:
            - name: launcher
              image: nccl:1
              command: [mpirun, -np, "16", ./all_reduce_perf]
              volumeMounts: [{name: mpi-job-config, mountPath: /etc/mpi}]
    Worker:
      replicas: 2
      template:
        spec:
          nodeSelector: {node.kubernetes.io/instance-type: p5.48xlarge}
          containers:
            - name: worker
              image: nccl:1
              resources: {limits: {nvidia.com/gpu: 8}}
"""


def test_the_mpi_launcher_is_not_a_compute_node() -> None:
    alloc = allocate(job_of(MPIJOB), SITE)
    launcher, worker = alloc.components
    assert (launcher.nodes.value, worker.nodes.value, alloc.total_nodes()) == (0, 2, 2)
    assert worker.tasks_per_node.value == 8  # slotsPerWorker ranks on each worker node
    assert "Launcher" in launcher.nodes.detail


def test_a_master_and_its_workers_pack_together() -> None:
    text = pytorchjob("p5.48xlarge", 7, "{nvidia.com/gpu: 1}").replace(
        "    Worker:",
        """    Master:
      replicas: 1
      template:
        spec:
          nodeSelector: {node.kubernetes.io/instance-type: p5.48xlarge}
          containers:
            - name: pytorch
              image: train:1
              command: ["python", "train.py"]
              resources: {limits: {nvidia.com/gpu: 1}}
    Worker:""",
    )
    alloc = allocate(job_of(text), SITE)
    assert alloc.total_nodes() == 1 and alloc.total_gpus() == 8


def test_the_slurm_writer_asks_what_the_model_says(tmp_path: Path) -> None:
    from migrate.translators.slurm.writer import translate_job

    text = pytorchjob("trn1.32xlarge", 12, '{aws.amazon.com/neuron: 16, cpu: "120"}')
    script = translate_job(job_of(text), SITE, "pyxis").files["job.sbatch"]
    for line in ("--partition=trn1", "--nodes=12", "--ntasks-per-node=1", "--gres=neuron:16", "--exclusive"):
        assert f"#SBATCH {line}\n" in script


def test_mpirun_options_are_kept_as_srun_options(tmp_path: Path) -> None:
    from migrate.translators.slurm.writer import translate_job

    text = MPIJOB.replace(
        'command: [mpirun, -np, "16", ./all_reduce_perf]',
        'command: [mpirun, -np, "16", -wdir, /work/nccl, -x, POD_UID, -x, "NCCL_DEBUG=INFO", '
        "--bind-to, core, ./all_reduce_perf]",
    )
    t = translate_job(job_of(text), SITE, "none")
    script = t.files["job.sbatch"]
    step = next(line for line in script.splitlines() if line.startswith("srun "))
    assert "--chdir=/work/nccl" in step and "--cpu-bind=cores" in step and "--mpi=pmix" in step
    assert "export NCCL_DEBUG=INFO\n" in script
    kept = {e.item: e.status for e in t.fidelity.entries}
    assert kept["mpirun -x POD_UID"] == "mapped" and kept["mpirun -wdir /work/nccl"] == "mapped"
    assert "#SBATCH --nodes=2\n" in script and "#SBATCH --ntasks-per-node=8\n" in script


DRA = (Path(__file__).parent.parent / "corpus" / "cases" / "kubernetes" / "dra_gpu_claims.yaml").read_text()


def test_devices_claimed_through_dra_count_as_the_device_plugins_would() -> None:
    job = job_of(DRA)
    assert job.components[0].resources.gpus_per_node == 4
    assert not any(item.key == "claims" for item in job.raw)


def test_a_claim_of_an_unknown_driver_is_not_counted_and_is_kept() -> None:
    job = job_of(DRA.replace('device.driver == "gpu.nvidia.com"', 'device.driver == "fpga.example.com"'))
    assert not job.components[0].resources.gpus_per_node
    assert any(item.key in ("resourceClaims", "claims") for item in job.raw)
