"""Pod templates handed to Spark: files a submitter fills in, not pods to run.

``spark-submit`` takes ``spark.kubernetes.driver.podTemplateFile`` and
``spark.kubernetes.executor.podTemplateFile``: a ``kind: Pod`` file whose
container Spark completes (image, command, name). Spark looks for its container
by name, ``spark-kubernetes-driver`` or ``spark-kubernetes-executor`` unless
told otherwise, so a Pod holding one of them is such a template. A template named
by another scanned file is found by the scan's second pass (``migrate.scan.spark_refs``).
"""

from __future__ import annotations

from collections.abc import Mapping

from migrate.vocab import JobKind

SPARK_CONTAINERS = {"spark-kubernetes-driver": "driver", "spark-kubernetes-executor": "executor"}
TEMPLATE_KEYS = ("spark.kubernetes.driver.podTemplateFile", "spark.kubernetes.executor.podTemplateFile")
CODE = "K8S-POD-TEMPLATE"


def spark_role(kind: str, data: Mapping[object, object]) -> str | None:
    """'driver' or 'executor' when ``data`` is a Pod whose container Spark fills in, else None."""
    if kind != JobKind.POD:
        return None
    spec = data.get("spec")
    containers = spec.get("containers") if isinstance(spec, Mapping) else None
    for container in containers if isinstance(containers, list) else ():
        name = container.get("name") if isinstance(container, Mapping) else None
        if isinstance(name, str) and name in SPARK_CONTAINERS:
            return SPARK_CONTAINERS[name]
    return None


def message(what: str, role: str, how: str) -> str:
    return (
        f"{what}: a Spark {role} pod template ({how}); spark-submit fills it in, "
        "it is not a job of its own and its missing fields are Spark's to set"
    )


__all__ = ["CODE", "SPARK_CONTAINERS", "TEMPLATE_KEYS", "message", "spark_role"]
