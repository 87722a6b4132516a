"""Pod templates handed to Spark: recognised by Spark's container name, or because a scanned file
names them as its podTemplateFile; neither is a job, nor an error for what Spark fills in."""

from __future__ import annotations

from pathlib import Path

from test_k8s_reader import read

from migrate.scan import scanner

DRIVER = """\
apiVersion: v1
kind: Pod
metadata:
  labels: {spark-role: driver}
spec:
  nodeSelector: {karpenter.sh/capacity-type: on-demand}
  containers:
    - name: spark-kubernetes-driver
      volumeMounts: [{name: spark-local-dir-1, mountPath: /data1}]
  volumes:
    - name: spark-local-dir-1
      hostPath: {path: /local1}
"""


def test_a_pod_with_sparks_container_name_is_a_template_not_a_job() -> None:
    jobs, diags = read(DRIVER)
    assert jobs == []
    assert [(d.code, d.severity, d.line) for d in diags] == [("K8S-POD-TEMPLATE", "info", 1)]
    assert "Spark driver pod template" in diags[0].message


def test_an_executor_template_and_an_ordinary_pod_beside_it() -> None:
    executor = DRIVER.replace("spark-kubernetes-driver", "spark-kubernetes-executor")
    pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c, image: busybox}]\n"
    jobs, diags = read(executor + "---\n" + pod)
    assert [job.name for job in jobs] == ["p"]
    assert [d.code for d in diags] == ["K8S-POD-TEMPLATE"]
    assert "executor" in diags[0].message


EXECUTOR = """\
apiVersion: v1
kind: Pod
metadata:
  labels: {spark-role: executor}
spec:
  nodeSelector: {karpenter.sh/capacity-type: spot}
  containers:
    - name: executor
      resources: {limits: {memory: 16Gi}}
"""

APPLICATION = """\
apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata: {name: tpcds-benchmark-3t, namespace: spark-team-a}
spec:
  type: Scala
  mode: cluster
  image: public.ecr.aws/data-on-eks/spark3.5.1-hadoop3.3.6-tpcds:latest
  mainClass: com.amazonaws.eks.tpcds.BenchmarkSQL
  sparkConf:
    "spark.kubernetes.executor.podTemplateFile": "/opt/spark/templates/executor-pod-template.yaml"
"""


def _scan(tmp_path: Path, files: dict[str, str]) -> dict[str, tuple[list[str], list[str]]]:
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    result = scanner.scan([str(tmp_path)])
    return {
        str(Path(f.path).relative_to(tmp_path)): ([j.kind for j in f.jobs], [d.code for d in f.diagnostics])
        for f in result.files
    }


def test_a_bare_pod_another_file_names_as_its_template_is_no_job(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"templates/executor-pod-template.yaml": EXECUTOR, "tpcds.yaml": APPLICATION})
    assert found["templates/executor-pod-template.yaml"] == ([], ["K8S-POD-TEMPLATE"])


def test_a_spark_submit_conf_names_a_template_too(tmp_path: Path) -> None:
    submit = (
        "#!/bin/bash\nspark-submit --master k8s://https://eks.example:443 \\\n"
        "  --conf spark.kubernetes.executor.podTemplateFile=executor-pod-template.yaml app.py\n"
    )
    found = _scan(tmp_path, {"executor-pod-template.yaml": EXECUTOR, "submit.sh": submit})
    assert found["executor-pod-template.yaml"] == ([], ["K8S-POD-TEMPLATE"])


def test_a_bare_pod_nobody_names_stays_a_pod(tmp_path: Path) -> None:
    found = _scan(
        tmp_path,
        {
            "executor-pod-template.yaml": EXECUTOR,
            "other.yaml": APPLICATION.replace("executor-pod-template.yaml", "another.yaml"),
        },
    )
    assert found["executor-pod-template.yaml"] == (["Pod"], ["K8S-MISSING-FIELD", "K8S-MISSING-FIELD"])


def test_a_named_pod_that_runs_a_command_stays_a_pod(tmp_path: Path) -> None:
    runs = EXECUTOR.replace(
        "    - name: executor\n", "    - name: executor\n      command: [python, etl.py]\n"
    )
    found = _scan(tmp_path, {"executor-pod-template.yaml": runs, "tpcds.yaml": APPLICATION})
    assert found["executor-pod-template.yaml"][0] == ["Pod"]
