#!/bin/bash
# Submits the pretraining script to the a100 partition on four whole nodes: the script itself
# names no partition, no GPUs and a short test time limit; what it gets comes from here.
set -euo pipefail
cd "$(dirname "$0")"

export SBATCH_PARTITION=a100
export SBATCH_ACCOUNT=llm
SBATCH_TIMELIMIT=1-12:00:00 sbatch --nodes=4 --exclusive --job-name=pretrain-a100 wrapped_pretrain.sbatch
