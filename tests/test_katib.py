"""Katib Experiments: read as one trial's workload run as a sweep, written as a Slurm job array.

The reader's tests give small Experiments inline: the search (parameters,
placeholders, objective), the array (trials, trials at once), a trial template
of each kind and one held in a ConfigMap. The writer's tests run the bash lines
that set each array task's values and compare what each task gets.
"""

from __future__ import annotations

import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest

from migrate import ir, serialize
from migrate.diagnostics import Collector
from migrate.fidelity import Translation
from migrate.translators.katib import trials
from migrate.translators.kubernetes import reader as k8s_reader
from migrate.translators.slurm.writer import translate_job
from migrate.vocab import FidelityStatus, JobKind

BASH = shutil.which("bash")
needs_bash = pytest.mark.skipif(BASH is None, reason="bash runs the array tasks' lines")


def experiment(
    trial: str,
    *,
    algorithm: str = "random",
    parameters: str | None = None,
    trial_parameters: str | None = None,
    counts: str = "parallelTrialCount: 2\n  maxTrialCount: 6\n  maxFailedTrialCount: 1",
    extra: str = "",
) -> str:
    """An Experiment manifest around ``trial`` (the trialTemplate's source, indented by the caller)."""
    parameters = parameters or textwrap.dedent(
        """\
        - name: lr
          parameterType: double
          feasibleSpace: {min: "0.01", max: "0.05", step: "0.01"}
        - name: optimizer
          parameterType: categorical
          feasibleSpace: {list: [sgd, adam]}"""
    )
    trial_parameters = trial_parameters or textwrap.dedent(
        """\
        - name: learningRate
          reference: lr
        - name: optimizer
          reference: optimizer"""
    )
    return (
        "apiVersion: kubeflow.org/v1beta1\nkind: Experiment\n"
        "metadata: {name: sweep, namespace: team}\n"
        f"spec:\n  {counts}\n"
        "  objective: {type: minimize, goal: 0.1, objectiveMetricName: loss, additionalMetricNames: [acc]}\n"
        f"  algorithm: {{algorithmName: {algorithm}}}\n"
        f"  parameters:\n{textwrap.indent(parameters, '    ')}\n"
        f"{extra}"
        "  trialTemplate:\n"
        f"    trialParameters:\n{textwrap.indent(trial_parameters, '      ')}\n"
        f"{trial}"
    )


JOB_TRIAL = """\
    trialSpec:
      apiVersion: batch/v1
      kind: Job
      spec:
        template:
          spec:
            restartPolicy: Never
            containers:
              - name: train
                image: example.com/train:1
                command: [python3, train.py, "--lr=${trialParameters.learningRate}"]
                args: ["--optimizer", "${trialParameters.optimizer}"]
                resources:
                  limits: {nvidia.com/gpu: 2, memory: 8Gi}
"""

PYTORCH_TRIAL = """\
    trialSpec:
      apiVersion: kubeflow.org/v1
      kind: PyTorchJob
      spec:
        pytorchReplicaSpecs:
          Worker:
            replicas: 2
            template:
              spec:
                containers:
                  - name: pytorch
                    image: example.com/ddp:1
                    command: [torchrun, --nproc_per_node=4, train.py, "--lr=${trialParameters.learningRate}"]
                    env:
                      - {name: OPTIMIZER, value: "${trialParameters.optimizer}"}
                    resources:
                      limits: {nvidia.com/gpu: 4}
"""

TRAINJOB_TRIAL = """\
    trialSpec:
      apiVersion: trainer.kubeflow.org/v1alpha1
      kind: TrainJob
      spec:
        runtimeRef: {name: torch-distributed}
        trainer:
          numNodes: 2
          image: example.com/trainer:1
          command:
            - python3
            - train.py
            - --lr=${trialParameters.learningRate}
            - --opt=${trialParameters.optimizer}
          resourcesPerNode:
            limits: {nvidia.com/gpu: 8}
"""

