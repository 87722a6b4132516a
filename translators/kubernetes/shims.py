"""The scripts mounted beside the job script: the entrypoint and the command shims.

Their text is constant: everything job-specific reaches them through
environment variables set in the manifest (``MIGRATE_*`` and static
``SLURM_*``), so no value from a job file is ever spliced into shell code.

- ``entrypoint.sh`` computes the Slurm environment of this pod (array task id,
  node id, host list, job id ...), tees stdout/stderr into the ``--output`` file
  when that lies on shared storage, forwards ``--signal`` and then runs the
  unchanged job script.
- Slurm runs the batch script once, on the first node, and ``srun`` starts
  the steps on the nodes: so does the pod set. The pod of node 0 runs the
  script; every other pod of the job runs ``bin/migrate-stepd serve`` and
  starts the steps that the script's ``srun`` sends it (docs/execution.md).
- ``bin/srun`` starts a step on the nodes it uses: here, once per local task
  with ``SLURM_PROCID``/``SLURM_LOCALID`` set (or once for launchers that
  start their own workers: torchrun, mpirun ...), and in the other pods
  through ``bin/migrate-stepd run``, with the batch shell's environment.
- ``bin/scontrol`` answers ``show hostnames``; ``bin/sbatch`` refuses loudly;
  ``bin/module`` and ``bin/ml`` note that the image provides the software.
- ``bin/shifter``, ``bin/podman-hpc``, ``bin/sarus`` and ``bin/ch-run`` (the
  runtimes declared ``shim=True`` in ``translators/runtimes.py``) skip the
  runtime's options and image and run the program: the pod already is the
  container, in the job's image. Each is written from its runtime's tables.

The texts read ``MIGRATE_*`` variables through placeholders (``@{MIGRATE_NODES}``,
``@perl{MIGRATE_STEP_PORT}``) that ``translators/job_variables.py`` fills with their defaults.
"""

from __future__ import annotations

import functools
import textwrap

from migrate.translators import job_variables, runtimes
from migrate.translators.runtimes import Runtime

