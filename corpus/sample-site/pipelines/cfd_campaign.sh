#!/bin/bash
# Angle-of-attack sweep for the wing LES, then one post-processing job.
#   pipelines/cfd_campaign.sh 4 8 12
set -e
REPO=$(cd "$(dirname "$0")/.." && pwd)
if [[ $# -gt 0 ]]; then ANGLES=("$@"); else ANGLES=(4 8 12); fi

jids=()
for aoa in "${ANGLES[@]}"; do
    jid=$(sbatch --parsable --export=ALL,CASE=wing_aoa$aoa -J wing-les-aoa$aoa \
        "$REPO/hpc/cfd_openfoam_64n.sbatch")
    echo "aoa $aoa -> $jid"
    jids+=("$jid")
done

# afterany: post-process whatever finished, a diverged case should not block the others
deps=$(IFS=:; echo "${jids[*]}")
post=$(sbatch --parsable --dependency=afterany:$deps --kill-on-invalid-dep=yes \
    "$REPO/hpc/postprocess_paraview.sbatch")
echo "post-processing -> $post (after $deps)"
