"""What the Katib Experiment API says, as the reader and the writers need it.

Checked against kubeflow/katib: ``pkg/apis/controller/experiments/v1beta1``
(experiment_types.go, constants.go, experiment_defaults.go),
``pkg/controller.v1beta1/consts/const.go`` (the placeholder formats) and the
suggestion services under ``pkg/suggestion/v1beta1`` (which algorithm is which).
"""

from __future__ import annotations

import re

GROUP = "kubeflow.org"
KIND = "Experiment"
VERSIONS = ("v1beta1",)

# spec.parallelTrialCount when unset (DefaultTrialParallelCount)
DEFAULT_PARALLEL_TRIALS = 3
DEFAULT_ALGORITHM = "random"
DEFAULT_COLLECTOR = "StdOut"  # setDefaultMetricsCollector

# Katib replaces ${trialParameters.NAME} in the template's text, wherever it stands.
PLACEHOLDER = re.compile(r"\$\{trialParameters\.(.+?)\}")
# A trial parameter whose reference is the trial's own metadata rather than a search parameter.
METADATA_REFERENCE = re.compile(r"\$\{trialSpec\.(.+?)\}")
METADATA_INDEXED = re.compile(r"(.+)\[(.+)]")
TRIAL_NAME = "Name"
TRIAL_NAMESPACE = "Namespace"
TRIAL_KIND = "Kind"
TRIAL_API_VERSION = "APIVersion"
TRIAL_LABELS = "Labels"
TRIAL_ANNOTATIONS = "Annotations"

# Algorithms whose trials do not depend on earlier trials' results: their values can be chosen
# before any trial runs. Katib's grid walks the Cartesian product of the feasible values (its
# sampler picks the unvisited points in its own order); random draws each value uniformly.
GRID = "grid"
RANDOM = "random"
UP_FRONT = frozenset({GRID, RANDOM})
# Settings that seed Katib's random and grid samplers.
SEED_SETTINGS = ("seed", "random_state")

DOUBLE = "double"
INT = "int"
CATEGORICAL = "categorical"
DISCRETE = "discrete"
LISTED = frozenset({CATEGORICAL, DISCRETE})
LOG_UNIFORM = "logUniform"

# Where the kubelet (or Argo, for a script's source) expands $(NAME) references: a placeholder
# standing here can become a value each trial sets. A container's command and args, an env
# var's value, an Argo script template's source.
EXPANDED_LISTS = frozenset({"command", "args"})
EXPANDED_ENV = "env"
EXPANDED_SOURCE = ("script", "source")

__all__ = [
    "CATEGORICAL",
    "DEFAULT_ALGORITHM",
    "DEFAULT_COLLECTOR",
    "DEFAULT_PARALLEL_TRIALS",
    "DISCRETE",
    "DOUBLE",
    "EXPANDED_ENV",
    "EXPANDED_LISTS",
    "EXPANDED_SOURCE",
    "GRID",
    "GROUP",
    "INT",
    "KIND",
    "LISTED",
    "LOG_UNIFORM",
    "METADATA_INDEXED",
    "METADATA_REFERENCE",
    "PLACEHOLDER",
    "RANDOM",
    "SEED_SETTINGS",
    "TRIAL_ANNOTATIONS",
    "TRIAL_API_VERSION",
    "TRIAL_KIND",
    "TRIAL_LABELS",
    "TRIAL_NAME",
    "TRIAL_NAMESPACE",
    "UP_FRONT",
    "VERSIONS",
]
