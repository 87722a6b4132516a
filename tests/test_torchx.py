"""Launch scripts that submit to Kubernetes through ``torchx run`` are jobs (kubernetes/torchx.py)."""

from __future__ import annotations

from conftest import CORPUS

from migrate.diagnostics import Collector
from migrate.site.allocation import allocate
from migrate.site.config import parse_site_config
from migrate.translators.kubernetes import reader, torchx
from migrate.translators.slurm.writer import translate_job

SCRIPT = (CORPUS / "cases" / "kubernetes" / "launch_torchx_eks.sh").read_text()
SITE = parse_site_config(
    {
        "partitions": {
            "p4d": {
                "gpus_per_node": 8,
                "cpus_per_node": 96,
                "mem_gb": 1152,
                "node_selector": {"node.kubernetes.io/instance-type": "p4d.24xlarge"},
            },
        }
    }
)


def test_a_launch_script_is_sniffed_by_its_torchx_command() -> None:
    assert reader.sniff(SCRIPT)
    assert not reader.sniff("#!/bin/bash\ntorchx run -s local_cwd dist.ddp -j 1x2 --script t.py\n")


def test_each_torchx_run_onto_kubernetes_is_a_job_of_its_size() -> None:
    diags = Collector("launch.sh")
    jobs = reader.read(SCRIPT, "launch.sh", diags)
    assert [(j.name, j.components[0].replicas) for j in jobs] == [("llama-ft", 2), ("evaluate", 1)]
    ft = jobs[0]
    assert ft.placement.queue == "ml-train" and ft.placement.namespace == "training"
    assert ft.images() == ("123456789012.dkr.ecr.us-west-2.amazonaws.com/llama-ft:2024.10",)
    alloc = allocate(ft, SITE)
    assert (alloc.partition.value, alloc.total_nodes(), alloc.total_gpus()) == ("p4d", 2, 16)
    assert [d.code for d in diags.items] == ["K8S-TORCHX-COMPONENT"]


def test_the_slurm_translation_runs_torchrun_on_the_nodes_torchx_asked_for() -> None:
    ft = reader.read(SCRIPT, "launch.sh", Collector("launch.sh"))[0]
    text = translate_job(ft, SITE, "none").files["job.sbatch"]
    assert "#SBATCH --nodes=2\n" in text and "#SBATCH --exclusive\n" in text
    assert "--nproc_per_node=8" in text and "/fsx/code/finetune.py --epochs 3 --lr 2e-5" in text


def test_continuation_lines_and_options_with_equals() -> None:
    (found,) = torchx.launches("torchx run \\\n  --scheduler=kubernetes dist.ddp -j=4x8 --script=t.py\n")
    assert (found.line, found.scheduler, found.args) == (1, "kubernetes", ["-j=4x8", "--script=t.py"])


def test_a_size_that_is_not_a_number_keeps_torchx_s_default() -> None:
    """Found by the fuzzer: ``--cpu 8--memMB`` once raised out of the reader."""
    (job,) = reader.read(
        "#!/bin/bash\ntorchx run -s kubernetes dist.ddp -j 1x1 --cpu 8--memMB --gpu $G --script t.py\n",
        "x.sh",
        Collector("x.sh"),
    )
    res = job.components[0].resources
    assert (res.cpus_per_node, res.gpus_per_node) == (2, None)
