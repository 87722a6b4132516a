#!/usr/bin/env bash
# Launch the Llama fine-tune on the EKS cluster through TorchX (Volcano scheduler underneath).
set -euo pipefail

IMAGE=123456789012.dkr.ecr.us-west-2.amazonaws.com/llama-ft:2024.10
export TORCHX_DEFAULT_SCHEDULER=kubernetes

# two p4d nodes, eight ranks each
torchx run -s kubernetes -cfg queue=ml-train,namespace=training \
    dist.ddp -j 2x8 -h aws_p4d.24xlarge \
    --image "$IMAGE" \
    --name llama-ft \
    --env NCCL_DEBUG=INFO,FI_PROVIDER=efa \
    --script /fsx/code/finetune.py -- --epochs 3 --lr 2e-5

# a single-GPU evaluation afterwards
torchx run --scheduler kubernetes --scheduler_args queue=ml-eval dist.ddp -j 1x1 --gpu 1 --cpu 8 --memMB 32768 \
    --script /fsx/code/evaluate.py -- --ckpt /fsx/ckpt/llama-ft

# a custom component: its pods are not known
torchx run -s kubernetes ./components.py:trainer --nodes 4
