#!/bin/bash
#SBATCH --job-name=wrf-d03
#SBATCH --nodes=6
#SBATCH --ntasks-per-node=48
#SBATCH --mem-per-cpu=4000
#SBATCH --time=90:00
#SBATCH --partition=cpu
#SBATCH --account=atmos
#SBATCH --output=wrf-%j.log

# Daily 3-domain regional forecast. DOMAIN comes from the submit env, defaults to d03.

set -u
spack load wrf@4.5.1 %intel
spack load netcdf-fortran

DOMAIN=${DOMAIN:-d03}
RUNDIR=/lustre/atmos/wrf/runs/$(date -u +%Y%m%d)_$DOMAIN
mkdir -p $RUNDIR
lfs setstripe -c 8 -S 4M $RUNDIR
cd $RUNDIR

case "$DOMAIN" in
    d01) DX=27000; MAXDOM=1 ;;
    d02) DX=9000;  MAXDOM=2 ;;
    d03) DX=3000;  MAXDOM=3 ;;
    *)   echo "unknown domain $DOMAIN" >&2; exit 2 ;;
esac

ln -sf /lustre/atmos/wrf/static/geo_em.d0* .
ln -sf /lustre/atmos/wrf/met_em/$(date -u +%Y%m%d)/met_em.d0* .

cat > namelist.input <<EOF
 &time_control
  run_hours          = 48,
  history_interval   = 60,
  frames_per_outfile = 1,
 /
 &domains
  max_dom            = $MAXDOM,
  dx                 = $DX,
  dy                 = $DX,
  e_vert             = 45,
 /
EOF

mpiexec -np $SLURM_NTASKS ./real.exe
mpiexec -np $SLURM_NTASKS ./wrf.exe
tail -n 3 rsl.out.0000
