"""The scripts mounted beside the job script: the entrypoint and the command shims.

Their text is constant: everything job-specific reaches them through
environment variables set in the manifest (``MIGRATE_*`` and static
``SLURM_*``), so no value from a job file is ever spliced into shell code.

- ``entrypoint.sh`` computes the Slurm environment of this pod (array task id,
  node id, host list, job id ...), tees stdout/stderr into the ``--output`` file
  when that lies on shared storage, forwards ``--signal`` and then runs the
  unchanged job script.
- ``bin/srun`` runs a step in this pod: once per local task with
  ``SLURM_PROCID``/``SLURM_LOCALID`` set, or once for launchers that start
  their own workers (torchrun, mpirun ...). Every pod runs the batch script
  (Slurm runs it once, on the first node), so each pod runs its own share.
- ``bin/scontrol`` answers ``show hostnames``; ``bin/sbatch`` refuses loudly;
  ``bin/module`` and ``bin/ml`` note that the image provides the software.
"""

from __future__ import annotations

ENTRYPOINT = r"""#!/bin/bash
# Written by migrate: sets up the Slurm environment of this pod, then runs the
# unchanged job script. Job-specific values come from the MIGRATE_* and
# SLURM_* variables of the container.
MIGRATE_DIR=${MIGRATE_DIR:-/opt/migrate}
export MIGRATE_DIR
export PATH="$MIGRATE_DIR/bin:$PATH"

# Position of this pod: index within its group of pods, then array task and node.
__m_idx=0
if [ -n "${MIGRATE_INDEX_FROM:-}" ]; then
  __m_idx=${!MIGRATE_INDEX_FROM:-0}
fi
__m_nodes=${MIGRATE_NODES:-1}
__m_pos=$(( __m_idx / __m_nodes ))
export MIGRATE_GROUP_NODEID=$(( __m_idx % __m_nodes ))
export SLURM_NODEID=$(( MIGRATE_GROUP_NODEID + ${MIGRATE_NODE_OFFSET:-0} ))

# Array task id: JOB_COMPLETION_INDEX counts 0..N-1; ranges "start:step:count"
# map it onto the Slurm indices (stepped and sparse arrays included).
if [ -n "${MIGRATE_ARRAY_RANGES:-}" ]; then
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
  export SLURM_ARRAY_JOB_ID="${MIGRATE_JOB_UID:-0}"
  export SLURM_JOB_ID="${MIGRATE_JOB_UID:-0}-${SLURM_ARRAY_TASK_ID}"
else
  export SLURM_JOB_ID="${MIGRATE_JOB_UID:-0}"
fi
export SLURM_JOBID=$SLURM_JOB_ID

# Host list: stable pod DNS names, from a list or a "prefix<N>suffix" pattern.
if [ -n "${MIGRATE_HOSTS:-}" ]; then
  __m_hosts=$MIGRATE_HOSTS
elif [ -n "${MIGRATE_HOST_PREFIX:-}" ]; then
  __m_hosts=""
  __m_base=$(( __m_pos * __m_nodes ))
  for (( __m_k = 0; __m_k < __m_nodes; __m_k++ )); do
    __m_hosts+="${__m_hosts:+ }${MIGRATE_HOST_PREFIX}$(( __m_base + __m_k ))${MIGRATE_HOST_SUFFIX:-}"
  done
else
  __m_hosts=$(hostname)
fi
export SLURM_JOB_NODELIST=${__m_hosts// /,}
export SLURM_NODELIST=$SLURM_JOB_NODELIST
__m_k=0
for __m_h in $__m_hosts; do
  if [ "$__m_k" -eq "$SLURM_NODEID" ]; then SLURMD_NODENAME=$__m_h; fi
  __m_k=$(( __m_k + 1 ))
done
export SLURMD_NODENAME=${SLURMD_NODENAME:-$(hostname)}
export SLURM_TOPOLOGY_ADDR=$SLURMD_NODENAME
# Rendezvous: the first pod, unless the operator (PyTorchJob) already set it.
export MASTER_ADDR=${MASTER_ADDR:-${__m_hosts%% *}}

export SLURM_PROCID=$(( MIGRATE_GROUP_NODEID * ${SLURM_NTASKS_PER_NODE:-1} ))
export SLURM_LOCALID=0
export SLURM_TASK_PID=$$
export SLURM_RESTART_COUNT=${MIGRATE_RESTARTS:-0}
export SLURM_SUBMIT_DIR=${SLURM_SUBMIT_DIR:-$PWD}
export SLURM_SUBMIT_HOST=${SLURM_SUBMIT_HOST:-$SLURMD_NODENAME}
printf -v SLURM_JOB_START_TIME '%(%s)T' -1
export SLURM_JOB_START_TIME
if [ -n "${MIGRATE_TIME_LIMIT:-}" ]; then
  export SLURM_JOB_END_TIME=$(( SLURM_JOB_START_TIME + MIGRATE_TIME_LIMIT ))
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
__m_tee=(tee -a)
if [ "${MIGRATE_OPEN_MODE:-append}" = truncate ]; then __m_tee=(tee); fi
if [ -n "${MIGRATE_STDOUT:-}" ]; then
  __m_out=$(__m_expand "$MIGRATE_STDOUT")
  exec > >("${__m_tee[@]}" "$__m_out")
  if [ -z "${MIGRATE_STDERR:-}" ]; then exec 2> >(tee -a "$__m_out" >&2); fi
fi
if [ -n "${MIGRATE_STDERR:-}" ]; then
  __m_err=$(__m_expand "$MIGRATE_STDERR")
  exec 2> >("${__m_tee[@]}" "$__m_err" >&2)
fi
if [ -n "${MIGRATE_STDIN:-}" ]; then
  exec < "$(__m_expand "$MIGRATE_STDIN")"
fi

if [ -z "${MIGRATE_SIGNAL:-}" ]; then
  exec "$MIGRATE_DIR/job.sh" "$@"
fi

# --signal: Kubernetes only sends SIGTERM at deletion; send the requested signal
# at that point and, like Slurm, LEAD seconds before the time limit.
"$MIGRATE_DIR/job.sh" "$@" <&0 &
__m_child=$!
__m_send() {
  local f s pid
  if [ "${MIGRATE_SIGNAL_BATCH_ONLY:-0}" = 1 ]; then
    kill -s "$MIGRATE_SIGNAL" "$__m_child" 2>/dev/null
    return 0
  fi
  for f in /proc/[0-9]*/stat; do  # the steps: children of the batch shell
    read -r s < "$f" 2>/dev/null || continue
    pid=${f#/proc/}; pid=${pid%/stat}
    s=${s##*) }
    set -- $s
    if [ "${2:-}" = "$__m_child" ]; then kill -s "$MIGRATE_SIGNAL" "$pid" 2>/dev/null; fi
  done
  return 0
}
trap __m_send TERM
__m_timer=""
if [ -n "${MIGRATE_TIME_LIMIT:-}" ] && [ "${MIGRATE_TIME_LIMIT}" -gt "${MIGRATE_SIGNAL_LEAD:-60}" ]; then
  ( sleep $(( MIGRATE_TIME_LIMIT - ${MIGRATE_SIGNAL_LEAD:-60} )) && kill -s TERM $$ ) &
  __m_timer=$!
fi
while :; do
  wait "$__m_child"
  __m_rc=$?
  kill -0 "$__m_child" 2>/dev/null || break
done
if [ -n "$__m_timer" ]; then kill "$__m_timer" 2>/dev/null; fi
exit "$__m_rc"
"""

