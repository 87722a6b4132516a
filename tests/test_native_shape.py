"""The script shapes native translations read: what each statement becomes, and what blocks it."""

from __future__ import annotations

import pytest

from migrate.diagnostics import Collector
from migrate.translators.kubernetes import flavor_registry, native, native_words
from migrate.translators.kubernetes.native_shape import read_shape
from migrate.translators.kubernetes.native_words import Ref, Unknown, Variable, arithmetic, expand
from migrate.translators.slurm import reader

HEADER = "#!/bin/bash\n#SBATCH -N 2\n#SBATCH --ntasks-per-node=1\n"


def _decide(body: str, header: str = HEADER, flavor: str = "auto") -> native.Decision:
    (job,) = reader.read(header + body, "t.sbatch", Collector("t.sbatch"))
    decision, _ = native.decide(job, flavor_registry.choose(job, flavor), native.AUTO, "t")
    return decision


def test_words_expand_as_the_batch_shell_would() -> None:
    known = {"A": Variable([["x y"]]), "ARGS": Variable([["--a=1"], ["--b"]], array=True)}
    assert expand('"$A"', known) == [["x y"]]
    assert expand("$A", known) == [["x"], ["y"]]  # unquoted: split
    assert expand("'$A'", known) == [["$A"]]  # single quotes: read by the program at run time
    assert expand('"${ARGS[@]}"', known) == [["--a=1"], ["--b"]]
    assert expand("${UNSET:-dflt}", known) == [["dflt"]]
    assert expand("${1:-first}", known) == [["first"]]
    assert expand("$(hostname):29500", known) == [[Ref("head"), ":29500"]]
    assert expand('"$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)"', known) == [[Ref("head")]]
    assert expand("--rank=$SLURM_NODEID", known) == [["--rank=", Ref("slurm", "SLURM_NODEID")]]
    with pytest.raises(Unknown, match="submitter"):
        expand("$HOME/x", known)
    with pytest.raises(Unknown, match="computed"):
        expand("$(date +%F)", known)


def test_a_word_with_nothing_to_expand_is_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    """Most words hold no quote, escape, expansion or blank: returned as written, as the character
    loop would make them (an empty pair of quotes sends a word through the loop)."""
    for word in ("train.py", "--lr=3e-4", "/scratch/run/ckpt", "é:1,2", "a*b?[c]"):
        assert expand(word, {}) == expand(word + '""', {}) == [[word]]
    assert expand("", {}) == []
    asked: list[str] = []

    class Counted:
        def match(self, text: str) -> bool:
            asked.append(text)
            return True

    monkeypatch.setattr(native_words, "_AS_WRITTEN", Counted())
    assert expand("not split", {}) == [["not split"]]  # as written: the loop was not run
    assert asked == ["not split"]


def test_arithmetic_over_known_numbers_only() -> None:
    known = {"N": Variable([["4"]]), "G": Variable([["8"]])}
    assert arithmetic("N * G", known) == "32"
    assert arithmetic("$N*(G+1) % 5", known) == "1"
    assert arithmetic("-7 / 2", known) == "-3"  # bash truncates toward zero
    with pytest.raises(Unknown):
        arithmetic("RANDOM % 100", known)
    with pytest.raises(Unknown):
        arithmetic("N ** 2", known)


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ("srun a\nsrun b\n", "a second step (the first is at line 4)"),
        ("srun a\necho done >> log\n", "echo runs once after the step"),
        ("scontrol show job $SLURM_JOB_ID\nsrun a\n", "scontrol runs on Slurm only"),
        ("for i in 1 2; do srun a $i; done\n", "control flow around a step"),
        ("srun a | tee out.log\n", "part of a pipeline"),
        ("srun a > out.log\n", "redirected to a file"),
        ("srun -w node1 a\n", "srun --nodelist places the step"),
        ("srun a --seed $RANDOM\n", "$RANDOM comes from the submitter's environment"),
        ("export STAMP=$(date +%s)\nsrun a\n", "the program would not see $STAMP"),
        ("python one.py\n", "runs on node 0 of 2 nodes only"),
        # bash itself may not cope (it crashes on corpus/adversarial/nested_substitutions.sh, so the
        # job fails on Slurm): the pod runs the script, not what the reader made of it
        ("echo " + "$(" * 12 + ")" * 12 + "\nsrun a\n", "nested more than 6 deep"),
    ],
)
def test_what_needs_the_script_to_run_as_it_is(body: str, reason: str) -> None:
    decision = _decide(body)
    assert decision.style == native.EMULATE
    assert reason in decision.reason