WORKFLOW_TRIAL = """\
    trialSpec:
      apiVersion: argoproj.io/v1alpha1
      kind: Workflow
      spec:
        entrypoint: train
        templates:
          - name: train
            container:
              image: example.com/train:1
              command: [python3, train.py, "--lr=${trialParameters.learningRate}"]
              args: ["--optimizer=${trialParameters.optimizer}"]
"""

# Katib's own trial-templates ConfigMap, installed with Katib: in no file of the scan.
ELSEWHERE = (
    "    configMap: {configMapName: trial-templates, configMapNamespace: kubeflow, templatePath: x.yaml}\n"
)


def read(tmp_path: Path, text: str) -> tuple[list[ir.Job], Collector]:
    path = tmp_path / "experiment.yaml"
    path.write_text(text, encoding="utf-8")
    diags = Collector(str(path))
    return k8s_reader.read(text, str(path), diags), diags


def one(tmp_path: Path, text: str) -> ir.Job:
    jobs, _ = read(tmp_path, text)
    (job,) = [j for j in jobs if j.kind == JobKind.KATIB_EXPERIMENT]
    return job


def codes(diags: Collector) -> set[str]:
    return {d.code for d in diags.items}


def commands(job: ir.Job) -> list[str]:
    return [w for c in job.components for k in c.containers for w in (*k.command, *k.args)]


# ---------------------------------------------------------------------------
# Reading


def test_the_search_is_kept_typed(tmp_path: Path) -> None:
    job = one(tmp_path, experiment(JOB_TRIAL))
    sweep = job.sweep
    assert sweep is not None and sweep.trial_kind == JobKind.JOB and sweep.algorithm == "random"
    lr, optimizer = sweep.parameters
    assert (lr.name, lr.type, lr.min, lr.max, lr.step) == ("lr", "double", "0.01", "0.05", "0.01")
    assert (optimizer.type, optimizer.values) == ("categorical", ("sgd", "adam"))
    assert sweep.objective == ir.Objective("minimize", "0.1", "loss", ("acc",), sweep.objective.line)
    assert sweep.max_failed_trials == 1
    assert [(p.name, p.reference, p.variable) for p in sweep.trial_parameters] == [
        ("learningRate", "lr", "TRIAL_LEARNING_RATE"),
        ("optimizer", "optimizer", "TRIAL_OPTIMIZER"),
    ]
    assert serialize.from_dict(ir.Job, serialize.to_dict(job)) == job


def test_trials_are_the_array_and_its_limit(tmp_path: Path) -> None:
    job = one(tmp_path, experiment(JOB_TRIAL))
    assert job.array == ir.ArraySpec("0-5", tuple(range(6)), 6, 2)
    defaults = one(tmp_path, experiment(JOB_TRIAL, counts="maxTrialCount: 4"))
    assert defaults.array is not None and defaults.array.max_concurrent == 3  # Katib's default
    grid = one(tmp_path, experiment(JOB_TRIAL, algorithm="grid", counts="parallelTrialCount: 2"))
    assert grid.array is not None and grid.array.count == 10  # 5 learning rates x 2 optimizers


def test_placeholders_become_each_trials_variables_where_the_kubelet_expands(tmp_path: Path) -> None:
    job = one(tmp_path, experiment(JOB_TRIAL))
    assert commands(job) == [
        "python3",
        "train.py",
        "--lr=$(TRIAL_LEARNING_RATE)",
        "--optimizer",
        "$(TRIAL_OPTIMIZER)",
    ]


def test_a_placeholder_elsewhere_stays_visible_and_is_reported(tmp_path: Path) -> None:
    trial = JOB_TRIAL.replace(
        "image: example.com/train:1", "image: example.com/train:${trialParameters.optimizer}"
    )
    trial = trial.replace("--lr=${trialParameters.learningRate}", "--seed=${trialParameters.unknown}")
    jobs, diags = read(tmp_path, experiment(trial))
    (job,) = jobs
    assert job.images() == ("example.com/train:${trialParameters.optimizer}",)
    assert "--seed=${trialParameters.unknown}" in commands(job)
    unfilled = [i for i in job.raw if i.key == "katib-placeholder-unfilled"]
    assert {i.origin.split(" in ")[0] for i in unfilled} == {
        "${trialParameters.unknown}",
        "${trialParameters.optimizer}",
    }
    assert "K8S-KATIB-PLACEHOLDER" in codes(diags)


