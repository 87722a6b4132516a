"""Serving kinds and what operators add: LeaderWorkerSet, RayService, NIMService and NIMCache, a Ray
cluster's own ports, and the volumes the MPI Operator gives its pods."""

from __future__ import annotations

import pytest
from test_k8s_reader import codes, one, read

from migrate import ir
from migrate.plan.classify import assess_job
from migrate.plan.demand import job_demand
from migrate.plan.runnable import why_not_runnable
from migrate.scan import service_refs
from migrate.site.config import SiteConfig
from migrate.translators.kubernetes import kinds
from migrate.translators.slurm.writer import stays_serving
from migrate.vocab import Action, Direction, Format, JobKind, Pattern
from migrate.workloads import is_serving


def _pod(name: str, image: str, indent: int, extra: str = "") -> str:
    text = f"spec:\n  containers:\n    - name: {name}\n      image: {image}\n{extra}"
    return "".join(" " * indent + line + "\n" for line in text.splitlines())


def lws(size: str = "    size: 4\n", leader: bool = True) -> str:
    text = """\
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: sglang-deepseek}
spec:
  replicas: 3
  leaderWorkerTemplate:
"""
    text += size
    if leader:
        text += "    leaderTemplate:\n" + _pod("leader", "lmsysorg/sglang:v0.4.1", 6)
    text += "    workerTemplate:\n" + _pod(
        "worker", "lmsysorg/sglang:v0.4.1", 6, "      resources:\n        limits: {nvidia.com/gpu: 8}\n"
    )
    return text


def test_a_leader_worker_set_is_groups_of_one_leader_and_size_less_one_workers() -> None:
    job, diags = one(lws())
    assert diags == []
    assert job.kind == JobKind.LEADER_WORKER_SET
    assert [(c.name, c.replicas) for c in job.components] == [("leader", 3), ("worker", 9)]
    assert [c.containers[0].name for c in job.components] == ["leader", "worker"]
    assert job.components[1].resources.gpus_per_node == 8


def test_leaders_run_the_workers_template_when_there_is_no_leader_template() -> None:
    job, diags = one(lws(leader=False))
    assert diags == []
    assert [(c.name, c.replicas, c.containers[0].name) for c in job.components] == [
        ("leader", 3, "worker"),
        ("worker", 9, "worker"),
    ]


def test_groups_of_one_have_no_workers() -> None:
    """``size`` defaults to 1: each group is its leader alone."""
    job, diags = one(lws(size=""))
    assert diags == []
    assert [(c.name, c.replicas) for c in job.components] == [("leader", 3)]


def test_a_service_selecting_the_operators_name_label_serves_the_leader_worker_set() -> None:
    text = lws() + (
        "---\napiVersion: v1\nkind: Service\nmetadata: {name: sglang-leader}\nspec:\n"
        "  selector: {leaderworkerset.sigs.k8s.io/name: sglang-deepseek}\n  ports: [{port: 30000}]\n"
    )
    job, _ = one(text)
    (service,) = job.services
    assert (service.addresses, service.ports) == (("sglang-leader",), (30000,))


def test_a_service_selecting_the_leaders_by_worker_index_serves_the_leader_worker_set() -> None:
    """The controller labels each group's leader worker-index 0: a Service may select the leaders so."""
    text = lws() + (
        "---\napiVersion: v1\nkind: Service\nmetadata: {name: sglang-leader}\nspec:\n"
        "  selector: {leaderworkerset.sigs.k8s.io/name: sglang-deepseek, "
        "leaderworkerset.sigs.k8s.io/worker-index: '0'}\n  ports: [{port: 30000}]\n"
    )
    job, _ = one(text)
    (service,) = job.services
    assert (service.addresses, service.ports) == (("sglang-leader",), (30000,))


PORT = "            ports: [{containerPort: 30000}]\n"


