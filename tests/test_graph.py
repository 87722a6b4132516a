"""The job graph: storage grouping, every edge type, dependency resolution, analyses, exports."""

from __future__ import annotations

import io
import json
import random
import time
from pathlib import Path

import networkx as nx
import pytest
from ir_builders import (
    bind,
    component,
    dep,
    env,
    k8s_job,
    launcher,
    pvc,
    read,
    slurm_job,
    submit,
    synthetic_site,
    touch,
    wrapper,
    write,
)

from migrate import ir
from migrate.graph import model as gm
from migrate.graph.builder import (
    analyze,
    build_graph,
    centrality,
    dependency_cycles,
    filesystem_usage,
    migration_units,
    shared_filesystems,
    to_graphml,
    to_json,
    to_node_link,
)
from migrate.graph.storage import StorageResolver, canonical_path, patterns_overlap, split_path
from migrate.site.config import parse_site_config

SITE = parse_site_config(
    {
        "site": "test",
        "filesystems": [
            {"prefix": "/fsx", "kind": "lustre", "pvc": "fsx-pvc"},
            {"prefix": "/home", "kind": "nfs", "pvc": ["home-pvc"]},
            {"prefix": "/scratch", "kind": "local"},
            {"prefix": "/data/projects", "kind": "gpfs", "name": "projects"},
        ],
        "partitions": {"gpu": {"nodes": 8, "gpus_per_node": 8, "queue": "gpu-queue"}},
    }
)


def edges_of(graph: nx.MultiDiGraph, kind: str) -> list[tuple[str, str, dict[str, object]]]:
    return sorted(
        ((u, v, d) for u, v, d in graph.edges(data=True) if d["type"] == kind), key=lambda e: (e[0], e[1])
    )


def short(node: str) -> str:
    """Job nodes by their IR id; other nodes keep their typed id."""
    kind, name = gm.split_node(node)
    return name if kind == gm.JOB else node


def pairs(graph: nx.MultiDiGraph, kind: str) -> set[tuple[str, str]]:
    return {(short(u), short(v)) for u, v, _ in edges_of(graph, kind)}


# ---------------------------------------------------------------------------
# Storage: paths into file systems


@pytest.mark.parametrize(
    ("raw", "variables", "expected"),
    [
        ("/fsx/ckpt/run1/", {}, "/fsx/ckpt/run1"),
        ("/fsx/./ckpt//run1/../run2", {}, "/fsx/ckpt/run2"),
        ("'/fsx/eval/out.json'", {}, "/fsx/eval/out.json"),
        ("/gpfs/raw/clickstream/dt=$DAY", {}, "/gpfs/raw/clickstream"),  # cut before what changes per run
        ("/fsx/logs/%x-%j.out", {}, "/fsx/logs"),
        ("/fsx/eval/nightly/*.json", {}, "/fsx/eval/nightly"),
        ("$CKPT_DIR/latest", {"CKPT_DIR": "/fsx/checkpoints/neox"}, "/fsx/checkpoints/neox/latest"),
        ("${RUN}/x", {"RUN": "$BASE/run1", "BASE": "/lustre/proj"}, "/lustre/proj/run1/x"),
        ("${SCRATCH}/tmp/a", {}, "$SCRATCH/tmp/a"),
        ("~/venvs/x", {}, "$HOME/venvs/x"),
        ("$OUT", {}, None),
        ("relative/path", {}, None),
        ("pvc:fsx-pvc/models", {}, "pvc:fsx-pvc/models"),
    ],
)
def test_canonical_path(raw: str, variables: dict[str, str], expected: str | None) -> None:
    assert canonical_path(raw, variables) == expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("/fsx/ckpt/vit-$SLURM_JOB_ID/last.pt", ("/fsx/ckpt", "vit-[0-9]*")),
        ("/fsx/logs/%x-%j.out", ("/fsx/logs", "*-[0-9]*.out")),
        ("/fsx/c/lr${LR}_wd${WD}/x", ("/fsx/c", "lr*_wd*")),
        ("/fsx/m/previous-$(date +%Y%m%d)", ("/fsx/m", "previous-*")),
        ("/fsx/a/b/", ("/fsx/a/b", None)),
        ("$OUT/x", (None, None)),
    ],
)
def test_split_path_keeps_the_changing_component_as_a_pattern(
    raw: str, expected: tuple[str | None, str | None]
) -> None:
    assert split_path(raw, {}) == expected


def test_patterns_overlap() -> None:
    assert not patterns_overlap("vit-b-*", "vit-l-inat-*")
    assert patterns_overlap("*.json", "step-*.json")
    assert not patterns_overlap("*.json", "*.txt")
    assert patterns_overlap("lr*", "[0-9]*") and patterns_overlap(None, "x*")


