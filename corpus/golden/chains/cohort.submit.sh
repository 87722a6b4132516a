#!/bin/bash
# Written by migrate: applies the translated jobs in dependency order.
# Needs kubectl with access to the cluster. Run from anywhere: ./submit.sh
set -uo pipefail
cd "$(dirname "$0")"
# a job that will never be applied leaves a mark here, so that what waits for it stops waiting
never=$(mktemp -d)
trap 'rm -rf "$never"' EXIT

# state RESOURCE NAME NAMESPACE OK FAILED PHASE_FIELD -> ok | failed | running | pending
# PHASE_FIELD: the status field with the object's phase (Volcano, RayJob); empty: its conditions
state() {
  local ns=() out
  [ -n "$3" ] && ns=(-n "$3")
  if [ -n "$6" ]; then
    out=$(kubectl get "$1" "$2" "${ns[@]}" -o jsonpath="{$6}" 2>/dev/null) || out=""
    case "$out" in
      "$4") echo ok ;;
      "$5"|Aborted|Terminated) echo failed ;;
      Running|Completing|Retrying) echo running ;;
      *) echo pending ;;
    esac
    return
  fi
  out=$(kubectl get "$1" "$2" "${ns[@]}" \
    -o jsonpath='{range .status.conditions[?(@.status=="True")]}{.type}{" "}{end}' 2>/dev/null) || out=""
  case " $out " in
    *" $4 "*) echo ok ;;
    *" $5 "*) echo failed ;;
    *)
      out=$(kubectl get "$1" "$2" "${ns[@]}" -o jsonpath='{.status.startTime}' 2>/dev/null) || out=""
      if [ -n "$out" ]; then echo running; else echo pending; fi ;;
  esac
}

# wait_for WANT RESOURCE NAME NAMESPACE OK FAILED PHASE_FIELD: 0 when WANT holds, 1 when it never will
wait_for() {
  local want=$1 s
  shift
  while :; do
    if [ -e "$never/$1.$2" ]; then
      echo "submit.sh: $1/$2 was never applied; the jobs that wait for it ($want) are not applied" >&2
      return 1
    fi
    s=$(state "$@")
    case "$want:$s" in
      complete:ok|failed:failed|finished:ok|finished:failed) return 0 ;;
      started:ok|started:failed|started:running) return 0 ;;
      complete:failed|failed:ok)
        echo "submit.sh: $1/$2 ended $s; the jobs that wait for it ($want) are not applied" >&2
        return 1 ;;
    esac
    sleep "${MIGRATE_POLL_SECONDS:-10}"
  done
}


# align-reads: corpus/cases/slurm/chains/align.sbatch
kubectl apply -f align-reads/job.yaml || touch "$never"/job.align-reads

# archive-cohort: corpus/cases/slurm/chains/archive.sbatch
(
  trap '[ "$?" = 0 ] || touch "$never"/job.archive-cohort' EXIT
  wait_for finished job call-variants default Complete Failed '' || exit 1  # afterany call-variants
  kubectl apply -f archive-cohort/job.yaml
) &

# call-variants: corpus/cases/slurm/chains/call_variants.sbatch
(
  trap '[ "$?" = 0 ] || touch "$never"/job.call-variants' EXIT
  wait_for complete job sample-sheet default Complete Failed '' || exit 1  # afterok sample-sheet
  kubectl apply -f call-variants/job.yaml
) &

# merge-bams: corpus/cases/slurm/chains/merge.sbatch
(
  trap '[ "$?" = 0 ] || touch "$never"/job.merge-bams' EXIT
  wait_for complete job align-reads default Complete Failed '' || exit 1  # afterok align-reads
  kubectl apply -f merge-bams/job.yaml
) &

# cohort-failed: corpus/cases/slurm/chains/notify_failure.sbatch
(
  trap '[ "$?" = 0 ] || touch "$never"/job.cohort-failed' EXIT
  wait_for failed job call-variants default Complete Failed '' || exit 1  # afternotok call-variants
  kubectl apply -f cohort-failed/job.yaml
) &

# qc-sample: corpus/cases/slurm/chains/qc_per_sample.sbatch
(
  trap '[ "$?" = 0 ] || touch "$never"/job.qc-sample' EXIT
  wait_for complete job align-reads default Complete Failed '' || exit 1  # aftercorr align-reads
  kubectl apply -f qc-sample/job.yaml
) &

# refresh-index: corpus/cases/slurm/chains/refresh_index.sbatch
kubectl apply -f refresh-index/job.yaml || touch "$never"/job.refresh-index

# refresh-index-2: corpus/cases/slurm/chains/refresh_index_patch.sbatch
(
  trap '[ "$?" = 0 ] || touch "$never"/job.refresh-index-2' EXIT
  wait_for finished job refresh-index default Complete Failed '' || exit 1  # singleton refresh-index
  kubectl apply -f refresh-index-2/job.yaml
) &

# sample-sheet: corpus/cases/slurm/chains/run_cohort.sh
(
  trap '[ "$?" = 0 ] || touch "$never"/job.sample-sheet' EXIT
  wait_for complete job merge-bams default Complete Failed '' || exit 1  # afterok merge-bams
  kubectl apply -f sample-sheet/job.yaml
) &

# watch-merge: corpus/cases/slurm/chains/watch_progress.sbatch
(
  trap '[ "$?" = 0 ] || touch "$never"/job.watch-merge' EXIT
  wait_for started job merge-bams default Complete Failed '' || exit 1  # after merge-bams
  kubectl apply -f watch-merge/job.yaml
) &

wait
