#!/usr/bin/env bash
# slurm-sandbox.sh - a private Slurm cluster on 127.0.0.1 for migrate's tests.
#
#   scripts/slurm-sandbox.sh start|stop|restart|status|env|purge
#
# One private munged, one slurmctld and N slurmd daemons (fake nodes node1..nodeN,
# each on its own port, each with fake GPUs). Everything lives in one sandbox
# directory; nothing is written to /etc. Clients find the cluster via SLURM_CONF:
#
#   eval "$(scripts/slurm-sandbox.sh env)"
#
# See scripts/README-slurm-sandbox.md for the knobs (SLURM_SANDBOX_* variables).
set -euo pipefail
umask 022
export LC_ALL=C
export PATH="${PATH:+$PATH:}/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

PROG=${0##*/}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# ---------------------------------------------------------------- settings --
D=${SLURM_SANDBOX_DIR:-/tmp/migrate-slurm-sandbox}
NODES=${SLURM_SANDBOX_NODES:-8}
GPUS=${SLURM_SANDBOX_GPUS:-8}
GPU_TYPES=${SLURM_SANDBOX_GPU_TYPES:-} # e.g. "a100 v100": each node's GPUs split evenly among these types
# Nodes of different GPU types, one word per node in turn (the words repeat over the nodes): e.g.
# "a100 h100 a100,v100": node1 has a100s, node2 h100s, node3 half of each ... (overrides GPU_TYPES)
NODE_GPU_TYPES=${SLURM_SANDBOX_NODE_GPU_TYPES:-}
FEATURES=${SLURM_SANDBOX_FEATURES:-} # node features every node has (what --constraint names), e.g. "gpu rack1"
CPUS=${SLURM_SANDBOX_CPUS:-96}
MEM_MB=${SLURM_SANDBOX_MEM_MB:-1000000}
TMP_MB=${SLURM_SANDBOX_TMP_MB:-0} # TmpDisk per node (local scratch that --tmp asks for); 0: none
CTLD_PORT=${SLURM_SANDBOX_CTLD_PORT:-6817}
SLURMD_PORT=${SLURM_SANDBOX_SLURMD_PORT:-6818}
PARTITIONS=${SLURM_SANDBOX_PARTITIONS:-cpu gpu debug gpu-h100 gpu-a100}
LICENSES=${SLURM_SANDBOX_LICENSES-matlab:4,ansys:2}
TIMEOUT=${SLURM_SANDBOX_TIMEOUT:-30}
# 1: each slurmd in a UTS namespace of its own, named after its node, so that `hostname` in a job
# names its node as on a real cluster (the names must then resolve: add them to /etc/hosts)
NODE_UTS=${SLURM_SANDBOX_NODE_UTS:-0}
DEF_MEM_PER_CPU=${SLURM_SANDBOX_DEF_MEM_PER_CPU:-}
FIRST_JOB_ID=${SLURM_SANDBOX_FIRST_JOB_ID:-1} # a large first id keeps job ids apart from small counts
# SPANK plugins the sandbox loads, as a site would: "pyxis" (a stand-in that takes pyxis's options and
# runs a container step's tasks in a root of the host's system folders with the step's mounts,
# scripts/pyxis-standin.c; built with cc)
PLUGINS=${SLURM_SANDBOX_PLUGINS:-}
# pyxis stand-in: the site's own enroot mounts, in every container (SRC[:DST][,...]); a file of
# "JOB-NAME<TAB>SRC[:DST],..." lines, the mounts of the jobs of that name (a site per job); the host
# folders its image has (DIR[,...], default /usr /bin /sbin /lib* /etc /opt /root)
PYXIS_MOUNTS=${SLURM_SANDBOX_PYXIS_MOUNTS:-}
PYXIS_JOB_MOUNTS=${SLURM_SANDBOX_PYXIS_JOB_MOUNTS:-}
PYXIS_IMAGE_DIRS=${SLURM_SANDBOX_PYXIS_IMAGE_DIRS:-}

PACKAGES=(slurmctld slurmd slurm-client munge)
REQUIRED_CMDS=(slurmctld slurmd sbatch munged)

# ----------------------------------------------------------------- helpers --
info() { printf '%s: %s\n' "$PROG" "$*" >&2; }
die() {
    printf '%s: error: %s\n' "$PROG" "$*" >&2
    exit 1
}

usage() {
    cat >&2 <<EOF
usage: $PROG start|stop|restart|status|env|purge

  start    install packages if missing, write config, start munged, slurmctld
           and \$SLURM_SANDBOX_NODES slurmd daemons, wait until all nodes are up
  stop     stop every daemon of this sandbox (by PID file), wait until gone
  restart  stop, then start
  status   show daemon liveness and sinfo; exit 0 only if every daemon is up
  env      print 'export SLURM_CONF=...' (use: eval "\$($PROG env)")
  purge    stop, then delete the sandbox directory

sandbox directory: ${D}
EOF
}

# Current time in milliseconds, without forking.
now_ms() {
    local t=${EPOCHREALTIME/./}
    printf '%s\n' "$((t / 1000))"
}

is_uint() { [[ $1 =~ ^[0-9]{1,10}$ ]]; }

# check_uint ENVNAME VARNAME MIN MAX: validate the variable and normalise it to
# decimal (so that "08" is not read as octal later).
check_uint() {
    local -n ref=$2
    is_uint "$ref" || die "$1 must be a non-negative integer, got '$ref'"
    ref=$((10#$ref))
    ((ref >= $3 && ref <= $4)) || die "$1 must be between $3 and $4, got $ref"
}

validate_settings() {
    [[ $D == /* ]] || die "SLURM_SANDBOX_DIR must be an absolute path, got '$D'"
    check_uint SLURM_SANDBOX_NODES NODES 1 512
    check_uint SLURM_SANDBOX_GPUS GPUS 0 64
    local word t types
    for word in ${GPU_TYPES// /,} $NODE_GPU_TYPES; do
        types=0
        for t in ${word//,/ }; do
            [[ $t =~ ^[A-Za-z0-9_.-]+$ ]] || die "bad GPU type '$t' in SLURM_SANDBOX_(NODE_)GPU_TYPES"
            types=$((types + 1))
        done
        ((GPUS > 0 && GPUS % types == 0)) || die "SLURM_SANDBOX_GPUS=$GPUS cannot be split evenly among the $types GPU types '$word'"
    done
    for t in $FEATURES; do
        [[ $t =~ ^[A-Za-z0-9_.-]+$ ]] || die "bad feature '$t' in SLURM_SANDBOX_FEATURES"
    done
    check_uint SLURM_SANDBOX_CPUS CPUS 1 100000
    check_uint SLURM_SANDBOX_MEM_MB MEM_MB 1 1000000000
    check_uint SLURM_SANDBOX_CTLD_PORT CTLD_PORT 1 65535
    check_uint SLURM_SANDBOX_SLURMD_PORT SLURMD_PORT 1 $((65536 - NODES))
    check_uint SLURM_SANDBOX_TIMEOUT TIMEOUT 1 3600
    if ((CTLD_PORT >= SLURMD_PORT && CTLD_PORT < SLURMD_PORT + NODES)); then
        die "SLURM_SANDBOX_CTLD_PORT=$CTLD_PORT collides with the slurmd ports $SLURMD_PORT-$((SLURMD_PORT + NODES - 1))"
    fi
    local p
    [[ -n ${PARTITIONS// /} ]] || die "SLURM_SANDBOX_PARTITIONS is empty"
    for p in $PARTITIONS; do
        [[ $p =~ ^[A-Za-z0-9_.-]+$ ]] || die "bad partition name '$p' in SLURM_SANDBOX_PARTITIONS"
    done
    if [[ -n $LICENSES && ! $LICENSES =~ ^[A-Za-z0-9_.-]+(:[0-9]+)?(,[A-Za-z0-9_.-]+(:[0-9]+)?)*$ ]]; then
        die "bad SLURM_SANDBOX_LICENSES '$LICENSES' (expected e.g. matlab:4,ansys:2)"
    fi
    check_uint SLURM_SANDBOX_FIRST_JOB_ID FIRST_JOB_ID 1 67000000
    if [[ -n $DEF_MEM_PER_CPU ]]; then
        check_uint SLURM_SANDBOX_DEF_MEM_PER_CPU DEF_MEM_PER_CPU 1 "$MEM_MB"
    fi
    ((${#MUNGE_SOCK} < 100)) || die "SLURM_SANDBOX_DIR is too long: the munge socket path '$MUNGE_SOCK' must be under 100 characters"
}

# D with trailing slashes removed (but "/" stays "/").
while [[ $D == */ && $D != / ]]; do D=${D%/}; done

# ------------------------------------------------------------------ layout --
CONF=$D/etc/slurm.conf
GRES_CONF=$D/etc/gres.conf
NODES_FILE=$D/etc/nodes
MARKER=$D/.migrate-slurm-sandbox
LOCK=$D/.lock
MUNGE_DIR=$D/munge
MUNGE_KEY=$MUNGE_DIR/munge.key
MUNGE_SOCK=$MUNGE_DIR/munged.sock
MUNGE_SEED=$MUNGE_DIR/munged.seed
MUNGE_PID=$D/run/munged.pid
MUNGE_LOG=$D/log/munged.log
CTLD_PID=$D/run/slurmctld.pid
CTLD_LOG=$D/log/slurmctld.log
slurmd_pidfile() { printf '%s\n' "$D/run/slurmd-$1.pid"; }
slurmd_logfile() { printf '%s\n' "$D/log/slurmd-$1.log"; }

# ------------------------------------------------------- process liveness --
# proc_alive PID [COMM]: PID exists, is not a zombie (PID 1 here reaps late,
# and kill -0 succeeds on a zombie) and, when COMM is given, runs that program
# (guards against PID reuse). Reads /proc/PID/stat, the data behind
# `ps -o stat=,comm=`, to avoid a fork per check.
proc_alive() {
    local pid=$1 want=${2:-} line comm st
    is_uint "$pid" || return 1
    { read -r line <"/proc/$pid/stat"; } 2>/dev/null || return 1
    comm=${line#*\(}
    comm=${comm%\)*}
    st=${line##*\) }
    st=${st%% *}
    [[ -n $st && $st != Z && $st != X ]] || return 1
    [[ -z $want || $comm == "$want" ]]
}

# pidfile_alive FILE COMM: print the PID and succeed if the daemon is alive.
pidfile_alive() {
    local f=$1 pid=""
    [[ -s $f ]] || return 1
    { read -r pid <"$f"; } 2>/dev/null || [[ -n $pid ]] || return 1
    proc_alive "$pid" "$2" || return 1
    printf '%s\n' "$pid"
}

# still_alive FILE COMM: pidfile_alive, asked again a moment later before saying no. A daemon
# writes its PID file while the start loop polls it: a read can catch the file half written.
still_alive() {
    pidfile_alive "$1" "$2" >/dev/null && return 0
    sleep 0.2
    pidfile_alive "$1" "$2" >/dev/null
}

comm_for_pidfile() {
    case ${1##*/} in
        munged.pid) echo munged ;;
        slurmctld.pid) echo slurmctld ;;
        slurmd-*.pid) echo slurmd ;;
        *) echo "" ;;
    esac
}

# sandbox_pids slurm|munge: PIDs of this sandbox's processes. Sources: the PID
# files, plus (for daemons whose PID file got lost) processes whose command line
# names this sandbox's config or munge socket, plus slurmstepd/slurmscriptd
# processes whose environment carries this sandbox's SLURM_CONF.
sandbox_pids() {
    local kind=$1 f pid comm a p
    local -a args envs
    local -A seen=()
    if [[ -d $D/run ]]; then
        for f in "$D"/run/*.pid; do
            [[ -e $f ]] || continue
            comm=$(comm_for_pidfile "$f")
            case $kind:$comm in slurm:slurmctld | slurm:slurmd | munge:munged) ;; *) continue ;; esac
            if pid=$(pidfile_alive "$f" "$comm"); then seen[$pid]=1; fi
        done
    fi
    for p in /proc/[0-9]*; do
        pid=${p#/proc/}
        [[ $pid != "$$" && $pid != "${BASHPID:-}" && -z ${seen[$pid]:-} ]] || continue
        comm=""
        { read -r comm <"$p/comm"; } 2>/dev/null || continue
        case $kind:$comm in
            slurm:slurmctld | slurm:slurmd)
                { mapfile -d '' -t args <"$p/cmdline"; } 2>/dev/null || continue
                for a in "${args[@]}"; do
                    if [[ $a == "$CONF" ]]; then seen[$pid]=1; fi
                done
                ;;
            munge:munged)
                { mapfile -d '' -t args <"$p/cmdline"; } 2>/dev/null || continue
                for a in "${args[@]}"; do
                    if [[ $a == "--socket=$MUNGE_SOCK" ]]; then seen[$pid]=1; fi
                done
                ;;
            slurm:slurmstepd | slurm:slurmscriptd)
                { mapfile -d '' -t envs <"$p/environ"; } 2>/dev/null || continue
                for a in "${envs[@]}"; do
                    if [[ $a == "SLURM_CONF=$CONF" ]]; then seen[$pid]=1; fi
                done
                ;;
        esac
    done
    for pid in "${!seen[@]}"; do
        if proc_alive "$pid"; then printf '%s\n' "$pid"; fi
    done
}

# wait_gone TENTHS PID...: wait until none of the PIDs is alive.
wait_gone() {
    local n=$1 i pid
    shift
    local -a left=("$@")
    for ((i = 0; i <= n; i++)); do
        local -a still=()
        for pid in "${left[@]}"; do
            if proc_alive "$pid"; then still+=("$pid"); fi
        done
        ((${#still[@]} > 0)) || return 0
        left=("${still[@]}")
        ((i == n)) || sleep 0.1
    done
    printf '%s\n' "${left[@]}"
    return 1
}

# kill_and_wait LABEL PID...: SIGTERM, wait up to 10 s, then SIGKILL, wait 5 s.
kill_and_wait() {
    local label=$1 rest
    shift
    (($# > 0)) || return 0
    kill -TERM "$@" 2>/dev/null || true
    if rest=$(wait_gone 100 "$@"); then return 0; fi
    # shellcheck disable=SC2086 # rest is a list of PIDs
    info "$label did not exit after SIGTERM; sending SIGKILL to" $rest
    # shellcheck disable=SC2086
    kill -KILL $rest 2>/dev/null || true
    # shellcheck disable=SC2086
    if rest=$(wait_gone 50 $rest); then return 0; fi
    # shellcheck disable=SC2086
    die "could not stop $label, still running:" $rest
}

ctld_alive() { pidfile_alive "$CTLD_PID" slurmctld >/dev/null; }

# Cancel this sandbox's jobs so their slurmstepd/job processes end cleanly.
cancel_jobs() {
    ctld_alive || return 0
    local -a ids=()
    mapfile -t ids < <(SLURM_CONF=$CONF timeout 5 squeue -h -o %A 2>/dev/null || true)
    ((${#ids[@]} > 0)) || return 0
    info "cancelling ${#ids[@]} job(s) still in the queue"
    SLURM_CONF=$CONF timeout 5 scancel "${ids[@]}" >/dev/null 2>&1 || true
    local i
    for ((i = 0; i < 50; i++)); do
        [[ -n $(sandbox_steps) ]] || return 0
        sleep 0.1
    done
}

sandbox_steps() {
    local p pid comm a
    local -a envs
    for p in /proc/[0-9]*; do
        pid=${p#/proc/}
        comm=""
        { read -r comm <"$p/comm"; } 2>/dev/null || continue
        [[ $comm == slurmstepd ]] || continue
        { mapfile -d '' -t envs <"$p/environ"; } 2>/dev/null || continue
        for a in "${envs[@]}"; do
            if [[ $a == "SLURM_CONF=$CONF" ]] && proc_alive "$pid"; then echo "$pid"; fi
        done
    done
}

# stop_all [reap]: stop Slurm daemons first, munged last; remove the PID files.
# With "reap", also wait (up to 5 s) until PID 1 has reaped the dead daemons,
# so that ps/pgrep no longer lists them as zombies.
stop_all() {
    local reap=${1:-} i pid
    local -a pids=() killed=() left
    cancel_jobs
    mapfile -t pids < <(sandbox_pids slurm)
    if ((${#pids[@]} > 0)); then
        kill_and_wait "slurm daemons" "${pids[@]}"
        killed+=("${pids[@]}")
    fi
    mapfile -t pids < <(sandbox_pids munge)
    if ((${#pids[@]} > 0)); then
        kill_and_wait munged "${pids[@]}"
        killed+=("${pids[@]}")
    fi
    if [[ -d $D/run ]]; then rm -f "$D"/run/*.pid; fi
    if [[ $reap == reap ]]; then
        for ((i = 0; i < 100 && ${#killed[@]} > 0; i++)); do
            left=()
            for pid in "${killed[@]}"; do
                if [[ -e /proc/$pid ]]; then left+=("$pid"); fi
            done
            killed=("${left[@]}")
            ((${#killed[@]} == 0)) || sleep 0.05
        done
    fi
    return 0
}

# ------------------------------------------------------------ preparation --
need_root() {
    [[ $(id -u) == 0 ]] || die "'$1' must run as root (the sandbox daemons run as SlurmUser=root)"
}

ensure_packages() {
    local c missing=()
    for c in "${REQUIRED_CMDS[@]}"; do
        command -v "$c" >/dev/null 2>&1 || missing+=("$c")
    done
    ((${#missing[@]} > 0)) || return 0
    command -v apt-get >/dev/null 2>&1 || die "missing ${missing[*]} and no apt-get to install ${PACKAGES[*]}"
    info "missing ${missing[*]}: installing ${PACKAGES[*]} (apt-get)"
    local -a apt=(env DEBIAN_FRONTEND=noninteractive apt-get -q -y
        -o Dpkg::Use-Pty=0 -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold)
    if ! "${apt[@]}" install --no-install-recommends "${PACKAGES[@]}" >&2; then
        info "apt-get install failed; running apt-get update and retrying"
        "${apt[@]}" update >&2 || die "apt-get update failed"
        "${apt[@]}" install --no-install-recommends "${PACKAGES[@]}" >&2 ||
            die "apt-get install ${PACKAGES[*]} failed"
    fi
    for c in "${REQUIRED_CMDS[@]}"; do
        command -v "$c" >/dev/null 2>&1 || die "'$c' is still missing after installing ${PACKAGES[*]}"
    done
}

short_hostname() {
    local h
    h=$(hostname -s 2>/dev/null) || h=$(uname -n)
    h=${h%%.*}
    [[ -n $h ]] || die "cannot determine the short host name"
    printf '%s\n' "$h"
}

node_names() {
    local i
    for ((i = 1; i <= NODES; i++)); do echo "node$i"; done
}

render_slurm_conf() {
    local host=$1 i first=1 p def_mem
    if [[ -n $DEF_MEM_PER_CPU ]]; then
        def_mem=$DEF_MEM_PER_CPU
    else
        def_mem=$((MEM_MB / CPUS))
        ((def_mem <= 1024)) || def_mem=1024
        ((def_mem >= 1)) || def_mem=1
    fi
    cat <<EOF
# Generated by scripts/slurm-sandbox.sh; rewritten on every start. Do not edit.
ClusterName=migrate-sandbox
SlurmctldHost=${host}(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$MUNGE_SOCK
StateSaveLocation=$D/spool/ctld
SlurmdSpoolDir=$D/spool/slurmd-%n
# the nodes share one host's /tmp: PMIx (srun --mpi=pmix) makes its per-step folders under TmpFS
TmpFS=$D/tmp/%n
SlurmctldPidFile=$CTLD_PID
SlurmdPidFile=$D/run/slurmd-%n.pid
SlurmctldLogFile=$CTLD_LOG
SlurmdLogFile=$D/log/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
SlurmdParameters=config_overrides
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$D/log/jobcomp.log
SchedulerType=sched/backfill
SchedulerParameters=bf_interval=1,bf_continue
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=$def_mem
MinJobAge=3600
FirstJobId=$FIRST_JOB_ID
$( [[ -n $PLUGINS ]] && printf 'PlugStackConfig=%s\n' "$D/etc/plugstack.conf")
ReturnToService=2
SlurmctldTimeout=60
SlurmdTimeout=300
InactiveLimit=0
KillWait=5
Waittime=0
MailProg=/bin/true
GresTypes=gpu
EOF
    if [[ -n $LICENSES ]]; then echo "Licenses=$LICENSES"; fi
    echo
    # A node of several GPU types weighs more: Slurm fills the lightest first, so a job that asks no
    # type gets a node of one type (a step's untyped --gpus-per-node=8 on 4 a100 + 4 v100 is refused)
    # and the mixed nodes are there for the jobs that ask both.
    local weight
    for ((i = 1; i <= NODES; i++)); do
        weight=1
        [[ $(node_gpu_types "$i") == *,* ]] && weight=100
        printf 'NodeName=node%d NodeHostname=%s NodeAddr=127.0.0.1 Port=%d CPUs=%d Boards=1 SocketsPerBoard=1 CoresPerSocket=%d ThreadsPerCore=1 RealMemory=%d Weight=%d%s%s%s State=UNKNOWN\n' \
            "$i" "$host" $((SLURMD_PORT + i - 1)) "$CPUS" "$CPUS" "$MEM_MB" "$weight" \
            "$( ((GPUS > 0)) && printf ' Gres=%s' "$(node_gres "$i")")" \
            "$( ((TMP_MB > 0)) && printf ' TmpDisk=%d' "$TMP_MB")" \
            "$([[ -n ${FEATURES// /} ]] && printf ' Features=%s' "$(echo $FEATURES | tr ' ' ,)")"
    done
    echo
    for p in $PARTITIONS; do
        printf 'PartitionName=%s Nodes=ALL MaxTime=INFINITE State=UP%s\n' "$p" \
            "$( ((first)) && printf ' Default=YES')"
        first=0
    done
}

# A node's GPUs as slurm.conf Gres: gpu:8, or gpu:a100:4,gpu:v100:4 with SLURM_SANDBOX_GPU_TYPES.
node_gres() { # node number
    local t out=() types
    IFS=, read -ra types <<<"$(node_gpu_types "$1")"
    ((${#types[@]})) || {
        echo "gpu:$GPUS"
        return
    }
    for t in "${types[@]}"; do out+=("gpu:$t:$((GPUS / ${#types[@]}))"); done
    (
        IFS=,
        echo "${out[*]}"
    )
}

# The GPU types of node N, comma-separated (empty: untyped).
node_gpu_types() {
    local words
    read -ra words <<<"$NODE_GPU_TYPES"
    if ((${#words[@]})); then
        echo "${words[$((($1 - 1) % ${#words[@]}))]}"
    else
        echo "${GPU_TYPES// /,}"
    fi
}

# gres.conf File= for GPUs FIRST..LAST: one device or a range.
gpu_files() {
    if (($1 == $2)); then echo "$D/dev/fakegpu$1"; else echo "$D/dev/fakegpu[$1-$2]"; fi
}

render_gres_conf() {
    echo "# Generated by scripts/slurm-sandbox.sh. Fake GPUs: symlinks to /dev/null."
    echo "AutoDetect=off"
    ((GPUS > 0)) || return 0
    local i t first types
    for ((i = 1; i <= NODES; i++)); do
        IFS=, read -ra types <<<"$(node_gpu_types "$i")"
        if ((${#types[@]} == 0)); then
            echo "NodeName=node$i Name=gpu File=$(gpu_files 0 $((GPUS - 1)))"
            continue
        fi
        local each=$((GPUS / ${#types[@]}))
        first=0
        for t in "${types[@]}"; do
            echo "NodeName=node$i Name=gpu Type=$t File=$(gpu_files "$first" $((first + each - 1)))"
            first=$((first + each))
        done
    done
}

prepare_dir() {
    if [[ -e $D && ! -d $D ]]; then die "$D exists and is not a directory"; fi
    if [[ -d $D && ! -e $MARKER && -n $(ls -A "$D" 2>/dev/null) ]]; then
        die "refusing to use $D: it is not empty and has no $MARKER marker (set SLURM_SANDBOX_DIR)"
    fi
    mkdir -p "$D"
    : >"$MARKER"
}

take_lock() {
    command -v flock >/dev/null 2>&1 || return 0
    exec 9>"$LOCK"
    flock -w 120 9 || die "another $PROG is still running on $D (lock $LOCK)"
}

# Print the TCP ports somebody listens on (any address), one per line.
listening_ports() {
    command -v ss >/dev/null 2>&1 || return 1
    local _state _recvq _sendq addr _rest
    ss -Hltn 2>/dev/null | while read -r _state _recvq _sendq addr _rest; do
        printf '%s\n' "${addr##*:}"
    done
}

check_ports() {
    local p busy=() listening
    local -a ports=("$CTLD_PORT")
    for ((p = SLURMD_PORT; p < SLURMD_PORT + NODES; p++)); do ports+=("$p"); done
    if listening=$(listening_ports) && [[ -n $listening ]]; then
        local -A open=()
        while read -r p; do open[$p]=1; done <<<"$listening"
        for p in "${ports[@]}"; do
            if [[ -n ${open[$p]:-} ]]; then busy+=("$p"); fi
        done
    else # no ss: try to connect
        for p in "${ports[@]}"; do
            # shellcheck disable=SC2016 # $1 is expanded by the inner bash
            if timeout 2 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1"' _ "$p" 2>/dev/null; then busy+=("$p"); fi
        done
    fi
    ((${#busy[@]} == 0)) || die "port(s) already in use: ${busy[*]} (choose others with SLURM_SANDBOX_CTLD_PORT / SLURM_SANDBOX_SLURMD_PORT)"
}

write_config() { # conf_text gres_text
    mkdir -p "$D/etc" "$D/run" "$D/log" "$D/dev" "$D/spool/ctld" "$MUNGE_DIR"
    chmod 0755 "$D" "$D/etc" "$D/run" "$D/log" "$MUNGE_DIR"
    printf '%s\n' "$1" >"$CONF.tmp" && mv -f "$CONF.tmp" "$CONF"
    printf '%s\n' "$2" >"$GRES_CONF.tmp" && mv -f "$GRES_CONF.tmp" "$GRES_CONF"
    node_names >"$NODES_FILE"
    local i n
    rm -f "$D"/dev/fakegpu*
    for ((i = 0; i < GPUS; i++)); do ln -s /dev/null "$D/dev/fakegpu$i"; done
    while read -r n; do mkdir -p "$D/spool/slurmd-$n" "$D/tmp/$n"; done <"$NODES_FILE"
    if [[ ! -s $MUNGE_KEY ]]; then
        rm -f "$MUNGE_KEY"
        (umask 077 && head -c 1024 /dev/urandom >"$MUNGE_KEY.tmp")
        mv -f "$MUNGE_KEY.tmp" "$MUNGE_KEY"
    fi
    chmod 0400 "$MUNGE_KEY"
    build_plugins
}

# The SPANK plugins PLUGINS names, built for this Slurm and listed in plugstack.conf.
build_plugins() {
    local name version major minor micro
    rm -f "$D/etc/plugstack.conf"
    [[ -n $PLUGINS ]] || return 0
    mkdir -p "$D/lib"
    # SLURM_VERSION_NUMBER: 22.05.8 is 0x160508
    version=$(SLURM_CONF=$CONF sbatch --version | grep -oE '[0-9]+\.[0-9]+\.[0-9]+' | head -n 1)
    [[ -n $version ]] || die "cannot tell the Slurm version from 'sbatch --version'"
    IFS=. read -r major minor micro <<<"$version"
    for name in $PLUGINS; do
        case $name in
        pyxis)
            command -v cc >/dev/null || die "SLURM_SANDBOX_PLUGINS=pyxis needs a C compiler (cc)"
            cc -shared -fPIC -O2 -Wall -DSANDBOX_SLURM_VERSION=$(((10#$major << 16) + (10#$minor << 8) + 10#$micro)) \
                -o "$D/lib/spank_pyxis.so" "$HERE/pyxis-standin.c" || die "cannot build the pyxis stand-in"
            printf 'required %s%s%s%s\n' "$D/lib/spank_pyxis.so" "${PYXIS_MOUNTS:+ mounts=$PYXIS_MOUNTS}" \
                "${PYXIS_JOB_MOUNTS:+ job_mounts=$PYXIS_JOB_MOUNTS}" \
                "${PYXIS_IMAGE_DIRS:+ image_dirs=$PYXIS_IMAGE_DIRS}" >>"$D/etc/plugstack.conf"
            ;;
        *) die "unknown plugin '$name' in SLURM_SANDBOX_PLUGINS (known: pyxis)" ;;
        esac
    done
}

# --------------------------------------------------------------- starting --
show_logs() { # print the tails of the logs that explain a failure
    local f n
    for f in "$MUNGE_LOG" "$CTLD_LOG" "$@"; do
        [[ -s $f ]] || continue
        printf '%s: ---- last lines of %s ----\n' "$PROG" "$f" >&2
        tail -n 15 "$f" >&2 || true
    done
    for n in "$D"/log/*.launch; do
        [[ -s $n ]] || continue
        printf '%s: ---- %s ----\n' "$PROG" "$n" >&2
        tail -n 15 "$n" >&2 || true
    done
}

fail_start() {
    local msg=$1
    shift
    show_logs "$@"
    die "$msg (logs in $D/log)"
}

launch() { # name cmd...: run a self-daemonizing command, output to a launch log
    local name=$1 out=$D/log/$1.launch
    shift
    if ! SLURM_CONF=$CONF "$@" </dev/null >"$out" 2>&1 9>&-; then
        fail_start "$name failed to start: $(tail -n 1 "$out" 2>/dev/null)"
    fi
}

start_munged() {
    rm -f "$MUNGE_SOCK" "$MUNGE_SOCK.lock" "$MUNGE_PID"
    launch munged munged --key-file="$MUNGE_KEY" --socket="$MUNGE_SOCK" \
        --pid-file="$MUNGE_PID" --log-file="$MUNGE_LOG" --seed-file="$MUNGE_SEED"
    local i
    for ((i = 0; i < 50; i++)); do
        if munge -n --socket="$MUNGE_SOCK" 2>/dev/null | unmunge --socket="$MUNGE_SOCK" >/dev/null 2>&1; then
            return 0
        fi
        sleep 0.1
    done
    fail_start "munged does not answer on $MUNGE_SOCK"
}

# Is slurmctld accepting connections? Asks ss (a probe connection would make
# slurmctld log "Zero Bytes were transmitted or received"); without ss, connect.
ctld_listening() {
    if command -v ss >/dev/null 2>&1; then
        [[ -n $(ss -Hltn "sport = :$CTLD_PORT" 2>/dev/null) ]]
    else
        # shellcheck disable=SC2016 # $1 is expanded by the inner bash
        bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1"' _ "$CTLD_PORT" 2>/dev/null
    fi
}

# A slurmd that cannot reach slurmctld retries its registration only after about
# a second, so start the slurmds once slurmctld accepts connections.
wait_ctld_listening() {
    local i
    for ((i = 0; i < 200; i++)); do
        ctld_listening && return 0
        pidfile_alive "$CTLD_PID" slurmctld >/dev/null || ((i < 20)) || fail_start "slurmctld died"
        sleep 0.05
    done
    fail_start "slurmctld does not listen on port $CTLD_PORT after 10 s"
}

# wait_ready: until every node is up (idle/mix/alloc), every daemon alive.
wait_ready() {
    local -a nodes
    mapfile -t nodes <"$NODES_FILE"
    local start deadline n st line ready not_ready pid_grace
    start=$(now_ms)
    deadline=$((start + TIMEOUT * 1000))
    pid_grace=$((start + 5000))
    local -A state
    while :; do
        # Every daemon must stay alive (a missing PID file is allowed briefly).
        pidfile_alive "$MUNGE_PID" munged >/dev/null || fail_start "munged died"
        if ! still_alive "$CTLD_PID" slurmctld; then
            if [[ -s $CTLD_PID ]] || (($(now_ms) > pid_grace)); then fail_start "slurmctld died"; fi
        fi
        for n in "${nodes[@]}"; do
            if ! still_alive "$(slurmd_pidfile "$n")" slurmd; then
                if [[ -s $(slurmd_pidfile "$n") ]] || (($(now_ms) > pid_grace)); then
                    fail_start "slurmd for $n died" "$(slurmd_logfile "$n")"
                fi
            fi
        done
        state=()
        # Ask sinfo only once slurmctld listens: a client that finds no
        # controller sleeps about a second before retrying.
        if ctld_listening; then
            while read -r n st; do
                [[ -n $n ]] && state[$n]=$st
            done < <(SLURM_CONF=$CONF timeout 3 sinfo -h -N -o '%N %t' 2>/dev/null || true)
        fi
        ready=0
        not_ready=()
        for n in "${nodes[@]}"; do
            case ${state[$n]:-} in
                idle | mix | alloc | comp) ready=$((ready + 1)) ;;
                *)
                    st=${state[$n]:-unknown}
                    pidfile_alive "$(slurmd_pidfile "$n")" slurmd >/dev/null || st+="(no slurmd running)"
                    not_ready+=("$n=$st")
                    ;;
            esac
        done
        if ((ready == ${#nodes[@]})); then
            return 0
        fi
        if (($(now_ms) > deadline)); then
            local -a logs=()
            for line in "${not_ready[@]:0:3}"; do logs+=("$(slurmd_logfile "${line%%=*}")"); done
            fail_start "timed out after ${TIMEOUT}s: $ready/${#nodes[@]} nodes up; not ready: ${not_ready[*]}" "${logs[@]}"
        fi
        sleep 0.1
    done
}

all_alive() {
    local n
    pidfile_alive "$MUNGE_PID" munged >/dev/null || return 1
    pidfile_alive "$CTLD_PID" slurmctld >/dev/null || return 1
    [[ -s $NODES_FILE ]] || return 1
    while read -r n; do
        pidfile_alive "$(slurmd_pidfile "$n")" slurmd >/dev/null || return 1
    done <"$NODES_FILE"
}

any_alive() {
    [[ -n $(sandbox_pids slurm) || -n $(sandbox_pids munge) ]]
}

CLEANUP_ON_FAIL=0
on_exit() {
    local rc=$?
    if ((rc != 0 && CLEANUP_ON_FAIL)); then
        CLEANUP_ON_FAIL=0
        info "start failed; stopping the daemons it started"
        stop_all || true
    fi
    return "$rc"
}

cmd_start() {
    local t0 host conf gres n
    t0=$(now_ms)
    need_root start
    validate_settings
    ensure_packages
    prepare_dir
    take_lock
    host=$(short_hostname)
    conf=$(render_slurm_conf "$host")
    gres=$(render_gres_conf)

    if [[ -f $CONF && -f $GRES_CONF && $(<"$CONF") == "$conf" && $(<"$GRES_CONF") == "$gres" ]] && all_alive; then
        wait_ready
        info "already running: $NODES node(s) up (SLURM_CONF=$CONF)"
        return 0
    fi
    if any_alive; then
        info "sandbox partly running or its config changed: restarting it"
        stop_all
    fi
    check_ports
    write_config "$conf" "$gres"
    # Fresh logs for a fresh cluster; the previous generation goes to log/prev.
    rm -rf "$D/log/prev"
    mkdir -p "$D/log/prev"
    find "$D/log" -maxdepth 1 -type f -exec mv -t "$D/log/prev" {} +

    CLEANUP_ON_FAIL=1
    start_munged
    launch slurmctld slurmctld -c -f "$CONF"
    wait_ctld_listening
    while read -r n; do
        if [[ $NODE_UTS == 1 ]]; then
            launch "slurmd-$n" unshare --uts sh -c 'hostname "$1" && exec slurmd -f "$2" -N "$1"' sh "$n" "$CONF"
        else
            launch "slurmd-$n" slurmd -f "$CONF" -N "$n"
        fi
    done <"$NODES_FILE"
    wait_ready
    CLEANUP_ON_FAIL=0
    info "started: $NODES node(s) up in $(($(now_ms) - t0)) ms (SLURM_CONF=$CONF)"
}

cmd_stop() { # [reap]
    [[ -d $D ]] || {
        info "not running ($D does not exist)"
        return 0
    }
    take_lock
    local t0
    t0=$(now_ms)
    if any_alive; then
        stop_all "${1:-}"
        info "stopped in $(($(now_ms) - t0)) ms"
    else
        if [[ -d $D/run ]]; then rm -f "$D"/run/*.pid; fi
        info "not running"
    fi
}

cmd_status() {
    local ok=0 n pid
    if [[ ! -f $CONF ]]; then
        echo "sandbox $D: not configured"
        return 1
    fi
    echo "sandbox $D (SLURM_CONF=$CONF)"
    if pid=$(pidfile_alive "$MUNGE_PID" munged); then echo "munged     alive (pid $pid)"; else
        echo "munged     DOWN"
        ok=1
    fi
    if pid=$(pidfile_alive "$CTLD_PID" slurmctld); then echo "slurmctld  alive (pid $pid)"; else
        echo "slurmctld  DOWN"
        ok=1
    fi
    if [[ -s $NODES_FILE ]]; then
        while read -r n; do
            if pid=$(pidfile_alive "$(slurmd_pidfile "$n")" slurmd); then
                printf 'slurmd %-7s alive (pid %s)\n' "$n" "$pid"
            else
                printf 'slurmd %-7s DOWN\n' "$n"
                ok=1
            fi
        done <"$NODES_FILE"
    else
        echo "slurmd     no node list ($NODES_FILE)"
        ok=1
    fi
    if ctld_alive; then
        SLURM_CONF=$CONF timeout 10 sinfo || ok=1
    fi
    return "$ok"
}

cmd_env() {
    [[ -f $CONF ]] || info "warning: $CONF does not exist yet (run '$PROG start')"
    printf 'export SLURM_CONF=%q\n' "$CONF"
}

cmd_purge() {
    [[ -e $D ]] || {
        info "nothing to purge ($D does not exist)"
        return 0
    }
    [[ $D != / && ${#D} -gt 1 ]] || die "refusing to purge '$D'"
    [[ -e $MARKER ]] || die "refusing to purge $D: no $MARKER marker"
    cmd_stop reap
    rm -rf -- "$D"
    info "purged $D"
}

main() {
    (($# == 1)) || {
        usage
        exit 2
    }
    trap on_exit EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
    case $1 in
        start) cmd_start ;;
        stop) cmd_stop reap ;;
        restart)
            need_root restart
            cmd_stop
            cmd_start
            ;;
        status) cmd_status ;;
        env) cmd_env ;;
        purge) cmd_purge ;;
        -h | --help | help) usage ;;
        *)
            usage
            exit 2
            ;;
    esac
}

main "$@"
