"""migrate: plan and carry out the move of batch workloads between Slurm and Kubernetes."""

__version__ = "0.1.0"
