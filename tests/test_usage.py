"""Demand from what ran: sacct dumps and kubectl Job lists, read, matched to scanned jobs, planned with."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import CORPUS, REPO
from hypothesis import given, settings
from hypothesis import strategies as st
from ir_builders import k8s_job, slurm_job, wrapper

from migrate import ir
from migrate.plan.planner import build_plan, plan_json
from migrate.site.config import parse_site_config
from migrate.site.usage import (
    SACCT,
    AccountingError,
    AccountingFile,
    match_usage,
    parse_accounting,
)
from migrate.site.usage_kubectl import parse_kubectl_jobs
from migrate.site.usage_sacct import parse_sacct
from migrate.vocab import Direction, Format

SITE = parse_site_config(
    {
        "site": "nw1",
        "partitions": {
            "gpu-h100": {"nodes": 48, "gpus_per_node": 8, "queue": "h100-queue"},
            "gpu-a100": {"nodes": 16, "gpus_per_node": 8, "queue": "a100-queue"},
            "cpu": {"nodes": 96, "queue": "cpu-queue"},
            "debug": {"nodes": 4, "gpus_per_node": 4},
        },
    }
)

H100x32 = "billing=6144,cpu=6144,gres/gpu:h100=256,gres/gpu=256,mem=60800G,node=32"
H100x1 = "billing=192,cpu=192,gres/gpu:h100=8,gres/gpu=8,mem=1900G,node=1"
A100_1GPU = "billing=12,cpu=12,gres/gpu:a100=1,gres/gpu=1,mem=120G,node=1"
# A week of the sample site's Slurm side, as `sacct --allusers --duplicates --parsable2
# --format=JobID,JobName,Partition,Account,AllocNodes,AllocTRES,Elapsed,State,Submit,Start,End` prints it,
# with the lines a real dump gets wrong: a pipe in a job name, a time that is not one, a cut-off line.
SACCT_WEEK = f"""\
JobID|JobName|Partition|Account|AllocNodes|AllocTRES|Elapsed|State|Submit|Start|End
700101|llm13b-pretrain|gpu-h100|llm|32|{H100x32}|2-00:00:36|TIMEOUT|2024-06-02T20:00:00|2024-06-03T00:00:00|2024-06-05T00:00:36
700101.batch|batch||llm|1|{H100x1}|2-00:00:36|CANCELLED|2024-06-03T00:00:00|2024-06-03T00:00:00|2024-06-05T00:00:36
700101.extern|extern||llm|32|{H100x32}|2-00:00:36|COMPLETED|2024-06-03T00:00:00|2024-06-03T00:00:00|2024-06-05T00:00:36
700101.0|python||llm|32|{H100x32}|2-00:00:30|CANCELLED|2024-06-03T00:00:05|2024-06-03T00:00:05|2024-06-05T00:00:35
700102|llm13b-pretrain|gpu-h100|llm|32|{H100x32}|1-12:00:00|FAILED|2024-06-02T20:00:01|2024-06-05T00:01:00|2024-06-06T12:01:00
700102.batch|batch||llm|1|{H100x1}|1-12:00:00|FAILED|2024-06-05T00:01:00|2024-06-05T00:01:00|2024-06-06T12:01:00
700102.extern|extern||llm|32|{H100x32}|1-12:00:00|COMPLETED|2024-06-05T00:01:00|2024-06-05T00:01:00|2024-06-06T12:01:00
700110_0|ft-eval|gpu-a100|llm|1|{A100_1GPU}|01:30:00|COMPLETED|2024-06-04T09:00:00|2024-06-04T10:00:00|2024-06-04T11:30:00
700110_0.batch|batch||llm|1|{A100_1GPU}|01:30:00|COMPLETED|2024-06-04T10:00:00|2024-06-04T10:00:00|2024-06-04T11:30:00
700110_1|ft-eval|gpu-a100|llm|1|{A100_1GPU}|00:15:00|OUT_OF_MEMORY|2024-06-04T09:00:00|2024-06-04T10:00:00|2024-06-04T10:15:00
700110_1.batch|batch||llm|1|{A100_1GPU}|00:15:00|OUT_OF_MEMORY|2024-06-04T10:00:00|2024-06-04T10:00:00|2024-06-04T10:15:00
700110_2|ft-eval|gpu-a100|llm|1|{A100_1GPU}|01:00:00|COMPLETED|2024-06-04T09:00:00|2024-06-04T10:00:01|2024-06-04T11:00:01
700110_[3-5]|ft-eval|gpu-a100|llm|0||00:00:00|CANCELLED by 5012|2024-06-04T09:00:00|Unknown|Unknown
700120+0|wing-les|cpu|hpc|48|billing=9216,cpu=9216,mem=35520G,node=48|10:00:00|COMPLETED|2024-06-03T00:00:00|2024-06-03T01:00:00|2024-06-03T11:00:00
700120+1|wing-les|cpu|hpc|16|billing=3072,cpu=3072,mem=11840G,node=16|10:00:00|COMPLETED|2024-06-03T00:00:00|2024-06-03T01:00:00|2024-06-03T11:00:00
700120+0.batch|batch||hpc|1|billing=192,cpu=192,mem=740G,node=1|10:00:00|COMPLETED|2024-06-03T01:00:00|2024-06-03T01:00:00|2024-06-03T11:00:00
700120+0.0|pimpleFoam||hpc|48|billing=9216,cpu=9216,mem=35520G,node=48|09:59:50|COMPLETED|2024-06-03T01:00:05|2024-06-03T01:00:05|2024-06-03T10:59:55
700130|cfd-post|cpu|hpc|2|billing=384,cpu=384,mem=1480G,node=2|01:00:00|CANCELLED by 7001|2024-06-03T11:00:00|2024-06-03T11:00:10|2024-06-03T12:00:10
700140|nightly-cleanup|cpu|ops|1|billing=16,cpu=16,mem=64G,node=1|00:30:00|COMPLETED|2024-06-03T02:00:00|2024-06-03T02:00:00|2024-06-03T02:30:00
700140.batch|batch||ops|1|billing=16,cpu=16,mem=64G,node=1|00:30:00|COMPLETED|2024-06-03T02:00:00|2024-06-03T02:00:00|2024-06-03T02:30:00
700140|nightly-cleanup|cpu|ops|1|billing=16,cpu=16,mem=64G,node=1|00:18:00|COMPLETED|2024-06-04T02:00:00|2024-06-04T02:00:00|2024-06-04T02:18:00
700140.batch|batch||ops|1|billing=16,cpu=16,mem=64G,node=1|00:18:00|COMPLETED|2024-06-04T02:00:00|2024-06-04T02:00:00|2024-06-04T02:18:00
700140|nightly-cleanup|cpu|ops|0||00:00:00|PENDING|2024-06-04T02:18:05|Unknown|Unknown
700150|vit-l-inat|gpu-a100|llm|1|billing=96,cpu=96,gres/gpu=8,mem=1100G,node=1|1-12:00:00|TIMEOUT|2024-06-03T10:00:00|2024-06-03T10:00:00|2024-06-04T22:00:00
700160|shardlist|cpu|llm|1|billing=1,cpu=1,mem=4G,node=1|00:00:40|COMPLETED|2024-06-03T00:59:00|2024-06-03T00:59:10|2024-06-03T00:59:50
700170|interactive|debug|vision|1|billing=12,cpu=12,gres/gpu=1,mem=48G,node=1|02:00:00|COMPLETED|2024-06-05T14:00:00|2024-06-05T14:00:00|2024-06-05T16:00:00
700170.0|bash||vision|1|billing=12,cpu=12,gres/gpu=1,mem=48G,node=1|02:00:00|COMPLETED|2024-06-05T14:00:00|2024-06-05T14:00:00|2024-06-05T16:00:00
700180|tok|verify|cpu|llm|1|billing=4,cpu=4,node=1|00:10:00|COMPLETED|2024-06-06T00:00:00|2024-06-06T00:00:00|2024-06-06T00:10:00
700181|tok-verify|cpu|llm|1|billing=4,cpu=4,node=1|soon|COMPLETED|2024-06-06T00:00:00|2024-06-06T00:00:00|2024-06-06T00:10:00
700182|tok-verify|cpu|llm|1|billing=4,cpu=4,node=1|00:10:00
not-a-job|x|cpu|llm|1|node=1|00:10:00|COMPLETED|2024-06-06T00:00:00|2024-06-06T00:00:00|2024-06-06T00:10:00
700190|lmp-crack|cpu|hpc|thirty-two|node=32|09:00:00|COMPLETED|2024-06-07T00:00:00|2024-06-07T00:00:00|2024-06-07T09:00:00
700195|gmx-membrane|cpu|hpc|16|billing=3072,cpu=3072,gres/gpumem=80G,node=16|20:00:00|RUNNING|2024-06-08T03:00:00|2024-06-08T04:00:00|Unknown
700200|md.sbatch|cpu|hpc|4|billing=768,cpu=768,node=4|02:00:00|COMPLETED|2024-06-08T00:00:00|2024-06-08T00:00:00|2024-06-08T02:00:00
"""  # noqa: E501


def week_jobs() -> list[ir.Job]:
    """The scanned side: the scripts the dump's names come from."""
    return [
        slurm_job(
            "training/pretrain.sbatch",
            name="llm13b-pretrain",
            nodes=32,
            gpus_per_node=8,
            hours=48,
            partition="gpu-h100",
            account="llm",
            exclusive="node",
        ),
        slurm_job(
            "eval/harness.sbatch",
            name="ft-eval",
            gpus_per_node=1,
            hours=2,
            array=6,
            partition="gpu-a100",
            account="llm",
        ),
        slurm_job("hpc/cfd.sbatch", name="wing-les", nodes=64, hours=48, partition="cpu", account="hpc"),
        slurm_job("hpc/post.sbatch", name="cfd-post", nodes=2, hours=3, partition="cpu", account="hpc"),
        slurm_job("hpc/gmx.sbatch", name="gmx-membrane", nodes=16, hours=24, partition="cpu", account="hpc"),
        slurm_job("hpc/md.sbatch", nodes=4, hours=4, partition="cpu", account="hpc"),  # no --job-name
        slurm_job("ops/cleanup.sbatch", name="nightly-cleanup", hours=1, partition="cpu", account="ops"),
        slurm_job(
            "ops/scrontab.txt",
            job_id="ops/scrontab.txt@6",
            kind="scrontab",
            name="nightly-cleanup",
            hours=1,
            partition="cpu",
            account="ops",
            schedule="0 2 * * *",
        ),
        slurm_job(
            "vision/vit.sbatch",
            name="vit-l-inat",
            gpus_per_node=8,
            hours=36,
            partition="gpu-a100",
            account="vision",
        ),
        slurm_job("data/verify.sbatch", name="tok-verify", hours=0.5, partition="cpu", account="llm"),
        wrapper("pipelines/run.sh"),
        k8s_job("serving/vllm.yaml", kind="Deployment", name="vllm"),
    ]


