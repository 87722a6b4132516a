#!/bin/bash
#SBATCH --job-name=salvage-ckpt
#SBATCH --dependency=afternotok:4412871
#SBATCH --kill-on-invalid-dep=yes
#SBATCH --partition=cpu
#SBATCH --ntasks=1
#SBATCH --cpus-per-task=4
#SBATCH --time=00:30:00
#SBATCH --output=salvage-%j.out

# Only runs if the big training job (4412871) failed. Copies whatever checkpoints
# are complete to S3 so a node failure does not lose a week of work.
set -euo pipefail
SRC=/fsx/checkpoints/llama-70b
for d in "$SRC"/global_step*; do
    if [[ -f "$d/latest" || -f "$d/.complete" ]]; then
        aws s3 sync --only-show-errors "$d" "s3://ml-ckpt-archive/llama-70b/$(basename "$d")/"
    fi
done
echo "salvage done" | mail -s "llama-70b failed, checkpoints archived" ml-oncall@example.org
