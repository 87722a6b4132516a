"""Diagnostics are data: a stable code, a severity, a message, file, line and job.

Every code is registered here with its default severity and what it means.
Readers never log or print; they append to a ``Collector`` that the caller
gets back. A test checks that every registered code appears in a golden file.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

ERROR = "error"
WARNING = "warning"
INFO = "info"
SEVERITIES = (ERROR, WARNING, INFO)

# code -> (default severity, what it means)
CODES: dict[str, tuple[str, str]] = {
    # Files and discovery
    "FILE-UNREADABLE": (ERROR, "the file could not be read (permissions, vanished, I/O error)"),
    "FILE-TOO-LARGE": (WARNING, "the file is over the size limit and was not read"),
    "FILE-BINARY": (WARNING, "the file holds binary data, not a job script or manifest"),
    "FILE-ENCODING": (WARNING, "the file is not valid UTF-8; it was read as Latin-1"),
    "FILE-EMPTY": (INFO, "the file is empty"),
    "FILE-SYMLINK-LOOP": (WARNING, "a symbolic link loops back on itself and was not followed"),
    "FILE-SYMLINK-OUTSIDE": (INFO, "a symbolic link points outside the scanned tree and was not followed"),
    "FILE-NOT-A-JOB": (INFO, "the file looks like a job file by name but holds no job"),
    "FILE-NUL-BYTE": (WARNING, "stray NUL bytes in a text file were dropped; sbatch refuses such a script"),
    "FILE-MIGRATE-OUTPUT": (
        INFO,
        "this tool's own earlier output: a folder with its translation.json inside a scanned folder is "
        "skipped; its managed-by label is noted",
    ),
    "FILE-DIAGNOSTICS-CAPPED": (INFO, "one code past the per-file limit: the rest are counted, not listed"),
    "INTERNAL-ERROR": (ERROR, "a reader failed on this file; the file is listed and the run went on"),
    # sbatch directives
    "SLURM-NO-SHEBANG": (ERROR, "sbatch refuses a script whose first line is not #!"),
    "SLURM-UNKNOWN-OPTION": (ERROR, "an #SBATCH option that sbatch does not know"),
    "SLURM-REPEATED-OPTION": (WARNING, "an option given twice; the last value wins, as in sbatch"),
    "SLURM-OBSOLETE-OPTION": (
        INFO,
        "an obsolete spelling of an option; an error where current sbatch rejects it",
    ),
    "SLURM-BAD-VALUE": (ERROR, "an option value sbatch would reject"),
    "SLURM-MISSING-VALUE": (
        ERROR,
        "an option that needs a value has none; a warning where sbatch takes an empty value as not given",
    ),
    "SLURM-DOS-LINE-BREAKS": (ERROR, "sbatch refuses a script with DOS line breaks (CR LF)"),
    "SLURM-UNEXPECTED-VALUE": (WARNING, "an option that takes no value was given one"),
    "SLURM-DIRECTIVE-AFTER-COMMAND": (WARNING, "an #SBATCH line after the first command; sbatch ignores it"),
    "SLURM-COMMENTED-DIRECTIVE": (INFO, "a disabled directive (##SBATCH or # SBATCH) was ignored"),
    "SLURM-TEMPLATED": (WARNING, "the script is a template; render it first"),
    "SLURM-BODY-NOT-SHELL": (INFO, "the script runs under another interpreter; its body is not analysed"),
    "SLURM-DYNAMIC-VALUE": (WARNING, "an option value depends on the environment at submit time"),
    "SLURM-HETJOB": (INFO, "a heterogeneous job with several components"),
    "SLURM-SCRONTAB-ENTRY": (INFO, "a scrontab entry was read as a scheduled job"),
    "SLURM-SELF-RESUBMIT": (INFO, "the script submits itself again (cron-like or chained restart)"),
    "SLURM-PLUGIN-OPTION": (
        INFO,
        "a SPANK plugin option (pyxis, Shifter); valid only where the plugin is installed",
    ),
    # shell bodies
    "SHELL-UNPARSED": (INFO, "a shell statement the parser could not read; the rest of the body was kept"),
    "SHELL-SYNTAX": (WARNING, "the shell body has a syntax error bash would stop on"),
    "SHELL-TOO-DEEP": (WARNING, "commands nested deeper than the reader follows were not analysed"),
    "SHELL-TOO-LONG": (WARNING, "a shell body over the analysis limit: its end was kept but not analysed"),
    "SHELL-SECRET-LITERAL": (WARNING, "a credential-like variable is set to a literal value in the script"),
    # Kubernetes manifests
    "K8S-YAML-ERROR": (ERROR, "the YAML could not be parsed"),
    "K8S-YAML-ALIAS-BOMB": (ERROR, "the YAML expands aliases beyond the safety limit"),
    "K8S-YAML-TOO-DEEP": (ERROR, "the YAML nests deeper than the safety limit"),
    "K8S-TEMPLATED": (WARNING, "a Helm/Go template, or ${VAR} placeholders without a value (--set)"),
    "K8S-HELM-CHART": (WARNING, "a Helm chart not rendered (helm is not on PATH): the command to run"),
    "K8S-HELM-FAILED": (ERROR, "helm template failed on a chart; its manifests are not read"),
    "K8S-NOT-AN-OBJECT": (WARNING, "a YAML document that is not a Kubernetes object"),
    "K8S-MISSING-FIELD": (ERROR, "a required field of a job manifest is missing"),
    "K8S-BAD-TYPE": (ERROR, "a field has the wrong type"),
    "K8S-BAD-QUANTITY": (ERROR, "a resource quantity that Kubernetes would reject"),
    "K8S-TORCHX-COMPONENT": (WARNING, "a torchx run onto Kubernetes whose component's pods are not known"),
    "K8S-RAY-CLUSTER-UNRESOLVED": (
        WARNING,
        "a RayJob's clusterSelector matches no scanned RayCluster, or several",
    ),
    "K8S-IGNORED-KIND": (INFO, "an object that is not a workload; read for context or ignored"),
    "K8S-UNKNOWN-KIND": (WARNING, "a workload kind this version cannot read"),
    "K8S-POD-TEMPLATE": (INFO, "a pod template Spark fills in (podTemplateFile): not a job of its own"),
    "K8S-SECRET-LITERAL": (WARNING, "a credential-like env var holds a literal value"),
    # Argo Workflows
    "ARGO-DEPENDS-SYNTAX": (
        ERROR,
        "a DAG task's depends expression Argo cannot parse; the task waits for nothing",
    ),
    "ARGO-DEPENDS-UNKNOWN-TASK": (ERROR, "depends or dependencies names a task the DAG does not have"),
    "ARGO-DEPENDS-NO-SLURM-TYPE": (
        WARNING,
        "a depends condition no Slurm dependency type expresses; the nearest is used and recorded",
    ),
    "ARGO-TEMPLATE-MISSING": (ERROR, "a task or step names a template the workflow does not define"),
    "ARGO-TEMPLATEREF-UNRESOLVED": (
        WARNING,
        "a templateRef names a WorkflowTemplate that is not among the scanned files",
    ),
    "ARGO-NO-ENTRYPOINT": (WARNING, "a Workflow or CronWorkflow with no entrypoint template to run"),
    "ARGO-NOT-A-POD": (INFO, "a template that runs no container of its own (resource, suspend, http ...)"),
    "ARGO-FANOUT-UNKNOWN": (INFO, "a withParam fan-out: the number of items is known only at run time"),
    # Katib Experiments
    "K8S-KATIB-TEMPLATE-UNRESOLVED": (
        WARNING,
        "a trial template in a ConfigMap no file of the scan holds: the trials' workload is unknown",
    ),
    "K8S-KATIB-TRIAL-KIND": (WARNING, "a trial template of a kind the reader cannot read as a workload"),
    "K8S-KATIB-PLACEHOLDER": (
        WARNING,
        "a trial placeholder the trials cannot each fill in (outside commands, args and env values, "
        "or with a reference no parameter has)",
    ),
    # translation
    "TRANSLATE-FLAVOR-FALLBACK": (
        WARNING,
        "the requested flavor cannot express the job; another one was used",
    ),
    "TRANSLATE-STYLE-EMULATED": (
        WARNING,
        "--style native was asked for, but a statement of the script needs it to run as it is",
    ),
    "TRANSLATE-SUBMIT-DIR": (
        WARNING,
        "the job uses the folder it was submitted from, which the site does not place on the cluster",
    ),
    "TRANSLATE-SUBMITTER-HOME": (
        WARNING,
        "the script reads $HOME (the submitter's on Slurm) and the site gives the pods none",
    ),
    "TRANSLATE-SUBMITTER-VARIABLE": (
        WARNING,
        "the script stops without a variable of the submitter's environment or an sbatch argument",
    ),
    "TRANSLATE-IMAGE-PLACEHOLDER": (WARNING, "no container image is known; REPLACE-ME/image:tag was written"),
    "TRANSLATE-IMAGE-DEFAULT": (
        INFO,
        "no image for the job in the site config; the site default image was used",
    ),
    "TRANSLATE-GPU-TYPE": (
        WARNING,
        "a GPU type has no node label value in the site config; a placeholder was written",
    ),
    "TRANSLATE-GPU-TYPES": (
        WARNING,
        "a request names several GPU types for the same node, and no node of its partition holds them all",
    ),
    "TRANSLATE-GRES-UNMAPPED": (
        WARNING,
        "a GRES has no extended resource in the site config and was dropped",
    ),
    "TRANSLATE-WHOLE-NODE-UNKNOWN": (
        WARNING,
        "--mem=0 asks for a whole node whose size the site config lacks",
    ),
    "TRANSLATE-FABRIC-DEVICE": (
        WARNING,
        "the script tunes EFA or InfiniBand, but its partition names no such device in the site config",
    ),
    "TRANSLATE-EXCEEDS-NODE": (
        WARNING,
        "the job asks for more GPUs, CPUs or memory per node than a node of its partition has",
    ),
    "TRANSLATE-CONSTRAINT": (
        WARNING,
        "node features without node labels in the site config; placeholders written",
    ),
    "TRANSLATE-PARTITION-UNMAPPED": (WARNING, "a partition has no queue or node pool in the site config"),
    "TRANSLATE-QOS-UNMAPPED": (INFO, "a QOS has no priority class in the site config"),
    "TRANSLATE-HOSTPATH": (
        WARNING,
        "a storage path has no PersistentVolumeClaim; it is mounted from the node",
    ),
    "TRANSLATE-SECRET": (INFO, "an env var comes from a Secret that must be created before the job runs"),
    "TRANSLATE-LICENSE": (WARNING, "a license count is not enforced on Kubernetes"),
    "TRANSLATE-SLURM-VAR": (WARNING, "the script reads a SLURM_* variable the pod does not provide"),
    "TRANSLATE-SUBMIT-IN-POD": (WARNING, "the script runs sbatch itself, which cannot work inside a pod"),
    "TRANSLATE-MPI-IMAGE": (INFO, "MPIJob workers need sshd and the program's MPI in the image"),
    # translation to Slurm
    "TO-SLURM-SECRET": (INFO, "a value comes from a Secret: provision it as a file before the job runs"),
    "TO-SLURM-CONFIGMAP": (INFO, "a ConfigMap outside the scanned file: provision its keys as files"),
    "TO-SLURM-SERVING": (WARNING, "a serving workload stays on Kubernetes and is not translated"),
    "TO-SLURM-SWEEP-ADAPTIVE": (
        WARNING,
        "a search whose algorithm picks each trial from earlier trials' metrics: drawn at random up front",
    ),
    "TO-SLURM-SWEEP-NO-TRIAL": (WARNING, "a search whose trial workload is unknown: no script is written"),
    "TO-SLURM-QUEUE-UNMAPPED": (WARNING, "a queue is no partition's mirror in the site config"),
    "TO-SLURM-NODE-SELECTOR": (
        WARNING,
        "a node selector or affinity with no partition or feature in the site config",
    ),
    "TO-SLURM-VOLUME": (WARNING, "a volume with no shared file system in the site config is not mounted"),
    "TO-SLURM-NO-COMMAND": (
        WARNING,
        "the container runs its image's default command, which the manifest does not name",
    ),
    "TO-SLURM-GPU-TYPE": (WARNING, "a GPU model that no partition of the site config has"),
    "TO-SLURM-NO-GRES": (
        WARNING,
        "a device the pods ask for that no GRES of the site config stands for, on nodes they share",
    ),
    "TO-SLURM-UNRESOLVED": (
        WARNING,
        "a count held by a template placeholder with no value: left out of the script, not defaulted",
    ),
}


@dataclass(frozen=True)
class Diagnostic:
    code: str
    severity: str
    message: str
    path: str | None = None
    line: int | None = None
    job: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"code": self.code, "severity": self.severity, "message": self.message}
        if self.line is not None:
            out["line"] = self.line
        if self.job is not None:
            out["job"] = self.job
        return out

    def render(self) -> str:
        where = self.path or "-"
        if self.line is not None:
            where = f"{where}:{self.line}"
        return f"{where}: {self.severity}: {self.code}: {self.message}"


class UnknownCodeError(KeyError):
    """A reader used a code that is not registered (a programming error)."""


class Collector:
    """Collects diagnostics for one file."""

    def __init__(self, path: str | None = None) -> None:
        self.path = path
        self.items: list[Diagnostic] = []

    def add(
        self,
        code: str,
        message: str,
        line: int | None = None,
        job: str | None = None,
        severity: str | None = None,
    ) -> Diagnostic:
        if code not in CODES:
            raise UnknownCodeError(code)
        diag = Diagnostic(code, severity or CODES[code][0], message, self.path, line, job)
        self.items.append(diag)
        return diag

    def extend(self, diags: list[Diagnostic]) -> None:
        self.items.extend(diags)

    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self.items)


def count_by_severity(diags: list[Diagnostic]) -> dict[str, int]:
    counts = {s: 0 for s in SEVERITIES}
    for d in diags:
        counts[d.severity] += 1
    return counts
