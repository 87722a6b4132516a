#!/bin/bash
#SBATCH --job-name=climate-spinup
#SBATCH --nodes=16
#SBATCH --ntasks-per-node=128
#SBATCH --time=12:00:00
#SBATCH --partition=standard
#SBATCH --account=esm01
#SBATCH --output=spinup.%j.out
#SBATCH --open-mode=append

# 500 model years of spin-up in 25-year segments; each job does one segment and
# queues the next one until the target year is reached.
module load PrgEnv-gnu cray-netcdf cray-hdf5-parallel

RUNDIR=/lustre/esm01/spinup/run1
cd $RUNDIR

LAST=$(cat year.txt 2>/dev/null || echo 0)
TARGET=500
echo "starting segment at model year $LAST"

srun --distribution=block:block ./cesm.exe >> cesm.log.$SLURM_JOB_ID 2>&1 || exit 1

NEXT=$((LAST + 25))
echo $NEXT > year.txt
if [ $NEXT -lt $TARGET ]; then
    sbatch $0
else
    echo "spin-up finished at year $NEXT" | mail -s "spinup done" $USER
fi
