"""A workload kind added in one declaration is read, validated, written to Slurm and planned like
the built-in ones; unregistered, it is unknown again. The built-in kinds are declared the same way."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from migrate import ir, serialize, workloads
from migrate.diagnostics import Collector
from migrate.plan.classify import classify_job
from migrate.scan import scanner
from migrate.scan.results import ScanOptions
from migrate.translate import translate_jobs
from migrate.translators.kubernetes import reader as k8s_reader
from migrate.translators.kubernetes import validate
from migrate.vocab import Format, Pattern
from migrate.workloads import Launch, NameRule, Roles, WorkloadKind

TOY_KIND = "ToyTrainer"  # a plain string where a built-in kind has its member in vocab.JobKind

# The whole toy kind: spec.workers pods of spec.template, started as one distributed torch job.
TOY = WorkloadKind(
    group="toy.example.com",
    kind="ToyTrainer",
    ir_kind=TOY_KIND,  # type: ignore[arg-type]
    versions=("v1",),
    roles=(Roles(at=("spec",), default_name="worker", replicas=("workers",)),),
    time_limit=(("spec", "deadlineSeconds"),),
    schema=str(Path(__file__).parent / "toy_kind" / "toytrainer.json"),
    name_rule=NameRule("dns1035", 20, "the toy operator names each pod <name>-<index>"),
    launch=Launch.TORCH,
    training=True,
)

MANIFEST = """\
apiVersion: toy.example.com/v1
kind: ToyTrainer
metadata:
  name: toy-train
spec:
  workers: 3
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: trainer
          image: registry.example.com/toy:1
          command: ["python", "train.py", "--epochs", "3"]
          resources:
            limits:
              nvidia.com/gpu: 2
              cpu: "8"
              memory: 32Gi
"""


@pytest.fixture
def toy() -> Iterator[WorkloadKind]:
    with workloads.registered(TOY):
        yield TOY


def _read(text: str = MANIFEST) -> tuple[list[ir.Job], Collector]:
    diags = Collector()
    return k8s_reader.read(text, "toy.yaml", diags), diags


def test_the_scan_reads_the_toy_kind_into_one_job(toy: WorkloadKind, tmp_path: Path) -> None:
    (tmp_path / "toy.yaml").write_text(MANIFEST, encoding="utf-8")
    options = ScanOptions(cache=str(tmp_path / "cache"), jobs=1)
    for _ in range(2):  # the second scan is answered by the cache: the kind survives its JSON
        (job,) = scanner.scan([str(tmp_path / "toy.yaml")], options).jobs
        assert (job.kind, job.name, job.source.format) == (TOY_KIND, "toy-train", Format.KUBERNETES)
        (comp,) = job.components
        assert (comp.name, comp.replicas) == ("worker", 3)
        assert (comp.resources.gpus_per_node, comp.resources.cpus_per_node) == (2, 8)
        assert comp.resources.mem_per_node_mb == 32 * 1024
        assert job.total_nodes() == 3 and job.total_gpus() == 6
    assert serialize.job_from_dict(serialize.job_to_dict(job)) == job


def test_the_toy_kind_is_checked_against_its_schema_and_name_rule(toy: WorkloadKind) -> None:
    obj = yaml.safe_load(MANIFEST)
    assert validate.validate_object(obj) == []
    assert ("toy.example.com/v1", "ToyTrainer") in validate.supported_custom_kinds()
    obj["spec"]["workers"] = "three"
    (problem,) = validate.validate_object(obj)
    assert (problem.path, problem.rule) == ("spec.workers", "schema")
    obj["spec"]["workers"] = 3
    obj["metadata"]["name"] = "a-toy-trainer-with-a-long-name"
    (problem,) = validate.validate_object(obj)
    assert problem.path == "metadata.name" and "the toy operator names each pod" in problem.message


def _slurm_script() -> str:
    (t,) = translate_jobs(_read()[0], to=Format.SLURM).translations
    (script,) = [text for name, text in t.files.items() if name.endswith(".sbatch")]
    return script


def test_the_toy_kind_becomes_one_torchrun_job_on_slurm(toy: WorkloadKind) -> None:
    script = _slurm_script()
    assert "# ToyTrainer toy-train\n" in script
    # three 2-GPU pods: packed onto one (assumed 8-GPU) node, a task each
    assert "#SBATCH --ntasks-per-node=3\n" in script and "#SBATCH --gpus-per-task=2\n" in script
    # the declared launch: the pods form one torch job, though their program is plain python
    assert 'torchrun --nnodes="$SLURM_NTASKS" --nproc_per_node=2' in script
    assert "--rdzv_backend=c10d" in script


def test_the_declared_launch_decides_how_the_pods_start() -> None:
    with workloads.registered(replace(TOY, launch=Launch.PLAIN)):
        script = _slurm_script()
    assert "torchrun" not in script and "python train.py --epochs 3" in script


def test_the_plan_classes_the_toy_kind_as_training(toy: WorkloadKind) -> None:
    (job,) = _read()[0]
    classed = classify_job(job)
    assert classed.pattern in (Pattern.SMALL_TRAINING, Pattern.LONG_TRAINING, Pattern.FINE_TUNING)
    assert f"kind {TOY_KIND}" in classed.reasons


def test_unregistered_the_toy_kind_is_unknown_again() -> None:
    assert workloads.declared(TOY_KIND) is None
    jobs, diags = _read()
    assert jobs == []
    assert "K8S-UNKNOWN-KIND" in {d.code for d in diags}
    (problem,) = validate.validate_object(yaml.safe_load(MANIFEST))
    assert problem.rule == "unknown-kind" and "no schema for ToyTrainer" in problem.message
    assert ("toy.example.com/v1", "ToyTrainer") not in validate.supported_custom_kinds()
    with workloads.registered(TOY):
        assert workloads.workload_kinds()[-1] is TOY
    assert workloads.workload_kinds() == workloads.WORKLOAD_KINDS


@pytest.mark.parametrize(
    ("kind", "problem"),
    [
        (replace(TOY, ir_kind="Job"), "already registered"),
        (replace(TOY, group="batch", kind="Job"), "already has a kind Job"),
        (replace(TOY, roles=()), "at least one version and one role"),
    ],
)
def test_a_kind_that_would_clash_is_refused(kind: WorkloadKind, problem: str) -> None:
    with pytest.raises(ValueError, match=problem), workloads.registered(kind):
        pass
    assert workloads.workload_kinds() == workloads.WORKLOAD_KINDS


def test_every_built_in_schema_is_the_one_its_file_names() -> None:
    """A declared schema file validates the kind and version that declare it."""
    root = Path(validate.__file__).parent / "schemas"
    for workload in workloads.WORKLOAD_KINDS:
        if not workload.schema:
            continue
        props = yaml.safe_load((root / workload.schema).read_text(encoding="utf-8"))["properties"]
        group = f"{workload.group}/" if workload.group else ""
        assert props["apiVersion"]["const"] == f"{group}{workload.versions[0]}", workload.kind
        assert props["kind"]["const"] == workload.kind