def test_paths_group_into_file_systems() -> None:
    job = slurm_job(
        "a.sbatch",
        storage=[
            write("/fsx/ckpt/run1", 3),
            read("/lustre/proj/in", 4),
            read("/data/projects/abc/in", 5),  # site config prefix deeper than the top level
            read("/data/other", 6),  # unknown top level: its own file system
            read("/mnt/nas1/set", 7),  # /mnt/<name> names the file system
            read("$SCRATCH/a", 8),
            read("/tmp/x", 9),  # node-local: not shared storage
            read("/dev/shm/y", 10),
            read("/usr/lib/z", 11),
        ],
    )
    locs = StorageResolver(SITE).locations(job)
    assert {(loc.directory, loc.filesystem.name, loc.filesystem.origin) for loc in locs} == {
        ("/fsx/ckpt/run1", "/fsx", "site-config"),
        ("/lustre/proj/in", "/lustre", "well-known"),
        ("/data/projects/abc/in", "projects", "site-config"),
        ("/data/other", "/data", "top-level"),
        ("/mnt/nas1/set", "/mnt/nas1", "top-level"),
        ("$SCRATCH/a", "$SCRATCH", "well-known"),
    }


def test_file_paths_meet_at_their_directory() -> None:
    [loc] = StorageResolver(SITE).locations(slurm_job("a", storage=[write("/fsx/models/detr.onnx")]))
    assert (loc.path, loc.directory, loc.depth) == ("/fsx/models/detr.onnx", "/fsx/models", 1)


def test_pvc_mapped_by_site_config_joins_the_slurm_file_system() -> None:
    serving = k8s_job(
        "serve.yaml",
        kind="Deployment",
        name="vllm",
        mounts=[pvc("fsx-pvc", "/models", read_only=True), pvc("cache", "/cache")],
        storage=[read("/models/llm/release", 30), read("/cache/hf", 31), read("/app/config.yaml", 32)],
    )
    trainer = slurm_job("train.sbatch", storage=[write("/fsx/llm/release/model.safetensors", 12)])
    graph = build_graph([serving, trainer], SITE)
    assert graph.has_edge("job:serve.yaml#0", "path:/fsx/llm/release", "reads")
    assert graph.has_edge("job:serve.yaml#0", "path:/fsx", "reads")  # the read-only mount itself
    # an unmapped claim is its own file system; a path under no volume is inside the image
    assert graph.has_edge("job:serve.yaml#0", "path:pvc:cache/hf", "reads")
    assert graph.nodes["fs:pvc:cache"]["origin"] == "pvc"
    assert not any(n.startswith("path:/app") for n in graph)
    # the Slurm writer and the Kubernetes reader meet on the same node
    assert graph.nodes["path:/fsx/llm/release"]["filesystem"] == "fs:/fsx"
    assert pairs(graph, gm.PRODUCES_FOR) == {("train.sbatch", "serve.yaml#0")}


def test_container_mounts_translate_to_host_paths() -> None:
    job = slurm_job(
        "a.sbatch",
        containers=[
            ir.Container(
                image="img", mounts=(bind("/lustre/proj", "/data"), ir.Mount("/dev/shm", kind="emptyDir"))
            )
        ],
        storage=[write("/data/out", 5), write("/dev/shm/tmp", 6)],
    )
    dirs = {loc.directory for loc in StorageResolver(SITE).locations(job)}
    assert dirs == {"/lustre/proj", "/lustre/proj/out"}


def test_pvc_reference_written_by_a_reader() -> None:
    job = k8s_job("j.yaml", name="j", storage=[touch("pvc:fsx-pvc/datasets", 3), touch("pvc:other/x", 4)])
    dirs = {loc.directory for loc in StorageResolver(SITE).locations(job)}
    assert dirs == {"/fsx/datasets", "pvc:other/x"}


def test_nfs_volume_is_its_own_file_system() -> None:
    job = k8s_job(
        "j.yaml",
        name="j",
        mounts=[ir.Mount("/shared", source="nas:/export/ml", kind="nfs")],
        storage=[read("/shared/x")],
    )
    locs = StorageResolver(SITE).locations(job)
    assert {(loc.directory, loc.filesystem.name) for loc in locs} == {
        ("nfs:nas:/export/ml", "nfs:nas:/export/ml"),
        ("nfs:nas:/export/ml/x", "nfs:nas:/export/ml"),
    }


# ---------------------------------------------------------------------------
# Nodes and each edge type


