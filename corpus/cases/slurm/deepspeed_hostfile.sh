#!/usr/bin/env bash
#SBATCH --job-name=ds-zero3-30b
#SBATCH --nodes=4
#SBATCH --ntasks-per-node=1
#SBATCH --gres=gpu:h100:8,nvme:1
#SBATCH --tmp=500G
#SBATCH --cpus-per-task=180
#SBATCH --partition=h100
#SBATCH --account=llm-research
#SBATCH --time=1-00:00:00
#SBATCH --output=ds-%j.out

# DeepSpeed launcher wants a hostfile + passwordless ssh between nodes.
# ZeRO-3 with NVMe offload onto the local drive (nvme gres).

set -eo pipefail
source /fsx/venvs/ds/bin/activate

HOSTFILE=$SLURM_SUBMIT_DIR/hostfile.$SLURM_JOB_ID
scontrol show hostnames "$SLURM_JOB_NODELIST" | sed 's/$/ slots=8/' > "$HOSTFILE"
MASTER_ADDR=$(head -n1 "$HOSTFILE" | awk '{print $1}')

OFFLOAD_DIR=/local_nvme/$USER/offload
srun --ntasks-per-node=1 mkdir -p $OFFLOAD_DIR

cat > ds_config_$SLURM_JOB_ID.json <<EOF
{
  "train_micro_batch_size_per_gpu": 1,
  "gradient_accumulation_steps": 16,
  "bf16": {"enabled": true},
  "zero_optimization": {
    "stage": 3,
    "offload_optimizer": {"device": "nvme", "nvme_path": "$OFFLOAD_DIR"},
    "offload_param": {"device": "cpu", "pin_memory": true},
    "overlap_comm": true,
    "stage3_gather_16bit_weights_on_model_save": true
  },
  "wall_clock_breakdown": false
}
EOF

export NCCL_DEBUG=WARN
export FI_EFA_USE_DEVICE_RDMA=1

deepspeed --hostfile "$HOSTFILE" \
    --master_addr "$MASTER_ADDR" --master_port 29500 \
    --num_nodes 4 --num_gpus 8 \
    pretrain_gpt.py \
    --deepspeed --deepspeed_config ds_config_$SLURM_JOB_ID.json \
    --data-path /fsx/data/pile/pile_text_document \
    --save /fsx/checkpoints/gpt-30b-z3

rm -f "$HOSTFILE"
