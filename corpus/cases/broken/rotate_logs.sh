#!/bin/bash
# rotate_logs.sh - compress slurm-*.out files older than 3 days in the given dirs
# Usage: rotate_logs.sh DIR [DIR...]
set -euo pipefail

[[ $# -ge 1 ]] || { echo "usage: $0 DIR [DIR...]" >&2; exit 1; }

for dir in "$@"; do
    find "$dir" -maxdepth 1 -name 'slurm-*.out' -mtime +3 -print0 |
        xargs -0 -r gzip -9
    find "$dir" -maxdepth 1 -name 'slurm-*.out.gz' -mtime +60 -delete
done
