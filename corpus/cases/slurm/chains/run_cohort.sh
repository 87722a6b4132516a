#!/bin/bash
# Cohort pipeline: align (array, 4 at a time) -> merge -> sample sheet -> variant calling,
# per-sample QC as each alignment finishes, a failure marker, an archive whatever happens,
# and a progress watcher once the merge has started.
#   ./run_cohort.sh CEU-2024
set -euo pipefail
cd "$(dirname "$0")"
COHORT=${1:?usage: run_cohort.sh COHORT}
export COHORT

align=$(sbatch --parsable align.sbatch)
sbatch --dependency=aftercorr:$align qc_per_sample.sbatch
merge=$(sbatch --parsable --dependency=afterok:$align merge.sbatch)
# the caller's sample sheet is a one-liner: no script of its own
sheet=$(sbatch --parsable --dependency=afterok:$merge -p cpu -A genomics -t 10 -J sample-sheet \
    --wrap "ls /lustre/cohorts/$COHORT/merged/*.bam > /lustre/cohorts/$COHORT/samples.txt")
calls=$(sbatch --parsable --dependency=afterok:$sheet call_variants.sbatch)
sbatch --dependency=afternotok:$calls notify_failure.sbatch
sbatch --dependency=afterany:$calls archive.sbatch
sbatch --dependency=after:$merge watch_progress.sbatch
