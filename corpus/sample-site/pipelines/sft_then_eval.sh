#!/bin/bash
# Fine-tune on a data mix, then run the eval array against the result.
#   pipelines/sft_then_eval.sh support-v7
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
MIX=${1:?usage: sft_then_eval.sh <mix>}

ft=$(sbatch --parsable "$REPO/training/finetune_sft_8gpu.sbatch" "$MIX")
# the fine-tune writes /fsx/checkpoints/ft/mistral7b-$MIX-<jobid>
sbatch --dependency=afterok:$ft \
    --export=ALL,MODEL=/fsx/checkpoints/ft/mistral7b-$MIX-$ft \
    "$REPO/eval/eval_harness_array.sbatch"