def test_shared_trial_metadata_is_filled_in_as_katib_does(tmp_path: Path) -> None:
    params = "- {name: lr, reference: lr}\n- {name: ns, reference: '${trialSpec.Namespace}'}\n"
    params += "- {name: kind, reference: '${trialSpec.Kind}'}\n- {name: me, reference: '${trialSpec.Name}'}"
    trial = JOB_TRIAL.replace(
        'args: ["--optimizer", "${trialParameters.optimizer}"]',
        'args: ["${trialParameters.ns}/${trialParameters.kind}", "${trialParameters.me}"]',
    )
    job = one(tmp_path, experiment(trial, trial_parameters=params))
    assert commands(job)[-2:] == ["team/Job", "$(TRIAL_ME)"]


@pytest.mark.parametrize(
    ("trial", "kind", "nodes", "gpus"),
    [
        (JOB_TRIAL, JobKind.JOB, 1, 2),
        (PYTORCH_TRIAL, JobKind.PYTORCH_JOB, 2, 8),
        (TRAINJOB_TRIAL, JobKind.TRAIN_JOB, 2, 16),
        (WORKFLOW_TRIAL, JobKind.JOB, 1, 0),
    ],
)
def test_each_trial_kind_is_read_by_its_own_reader(
    tmp_path: Path, trial: str, kind: JobKind, nodes: int, gpus: int
) -> None:
    job = one(tmp_path, experiment(trial))
    assert job.sweep is not None and job.sweep.trial_kind == kind
    assert (job.total_nodes(), job.total_gpus()) == (nodes, gpus)  # one trial's size, not the sweep's
    assert any("$(TRIAL_LEARNING_RATE)" in w for w in commands(job))
    assert job.array is not None and job.array.count == 6


def test_a_template_in_a_configmap_of_the_file_is_read_at_its_lines(tmp_path: Path) -> None:
    template = textwrap.indent(JOB_TRIAL.replace("    trialSpec:\n", "", 1), "  ")
    config_map = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: templates, namespace: team}\n"
        f"data:\n  train.yaml: |\n{textwrap.dedent(template).replace(chr(10), chr(10) + '    ').rstrip()}\n"
    )
    source = "    configMap: {configMapName: templates, configMapNamespace: team, templatePath: train.yaml}\n"
    text = config_map.replace("|\n", "|\n    ", 1) + "---\n" + experiment(source)
    job = one(tmp_path, text)
    assert job.sweep is not None and job.sweep.trial_kind == JobKind.JOB
    (container,) = job.components[0].containers
    assert text.splitlines()[container.line - 1].strip() == "- name: train"
    assert "--lr=$(TRIAL_LEARNING_RATE)" in commands(job)


def test_a_template_in_a_configmap_elsewhere_is_diagnosed(tmp_path: Path) -> None:
    jobs, diags = read(tmp_path, experiment(ELSEWHERE))
    (job,) = jobs
    assert job.kind == JobKind.KATIB_EXPERIMENT and job.sweep is not None and job.sweep.trial_kind is None
    (diag,) = [d for d in diags.items if d.code == "K8S-KATIB-TEMPLATE-UNRESOLVED"]
    assert "kubeflow/trial-templates" in diag.message and "'x.yaml'" in diag.message


def test_a_trial_of_a_kind_no_reader_reads_is_diagnosed(tmp_path: Path) -> None:
    trial = "    trialSpec: {apiVersion: tekton.dev/v1, kind: TaskRun, spec: {}}\n"
    jobs, diags = read(tmp_path, experiment(trial))
    assert jobs[0].sweep is not None and jobs[0].sweep.trial_kind is None
    assert "K8S-KATIB-TRIAL-KIND" in codes(diags)


# ---------------------------------------------------------------------------
# Choosing the values


