"""Strict offline validation of manifests: core kinds, custom resources, metadata."""

from __future__ import annotations

import copy
import json
import re
from importlib import resources
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from migrate.translators.kubernetes.validate import (
    K8S_VERSION,
    Problem,
    SchemaUnavailableError,
    format_path,
    supported_custom_kinds,
    unapplied_core_facts,
    validate_documents,
    validate_object,
    validate_tree,
)

# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------

_PART = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def _parts(path: str) -> list[str | int]:
    return [int(index) if index else key for key, index in _PART.findall(path)]


def _parent(obj: Any, path: str) -> tuple[Any, str | int]:
    parts = _parts(path)
    node = obj
    for part in parts[:-1]:
        node = node[part]
    return node, parts[-1]


def with_value(obj: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    node, last = _parent(out, path)
    node[last] = value
    return out


def without(obj: dict[str, Any], path: str) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    node, last = _parent(out, path)
    del node[last]
    return out


def paths(problems: list[Problem]) -> list[str]:
    return [p.path for p in problems]


def pod(
    name: str = "main", image: str = "ghcr.io/acme/train:1.0", restart: str | None = "Never"
) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": name, "image": image}]}
    if restart:
        spec["restartPolicy"] = restart
    return {"spec": spec}


def meta(name: str) -> dict[str, Any]:
    return {"name": name, "namespace": "team-a"}


# ---------------------------------------------------------------------------
# A minimal valid object per supported kind, and where each kind of mistake goes
# ---------------------------------------------------------------------------

MINIMAL: dict[str, dict[str, Any]] = {
    "Job": {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta("train"), "spec": {"template": pod()}},
    "CronJob": {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": meta("nightly"),
        "spec": {"schedule": "0 2 * * *", "jobTemplate": {"spec": {"template": pod(restart="OnFailure")}}},
    },
    "ConfigMap": {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": meta("scripts"),
        "data": {"run.sh": "echo"},
    },
    "Service": {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": meta("train-headless"),
        "spec": {"selector": {"app": "train"}, "ports": [{"port": 29500, "name": "rdzv"}]},
    },
    "PersistentVolumeClaim": {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": meta("scratch"),
        "spec": {"accessModes": ["ReadWriteMany"], "resources": {"requests": {"storage": "100Gi"}}},
    },
    "Deployment": {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": meta("infer"),
        "spec": {
            "selector": {"matchLabels": {"app": "infer"}},
            "template": {"metadata": {"labels": {"app": "infer"}}, **pod(restart=None)},
        },
    },
    "StatefulSet": {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": meta("db"),
        "spec": {
            "serviceName": "db",
            "selector": {"matchLabels": {"app": "db"}},
            "template": {"metadata": {"labels": {"app": "db"}}, **pod(restart=None)},
        },
    },
    "VolcanoJob": {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": meta("vc-train"),
        "spec": {
            "tasks": [
                {
                    "name": "worker",
                    "replicas": 2,
                    "template": pod(),
                    "policies": [{"event": "PodEvicted", "action": "RestartJob"}],
                }
            ]
        },
    },
    "VolcanoCronJob": {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "CronJob",
        "metadata": meta("vc-nightly"),
        "spec": {
            "schedule": "0 2 * * *",
            "jobTemplate": {"spec": {"tasks": [{"name": "worker", "replicas": 2, "template": pod()}]}},
        },
    },
    "HyperPodPyTorchJob": {
        "apiVersion": "sagemaker.amazonaws.com/v1",
        "kind": "HyperPodPyTorchJob",
        "metadata": meta("hp-train"),
        "spec": {
            "nprocPerNode": "8",
            "replicaSpecs": [{"name": "pods", "replicas": 2, "template": pod("pytorch")}],
            "runPolicy": {"logMonitoringConfiguration": [{"name": "stall", "logPattern": ".*step.*"}]},
        },
    },
    "Workflow": {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Workflow",
        "metadata": {"generateName": "chain-", "namespace": "team-a"},
        "spec": {
            "entrypoint": "chain",
            "templates": [
                {"name": "chain", "dag": {"tasks": [{"name": "a", "template": "run"}]}},
                {
                    "name": "run",
                    "retryStrategy": {"limit": 2},
                    "container": {"image": "ghcr.io/acme/train:1.0"},
                },
            ],
        },
    },
    "WorkflowTemplate": {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "WorkflowTemplate",
        "metadata": meta("library"),
        "spec": {"templates": [{"name": "run", "script": {"image": "python:3.12", "source": "print(1)"}}]},
    },
    "ClusterWorkflowTemplate": {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "ClusterWorkflowTemplate",
        "metadata": {"name": "shared"},
        "spec": {"templates": [{"name": "run", "container": {"image": "busybox"}}]},
    },
    "CronWorkflow": {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "CronWorkflow",
        "metadata": meta("nightly"),
        "spec": {
            "schedules": ["0 2 * * *"],
            "concurrencyPolicy": "Forbid",
            "workflowSpec": {
                "entrypoint": "run",
                "templates": [{"name": "run", "container": {"image": "busybox"}}],
            },
        },
    },
    "JobFlow": {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "JobFlow",
        "metadata": meta("pipeline"),
        "spec": {
            "jobRetainPolicy": "delete",
            "flows": [
                {"name": "prep"},
                {
                    "name": "train",
                    "dependsOn": {"targets": ["prep"]},
                    "patch": {"jobSpec": {"tasks": [{"name": "worker", "replicas": 1, "template": pod()}]}},
                },
            ],
        },
    },
    "JobTemplate": {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "JobTemplate",
        "metadata": meta("prep"),
        "spec": {"tasks": [{"name": "prep", "replicas": 1, "template": pod()}]},
    },
    "JobSet": {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": meta("js-train"),
        "spec": {
            "successPolicy": {"operator": "All"},
            "replicatedJobs": [{"name": "workers", "replicas": 2, "template": {"spec": {"template": pod()}}}],
        },
    },
    "PyTorchJob": {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": meta("pt-train"),
        "spec": {
            "runPolicy": {"cleanPodPolicy": "None"},
            "pytorchReplicaSpecs": {
                "Worker": {"replicas": 2, "restartPolicy": "OnFailure", "template": pod("pytorch")}
            },
        },
    },
    "MPIJob": {
        "apiVersion": "kubeflow.org/v2beta1",
        "kind": "MPIJob",
        "metadata": meta("mpi-train"),
        "spec": {
            "slotsPerWorker": 8,
            "mpiImplementation": "OpenMPI",
            "mpiReplicaSpecs": {
                "Launcher": {"replicas": 1, "template": pod("launcher")},
                "Worker": {"replicas": 2, "template": pod("worker")},
            },
        },
    },
    "TrainJob": {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": meta("tj-train"),
        "spec": {
            "runtimeRef": {"name": "torch-distributed"},
            "trainer": {"numNodes": 2, "env": [{"name": "EPOCHS", "value": "3"}]},
        },
    },
    "RayJob": {
        "apiVersion": "ray.io/v1",
        "kind": "RayJob",
        "metadata": meta("ray-train"),
        "spec": {
            "entrypoint": "python train.py",
            "shutdownAfterJobFinishes": True,
            "rayClusterSpec": {
                "headGroupSpec": {"rayStartParams": {}, "template": pod("ray-head", restart=None)},
                "workerGroupSpecs": [
                    {
                        "groupName": "gpu",
                        "replicas": 2,
                        "rayStartParams": {},
                        "template": pod("ray-worker", restart=None),
                    }
                ],
            },
        },
    },
    "LeaderWorkerSet": {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": meta("sglang"),
        "spec": {
            "replicas": 1,
            "leaderWorkerTemplate": {
                "size": 2,
                "restartPolicy": "RecreateGroupOnPodRestart",
                "leaderTemplate": pod("leader", restart=None),
                "workerTemplate": pod("worker", restart=None),
            },
        },
    },
    "LocalQueue": {
        "apiVersion": "kueue.x-k8s.io/v1beta1",
        "kind": "LocalQueue",
        "metadata": meta("gpu"),
        "spec": {"clusterQueue": "cluster-gpu"},
    },
    "ClusterQueue": {
        "apiVersion": "kueue.x-k8s.io/v1beta1",
        "kind": "ClusterQueue",
        "metadata": {"name": "cluster-gpu"},
        "spec": {
            "namespaceSelector": {},
            "resourceGroups": [
                {
                    "coveredResources": ["cpu", "nvidia.com/gpu"],
                    "flavors": [
                        {
                            "name": "a100",
                            "resources": [
                                {"name": "cpu", "nominalQuota": 256},
                                {"name": "nvidia.com/gpu", "nominalQuota": 32},
                            ],
                        }
                    ],
                }
            ],
        },
    },
    "ResourceFlavor": {
        "apiVersion": "kueue.x-k8s.io/v1beta1",
        "kind": "ResourceFlavor",
        "metadata": {"name": "a100"},
        "spec": {
            "nodeLabels": {"nvidia.com/gpu.product": "A100-SXM4-80GB"},
            "nodeTaints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}],
        },
    },
    "WorkloadPriorityClass": {
        "apiVersion": "kueue.x-k8s.io/v1beta1",
        "kind": "WorkloadPriorityClass",
        "metadata": {"name": "high"},
        "value": 1000,
        "description": "from the Slurm qos 'high'",
    },
    "NodeSet": {
        "apiVersion": "slinky.slurm.net/v1beta1",
        "kind": "NodeSet",
        "metadata": {"name": "slurm-worker-gpu", "namespace": "slurm"},
        "spec": {
            "controllerRef": {"name": "slurm"},
            "replicas": 2,
            "slurmd": {"name": "slurmd", "resources": {"limits": {"nvidia.com/gpu": 8}}},
            "template": {"spec": {"hostname": "gpu-", "nodeSelector": {"pool": "gpu"}}},
        },
    },
    "Controller": {
        "apiVersion": "slinky.slurm.net/v1beta1",
        "kind": "Controller",
        "metadata": {"name": "slurm", "namespace": "slurm"},
        "spec": {
            "clusterName": "hb1",
            "slurmKeyRef": {"name": "slurm-key", "key": "slurm.key"},
            "jwtKeyRef": {"name": "slurm-jwt-key", "key": "jwt.key"},
        },
    },
}

# Where a container of the embedded pod template sits (None: the kind embeds no core object).
EMBEDDED: dict[str, str | None] = {
    "Job": "spec.template.spec.containers[0]",
    "CronJob": "spec.jobTemplate.spec.template.spec.containers[0]",
    "ConfigMap": None,
    "NodeSet": "spec.slurmd",
    "Controller": None,
    "Service": "spec.ports[0]",
    "PersistentVolumeClaim": "spec.resources",
    "Deployment": "spec.template.spec.containers[0]",
    "StatefulSet": "spec.template.spec.containers[0]",
    "VolcanoJob": "spec.tasks[0].template.spec.containers[0]",
    "VolcanoCronJob": "spec.jobTemplate.spec.tasks[0].template.spec.containers[0]",
    "HyperPodPyTorchJob": "spec.replicaSpecs[0].template.spec.containers[0]",
    "JobFlow": "spec.flows[1].patch.jobSpec.tasks[0].template.spec.containers[0]",
    "JobTemplate": "spec.tasks[0].template.spec.containers[0]",
    "JobSet": "spec.replicatedJobs[0].template.spec.template.spec.containers[0]",
    "PyTorchJob": "spec.pytorchReplicaSpecs.Worker.template.spec.containers[0]",
    "MPIJob": "spec.mpiReplicaSpecs.Launcher.template.spec.containers[0]",
    "TrainJob": "spec.trainer.env[0]",
    "RayJob": "spec.rayClusterSpec.workerGroupSpecs[0].template.spec.containers[0]",
    "LeaderWorkerSet": "spec.leaderWorkerTemplate.workerTemplate.spec.containers[0]",
    "LocalQueue": None,
    "ClusterQueue": "spec.namespaceSelector",
    "ResourceFlavor": "spec.nodeTaints[0]",
    "WorkloadPriorityClass": None,
    "Workflow": "spec.templates[1].retryStrategy",
    "WorkflowTemplate": "spec.templates[0].script",
    "ClusterWorkflowTemplate": "spec.templates[0].container",
    "CronWorkflow": "spec.workflowSpec.templates[0]",
}

# Where an unknown field at the top of the spec goes (the object itself for kinds without a spec).
TOP = {"ConfigMap": "", "WorkloadPriorityClass": ""}

WRONG_TYPE: dict[str, tuple[str, Any]] = {
    "Job": ("spec.backoffLimit", "two"),
    "CronJob": ("spec.suspend", "yes"),
    "ConfigMap": ("data.run\\.sh", 5),
    "Service": ("spec.ports[0].port", "http"),
    "PersistentVolumeClaim": ("spec.accessModes", "ReadWriteMany"),
    "Deployment": ("spec.replicas", "3"),
    "StatefulSet": ("spec.serviceName", 7),
    "VolcanoJob": ("spec.minAvailable", "two"),
    "VolcanoCronJob": ("spec.suspend", "yes"),
    "HyperPodPyTorchJob": ("spec.replicaSpecs[0].replicas", "2"),
    "JobFlow": ("spec.flows[1].dependsOn.targets", "prep"),
    "Workflow": ("spec.parallelism", "two"),
    "WorkflowTemplate": ("spec.templates[0].script.source", 7),
    "ClusterWorkflowTemplate": ("spec.templates", "run"),
    "CronWorkflow": ("spec.schedules", "0 2 * * *"),
    "JobTemplate": ("spec.tasks[0].replicas", "1"),
    "JobSet": ("spec.replicatedJobs[0].replicas", "2"),
    "PyTorchJob": ("spec.pytorchReplicaSpecs.Worker.replicas", "2"),
    "MPIJob": ("spec.slotsPerWorker", "8"),
    "TrainJob": ("spec.trainer.numNodes", "2"),
    "RayJob": ("spec.shutdownAfterJobFinishes", "yes"),
    "LeaderWorkerSet": ("spec.leaderWorkerTemplate.size", "2"),
    "LocalQueue": ("spec.clusterQueue", 5),
    "ClusterQueue": ("spec.resourceGroups[0].coveredResources", "cpu"),
    "ResourceFlavor": ("spec.nodeLabels", "gpu"),
    "WorkloadPriorityClass": ("value", "high"),
    "NodeSet": ("spec.replicas", "two"),
    "Controller": ("spec.clusterName", 7),
}

BAD_ENUM: dict[str, tuple[str, str]] = {
    "Job": ("spec.completionMode", "Sometimes"),
    "CronJob": ("spec.concurrencyPolicy", "Sometimes"),
    "Service": ("spec.type", "Internal"),
    "PersistentVolumeClaim": ("spec.accessModes[0]", "ReadWriteSometimes"),
    "Deployment": ("spec.template.spec.containers[0].imagePullPolicy", "Sometimes"),
    "StatefulSet": ("spec.podManagementPolicy", "Random"),
    "VolcanoJob": ("spec.tasks[0].policies[0].action", "Explode"),
    "VolcanoCronJob": ("spec.concurrencyPolicy", "Sometimes"),
    "HyperPodPyTorchJob": ("spec.runPolicy.logMonitoringConfiguration[0].operator", "above"),
    "JobFlow": ("spec.jobRetainPolicy", "keep"),
    "Workflow": ("spec.templates[1].retryStrategy.retryPolicy", "Sometimes"),
    "CronWorkflow": ("spec.concurrencyPolicy", "Sometimes"),
    "JobTemplate": ("spec.tasks[0].topologyPolicy", "any"),
    "JobSet": ("spec.successPolicy.operator", "Some"),
    "PyTorchJob": ("spec.runPolicy.cleanPodPolicy", "Always"),
    "MPIJob": ("spec.mpiImplementation", "MVAPICH"),
    "TrainJob": ("spec.managedBy", "me"),
    "RayJob": ("spec.submissionMode", "Batch"),
    "LeaderWorkerSet": ("spec.leaderWorkerTemplate.restartPolicy", "RecreatePod"),
    "LocalQueue": ("spec.stopPolicy", "Pause"),
    "ClusterQueue": ("spec.queueingStrategy", "FIFO"),
    "ResourceFlavor": ("spec.nodeTaints[0].effect", "NoRun"),
    "NodeSet": ("spec.scalingMode", "ReplicaSet"),
}

REQUIRED: dict[str, str] = {
    "Workflow": "spec.templates[0].dag.tasks",
    "WorkflowTemplate": "spec.templates[0].script.source",
    "ClusterWorkflowTemplate": "spec",
    "CronWorkflow": "spec.workflowSpec",
    "Job": "spec.template.spec.containers",
    "CronJob": "spec.schedule",
    "ConfigMap": "metadata.name",
    "Service": "spec.ports",
    "PersistentVolumeClaim": "spec.accessModes",
    "Deployment": "spec.selector",
    "StatefulSet": "spec.selector",
    "VolcanoJob": "spec.tasks",
    "VolcanoCronJob": "spec.jobTemplate",
    "HyperPodPyTorchJob": "spec.replicaSpecs[0].name",
    "JobFlow": "spec.flows[0].name",
    "JobTemplate": "spec.tasks",
    "JobSet": "spec.replicatedJobs[0].template",
    "PyTorchJob": "spec.pytorchReplicaSpecs",
    "MPIJob": "spec.mpiReplicaSpecs.Launcher",
    "TrainJob": "spec.runtimeRef.name",
    "RayJob": "spec.rayClusterSpec.headGroupSpec",
    "LeaderWorkerSet": "spec.leaderWorkerTemplate.workerTemplate",
    "LocalQueue": "spec.clusterQueue",
    "ClusterQueue": "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota",
    "ResourceFlavor": "spec.nodeTaints[0].key",
    "WorkloadPriorityClass": "value",
    "NodeSet": "spec.controllerRef",
    "Controller": "spec",
}

KINDS = sorted(MINIMAL)


def _set(obj: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    if path == "data.run\\.sh":  # a key with a dot in it
        out = copy.deepcopy(obj)
        out["data"]["run.sh"] = value
        return out
    return with_value(obj, path, value)


def _shown(path: str) -> str:
    return 'data["run.sh"]' if path == "data.run\\.sh" else path


# ---------------------------------------------------------------------------
# Per-kind cases
# ---------------------------------------------------------------------------


def test_every_custom_kind_has_a_minimal_case() -> None:
    covered = {(o["apiVersion"], o["kind"]) for o in MINIMAL.values()}
    assert set(supported_custom_kinds()) <= covered


@pytest.mark.parametrize("label", KINDS)
def test_minimal_object_passes(label: str) -> None:
    assert validate_object(MINIMAL[label]) == []


@pytest.mark.parametrize("label", KINDS)
def test_unknown_field_at_top_of_spec(label: str) -> None:
    top = TOP.get(label, "spec")
    problems = validate_object(with_value(MINIMAL[label], f"{top}.bogusField" if top else "bogusField", 1))
    expected = f"{top}.bogusField" if top else "bogusField"
    assert paths(problems) == [expected]
    assert problems[0].message == "unknown field 'bogusField'"
    assert problems[0].rule == "schema"


@pytest.mark.parametrize("label", [k for k in KINDS if EMBEDDED[k]])
def test_unknown_field_inside_embedded_core_object(label: str) -> None:
    where = EMBEDDED[label]
    assert where
    problems = validate_object(with_value(MINIMAL[label], f"{where}.gpus", 1))
    assert paths(problems) == [f"{where}.gpus"]


@pytest.mark.parametrize("label", KINDS)
def test_wrong_type(label: str) -> None:
    where, value = WRONG_TYPE[label]
    problems = validate_object(_set(MINIMAL[label], where, value))
    assert paths(problems) == [_shown(where)]
    assert problems[0].message.startswith("expected ")


@pytest.mark.parametrize("label", sorted(BAD_ENUM))
def test_bad_enum_value(label: str) -> None:
    where, value = BAD_ENUM[label]
    problems = validate_object(with_value(MINIMAL[label], where, value))
    assert paths(problems) == [where]
    assert "is not one of" in problems[0].message


@pytest.mark.parametrize("label", KINDS)
def test_missing_required_field(label: str) -> None:
    where = REQUIRED[label]
    problems = validate_object(without(MINIMAL[label], where))
    assert where in paths(problems)
    assert any("missing required field" in p.message for p in problems if p.path == where)


@pytest.mark.parametrize("label", KINDS)
def test_invalid_metadata_name(label: str) -> None:
    problems = validate_object(with_value(MINIMAL[label], "metadata.name", "Train_Job"))
    assert "metadata.name" in paths(problems)
    named = [p for p in problems if p.path == "metadata.name"]
    assert named[0].rule == "metadata"
    assert named[0].kind == MINIMAL[label]["kind"] and named[0].name == "Train_Job"


# ---------------------------------------------------------------------------
# The core layer agrees with kubernetes-validate itself
# ---------------------------------------------------------------------------

CORE = [k for k in KINDS if "." not in MINIMAL[k]["apiVersion"].rpartition("/")[0]]


@pytest.mark.parametrize("label", CORE)
def test_core_minimal_objects_pass_kubernetes_validate(label: str) -> None:
    assert kubernetes_validate.validate(MINIMAL[label], K8S_VERSION, strict=True) == K8S_VERSION


def test_kubernetes_validate_reports_one_error_where_we_report_all() -> None:
    job = with_value(MINIMAL["Job"], "spec.backoffLimitt", 2)
    job = with_value(job, "spec.template.spec.containers[0].gpus", 1)
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(job, K8S_VERSION, strict=True)
    assert paths(validate_object(job)) == ["spec.backoffLimitt", "spec.template.spec.containers[0].gpus"]


def test_other_bundled_versions_and_missing_ones() -> None:
    assert validate_object(MINIMAL["Job"], k8s_version="1.30") == []
    with pytest.raises(SchemaUnavailableError):
        validate_object(MINIMAL["Job"], k8s_version="1.99")


def test_core_facts_apply_to_the_pinned_version() -> None:
    assert unapplied_core_facts() == []


def test_pinned_version_is_bundled() -> None:
    assert f"{K8S_VERSION}.0" in kubernetes_validate.utils.all_versions()


# ---------------------------------------------------------------------------
# Unknown kinds and shapes are problems, never passes
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("api_version", "kind"),
    [
        ("batch.example.com/v1", "Job"),  # would map onto batch/v1 by file name alone
        ("scheduling.volcano.sh/v1beta1", "Queue"),
        ("kubeflow.org/v1", "TFJob"),
        ("v1", "Gizmo"),
    ],
)
def test_unknown_kind_is_a_problem(api_version: str, kind: str) -> None:
    problems = validate_object({"apiVersion": api_version, "kind": kind, "metadata": {"name": "x"}})
    assert [p.message for p in problems] == [
        f"no schema for {kind} ({api_version}) in Kubernetes {K8S_VERSION}"
    ]
    assert problems[0].rule == "unknown-kind"


def test_missing_kind_and_non_objects() -> None:
    assert paths(validate_object({"apiVersion": "v1", "metadata": {"name": "x"}})) == ["kind"]
    assert paths(validate_object({"kind": "Job"})) == ["apiVersion"]
    assert validate_object(["a"])[0].message.startswith("not a Kubernetes object")


def test_v1_list_items_are_checked() -> None:
    bad = with_value(MINIMAL["Service"], "spec.bogus", 1)
    problems = validate_object({"apiVersion": "v1", "kind": "List", "items": [MINIMAL["Job"], bad]})
    assert paths(problems) == ["items[1].spec.bogus"]


# ---------------------------------------------------------------------------
# Error collection and messages
# ---------------------------------------------------------------------------


def test_all_errors_are_collected() -> None:
    job = with_value(MINIMAL["Job"], "spec.backoffLimit", "two")
    job = with_value(job, "spec.template.spec.containers[0].gpus", 1)
    job = with_value(job, "spec.template.spec.containers[0].resources", {"limits": {"memory": "4 GB"}})
    job = with_value(job, "metadata.labels", {"app": "train", "team": "a b"})
    assert paths(validate_object(job)) == [
        "metadata.labels.team",
        "spec.backoffLimit",
        "spec.template.spec.containers[0].gpus",
        "spec.template.spec.containers[0].resources.limits.memory",
    ]


def test_unknown_fields_are_reported_one_by_one() -> None:
    job = with_value(MINIMAL["Job"], "spec.foo", 1)
    job = with_value(job, "spec.bar", 2)
    assert paths(validate_object(job)) == ["spec.bar", "spec.foo"]


@pytest.mark.parametrize("quantity", ["500m", "2", 2, 1.5, "4Gi", "1e3", "100M", ".5"])
def test_good_quantities(quantity: Any) -> None:
    job = with_value(
        MINIMAL["Job"], "spec.template.spec.containers[0].resources", {"requests": {"cpu": quantity}}
    )
    assert validate_object(job) == []


@pytest.mark.parametrize("quantity", ["4 GB", "1.5.2", "ten", "4gi", "", True])
def test_bad_quantities(quantity: Any) -> None:
    job = with_value(
        MINIMAL["Job"], "spec.template.spec.containers[0].resources", {"limits": {"memory": quantity}}
    )
    problems = validate_object(job)
    assert paths(problems) == ["spec.template.spec.containers[0].resources.limits.memory"]
    assert "not a valid quantity" in problems[0].message


def test_enum_inside_a_custom_resource_pod_template() -> None:
    vcjob = with_value(MINIMAL["VolcanoJob"], "spec.tasks[0].template.spec.restartPolicy", "Sometimes")
    problems = validate_object(vcjob)
    assert paths(problems) == ["spec.tasks[0].template.spec.restartPolicy"]


@pytest.mark.parametrize("restart", [None, "Always"])
def test_job_pods_need_on_failure_or_never(restart: str | None) -> None:
    job = copy.deepcopy(MINIMAL["Job"])
    if restart is None:
        del job["spec"]["template"]["spec"]["restartPolicy"]
    else:
        job["spec"]["template"]["spec"]["restartPolicy"] = restart
    assert paths(validate_object(job)) == ["spec.template.spec.restartPolicy"]


def test_jobset_templates_may_leave_restart_policy_to_the_webhook_but_not_always() -> None:
    js = copy.deepcopy(MINIMAL["JobSet"])
    del js["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["restartPolicy"]
    assert validate_object(js) == []
    bad = with_value(js, "spec.replicatedJobs[0].template.spec.template.spec.restartPolicy", "Always")
    assert [p.message for p in validate_object(bad)] == ["a Job's pods need restartPolicy OnFailure or Never"]


def test_deployment_pods_restart_always_and_selector_matches() -> None:
    bad = with_value(MINIMAL["Deployment"], "spec.template.spec.restartPolicy", "Never")
    assert paths(validate_object(bad)) == ["spec.template.spec.restartPolicy"]
    mismatch = with_value(MINIMAL["Deployment"], "spec.selector.matchLabels", {"app": "other"})
    assert [(p.path, p.rule) for p in validate_object(mismatch)] == [("spec.selector", "kind")]


def test_headless_service_needs_no_ports_but_a_normal_one_does() -> None:
    headless = with_value(without(MINIMAL["Service"], "spec.ports"), "spec.clusterIP", "None")
    assert validate_object(headless) == []
    normal = without(headless, "spec.clusterIP")
    assert paths(validate_object(normal)) == ["spec.ports"]


def test_configmap_key_rules() -> None:
    cm = with_value(MINIMAL["ConfigMap"], "data", {"train script.sh": "x", "ok.sh": "y"})
    assert paths(validate_object(cm)) == ['data["train script.sh"]']
    big = with_value(MINIMAL["ConfigMap"], "data", {"blob": "x" * (1024 * 1024 + 1)})
    assert [p.rule for p in validate_object(big)] == ["kind"]


def test_pvc_needs_a_storage_request() -> None:
    pvc = with_value(MINIMAL["PersistentVolumeClaim"], "spec.resources.requests", {"cpu": "1"})
    assert paths(validate_object(pvc)) == ["spec.resources.requests.storage"]


def test_format_path() -> None:
    assert format_path(["spec", "tasks", 0, "template"]) == "spec.tasks[0].template"
    assert (
        format_path(["metadata", "labels", "app.kubernetes.io/name"])
        == 'metadata.labels["app.kubernetes.io/name"]'
    )
    assert format_path([]) == ""


# ---------------------------------------------------------------------------
# Metadata: names, labels, annotations
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("label", "name", "ok"),
    [
        ("Job", "a" * 63, True),
        ("Job", "a" * 64, False),  # job-name label of its pods
        ("ConfigMap", "a" * 64, True),
        ("ConfigMap", "scripts.v2", True),
        ("ConfigMap", "a" * 254, False),
        ("CronJob", "a" * 52, True),
        ("CronJob", "a" * 53, False),
        ("Service", "1st-service", False),  # DNS-1035: a letter first
        ("Service", "svc.with.dots", False),
        ("StatefulSet", "a" * 53, False),
        ("PyTorchJob", "9lives", False),
        ("TrainJob", "tj.v1", False),
        ("RayJob", "r" * 47, True),
        ("RayJob", "r" * 48, False),
        ("LeaderWorkerSet", "l" * 50, True),
        ("LeaderWorkerSet", "l" * 51, False),  # the workers' StatefulSet <name>-0
        ("LeaderWorkerSet", "9lives", False),
        ("LocalQueue", "q" * 64, False),
        ("Deployment", "-infer", False),
        ("Deployment", "Infer", False),
        ("Job", "", False),
    ],
)
def test_name_rules(label: str, name: str, ok: bool) -> None:
    obj = with_value(MINIMAL[label], "metadata.name", name)
    if label in ("Deployment", "StatefulSet"):
        obj = with_value(obj, "spec.selector.matchLabels", {"app": "x"})
        obj = with_value(obj, "spec.template.metadata.labels", {"app": "x"})
    named = [p for p in validate_object(obj) if p.path == "metadata.name"]
    assert (named == []) is ok, named


def test_generate_name_instead_of_name() -> None:
    job = without(MINIMAL["Job"], "metadata.name")
    assert validate_object(with_value(job, "metadata.generateName", "train-")) == []
    assert paths(validate_object(with_value(job, "metadata.generateName", "t" * 60))) == [
        "metadata.generateName"
    ]


def test_missing_name_and_bad_namespace() -> None:
    assert paths(validate_object(without(MINIMAL["Job"], "metadata.name"))) == ["metadata.name"]
    assert paths(validate_object(with_value(MINIMAL["Job"], "metadata.namespace", "Team_A"))) == [
        "metadata.namespace"
    ]


@pytest.mark.parametrize(
    ("labels", "bad"),
    [
        ({"app.kubernetes.io/name": "train", "kueue.x-k8s.io/queue-name": "gpu"}, []),
        ({"": "x"}, [""]),
        ({"/name": "x"}, ["/name"]),
        ({"Example.COM/name": "x"}, ["Example.COM/name"]),
        ({"a" * 64: "x"}, ["a" * 64]),
        ({"app": "-x"}, ["app"]),
        ({"app": "x" * 64}, ["app"]),
        ({"app": ""}, []),
        ({"app": "a b"}, ["app"]),
    ],
)
def test_label_rules(labels: dict[str, str], bad: list[str]) -> None:
    problems = validate_object(with_value(MINIMAL["Job"], "metadata.labels", labels))
    assert paths(problems) == [format_path(["metadata", "labels", k]) for k in bad]


def test_annotation_keys_and_size() -> None:
    ok = {"migrate.dev/source": "jobs/train.sbatch:12", "note": "free text, spaces and all: fine"}
    assert validate_object(with_value(MINIMAL["Job"], "metadata.annotations", ok)) == []
    bad = validate_object(with_value(MINIMAL["Job"], "metadata.annotations", {"bad key": "x"}))
    assert paths(bad) == ['metadata.annotations["bad key"]']
    huge = validate_object(with_value(MINIMAL["Job"], "metadata.annotations", {"a": "x" * 300_000}))
    assert paths(huge) == ["metadata.annotations"]


def test_labels_in_embedded_templates_and_selectors() -> None:
    vcjob = with_value(MINIMAL["VolcanoJob"], "spec.tasks[0].template.metadata", {"labels": {"role": "a b"}})
    assert paths(validate_object(vcjob)) == ["spec.tasks[0].template.metadata.labels.role"]
    job = with_value(MINIMAL["Job"], "spec.template.spec.nodeSelector", {"gpu type": "a100"})
    assert paths(validate_object(job)) == ['spec.template.spec.nodeSelector["gpu type"]']


# ---------------------------------------------------------------------------
# Cross-field rules of the operators and CRDs
# ---------------------------------------------------------------------------


def test_jobset_generated_names_must_fit() -> None:
    js = with_value(MINIMAL["JobSet"], "metadata.name", "j" * 55)
    js = with_value(js, "spec.replicatedJobs[0].template.spec.completions", 4)
    messages = [p.message for p in validate_object(js) if p.rule == "kind"]
    assert any(m.startswith("child Job name") for m in messages)
    assert any(m.startswith("pod name") for m in messages)


def test_jobset_references() -> None:
    js = copy.deepcopy(MINIMAL["JobSet"])
    driver = {"name": "driver", "template": {"spec": {"template": pod()}}}
    js["spec"]["replicatedJobs"] = [
        driver,
        {**js["spec"]["replicatedJobs"][0], "dependsOn": [{"name": "driver", "status": "Ready"}]},
    ]
    assert validate_object(js) == []
    js["spec"]["successPolicy"]["targetReplicatedJobs"] = ["ghost"]
    js["spec"]["replicatedJobs"][1]["dependsOn"][0]["name"] = "workers"
    assert paths(validate_object(js)) == [
        "spec.replicatedJobs[1].dependsOn[0].name",
        "spec.successPolicy.targetReplicatedJobs",
    ]
    first = with_value(
        MINIMAL["JobSet"], "spec.replicatedJobs[0].dependsOn", [{"name": "x", "status": "Ready"}]
    )
    assert "the first replicated job cannot use dependsOn" in [p.message for p in validate_object(first)]


def test_volcano_rules() -> None:
    vcjob = copy.deepcopy(MINIMAL["VolcanoJob"])
    vcjob["spec"]["minAvailable"] = 5
    vcjob["spec"]["tasks"].append(copy.deepcopy(vcjob["spec"]["tasks"][0]))
    vcjob["spec"]["tasks"][0]["minAvailable"] = 3
    assert paths(validate_object(vcjob)) == [
        "spec.minAvailable",
        "spec.tasks[0].minAvailable",
        "spec.tasks[1].name",
    ]
    both = with_value(MINIMAL["VolcanoJob"], "spec.tasks[0].policies[0].exitCode", 3)
    assert [p.message for p in validate_object(both)] == [
        "only one of event(s) or exitCode can be set in a policy (webhook)"
    ]
    long_name = with_value(MINIMAL["VolcanoJob"], "metadata.name", "v" * 60)  # v...v-worker-0: 69
    assert [p.path for p in validate_object(long_name)] == ["spec.tasks[0].name"]
    too_long = with_value(MINIMAL["VolcanoJob"], "metadata.name", "v" * 64)
    assert "metadata.name" in paths(validate_object(too_long))


def test_volcano_cronjob_rules() -> None:
    """The CronJob webhook's schedule and time-zone rules, and the Job rules for the Jobs it makes."""
    cron = MINIMAL["VolcanoCronJob"]
    in_schedule = with_value(cron, "spec.schedule", "CRON_TZ=Europe/Paris 0 2 * * *")
    assert paths(validate_object(in_schedule)) == ["spec.schedule"]
    for zone in ("", "Local"):
        assert paths(validate_object(with_value(cron, "spec.timeZone", zone))) == ["spec.timeZone"]
    assert validate_object(with_value(cron, "spec.timeZone", "Europe/Paris")) == []
    too_many = with_value(cron, "spec.jobTemplate.spec.minAvailable", 3)
    assert paths(validate_object(too_many)) == ["spec.jobTemplate.spec.minAvailable"]
    # <name>-<11 characters> is each Job's name: 52 characters at most, and its pods' names must fit
    assert "metadata.name" in paths(validate_object(with_value(cron, "metadata.name", "c" * 53)))
    long_pods = with_value(cron, "metadata.name", "c" * 45)  # c...c-0000000000-worker-0: 70
    assert paths(validate_object(long_pods)) == ["spec.jobTemplate.spec.tasks[0].name"]


def test_jobflow_rules() -> None:
    missing = with_value(MINIMAL["JobFlow"], "spec.flows[1].dependsOn.targets", ["prep", "tokenize"])
    assert [(p.path, p.message) for p in validate_object(missing)] == [
        ("spec.flows[1].dependsOn.targets[1]", "target 'tokenize' is not a flow of this JobFlow")
    ]
    itself = with_value(MINIMAL["JobFlow"], "spec.flows[1].dependsOn.targets", ["train"])
    messages = [p.message for p in validate_object(itself)]
    assert "flow 'train' depends on itself" in messages
    circle = with_value(MINIMAL["JobFlow"], "spec.flows[0].dependsOn", {"targets": ["train"]})
    assert [p.message for p in validate_object(circle)] == [
        "the flows' dependsOn form a circle: none of them would ever start"
    ]
    twice = with_value(MINIMAL["JobFlow"], "spec.flows[1].name", "prep")
    assert "flow 'prep' is named twice" in [p.message for p in validate_object(twice)]


def test_volcano_policy_task_and_volume_rules() -> None:
    vcjob = copy.deepcopy(MINIMAL["VolcanoJob"])
    spec = vcjob["spec"]
    spec["policies"] = [
        {"event": "*", "action": "AbortJob"},
        {"events": ["PodFailed"], "action": "RestartJob"},
    ]
    spec["tasks"][0]["policies"] += [{"event": "PodEvicted", "action": "AbortJob"}, {"action": "RestartJob"}]
    spec["tasks"].append({"name": "ps", "replicas": 1, "template": pod(), "dependsOn": {"name": ["worker"]}})
    spec["tasks"][0]["dependsOn"] = {"name": ["ps"]}
    spec["volumes"] = [
        {"mountPath": "/data", "volumeClaimName": "data"},
        {"mountPath": "/data", "volumeClaimName": "more", "volumeClaim": {"accessModes": ["ReadWriteOnce"]}},
    ]
    assert paths(validate_object(vcjob)) == [
        "spec.policies",
        "spec.tasks",
        "spec.tasks[0].policies[1]",
        "spec.tasks[0].policies[2]",
        "spec.volumes[1]",
        "spec.volumes[1].mountPath",
    ]
    pending = with_value(MINIMAL["VolcanoJob"], "spec.tasks[0].policies[0].event", "PodPending")
    assert paths(validate_object(pending)) == ["spec.tasks[0].policies[0].event"]
    svc = with_value(MINIMAL["VolcanoJob"], "spec.plugins", {"svc": []})
    svc = with_value(svc, "spec.tasks[0].replicas", 100)
    assert validate_object(svc) == []
    svc = with_value(svc, "metadata.name", "v" * 50)  # v...v-worker-99 is 60 characters
    assert validate_object(svc) == []
    svc = with_value(svc, "metadata.name", "v" * 54)
    assert paths(validate_object(svc)) == ["spec.tasks[0].name"]


def test_pytorchjob_webhook_rules() -> None:
    pt = copy.deepcopy(MINIMAL["PyTorchJob"])
    pt["spec"]["pytorchReplicaSpecs"]["Master"] = {"replicas": 2, "template": pod("trainer")}
    assert paths(validate_object(pt)) == [
        "spec.pytorchReplicaSpecs.Master.replicas",
        "spec.pytorchReplicaSpecs.Master.template.spec.containers",
    ]
    other = with_value(
        MINIMAL["PyTorchJob"], "spec.pytorchReplicaSpecs.Evaluator", {"template": pod("pytorch")}
    )
    assert paths(validate_object(other)) == ["spec.pytorchReplicaSpecs.Evaluator"]


def test_mpijob_rules() -> None:
    launcher2 = with_value(MINIMAL["MPIJob"], "spec.mpiReplicaSpecs.Launcher.replicas", 2)
    assert [p.message for p in validate_object(launcher2)] == ["the Launcher must have exactly 1 replica"]
    always = with_value(MINIMAL["MPIJob"], "spec.mpiReplicaSpecs.Worker.restartPolicy", "Always")
    assert paths(validate_object(always)) == ["spec.mpiReplicaSpecs.Worker.restartPolicy"]
    assert (
        validate_object(with_value(MINIMAL["MPIJob"], "metadata.name", "m" * 54)) == []
    )  # m...m-worker-1: 63
    long_name = with_value(MINIMAL["MPIJob"], "metadata.name", "m" * 55)
    assert [p.rule for p in validate_object(long_name)] == ["kind"]


def test_rayjob_webhook_rules() -> None:
    suspended = without(with_value(MINIMAL["RayJob"], "spec.suspend", True), "spec.shutdownAfterJobFinishes")
    assert paths(validate_object(suspended)) == ["spec.shutdownAfterJobFinishes"]
    nothing = without(MINIMAL["RayJob"], "spec.rayClusterSpec")
    assert [p.message for p in validate_object(nothing)] == [
        "one of rayClusterSpec or clusterSelector must be set"
    ]
    sidecar = with_value(MINIMAL["RayJob"], "spec.submissionMode", "SidecarMode")
    sidecar = with_value(sidecar, "spec.submitterConfig", {"backoffLimit": 1})
    assert paths(validate_object(sidecar)) == ["spec"]


def test_kueue_rules() -> None:
    cq = copy.deepcopy(MINIMAL["ClusterQueue"])
    cq["spec"]["resourceGroups"][0]["flavors"][0]["resources"].reverse()
    assert [p.rule for p in validate_object(cq)] == ["kind"]
    borrow = with_value(
        MINIMAL["ClusterQueue"], "spec.resourceGroups[0].flavors[0].resources[0].borrowingLimit", 8
    )
    assert paths(validate_object(borrow)) == ["spec.resourceGroups[0].flavors[0].resources[0]"]
    assert validate_object(with_value(borrow, "spec.cohort", "research")) == []
    tas = with_value(without(MINIMAL["ResourceFlavor"], "spec.nodeLabels"), "spec.topologyName", "default")
    assert paths(validate_object(tas)) == ["spec.nodeLabels"]


# ---------------------------------------------------------------------------
# Real-looking manifests pass untouched
# ---------------------------------------------------------------------------

GPU_CONTAINER: dict[str, Any] = {
    "name": "trainer",
    "image": "nvcr.io/nvidia/pytorch:24.05-py3",
    "command": ["/bin/bash", "/opt/migrate/run.sh"],
    "env": [
        {"name": "SLURM_JOB_NAME", "value": "llama-ft"},
        {
            "name": "SLURM_ARRAY_TASK_ID",
            "valueFrom": {
                "fieldRef": {"fieldPath": "metadata.annotations['batch.kubernetes.io/job-completion-index']"}
            },
        },
        {"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": "hf", "key": "token"}}},
    ],
    "resources": {
        "requests": {"cpu": "16", "memory": "128Gi", "nvidia.com/gpu": 8},
        "limits": {"memory": "128Gi", "nvidia.com/gpu": 8},
    },
    "volumeMounts": [
        {"name": "scripts", "mountPath": "/opt/migrate", "readOnly": True},
        {"name": "lustre", "mountPath": "/lustre/project"},
        {"name": "dshm", "mountPath": "/dev/shm"},
    ],
}
GPU_POD_SPEC: dict[str, Any] = {
    "restartPolicy": "Never",
    "nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"},
    "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
    "containers": [GPU_CONTAINER],
    "volumes": [
        {"name": "scripts", "configMap": {"name": "llama-ft-script", "defaultMode": 0o755}},
        {"name": "lustre", "persistentVolumeClaim": {"claimName": "lustre-project"}},
        {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "64Gi"}},
    ],
}
ANNOTATIONS = {"migrate.dev/source": "jobs/llama_ft.sbatch", "migrate.dev/source-line": "3"}


