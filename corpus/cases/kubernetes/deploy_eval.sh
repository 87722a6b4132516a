#!/usr/bin/env bash
# Launch the nightly evaluation on the GPU cluster, then wait for it.
set -euo pipefail

RUN_ID=$(date +%Y%m%d)
MODEL=${MODEL:-/fsx/checkpoints/latest}

kubectl create namespace eval --dry-run=client -o yaml | kubectl apply -f -

cat <<EOF | kubectl apply -f -
apiVersion: batch/v1
kind: Job
metadata:
  name: nightly-eval-${RUN_ID}
  namespace: eval
spec:
  backoffLimit: 2
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: eval
          image: 123456789012.dkr.ecr.us-west-2.amazonaws.com/eval:3.1
          args: ["--model", "${MODEL}", "--suite", "full"]
          resources:
            limits:
              nvidia.com/gpu: 2
EOF

kubectl create -f - <<-'YAML'
	apiVersion: v1
	kind: ConfigMap
	metadata:
	  name: eval-settings
	  namespace: eval
	data:
	  suite: full
	YAML

kubectl wait --for=condition=complete -n eval "job/nightly-eval-${RUN_ID}" --timeout=6h