ENTRYPOINT = r"""#!/bin/bash
# Written by migrate: sets up the Slurm environment of this pod, then runs the
# unchanged job script. Job-specific values come from the MIGRATE_* and
# SLURM_* variables of the container.
MIGRATE_DIR=@{MIGRATE_DIR}
export MIGRATE_DIR
export PATH="$MIGRATE_DIR/bin:$PATH"
# A login shell (#!/bin/bash -l) reads the image's profile, which may set PATH anew (Debian's
# does): each shim is also an exported function, which the script's shell inherits whatever PATH.
for __m_shim in "$MIGRATE_DIR"/bin/*; do
  __m_name=${__m_shim##*/}
  case $__m_name in migrate-stepd|*[!A-Za-z0-9_-]*) continue ;; esac
  eval "$__m_name() { \"\$MIGRATE_DIR/bin/$__m_name\" \"\$@\"; }"
  export -f "$__m_name"
done
if [ "@{MIGRATE_SRUN_MODE}" = mpirun ]; then
  # An MPIJob's ranks start over ssh and see none of the script's environment; under sbatch, mpirun
  # starts them through srun and they inherit it. Pass on what the script exported (not what names
  # the launcher's own node or task).
  mpirun() {
    local fwd=() v
    for v in $(compgen -e); do
      case $v in
        PWD|OLDPWD|SHLVL|_|HOSTNAME|SLURMD_NODENAME|SLURM_NODEID|SLURM_PROCID|SLURM_LOCALID|\
OMPI_*|PMIX_*|MIGRATE_*) ;;
        *) fwd+=(-x "$v") ;;
      esac
    done
    command mpirun "${fwd[@]}" "$@"
  }
  export -f mpirun
fi

# Position of this pod: index within its group of pods, then array task and node.
__m_idx=0
if [ -n "@{MIGRATE_INDEX_FROM}" ]; then
  __m_idx=${!MIGRATE_INDEX_FROM:-0}
fi
__m_nodes=@{MIGRATE_NODES}
__m_pos=$(( __m_idx / __m_nodes ))
export MIGRATE_GROUP_NODEID=$(( __m_idx % __m_nodes ))
export SLURM_NODEID=$(( MIGRATE_GROUP_NODEID + @{MIGRATE_NODE_OFFSET} ))
export MIGRATE_NODE_INDEX=$SLURM_NODEID  # in a step, SLURM_NODEID counts the step's nodes

# Array task id: JOB_COMPLETION_INDEX counts 0..N-1; ranges "start:step:count"
# map it onto the Slurm indices (stepped and sparse arrays included).
if [ -n "@{MIGRATE_ARRAY_RANGES}" ]; then
  __m_rest=$__m_pos
  for __m_r in $MIGRATE_ARRAY_RANGES; do
    __m_s=${__m_r%%:*}; __m_r=${__m_r#*:}; __m_st=${__m_r%%:*}; __m_n=${__m_r#*:}
    if [ "$__m_rest" -lt "$__m_n" ]; then
      SLURM_ARRAY_TASK_ID=$(( __m_s + __m_rest * __m_st ))
      break
    fi
    __m_rest=$(( __m_rest - __m_n ))
  done
  export SLURM_ARRAY_TASK_ID
  export SLURM_ARRAY_JOB_ID="@{MIGRATE_JOB_UID}"
  export SLURM_JOB_ID="@{MIGRATE_JOB_UID}-${SLURM_ARRAY_TASK_ID}"
else
  export SLURM_JOB_ID="@{MIGRATE_JOB_UID}"
fi
export SLURM_JOBID=$SLURM_JOB_ID

# Host list: stable pod DNS names, from a list or a "prefix<N>suffix" pattern.
if [ -n "@{MIGRATE_HOSTS}" ]; then
  __m_hosts=$MIGRATE_HOSTS
elif [ -n "@{MIGRATE_HOST_PREFIX}" ]; then
  __m_hosts=""
  __m_base=$(( __m_pos * __m_nodes ))
  for (( __m_k = 0; __m_k < __m_nodes; __m_k++ )); do
    __m_hosts+="${__m_hosts:+ }${MIGRATE_HOST_PREFIX}$(( __m_base + __m_k ))@{MIGRATE_HOST_SUFFIX}"
  done
else
  __m_hosts=$(hostname)
fi
export SLURM_JOB_NODELIST=${__m_hosts// /,}
if [ -n "@{MIGRATE_HET_GROUP}" ]; then
  # A hetjob: each component is a job of its own there; its pods see their component's nodes, and
  # the shims rebuild the whole list from SLURM_JOB_NODELIST_HET_GROUP_*.
  __m_v=SLURM_JOB_NODELIST_HET_GROUP_$MIGRATE_HET_GROUP
  export SLURM_JOB_NODELIST=${!__m_v:-$SLURM_JOB_NODELIST}
fi
export SLURM_NODELIST=$SLURM_JOB_NODELIST
__m_k=0
for __m_h in $__m_hosts; do
  if [ "$__m_k" -eq "$SLURM_NODEID" ]; then SLURMD_NODENAME=$__m_h; fi
  __m_k=$(( __m_k + 1 ))
done
export SLURMD_NODENAME=${SLURMD_NODENAME:-$(hostname)}
export SLURM_TOPOLOGY_ADDR=$SLURMD_NODENAME

if [ -n "@{MIGRATE_TASK_LAYOUT}" ]; then
  # Slurm's counts where the nodes' differ ("15,1"): this node's first task follows those before it
  IFS=, read -ra __m_layout <<< "$MIGRATE_TASK_LAYOUT"
  SLURM_PROCID=0
  for (( __m_k = 0; __m_k < MIGRATE_GROUP_NODEID; __m_k++ )); do
    SLURM_PROCID=$(( SLURM_PROCID + ${__m_layout[__m_k]:-0} ))
  done
  export SLURM_PROCID
else
  export SLURM_PROCID=$(( MIGRATE_GROUP_NODEID * @{MIGRATE_TASKS_PER_NODE} ))
fi
if [ -n "@{MIGRATE_NODE_CPUS}" ]; then
  IFS=, read -ra __m_cpus <<< "$MIGRATE_NODE_CPUS"
  export SLURM_CPUS_ON_NODE=${__m_cpus[MIGRATE_GROUP_NODEID]:-$SLURM_CPUS_ON_NODE}
fi
export SLURM_LOCALID=0
export SLURM_TASK_PID=$$
# Slurm sets it only once the job was requeued: unset on the first start, as scripts test it
if [ "@{MIGRATE_RESTARTS}" != 0 ]; then export SLURM_RESTART_COUNT=$MIGRATE_RESTARTS; fi
export SLURM_SUBMIT_DIR=${SLURM_SUBMIT_DIR:-$PWD}
# slurmd gives the job TMPDIR=/tmp when the submitter's environment has none; a container has none
export TMPDIR=${TMPDIR:-/tmp}
export SLURM_SUBMIT_HOST=${SLURM_SUBMIT_HOST:-$SLURMD_NODENAME}
printf -v SLURM_JOB_START_TIME '%(%s)T' -1
export SLURM_JOB_START_TIME
if [ -n "@{MIGRATE_TIME_LIMIT}" ]; then
  export SLURM_JOB_END_TIME=$(( SLURM_JOB_START_TIME + MIGRATE_TIME_LIMIT ))
fi

# Several pods: Slurm runs the batch script once, on the first node, and srun
# starts the steps everywhere. Every other pod only serves those steps.
__m_count=0
for __m_h in $__m_hosts; do __m_count=$(( __m_count + 1 )); done
__m_multi=0
if [ "$__m_count" -gt 1 ] && [ "@{MIGRATE_SRUN_MODE}" = local ]; then
  __m_multi=1
  export MIGRATE_STEP_PORT=@{MIGRATE_STEP_PORT}
  export MIGRATE_BATCH_HOST=${__m_hosts%% *}
  if [ "$SLURM_NODEID" != 0 ]; then
    exec perl "$MIGRATE_DIR/bin/migrate-stepd" serve
  fi
fi

# --output/--error on shared storage: keep the file as well as the pod log.
__m_expand() {
  local p=$1 user=${USER:-}
  [ -n "$user" ] || user=$(id -un 2>/dev/null || echo user)
  p=${p//%%/$'\001'}
  p=${p//%A/"${SLURM_ARRAY_JOB_ID:-$SLURM_JOB_ID}"}
  p=${p//%a/"${SLURM_ARRAY_TASK_ID:-4294967294}"}
  p=${p//%j/"$SLURM_JOB_ID"}
  p=${p//%x/"${SLURM_JOB_NAME:-job}"}
  p=${p//%N/"${SLURMD_NODENAME%%.*}"}
  p=${p//%n/"$SLURM_NODEID"}
  p=${p//%u/"$user"}
  p=${p//%t/0}
  p=${p//%s/batch}
  p=${p//$'\001'/%}
  printf '%s' "$p"
}
# sbatch truncates the files each time the job starts, a requeued job's start too (--open-mode=append,
# or JobFileAppend=1 in slurm.conf, keeps them); a restarted pod is the job requeued.
__m_truncate=1
if [ "@{MIGRATE_OPEN_MODE}" = append ]; then __m_truncate=0; fi
# sbatch opens the files before the script starts: a file it cannot open fails the job.
__m_open() {
  if [ "$__m_truncate" = 1 ]; then : 2>/dev/null > "$1"; else : 2>/dev/null >> "$1"; fi && return 0
  echo "migrate: error: could not open the $2 file $1: the job fails, as under sbatch" >&2
  exit 1
}
__m_tees=()
if [ -n "@{MIGRATE_STDOUT}" ]; then
  __m_out=$(__m_expand "$MIGRATE_STDOUT")
  __m_open "$__m_out" output
  exec > >(tee -a "$__m_out")
  __m_tees+=($!)
  if [ -z "@{MIGRATE_STDERR}" ]; then exec 2> >(tee -a "$__m_out" >&2); __m_tees+=($!); fi
fi
if [ -n "@{MIGRATE_STDERR}" ]; then
  __m_err=$(__m_expand "$MIGRATE_STDERR")
  if [ "$__m_err" != "${__m_out:-}" ]; then __m_open "$__m_err" error; fi
  exec 2> >(tee -a "$__m_err" >&2)
  __m_tees+=($!)
fi
if [ -n "@{MIGRATE_STDIN}" ]; then
  __m_in=$(__m_expand "$MIGRATE_STDIN")
  if [ ! -r "$__m_in" ]; then
    echo "migrate: error: could not open the input file $__m_in: the job fails, as under sbatch" >&2
    exit 1
  fi
  exec < "$__m_in"
fi

if [ "$__m_multi" = 1 ]; then
  # The allocation is complete once every pod's name resolves (DNS records may
  # lag the pods); the service here tells the other pods this pod still runs.
  __m_deadline=$(( SECONDS + @{MIGRATE_STEP_WAIT} ))
  for __m_h in $__m_hosts; do
    command -v getent >/dev/null 2>&1 || break
    until getent hosts "$__m_h" >/dev/null 2>&1 || [ "$SECONDS" -ge "$__m_deadline" ]; do sleep 1; done
  done
  MIGRATE_BATCH_HOST="" perl "$MIGRATE_DIR/bin/migrate-stepd" serve </dev/null >/dev/null 2>&1 &
  __m_server=$!
elif [ -z "@{MIGRATE_SIGNAL}" ] && [ "${#__m_tees[@]}" = 0 ]; then
  exec "$MIGRATE_DIR/job.sh" "$@"
fi

# The job script runs in the background, so that this shell can pass signals
# on and, with several pods, end the other pods' service when the script ends.
"$MIGRATE_DIR/job.sh" "$@" <&0 &
__m_child=$!
__m_send() {
  local f s pid sig=@{MIGRATE_SIGNAL}
  sig=${sig:-TERM}  # no --signal: what Kubernetes sent
  if [ -z "@{MIGRATE_SIGNAL}" ] || [ "@{MIGRATE_SIGNAL_BATCH_ONLY}" = 1 ]; then
    kill -s "$sig" "$__m_child" 2>/dev/null
    return 0
  fi
  for f in /proc/[0-9]*/stat; do  # the steps: children of the batch shell
    read -r s < "$f" 2>/dev/null || continue
    pid=${f#/proc/}; pid=${pid%/stat}
    s=${s##*) }
    set -- $s
    if [ "${2:-}" = "$__m_child" ]; then kill -s "$sig" "$pid" 2>/dev/null; fi
  done
  return 0
}
trap __m_send TERM
__m_timer=""
if [ -n "@{MIGRATE_SIGNAL}" ] && [ -n "@{MIGRATE_TIME_LIMIT}" ] \
    && [ "${MIGRATE_TIME_LIMIT}" -gt "@{MIGRATE_SIGNAL_LEAD}" ]; then
  # --signal: Kubernetes only sends SIGTERM at deletion; send the requested
  # signal at that point and, like Slurm, LEAD seconds before the time limit.
  ( sleep $(( MIGRATE_TIME_LIMIT - @{MIGRATE_SIGNAL_LEAD} )) && kill -s TERM $$ ) &
  __m_timer=$!
fi
while :; do
  wait "$__m_child"
  __m_rc=$?
  kill -0 "$__m_child" 2>/dev/null || break
done
if [ -n "$__m_timer" ]; then kill "$__m_timer" 2>/dev/null; fi
if [ "$__m_multi" = 1 ]; then
  __m_k=0
  __m_releases=()
  for __m_h in $__m_hosts; do
    if [ "$__m_k" -ne "$SLURM_NODEID" ]; then
      perl "$MIGRATE_DIR/bin/migrate-stepd" release "$__m_h" "$__m_rc" &
      __m_releases+=($!)
    fi
    __m_k=$(( __m_k + 1 ))
  done
  for __m_p in "${__m_releases[@]}"; do wait "$__m_p"; done
  kill "$__m_server" 2>/dev/null
fi
if [ "${#__m_tees[@]}" != 0 ]; then
  # The tees may still hold the script's last lines, and the container's end kills them: close
  # their pipes and give them a moment (a process the script left running may keep a pipe open).
  exec >&- 2>&-
  for __m_k in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
    __m_alive=0
    for __m_p in "${__m_tees[@]}"; do kill -0 "$__m_p" 2>/dev/null && __m_alive=1; done
    [ "$__m_alive" = 1 ] || break
    sleep 0.1
  done
fi
exit "$__m_rc"
"""

