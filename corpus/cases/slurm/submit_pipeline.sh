#!/bin/bash
# Submit the prep -> train -> eval chain. Usage: ./submit_pipeline.sh [config]
set -e
CONFIG=${1:-configs/base.yaml}
cd "$(dirname "$0")"

jid1=$(sbatch --parsable prep.sbatch "$CONFIG")
echo "prep:  $jid1"

jid2=$(sbatch --parsable --dependency=afterok:$jid1 train.sbatch "$CONFIG")
echo "train: $jid2"

# eval runs even if training times out, so we get numbers for the last checkpoint
jid3=$(sbatch --parsable --dependency=afterany:$jid2 --export=ALL,CKPT=/fsx/ckpt eval.sbatch)
echo "eval:  $jid3"

squeue -u $USER -o "%.10i %.20j %.8T %.20E"
