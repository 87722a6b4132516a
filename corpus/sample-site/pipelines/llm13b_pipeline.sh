#!/bin/bash
# Full llm-13b data -> train -> eval -> export chain.
#
#   pipelines/llm13b_pipeline.sh             # everything from the download
#   pipelines/llm13b_pipeline.sh --from tok  # reuse raw+dedup, start at tokenization
#
# The serving side (serving/vllm-llm13b.yaml) picks up the release once the
# export job has swapped /fsx/models/llm-13b/release; restart the deployment.
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
FROM=all
[[ ${1:-} == --from ]] && FROM=$2

dep=""
submit() {
    # submit <script> [extra sbatch args...]; chains on the previous job
    local script=$1; shift
    local jid
    jid=$(sbatch --parsable ${dep:+--dependency=afterok:$dep} "$@" "$REPO/$script")
    echo "$(printf '%-32s' "$script") $jid" >&2
    dep=$jid
}

if [[ $FROM == all ]]; then
    submit data/download_web.sbatch
    submit data/dedup_minhash.sbatch
fi

# tokenize_shards.sbatch reads one input per line from shards.txt; (re)build it
# once dedup is done, as a tiny dependent job
if [[ $FROM == all || $FROM == tok ]]; then
    jid=$(sbatch --parsable ${dep:+--dependency=afterok:$dep} -p cpu -A llm -t 5 -J shardlist \
        --wrap "ls /fsx/datasets/dedup/web-v3/bucket_*/part-*.parquet | sort > /fsx/datasets/dedup/web-v3/shards.txt")
    dep=$jid
    submit data/tokenize_shards.sbatch
    submit data/verify_tokenized.sbatch
fi

# 3 x 2 days of pretraining; singleton in the script keeps them serial, the first
# one waits for the data.
first=$(sbatch --parsable ${dep:+--dependency=afterok:$dep} "$REPO/training/pretrain_llm13b.sbatch")
sbatch --parsable "$REPO/training/pretrain_llm13b.sbatch" >/dev/null
last=$(sbatch --parsable "$REPO/training/pretrain_llm13b.sbatch")
echo "pretrain: $first .. $last" >&2

# eval whatever checkpoints exist even if the last segment timed out
dep=$last
eval_jid=$(sbatch --parsable --dependency=afterany:$dep "$REPO/eval/eval_llm13b.sbatch")
dep=$eval_jid
submit training/export_release.sbatch --export=ALL

squeue --me -o "%.10i %.22j %.10T %.30E"