SRUN = r"""#!/bin/bash
# srun shim written by migrate. Starts one job step on the nodes it uses: in
# this pod once per local task with SLURM_PROCID/SLURM_LOCALID set (or once
# for launchers that start their own workers), in the other pods of the job
# through their step service (migrate-stepd), with this shell's environment.
# Pyxis --container-* options are ignored: the pod already is the container.
__m_me=@{MIGRATE_NODE_INDEX}
__m_hosts=(${SLURM_JOB_NODELIST//,/ })
if [ -n "@{MIGRATE_HET_GROUP}" ]; then  # a hetjob: every component's nodes, in order
  __m_hosts=()
  for (( __m_g = 0; __m_g < ${SLURM_HET_SIZE:-1}; __m_g++ )); do
    __m_v=SLURM_JOB_NODELIST_HET_GROUP_$__m_g
    __m_hosts+=(${!__m_v//,/ })
  done
fi
[ ${#__m_hosts[@]} -gt 0 ] || __m_hosts=("$(hostname)")
__m_pids=()
if [ -n "@{MIGRATE_STEP_GPUS}" ]; then
  # --exclusive gave the job its nodes' GPUs: a step gets those the job asked (Slurm 22.05)
  if [ "$MIGRATE_STEP_GPUS" = 0 ]; then
    unset SLURM_GPUS_ON_NODE CUDA_VISIBLE_DEVICES
  else
    export SLURM_GPUS_ON_NODE=$MIGRATE_STEP_GPUS
    CUDA_VISIBLE_DEVICES=0
    for (( __m_g = 1; __m_g < MIGRATE_STEP_GPUS; __m_g++ )); do CUDA_VISIBLE_DEVICES+=",$__m_g"; done
    export CUDA_VISIBLE_DEVICES
  fi
fi
__m_node_cpus=()  # the job's CPUs on each node, where the nodes' differ
if [ -n "@{MIGRATE_NODE_CPUS}" ] && [ -z "@{MIGRATE_HET_GROUP}" ]; then
  IFS=, read -ra __m_node_cpus <<< "$MIGRATE_NODE_CPUS"
fi

__m_is_launcher() {
  case "${1##*/}" in
    torchrun|mpirun|mpiexec|orterun|deepspeed|accelerate|horovodrun|hydra_pmi_proxy) return 0 ;;
    python|python3|python3.*)
      if [ "${2:-}" = -m ]; then
        case "${3:-}" in torch.distributed.run|torch.distributed.launch) return 0 ;; esac
      fi ;;
  esac
  return 1
}

# The node ids (positions in SLURM_JOB_NODELIST) of a list of host names.
__m_ids_of() {
  local name k found
  for name in ${1//,/ }; do
    found=""
    for k in "${!__m_hosts[@]}"; do
      if [ "${__m_hosts[$k]%%.*}" = "${name%%.*}" ]; then found=$k; break; fi
    done
    if [ -z "$found" ]; then
      echo "srun: error: host $name is not in this job's node list ($SLURM_JOB_NODELIST)" >&2
      return 1
    fi
    printf '%s\n' "$found"
  done
}

__m_step() {
  local ntasks="" nodes="" tpn="" cpt="" nodelist="" groups="" input=all
  while [ $# -gt 0 ]; do
    case "$1" in
      --) shift; break ;;
      -i|--input) input=$2; shift 2 ;;
      --input=*) input=${1#*=}; shift ;;
      -i*) input=${1#-i}; shift ;;
      -n|--ntasks) ntasks=$2; shift 2 ;;
      --ntasks=*) ntasks=${1#*=}; shift ;;
      -n*) ntasks=${1#-n}; shift ;;
      -c|--cpus-per-task) cpt=$2; shift 2 ;;
      --cpus-per-task=*) cpt=${1#*=}; shift ;;
      -c*) cpt=${1#-c}; shift ;;
      -N|--nodes) nodes=$2; shift 2 ;;
      --nodes=*) nodes=${1#*=}; shift ;;
      -N*) nodes=${1#-N}; shift ;;
      --ntasks-per-node) tpn=$2; shift 2 ;;
      --ntasks-per-node=*) tpn=${1#*=}; shift ;;
      -w|--nodelist) nodelist=$2; shift 2 ;;
      --nodelist=*) nodelist=${1#*=}; shift ;;
      -w*) nodelist=${1#-w}; shift ;;
      --het-group|--pack-group) groups=$2; shift 2 ;;
      --het-group=*|--pack-group=*) groups=${1#*=}; shift ;;
      --container-image|--container-mounts|--container-workdir|--container-name|--container-save|--container-env)
        shift 2 ;;
      --*=*) shift ;;
      @VALUED_SHORT@) shift 2 ;;
      @VALUED_LONG@) shift 2 ;;
      -*) shift ;;
      *) break ;;
    esac
  done
  __m_plan_nodes=0 __m_plan_tasks=0
  [ $# -gt 0 ] || return 0
  if [ "@{MIGRATE_SRUN_MODE}" = mpirun ] && ! __m_is_launcher "$@"; then
    [ "$__m_dry" = 1 ] && return 0
    # Ranks started over ssh see none of this shell's environment: Open MPI passes on what -x
    # names, and each rank takes its Slurm identity from Open MPI's (ranks fill a Worker's slots
    # in order, as Slurm's block distribution fills a node).
    local fwd=() v
    for v in $(compgen -e); do
      case $v in
        PWD|OLDPWD|SHLVL|_|HOSTNAME|SLURMD_NODENAME|SLURM_NODEID|SLURM_PROCID|SLURM_LOCALID|OMPI_*|PMIX_*) ;;
        SLURM_NNODES|SLURM_NTASKS|SLURM_NPROCS|SLURM_STEP_NUM_TASKS|SLURM_STEP_NUM_NODES) ;;  # below
        *) fwd+=(-x "$v") ;;
      esac
    done
    local np=${ntasks:-${SLURM_NTASKS:-$(( ${#__m_hosts[@]} * @{MIGRATE_TASKS_PER_NODE} ))}}
    # The step's own counts, as srun gives its tasks: its tasks fill the nodes in order.
    local per=${tpn:-@{MIGRATE_TASKS_PER_NODE}} used=${nodes%%-*}
    [ -n "$used" ] || used=$(( (np + per - 1) / per ))
    [ "$used" -le "${#__m_hosts[@]}" ] || used=${#__m_hosts[@]}
    SLURM_NNODES=$used SLURM_NTASKS=$np SLURM_NPROCS=$np SLURM_STEP_NUM_TASKS=$np SLURM_STEP_NUM_NODES=$used \
      command mpirun -np "$np" "${fwd[@]}" -x SLURM_NNODES -x SLURM_NTASKS -x SLURM_NPROCS \
      -x SLURM_STEP_NUM_TASKS -x SLURM_STEP_NUM_NODES /bin/bash -c \
      'export SLURM_PROCID=$OMPI_COMM_WORLD_RANK SLURM_LOCALID=$OMPI_COMM_WORLD_LOCAL_RANK
       export SLURM_NODEID=$(( OMPI_COMM_WORLD_RANK / @{MIGRATE_TASKS_PER_NODE} ))
       export SLURMD_NODENAME=$(hostname)
       exec "$@"' migrate-rank "$@"
    return $?
  fi
  # The nodes this step may use: its het groups' (by default the component of its place in
  # `srun a : b`, the first for a plain srun), or all.
  local pool=() g var found het_tasks="" het_tpn=""
  if [ -n "@{MIGRATE_HET_GROUP}" ]; then
    for g in ${groups//,/ }; do
      var=SLURM_JOB_NODELIST_HET_GROUP_$g
      found=$(__m_ids_of "${!var:-}") || return 1
      pool+=($found)
    done
    if [ -z "$groups" ]; then
      var=SLURM_JOB_NODELIST_HET_GROUP_$__m_part
      found=$(__m_ids_of "${!var:-}") || return 1
      pool=($found)
      groups=$__m_part
    fi
    if [ "${groups//,/}" = "$groups" ]; then  # one component: its tasks by default, as srun takes them
      var=SLURM_NTASKS_HET_GROUP_$groups; het_tasks=${!var:-}
      var=SLURM_NTASKS_PER_NODE_HET_GROUP_$groups; het_tpn=${!var:-}
    fi
  else
    pool=("${!__m_hosts[@]}")
  fi
  local targets=()
  if [ "@{MIGRATE_IN_STEP}" = 1 ]; then
    targets=("$__m_me")  # srun inside a step: this node only
  elif [ -n "$nodelist" ]; then
    found=$(__m_ids_of "$nodelist") || return 1
    targets=($found)
  else
    local want=${#pool[@]}
    nodes=${nodes%%-*}
    if [ -n "$nodes" ] && [ "$nodes" -lt "$want" ]; then
      want=$nodes
    elif [ -z "$nodes" ] && [ -n "$ntasks" ] && [ "$ntasks" -lt "$want" ]; then
      want=$ntasks
    fi
    targets=("${pool[@]:0:$want}")
  fi
  local used=${#targets[@]} launcher=0 p id count first total step_nodes="" rc=0 pids=() t
  __m_is_launcher "$@" && launcher=1
  for id in "${targets[@]}"; do step_nodes+="${step_nodes:+,}${__m_hosts[$id]}"; done
  if [ -n "$tpn" ]; then
    total=${ntasks:-$(( used * tpn ))}
  elif [ -n "$ntasks" ]; then
    total=$ntasks
  elif [ -n "$nodes" ] || [ -n "$nodelist" ]; then
    total=$used
  elif [ -n "$het_tasks" ]; then
    total=$het_tasks
  elif [ -z "@{MIGRATE_HET_GROUP}" ] && [ "@{MIGRATE_IN_STEP}" != 1 ] && [ -n "${SLURM_NTASKS:-}" ]; then
    total=$SLURM_NTASKS  # srun takes the job's --ntasks from the environment sbatch gave
  else
    total=$(( used * @{MIGRATE_TASKS_PER_NODE} ))
  fi
  if [ "$__m_dry" = 1 ]; then
    __m_plan_nodes=$used __m_plan_tasks=$total __m_plan_list=$step_nodes
    return 0
  fi
  if [ -n "@{MIGRATE_HET_GROUP}" ]; then  # a het step's tasks see its components' nodes as the job's
    local -x SLURM_JOB_NODELIST="" SLURM_JOB_NUM_NODES=${#pool[@]}
    for id in "${pool[@]}"; do SLURM_JOB_NODELIST+="${SLURM_JOB_NODELIST:+,}${__m_hosts[$id]}"; done
    local -x SLURM_NODELIST=$SLURM_JOB_NODELIST
    if [ -n "$het_tpn" ]; then local -x SLURM_NTASKS_PER_NODE=$het_tpn; else unset SLURM_NTASKS_PER_NODE; fi
  fi
  # What the tasks are told of their step: this part's, or, in `srun a : b`, the whole step's (its
  # tasks, nodes and node list, which are then also the job's), as Slurm tells every part's tasks.
  local seen_tasks=$total seen_nodes=$used seen_list=$step_nodes
  if [ -n "$__m_whole_tasks" ]; then
    seen_tasks=$__m_whole_tasks seen_nodes=$__m_whole_nodes seen_list=$__m_whole_list
    local -x SLURM_JOB_NODELIST=$seen_list SLURM_NODELIST=$seen_list SLURM_JOB_NUM_NODES=$seen_nodes
  fi
  [ -z "$tpn" ] || local -x SLURM_NTASKS_PER_NODE=$tpn  # the step's own, as srun gives its tasks
  # The tasks of each node: --ntasks-per-node's, else dealt round-robin, none beyond the CPUs the job
  # holds on a node (where the nodes' differ) for the step's own --cpus-per-task (srun 22.05 does
  # not take the job's); what is left once all are full is dealt over all.
  local counts=() bounds=() left=$total placed next=0
  for p in "${!targets[@]}"; do
    counts[p]=${tpn:-0} bounds[p]=-1
    [ ${#__m_node_cpus[@]} -eq 0 ] || bounds[p]=$(( ${__m_node_cpus[${targets[p]}]:-0} / ${cpt:-1} ))
  done
  while [ -z "$tpn" ] && [ "$left" -gt 0 ]; do
    placed=0
    for p in "${!targets[@]}"; do
      if [ "$left" -gt 0 ] && { [ "${bounds[p]}" -lt 0 ] || [ "${counts[p]}" -lt "${bounds[p]}" ]; }; then
        counts[p]=$(( counts[p] + 1 )) left=$(( left - 1 )) placed=1
      fi
    done
    [ "$placed" = 1 ] || for p in "${!bounds[@]}"; do bounds[p]=-1; done
  done
  for p in "${!targets[@]}"; do
    id=${targets[$p]}
    count=${counts[p]} first=$next next=$(( next + count ))
    [ "$launcher" = 1 ] && count=1
    [ "$count" -gt 0 ] || continue
    first=$(( first + __m_task_base ))
    if [ "$id" = "$__m_me" ]; then
      for (( t = 0; t < count; t++ )); do
        SLURM_PROCID=$(( first + t )) SLURM_LOCALID=$t SLURM_NODEID=$(( p + __m_node_base )) \
          SLURM_STEP_NUM_TASKS=$seen_tasks SLURM_NTASKS=$seen_tasks SLURM_NPROCS=$seen_tasks \
          SLURM_STEP_NUM_NODES=$seen_nodes SLURM_NNODES=$seen_nodes \
          SLURM_STEP_NODELIST=$seen_list MIGRATE_IN_STEP=1 \
          "$@" < "$(__m_input_of "$input" $(( first + t )))" &
        pids+=($!)
        __m_pids+=($!)
      done
    else
      local only=""
      case $input in [0-9]*) only=$input ;; esac
      SLURM_NODEID=$(( p + __m_node_base )) SLURM_STEP_NUM_TASKS=$seen_tasks SLURM_NTASKS=$seen_tasks \
        SLURM_NPROCS=$seen_tasks SLURM_STEP_NUM_NODES=$seen_nodes SLURM_NNODES=$seen_nodes \
        SLURM_STEP_NODELIST=$seen_list MIGRATE_STDIN_TASK=$only \
        perl "$MIGRATE_DIR/bin/migrate-stepd" run "${__m_hosts[$id]}" "$first" "$count" "$@" \
        < "$(__m_input_of "$input" "$only")" &
      pids+=($!)
      __m_pids+=($!)
    fi
  done
  for p in "${pids[@]}"; do
    wait "$p" || { local s=$?; [ "$rc" = 0 ] && rc=$s; }
  done
  return "$rc"
}

# What task $2 reads as stdin (srun --input $1): srun's own for all tasks (the default) or for task N
# only, nothing for none, else the file the option names (Slurm's %-patterns are not expanded). A
# step sent to another pod takes srun's stdin along for task N; that pod gives it to N only.
__m_input_of() {
  case $1 in
    all) printf '%s\n' "$__m_in" ;;
    none) printf '/dev/null\n' ;;
    [0-9]*) if [ "$1" = "$2" ]; then printf '%s\n' "$__m_in"; else printf '/dev/null\n'; fi ;;
    *%*) printf '/dev/null\n' ;;
    *) printf '%s\n' "$1" ;;
  esac
}

# srun hands its stdin to the tasks (a here-document, a file, a pipe): read once, here, so that
# every task, in this pod and in the others, reads it from the start (at most 64 MiB).
__m_in=/dev/null
if [ ! -t 0 ] && ! [ /dev/stdin -ef /dev/null ]; then
  if __m_in=$(mktemp "${TMPDIR:-/tmp}/migrate-srun-in.XXXXXX"); then
    head -c 67108864 > "$__m_in"
  else
    __m_in=/dev/null
  fi
fi

__m_forward() { [ ${#__m_pids[@]} -gt 0 ] && kill -s "$1" "${__m_pids[@]}" 2>/dev/null; }
for __m_sig in TERM INT USR1 USR2 HUP; do trap "__m_forward $__m_sig" "$__m_sig"; done

# Heterogeneous steps: "srun --het-group=0 a : --het-group=1 b". Task and node
# ids run on across the components, as in one Slurm het step.
__m_rc=0
__m_seg=()
__m_steps=()
__m_dry=0 __m_task_base=0 __m_node_base=0 __m_part=0
# With several parts, a first pass counts the whole step (what every part's tasks are told).
__m_whole_tasks="" __m_whole_nodes="" __m_whole_list=""
if [[ " $* " == *" : "* ]]; then
  __m_dry=1 __m_t=0 __m_n=0 __m_l=""
  for __m_a in "$@" ":"; do
    if [ "$__m_a" = ":" ]; then
      __m_step "${__m_seg[@]}" 2>/dev/null || break  # the run below says why
      __m_t=$(( __m_t + __m_plan_tasks )) __m_n=$(( __m_n + __m_plan_nodes ))
      __m_l+="${__m_l:+,}$__m_plan_list"
      __m_part=$(( __m_part + 1 ))
      __m_seg=()
    else
      __m_seg+=("$__m_a")
    fi
  done
  __m_whole_tasks=$__m_t __m_whole_nodes=$__m_n __m_whole_list=$__m_l
  __m_dry=0 __m_part=0 __m_seg=()
fi
for __m_a in "$@" ":"; do
  if [ "$__m_a" = ":" ]; then
    __m_dry=1
    __m_step "${__m_seg[@]}" || { __m_rc=$?; break; }
    __m_dry=0
    __m_step "${__m_seg[@]}" &
    __m_steps+=($!)
    __m_pids+=($!)
    __m_task_base=$(( __m_task_base + __m_plan_tasks ))
    __m_node_base=$(( __m_node_base + __m_plan_nodes ))
    __m_part=$(( __m_part + 1 ))
    __m_seg=()
  else
    __m_seg+=("$__m_a")
  fi
done
for __m_p in "${__m_steps[@]}"; do
  while :; do
    wait "$__m_p"; __m_s=$?
    kill -0 "$__m_p" 2>/dev/null || break
  done
  [ "$__m_rc" = 0 ] && __m_rc=$__m_s
done
[ "$__m_in" = /dev/null ] || rm -f "$__m_in"
exit "$__m_rc"
"""