def test_a_leader_worker_set_serving_no_port_is_batch_work_to_the_plan_and_the_writer() -> None:
    """Groups of pods with no Service and no port: the plan moves it, the writer translates it."""
    job, _ = one(lws())
    assert ir.batch_groups(job) and not ir.long_running(job)
    found = assess_job(job, Direction.TO_SLURM)
    assert found.pattern != Pattern.SERVING, found.reasons
    assert found.recommendation.action != Action.STAY, found.recommendation
    assert "batch work in groups of pods" in " ".join(found.reasons)
    assert not stays_serving(job)
    assert why_not_runnable(job, found.facts, Direction.TO_SLURM) is None
    assert not job_demand(job, found.facts, SiteConfig()).always_on  # runs, then ends


@pytest.mark.parametrize("how", ["port", "service"])
def test_a_leader_worker_set_with_a_served_port_or_a_service_stays_a_service(how: str) -> None:
    text = lws().replace("limits: {nvidia.com/gpu: 8}\n", "limits: {nvidia.com/gpu: 8}\n" + PORT)
    if how == "service":
        text = lws() + (
            "---\napiVersion: v1\nkind: Service\nmetadata: {name: sglang}\nspec:\n"
            "  selector: {leaderworkerset.sigs.k8s.io/name: sglang-deepseek}\n"
        )
    job, _ = one(text)
    assert ir.serves_clients(job) and not ir.batch_groups(job)
    found = assess_job(job, Direction.TO_SLURM)
    assert (found.pattern, found.recommendation.action) == (Pattern.SERVING, Action.STAY), found.reasons
    assert stays_serving(job)
    assert "the Slurm translation writes no script" in (
        why_not_runnable(job, found.facts, Direction.TO_SLURM) or ""
    )
    assert job_demand(job, found.facts, SiteConfig()).always_on


RAY_SERVICE = """\
apiVersion: ray.io/v1
kind: RayService
metadata: {name: stable-diffusion}
spec:
  serveConfigV2: |
    applications:
      - name: sd
        import_path: stable_diffusion:entrypoint
  rayClusterConfig:
    headGroupSpec:
      rayStartParams: {}
      template:
        spec:
          containers:
            - name: ray-head
              image: rayproject/ray-ml:2.9.0
              ports: [{containerPort: 6379}, {containerPort: 8265}]
    workerGroupSpecs:
      - groupName: gpu
        replicas: 2
        rayStartParams: {}
        template:
          spec:
            containers:
              - name: ray-worker
                image: rayproject/ray-ml:2.9.0
                resources: {limits: {nvidia.com/gpu: 1}}
"""


def test_a_ray_service_is_its_cluster_serving_on_serves_port() -> None:
    job, diags = one(RAY_SERVICE)
    assert diags == []
    assert job.kind == JobKind.RAY_SERVICE
    assert [(c.name, c.replicas) for c in job.components] == [("head", 1), ("gpu", 2)]
    assert job.services[0].ports == (8000,)  # Serve's port; Ray's own 6379 and 8265 are nobody's
    assert any(item.origin == "spec.serveConfigV2" for item in job.raw)  # the applications, as written


NIM = """\
apiVersion: apps.nvidia.com/v1alpha1
kind: NIMCache
metadata: {name: llama3-8b}
spec:
  source: {ngc: {modelPuller: "nvcr.io/nim/meta/llama3-8b-instruct:1.0.3"}}
  storage: {pvc: {create: true, size: 50Gi, storageClass: efs-sc}}
---
apiVersion: apps.nvidia.com/v1alpha1
kind: NIMService
metadata: {name: llama3-8b}
spec:
  image: {repository: nvcr.io/nim/meta/llama3-8b-instruct, tag: "1.0.3", pullPolicy: IfNotPresent}
  replicas: 2
  resources: {limits: {nvidia.com/gpu: 1}}
  env: [{name: NIM_CACHE_PATH, value: /model-store}]
  expose: {service: {type: ClusterIP, port: 8000}}
"""