def test_every_edge_type_with_evidence() -> None:
    train = slurm_job(
        "jobs/train.sbatch",
        name="train",
        nodes=2,
        gpus_per_node=8,
        partition="gpu",
        storage=[read("/fsx/data/tok", 10), write("/fsx/ckpt/a", 11), touch("/fsx/code/repo", 12)],
        modules=["cuda/12.4"],
        software_envs=[("conda", "llm")],
        monitoring=["wandb"],
        stdout="/fsx/logs/train-%j.out",
        line=2,
        containers=[ir.Container(image="nvcr.io/pytorch:24.05", line=20)],
    )
    resume = slurm_job(
        "jobs/resume.sbatch",
        storage=[read("/fsx/ckpt/a", 7), write("/fsx/ckpt/a", 8)],
        deps=[dep("afterok", "123", line=4)],
    )
    prep = slurm_job("jobs/prep.sbatch", storage=[write("/fsx/data/tok/shard0", 5)])
    chain = wrapper(
        "jobs/submit.sh",
        submit("prep.sbatch", "p", line=3),
        submit("train.sbatch", None, [dep("afterok", "$p")], line=4),
    )
    pod = k8s_job("k8s/job.yaml", name="embed", queue="gpu-queue", mounts=[pvc("fsx-pvc", "/fsx")])
    etcd = k8s_job(
        "k8s/etcd.yaml",
        kind="Deployment",
        name="etcd",
        services=[ir.Service("etcd", 1, (2379,), addresses=("etcd-svc",))],
    )
    elastic = k8s_job(
        "k8s/elastic.yaml", name="elastic", command=["torchrun", "--rdzv_endpoint=etcd-svc:2379", "t.py"]
    )
    graph = build_graph([train, resume, prep, chain, pod, etcd, elastic], SITE)

    def edge(u: str, v: str, key: str) -> dict[str, object]:
        return dict(graph.get_edge_data(u, v, key))

    t = "job:jobs/train.sbatch"
    assert edge(t, "path:/fsx/data/tok", "reads")["evidence"] == "jobs/train.sbatch:10"
    assert edge(t, "path:/fsx/ckpt/a", "writes")["evidence"] == "jobs/train.sbatch:11"
    assert edge(t, "path:/fsx/code/repo", "uses")["evidence"] == "jobs/train.sbatch:12"
    assert (
        edge("job:jobs/resume.sbatch", "path:/fsx/ckpt/a", "readwrite")["evidence"] == "jobs/resume.sbatch:7"
    )
    log = edge(t, "path:/fsx/logs", "writes")
    assert log["log"] is True and log["origin"] == "output"
    assert edge("path:/fsx/ckpt/a", "fs:/fsx", "on_filesystem")["type"] == "on_filesystem"
    assert edge(t, "monitor:wandb", "reports_to")["evidence"] == "jobs/train.sbatch:3"
    assert edge(t, "image:nvcr.io/pytorch:24.05", "uses_image")["evidence"] == "jobs/train.sbatch:20"
    assert edge(t, "module:cuda/12.4", "uses_module")["type"] == "uses_module"
    assert graph.nodes["module:conda:llm"]["software"] == "conda"
    assert edge(t, "queue:gpu", "submits_to")["evidence"] == "jobs/train.sbatch:2"
    assert graph.nodes["queue:gpu"]["mirror"] == "gpu-queue"
    assert graph.nodes["queue:gpu-queue"]["scheduler"] == "kubernetes"
    assert graph.nodes["queue:gpu-queue"]["mirror"] == "gpu"
    deps = edge(t, "job:jobs/prep.sbatch", "depends_on:afterok")
    assert (deps["dep"], deps["via"], deps["evidence"]) == ("afterok", "wrapper", "jobs/submit.sh:4")
    assert edge("job:jobs/submit.sh", t, "submits")["evidence"] == "jobs/submit.sh:4"
    flow = edge("job:jobs/prep.sbatch", t, "produces_for")
    assert flow["path"] == "/fsx/data/tok"
    assert flow["evidence"] == "jobs/prep.sbatch:5" and flow["consumer_evidence"] == "jobs/train.sbatch:10"
    external = edge("job:jobs/resume.sbatch", "external:slurm-job:123", "depends_on:afterok")
    assert external["evidence"] == "jobs/resume.sbatch:4"
    assert "not scannable" in str(graph.nodes["external:slurm-job:123"]["note"])
    helper = edge("job:k8s/elastic.yaml#0", "job:k8s/etcd.yaml#0", "uses_helper")
    assert (helper["role"], helper["note"]) == ("rendezvous store", "--rdzv_endpoint etcd-svc:2379")
    assert helper["evidence"] == "k8s/elastic.yaml:1"
    # every edge has a type from the documented list; every node a type matching its id prefix
    assert {d["type"] for _, _, d in graph.edges(data=True)} == set(gm.EDGE_TYPES)
    for node, data in graph.nodes(data=True):
        assert data["type"] == gm.split_node(node)[0]
        assert data["type"] in gm.NODE_TYPES
    job_node = graph.nodes[t]
    assert {k: job_node[k] for k in ("kind", "nodes", "gpus", "path", "line", "format", "label")} == {
        "kind": "sbatch",
        "nodes": 2,
        "gpus": 16,
        "path": "jobs/train.sbatch",
        "line": 2,
        "format": "slurm",
        "label": "train",
    }