STEPD = r"""#!/usr/bin/perl
# Step service written by migrate. Slurm runs the batch script once, on the
# first node, and srun starts the steps on every node of the allocation; in
# Kubernetes the first pod runs the script and the other pods run this service,
# which starts the steps its srun shim sends them:
#   migrate-stepd serve                        wait for steps (the other pods)
#   migrate-stepd run HOST FIRST COUNT ARGV... run COUNT tasks on HOST (srun)
#   migrate-stepd release HOST RC              the job ended: HOST exits with RC
# Requests carry the environment, the working folder and the argv of the step,
# after srun's stdin when it has one (I<len>), which each task reads from the
# start (srun --input=all; MIGRATE_STDIN_TASK=N: task N only); the tasks' output
# comes back framed (O<len>/E<len>) and ends with X<rc>.
# Each request (step or release) first carries the job's token, A<len> and
# MIGRATE_STEP_TOKEN, which the pods of one job share (their Secret): a request
# without it, or with another, runs nothing. A service without a token of its
# own refuses every request.
use strict;
use warnings;
use IO::Socket::INET;
use IO::Select;
use POSIX ();
use Cwd ();

$SIG{PIPE} = 'IGNORE';
my $PORT = @perl{MIGRATE_STEP_PORT};
my $STDIN_MAX = 64 << 20;  # bytes of srun's stdin a step takes along
my $WAIT = @perl{MIGRATE_STEP_WAIT};
# What a step takes from the pod it runs in, not from the batch shell.
my @POD_VARS = qw(HOSTNAME SLURMD_NODENAME MIGRATE_NODE_INDEX SLURM_TOPOLOGY_ADDR MIGRATE_GROUP_NODEID
  JOB_COMPLETION_INDEX RANK PET_NODE_RANK VC_TASK_INDEX VK_TASK_INDEX MIGRATE_JOBSET_INDEX
  MIGRATE_RESTARTS SLURM_RESTART_COUNT POD_NAME POD_IP MIGRATE_STEP_TOKEN);
push @POD_VARS, $ENV{MIGRATE_INDEX_FROM} if $ENV{MIGRATE_INDEX_FROM};
# What the node gives the step where the pod sets it (a hetjob's components differ in CPUs and GPUs).
my @NODE_VARS = qw(SLURM_CPUS_ON_NODE SLURM_GPUS_ON_NODE SLURM_JOB_GPUS CUDA_VISIBLE_DEVICES);

sub put {
  my ($fh, $data) = @_;
  while (length $data) {
    my $n = syswrite($fh, $data);
    if (!defined $n) { next if $!{EINTR}; return 0; }
    substr($data, 0, $n) = '';
  }
  return 1;
}

sub line_of {
  my ($fh) = @_;
  my ($line, $c) = ('', '');
  while (1) {
    my $n = sysread($fh, $c, 1);
    if (!defined $n) { next if $!{EINTR}; return undef; }
    return undef if $n == 0;
    return $line if $c eq "\n";
    $line .= $c;
    return undef if length($line) > 64;
  }
}

sub bytes_of {
  my ($fh, $want) = @_;
  my $data = '';
  while (length($data) < $want) {
    my $n = sysread($fh, my $chunk, $want - length($data));
    if (!defined $n) { next if $!{EINTR}; return undef; }
    return undef if $n == 0;
    $data .= $chunk;
  }
  return $data;
}

sub nap { select(undef, undef, undef, $_[0]); }

# The token frame every request starts with.
sub credential {
  my $token = @perl{MIGRATE_STEP_TOKEN};
  return 'A' . length($token) . "\n" . $token;
}

# Whether a request carries this pod's token; every character is compared, whatever differs.
sub same_token {
  my ($want, $given) = @_;
  return 0 if $want eq '' || !defined $given;
  my $diff = length($want) ^ length($given);
  my $n = length($given) || 1;
  for my $i (0 .. length($want) - 1) {
    $diff |= ord(substr($want, $i, 1)) ^ ord(substr($given . "\0", $i % $n, 1));
  }
  return $diff == 0;
}

# Answer a refused request with its reason and an exit code; it runs nothing. What the
# client still sends is read and dropped (briefly), so that closing does not reset the answer.
sub refuse {
  my ($c, $why) = @_;
  my $me = $ENV{SLURMD_NODENAME} || $ENV{HOSTNAME} || 'this pod';
  my $from = eval { $c->peerhost } // 'an unknown peer';
  print STDERR "migrate: refused a request from $from: $why\n";
  my $text = "migrate: $me refused the request: $why; only the pods of this job, which share its "
    . "token (MIGRATE_STEP_TOKEN), may start steps there\n";
  put($c, 'E' . length($text) . "\n" . $text . "X1\n");
  shutdown($c, 1);
  my ($sel, $until, $dropped) = (IO::Select->new($c), time + 2, 0);
  while (time <= $until && $dropped < (1 << 24) && $sel->can_read(0.5)) {
    my $n = sysread($c, my $junk, 65536);
    next if !defined $n && $!{EINTR};
    last if !$n;
    $dropped += $n;
  }
}

# Connect, retrying while the name does not resolve yet or nothing listens yet.
sub reach {
  my ($host, $wait) = @_;
  my ($deadline, $delay, $said) = (time + $wait, 0.1, 0);
  while (1) {
    my $s = IO::Socket::INET->new(PeerAddr => $host, PeerPort => $PORT, Proto => 'tcp', Timeout => 5);
    return $s if $s;
    return undef if time >= $deadline;
    if (!$said && time + $wait - $deadline > 30) {
      print STDERR "migrate: waiting for $host:$PORT to serve job steps ($@)\n";
      $said = 1;
    }
    nap($delay);
    $delay = $delay < 2 ? $delay * 2 : 2;
  }
}

sub status_of {
  my ($status) = @_;
  return 128 + ($status & 127) if $status & 127;
  return $status >> 8;
}

# --exclusive gave the job its nodes' GPUs; a step gets those the job asked (none: no GPU variables).
sub step_gpus {
  my ($env) = @_;
  my $n = @perl{MIGRATE_STEP_GPUS};
  return if !defined $n || $n eq '';
  if ($n == 0) { delete @$env{qw(SLURM_GPUS_ON_NODE CUDA_VISIBLE_DEVICES)}; return; }
  $env->{SLURM_GPUS_ON_NODE} = $n;
  $env->{CUDA_VISIBLE_DEVICES} = join(',', 0 .. $n - 1);
}

sub run_step {
  my ($c, $payload, $stdin) = @_;
  my @f = split /\0/, $payload, -1;
  my (undef, $cwd, $first, $count, $nenv) = splice(@f, 0, 5);
  my %env = map { /\A([^=]*)=(.*)\z/s ? ($1, $2) : () } splice(@f, 0, $nenv);
  my @argv = @f;
  for my $k (@POD_VARS) {
    if (defined $ENV{$k}) { $env{$k} = $ENV{$k}; } else { delete $env{$k}; }
  }
  for my $k (@NODE_VARS) { $env{$k} = $ENV{$k} if defined $ENV{$k}; }
  step_gpus(\%env);
  $env{MIGRATE_IN_STEP} = 1;
  my $only = delete $env{MIGRATE_STDIN_TASK};
  $only = undef if defined $only && $only eq '';
  # srun's stdin, in a file each task opens from the start
  my $input = '/dev/null';
  my $stdin_file;  # removed once the step ended (the step's process leaves by _exit, past File::Temp)
  if (defined $stdin && length $stdin) {
    require File::Temp;
    my ($fh, $path) = File::Temp::tempfile('migrate-stdin-XXXXXX', TMPDIR => 1, UNLINK => 0);
    put($fh, $stdin);
    close $fh;
    $input = $stdin_file = $path;
  }
  pipe(my $or, my $ow) or die "pipe: $!";
  pipe(my $er, my $ew) or die "pipe: $!";
  my %alive;
  for my $t (0 .. $count - 1) {
    my $pid = fork();
    die "fork: $!" unless defined $pid;
    if ($pid == 0) {
      close $or; close $er; close $c;
      POSIX::dup2(fileno($ow), 1); POSIX::dup2(fileno($ew), 2);
      my $mine = !defined $only || $only == $first + $t;
      open(STDIN, '<', $mine ? $input : '/dev/null') or open(STDIN, '<', '/dev/null');
      %ENV = %env;
      $ENV{SLURM_PROCID} = $first + $t;
      $ENV{SLURM_LOCALID} = $t;
      $ENV{SLURM_TASK_PID} = $$;
      $SIG{$_} = 'DEFAULT' for qw(PIPE TERM INT USR1 USR2 HUP CHLD);
      if (!chdir $cwd) {
        print STDERR "migrate: srun: no folder $cwd on $ENV{SLURMD_NODENAME}; the step runs in /tmp\n";
        chdir '/tmp';
      }
      { no warnings "exec"; exec { $argv[0] } @argv; }
      print STDERR "migrate: srun: $argv[0]: $!\n";
      POSIX::_exit(127);
    }
    $alive{$pid} = 1;
  }
  close $ow; close $ew;
  $SIG{TERM} = sub {  # the pod is being deleted
    return if (@perl{MIGRATE_SIGNAL_BATCH_ONLY}) eq '1';
    kill(@perl{MIGRATE_SIGNAL} || 'TERM', keys %alive);
  };
  my $sel = IO::Select->new($or, $er, $c);
  my ($rc, $ended) = (0, 0);
  my $until = undef;  # after the tasks ended: drain their output briefly
  while (1) {
    for my $pid (keys %alive) {
      my $got = waitpid($pid, POSIX::WNOHANG());
      next unless $got == $pid;
      delete $alive{$pid};
      my $s = status_of($?);
      $rc = $s if $rc == 0;
    }
    if (!%alive && !defined $until) { $until = time + 2; }
    last if defined $until && (time > $until || $sel->count <= 1);
    for my $fh ($sel->can_read(0.1)) {
      my $n = sysread($fh, my $buf, 65536);
      next if !defined $n && $!{EINTR};
      if ($fh == $c) {
        if (!$n) {  # srun is gone: so is its step
          kill 'TERM', keys %alive; $sel->remove($c); $until = time + 5 unless defined $until;
          next;
        }
        for my $sig ($buf =~ /K([A-Z0-9]+)\n/g) { kill $sig, keys %alive; }
        next;
      }
      if (!$n) { $sel->remove($fh); next; }
      my $tag = $fh == $or ? 'O' : 'E';
      put($c, $tag . length($buf) . "\n" . $buf) or do { $sel->remove($c) if $sel->exists($c); };
    }
  }
  kill 'KILL', keys %alive if %alive;
  unlink $stdin_file if defined $stdin_file;
  put($c, "X$rc\n");
  close $c;
}

sub serve {
  my $srv = IO::Socket::INET->new(LocalAddr => '0.0.0.0', LocalPort => $PORT, Listen => 64,
    ReuseAddr => 1, Proto => 'tcp') or die "migrate: cannot serve job steps on port $PORT: $@\n";
  $SIG{CHLD} = sub { 1 while waitpid(-1, POSIX::WNOHANG()) > 0; };
  # The pod is being deleted: the running steps' tasks get what the batch pod sends its
  # steps (the --signal, else SIGTERM), and have the grace period until the release or SIGKILL.
  my %steps;
  $SIG{TERM} = sub { kill 'TERM', keys %steps; };
  my $batch = @perl{MIGRATE_BATCH_HOST};
  my $token = @perl{MIGRATE_STEP_TOKEN};
  if ($token eq '') {
    print STDERR "migrate: MIGRATE_STEP_TOKEN is empty: this pod refuses every job step and release "
      . "(the job's Secret must hold a token)\n";
  }
  my ($seen, $missed, $last) = (0, 0, time);
  my $sel = IO::Select->new($srv);
  while (1) {
    if ($batch && time - $last >= 10) {  # is the batch pod still there?
      $last = time;
      my $p = IO::Socket::INET->new(PeerAddr => $batch, PeerPort => $PORT, Proto => 'tcp', Timeout => 3);
      if ($p) { put($p, "P\n"); close $p; ($seen, $missed) = (1, 0); }
      elsif ($seen && ++$missed >= 3) {
        print STDERR "migrate: the batch pod $batch is gone; this pod stops serving job steps\n";
        exit 1;
      }
    }
    next unless $sel->can_read(2);
    my $c = $srv->accept or next;
    my $head = line_of($c);
    if (!defined $head) { close $c; next; }
    if ($head eq 'P') { close $c; next; }  # a liveness probe: it runs nothing
    my $given;
    if ($head =~ /\AA(\d+)\z/) {
      $given = $1 <= 4096 ? bytes_of($c, $1) : undef;
      $head = defined $given ? line_of($c) : undef;
      if (!defined $head) { close $c; next; }
    }
    if (!same_token($token, $given)) {
      my $why = 'the request carries no token';
      $why = 'the request carries another token' if defined $given && $given ne '';
      $why = 'this pod has no token (MIGRATE_STEP_TOKEN is empty)' if $token eq '';
      refuse($c, $why);
      close $c;
      next;
    }
    if ($head =~ /\AQ(-?\d+)\z/) { close $c; exit($1 & 255); }
    my $stdin;
    if ($head =~ /\AI(\d+)\z/) {
      $stdin = $1 <= $STDIN_MAX ? bytes_of($c, $1) : undef;
      $head = defined $stdin ? line_of($c) : undef;
      if (!defined $head) { close $c; next; }
    }
    if ($head =~ /\AR(\d+)\z/) {
      my $payload = bytes_of($c, $1);
      if (!defined $payload) { close $c; next; }
      my $pid = fork();
      if (defined $pid && $pid == 0) {
        $SIG{CHLD} = 'DEFAULT';
        close $srv;
        run_step($c, $payload, $stdin);
        POSIX::_exit(0);
      }
      $steps{$pid} = 1 if $pid;
      delete $steps{$_} for grep { !kill(0, $_) } keys %steps;
    }
    close $c;
  }
}

sub run_remote {
  my ($host, $first, $count, @argv) = @_;
  my $s = reach($host, $WAIT) or do {
    print STDERR "migrate: srun: $host does not serve job steps (waited ${WAIT}s)\n";
    exit 1;
  };
  if ((@perl{MIGRATE_STEP_TOKEN}) eq '') {
    print STDERR "migrate: srun: MIGRATE_STEP_TOKEN is empty: $host will refuse the step\n";
  }
  my @names = grep { $_ ne 'MIGRATE_STEP_TOKEN' && index($ENV{$_}, "\0") < 0 } sort keys %ENV;
  my @env = map { "$_=$ENV{$_}" } @names;
  my $payload = join("\0", 'run', Cwd::getcwd() // '/', $first, $count, scalar(@env), @env, @argv);
  # srun's stdin goes along when it is a file (the shim holds a pipe's or a here-document's in one)
  my $stdin = '';
  if (-f STDIN && -s STDIN) {
    binmode STDIN;
    local $/;
    $stdin = <STDIN> // '';
    $stdin = substr($stdin, 0, $STDIN_MAX);
  }
  my $frame = length($stdin) ? 'I' . length($stdin) . "\n" . $stdin : '';
  put($s, credential() . $frame . 'R' . length($payload) . "\n" . $payload) or exit 1;
  for my $sig (qw(TERM INT USR1 USR2 HUP)) { $SIG{$sig} = sub { put($s, "K$sig\n"); }; }
  my ($buf, $rc) = ('', undef);
  READ: while (1) {
    my $n = sysread($s, my $chunk, 65536);
    if (!defined $n) { next if $!{EINTR}; last; }
    last if $n == 0;
    $buf .= $chunk;
    while (1) {
      if ($buf =~ /\A([OE])(\d+)\n/) {
        my ($tag, $len, $skip) = ($1, $2, length($&));
        last if length($buf) < $skip + $len;
        put($tag eq 'O' ? \*STDOUT : \*STDERR, substr($buf, $skip, $len));
        substr($buf, 0, $skip + $len) = '';
      } elsif ($buf =~ /\AX(-?\d+)\n/) {
        $rc = $1;
        last READ;
      } else {
        last;
      }
    }
  }
  if (!defined $rc) {
    print STDERR "migrate: srun: the step on $host ended without an exit code (the pod failed?)\n";
    exit 1;
  }
  exit($rc & 255);
}

sub release {
  my ($host, $rc) = @_;
  my $wait = @perl{MIGRATE_RELEASE_WAIT};
  my $s = reach($host, $wait) or exit 1;
  put($s, credential() . "Q$rc\n") or exit 1;
  # A released service closes without a word; a refusal says why.
  my ($buf, $sel, $until) = ('', IO::Select->new($s), time + $wait);
  while (time <= $until && length($buf) < 65536) {
    next unless $sel->can_read(1);
    my $n = sysread($s, my $chunk, 65536);
    next if !defined $n && $!{EINTR};
    last if !$n;
    $buf .= $chunk;
  }
  close $s;
  if ($buf =~ /\AE(\d+)\n/) {
    print STDERR substr($buf, length($&), $1);
    exit 1;
  }
  exit 0;
}

my $mode = shift @ARGV // '';
serve() if $mode eq 'serve';
run_remote(@ARGV) if $mode eq 'run';
release(@ARGV) if $mode eq 'release';
print STDERR "usage: migrate-stepd serve | run HOST FIRST COUNT ARGV... | release HOST RC\n";
exit 2;
"""

