#!/bin/bash
# Submit the evaluation after a training job whose id the caller passes in.
dep=$1
sbatch --dependency=afterok:$dep eval/eval.sbatch
