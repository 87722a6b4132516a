"""The raw-item keys the Katib reader gives what it keeps, and what each one holds."""

from __future__ import annotations

from migrate import ir

RAW_KEYS = ir.RawKeys(
    {
        "katib-placeholder-unfilled": "a trial placeholder the trials cannot each fill in: "
        "'placeholder in field: why'",
        "katib-metrics-collector": "how Katib collects the trials' metrics: 'kind (source)'",
        "katib-early-stopping": "the early stopping algorithm and its settings, as written",
        "katib-success-condition": "the trial template's success or failure condition, as written",
        "katib-resume-policy": "what Katib keeps of the search once it ends (resumePolicy)",
        "katib-nas": "a neural architecture search's configuration (nasConfig)",
        "katib-primary": "which pods and container Katib watches for metrics (primaryPodLabels, "
        "primaryContainerName)",
    }
)

__all__ = ["RAW_KEYS"]
