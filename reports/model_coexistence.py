"""The report's coexistence section, from plan.json's ``coexistence`` and the phases it shaped.

The modes side by side for this site (what happens to capacity, the control
plane each needs, what users change, and the plan's verdict on each), the
chosen mode's timeline, and the files written under ``coexistence/``.
"""

from __future__ import annotations

from migrate.plan import coexistence_artifacts as files
from migrate.plan.phases import FoundationKind
from migrate.reports import fmt
from migrate.reports.plan_types import Coexistence, Phase, PlanDoc
from migrate.reports.view import TEXT, CoexistenceView, Column, Table
from migrate.vocab import CoexistenceMode

CONTROL_PLANE = {
    CoexistenceMode.PARTITION: "both schedulers as they are; nodes are moved between them",
    CoexistenceMode.SLINKY: "slurm-operator and the slurm chart: slurmd as NodeSet pods (hybrid: under the "
    "site's slurmctld), slurmrestd",
    CoexistenceMode.SLURM_BRIDGE: "slurm-bridge's scheduler and admission webhook, slurmrestd and a Token, "
    "beside the existing slurmctld",
}
# What the moved jobs' users submit from then on, by the scheduler they move to.
SUBMIT_INSTEAD = {
    "Kubernetes": "Kubernetes manifests instead of sbatch scripts",
    "Slurm": "sbatch scripts instead of Kubernetes manifests",
}
USERS_CHANGE = {
    CoexistenceMode.PARTITION: "the moved jobs' users submit {instead}, wave by wave",
    CoexistenceMode.SLINKY: "nothing for sbatch users (same commands, same partitions); Kubernetes users "
    "keep their manifests",
    CoexistenceMode.SLURM_BRIDGE: "Kubernetes users' namespaces are handed to the bridge (or they set its "
    "schedulerName); sbatch users change nothing",
}
FILE_ROLES = {
    files.README: "install order and the risks upstream documents",
    files.VALUES: "the slurm chart's values: one NodeSet per partition",
    files.OBJECTS: "the NodeSet and Controller objects they render",
    files.SLURM_CONF_NODESETS: "lines for the site's slurm.conf (hybrid mode)",
    files.SLURM_CONF_BRIDGE: "the bridge's partition, for the site's slurm.conf",
}


def _capacity(doc: Coexistence, mode: CoexistenceMode) -> str:
    worst = max(doc["idle_gpus"], key=lambda p: (p["stranded"], p["phase"]), default=None)
    total = fmt.num(doc["total_gpus"])
    if worst is None:
        return "no GPU partitions to share"
    if mode == CoexistenceMode.PARTITION:
        return (
            f"split, fixed per phase: {fmt.num(worst['split'])} of {total} GPUs idle in {worst['phase']}, "
            f"{fmt.num(worst['stranded'])} of them while the other side queues"
        )
    where = "the NodeSet nodes" if mode == CoexistenceMode.SLINKY else "every node of the bridge's partition"
    return f"shared on {where}: {fmt.num(worst['pooled'])} of {total} GPUs idle in {worst['phase']}"


def _users_change(plan: PlanDoc, mode: CoexistenceMode) -> str:
    return USERS_CHANGE[mode].format(instead=SUBMIT_INSTEAD[plan["target"]])


def _verdict(doc: Coexistence, mode: CoexistenceMode) -> str:
    if mode == doc["mode"]:
        return "chosen"
    for rejected in doc["rejected"]:
        if rejected["mode"] == mode:
            return "not chosen: " + "; ".join(r["detail"] for r in rejected["reasons"])
    return "not chosen"


def _phase_line(phase: Phase) -> str:
    if "pool" in phase:
        return "; ".join(
            f"{p['partition']}: {fmt.num(p['shared_nodes'])} nodes shared "
            f"(Slurm {fmt.hours(p['slurm_node_hours'])}, "
            f"Kubernetes {fmt.hours(p['kubernetes_node_hours'])} node-h)"
            for p in phase["pool"]
        )
    return "; ".join(
        f"{c['partition']}: {fmt.num(c['target_nodes'])} of {fmt.num(c['total_nodes'])} nodes moved"
        for c in phase["capacity"]
        if c["target_nodes"]
    )


def coexistence(plan: PlanDoc, written: tuple[str, ...] = ()) -> CoexistenceView | None:
    """The section, or None when the plan was asked for static partitioning and says nothing of it."""
    doc = plan.get("coexistence")
    if doc is None:
        return None
    modes = Table(
        "coexistence-modes",
        "The modes side by side for this site",
        tuple(Column(t, TEXT) for t in ("Mode", "Capacity", "Control plane", "What users change", "Plan")),
        tuple(
            (m.value, _capacity(doc, m), CONTROL_PLANE[m], _users_change(plan, m), _verdict(doc, m))
            for m in CoexistenceMode
        ),
    )
    timeline = Table(
        "coexistence-timeline",
        f"{doc['mode']} phase by phase",
        (Column("Phase"), Column("Name"), Column("Nodes"), Column("Coexistence steps")),
        tuple(
            (
                p["id"],
                p["name"],
                _phase_line(p),
                "; ".join(s["name"] for s in p["steps"] if s["kind"] == FoundationKind.COEXISTENCE),
            )
            for p in plan["phases"]
        ),
    )
    roles = dict(FILE_ROLES)
    if doc["mode"] == CoexistenceMode.PARTITION:
        roles[files.README] = "why the split, and the nodes each phase moves"
    artifacts = tuple((f"coexistence/{name}", roles.get(name, "")) for name in written)
    return CoexistenceView(
        mode=doc["mode"],
        requested=doc["requested"],
        source=doc["source"],
        reasons=tuple(r["detail"] for r in doc["reasons"]),
        modes=modes,
        timeline=timeline,
        artifacts=artifacts,
    )


__all__ = ["coexistence"]