def test_first_line_is_the_evidence_whatever_the_order() -> None:
    job = slurm_job("a.sbatch", storage=[read("/fsx/d", 30), read("/fsx/d/", 12), read("/fsx/d", 20)])
    graph = build_graph([job])
    assert graph.get_edge_data("job:a.sbatch", "path:/fsx/d", "reads")["evidence"] == "a.sbatch:12"


# ---------------------------------------------------------------------------
# Dependencies


def test_wrapper_chain_resolved_through_variables() -> None:
    chain = wrapper(
        "site/pipelines/run.sh",
        submit("prep.sbatch", "jid1", line=7),
        submit("train.sbatch", "jid2", [dep("afterok", "$jid1")], line=10),
        submit("eval.sbatch", "jid3", [dep("afterany", "${jid2}")], line=13),
        submit("$(dirname $0)/report.sbatch", None, [dep("afterok", "$jid2", "$jid3")], line=16),
        submit("../other/cleanup.sbatch", None, [dep("afternotok", "$jid2")], line=18),
    )
    jobs = [
        chain,
        slurm_job("site/pipelines/prep.sbatch"),
        slurm_job("site/pipelines/train.sbatch"),
        slurm_job("site/pipelines/eval.sbatch"),
        slurm_job("site/pipelines/report.sbatch"),
        slurm_job("site/other/cleanup.sbatch"),
        slurm_job("elsewhere/train.sbatch"),  # same file name, different folder: must not match
    ]
    graph = build_graph(jobs)
    p = "site/pipelines/"
    assert pairs(graph, gm.DEPENDS_ON) == {
        (p + "train.sbatch", p + "prep.sbatch"),
        (p + "eval.sbatch", p + "train.sbatch"),
        (p + "report.sbatch", p + "train.sbatch"),
        (p + "report.sbatch", p + "eval.sbatch"),
        ("site/other/cleanup.sbatch", p + "train.sbatch"),
    }
    kinds = {(gm.split_node(u)[1], d["dep"]) for u, _, d in edges_of(graph, gm.DEPENDS_ON)}
    assert ("site/other/cleanup.sbatch", "afternotok") in kinds
    assert (p + "eval.sbatch", "afterany") in kinds
    assert len(pairs(graph, gm.SUBMITS)) == 5


def test_wrapper_variable_reassigned_later_uses_the_latest_capture() -> None:
    chain = wrapper(
        "w/run.sh",
        submit("a.sbatch", "jid", line=2),
        submit("b.sbatch", None, [dep("afterok", "$jid")], line=3),
        submit("c.sbatch", "jid", line=4),
        submit("d.sbatch", None, [dep("afterok", "$jid")], line=5),
    )
    jobs = [chain] + [slurm_job(f"w/{n}.sbatch") for n in "abcd"]
    assert pairs(build_graph(jobs), gm.DEPENDS_ON) == {
        ("w/b.sbatch", "w/a.sbatch"),
        ("w/d.sbatch", "w/c.sbatch"),
    }


def test_wrapper_alias_assignments_are_followed() -> None:
    # jid=$(sbatch a); dep=$jid; sbatch --dependency=afterok:$dep b
    chain = ir.replace(
        wrapper(
            "w/run.sh",
            submit("a.sbatch", "jid", line=2),
            submit("b.sbatch", "jid", line=6),
            submit("c.sbatch", None, [dep("afterok", "$dep")], line=8),
        ),
        environment=(ir.EnvVar("dep", "$jid", line=3), ir.EnvVar("dep", "${jid}", line=7)),
    )
    jobs = [chain] + [slurm_job(f"w/{n}.sbatch") for n in "abc"]
    assert pairs(build_graph(jobs), gm.DEPENDS_ON) == {("w/c.sbatch", "w/b.sbatch")}


def test_script_paths_resolved_by_tail_when_the_scan_root_differs() -> None:
    chain = wrapper(
        "repo/pipelines/go.sh",
        submit("$REPO/training/train.sbatch", "t", line=3),
        submit("/home/ops/repo/eval/eval.sbatch", None, [dep("afterok", "$t")], line=4),
    )
    jobs = [chain, slurm_job("repo/training/train.sbatch"), slurm_job("repo/eval/eval.sbatch")]
    graph = build_graph(jobs)
    assert pairs(graph, gm.DEPENDS_ON) == {("repo/eval/eval.sbatch", "repo/training/train.sbatch")}
    assert pairs(graph, gm.SUBMITS) == {
        ("repo/pipelines/go.sh", "repo/training/train.sbatch"),
        ("repo/pipelines/go.sh", "repo/eval/eval.sbatch"),
    }