@pytest.fixture(scope="module")
def week() -> AccountingFile:
    return parse_sacct(SACCT_WEEK, "sacct-week.txt")


def test_sacct_reads_jobs_not_steps(week: AccountingFile) -> None:
    assert week.format == SACCT
    by_id = {r.job_id: r for r in week.records}
    # job lines only: steps repeat the allocation of their job
    assert not any("." in job_id for job_id in by_id)
    assert week.steps == 12
    first = by_id["700101"]
    assert (first.name, first.account, first.partition, first.state) == (
        "llm13b-pretrain",
        "llm",
        "gpu-h100",
        "TIMEOUT",
    )
    assert (first.nodes, first.gpus, first.elapsed_s) == (32, 256, 48 * 3600 + 36)
    assert by_id["700130"].state == "CANCELLED"  # "CANCELLED by 7001"
    # the job still running counts what it used so far; gres/gpumem is memory, not GPUs
    assert (by_id["700195"].state, by_id["700195"].gpus, by_id["700195"].hours) == ("RUNNING", 0, 20.0)


def test_sacct_arrays_het_jobs_and_reruns(week: AccountingFile) -> None:
    runs: dict[str, set[str]] = {}
    for r in week.records:
        runs.setdefault(r.name, set()).add(r.run)
    assert runs["ft-eval"] == {"700110"}  # three tasks that ran, one array
    assert len([r for r in week.records if r.name == "ft-eval"]) == 3
    assert runs["wing-les"] == {"700120"}  # both het parts, one run
    assert sum(r.nodes for r in week.records if r.name == "wing-les") == 64
    # a scrontab job keeps its id: each of its lines (sacct --duplicates) is a run of its own
    assert runs["nightly-cleanup"] == {"700140", "700140#1"}
    # never held nodes: the cancelled array remainder and the pending next cron run
    assert week.not_started == 2