def test_a_nim_service_is_one_model_server_per_replica() -> None:
    job, diags = one(NIM)
    assert job.kind == JobKind.NIM_SERVICE
    (comp,) = job.components
    assert (comp.name, comp.replicas, comp.resources.gpus_per_node) == ("nim", 2, 1)
    assert comp.containers[0].image == "nvcr.io/nim/meta/llama3-8b-instruct:1.0.3"
    assert [e.name for e in comp.environment] == ["NIM_CACHE_PATH"]
    assert job.services[0].ports == (8000,)
    assert any(item.origin == "spec.image.pullPolicy" for item in job.raw)
    (cache,) = diags  # the NIMCache is context: the model's storage, not an unknown kind
    assert cache.code == "K8S-IGNORED-KIND"
    assert "model cache" in cache.message and "size=50Gi" in cache.message


def test_a_nim_service_without_a_repository_says_so() -> None:
    job, diags = one(NIM.replace("repository: nvcr.io/nim/meta/llama3-8b-instruct, ", ""))
    assert ("K8S-MISSING-FIELD", 12) in codes(diags)
    assert job.components[0].containers[0].image == ""


@pytest.mark.parametrize("kind", [JobKind.LEADER_WORKER_SET, JobKind.RAY_SERVICE, JobKind.NIM_SERVICE])
def test_serving_kinds_are_long_running(kind: JobKind) -> None:
    assert is_serving(kind)


def test_serving_kinds_are_served_and_stay_on_kubernetes() -> None:
    for text in (RAY_SERVICE, NIM):
        (job,) = read(text)[0]
        found = assess_job(job, Direction.TO_SLURM)
        assert found.pattern == Pattern.SERVING, found.reasons
        assert found.recommendation.action == Action.STAY


# ---------------------------------------------------------------------------
# A Ray cluster serves only when it serves

RAY_CLUSTER = """\
apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: batch-embed}
spec:
  headGroupSpec:
    rayStartParams: {}
    template:
      metadata: {labels: {app: embed-head}}
      spec:
        containers:
          - name: ray-head
            image: rayproject/ray:2.9.0
COMMAND
            ports:
              - {containerPort: 6379, name: gcs}
              - {containerPort: 8265, name: dashboard}
              - {containerPort: 10001, name: client}
              - {containerPort: 8080, name: metrics}
              - {containerPort: 8000, name: serve}
---
apiVersion: v1
kind: Service
metadata: {name: embed-dashboard}
spec:
  selector: {app: embed-head}
  ports: [{port: 8265}]
"""


def test_a_ray_cluster_with_its_own_ports_serves_nobody() -> None:
    job, _ = one(RAY_CLUSTER.replace("COMMAND\n", ""))
    (service,) = job.services
    assert (service.ports, service.addresses) == ((), ())
    found = assess_job(job, Direction.TO_SLURM)
    assert found.pattern != Pattern.SERVING
    assert "serves no traffic" in " ".join(found.reasons)


def test_a_ray_cluster_that_runs_serve_serves_on_its_port() -> None:
    command = (
        '            command: ["/bin/bash", "-c", "ray start --head --block & serve run app:deployment"]\n'
    )
    job, _ = one(RAY_CLUSTER.replace("COMMAND\n", command))
    assert job.services[0].ports == (8000,)
    assert assess_job(job, Direction.TO_SLURM).pattern == Pattern.SERVING


def test_a_service_of_another_file_with_only_rays_ports_is_no_clients() -> None:
    job, _ = one(RAY_CLUSTER.replace("COMMAND\n", "").split("---")[0])
    theirs = service_refs.Service("embed-head-svc", "default", (("app", "embed-head"),), (8265, 10001))
    assert service_refs._with_services(job, [theirs]) is job
    served = service_refs.Service("embed-api", "default", (("app", "embed-head"),), (8265, 9000))
    linked = service_refs._with_services(job, [served])
    assert (linked.services[0].addresses, linked.services[0].ports) == (("embed-api",), (9000,))