def test_unresolvable_submissions_become_external_nodes() -> None:
    chain = wrapper(
        "w/run.sh",
        submit(None, "wrapjob", line=2),  # sbatch --wrap
        submit(None, None, line=3),
        submit("missing.sbatch", "m", line=4),
        submit(
            "a.sbatch",
            None,
            [dep("afterok", "$wrapjob"), dep("afterok", "$nobody"), dep("afterok", "$m")],
            line=5,
        ),
    )
    graph = build_graph([chain, slurm_job("w/a.sbatch")])
    assert pairs(graph, gm.DEPENDS_ON) == {
        ("w/a.sbatch", "external:wrap:w/run.sh:2"),
        ("w/a.sbatch", "external:unresolved:$nobody"),
        ("w/a.sbatch", "external:script:missing.sbatch"),
    }
    assert "external:wrap:w/run.sh:3" in graph  # each --wrap job is its own node
    assert graph.nodes["external:script:missing.sbatch"]["note"] == "script not among the scanned files"


def test_self_resubmission_is_noted_not_a_cycle() -> None:
    job = slurm_job("spinup.sh", submits=[submit("$0", line=30)])
    nxt = slurm_job(
        "seg.sh", submits=[submit("next.sbatch", None, [dep("afterok", "$SLURM_JOB_ID")], line=9)]
    )
    graph = build_graph([job, nxt, slurm_job("next.sbatch")])
    assert graph.nodes["job:spinup.sh"]["self_resubmit"] is True
    assert pairs(graph, gm.DEPENDS_ON) == {("next.sbatch", "seg.sh")}
    assert dependency_cycles(graph) == []


def test_singleton_chains_jobs_of_one_name_and_account() -> None:
    jobs = [
        slurm_job("a/pretrain_1.sbatch", name="pretrain", account="llm", deps=[dep("singleton", line=3)]),
        slurm_job("a/pretrain_2.sbatch", name="pretrain", account="llm", deps=[dep("singleton", line=3)]),
        slurm_job(
            "a/pretrain_3.sbatch", name="pretrain", account="llm"
        ),  # does not wait, but others wait for it
        slurm_job(
            "b/pretrain.sbatch", name="pretrain", account="vision", deps=[dep("singleton")]
        ),  # other account
        slurm_job("c/alone.sbatch", name="alone", deps=[dep("singleton")]),
    ]
    graph = build_graph(jobs)
    assert pairs(graph, gm.DEPENDS_ON) == {
        ("a/pretrain_2.sbatch", "a/pretrain_1.sbatch"),
        ("a/pretrain_1.sbatch", "a/pretrain_3.sbatch"),
    }
    assert {d["dep"] for _, _, d in edges_of(graph, gm.DEPENDS_ON)} == {"singleton"}
    assert dependency_cycles(graph) == []


def test_jobset_depends_on_is_internal() -> None:
    jobset = k8s_job(
        "js.yaml",
        kind="JobSet",
        name="llm",
        components=[component("initializer"), component("trainer", replicas=8, gpus_per_pod=8)],
        deps=[dep("dependsOn", "initializer", status="Complete", line=40)],
    )
    graph = build_graph([jobset, k8s_job("other.yaml", name="initializer")])
    assert edges_of(graph, gm.DEPENDS_ON) == []
    assert graph.nodes["job:js.yaml#0"]["internal_dependencies"] == "after initializer (Complete)"


def test_volcano_jobflow_targets_match_job_names() -> None:
    prep = k8s_job("flow.yaml", name="preprocess", namespace="vision", doc=0)
    train = k8s_job(
        "flow.yaml", name="train", namespace="vision", doc=1, deps=[dep("dependsOn", "preprocess", line=60)]
    )
    evaluate = k8s_job(
        "flow.yaml", name="evaluate", namespace="vision", doc=2, deps=[dep("dependsOn", "train", line=63)]
    )
    same_name_elsewhere = k8s_job("other.yaml", name="preprocess", namespace="nlp")
    graph = build_graph([prep, train, evaluate, same_name_elsewhere])
    assert pairs(graph, gm.DEPENDS_ON) == {("flow.yaml#1", "flow.yaml#0"), ("flow.yaml#2", "flow.yaml#1")}
    assert {d["via"] for _, _, d in edges_of(graph, gm.DEPENDS_ON)} == {"name"}


def test_numeric_and_unknown_directive_targets_are_external() -> None:
    job = slurm_job(
        "p.sbatch",
        deps=[
            dep("afterok", "77001", "77002", line=3),
            dep("aftercorr", "4242_7", line=4),
            dep("afterany", "$PREV", line=5),
        ],
    )
    graph = build_graph([job])
    assert pairs(graph, gm.DEPENDS_ON) == {
        ("p.sbatch", "external:slurm-job:77001"),
        ("p.sbatch", "external:slurm-job:77002"),
        ("p.sbatch", "external:slurm-job:4242"),
        ("p.sbatch", "external:unresolved:$PREV"),
    }
    [unit] = migration_units(graph)
    assert unit.externals == (
        "external:slurm-job:4242",
        "external:slurm-job:77001",
        "external:slurm-job:77002",
        "external:unresolved:$PREV",
    )


