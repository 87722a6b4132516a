#!/bin/bash
# Written by migrate: submits the batch scripts in dependency order. Needs sbatch (SLURM_CONF set
# or the cluster's default configuration). Run from anywhere: ./submit.sh
set -euo pipefail
cd "$(dirname "$0")"

# asr-finetune-prepare: corpus/cases/argo/dag_depends_train.yaml
jid_asr_finetune_prepare=$(sbatch --parsable asr-finetune-prepare/job.sbatch)
jid_asr_finetune_prepare="${jid_asr_finetune_prepare%%;*}"  # sbatch --parsable prints id[;cluster]
echo "submitted asr-finetune-prepare/job.sbatch: job ${jid_asr_finetune_prepare}"

# asr-finetune-train: corpus/cases/argo/dag_depends_train.yaml
jid_asr_finetune_train=$(sbatch --parsable --dependency="afterok:${jid_asr_finetune_prepare}" asr-finetune-train/job.sbatch)
jid_asr_finetune_train="${jid_asr_finetune_train%%;*}"  # sbatch --parsable prints id[;cluster]
echo "submitted asr-finetune-train/job.sbatch: job ${jid_asr_finetune_train}"

# asr-finetune-evaluate: corpus/cases/argo/dag_depends_train.yaml
jid_asr_finetune_evaluate=$(sbatch --parsable --dependency="afterok:${jid_asr_finetune_train}" asr-finetune-evaluate/job.sbatch)
jid_asr_finetune_evaluate="${jid_asr_finetune_evaluate%%;*}"  # sbatch --parsable prints id[;cluster]
echo "submitted asr-finetune-evaluate/job.sbatch: job ${jid_asr_finetune_evaluate}"

# asr-finetune-publish: corpus/cases/argo/dag_depends_train.yaml
jid_asr_finetune_publish=$(sbatch --parsable --dependency="afterok:${jid_asr_finetune_evaluate},afterok:${jid_asr_finetune_prepare}" asr-finetune-publish/job.sbatch)
jid_asr_finetune_publish="${jid_asr_finetune_publish%%;*}"  # sbatch --parsable prints id[;cluster]
echo "submitted asr-finetune-publish/job.sbatch: job ${jid_asr_finetune_publish}"

# asr-finetune-notify-failure: corpus/cases/argo/dag_depends_train.yaml
jid_asr_finetune_notify_failure=$(sbatch --parsable --dependency="afternotok:${jid_asr_finetune_evaluate}?afternotok:${jid_asr_finetune_train}" asr-finetune-notify-failure/job.sbatch)
jid_asr_finetune_notify_failure="${jid_asr_finetune_notify_failure%%;*}"  # sbatch --parsable prints id[;cluster]
echo "submitted asr-finetune-notify-failure/job.sbatch: job ${jid_asr_finetune_notify_failure}"

# asr-finetune-cleanup: corpus/cases/argo/dag_depends_train.yaml
jid_asr_finetune_cleanup=$(sbatch --parsable --dependency="afterany:${jid_asr_finetune_notify_failure},afterany:${jid_asr_finetune_publish}" asr-finetune-cleanup/job.sbatch)
jid_asr_finetune_cleanup="${jid_asr_finetune_cleanup%%;*}"  # sbatch --parsable prints id[;cluster]
echo "submitted asr-finetune-cleanup/job.sbatch: job ${jid_asr_finetune_cleanup}"
