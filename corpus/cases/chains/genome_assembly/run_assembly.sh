#!/bin/bash
# Assemble one sample: trim reads per lane (an array, four lanes at a time), assemble,
# polish, and clean up whatever happened. A failure mail goes out if assembly fails.
set -euo pipefail
cd "$(dirname "$0")"
SAMPLE=${1:-HG002}

trim=$(sbatch --parsable --export=ALL,SAMPLE="$SAMPLE" trim_lanes.sbatch)
asm=$(sbatch --parsable --dependency=afterok:$trim assemble.sbatch)
polish=$(sbatch --parsable --dependency=afterok:$asm polish.sbatch)
sbatch --dependency=afternotok:$asm notify_failure.sbatch
qc=$(sbatch --parsable --dependency=after:$asm assembly_monitor.sbatch)
sbatch --dependency=afterany:$polish:$qc cleanup.sbatch
