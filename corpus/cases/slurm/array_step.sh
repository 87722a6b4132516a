#!/bin/bash
#SBATCH -J mc_sample
#SBATCH --array=1-1000:4
#SBATCH -n 1
#SBATCH -c 4
#SBATCH --mem-per-cpu=2G
#SBATCH -t 45
#SBATCH -p short
#SBATCH -o /scratch/%u/mc/out/%A_%a.txt

# Each array element handles 4 consecutive seeds (step is 4).
module load python/3.11

STEP=${SLURM_ARRAY_TASK_STEP:-4}
for ((i=0; i<STEP; i++)); do
    seed=$((SLURM_ARRAY_TASK_ID + i))
    [ $seed -gt 1000 ] && break
    python mc_integrate.py --seed $seed --samples 50000000 \
        --out $SCRATCH/mc/results/seed_${seed}.npz
done