def test_sacct_bad_lines_are_counted_with_a_reason(week: AccountingFile) -> None:
    reasons = {s.line: s.reason for s in week.bad}
    assert reasons == {
        29: "12 fields where the header has 11",  # a '|' inside the job name
        30: "Elapsed 'soon' is not [days-]hours:minutes:seconds",
        31: "7 fields where the header has 11",  # the dump was cut off
        32: "job id 'not-a-job' is not a Slurm job id",
        33: "AllocNodes 'thirty-two' is not a number",
    }
    assert all(s.path == "sacct-week.txt" for s in week.bad)


def test_sacct_field_variants() -> None:
    # NNodes instead of AllocNodes, ElapsedRaw seconds, ReqTRES only, and --parsable's trailing '|'
    text = (
        "JobIDRaw|JobName|Account|Partition|NNodes|ElapsedRaw|ReqTRES|State|\n"
        "9001|train|llm|gpu|2|7200|billing=16,cpu=16,gres/gpu:h100=16,node=2|COMPLETED|\n"
        "9001.batch|batch|llm||1|7200|cpu=8,node=1|COMPLETED|\n"
    )
    [record] = parse_sacct(text, "a").records
    assert (record.nodes, record.gpus, record.elapsed_s) == (2, 16, 7200)  # typed GPU counts add up
    # nothing but CPU time: the run time is CPUTimeRAW over the CPUs; node= in AllocTRES gives nodes
    cpu_only = "JobID|JobName|AllocCPUS|CPUTimeRAW|AllocTRES\n42|prep|64|230400|cpu=64,node=1\n"
    [prep] = parse_sacct(cpu_only, "b").records
    assert (prep.nodes, prep.elapsed_s) == (1, 3600)
    # Start and End are the last resort
    times = "JobID|JobName|AllocNodes|Start|End\n43|prep|1|2024-06-03T00:00:00|2024-06-03T00:30:00\n"
    assert parse_sacct(times, "c").records[0].elapsed_s == 1800