def test_dependency_cycles_are_found() -> None:
    jobs = [
        slurm_job("a", name="a", deps=[dep("afterok", "b")]),
        slurm_job("b", name="b", deps=[dep("afterok", "c")]),
        slurm_job("c", name="c", deps=[dep("afterany", "a")]),
        slurm_job("d", name="d", deps=[dep("afterok", "e")]),
        slurm_job("e", name="e", deps=[dep("afterok", "d")]),
        slurm_job("f", name="f", deps=[dep("afterok", "a")]),
    ]
    graph = build_graph(jobs)
    assert dependency_cycles(graph) == [["a", "b", "c"], ["d", "e"]]
    units = {u.jobs: u.cyclic for u in migration_units(graph)}
    assert units == {("a", "b", "c", "f"): True, ("d", "e"): True}


# ---------------------------------------------------------------------------
# Producer -> consumer


def test_producer_consumer_meets_at_the_longest_common_directory() -> None:
    jobs = [
        slurm_job("writer", storage=[write("/fsx/prep/coco/train", 3)]),
        slurm_job("reads_parent", storage=[read("/fsx/prep", 4)]),
        slurm_job("reads_child", storage=[read("/fsx/prep/coco/train/shard-0001.tar", 5)]),
        slurm_job("reads_sibling", storage=[read("/fsx/prep/imagenet", 6)]),
        slurm_job("reads_root", storage=[read("/fsx", 7)]),  # the file-system root links nobody
        slurm_job("reads_log", storage=[read("/fsx/prep/coco/train/logs/run.log", 8)]),
        slurm_job("reads_other_fs", storage=[read("/lustre/prep/coco/train", 9)]),
    ]
    graph = build_graph(jobs)
    flows = {(gm.split_node(v)[1], d["path"]) for _, v, d in edges_of(graph, gm.PRODUCES_FOR)}
    assert flows == {("reads_parent", "/fsx/prep"), ("reads_child", "/fsx/prep/coco/train")}


def test_per_run_directories_meet_only_what_they_can_be() -> None:
    jobs = [
        slurm_job("vit_train", storage=[write("/fsx/ckpt/vision/vit-l-$SLURM_JOB_ID", 3)]),
        slurm_job("sweep_reader", storage=[read("/fsx/ckpt/vision/sweeps/run1", 4)]),  # a sibling: no
        slurm_job("vision_reader", storage=[read("/fsx/ckpt/vision", 5)]),  # the parent: yes
        slurm_job("vit_reader", storage=[read("/fsx/ckpt/vision/vit-l-123/last.pt", 6)]),  # a match: yes
        slurm_job("k8s_reader", storage=[read("/fsx/ckpt/vision/vit-l-k8s", 7)]),  # job ids are digits: no
        slurm_job("nightly_writer", storage=[write("/fsx/eval/nightly/$RUN.json", 3)]),
        slurm_job("nightly_reader", storage=[read("/fsx/eval/nightly/*.json", 4)]),
        slurm_job("txt_reader", storage=[read("/fsx/eval/nightly/*.txt", 4)]),
        slurm_job("top_json_reader", storage=[read("/fsx/eval/*.json", 4)]),  # nightly/ is not a .json file
    ]
    graph = build_graph(jobs)
    assert pairs(graph, gm.PRODUCES_FOR) == {
        ("vit_train", "vision_reader"),
        ("vit_train", "vit_reader"),
        ("nightly_writer", "nightly_reader"),
    }


def test_logs_and_node_local_storage_never_link_jobs() -> None:
    jobs = [
        slurm_job("a", stdout="/fsx/logs/a-%j.out", storage=[write("/scratch/job/tmp", 3)]),
        slurm_job("b", storage=[read("/fsx/logs", 4), read("/scratch/job/tmp", 5)]),
    ]
    assert edges_of(build_graph(jobs, SITE), gm.PRODUCES_FOR) == []


def test_a_job_reading_its_own_output_is_not_linked_to_itself() -> None:
    job = slurm_job("a", storage=[read("/fsx/ckpt/a", 3), write("/fsx/ckpt/a", 4)])
    assert edges_of(build_graph([job]), gm.PRODUCES_FOR) == []


def test_two_way_data_flow_stays_one_unit_without_a_dependency_cycle() -> None:
    jobs = [
        slurm_job("a", storage=[write("/fsx/x/a", 3), read("/fsx/x/b", 4)]),
        slurm_job("b", storage=[write("/fsx/x/b", 3), read("/fsx/x/a", 4)]),
    ]
    graph = build_graph(jobs)
    assert dependency_cycles(graph) == []
    [unit] = migration_units(graph)
    assert unit.order == ("a", "b") and not unit.cyclic


