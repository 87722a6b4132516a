#!/bin/bash
#SBATCH -J scratch-purge
#SBATCH -p cpu
#SBATCH -t 30
#SBATCH -n 1
#SBATCH -c 8
#SBATCH --qos=maint
#SBATCH -o /home/ops/logs/purge-%j.log

# Nightly: delete files on /scratch not accessed for 30 days. Uses lfs find
# (much faster than GNU find on Lustre). Dry-run list kept for a week for complaints.
set -o pipefail
DAYS=30
LIST=/home/ops/purge-lists/scratch-$(date +%F).txt

lfs find /scratch -type f -atime +$DAYS -print0 | tee >(tr '\0' '\n' > $LIST) | xargs -0 -r -P 8 rm -f
lfs find /scratch -type d -empty -mtime +$DAYS -print0 | xargs -0 -r rmdir 2>/dev/null

find /home/ops/purge-lists -name 'scratch-*.txt' -mtime +7 -delete
N=$(wc -l < $LIST)
cat <<EOF > /var/lib/node_exporter/textfile/scratch_purge.prom.$$
# HELP scratch_purge_files_deleted Files removed by the nightly purge
# TYPE scratch_purge_files_deleted gauge
scratch_purge_files_deleted $N
scratch_purge_last_run_timestamp $(date +%s)
EOF
mv /var/lib/node_exporter/textfile/scratch_purge.prom.$$ /var/lib/node_exporter/textfile/scratch_purge.prom
