"""``submit.sh``: apply the translated jobs in dependency order with kubectl.

Each job is applied by its own background block that first waits for the
jobs it depends on (``afterok`` waits for success, ``afternotok`` for failure,
``afterany`` for either, ``after`` for the start), so independent chains run
side by side as they would in Slurm. A job whose condition can no longer hold
is not applied, like Slurm's DependencyNeverSatisfied, and the jobs that wait
for it stop waiting too. Every value is shell-quoted.
"""

from __future__ import annotations

import shlex

from migrate.fidelity import Edge, Translation
from migrate.translators import job_variables

from .translation_context import Needs

FILE = "submit.sh"

_PRELUDE = job_variables.fill(
    r"""#!/bin/bash
# Written by migrate: applies the translated jobs in dependency order.
# Needs kubectl with access to the cluster. Run from anywhere: ./submit.sh
set -uo pipefail
cd "$(dirname "$0")"
# a job that will never be applied leaves a mark here, so that what waits for it stops waiting
never=$(mktemp -d)
trap 'rm -rf "$never"' EXIT

# state RESOURCE NAME NAMESPACE OK FAILED PHASE_FIELD -> ok | failed | running | pending
# PHASE_FIELD: the status field with the object's phase (Volcano, RayJob); empty: its conditions
state() {
  local ns=() out
  [ -n "$3" ] && ns=(-n "$3")
  if [ -n "$6" ]; then
    out=$(kubectl get "$1" "$2" "${ns[@]}" -o jsonpath="{$6}" 2>/dev/null) || out=""
    case "$out" in
      "$4") echo ok ;;
      "$5"|Aborted|Terminated) echo failed ;;
      Running|Completing|Retrying) echo running ;;
      *) echo pending ;;
    esac
    return
  fi
  out=$(kubectl get "$1" "$2" "${ns[@]}" \
    -o jsonpath='{range .status.conditions[?(@.status=="True")]}{.type}{" "}{end}' 2>/dev/null) || out=""
  case " $out " in
    *" $4 "*) echo ok ;;
    *" $5 "*) echo failed ;;
    *)
      out=$(kubectl get "$1" "$2" "${ns[@]}" -o jsonpath='{.status.startTime}' 2>/dev/null) || out=""
      if [ -n "$out" ]; then echo running; else echo pending; fi ;;
  esac
}

# wait_for WANT RESOURCE NAME NAMESPACE OK FAILED PHASE_FIELD: 0 when WANT holds, 1 when it never will
wait_for() {
  local want=$1 s
  shift
  while :; do
    if [ -e "$never/$1.$2" ]; then
      echo "submit.sh: $1/$2 was never applied; the jobs that wait for it ($want) are not applied" >&2
      return 1
    fi
    s=$(state "$@")
    case "$want:$s" in
      complete:ok|failed:failed|finished:ok|finished:failed) return 0 ;;
      started:ok|started:failed|started:running) return 0 ;;
      complete:failed|failed:ok)
        echo "submit.sh: $1/$2 ended $s; the jobs that wait for it ($want) are not applied" >&2
        return 1 ;;
    esac
    sleep "@{MIGRATE_POLL_SECONDS}"
  done
}

"""
)
_WANT = {
    "afterok": "complete",
    "afterany": "finished",
    "afternotok": "failed",
    "after": "started",
    "singleton": "finished",
    "dependsOn": "complete",
}


def render_chain(
    translations: list[Translation], edges: list[Edge], folders: dict[str, str]
) -> dict[str, str]:
    """``--workflow script``: the chain as submit.sh."""
    return {FILE: render(translations, edges, folders)}


def render(translations: list[Translation], edges: list[Edge], folders: dict[str, str]) -> str:
    by_id = {t.job_id: t for t in translations}
    lines = [_PRELUDE]
    shared = sorted({rel for t in translations for rel in t.shared})
    if shared:
        lines.append("# shared objects first: queues, priority classes, storage claims")
        lines.append("kubectl apply " + " ".join(f"-f {shlex.quote(rel)}" for rel in shared))
        lines.append("")
    for t in translations:
        if not t.files or t.wait is None:
            continue
        waits = [e for e in edges if e.dependent == t.job_id]
        files = " ".join(f"-f {shlex.quote(folders[t.job_id] + '/' + rel)}" for rel in sorted(t.files))
        lines.append(f"# {t.name}: {t.source}")
        mark = shlex.quote(f"{t.wait.resource}.{t.wait.name}")
        tokens = _tokens(t)
        if not waits:
            if tokens:
                lines.append("{")
                lines.extend(f"  {command} &&" for command in tokens)
                lines.append(f'  kubectl apply {files}\n}} || touch "$never"/{mark}')
            else:
                lines.append(f'kubectl apply {files} || touch "$never"/{mark}')
            lines.append("")
            continue
        lines.append("(")
        lines.append(f'  trap \'[ "$?" = 0 ] || touch "$never"/{mark}\' EXIT')
        for edge in waits:
            pre = by_id[edge.prerequisite]
            if pre.wait is None:
                continue
            w = pre.wait
            args = " ".join(
                shlex.quote(a)
                for a in (
                    _WANT.get(edge.dep_type, "complete"),
                    w.resource,
                    w.name,
                    w.namespace or "",
                    w.ok,
                    w.failed,
                    w.by_phase,
                )
            )
            lines.append(f"  wait_for {args} || exit 1  # {edge.dep_type} {pre.name}")
            if edge.delay_s:
                lines.append(f"  sleep {int(edge.delay_s)}")
        lines.extend(f"  {command} || exit 1" for command in tokens)
        lines.append(f"  kubectl apply {files}")
        lines.append(") &")
        lines.append("")
    lines.append("wait")
    return "\n".join(lines) + "\n"


def _tokens(t: Translation) -> list[str]:
    """The commands that create the job's token Secrets with a random value, when they do not exist."""
    needs = t.needs if isinstance(t.needs, Needs) else Needs()
    random = "$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \\n')"
    commands = []
    for need in sorted(needs.tokens, key=lambda n: (n.namespace or "", n.secret)):
        where = f" -n {shlex.quote(need.namespace)}" if need.namespace else ""
        secret = shlex.quote(need.secret)
        commands.append(
            f"{{ kubectl get secret {secret}{where} >/dev/null 2>&1 || "
            f"kubectl create secret generic {secret}{where} "
            f'--from-literal={shlex.quote(need.key)}="{random}"; }}'
        )
    return commands


__all__ = ["FILE", "render", "render_chain"]