SCONTROL = r"""#!/bin/bash
# scontrol shim written by migrate: host lists only.
case "${1:-} ${2:-}" in
  "show hostnames"|"show hostname")
    __m_list=${3:-$SLURM_JOB_NODELIST}
    for __m_h in ${__m_list//,/ }; do printf '%s\n' "$__m_h"; done ;;
  *)
    echo "migrate: 'scontrol $*' has no equivalent inside a Kubernetes pod" >&2
    exit 1 ;;
esac
"""

SBATCH = r"""#!/bin/bash
# sbatch shim written by migrate: submitting from inside a pod is not translated.
if [ "@{MIGRATE_RESUBMIT_BY_SCHEDULE}" = 1 ]; then
  echo "migrate: 'sbatch $*' skipped: the CronJob schedule starts the next run" >&2
  exit 0
fi
echo "migrate: 'sbatch $*' cannot submit from a Kubernetes pod; see translation.json for how" \
     "this submission was translated (submit.sh or a CronJob)" >&2
exit 1
"""

MODULE = r"""#!/bin/bash
# module shim written by migrate: the container image provides the software.
echo "migrate: 'module $*' ignored: the container image provides the software" >&2
exit 0
"""

# A container runtime's shim, bin/<name>: the runtime's tables, from its declaration in
# translators/runtimes.py, then the reading every runtime shares.
_CONTAINER_RUN = r"""#!/bin/bash
# @NAME@ shim written by migrate: the pod already runs in the job's image, so the runtime's
# options (and its image operand) are skipped and the program runs directly.
__m_name=@NAME@
__m_leading="@LEADING@"  # the options before the verb that take a value
__m_verbs="@VERBS@"  # the verbs that start a container; empty: the options follow the name
# options that take a value; when empty, every option but __m_flags takes one
@VALUES@
__m_image=@IMAGE@  # 1: the image is the word after the options; 0: an option names it
__m_dashes=@DASHES@  # 1: a '--' may stand between the image and the program
__m_has() { [[ " $1 " == *" $2 "* ]]; }
__m_takes() {
  if [ -n "$__m_values" ]; then __m_has "$__m_values" "$1"; else ! __m_has "$__m_flags" "$1"; fi
}
while [ -n "$__m_leading" ] && [[ "${1:-}" == --?* ]]; do
  __m_option=${1#--}
  __m_has "$__m_leading" "${__m_option%%=*}" || break
  if [[ "$__m_option" == *=* ]]; then shift; else shift 2 || shift; fi
done
if [ -n "$__m_verbs" ]; then
  if ! __m_has "$__m_verbs" "${1:-}"; then
    echo "migrate: '$__m_name $*' has no equivalent inside a Kubernetes pod" >&2
    exit 1
  fi
  shift
fi
while [ $# -gt 0 ]; do
  case "$1" in
    --) shift; break ;;
    --*=*) shift ;;
    --*) if __m_takes "${1#--}"; then shift 2 || shift; else shift; fi ;;
    -?*)
      __m_letters=${1#-}; shift
      while [ -n "$__m_letters" ]; do
        if __m_takes "${__m_letters:0:1}"; then
          if [ ${#__m_letters} -eq 1 ]; then shift; fi
          break
        fi
        __m_letters=${__m_letters:1}
      done ;;
    *) break ;;
  esac
done
if [ "$__m_image" = 1 ]; then
  shift
  if [ "$__m_dashes" = 1 ] && [ "${1:-}" = -- ]; then shift; fi
fi
if [ $# -eq 0 ]; then
  echo "migrate: '$__m_name' starts no program here; the image's own entrypoint is not known" >&2
  exit 1
fi
exec "$@"
"""


