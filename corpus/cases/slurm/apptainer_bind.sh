#!/bin/bash
#SBATCH --job-name=cryosparc-ish
#SBATCH --nodes=1
#SBATCH --gres=gpu:a100:2
#SBATCH --cpus-per-task=24
#SBATCH --mem=240G
#SBATCH --time=1-12
#SBATCH --partition=gpu
#SBATCH --output=relion-%j.out

set -euo pipefail

# stage the particle stack onto node-local disk, it is read ~40 times per iteration
STAGE=$TMPDIR/particles
mkdir -p $STAGE
rsync -a /lustre/cryoem/proj_2041/Extract/job019/ $STAGE/

singularity exec --nv --bind /lustre:/lustre --bind $TMPDIR:$TMPDIR \
    /lustre/containers/relion-4.0.1.sif \
    relion_refine --i $STAGE/particles.star --o /lustre/cryoem/proj_2041/Class3D/run_$SLURM_JOB_ID \
    --K 6 --iter 25 --tau2_fudge 4 --gpu "" --j $SLURM_CPUS_PER_TASK --pool 30 --dont_combine_weights_via_disc

# quick look at the classes with a tool from docker hub
apptainer exec --nv docker://ghcr.io/example-lab/cryo-tools:1.4 \
    plot_classes.py /lustre/cryoem/proj_2041/Class3D/run_$SLURM_JOB_ID
