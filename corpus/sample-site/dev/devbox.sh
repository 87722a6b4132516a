#!/bin/bash
# devbox: grab an interactive GPU node for debugging.
#   devbox             -> 1 x A100 for 2h on gpu-a100
#   devbox h100 4 4h   -> 4 x H100 for 4h
#   devbox debug       -> a debug node (A10G) for 1h
set -e

kind=${1:-a100}
ngpu=${2:-1}
walltime=${3:-2:00:00}

case $kind in
    a100)  part=gpu-a100 ;;
    h100)  part=gpu-h100; [[ $ngpu -le 8 ]] || { echo "max 8 gpus" >&2; exit 1; } ;;
    debug) part=debug; walltime=${3:-1:00:00} ;;
    *)     echo "unknown kind $kind (a100|h100|debug)" >&2; exit 1 ;;
esac

acct=$(sacctmgr -nP show assoc user=$USER format=account | head -n1)

exec salloc --partition=$part --account=${SLURM_ACCOUNT:-$acct} \
    --nodes=1 --gpus=$ngpu --cpus-per-gpu=12 --mem-per-gpu=100G \
    --time=$walltime --job-name=devbox-$USER \
    srun --pty --container-image=/fsx/containers/llm-train-2024.06.sqsh \
         --container-mounts=/fsx:/fsx,/home:/home --no-container-remap-root \
         bash -l