# ---------------------------------------------------------------------------
# Units, shared storage, centrality


def site_jobs() -> list[ir.Job]:
    return [
        wrapper(
            "p/run.sh",
            submit("prep.sbatch", "a", line=2),
            submit("train.sbatch", None, [dep("afterok", "$a")], line=3),
        ),
        slurm_job(
            "p/prep.sbatch", storage=[write("/fsx/data/tok", 4)], monitoring=["prometheus-pushgateway"]
        ),
        slurm_job(
            "p/train.sbatch",
            storage=[read("/fsx/data/tok", 5), write("/fsx/ckpt/llm", 6)],
            monitoring=["wandb"],
        ),
        k8s_job(
            "s/vllm.yaml",
            kind="Deployment",
            name="vllm",
            mounts=[pvc("fsx-pvc", "/m")],
            storage=[read("/m/ckpt/llm/release")],
        ),
        slurm_job(
            "h/md.sbatch", storage=[write("/fsx/md/run1", 3), read("/home/u/inputs", 4)], monitoring=["wandb"]
        ),
        slurm_job("h/post.sbatch", storage=[read("/fsx/md/run1", 3)], deps=[dep("afterok", "99")]),
        slurm_job("o/lonely.sbatch", storage=[read("/home/u/notes", 3)]),
        k8s_job(
            "k/report.yaml", kind="CronJob", name="report", mounts=[pvc("home-pvc", "/home", read_only=True)]
        ),
    ]


def test_migration_units() -> None:
    graph = build_graph(site_jobs(), SITE)
    units = migration_units(graph)
    assert [(u.id, u.jobs) for u in units] == [
        ("U001", ("h/md.sbatch", "h/post.sbatch")),
        ("U002", ("k/report.yaml#0",)),
        ("U003", ("o/lonely.sbatch",)),
        ("U004", ("p/prep.sbatch", "p/run.sh", "p/train.sbatch", "s/vllm.yaml#0")),
    ]
    every = [job for u in units for job in u.jobs]
    assert sorted(every) == sorted(j.id for j in site_jobs()) and len(every) == len(set(every))
    pipeline = units[3]
    assert pipeline.order == ("p/run.sh", "p/prep.sbatch", "p/train.sbatch", "s/vllm.yaml#0")
    assert pipeline.formats == ("kubernetes", "slurm")
    assert pipeline.filesystems == ("fs:/fsx",)
    assert units[0].externals == ("external:slurm-job:99",)


def test_units_are_deterministic_across_shuffled_input() -> None:
    jobs = site_jobs() + synthetic_site(30)
    reference = build_graph(jobs, SITE)
    expected_units = migration_units(reference)
    expected_json = to_json(reference)
    rng = random.Random(7)
    for _ in range(5):
        shuffled = jobs[:]
        rng.shuffle(shuffled)
        graph = build_graph(shuffled, SITE)
        assert migration_units(graph) == expected_units
        assert to_json(graph) == expected_json


def test_detached_jobs_do_not_glue_units() -> None:
    jobs = [
        slurm_job("llm/train", storage=[write("/fsx/ckpt/llm", 3)]),
        slurm_job("vision/train", storage=[write("/fsx/ckpt/vision", 3)]),
        slurm_job("ops/cleanup", storage=[touch("/fsx/ckpt", 5)]),  # reads everyone's checkpoints
        slurm_job("ops/report", storage=[read("/fsx/ckpt/llm", 4)], deps=[dep("afterok", "cleanup")]),
    ]
    jobs[2] = ir.replace(jobs[2], name="cleanup")
    graph = build_graph(jobs)
    assert [u.jobs for u in migration_units(graph)] == [
        ("llm/train", "ops/cleanup", "ops/report", "vision/train")
    ]
    split = migration_units(graph, detached=["ops/cleanup"])
    # the dependency of report on cleanup still holds them together; the data flow no longer does
    assert [u.jobs for u in split] == [("llm/train", "ops/cleanup", "ops/report"), ("vision/train",)]
    assert [u.jobs for u in analyze(graph, detached=["ops/cleanup"]).units] == [u.jobs for u in split]
    assert edges_of(graph, gm.PRODUCES_FOR)  # the edges themselves stay in the graph


def test_shared_file_systems_across_units() -> None:
    graph = build_graph(site_jobs(), SITE)
    usage = {fs.label: fs for fs in filesystem_usage(graph)}
    assert usage["/fsx"].units == ("U001", "U004") and usage["/fsx"].shared
    assert usage["/fsx"].formats == ("kubernetes", "slurm")
    assert usage["/home"].units == ("U001", "U002", "U003")
    assert [fs.label for fs in shared_filesystems(graph)] == ["/home", "/fsx"]  # most units first


