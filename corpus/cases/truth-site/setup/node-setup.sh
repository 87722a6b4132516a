#!/bin/bash
# Prepare every node: install packages, then check that Slurm takes a job.
set -e
sudo apt-get install -y nvme-cli
sudo mkdir -p /fsx/logs
sbatch --wrap "sleep 10"
