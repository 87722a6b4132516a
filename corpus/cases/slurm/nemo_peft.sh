#!/bin/bash
#SBATCH -N 2 -c8 --ntasks-per-node=8 --gpus-per-node=8
#SBATCH -p gpu -A proj123 -J nemo-peft -t 06:00:00
#SBATCH -o %x-%j.out
set -x
CONT=/fsx/containers/nemo-24.05.sqsh
export NCCL_DEBUG=WARN FI_EFA_USE_DEVICE_RDMA=1
srun --container-image=$CONT --container-mounts=/fsx:/fsx,/home:/home --mpi=pmix \
  python /opt/NeMo/examples/nlp/language_modeling/tuning/megatron_gpt_finetuning.py \
    trainer.num_nodes=$SLURM_NNODES trainer.devices=8 \
    model.restore_from_path=/fsx/models/llama2-13b.nemo \
    model.peft.peft_scheme=lora \
    model.data.train_ds.file_names=[/fsx/datasets/pubmedqa/train.jsonl] \
    exp_manager.exp_dir=/fsx/results/nemo-peft