SRUN = r"""#!/bin/bash
# srun shim written by migrate. Runs one job step inside this pod: once per
# local task with SLURM_PROCID/SLURM_LOCALID set, or once for launchers that
# start their own workers. Pods that Slurm would not have used skip the step.
# Pyxis --container-* options are ignored: the pod already is the container.
__m_nnodes=${SLURM_JOB_NUM_NODES:-1}
__m_gnode=${MIGRATE_GROUP_NODEID:-${SLURM_NODEID:-0}}
__m_me=${SLURMD_NODENAME:-$(hostname)}
__m_me=${__m_me%%.*}
__m_pids=()

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

__m_step() {
  local ntasks="" nodes="" tpn="" nodelist="" groups=""
  while [ $# -gt 0 ]; do
    case "$1" in
      --) shift; break ;;
      -n|--ntasks) ntasks=$2; shift 2 ;;
      --ntasks=*) ntasks=${1#*=}; shift ;;
      -n*) ntasks=${1#-n}; shift ;;
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
      -c|-p|-t|-J|-o|-e|-i|-D|-G|-m|-A|-C|-x|-d|-q|-r|-B|-L|-M|-S|-W|-T|-E|-F|-K|-I|-s)
        case "$1" in -E|-K|-I|-s|-l|-u|-v|-Q|-X|-Z|-k|-O|-H) shift ;; *) shift 2 ;; esac ;;
      --account|--partition|--time|--job-name|--output|--error|--input|--chdir|--cpus-per-task|--gpus|\
--gpus-per-node|--gpus-per-task|--gres|--mem|--mem-per-cpu|--mem-per-gpu|--constraint|--exclude|\
--dependency|--qos|--distribution|--cpu-bind|--mem-bind|--gpu-bind|--mpi|--export|\
--time-min|--tres-per-task|--cpus-per-gpu|--threads-per-core|--signal)
        shift 2 ;;
      -*) shift ;;
      *) break ;;
    esac
  done
  [ $# -gt 0 ] || return 0
  if [ -n "${MIGRATE_HET_GROUP:-}" ]; then
    case ",${groups:-0}," in
      *",${MIGRATE_HET_GROUP},"*) ;;
      *) return 0 ;;
    esac
  fi
  if [ "${MIGRATE_SRUN_MODE:-local}" = mpirun ] && ! __m_is_launcher "$@"; then
    mpirun -np "${ntasks:-${SLURM_NTASKS:-1}}" "$@"
    return $?
  fi
  nodes=${nodes%%-*}
  local used=$__m_nnodes here=0 target=""
  if [ -n "$nodelist" ]; then
    local h
    for h in ${nodelist//,/ }; do
      [ -n "$target" ] || target=$h
      [ "${h%%.*}" = "$__m_me" ] && here=1
    done
  else
    if [ -n "$nodes" ]; then
      used=$nodes
    elif [ -n "$ntasks" ] && [ "$ntasks" -lt "$used" ]; then
      used=$ntasks
    fi
    [ "$__m_gnode" -lt "$used" ] && here=1
    target=${SLURM_JOB_NODELIST%%,*}
  fi
  if [ "$here" = 0 ]; then
    # another pod runs this step; "hostname -i" for it is answered from DNS
    if [ "${1##*/}" = hostname ]; then
      case " $* " in
        *" -i "*|*" -I "*|*" --ip-address "*|*" --all-ip-addresses "*)
          local ip rest
          read -r ip rest < <(getent hosts "$target" 2>/dev/null)
          echo "${ip:-$target}" ;;
        *) echo "${target%%.*}" ;;
      esac
    fi
    return 0
  fi
  local local_tasks first
  if [ -n "$tpn" ]; then
    local_tasks=$tpn; first=$(( __m_gnode * tpn ))
  elif [ -n "$ntasks" ]; then
    local base=$(( ntasks / used )) extra=$(( ntasks % used ))
    local_tasks=$(( base + (__m_gnode < extra ? 1 : 0) ))
    first=$(( __m_gnode * base + (__m_gnode < extra ? __m_gnode : extra) ))
  elif [ -n "$nodes" ] && [ "$nodes" -lt "$__m_nnodes" ]; then
    local_tasks=1; first=$__m_gnode
  else
    local_tasks=${SLURM_NTASKS_PER_NODE:-1}; first=$(( __m_gnode * local_tasks ))
  fi
  local total=${ntasks:-$(( used * local_tasks ))}
  if __m_is_launcher "$@"; then local_tasks=1; fi
  local t rc=0 pids=()
  for (( t = 0; t < local_tasks; t++ )); do
    SLURM_PROCID=$(( first + t )) SLURM_LOCALID=$t SLURM_STEP_NUM_TASKS=$total SLURM_NTASKS=$total \
      SLURM_STEP_NUM_NODES=$used SLURM_STEP_NODELIST=$SLURM_JOB_NODELIST "$@" &
    pids+=($!)
    __m_pids+=($!)
  done
  for t in "${pids[@]}"; do
    wait "$t" || { local s=$?; [ "$rc" = 0 ] && rc=$s; }
  done
  return "$rc"
}

__m_forward() { [ ${#__m_pids[@]} -gt 0 ] && kill -s "$1" "${__m_pids[@]}" 2>/dev/null; }
for __m_sig in TERM INT USR1 USR2 HUP; do trap "__m_forward $__m_sig" "$__m_sig"; done

# Heterogeneous steps: "srun --het-group=0 a : --het-group=1 b".
__m_rc=0
__m_seg=()
__m_steps=()
for __m_a in "$@" ":"; do
  if [ "$__m_a" = ":" ]; then
    __m_step "${__m_seg[@]}" &
    __m_steps+=($!)
    __m_pids+=($!)
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
exit "$__m_rc"
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
if [ "${MIGRATE_RESUBMIT_BY_SCHEDULE:-0}" = 1 ]; then
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

FILES: dict[str, str] = {
    "entrypoint.sh": ENTRYPOINT,
    "srun": SRUN,
    "scontrol": SCONTROL,
    "sbatch": SBATCH,
    "module": MODULE,
}

# ConfigMap key -> path under the mount (keys cannot hold '/').
PATHS: dict[str, str] = {
    "entrypoint.sh": "entrypoint.sh",
    "job.sh": "job.sh",
    "srun": "bin/srun",
    "scontrol": "bin/scontrol",
    "sbatch": "bin/sbatch",
    "module": "bin/module",
    "ml": "bin/ml",
}

__all__ = ["ENTRYPOINT", "FILES", "PATHS", "SBATCH", "SCONTROL", "SRUN"]
