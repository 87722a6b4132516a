"""Differences the translation makes on purpose, each with its reason: a case whose first difference
matches an entry is counted apart, not as a failure."""

from __future__ import annotations

import fnmatch

# (case name pattern, difference pattern, reason)
DECLARED: tuple[tuple[str, str, str], ...] = (
    (
        "*mpi_hello*",
        "SLURM_NNODES: Slurm '1', pods '2' (in python3)",
        "under sbatch Open MPI starts its daemon on each other node with a one-node srun, whose ranks see "
        "SLURM_NNODES=1 (a step's count); the MPIJob's ranks see the job's two nodes",
    ),
    (
        "*",
        "argv: * --rdzv_id=<job> *, pods * --rdzv_id=* (in torchrun)",
        "a native PyTorchJob's rendezvous id is the job's name, unique while the job runs, as Slurm's "
        "job id is",
    ),
    (
        "*",
        "only on Slurm: module [[]*",
        "native pods load no modules: the image holds the software the modules gave (recorded as "
        "approximated)",
    ),
    (
        "*torchrun*",
        "SLURM_GPUS_ON_NODE: Slurm None, pods *",
        "a job that asks no GPUs but runs torchrun --nproc_per_node=N is given N GPUs a node (recorded as "
        "inferred from the script): on the sandbox it asked none and got none",
    ),
    (
        "*",
        "program: Slurm 'module', pods *",
        "the module shim does nothing: the image holds the software the modules gave (recorded as "
        "approximated); the programs after it line up one earlier in the pods",
    ),
    (
        "*",
        "MASTER_ADDR: Slurm None, pods *",
        "the PyTorchJob operator sets MASTER_ADDR, MASTER_PORT, WORLD_SIZE and RANK in every pod it starts "
        "(the pod runner does as the operator does); sbatch sets none of them",
    ),
    (
        "*",
        "WORLD_SIZE: Slurm None, pods *",
        "the PyTorchJob operator sets WORLD_SIZE in every pod it starts; sbatch does not",
    ),
    (
        "*",
        "program: Slurm 'slurm_script', pods 'job.sh' *",
        "$0 names the script's copy: slurmd's spool file slurm_script on Slurm, the ConfigMap's job.sh in "
        "the pod (a stand-in sourced by the script records $0 as its program)",
    ),
    (
        "*",
        "argv: Slurm '/*/slurm_script', pods '/opt/migrate/job.sh' (in *)",
        "a script run by the interpreter its #! line names (python3) is given its own copy's path: slurmd's "
        "spool file slurm_script on Slurm, the ConfigMap's job.sh in the pod",
    ),
    (
        "*mpi_hello*",
        "SLURM_NODEID: Slurm '0', pods None *",
        "ranks of a bare mpirun in an MPIJob's Launcher start over ssh: the entrypoint passes on the "
        "script's exports but not the launcher's own SLURM_NODEID; under sbatch each rank inherits its "
        "node's from the srun that starts Open MPI's daemons",
    ),
    (
        "*",
        "argv: Slurm '*--rdzv_endpoint=<n0>:*', pods '*--rdzv_endpoint=localhost:*' (in torchrun)",
        "a one-pod job's rendezvous host is the pod itself, written localhost: a pod's own name resolves "
        "only through a headless Service, which a one-pod Job does not get",
    ),
    (
        "*",
        "argv: Slurm '--nnodes=*--rdzv_endpoint=*', pods '--nproc_per_node=*' (in torchrun)",
        "a native PyTorchJob's torchrun takes the node count and the rendezvous from the operator's PET_* "
        "variables, not from its argv (tests/test_run_differential.py runs it with real torchrun)",
    ),
    (
        "*trainjob*",
        "argv: Slurm '--nnodes=*--rdzv_endpoint=*', pods '/*' (in torchrun)",
        "a TrainJob's torchrun is given no options: the Trainer's Torch plugin sets PET_NNODES, "
        "PET_NPROC_PER_NODE, PET_NODE_RANK and the master's PET_MASTER_ADDR/PORT, which torchrun reads "
        "as its options' defaults; translated to Slurm, the same values are torchrun's argv",
    ),
    (
        "*",
        "argv: Slurm '--nnodes=* --rdzv_id=<job> *', pods '--nnodes * (in torchrun)",
        "translated to Slurm, a manifest's torchrun gets the job's node count (the manifest's number, "
        "read at run time) and the job id as its rendezvous id, so that a requeued job never joins an "
        "old rendezvous; the operator's pods run torchrun as written, with its default id",
    ),
    (
        "*",
        "NODE_NAME: Slurm '<n*>', pods 'podrunner-node' *",
        "a fieldRef to spec.nodeName names the Kubernetes node the pod runs on; on Slurm the node's host "
        "name stands for it (the pod runner's pods all run on its one node, podrunner-node)",
    ),
    (
        "*",
        "node: Slurm 'node=0', pods 'node=-1' *",
        "an MPIJob's Launcher is a pod of its own, not node 0 of the Workers: what the batch script runs "
        "outside mpirun runs there",
    ),
    (
        "*",
        "NODE_RANK: Slurm None, pods *",
        "a native JobSet's pods carry NODE_RANK, the pod's node index from its job-index label, which "
        "the arguments use as $(NODE_RANK) where the script has $SLURM_NODEID; sbatch sets no NODE_RANK",
    ),
    (
        "*jupyter_lab*",
        "argv: Slurm 'lab * --port=*', pods 'lab * --port=*' (in jupyter)",
        "the script draws its port at random (shuf -i 8800-8999)",
    ),
    (
        "*",
        "program: Slurm 'ray', pods *",
        "a native RayJob's head and workers are KubeRay's: the script's `ray start` lines have no place in "
        "the pods, whose first program is the entrypoint (recorded as mapped to the RayJob's cluster)",
    ),
    (
        "*sglang*",
        "argv: Slurm '* --node-rank 0 *', pods '* --node-rank 1 *' (in python3)",
        "the script passes $SLURM_NODEID unescaped, so the batch shell on node 0 gives every node rank 0 "
        "(its comment says so); the native LeaderWorkerSet gives each pod its own index, as SGLang needs",
    ),
    *(
        (
            case,
            "argv: Slurm '*<job>*', pods '*' (in *)",
            "where the pods carry no uid of their job (a native translation, a PyTorchJob, an MPIJob), "
            "the job id is the job's name, which a rerun sees again (recorded as approximated, with why)",
        )
        for case in (
            "*accelerate_multinode*",
            "*finetune_sft_8gpu*",
            "*distill_mixed_gpus*",
            "*openfoam_motorbike*",
            "*torch_distributed_run*",
            "*gromacs_md*",
        )
    ),
    *(
        (
            "*",
            difference,
            "a native translation leaves out commands that only print to the job's output "
            "(`nvidia-smi -L`): the pod runs the program itself (recorded as approximated: not run)",
        )
        for difference in ("only on Slurm: nvidia-smi [[]*", "program: Slurm 'nvidia-smi', pods *")
    ),
    (
        "*name_traversal*",
        "end state: Slurm Failed, pods Complete",
        "sbatch fails a job whose --output folder does not exist (here ../../etc/.. of the submit folder); "
        "a native translation writes no output file, only the pod log (recorded as approximated)",
    ),
    *(
        (
            "*",
            f"program: Slurm '{runtime}', pods *",
            "the pod is the container: the pods run the program the container runtime would start, in the "
            "job's image (recorded with the runtime's image); the stand-in runtime starts nothing",
        )
        for runtime in ("ch-run", "podman-hpc", "shifter", "apptainer", "singularity", "enroot", "sarus")
    ),
    *(
        (
            "*",
            f"only on Slurm: {runtime} [[]*",
            "the pod is the container: the pods run no container runtime, so a runtime's own commands "
            "(`sarus pull`) and the runs the pods make of its program have nothing to pair with",
        )
        for runtime in ("ch-run", "podman-hpc", "shifter", "apptainer", "singularity", "enroot", "sarus")
    ),
    *(
        (
            case,
            "*",
            "a native RayJob's (LeaderWorkerSet's) Ray cluster is the operator's: it starts Ray with its own "
            "flags (from the pod's resources, --memory) and health checks, waits for the nodes, and submits "
            "the driver through Ray's job API; with `ray` a stand-in there is no cluster, so those steps "
            "pass or fail by timing (tests/test_run_differential.py runs a RayJob with real Ray both ways)",
        )
        for case in ("*ray_tune_hpo*", "*vllm_ray*")
    ),
    (
        "*",
        "argv order: *",
        "the same options in another order, the program's other words in theirs: KubeRay writes `ray "
        "start`'s options in its own order, the translation in the manifest's",
    ),
    (
        "*",
        "argv: Slurm '--nnodes=*', pods '--nnodes=*:*' (in torchrun)",
        "an elastic PyTorchJob's torchrun takes between min and max nodes; a Slurm job has the nodes it "
        "was given, so torchrun gets that count (recorded as approximated: a Slurm job does not grow or "
        "shrink between bounds)",
    ),
    # Kubernetes to Slurm (reverse.py)
    (
        "*tokenize_nodes.expected.yaml",
        "JOB_COMPLETION_INDEX: Slurm None, pods '0' (in python)",
        "each of the JobSet's eight Jobs has one pod, whose completion index is 0: the translation gives "
        "the index where the command reads it ($(JOB_COMPLETION_INDEX)); this one reads NODE_RANK",
    ),
    (
        "*rayjob*.yaml",
        "*",
        "a RayJob's cluster as the translation starts it under sbatch: with `ray` a stand-in there is "
        "no cluster on either side, and the driver's wait for the Ray nodes never ends under sbatch "
        "(tests/test_run_differential.py runs rayjob_own_cluster with real Ray both ways)",
    ),
    *(
        (
            case,
            "node: Slurm *, pods *",
            "the Slurm job packs the pods onto nodes as the allocation model says the scheduler would (pods "
            "of 4 GPUs two to an 8-GPU node, one-GPU pods eight to a node, MPI workers of 64 CPUs three to a "
            "192-CPU node); the pod runner gives each pod a host of its own",
        )
        for case in (
            "cases__kubernetes__pytorchjob.yaml",
            "*kueue_pytorchjob.yaml",
            "*fsdp-g5-pytorchjob.yaml",
            "*pytorchjob_elastic.yaml",
            "*volcano_job_mpi.yaml",
        )
    ),
    (
        "cases__kubernetes__pytorchjob.yaml",
        "only on Slurm: python [[]run_mlm.py *",
        "with cleanPodPolicy Running the operator ends the job when its Master succeeds and deletes the "
        "Workers still running; with stand-ins that end at once, how many Workers started before that is "
        "a race in the pods (2 to 4 of them), while sbatch runs every task to its end",
    ),
    (
        "*packjob_legacy*",
        "SLURM_JOB_NODELIST: Slurm *, pods * (in cp2k.psmp)",
        "a het step's node list is Slurm's host list, in the order of the node names (here the second "
        "component's nodes before the first's); the pods' names sort by component",
    ),
    (
        "*tensorboard_resnet*",
        "only * tensorboard [[]*",
        "tensorboard is started in the background (`&`) and left running: both Slurm and the kubelet kill "
        "what is left when the script ends, and with stand-ins that end at once whether it recorded first "
        "is a race on either side",
    ),
    (
        "*wait_all_nodes*",
        "only on Slurm: all_reduce_perf *",
        "--nodes=2-4 runs on as many of 2 to 4 nodes as are free (4 on the sandbox); the MPIJob has the "
        "minimum, 2 Workers (recorded as approximated: a node range is elastic only in a PyTorchJob)",
    ),
    (
        "*elastic_finetune*",
        "only in the pods: torchrun *",
        "--nodes=2-4 starts on as many of 2 to 4 nodes as are free when the job starts (the sandbox had 2 "
        "beside the other cases); the elastic PyTorchJob asks its 4 replicas and runs with any 2 to 4",
    ),
    (
        "*",
        "only on Slurm: ml [[]*",
        "ml is module's short form: native pods load no modules, the image holds the software (recorded as "
        "approximated)",
    ),
    *(
        (
            "*node_healthcheck*",
            difference,
            "the check asks `scontrol show node` for the node's GPU count: the pods' scontrol answers host "
            "lists only (recorded), so the pods compare with 0 and pass where the sandbox's typed GPUs fail "
            "the check (which drains the node and ends the step there, before its later checks)",
        )
        for difference in ("only in the pods: *", "end state: Slurm Failed, pods Complete")
    ),
    (
        "*node_healthcheck*",
        "program: Slurm 'sudo', pods *",
        "the check asks `scontrol show node` for the node's GPU count: the pods' scontrol answers host lists "
        "only (recorded), so the pods compare with 0 and pass where the sandbox's typed GPUs fail the check",
    ),
    (
        "*pushgateway_etl*",
        "SLURM_JOB_NUM_NODES: Slurm *, pods '1' (in *)",
        "--spread-job spreads the tasks over as many nodes as are free when the job starts (here the "
        "sandbox's free nodes); the pods are as many as the script asks nodes, one (recorded as dropped)",
    ),
    (
        "*pushgateway_etl*",
        "node: Slurm *, pods 'node=0' (in *)",
        "--spread-job puts the tasks on as many nodes as are free when the job starts; the pods are the "
        "one node the script asks (recorded as dropped)",
    ),
    (
        "*native_ray*",
        "*",
        "a RayJob's cluster is KubeRay's and its entrypoint goes through Ray's job API: with `ray` a "
        "stand-in neither side has a cluster; tests/test_run_differential.py runs this case with real Ray "
        "on both sides",
    ),
)


def reason(case: str, difference: str) -> str | None:
    for case_pattern, difference_pattern, why in DECLARED:
        if fnmatch.fnmatch(case, case_pattern) and fnmatch.fnmatch(difference, difference_pattern):
            return why
    return None