def _names(variable: str, names: str) -> str:
    """``variable`` set to the names, in lines of a readable length."""
    first, *more = textwrap.wrap(names, 90, break_long_words=False, break_on_hyphens=False) or [""]
    return "\n".join([f'{variable}="{first}"', *(f'{variable}+=" {line}"' for line in more)])


@functools.cache
def container_run(runtime: Runtime) -> str:
    """The shim of a runtime whose lines an emulated pod runs without it."""
    line = runtime.line
    if line is None:
        raise ValueError(f"{runtime.name} has no command line to skip")
    options = line.options
    tables = {
        "@NAME@": runtime.name,
        "@LEADING@": " ".join((line.leading.values if line.leading else "").split()),
        "@VERBS@": " ".join(verb.words for verb in line.verbs),
        "@VALUES@": "\n".join(
            [_names("__m_values", options.values), _names("__m_flags", options.switches or "")]
        ),
        "@IMAGE@": "0" if line.image_option else "1",
        "@DASHES@": "1" if line.dashes else "0",
    }
    text = _CONTAINER_RUN
    for placeholder, value in tables.items():
        text = text.replace(placeholder, value)
    return job_variables.fill(text)


def _valued_options(srun_text: str) -> str:
    """The srun shim with the options that take a separate value spelled from srun's option table
    (``srun --jobid 42 prog`` must not run ``42``)."""
    from ..shell.slurm_cli import REQUIRED, table

    options = table("srun")
    own = {"ntasks", "nodes", "ntasks-per-node", "nodelist", "het-group", "pack-group"}
    longs = sorted(f"--{n}" for n, kind in options.long.items() if kind == REQUIRED and n not in own)
    shorts = sorted(f"-{c}" for c, kind in options.short_kind.items() if kind == REQUIRED and c not in "nNw")
    lines = []
    for i in range(0, len(longs), 8):  # a readable shim: eight options a line
        lines.append("|".join(longs[i : i + 8]))
    return srun_text.replace("@VALUED_SHORT@", "|".join(shorts)).replace("@VALUED_LONG@", "|\\\n".join(lines))


