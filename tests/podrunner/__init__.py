"""Run the pods of Kubernetes manifests as local processes, for tests. This is no Kubernetes.

``PodRunner.run(text)`` reads the documents ``migrate translate --to kubernetes``
writes (ConfigMap, Secret, Service, PersistentVolumeClaim and one workload:
a bare Pod, Job and Indexed Job, CronJob (its job template, once), JobSet, PyTorchJob,
MPIJob v2beta1, Volcano Job, RayJob with its own or a selected RayCluster, LeaderWorkerSet, a
Kubeflow Trainer TrainJob on the torch-distributed runtime) and starts the pods
the controllers would start, each as a process tree of the host, the way the kubelet would run the container
(``run_together(texts)`` runs several such workloads at once, in one cluster network, where each
pod resolves and reaches the others' pods; other objects, a NetworkPolicy among them, are ignored):

- the container's ``command`` and ``args`` (``$(VAR)`` expanded as the kubelet
  does); the image is ignored: the host's programs run, with the stand-in
  image's ``PATH``/``HOME`` (``image_env``);
- its env, with the downward API (``metadata.name``/``namespace``/``uid``,
  ``metadata.labels[...]``/``annotations[...]``, ``status.podIP``, ``spec.nodeName``),
  ``configMapKeyRef``, ``secretKeyRef``, ``envFrom``, and what the controllers add:
  ``JOB_COMPLETION_INDEX`` and the index labels/annotations of Indexed Jobs and
  JobSets, the PyTorchJob operator's ``MASTER_ADDR``/``MASTER_PORT``/``WORLD_SIZE``/
  ``RANK``/``PET_*``, the Trainer's ``PET_*``, Volcano's ``VC_TASK_INDEX`` and, with its svc and
  ssh plugins, ``/etc/volcano/<task>.host``, ``VC_<TASK>_HOSTS``/``_NUM`` and the job's ssh keys
  and config at ``/root/.ssh``, and for an MPIJob the MPI operator's
  hostfile (``/etc/mpi/hostfile``), ssh keys (``/root/.ssh``) and ``OMPI_MCA_*`` settings
  (the Workers run ``sshd``, which the host must have); for a RayJob, KubeRay's ``ray start``
  commands, env and head Service, the entrypoint run on the head (tests/podrunner/ray.py);
- a private root per pod: in a new mount, UTS and PID namespace, a tmpfs root with
  the host's ``/usr /bin /sbin /lib* /etc /opt /root`` and the Python prefixes
  bind-mounted read-only, fresh ``/proc`` and ``/tmp``, ``/dev`` with a 64 MiB
  ``/dev/shm`` (the container runtime's default), and the volumes bind-mounted at
  their ``mountPath``: ConfigMap and Secret files, ``emptyDir`` (a tmpfs for
  ``medium: Memory``), ``hostPath`` and PVCs (per-test folders shared by all pods,
  as a shared file system is), then ``chroot``;
- the pod's own host name (the UTS namespace) and network: a network namespace per
  pod whose only addresses are loopback ones (127.0.0.1 for itself, plus 127.0.0.2,
  127.0.0.3, ... one per pod, reachable from the other pods through a private
  switch namespace); a private ``/etc/hosts`` per pod holds the DNS names the
  cluster would serve (the pod's own, and those of its headless Service, JobSet
  subdomain or PyTorchJob replica Services), each added when that pod starts;
- ``restartPolicy``, ``backoffLimit``/``backoffLimitPerIndex``, ``parallelism``,
  JobSet ``failurePolicy.maxRestarts`` and ``dependsOn``, PyTorchJob
  ``runPolicy.backoffLimit`` and Volcano ``maxRetry`` (as restarts of the whole
  workload).

What differs from a cluster: no scheduler, quotas or resource limits (requests,
GPUs and node selectors are ignored); every pod runs as root on this machine;
no image, so only programs the host has run; no API server, so nothing can
``kubectl`` (a kubeflow.org/v1 MPIJob, whose Launcher starts ranks by ``kubectl exec``, is
refused, as is a HyperPodPyTorchJob, whose operator's pod environment is not published); the
cluster DNS is a hosts file (no search domains, no SRV records);
``hostname -I`` gives the pod's loopback alias; termination is immediate (no
grace period, no preStop); the ssh of an MPIJob skips host key checks, as the
operator's images configure it. It needs root, ``unshare``, ``chroot``, ``ip``
and overlayfs (``why_not()`` says what is missing).
"""

from __future__ import annotations

from .model import Attempt, PodRun, RunResult
from .runner import PodRunner, RunnerError, why_not

__all__ = ["Attempt", "PodRun", "PodRunner", "RunResult", "RunnerError", "why_not"]