def test_centrality_of_storage_and_monitoring() -> None:
    graph = build_graph(site_jobs(), SITE)
    ranked = centrality(graph)
    top = ranked[0]
    assert (top.node, top.jobs, top.units, top.score) == ("fs:/fsx", 5, 2, 0.625)
    by_node = {c.node: c for c in ranked}
    assert by_node["monitor:wandb"].jobs == 2 and by_node["monitor:wandb"].units == 2
    assert by_node["monitor:wandb"].score == 0.25
    assert {c.type for c in ranked} == {"fs", "path", "monitor"}
    assert ranked == sorted(ranked, key=lambda c: (-c.jobs, -c.units, c.node))


def test_analyze_bundles_everything() -> None:
    graph = build_graph(site_jobs(), SITE)
    result = analyze(graph)
    assert result.cycles == ()
    assert [u.id for u in result.units] == ["U001", "U002", "U003", "U004"]
    assert [fs.label for fs in result.shared_filesystems] == ["/home", "/fsx"]
    assert result.unit_by_job()["s/vllm.yaml#0"] == "U004"


def test_empty_input() -> None:
    graph = build_graph([])
    assert graph.number_of_nodes() == 0
    assert analyze(graph).units == ()
    assert json.loads(to_json(graph))["nodes"] == []


# ---------------------------------------------------------------------------
# Exports


def assert_same_graph(a: nx.MultiDiGraph, b: nx.MultiDiGraph) -> None:
    assert dict(a.nodes(data=True)) == dict(b.nodes(data=True))
    assert sorted(a.edges(keys=True, data=True), key=str) == sorted(b.edges(keys=True, data=True), key=str)


def test_graphml_round_trip(tmp_path: Path) -> None:
    graph = build_graph(site_jobs() + synthetic_site(3), SITE)
    path = tmp_path / "graph.graphml"
    to_graphml(graph, str(path))
    back = nx.read_graphml(path, force_multigraph=True)
    assert_same_graph(graph, back)
    buffer = io.BytesIO()
    to_graphml(graph, buffer)
    assert buffer.getvalue() == path.read_bytes()


def test_json_round_trip() -> None:
    graph = build_graph(site_jobs() + synthetic_site(3), SITE)
    text = to_json(graph)
    data = json.loads(text)
    assert [n["id"] for n in data["nodes"]] == sorted(n["id"] for n in data["nodes"])
    assert data["graph"]["schema"] == gm.GRAPH_SCHEMA
    back = nx.node_link_graph(data, edges="links")
    assert isinstance(back, nx.MultiDiGraph)
    assert_same_graph(graph, back)
    assert to_node_link(graph) == data


# ---------------------------------------------------------------------------
# Scale


def test_twenty_thousand_jobs_build_in_a_few_seconds(record_property: pytest.RecordProperty) -> None:
    jobs = synthetic_site(4000)  # 20,000 jobs
    started = time.perf_counter()
    graph = build_graph(jobs, SITE)
    built = time.perf_counter() - started
    result = analyze(graph)
    total = time.perf_counter() - started
    record_property("build_seconds", round(built, 2))
    record_property("build_and_analyze_seconds", round(total, 2))
    assert graph.graph["jobs"] == 20_000
    assert len(result.units) == 4000
    assert all(len(u.jobs) == 5 for u in result.units)
    assert [fs.label for fs in result.shared_filesystems] == ["/fsx"]


def test_launchers_and_env_do_not_break_the_build() -> None:
    job = slurm_job("a", launchers=[launcher("srun", "python", "x.py", mpi="pmix")], environment=env(A="1"))
    assert build_graph([job]).number_of_nodes() == 1


def test_depends_on_prefixed_parts_stay_inside_and_job_ids_resolve() -> None:
    from migrate.graph.deps import resolve_dependencies

    src = ir.SourceRef("flow.yaml", "kubernetes")
    parts = (ir.Component(name="init"), ir.Component(name="workers"))
    inner = ir.Dependency("dependsOn", ("replicatedJob:init",), status="Complete")
    jobset = ir.Job(
        "flow.yaml#JobSet/train", src, "JobSet", name="train", components=parts, dependencies=(inner,)
    )
    step = ir.Job("flow.yaml#VolcanoJob/prep", src, "VolcanoJob", name="prep")
    flow_dep = ir.Dependency("dependsOn", ("flow.yaml#VolcanoJob/prep",))
    after = ir.Job("flow.yaml#VolcanoJob/eval", src, "VolcanoJob", name="eval", dependencies=(flow_dep,))
    resolved = resolve_dependencies([jobset, step, after])
    assert dict(resolved.internal) == {"flow.yaml#JobSet/train": ("after init (Complete)",)}
    assert [(k.dependent, k.prerequisite) for k in resolved.links] == [
        ("flow.yaml#VolcanoJob/eval", "flow.yaml#VolcanoJob/prep")
    ]