def test_sacct_second_header_from_an_appended_dump() -> None:
    one = "JobID|JobName|AllocNodes|ElapsedRaw\n1|a|1|60\n"
    two = "JobID|JobName|ElapsedRaw|AllocNodes|Account\n2|b|120|3|llm\n"
    records = parse_sacct(one + two, "joined").records
    assert [(r.name, r.nodes, r.elapsed_s, r.account) for r in records] == [
        ("a", 1, 60, None),
        ("b", 3, 120, "llm"),
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("1|train|gpu|2|01:00:00\n", "no sacct header line"),  # sacct --noheader
        ("JobID|Partition|AllocNodes\n1|gpu|2\n", "no JobName column"),
        ("JobID|JobName|AllocNodes\n1|a|1\nJobID|Elapsed\n", "(header at line 3)"),
    ],
)
def test_sacct_unusable_files(text: str, message: str) -> None:
    with pytest.raises(AccountingError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_sacct(text, "x.txt")


def test_format_is_told_by_content() -> None:
    assert parse_accounting(SACCT_WEEK, "anything.json").format == SACCT
    assert parse_accounting(json.dumps(job_list([])), "anything.txt").format == Format.KUBERNETES
    with pytest.raises(AccountingError, match="neither sacct"):
        parse_accounting("ClusterName=nw1\n", "slurm.conf")
    with pytest.raises(AccountingError, match="not valid JSON at line 1"):
        parse_accounting("{not json", "jobs.json")
    with pytest.raises(AccountingError, match="without an 'items' list"):
        parse_accounting('{"kind": "Status"}', "jobs.json")


@settings(max_examples=150, deadline=None)
@given(st.lists(st.text(alphabet="0123456789_+.[]-|:TabcZ ,=/%²٣", max_size=60), max_size=12))
def test_sacct_never_crashes_on_junk_lines(lines: list[str]) -> None:
    header = "JobID|JobName|Partition|Account|AllocNodes|AllocTRES|Elapsed|State|Start|End\n"
    result = parse_sacct(header + "\n".join(lines), "junk")
    assert len(result.records) + len(result.bad) + result.steps + result.not_started <= len(lines)


# ---------------------------------------------------------------------------
# kubectl get jobs -A -o json


def kube_job(
    name: str,
    *,
    namespace: str = "batch",
    start: str | None = "2024-06-05T12:30:03Z",
    end: str | None = "2024-06-05T12:36:44Z",
    failed: str | None = None,
    parallelism: Any = 1,
    completions: Any = 1,
    gpus: Any = None,
    queue: str | None = None,
    owner: tuple[str, str, str] | None = None,
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
) -> dict[str, Any]:
    """One item of `kubectl get jobs -A -o json`, with the fields a real one has around the ones read."""
    resources: dict[str, Any] = {"requests": {"cpu": "1", "memory": "2Gi"}}
    if gpus is not None:
        resources["requests"]["nvidia.com/gpu"] = gpus
        resources["limits"] = {"nvidia.com/gpu": gpus}
    meta: dict[str, Any] = {
        "name": name,
        "namespace": namespace,
        "uid": f"uid-{name}",
        "labels": {"batch.kubernetes.io/job-name": name, **(labels or {})},
    }
    if queue:
        meta["labels"]["kueue.x-k8s.io/queue-name"] = queue
    if annotations:
        meta["annotations"] = annotations
    if owner:
        kind, owner_name, uid = owner
        meta["ownerReferences"] = [
            {"apiVersion": "batch/v1", "kind": kind, "name": owner_name, "uid": uid, "controller": True}
        ]
    status: dict[str, Any] = {}
    if start:
        status["startTime"] = start
    if end and not failed:
        status["completionTime"] = end
        status["succeeded"] = completions
        status["conditions"] = [{"type": "Complete", "status": "True", "lastTransitionTime": end}]
    elif end and failed:
        status["failed"] = 1
        status["conditions"] = [
            {"type": "Failed", "status": "True", "reason": failed, "lastTransitionTime": end},
        ]
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": meta,
        "spec": {
            "parallelism": parallelism,
            "completions": completions,
            "backoffLimit": 2,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "main", "image": "registry/x:1", "resources": resources}],
                }
            },
        },
        "status": status,
    }