SRUN = _valued_options(SRUN)
# Every MIGRATE_* read with its default, from the one table of them.
ENTRYPOINT, SRUN, STEPD, SCONTROL, SBATCH, MODULE = (
    job_variables.fill(text) for text in (ENTRYPOINT, SRUN, STEPD, SCONTROL, SBATCH, MODULE)
)


def files() -> dict[str, str]:
    """Every shim by its ConfigMap key, a container runtime's under its name."""
    return {
        "entrypoint.sh": ENTRYPOINT,
        "srun": SRUN,
        "scontrol": SCONTROL,
        "sbatch": SBATCH,
        "module": MODULE,
        "stepd": STEPD,
        **{runtime.name: container_run(runtime) for runtime in runtimes.shimmed()},
    }


# ConfigMap key -> path under the mount (keys cannot hold '/').
_PATHS: dict[str, str] = {
    "entrypoint.sh": "entrypoint.sh",
    "job.sh": "job.sh",
    "srun": "bin/srun",
    "scontrol": "bin/scontrol",
    "sbatch": "bin/sbatch",
    "module": "bin/module",
    "ml": "bin/ml",
    "stepd": "bin/migrate-stepd",
}


def paths() -> dict[str, str]:
    """ConfigMap key -> path under the mount (keys cannot hold '/'); a runtime's shim is bin/<name>."""
    return {**_PATHS, **{runtime.name: f"bin/{runtime.name}" for runtime in runtimes.shimmed()}}


__all__ = [
    "ENTRYPOINT",
    "SBATCH",
    "SCONTROL",
    "SRUN",
    "STEPD",
    "container_run",
    "files",
    "paths",
]