def test_grid_values_follow_katibs_feasible_spaces() -> None:
    double = ir.SearchParameter("lr", "double", "0.01", "0.05", "0.005")
    assert trials.grid_values(double) == [
        "0.01",
        "0.015",
        "0.02",
        "0.025",
        "0.03",
        "0.035",
        "0.04",
        "0.045",
        "0.05",
    ]
    assert trials.grid_values(ir.SearchParameter("n", "int", "2", "5")) == ["2", "3", "4", "5"]  # step 1
    assert trials.grid_values(ir.SearchParameter("lr", "double", "0.1", "0.2")) is None  # grid needs a step
    grid = trials.grid(
        (ir.SearchParameter("a", "int", "1", "2"), ir.SearchParameter("b", "discrete", values=("x", "y"))), 5
    )
    assert grid == {"a": ["1", "1", "2", "2", "1"], "b": ["x", "y", "x", "y", "x"]}  # again after the last


def test_random_draws_stay_in_the_space_and_repeat_with_the_seed() -> None:
    space = (
        ir.SearchParameter("lr", "double", "0.001", "0.1", distribution="logUniform"),
        ir.SearchParameter("layers", "int", "8", "16", "4"),
        ir.SearchParameter("opt", "categorical", values=("sgd", "adam")),
    )
    drawn = trials.draws(space, 50, 7)
    assert all(0.001 <= float(v) <= 0.1 for v in drawn["lr"])
    assert set(drawn["layers"]) <= {"8", "12", "16"} and set(drawn["opt"]) <= {"sgd", "adam"}
    assert len(set(drawn["lr"])) == 50 and drawn == trials.draws(space, 50, 7) != trials.draws(space, 50, 8)
    sweep = ir.Sweep(JobKind.JOB, settings=(ir.KeyValue("random_state", "42"),))
    assert trials.seed_of(sweep, "x") == 42 and trials.seed_of(ir.Sweep(JobKind.JOB), "x") == trials.seed_of(
        ir.Sweep(JobKind.JOB), "x"
    )


# ---------------------------------------------------------------------------
# Writing


def translated(tmp_path: Path, text: str) -> Translation:
    return translate_job(one(tmp_path, text), None, "none")