def _gpu_pod(container_name: str = "trainer", restart: str | None = "Never") -> dict[str, Any]:
    spec = copy.deepcopy(GPU_POD_SPEC)
    spec["containers"][0]["name"] = container_name
    if restart is None:
        del spec["restartPolicy"]
    else:
        spec["restartPolicy"] = restart
    return {
        "metadata": {"labels": {"app.kubernetes.io/name": "llama-ft"}, "annotations": ANNOTATIONS},
        "spec": spec,
    }


REAL: dict[str, dict[str, Any]] = {
    "volcano-cronjob": {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "CronJob",
        "metadata": {"name": "llama-eval-nightly", "namespace": "ml-team", "annotations": ANNOTATIONS},
        "spec": {
            "schedule": "30 1 * * 1-5",
            "timeZone": "Europe/Berlin",
            "concurrencyPolicy": "Forbid",
            "startingDeadlineSeconds": 600,
            "successfulJobsHistoryLimit": 3,
            "failedJobsHistoryLimit": 1,
            "jobTemplate": {
                "metadata": {"labels": {"app.kubernetes.io/name": "llama-eval"}},
                "spec": {
                    "schedulerName": "volcano",
                    "queue": "gpu-h100",
                    "minAvailable": 2,
                    "maxRetry": 1,
                    "plugins": {"svc": [], "env": []},
                    "tasks": [{"name": "eval", "replicas": 2, "template": _gpu_pod()}],
                },
            },
        },
    },
    "hyperpod": {
        "apiVersion": "sagemaker.amazonaws.com/v1",
        "kind": "HyperPodPyTorchJob",
        "metadata": {
            "name": "llama-ft",
            "namespace": "hyperpod-ns-ml",
            "labels": {"kueue.x-k8s.io/queue-name": "hyperpod-ns-ml-localqueue"},
            "annotations": ANNOTATIONS,
        },
        "spec": {
            "nprocPerNode": "auto",
            "replicaSpecs": [{"name": "pods", "replicas": 4, "spares": 1, "template": _gpu_pod("pytorch")}],
            "runPolicy": {
                "cleanPodPolicy": "None",
                "jobMaxRetryCount": 5,
                "ttlSecondsAfterFinished": -1,
                "restartPolicy": {"evalPeriodSeconds": 3600, "maxFullJobRestarts": 2},
                "logMonitoringConfiguration": [
                    {
                        "name": "throughput",
                        "logPattern": ".*tokens/s: ([0-9]+).*",
                        "metricThreshold": 1000,
                        "operator": "lt",
                        "metricEvaluationDataPoints": 5,
                        "expectedStartCutOffInSeconds": 900,
                    }
                ],
            },
            "elasticPolicy": {"minReplicas": 2, "maxReplicas": 4, "replicaIncrementStep": 2},
        },
    },
    "volcano": {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": "llama-ft", "namespace": "ml-team", "annotations": ANNOTATIONS},
        "spec": {
            "schedulerName": "volcano",
            "queue": "gpu-h100",
            "minAvailable": 4,
            "maxRetry": 3,
            "ttlSecondsAfterFinished": 3600,
            "priorityClassName": "high-priority",
            "runningEstimate": "12h30m",
            "plugins": {"svc": ["--publish-not-ready-addresses=true"], "env": [], "ssh": []},
            "policies": [
                {"event": "PodEvicted", "action": "RestartJob"},
                {"events": ["PodFailed", "Unknown"], "action": "AbortJob", "timeout": "5m"},
                {"exitCode": 75, "action": "RestartJob"},
            ],
            "networkTopology": {"mode": "soft", "highestTierAllowed": 2},
            "volumes": [
                {
                    "mountPath": "/scratch",
                    "volumeClaim": {
                        "accessModes": ["ReadWriteOnce"],
                        "resources": {"requests": {"storage": "500Gi"}},
                    },
                }
            ],
            "tasks": [
                {
                    "name": "worker",
                    "replicas": 4,
                    "minAvailable": 4,
                    "topologyPolicy": "best-effort",
                    "policies": [{"event": "TaskCompleted", "action": "CompleteJob"}],
                    "template": _gpu_pod(),
                }
            ],
        },
    },
    "jobset": {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {
            "name": "llama-ft",
            "namespace": "ml-team",
            "labels": {"kueue.x-k8s.io/queue-name": "gpu-h100"},
            "annotations": {
                **ANNOTATIONS,
                "alpha.jobset.sigs.k8s.io/exclusive-topology": "cloud.google.com/gke-nodepool",
            },
        },
        "spec": {
            "network": {
                "enableDNSHostnames": True,
                "subdomain": "llama-ft",
                "publishNotReadyAddresses": True,
            },
            "successPolicy": {"operator": "All", "targetReplicatedJobs": ["workers"]},
            "failurePolicy": {
                "maxRestarts": 3,
                "restartStrategy": "Recreate",
                "rules": [
                    {
                        "name": "no_retry_on_oom",
                        "action": "FailJobSet",
                        "onJobFailureReasons": ["PodFailurePolicy"],
                    }
                ],
            },
            "coordinator": {"replicatedJob": "workers", "jobIndex": 0, "podIndex": 0},
            "ttlSecondsAfterFinished": 600,
            "suspend": True,
            "replicatedJobs": [
                {
                    "name": "prep",
                    "replicas": 1,
                    "template": {"spec": {"backoffLimit": 0, "template": _gpu_pod(restart="OnFailure")}},
                },
                {
                    "name": "workers",
                    "replicas": 1,
                    "dependsOn": [{"name": "prep", "status": "Complete"}],
                    "template": {
                        "metadata": {"labels": {"role": "worker"}},
                        "spec": {
                            "parallelism": 4,
                            "completions": 4,
                            "completionMode": "Indexed",
                            "backoffLimit": 0,
                            "activeDeadlineSeconds": 172800,
                            "podFailurePolicy": {
                                "rules": [
                                    {
                                        "action": "Ignore",
                                        "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}],
                                    },
                                    {
                                        "action": "FailJob",
                                        "onExitCodes": {
                                            "containerName": "trainer",
                                            "operator": "In",
                                            "values": [137],
                                        },
                                    },
                                ]
                            },
                            "template": _gpu_pod(),
                        },
                    },
                },
            ],
        },
    },
    "pytorchjob": {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {
            "name": "llama-ft",
            "namespace": "ml-team",
            "labels": {"kueue.x-k8s.io/queue-name": "gpu-h100"},
        },
        "spec": {
            "nprocPerNode": "8",
            "runPolicy": {
                "cleanPodPolicy": "Running",
                "ttlSecondsAfterFinished": 3600,
                "activeDeadlineSeconds": 172800,
                "backoffLimit": 2,
                "suspend": True,
                "schedulingPolicy": {
                    "minAvailable": 4,
                    "queue": "gpu",
                    "minResources": {"nvidia.com/gpu": 32, "cpu": "64"},
                },
            },
            "elasticPolicy": {"rdzvBackend": "c10d", "minReplicas": 2, "maxReplicas": 4, "maxRestarts": 3},
            "pytorchReplicaSpecs": {
                "Master": {
                    "replicas": 1,
                    "restartPolicy": "OnFailure",
                    "template": _gpu_pod("pytorch", restart=None),
                },
                "Worker": {
                    "replicas": 3,
                    "restartPolicy": "OnFailure",
                    "template": _gpu_pod("pytorch", restart=None),
                },
            },
        },
    },
    "mpijob": {
        "apiVersion": "kubeflow.org/v2beta1",
        "kind": "MPIJob",
        "metadata": {"name": "hpl", "namespace": "hpc"},
        "spec": {
            "slotsPerWorker": 8,
            "runLauncherAsWorker": False,
            "sshAuthMountPath": "/home/mpiuser/.ssh",
            "launcherCreationPolicy": "WaitForWorkersReady",
            "mpiImplementation": "OpenMPI",
            "runPolicy": {
                "cleanPodPolicy": "Running",
                "backoffLimit": 0,
                "managedBy": "kubeflow.org/mpi-operator",
            },
            "mpiReplicaSpecs": {
                "Launcher": {
                    "replicas": 1,
                    "restartPolicy": "OnFailure",
                    "template": {
                        "spec": {
                            "containers": [
                                {
                                    "name": "launcher",
                                    "image": "mpioperator/openmpi:v0.6.0",
                                    "command": ["mpirun", "-np", "16", "--bind-to", "core", "/opt/hpl/xhpl"],
                                    "resources": {"limits": {"cpu": "1", "memory": "1Gi"}},
                                }
                            ]
                        }
                    },
                },
                "Worker": {
                    "replicas": 2,
                    "restartPolicy": "Never",
                    "template": _gpu_pod("worker", restart=None),
                },
            },
        },
    },
    "trainjob": {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": {
            "name": "llama-ft",
            "namespace": "ml-team",
            "labels": {"kueue.x-k8s.io/queue-name": "gpu-h100"},
        },
        "spec": {
            "runtimeRef": {
                "name": "torch-distributed",
                "apiGroup": "trainer.kubeflow.org",
                "kind": "ClusterTrainingRuntime",
            },
            "initializer": {
                "dataset": {"storageUri": "hf://tatsu-lab/alpaca", "secretRef": {"name": "hf"}},
                "model": {"storageUri": "hf://meta-llama/Llama-3.2-1B-Instruct"},
            },
            "trainer": {
                "image": "ghcr.io/acme/llama-ft:2.1",
                "command": ["torchrun", "train.py"],
                "args": ["--epochs", "3"],
                "numNodes": 4,
                "numProcPerNode": 8,
                "env": [{"name": "NCCL_DEBUG", "value": "INFO"}],
                "resourcesPerNode": {"limits": {"nvidia.com/gpu": 8, "memory": "256Gi"}},
            },
            "runtimePatches": [
                {
                    "manager": "migrate.dev/translate",
                    "trainingRuntimeSpec": {
                        "template": {
                            "spec": {
                                "replicatedJobs": [
                                    {
                                        "name": "node",
                                        "template": {
                                            "spec": {
                                                "template": {
                                                    "metadata": {"labels": {"team": "ml"}},
                                                    "spec": {
                                                        "nodeSelector": {
                                                            "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"
                                                        },
                                                        "tolerations": [
                                                            {"key": "nvidia.com/gpu", "operator": "Exists"}
                                                        ],
                                                        "volumes": [
                                                            {
                                                                "name": "lustre",
                                                                "persistentVolumeClaim": {
                                                                    "claimName": "lustre"
                                                                },
                                                            }
                                                        ],
                                                        "containers": [
                                                            {
                                                                "name": "node",
                                                                "volumeMounts": [
                                                                    {"name": "lustre", "mountPath": "/lustre"}
                                                                ],
                                                            }
                                                        ],
                                                    },
                                                }
                                            }
                                        },
                                    }
                                ]
                            }
                        }
                    },
                }
            ],
            "suspend": False,
            "activeDeadlineSeconds": 86400,
            "managedBy": "trainer.kubeflow.org/trainjob-controller",
        },
    },
    "rayjob": {
        "apiVersion": "ray.io/v1",
        "kind": "RayJob",
        "metadata": {
            "name": "ray-tune",
            "namespace": "ml-team",
            "labels": {"kueue.x-k8s.io/queue-name": "gpu-h100"},
        },
        "spec": {
            "entrypoint": "python /home/ray/samples/tune.py --trials 64",
            "runtimeEnvYAML": 'pip:\n  - torch==2.3.0\nenv_vars:\n  EPOCHS: "3"\n',
            "submissionMode": "K8sJobMode",
            "shutdownAfterJobFinishes": True,
            "ttlSecondsAfterFinished": 300,
            "activeDeadlineSeconds": 7200,
            "backoffLimit": 1,
            "entrypointNumCpus": 1,
            "entrypointNumGpus": 0.5,
            "suspend": True,
            "submitterConfig": {"backoffLimit": 2},
            "rayClusterSpec": {
                "rayVersion": "2.9.0",
                "enableInTreeAutoscaling": False,
                "headGroupSpec": {
                    "rayStartParams": {"dashboard-host": "0.0.0.0", "num-cpus": "0"},
                    "serviceType": "ClusterIP",
                    "template": {
                        "spec": {
                            "containers": [
                                {
                                    "name": "ray-head",
                                    "image": "rayproject/ray:2.9.0",
                                    "ports": [
                                        {"containerPort": 6379, "name": "gcs"},
                                        {"containerPort": 8265, "name": "dashboard"},
                                    ],
                                    "resources": {"limits": {"cpu": "2", "memory": "8Gi"}},
                                }
                            ]
                        }
                    },
                },
                "workerGroupSpecs": [
                    {
                        "groupName": "gpu-workers",
                        "replicas": 4,
                        "minReplicas": 1,
                        "maxReplicas": 8,
                        "rayStartParams": {},
                        "template": _gpu_pod("ray-worker", restart=None),
                    }
                ],
            },
        },
    },
}