def job_list(items: list[Any]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "List", "items": items, "metadata": {"resourceVersion": ""}}


CRON_TIME = "batch.kubernetes.io/cronjob-scheduled-timestamp"
HISTORY = job_list(
    [
        kube_job(
            "eval-report-28626510",
            queue="cpu-queue",
            owner=("CronJob", "eval-report", "c1"),
            failed="DeadlineExceeded",
            end="2024-06-05T13:00:03Z",
        ),
        kube_job("eval-report-28627950", queue="cpu-queue", owner=("CronJob", "eval-report", "c1")),
        # owner references stripped by an export tool: the name suffix still tells the CronJob
        kube_job("release-backup-28628880", annotations={CRON_TIME: "2024-06-07T04:00:00Z"}),
        kube_job(
            "vit-b-sweep-k8s",
            queue="a100-queue",
            parallelism=8,
            completions=48,
            gpus=1,
            start="2024-06-03T09:00:00Z",
            end="2024-06-04T23:00:00Z",
        ),
        # one JobSet run: two replicated jobs, one run
        kube_job(
            "bert-ft-workers-0", owner=("JobSet", "bert-ft", "js1"), gpus=8, parallelism=2, completions=2
        ),
        kube_job("bert-ft-launcher-0", owner=("JobSet", "bert-ft", "js1")),
        kube_job(
            "llm13b-batch-generate", owner=("RayJob", "llm13b-batch-generate", "r1"), queue="a100-queue"
        ),
        kube_job("embed-docs-2024w24", start=None, end=None, queue="a100-queue"),  # suspended by Kueue
        kube_job("embed-docs-2024w23", end=None, queue="a100-queue"),  # still running at export time
        kube_job("adhoc-x7k2p", namespace="research", gpus=2),  # generateName, no scanned job
        "not an object",
        kube_job("broken", parallelism="four"),
        {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "eval-report"}},
    ]
)


@pytest.fixture(scope="module")
def history() -> AccountingFile:
    return parse_kubectl_jobs(json.dumps(HISTORY, indent=4), "jobs.json")


def test_kubectl_reads_finished_jobs(history: AccountingFile) -> None:
    by_name = {r.name: r for r in history.records}
    failed = by_name["eval-report-28626510"]
    assert (failed.state, failed.elapsed_s, failed.owner, failed.owner_kind) == (
        "TIMEOUT",
        1800,
        "eval-report",
        "CronJob",
    )
    assert (failed.account, failed.partition) == ("batch", "cpu-queue")
    sweep = by_name["vit-b-sweep-k8s"]
    assert (sweep.pods, sweep.gpus, sweep.hours, sweep.nodes) == (8, 8, 38.0, 0)
    assert by_name["release-backup-28628880"].owner_kind == "CronJob"  # from the annotation
    assert history.not_started == 1 and history.unfinished == 1
    runs = {r.run for r in history.records if r.owner == "bert-ft"}
    assert runs == {"batch/bert-ft@js1"}


def test_kubectl_bad_items_are_counted_with_a_reason(history: AccountingFile) -> None:
    assert [s.reason for s in history.bad] == [
        "item 11: not an object",
        "item 12: spec.parallelism is 'four', not a count",
        "item 13: a CronJob, not a Job: only Jobs carry run times",
    ]


@settings(max_examples=100, deadline=None)
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=8),
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
        max_leaves=20,
    )
)
def test_kubectl_never_crashes_on_odd_items(item: object) -> None:
    result = parse_kubectl_jobs(json.dumps(job_list([item, kube_job("ok")])), "odd.json")
    assert [r.name for r in result.records] == ["ok"] or len(result.records) == 2


# ---------------------------------------------------------------------------
# Matching


