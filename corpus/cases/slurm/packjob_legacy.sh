#!/bin/sh
# old 19.05-era script, still works (packjob is an alias of hetjob)
#SBATCH -J cp2k-qmmm
#SBATCH -t 08:00:00
#SBATCH -p compute -N 1 -n 1 -c 36
#SBATCH packjob
#SBATCH -p compute -N 8 --ntasks-per-node=36

module load cp2k/9.1

# the MM driver on its own node, QM engine across the other 8
srun --pack-group=0 ./mm_driver.x input_mm.inp : --pack-group=1 cp2k.psmp -i qm.inp -o qm.out