KUEUE_STACK = """\
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata:
  name: h100
spec:
  nodeLabels:
    nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3
  nodeTaints:
  - key: nvidia.com/gpu
    value: present
    effect: NoSchedule
  tolerations:
  - key: nvidia.com/gpu
    operator: Exists
    effect: NoSchedule
  topologyName: default
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata:
  name: cluster-gpu
spec:
  cohort: research
  namespaceSelector: {}
  queueingStrategy: BestEffortFIFO
  stopPolicy: None
  fairSharing:
    weight: "2"
  flavorFungibility:
    whenCanBorrow: MayStopSearch
    whenCanPreempt: TryNextFlavor
  preemption:
    reclaimWithinCohort: Any
    borrowWithinCohort:
      policy: LowerPriority
      maxPriorityThreshold: 100
    withinClusterQueue: LowerPriority
  admissionChecksStrategy:
    admissionChecks:
    - name: dws-prov
      onFlavors: [h100]
  resourceGroups:
  - coveredResources: [cpu, memory, nvidia.com/gpu]
    flavors:
    - name: h100
      resources:
      - name: cpu
        nominalQuota: 512
      - name: memory
        nominalQuota: 4Ti
        lendingLimit: 1Ti
      - name: nvidia.com/gpu
        nominalQuota: 64
        borrowingLimit: 16
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata:
  name: gpu-h100
  namespace: ml-team
spec:
  clusterQueue: cluster-gpu
  stopPolicy: None
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: WorkloadPriorityClass
metadata:
  name: high
value: 10000
description: "Slurm qos 'high' (priority 10000)"
---
apiVersion: batch/v1
kind: Job
metadata:
  name: array-shards
  namespace: ml-team
  labels:
    kueue.x-k8s.io/queue-name: gpu-h100
    kueue.x-k8s.io/priority-class: high
  annotations:
    kueue.x-k8s.io/max-exec-time-seconds: "7200"
spec:
  suspend: true
  completions: 100
  parallelism: 10
  completionMode: Indexed
  backoffLimitPerIndex: 2
  maxFailedIndexes: 10
  podFailurePolicy:
    rules:
    - action: FailIndex
      onExitCodes: {operator: In, values: [42]}
  template:
    metadata:
      annotations:
        kueue.x-k8s.io/podset-preferred-topology: cloud.google.com/gce-topology-block
    spec:
      restartPolicy: Never
      containers:
      - name: shard
        image: python:3.12-slim
        command: [python, -c, "import os; print(os.environ['JOB_COMPLETION_INDEX'])"]
        resources:
          requests: {cpu: 500m, memory: 1Gi}
"""


