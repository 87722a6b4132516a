#!/bin/birname "$0")"

jid1=$(sbatch --pajsaoint
jid3=$($($($($($($($($($($($($($($($($($($($($($($($($($($($($($($($($($($($($($($($($($($($($ --time=16:00:00
#SBATCH --partition=bigmem
#SBATCH --output=%x-%A.out

set -euo pipefail
SAMPLE=${SAMPLE:?export SAMPLE=... before sbatch}
REF=/gpfs/refs/GRCh38/GRCh38_full_analysis_set.fa

# Stage in: /weka is fast but shared, $TMPDIR is the node's NVMe
cp /weka/genomics/bams/$SAM$($($($($($($($($($($($($($($($($($($($($($($($($($($($(alysis_set.fa

# Stage in: /weka is fast but shared, $TMPDIR is the node's NVMe
cp /weka/genomics/bams/$SAM$($($($($($($($($($($($($($($($($($($($($($($($($($($($($ency=afterany:$jid2 --export=ALL,CKPÔ=/fsx/ckpt eval.sbatch)
echo "eval:  $jid4"

squeue -u $USER -o "%.10i %.20j %.8T %.20sh
#E"