def test_the_cross_file_pass_keeps_a_deployments_ports() -> None:
    job = ir.Job(
        id="d",
        source=ir.SourceRef("d.yaml", Format.KUBERNETES),
        kind=JobKind.DEPLOYMENT,
        services=(ir.Service("api", 1, (), pod_labels=(ir.KeyValue("app", "api"),)),),
    )
    theirs = service_refs.Service("api", "default", (("app", "api"),), (8265,))
    assert service_refs._with_services(job, [theirs]).services[0].ports == (8265,)


# ---------------------------------------------------------------------------
# Volumes an operator adds

MPI = """\
apiVersion: kubeflow.org/VERSION
kind: MPIJob
metadata: {name: nccl-tests}
spec:
  slotsPerWorker: 8
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template:
        spec:
          containers:
            - name: launcher
              image: public.ecr.aws/hpc-cloud/nccl-tests:latest
              command: [mpirun, --hostfile, /etc/mpi/hostfile, /opt/nccl-tests/build/all_reduce_perf]
              volumeMounts:
                - {name: mpi-job-config, mountPath: /etc/mpi}
                - {name: ssh-auth, mountPath: /root/.ssh}
    Worker:
      replicas: 2
      template:
        spec:
          containers:
            - name: worker
              image: public.ecr.aws/hpc-cloud/nccl-tests:latest
              volumeMounts:
                - {name: ssh-auth, mountPath: /root/.ssh}
                - {name: mpi-job-config, mountPath: /etc/mpi}
"""


def test_the_mpi_operators_volumes_need_no_declaration() -> None:
    job, diags = one(MPI.replace("VERSION", "v2beta1"))
    # the Launcher gets both; a Worker only the ssh keys, so its hostfile mount has no volume
    assert codes(diags) == [("K8S-MISSING-FIELD", 27)]
    launcher, worker = job.components
    assert [(m.target, m.kind, m.source) for m in launcher.containers[0].mounts] == [
        ("/etc/mpi", "generated", "nccl-tests-config"),
        ("/root/.ssh", "generated", "nccl-tests-ssh"),
    ]
    ssh = worker.containers[0].mounts[0]
    assert (ssh.kind, ssh.source) == ("generated", "nccl-tests-ssh")


def test_other_versions_get_no_volumes_they_do_not_add() -> None:
    _, diags = one(MPI.replace("VERSION", "v1"))
    assert [code for code, _ in codes(diags)] == ["K8S-MISSING-FIELD"] * 4


def test_the_injected_volumes_table_is_keyed_by_version_and_role() -> None:
    assert [v.name for v in kinds.injected_volumes("kubeflow.org/v2beta1", "MPIJob", "Launcher")] == [
        "mpi-job-config",
        "ssh-auth",
    ]
    assert kinds.injected_volumes("kubeflow.org/v2beta1", "MPIJob", "Worker")[0].name == "ssh-auth"
    assert kinds.injected_volumes("kubeflow.org/v1", "PyTorchJob", "Master") == ()


# ---------------------------------------------------------------------------
# The tool's own output

OWN = """\
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: fsx-pvc
  labels: {app.kubernetes.io/managed-by: migrate}
spec: {accessModes: [ReadWriteMany], resources: {requests: {storage: 1Ti}}}
---
apiVersion: batch/v1
kind: Job
metadata:
  name: train
  labels: {app.kubernetes.io/managed-by: migrate}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: main, image: busybox:1.36}]
"""


def test_objects_the_tool_wrote_are_noted_as_its_output() -> None:
    jobs, diags = read(OWN)
    assert [job.name for job in jobs] == ["train"]  # read back as translate --to slurm needs
    (note,) = [d for d in diags if d.code == "FILE-MIGRATE-OUTPUT"]
    assert (note.severity, note.line) == ("info", 1)
    assert "PersistentVolumeClaim/fsx-pvc, Job/train" in note.message


def test_the_label_the_reader_looks_for_is_the_one_the_writer_writes() -> None:
    from migrate.translators.kubernetes.shared import MANAGED

    assert MANAGED == {kinds.MANAGED_BY_LABEL: kinds.MANAGED_BY_VALUE}