@pytest.mark.parametrize("label", sorted(REAL))
def test_real_looking_custom_resources_pass(label: str) -> None:
    problems = validate_object(REAL[label])
    assert problems == [], [p.render() for p in problems]


def test_real_looking_kueue_stack_passes() -> None:
    problems = validate_documents(KUEUE_STACK, file="kueue.yaml")
    assert problems == [], [p.render() for p in problems]


# ---------------------------------------------------------------------------
# Documents and trees
# ---------------------------------------------------------------------------

TWO_DOCS = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: train
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: main
        image: busybox
        gpus: 1
---
apiVersion: v1
kind: ConfigMap
metadata: {name: x}
data: [oops
---
# only a comment
---
apiVersion: example.com/v1
kind: Widget
metadata:
  name: w
"""


def test_documents_give_lines_and_indexes_and_go_on_after_a_yaml_error() -> None:
    problems = validate_documents(TWO_DOCS, file="out/train.yaml")
    found = [(p.rule, p.path, p.line, p.document) for p in problems]
    assert ("schema", "spec.template.spec.containers[0].gpus", 12, 0) in found
    assert any(rule == "yaml" for rule, *_ in found)
    assert ("unknown-kind", "", 21, 2) in found  # the comment-only document does not count
    assert all(p.file == "out/train.yaml" for p in problems)
    assert (
        problems[0]
        .render()
        .startswith("out/train.yaml:12: Job/train: spec.template.spec.containers[0].gpus:")
    )


def test_documents_from_loaded_objects() -> None:
    problems = validate_documents(
        [MINIMAL["Job"], None, with_value(MINIMAL["Service"], "spec.type", "Bogus")]
    )
    assert [(p.document, p.path) for p in problems] == [(2, "spec.type")]


def test_tree(tmp_path: Path) -> None:
    (tmp_path / "train").mkdir()
    (tmp_path / "train" / "job.yaml").write_text(
        json.dumps(MINIMAL["Job"]) + "\n---\n" + json.dumps(MINIMAL["ConfigMap"]) + "\n", encoding="utf-8"
    )
    (tmp_path / "train" / "bad.yml").write_text(
        json.dumps(with_value(MINIMAL["JobSet"], "spec.oops", 1)), encoding="utf-8"
    )
    (tmp_path / "kustomization.yaml").write_text("resources: [train/job.yaml]\n", encoding="utf-8")
    (tmp_path / "translation.json").write_text("{}", encoding="utf-8")
    report = validate_tree(tmp_path)
    assert report.objects == 3
    assert [p.path for p in report.problems] == ["spec.oops"]
    assert report.problems[0].file == str(tmp_path / "train" / "bad.yml")
    assert not report.ok
    assert report.kinds == {"batch/v1 Job": 1, "jobset.x-k8s.io/v1alpha2 JobSet": 1, "v1 ConfigMap": 1}
    assert [f["reason"] for f in report.to_dict()["skipped"]] == ["kustomize"]
    assert validate_tree(tmp_path / "train" / "job.yaml").ok


# ---------------------------------------------------------------------------
# Values files of the slurm chart
# ---------------------------------------------------------------------------

SLURM_VALUES = """\
controller:
  external: true
  externalConfig: {host: 10.0.0.1, port: 6817}
slurmKey:
  create: false
  secretRef: {name: slurm-key, key: slurm.key}
nodesets:
  gpu:
    enabled: true
    replicas: 2
    slurmd: {resources: {limits: {nvidia.com/gpu: 8}}}
    extraConfMap: {Gres: ['gpu:h100:8']}
    podSpec: {nodeSelector: {pool: gpu}, tolerations: [{key: gpu, operator: Exists}]}
partitions:
  gpu: {enabled: true, nodesets: [gpu], configMap: {State: UP, MaxTime: 1440}}
"""


def _values_problems(text: str) -> list[tuple[str, str, int | None]]:
    return [(p.path, p.message, p.line) for p in validate_documents(text, "slinky-values.yaml")]


def test_slurm_chart_values_pass_as_values() -> None:
    """A YAML mapping with the slurm chart's keys is its values, not an object missing apiVersion.

    Keys and types from SlinkyProject/slurm-operator ``helm/slurm/values.yaml`` (v1.2.1).
    """
    assert _values_problems(SLURM_VALUES) == []


def test_an_unknown_values_key_is_named() -> None:
    """SlinkyProject/slurm-operator ``helm/slurm/values.yaml`` has no ``nodeSets``: Helm would ignore it."""
    [(path, message, line)] = _values_problems(SLURM_VALUES + "nodeSets: {}\n")
    assert path == "nodeSets" and line == 16  # the line after SLURM_VALUES
    assert message == "unknown field 'nodeSets': the slurm chart has no such value, so Helm would ignore it"


@pytest.mark.parametrize(
    ("change", "path"),
    [
        ("nodesets:\n  gpu: {replica: 2}\n", "nodesets.gpu.replica"),
        ("nodesets:\n  gpu: {replicas: two}\n", "nodesets.gpu.replicas"),
        ("controller: {external: 'yes'}\n", "controller.external"),
        ("controller: {clusterName: x}\n", "controller.clusterName"),
        ("clusterName: [a]\n", "clusterName"),
        ("configFiles: {gres.conf: 1}\n", 'configFiles["gres.conf"]'),
        ("partitions:\n  gpu: {enabled: true, nodesets: [cpu]}\n", "partitions.gpu.nodesets[0]"),
    ],
)
def test_slurm_chart_values_are_checked_where_migrate_writes(change: str, path: str) -> None:
    """Types and keys of ``controller``, ``nodesets.<name>`` (over ``nodesetDefaults``), ``partitions``.

    SlinkyProject/slurm-operator ``helm/slurm/values.yaml``; a partition naming a NodeSet the values
    do not enable makes ``helm/slurm/templates/controller/_helpers.tpl`` fail.
    """
    base = {k: v for k, v in yaml.safe_load(SLURM_VALUES).items() if k not in yaml.safe_load(change)}
    problems = validate_documents([{**base, **yaml.safe_load(change)}])
    assert [p.path for p in problems] == [path], [p.render() for p in problems]


def test_other_mappings_without_apiversion_keep_their_error(tmp_path: Path) -> None:
    assert paths(validate_object({"replicas": 2, "controller": {}})) == ["apiVersion"]
    assert paths(validate_object({"kind": "Job", "nodesets": {}})) == ["apiVersion"]
    (tmp_path / "values.yaml").write_text(SLURM_VALUES, encoding="utf-8")
    assert validate_tree(tmp_path).kinds == {"slurm chart values": 1}


# ---------------------------------------------------------------------------
# The schema files themselves
# ---------------------------------------------------------------------------


def _schema_files() -> list[tuple[str, dict[str, Any]]]:
    folder = resources.files("migrate.translators.kubernetes").joinpath("schemas")
    return [
        (entry.name, json.loads(entry.read_text(encoding="utf-8")))
        for entry in sorted(folder.iterdir(), key=lambda e: e.name)
        if entry.name.endswith(".json")
    ]


def _objects(node: Any, where: str = "") -> list[tuple[str, dict[str, Any]]]:
    found: list[tuple[str, dict[str, Any]]] = []
    if isinstance(node, dict):
        if node.get("type") == "object":
            found.append((where, node))
        for key, value in node.items():
            found.extend(_objects(value, f"{where}/{key}"))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found.extend(_objects(value, f"{where}/{index}"))
    return found


@pytest.mark.parametrize(("name", "schema"), _schema_files())
def test_schema_files_are_strict_and_say_where_they_come_from(name: str, schema: dict[str, Any]) -> None:
    assert re.search(
        r"(volcano-sh|kubernetes-sigs|kubeflow|ray-project|SlinkyProject|aws)/[\w.-]+ \S+\.(go|py|yaml)",
        schema["$comment"],
    )
    assert schema["$id"] == f"urn:migrate:schema:{name.removesuffix('.json')}"
    for where, obj in _objects(schema):
        if where == "/properties/status":
            continue  # written by the controller
        # Structs close their field list; maps declare what their values are.
        assert "additionalProperties" in obj, f"{name}{where}"