def history_jobs() -> list[ir.Job]:
    return [
        k8s_job(
            "k/eval-report.yaml", kind="CronJob", name="eval-report", namespace="batch", schedule="30 7 * * *"
        ),
        k8s_job(
            "k/backup.yaml", kind="CronJob", name="release-backup", namespace="batch", schedule="0 4 * * *"
        ),
        k8s_job("k/sweep.yaml", name="vit-b-sweep-k8s", namespace="batch", indexed=48, gpus_per_pod=1),
        k8s_job("k/bert.yaml", kind="JobSet", name="bert-ft", namespace="batch"),
        k8s_job(
            "k/ray.yaml",
            kind="RayJob",
            name="llm13b-batch-generate",
            namespace="batch",
            replicas=2,
            gpus_per_pod=8,
            queue="a100-queue",
        ),
        k8s_job("k/embed.yaml", name="embed-docs-2024w23", namespace="batch", queue="a100-queue"),
        k8s_job("k/pt.yaml", kind="PyTorchJob", name="bert-pt", namespace="batch"),
    ]


def test_sacct_matching(week: AccountingFile) -> None:
    match = match_usage(week_jobs(), [week], SITE)
    matched = {u.job_id: u for u in match.jobs}
    assert set(matched) == {
        "training/pretrain.sbatch",
        "eval/harness.sbatch",
        "hpc/cfd.sbatch",
        "hpc/post.sbatch",
        "hpc/gmx.sbatch",
        "hpc/md.sbatch",  # no --job-name: sacct shows the script's file name
        "ops/scrontab.txt@6",
    }
    pretrain = matched["training/pretrain.sbatch"]
    # 32 nodes x (48 h 36 s + 36 h), 256 GPUs over the same hours
    assert (pretrain.runs, pretrain.allocations, pretrain.node_hours, pretrain.gpu_hours) == (
        2,
        2,
        2688.32,
        21506.56,
    )
    assert pretrain.states == (("FAILED", 1), ("TIMEOUT", 1))
    assert (pretrain.nodes, pretrain.gpus_per_node, pretrain.partition) == (32, 8, "gpu-h100")
    # array tasks: 1.5 + 0.25 + 1 h on one node with one GPU each
    harness = matched["eval/harness.sbatch"]
    assert (harness.runs, harness.allocations, harness.node_hours, harness.gpu_hours) == (1, 3, 2.75, 2.75)
    assert matched["hpc/cfd.sbatch"].node_hours == 640.0  # het parts: (48 + 16) x 10 h
    # the scrontab entry takes the records; the script it runs shares the name and is counted once
    assert matched["ops/scrontab.txt@6"].runs == 2
    assert match.shared == (("ops/cleanup.sbatch", "ops/scrontab.txt@6"),)
    # wrappers and Kubernetes jobs are not flagged: no sacct record could show them; vit-l-inat ran
    # under another account only, so not as the scanned (vision) job
    assert match.never_ran == ("data/verify.sbatch", "vision/vit.sbatch")


def test_account_must_agree_and_unmatched_names_are_listed(week: AccountingFile) -> None:
    match = match_usage(week_jobs(), [week], SITE)
    unmatched = {(u.name, u.account): u for u in match.unmatched}
    assert set(unmatched) == {("vit-l-inat", "llm"), ("shardlist", "llm"), ("interactive", "vision")}
    vit = unmatched[("vit-l-inat", "llm")]
    assert vit.reason == "a scanned job has this name but account vision"
    assert (vit.node_hours, vit.gpu_hours, vit.first) == (36.0, 288.0, "sacct-week.txt:25")
    assert unmatched[("interactive", "vision")].reason == "no scanned job has this name"
    assert match.unmatched[0].name == "vit-l-inat"  # the largest first


def test_partition_breaks_ties_between_namesakes() -> None:
    text = "JobID|JobName|Account|Partition|AllocNodes|ElapsedRaw\n1|train|llm|gpu-a100|1|3600\n"
    jobs = [
        slurm_job("a/train.sbatch", name="train", partition="gpu-h100", account="llm"),
        slurm_job("b/train.sbatch", name="train", partition="gpu-a100", account="llm"),
    ]
    match = match_usage(jobs, [parse_sacct(text, "d")], SITE)
    assert [u.job_id for u in match.jobs] == ["b/train.sbatch"]
    assert match.shared == ()  # not a tie: the partition decided


def test_kubernetes_matching(history: AccountingFile) -> None:
    match = match_usage(history_jobs(), [history], SITE)
    matched = {u.job_id: u for u in match.jobs}
    assert set(matched) == {
        "k/eval-report.yaml#0",
        "k/backup.yaml#0",
        "k/sweep.yaml#0",
        "k/bert.yaml#0",
        "k/ray.yaml#0",
    }
    report = matched["k/eval-report.yaml#0"]
    assert (report.runs, report.states, report.partition) == (2, (("COMPLETED", 1), ("TIMEOUT", 1)), "cpu")
    # 8 pods with one GPU each fill one 8-GPU node for 38 h
    sweep = matched["k/sweep.yaml#0"]
    assert (sweep.node_hours, sweep.gpu_hours, sweep.partition) == (38.0, 304.0, "gpu-a100")
    assert matched["k/bert.yaml#0"].runs == 1 and matched["k/bert.yaml#0"].allocations == 2
    # the RayJob's Job is its submitter: the size is the RayJob's (2 x 8 GPUs), the time the Job's
    ray = matched["k/ray.yaml#0"]
    assert (ray.nodes, ray.gpus_per_node, ray.gpu_hours) == (2, 8, round(16 * 401 / 3600, 2))
    # the running Job is not a record; PyTorchJobs leave no Job behind, so they are not flagged
    assert match.never_ran == ("k/embed.yaml#0",)
    assert [(u.name, u.account, u.gpu_hours) for u in match.unmatched] == [("adhoc-x7k2p", "research", 0.22)]


