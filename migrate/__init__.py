"""migrate: plan and carry out the move of batch workloads between Slurm and Kubernetes."""

__version__ = "0.1.0"

# What a command says, and the code it exits with, when Ctrl-C stops it: whatever it was
# writing is finished or rolled back first. Here, so that the console script's first
# import already has them.
INTERRUPTED = "migrate: interrupted; no output was left half-written, run the command again"
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report it


class UsageError(Exception):
    """Something the user can fix; the message says what and how (the commands exit with 2)."""
