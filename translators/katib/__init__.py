"""Katib Experiments (kubeflow.org/v1beta1): a hyperparameter search over trials of another workload."""
