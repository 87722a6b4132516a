#!/usr/bin/env python3
"""Submit a learning-rate sweep to the cluster.

Each point runs a job script like this one (written to /tmp and passed to sbatch):

#!/bin/bash
#SBATCH --job-name=sweep
#SBATCH --gpus=1
#SBATCH --time=02:00:00
python train.py --lr $LR
"""
import subprocess
import tempfile

TEMPLATE = __doc__.split("passed to sbatch):\n\n", 1)[1]

for lr in ("1e-4", "3e-4", "1e-3"):
    with tempfile.NamedTemporaryFile("w", suffix=".sbatch", delete=False) as fh:
        fh.write(TEMPLATE.replace("$LR", lr))
    subprocess.run(["sbatch", fh.name], check=True)