def test_long_dumps_are_scaled_to_the_demand_window() -> None:
    fortnight = (
        "JobID|JobName|AllocNodes|ElapsedRaw|Start|End\n"
        "1|train|2|36000|2024-06-03T00:00:00|2024-06-03T10:00:00\n"
        "2|train|2|36000|2024-06-16T00:00:00|2024-06-16T10:00:00\n"
    )
    match = match_usage([slurm_job("t.sbatch", name="train", nodes=2)], [parse_sacct(fortnight, "f")], SITE)
    [usage] = match.jobs
    assert usage.scaled and usage.node_hours == 20.0  # 40 node-h over 14 days, for one 7-day window
    assert match.windows == (("f", "2024-06-03T00:00:00", "2024-06-16T10:00:00", 0.5),)


# ---------------------------------------------------------------------------
# The plan


def test_accounted_demand_replaces_the_estimate_and_weights_capacity(week: AccountingFile) -> None:
    jobs = week_jobs()
    estimated = build_plan(jobs, Direction.TO_KUBERNETES, SITE)
    accounted = build_plan(jobs, Direction.TO_KUBERNETES, SITE, usage=[week])
    need = {d.job_id: d for d in accounted.demands}
    assert need["training/pretrain.sbatch"].node_hours == 2688.32
    assert need["training/pretrain.sbatch"].basis.startswith("accounted: 2 runs, 2 allocations")
    assert "the script estimate was 1536 node-h" in need["training/pretrain.sbatch"].basis
    assert need["ops/cleanup.sbatch"].node_hours == 0.0  # counted under the scrontab entry
    assert need["data/verify.sbatch"].basis.endswith("did not run in the accounting window")
    # the cpu partition's moved and remaining node-hours now come from the dump
    before = {c.partition: c for c in estimated.phases[-1].capacity}
    after = {c.partition: c for c in accounted.phases[-1].capacity}
    assert after["cpu"].remaining_node_hours != before["cpu"].remaining_node_hours
    for phase in accounted.phases[1:]:
        for cap in phase.capacity:
            assert cap.source_nodes + cap.target_nodes == cap.total_nodes
    warnings = "\n".join(accounted.warnings)
    assert "accounting sacct-week.txt: 5 unreadable records skipped (line 29:" in warnings
    assert "ran but are not in the scanned tree" in warnings and "vit-l-inat (llm, gpu-a100" in warnings
    assert "2 scanned jobs did not run in the accounting window" in warnings
    assert "ops/cleanup.sbatch has the same name as ops/scrontab.txt@6" in warnings


def test_plan_json_usage_section_is_deterministic(week: AccountingFile, history: AccountingFile) -> None:
    jobs = week_jobs() + history_jobs()
    text = plan_json(build_plan(jobs, Direction.TO_KUBERNETES, SITE, usage=[week, history]))
    doc = json.loads(text)
    usage = doc["usage"]
    assert [f["path"] for f in usage["files"]] == ["sacct-week.txt", "jobs.json"]
    assert usage["files"][0] | {"window": None} == {
        "path": "sacct-week.txt",
        "format": "sacct",
        "records": 15,
        "runs": 12,
        "steps_left_out": 12,
        "not_started": 2,
        "unfinished": 0,
        "unreadable": 5,
        "window": None,
        "scale": 1.0,
    }
    assert usage["unreadable_total"] == 8 and len(usage["unreadable"]) == 8
    status = {j["id"]: j["demand"]["accounting"]["status"] for j in doc["jobs"] if "demand" in j}
    assert status["training/pretrain.sbatch"] == "matched"
    assert status["ops/cleanup.sbatch"] == "credited-to-other"
    assert status["data/verify.sbatch"] == "did-not-run"
    assert status["pipelines/run.sh"] == "not-covered"
    pretrain = next(j for j in doc["jobs"] if j["id"] == "training/pretrain.sbatch")
    assert pretrain["demand"]["accounting"] == {
        "status": "matched",
        "runs": 2,
        "allocations": 2,
        "states": {"FAILED": 1, "TIMEOUT": 1},
        "files": ["sacct-week.txt"],
        "scaled": False,
    }
    for seed in range(3):
        random.Random(seed).shuffle(jobs)
        assert plan_json(build_plan(jobs, Direction.TO_KUBERNETES, SITE, usage=[week, history])) == text


