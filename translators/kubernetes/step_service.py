"""Who may start steps in a job's pods: a token the pods share, and a NetworkPolicy around the port.

In a job with several pods, every pod but node 0 runs the step service of the
shims (``migrate-stepd serve``, docs/execution.md), which runs what a request
on ``STEP_PORT`` asks: argv, environment, working folder. Two things keep the
requests to the job's own ``srun``:

- a token: every pod gets ``MIGRATE_STEP_TOKEN`` from the job's Secret
  ``<job>-steps`` (key ``token``), and the service runs a request (step or
  release) only when it carries that token. The Secret is never written: its
  value must be random, so ``submit.sh`` creates it (a diagnostic says how to
  by hand). A pod whose Secret gives no token refuses every request.
- a NetworkPolicy beside the workload: from the job's own pods every port, from
  anywhere else every port but the step port. It restricts that one port, so a
  site's monitoring still reaches the pods' other ports; the token travels in
  clear inside the pod network, and this keeps it from other pods' reach where
  the network plugin enforces NetworkPolicies.
"""

from __future__ import annotations

from typing import Any

from migrate.names import dns1123_label
from migrate.translators.job_variables import POD

from .translation_context import LABEL_JOB, Context, TokenNeed
from .yamlemit import Manifest

STEP_PORT = int(POD.STEP_PORT.default or 0)  # the port the entrypoint gives the service when unset
TOKEN_ENV = POD.STEP_TOKEN.name
TOKEN_KEY = "token"
NETWORKING_API = "networking.k8s.io/v1"
_PORT_MAX = 65535


def secret_name(ctx: Context) -> str:
    """The job's Secret with the token its pods share (also the NetworkPolicy's name)."""
    return dns1123_label(f"{ctx.name}-steps", 253, "steps")


def token_env(ctx: Context) -> dict[str, Any]:
    """The env entry of a pod that serves or sends steps; the job then gets its Secret and policy."""
    ctx.step_secret = secret_name(ctx)
    return {"name": TOKEN_ENV, "valueFrom": {"secretKeyRef": {"name": ctx.step_secret, "key": TOKEN_KEY}}}


def create_command(name: str, namespace: str | None) -> str:
    """The kubectl command that creates the Secret with a random token."""
    where = f" -n {namespace}" if namespace else ""
    return f'kubectl create secret generic {name}{where} --from-literal={TOKEN_KEY}="$(openssl rand -hex 32)"'


def network_policy(ctx: Context) -> Manifest:
    """Ingress to the job's pods: every port from its own pods, every port but the step port from others."""
    own = {"matchLabels": {LABEL_JOB: ctx.name}}
    others = [
        {"protocol": "TCP", "port": 1, "endPort": STEP_PORT - 1},
        {"protocol": "TCP", "port": STEP_PORT + 1, "endPort": _PORT_MAX},
        {"protocol": "UDP", "port": 1, "endPort": _PORT_MAX},
        {"protocol": "SCTP", "port": 1, "endPort": _PORT_MAX},
    ]
    body = {
        "apiVersion": NETWORKING_API,
        "kind": "NetworkPolicy",
        "metadata": ctx.metadata(secret_name(ctx)),
        "spec": {
            "podSelector": own,
            "policyTypes": ["Ingress"],
            "ingress": [{"from": [{"podSelector": own}]}, {"ports": others}],
        },
    }
    manifest = Manifest(body)
    manifest.note(
        ("spec",),
        f"the step service (port {STEP_PORT}) answers the job's own pods only; every other port stays "
        "open as before (monitoring scrapes included)",
    )
    return manifest


def guard(ctx: Context, manifests: list[Manifest]) -> None:
    """The NetworkPolicy before the workload, the Secret to create, and what the logs say of both."""
    name = ctx.step_secret
    if name is None:
        return
    manifests.insert(len(manifests) - 1, network_policy(ctx))
    ctx.needs.tokens.add(TokenNeed(name, TOKEN_KEY, ctx.namespace))
    ctx.diag(
        "TRANSLATE-SECRET",
        f"the pods of this job start each other's srun steps only with the token they share: create "
        f"Secret {name!r} with key {TOKEN_KEY!r} and a random value before the job runs "
        f"({create_command(name, ctx.namespace)}); submit.sh, where one is written, creates it when "
        "it is missing",
    )
    ctx.fidelity.approximated(
        "step service",
        f"a pod starts the steps srun sends it only with the job's token (Secret {name}, key "
        f"{TOKEN_KEY}; Slurm authenticates steps with munge), and NetworkPolicy {name} admits port "
        f"{STEP_PORT} from the job's own pods only. The token travels in clear inside the pod network: "
        "the policy keeps it from other pods where the cluster's network plugin enforces policies",
    )


__all__ = [
    "STEP_PORT",
    "TOKEN_ENV",
    "TOKEN_KEY",
    "create_command",
    "guard",
    "network_policy",
    "secret_name",
    "token_env",
]
