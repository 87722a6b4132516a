#!/bin/bash
# Queue N more 2-day segments of llm-13b pretraining.
# They all share the job name llm13b-pretrain, and the script sets
# --dependency=singleton, so they run one after another and resume from
# the newest checkpoint in /fsx/checkpoints/llm-13b.
N=${1:-2}
cd "$(dirname "$0")/../training"
for ((i = 1; i <= N; i++)); do
    sbatch pretrain_llm13b.sbatch
done
squeue --me --name=llm13b-pretrain