def test_a_plan_without_accounting_has_no_usage_section() -> None:
    doc = build_plan(week_jobs(), Direction.TO_KUBERNETES, SITE).to_dict()
    assert "usage" not in doc and "inventory" not in doc
    assert all("accounting" not in j.get("demand", {}) for j in doc["jobs"])


# ---------------------------------------------------------------------------
# The command line, on the sample site and the sample dumps


SAMPLE = CORPUS / "sample-site"
SACCT_SAMPLE = CORPUS / "accounting" / "sacct-2024w23.txt"
KUBECTL_SAMPLE = CORPUS / "accounting" / "kubectl-jobs.json"


def migrate(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from migrate.cli import main; main()", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=180,
    )


def dump_node_hours(path: Path, job_name: str) -> float:
    """Node-hours of one job name, added up straight from the dump's job lines (not through migrate)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    columns = lines[0].split("|")
    total = 0.0
    for line in lines[1:]:
        row = dict(zip(columns, line.split("|"), strict=True))
        if row["JobName"] != job_name or "." in row["JobID"]:
            continue
        days, _, clock = row["Elapsed"].rpartition("-")
        h, m, s = (int(x) for x in clock.split(":"))
        total += int(row["AllocNodes"]) * ((int(days or 0) * 24 + h) + m / 60 + s / 3600)
    return round(total, 2)


def test_cli_plan_weights_demand_by_the_dump() -> None:
    res = migrate(
        "plan",
        "corpus/sample-site",
        "--to",
        "kubernetes",
        "--accounting",
        "corpus/accounting/sacct-2024w23.txt",
        "--inventory",
        "corpus/cluster/slurm.conf",
        "--format",
        "json",
    )
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    jobs = {j["id"]: j for j in doc["jobs"]}
    pretrain = jobs["corpus/sample-site/training/pretrain_llm13b.sbatch"]["demand"]
    assert pretrain["node_hours"] == dump_node_hours(SACCT_SAMPLE, "llm13b-pretrain") == 4271.17
    assert pretrain["accounting"]["runs"] == 3
    cfd = jobs["corpus/sample-site/hpc/cfd_openfoam_64n.sbatch"]["demand"]
    assert cfd["node_hours"] == dump_node_hours(SACCT_SAMPLE, "wing-les")
    unmatched = {(u["name"], u["account"]) for u in doc["usage"]["unmatched"]}
    assert unmatched == {("interactive", "vision"), ("interactive", "llm"), ("hf-download", "llm")}
    assert any("ran but are not in the scanned tree" in w for w in doc["warnings"])
    assert "corpus/sample-site/sweeps/vit_lr_sweep.sbatch" in doc["usage"]["never_ran"]
    # slurm.conf agrees with migrate.yaml: only the include lines it did not follow are worth a warning
    assert [w for w in doc["warnings"] if w.startswith(("inventory", "partition"))] == [
        "inventory corpus/cluster/slurm.conf: include lines not followed: "
        "/etc/slurm/timeouts.conf (line 24), /etc/slurm/topology-blocks.conf (line 25)"
    ]
    assert [p["name"] for p in doc["inventory"][0]["partitions"]] == ["gpu-h100", "gpu-a100", "cpu", "debug"]


def test_cli_report_shows_what_ran_outside_the_tree(tmp_path: Path) -> None:
    res = migrate(
        "report",
        str(SAMPLE),
        "--to",
        "kubernetes",
        "--out",
        str(tmp_path),
        "--accounting",
        str(SACCT_SAMPLE),
        "--accounting",
        str(KUBECTL_SAMPLE),
    )
    assert res.returncode == 0, res.stderr
    report = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "ran but are not in the scanned tree" in report and "reindex-embeddings-manual" in report
    doc = json.loads((tmp_path / "plan.json").read_text(encoding="utf-8"))
    assert doc["usage"]["matched_jobs"] == 21


def test_cli_bad_accounting_file_is_one_line(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("jobs that ran last week: lots\n")
    for args in (("--accounting", str(notes)), ("--accounting", str(tmp_path / "missing.txt"))):
        res = migrate("plan", str(SAMPLE), "--to", "kubernetes", *args)
        assert res.returncode == 2
        assert res.stderr.count("\n") == 1 and "Traceback" not in res.stderr
    assert "no such file" in res.stderr and "--accounting" in res.stderr