def test_what_native_takes() -> None:
    body = (
        "set -e\nmodule load cuda\nexport NCCL_DEBUG=WARN\nN=$((SLURM_NNODES * 8))\n"
        "mkdir -p /fsx/out\necho start\nsrun torchrun --nnodes=$SLURM_NNODES --nproc_per_node=8 "
        "--rdzv_endpoint=$(hostname):29500 train.py --world $N\nwait\n"
    )
    (job,) = reader.read(HEADER + body, "t.sbatch", Collector("t.sbatch"))
    decision, plan = native.decide(job, flavor_registry.choose(job, "auto"), native.AUTO, "t")
    assert decision.style == native.NATIVE and plan is not None
    assert plan.argv() == [
        "torchrun", "--nnodes=2", "--nproc_per_node=8", "--rdzv_endpoint=$(MASTER_ADDR):29500", "train.py",
        "--world", "16",
    ]  # fmt: skip
    assert plan.env() == [{"name": "NCCL_DEBUG", "value": "WARN"}]
    shape = read_shape(job, native.constants(job, "t"))
    assert [st.text for st in shape.setup] == ["mkdir -p /fsx/out"]
    assert sorted(why[:20] for _, why in shape.dropped) == [
        "a shell setting of t", "prints to the job's ", "software set-up: the", "the pods end when th",
    ]  # fmt: skip
    assert plan.init_script() == "set -e\nmkdir -p /fsx/out\n"


def test_the_step_service_stays_for_the_bridge_and_volcano() -> None:
    assert _decide("srun a\n", flavor="slurm-bridge").style == native.EMULATE
    assert "no native form as a volcano" in _decide("srun a\n", flavor="volcano").reason


def test_a_pod_index_read_inside_a_step_comes_from_the_pod() -> None:
    body = "srun bash -c 'torchrun --node_rank=$SLURM_PROCID --nnodes=2 x.py'\n"
    (job,) = reader.read(HEADER + body, "t.sbatch", Collector("t.sbatch"))
    _, jobset = native.decide(job, flavor_registry.choose(job, "jobset"), native.AUTO, "t")
    assert jobset is not None
    label = "metadata.labels['jobset.sigs.k8s.io/job-index']"
    assert {"name": "SLURM_PROCID", "valueFrom": {"fieldRef": {"fieldPath": label}}} in jobset.env()
    _, torch = native.decide(job, flavor_registry.choose(job, "pytorchjob"), native.AUTO, "t")
    # the operator sets RANK after the template's env: the pod's rank is passed on the command line
    assert torch is not None and torch.target == "pytorchjob"
    assert torch.argv()[:3] == ["env", "SLURM_PROCID=$(RANK)", "bash"]


def test_an_elastic_torchrun_leaves_its_rendezvous_to_the_operator() -> None:
    words = [
        "torchrun",
        "--nnodes=2",
        "--nproc_per_node",
        "8",
        "--rdzv-endpoint",
        "h:29500",
        "--standalone",
        "--max_restarts=3",
        "train.py",
        "--nnodes",
        "7",
    ]
    assert native._without_rendezvous(words) == [
        "torchrun",
        "--nproc_per_node",
        "8",
        "train.py",
        "--nnodes",
        "7",
    ]
    module = ["python", "-m", "torch.distributed.run", "--rdzv_id=x", "--node_rank", "0", "t.py"]
    assert native._without_rendezvous(module) == ["python", "-m", "torch.distributed.run", "t.py"]
    assert native.max_restarts(words) == 3 and native.max_restarts(module) is None


def test_a_node_range_is_elastic_for_torchrun_in_a_pytorchjob_only() -> None:
    header = "#!/bin/bash\n#SBATCH -N 2-4\n#SBATCH --ntasks-per-node=1\n"
    step = "srun torchrun --nnodes=$SLURM_NNODES --nproc_per_node=8 t.py\n"
    (job,) = reader.read(header + step, "t.sbatch", Collector("t.sbatch"))
    _, plan = native.decide(job, flavor_registry.choose(job, "pytorchjob"), native.AUTO, "t")
    assert plan is not None and plan.elastic == (2, 4)
    _, fixed = native.decide(job, flavor_registry.choose(job, "jobset"), native.AUTO, "t")
    assert fixed is not None and fixed.elastic is None
    assert "elastic job" in _decide("mkdir -p /x\n" + step, header, "pytorchjob").reason