def task_values(script: str, task: int, names: list[str]) -> list[str]:
    """What array task ``task`` exports: the script's lines that set the variables, run by bash."""
    lines = script.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("# each array task's own"))
    end = max(i for i, ln in enumerate(lines) if ln.startswith("export TRIAL_")) + 1
    code = "\n".join(lines[start:end]) + "\nprintf '%s\\n' " + " ".join(f'"${n}"' for n in names)
    run = subprocess.run(
        [BASH or "bash", "-c", code],
        env={"SLURM_ARRAY_TASK_ID": str(task), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
    )
    return run.stdout.splitlines()


def entry(t: Translation, needle: str) -> tuple[str, str]:
    return next((e.status, e.reason) for e in t.fidelity.entries if needle in e.item)


@needs_bash
def test_grid_gives_each_task_its_point(tmp_path: Path) -> None:
    t = translated(tmp_path, experiment(JOB_TRIAL, algorithm="grid"))
    script = t.files["job.sbatch"]
    assert "#SBATCH --array=0-5%2" in script
    names = ["TRIAL_LEARNING_RATE", "TRIAL_OPTIMIZER"]
    assert [task_values(script, i, names) for i in range(6)] == [
        ["0.01", "sgd"],
        ["0.01", "adam"],
        ["0.02", "sgd"],
        ["0.02", "adam"],
        ["0.03", "sgd"],
        ["0.03", "adam"],
    ]
    assert '--lr="${TRIAL_LEARNING_RATE}"' in script
    assert entry(t, "search algorithm grid")[0] == FidelityStatus.MAPPED
    assert not [d for d in t.diagnostics if d.code.startswith("TO-SLURM-SWEEP")]


@needs_bash
def test_random_writes_a_seeded_draw_per_task_and_says_so(tmp_path: Path) -> None:
    seeded = experiment(JOB_TRIAL, extra="").replace(
        "algorithm: {algorithmName: random}",
        "algorithm: {algorithmName: random, algorithmSettings: [{name: seed, value: '11'}]}",
    )
    t = translated(tmp_path, seeded)
    script = t.files["job.sbatch"]
    assert "# each trial's parameters: drawn up front at random with seed 11" in script
    expected = trials.draws(one(tmp_path, seeded).sweep.parameters, 6, 11)  # type: ignore[union-attr]
    for task in range(6):
        assert task_values(script, task, ["TRIAL_LEARNING_RATE", "TRIAL_OPTIMIZER"]) == [
            expected["lr"][task],
            expected["optimizer"][task],
        ]
    status, reason = entry(t, "search algorithm random")
    assert status == FidelityStatus.MAPPED and "seed 11" in reason


@pytest.mark.parametrize("algorithm", ["bayesianoptimization", "tpe", "cmaes", "hyperband"])
def test_an_adaptive_algorithm_becomes_random_with_a_diagnostic(tmp_path: Path, algorithm: str) -> None:
    t = translated(tmp_path, experiment(JOB_TRIAL, algorithm=algorithm))
    status, reason = entry(t, f"search algorithm {algorithm}")
    assert status == FidelityStatus.APPROXIMATED and "random search" in reason and "outside Slurm" in reason
    (diag,) = [d for d in t.diagnostics if d.code == "TO-SLURM-SWEEP-ADAPTIVE"]
    assert algorithm in diag.message and "drawn at random" in diag.message
    assert f"migrate: approximated: search algorithm {algorithm}" in t.files["job.sbatch"]


def test_objective_collector_and_early_stopping_are_dropped_with_reasons(tmp_path: Path) -> None:
    extra = (
        "  earlyStopping: {algorithmName: medianstop}\n"
        "  metricsCollectorSpec:\n"
        "    {collector: {kind: File}, source: {fileSystemPath: {path: /m.log, kind: File}}}\n"
    )
    t = translated(tmp_path, experiment(JOB_TRIAL, extra=extra))
    for needle in (
        "objective: minimize loss",
        "spec.earlyStopping",
        "spec.metricsCollectorSpec",
        "maxFailedTrialCount",
    ):
        assert entry(t, needle)[0] == FidelityStatus.DROPPED, needle


def test_a_trial_of_several_pods_keeps_its_own_translation(tmp_path: Path) -> None:
    t = translated(tmp_path, experiment(PYTORCH_TRIAL))
    script = t.files["job.sbatch"]
    assert "#SBATCH --array=0-5%2" in script  # each task: one trial's two pods of four GPUs
    assert "#SBATCH --ntasks-per-node=2" in script and "#SBATCH --gpus-per-task=4" in script
    assert "torchrun" in script and "OPTIMIZER" in script
    assert t.flavor == "sbatch-array"


def test_an_unknown_trial_writes_nothing_and_says_why(tmp_path: Path) -> None:
    t = translated(tmp_path, experiment(ELSEWHERE))
    assert t.files == {} and t.flavor == "not-translated"
    assert [d.code for d in t.diagnostics] == ["TO-SLURM-SWEEP-NO-TRIAL"]


def test_the_plan_sees_a_sweep_whatever_its_trials_run(tmp_path: Path) -> None:
    from migrate.plan.classify import classify_job
    from migrate.vocab import Pattern

    for trial in (JOB_TRIAL, PYTORCH_TRIAL):
        assert classify_job(one(tmp_path, experiment(trial))).pattern == Pattern.SWEEP


def test_a_search_whose_trial_was_not_read_cannot_be_a_pilot(tmp_path: Path) -> None:
    from migrate.plan.facts import facts_of
    from migrate.plan.runnable import why_not_runnable
    from migrate.vocab import Direction

    unread = one(tmp_path, experiment(ELSEWHERE))
    why = why_not_runnable(unread, facts_of(unread), Direction.TO_SLURM)
    assert why is not None and "trial workload was not read" in why
    readable = one(tmp_path, experiment(JOB_TRIAL))
    assert why_not_runnable(readable, facts_of(readable), Direction.TO_SLURM) is None
