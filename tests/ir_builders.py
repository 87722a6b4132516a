"""Small builders for IR jobs, so graph, classification and plan tests read like the scripts they model."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from migrate import ir

HOUR = 3600


def read(path: str, line: int | None = None, via: str = "body") -> ir.StoragePath:
    return ir.StoragePath(path, access=ir.READ, via=via, line=line)


def write(path: str, line: int | None = None, via: str = "body") -> ir.StoragePath:
    return ir.StoragePath(path, access=ir.WRITE, via=via, line=line)


def touch(path: str, line: int | None = None, via: str = "body") -> ir.StoragePath:
    return ir.StoragePath(path, access=ir.UNKNOWN, via=via, line=line)


def dep(kind: str, *targets: str, line: int | None = None, status: str | None = None) -> ir.Dependency:
    return ir.Dependency(type=kind, targets=tuple(targets), line=line, status=status)


def submit(
    script: str | None,
    captures: str | None = None,
    deps: Sequence[ir.Dependency] = (),
    line: int | None = None,
) -> ir.Submission:
    return ir.Submission(
        script=script, captures=captures, dependencies=tuple(deps), parsable=captures is not None, line=line
    )


def launcher(name: str, *program: str, line: int | None = None, **options: str) -> ir.Launcher:
    return ir.Launcher(
        name=name,
        options=tuple(ir.KeyValue(k.replace("_", "-"), v) for k, v in options.items()),
        program=tuple(program),
        line=line,
        text=" ".join((name, *program)),
    )


def container(
    image: str,
    *command: str,
    mounts: Sequence[ir.Mount] = (),
    runtime: str | None = None,
    line: int | None = None,
) -> ir.Container:
    return ir.Container(image=image, command=tuple(command), mounts=tuple(mounts), runtime=runtime, line=line)


def pvc(claim: str, target: str, read_only: bool = False) -> ir.Mount:
    return ir.Mount(target=target, source=claim, kind="pvc", read_only=read_only)


def bind(source: str, target: str) -> ir.Mount:
    return ir.Mount(target=target, source=source, kind="bind")


def env(**values: str) -> tuple[ir.EnvVar, ...]:
    return tuple(ir.EnvVar(name=k, value=v) for k, v in values.items())


def slurm_job(
    path: str,
    *,
    name: str | None = None,
    job_id: str | None = None,
    kind: str = "sbatch",
    nodes: int = 1,
    gpus_per_node: int = 0,
    tasks_per_node: int | None = None,
    hours: float | None = None,
    partition: str | None = None,
    account: str | None = None,
    storage: Iterable[ir.StoragePath] = (),
    deps: Iterable[ir.Dependency] = (),
    submits: Iterable[ir.Submission] = (),
    modules: Iterable[str] = (),
    software_envs: Iterable[tuple[str, str]] = (),
    monitoring: Iterable[str] = (),
    launchers: Iterable[ir.Launcher] = (),
    containers: Iterable[ir.Container] = (),
    array: int | None = None,
    array_throttle: int | None = None,
    exclusive: str | None = None,
    constraint: str | None = None,
    topology: Iterable[tuple[str, str]] = (),
    environment: Iterable[ir.EnvVar] = (),
    body: str = "",
    signal: str | None = None,
    requeue: bool | None = None,
    stdout: str | None = None,
    schedule: str | None = None,
    mail: bool = False,
    licenses: Iterable[str] = (),
    generic: Iterable[str] = (),
    line: int = 1,
) -> ir.Job:
    resources = ir.Resources(
        nodes_min=nodes,
        tasks_per_node=tasks_per_node,
        gpus_per_node=gpus_per_node or None,
        exclusive=exclusive,
        constraint=constraint,
        licenses=tuple(ir.GenericResource(n) for n in licenses),
        generic=tuple(ir.GenericResource(n) for n in generic),
    )
    comp = ir.Component(resources=resources, launchers=tuple(launchers), containers=tuple(containers))
    return ir.Job(
        id=job_id or path,
        source=ir.SourceRef(path=path, format="slurm", line=line),
        kind=kind,
        name=name,
        components=(comp,),
        time_limit_s=int(hours * HOUR) if hours is not None else None,
        array=ir.ArraySpec(spec=f"0-{array - 1}", count=array, max_concurrent=array_throttle)
        if array
        else None,
        dependencies=tuple(deps),
        placement=ir.Placement(
            partitions=(partition,) if partition else (),
            account=account,
            topology=tuple(ir.KeyValue(k, v) for k, v in topology),
        ),
        failure=ir.FailurePolicy(requeue=requeue, signal=ir.Signal(signal, 300) if signal else None),
        io=ir.IOSpec(stdout=stdout),
        mail=ir.Mail(types=("END",), user="a@example.org") if mail else None,
        environment=tuple(environment),
        modules=tuple(modules),
        software_envs=tuple(ir.KeyValue(k, v) for k, v in software_envs),
        storage=tuple(storage),
        monitoring=tuple(ir.MonitoringHook(kind=m, line=line + 1) for m in monitoring),
        submits=tuple(submits),
        schedule=ir.Schedule(cron=schedule) if schedule else None,
        script=ir.ScriptInfo(shell="bash", body=body) if body else None,
    )


def wrapper(path: str, *submissions: ir.Submission, name: str | None = None) -> ir.Job:
    return slurm_job(path, kind="wrapper", name=name, submits=submissions)


def k8s_job(
    path: str,
    *,
    kind: str = "Job",
    name: str,
    namespace: str = "default",
    doc: int = 0,
    job_id: str | None = None,
    image: str = "registry.example.com/app:1",
    command: Sequence[str] = (),
    replicas: int = 1,
    gpus_per_pod: int = 0,
    components: Sequence[ir.Component] = (),
    mounts: Sequence[ir.Mount] = (),
    storage: Iterable[ir.StoragePath] = (),
    deps: Iterable[ir.Dependency] = (),
    queue: str | None = None,
    services: Iterable[ir.Service] = (),
    indexed: int | None = None,
    schedule: str | None = None,
    monitoring: Iterable[str] = (),
    topology: Iterable[tuple[str, str]] = (),
    environment: Iterable[ir.EnvVar] = (),
    launchers: Iterable[ir.Launcher] = (),
    scheduler: str | None = None,
    labels: Iterable[tuple[str, str]] = (),
    line: int = 1,
) -> ir.Job:
    if not components:
        resources = ir.Resources(nodes_min=1, gpus_per_node=gpus_per_pod or None)
        ctr = container(image, *command, mounts=mounts, runtime="kubernetes", line=line + 5)
        components = (
            ir.Component(
                name="main",
                replicas=replicas,
                resources=resources,
                containers=(ctr,),
                launchers=tuple(launchers),
                environment=tuple(environment),
            ),
        )
    return ir.Job(
        id=job_id or f"{path}#{doc}",
        source=ir.SourceRef(path=path, format="kubernetes", line=line, document=doc),
        kind=kind,
        name=name,
        components=tuple(components),
        array=ir.ArraySpec(spec=f"0-{indexed - 1}", count=indexed) if indexed else None,
        dependencies=tuple(deps),
        placement=ir.Placement(
            namespace=namespace,
            queue=queue,
            scheduler=scheduler,
            topology=tuple(ir.KeyValue(k, v) for k, v in topology),
        ),
        storage=tuple(storage),
        monitoring=tuple(ir.MonitoringHook(kind=m, line=line + 2) for m in monitoring),
        services=tuple(services),
        schedule=ir.Schedule(cron=schedule) if schedule else None,
        labels=tuple(ir.KeyValue(k, v) for k, v in labels),
    )


def component(
    name: str,
    *,
    replicas: int = 1,
    image: str = "registry.example.com/app:1",
    command: Sequence[str] = (),
    gpus_per_pod: int = 0,
    mounts: Sequence[ir.Mount] = (),
) -> ir.Component:
    return ir.Component(
        name=name,
        replicas=replicas,
        resources=ir.Resources(nodes_min=1, gpus_per_node=gpus_per_pod or None),
        containers=(container(image, *command, mounts=mounts, runtime="kubernetes"),),
    )


def synthetic_site(pipelines: int) -> list[ir.Job]:
    """A site of ``5 x pipelines`` jobs: wrapper -> prep -> train -> eval chains, a server per pipeline.

    Each pipeline has its own directories on /fsx; every tenth one also reads a
    shared dataset, so units stay small but file systems are shared by all.
    """
    jobs: list[ir.Job] = []
    for p in range(pipelines):
        base = f"site/p{p:05d}"
        shared = [read("/fsx/datasets/common/v1", 4)] if p % 10 == 0 else []
        jobs.append(
            wrapper(
                f"{base}/submit.sh",
                submit("prep.sbatch", "a", line=3),
                submit("train.sbatch", "b", [dep("afterok", "$a")], line=4),
                submit("eval.sbatch", None, [dep("afterany", "$b")], line=5),
            )
        )
        jobs.append(
            slurm_job(
                f"{base}/prep.sbatch",
                name=f"prep-{p}",
                partition="cpu",
                array=16,
                storage=[*shared, read(f"/fsx/raw/p{p}", 10), write(f"/fsx/data/p{p}/tok", 11)],
                software_envs=[("venv", "/fsx/venvs/data")],
                stdout=f"/fsx/logs/prep-{p}-%j.out",
            )
        )
        jobs.append(
            slurm_job(
                f"{base}/train.sbatch",
                name=f"train-{p}",
                nodes=1 + p % 8,
                gpus_per_node=8,
                partition="gpu",
                account="llm",
                deps=[dep("singleton", line=5)] if p % 7 == 0 else [],
                storage=[read(f"/fsx/data/p{p}/tok", 12), write(f"/fsx/ckpt/p{p}/step_1.pt", 13)],
                modules=["cuda/12.4", "nccl/2.21"],
                monitoring=["wandb", "nvidia-smi"],
                launchers=[launcher("torchrun", "train.py", line=14)],
            )
        )
        jobs.append(
            slurm_job(
                f"{base}/eval.sbatch",
                name=f"eval-{p}",
                gpus_per_node=1,
                partition="gpu",
                storage=[read(f"/fsx/ckpt/p{p}", 8), write(f"/fsx/eval/p{p}/result.json", 9)],
                monitoring=["prometheus-pushgateway"],
            )
        )
        jobs.append(
            k8s_job(
                f"{base}/serve.yaml",
                kind="Deployment",
                name=f"serve-{p}",
                namespace="serving",
                image="registry.example.com/vllm:0.5",
                mounts=[pvc("fsx-pvc", "/models", read_only=True)],
                storage=[read(f"/models/ckpt/p{p}", 20)],
                gpus_per_pod=2,
            )
        )
    return jobs
