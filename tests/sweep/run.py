"""The differential sweep: every sbatch script of the corpus run as itself on the Slurm sandbox and
translated in the pod runner, with recording stand-ins for the programs; what each side's programs
saw is compared per case.

    python tests/sweep/run.py [--report FILE] [--cases PATTERN] [--jobs N]

Prints the headline (cases run, equal, declared differences, differences, empty runs, left out)
and one line per case that is not equal, with the first field that differs. A difference the
translation makes on purpose is declared, with its reason, in ``declared.py``; a case is declared
when every record that differs is. Exits 1 when a case differs in a way no entry declares, or when
a case that ``baseline.txt`` lists as equal no longer is (a declared pattern must not swallow a new
difference there).
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import sys
import tempfile
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

import cases as case_finder  # noqa: E402
import compare  # noqa: E402
import declared  # noqa: E402
import pod_side  # noqa: E402
import slurm_side  # noqa: E402
import standins  # noqa: E402

CORPUS = HERE.parents[1] / "corpus"
SLURM_WAIT = 240  # seconds the sandbox's jobs get to end, all together (a quiet run takes under 150)
POD_TIMEOUT = 40.0
END_STATES = {"COMPLETED": "Complete", "FAILED": "Failed", "TIMEOUT": "Timeout"}


def arguments(argv: list[str] | None, doc: str | None) -> argparse.Namespace:
    """The options both directions of the sweep take; ``doc``'s first paragraph is the help."""
    parser = argparse.ArgumentParser(description=(doc or "").split("\n\n")[0])
    parser.add_argument("--report", type=Path, help="write every case's outcome here (JSON)")
    parser.add_argument("--cases", default="*", help="only the cases whose name matches (fnmatch)")
    parser.add_argument("--jobs", type=int, default=2, help="pod runs at once")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = arguments(argv, __doc__)
    started = time.monotonic()
    found = case_finder.find(CORPUS)
    chosen = [c for c in found if fnmatch.fnmatch(c.name, args.cases)]
    tops = case_finder.storage_tops(chosen)
    parts = case_finder.partitions([c for c in chosen if not c.skipped])
    config = pod_side.site(tops, parts)
    outcome: dict[str, dict[str, object]] = {}
    runnable = []
    manifests = {}
    for case in chosen:
        if case.skipped:
            outcome[case.name] = {"result": "left out", "why": case.skipped}
            continue
        text, flavor, style = pod_side.translate(case, config)
        if text is None:
            outcome[case.name] = {"result": "left out", "why": f"no pods written ({flavor})"}
            continue
        manifests[case.name] = text
        outcome[case.name] = {"flavor": flavor, "style": style}
        runnable.append(case)
    pattern = standins.RECORDED_ENV
    compared = {
        c.name: compare.NATIVE_COMPARED if outcome[c.name]["style"] == "native" else compare.COMPARED
        for c in runnable
    }
    named = [c.text for c in runnable]
    # the site's file systems are in every container, as its enroot mounts; a program off them that
    # a script starts by path is the image's
    program_tops = {p.strip("/").split("/")[0] for c in runnable for p in c.programs}
    site = slurm_side.ContainerSite(
        mounts=[f"/{t}" for t in tops], image_tops=sorted(program_tops - set(tops) - case_finder.SYSTEM_TOPS)
    )
    outcome_of = both_sides(runnable, manifests, tops, parts, compared, pattern, args.jobs, named, site)
    for name, judged in outcome_of.items():
        outcome[name].update(judged)
    seconds = time.monotonic() - started
    return report(outcome, seconds, args.report, HERE / "baseline.txt")


def both_sides(
    runnable: list[case_finder.Case],
    manifests: dict[str, str],
    tops: list[str],
    parts: list[str],
    compared: dict[str, tuple[str, ...]],
    pattern: str,
    jobs: int,
    named: list[str],
    site: slurm_side.ContainerSite,
) -> dict[str, dict[str, object]]:
    """Each case's script on the sandbox and its manifests in the pod runner, at once; what each side's
    programs saw, compared on the case's variables (``compared``; the stand-ins record ``pattern``).
    ``named``: the texts whose program-like words get stand-ins (never the shims' own programs);
    ``site``: what the Slurm side's containers see beside their own mounts."""
    with tempfile.TemporaryDirectory(prefix="migrate-sweep-", dir="/tmp") as tmp:
        work = Path(tmp)
        work.chmod(0o755)
        bin_dir = work / "bin"
        programs = standins.names(named, standins.builtins())
        image = sorted({p for c in runnable for p in c.programs})
        standins.write_bin(bin_dir, programs, pattern)
        failure: list[BaseException] = []

        def slurm() -> None:
            try:
                licenses = case_finder.licenses(runnable)
                slurm_side.run(runnable, work, bin_dir, parts, licenses, SLURM_WAIT, site)
            except BaseException as exc:  # reported after the pods ran
                failure.append(exc)

        on_slurm = threading.Thread(target=slurm)
        on_slurm.start()
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            ran = dict(
                zip(
                    [c.name for c in runnable],
                    pool.map(
                        lambda c: pod_side.run(c, manifests[c.name], work, bin_dir, tops, POD_TIMEOUT, image),
                        runnable,
                    ),
                    strict=True,
                )
            )
        on_slurm.join()
        if failure:
            raise failure[0]
        return {c.name: _judge(c, work, ran[c.name], compared[c.name]) for c in runnable}


def _judge(
    case: case_finder.Case, work: Path, pods: dict[str, object], compared: tuple[str, ...]
) -> dict[str, object]:
    slurm = slurm_side.outcome(work, case)
    if not slurm["submitted"]:
        return {"result": "rejected by sbatch", "why": slurm["why"]}
    if pods["status"] == "NotRun":
        return {"result": "not run in pods", "why": pods["why"]}
    slurm_recs = compare.records(work / "sweep" / "records" / i for i in slurm["ids"])  # type: ignore[attr-defined]
    pod_recs = compare.records([pods["records"]])  # type: ignore[list-item]
    a = compare.normalise(slurm_recs, compared=compared)
    b = compare.normalise(pod_recs, pods["hosts"], compared)  # type: ignore[arg-type]
    states = slurm["states"]
    end_slurm = END_STATES.get(states[0], states[0]) if len(states) == 1 else "/".join(states)  # type: ignore[index,arg-type]
    facts = {
        "slurm end": end_slurm,
        "pods end": pods["status"],
        "programs": [sum(a.values()), sum(b.values())],
    }
    if slurm["log"]:
        facts["slurm log"] = str(slurm["log"])[-1500:]  # the report's reader sees why
    if pods["status"] != "Complete" and "describe" in pods:
        facts["pods log"] = str(pods["describe"]())[-1500:]  # type: ignore[operator]
    if not slurm_recs and not pod_recs and end_slurm != "Complete" and pods["status"] != "Complete":
        return {"result": "empty", **facts, "why": "failed on both sides before a program started"}
    found = compare.differences(a, b)
    if end_slurm != pods["status"]:
        found.append(f"end state: Slurm {end_slurm}, pods {pods['status']}")
    if not found and not slurm_recs:  # no stand-in ran on either side: only the end states compare
        return {"result": "ended alike", **facts, "why": "no program ran on either side; both ended so"}
    if not found:
        return {"result": "equal", **facts}
    # declared only when every difference is; the first one that is not tells what differs
    reasons = [declared.reason(case.name, difference) for difference in found]
    facts["differences"] = found[:50]  # the report's reader sees them all (up to 50)
    undeclared = [d for d, why in zip(found, reasons, strict=True) if why is None]
    if not undeclared:
        why = "; ".join(dict.fromkeys(r for r in reasons if r))
        return {"result": "declared", **facts, "difference": found[0], "why": why}
    return {"result": "differs", **facts, "difference": undeclared[0]}


def report(
    outcome: dict[str, dict[str, object]],
    seconds: float,
    path: Path | None,
    baseline_file: Path,
    what: str = "sbatch",
) -> int:
    counts = Counter(str(o["result"]) for o in outcome.values())
    ran = sum(n for r, n in counts.items() if r not in ("left out",))
    print(
        f"sweep: {len(outcome)} {what} cases, {ran} run both ways in {seconds:.0f} s: "
        + ", ".join(
            f"{counts[r]} {r}"
            for r in (
                "equal",
                "ended alike",
                "declared",
                "differs",
                "empty",
                "rejected by sbatch",
                "not run in pods",
                "left out",
            )
            if counts[r]
        )
    )
    for name, o in sorted(outcome.items()):
        if o["result"] in ("equal", "ended alike", "left out"):
            continue
        print(f"  {o['result']:<18} {name}: {o.get('difference') or o.get('why')}")
    if path:
        path.write_text(json.dumps(outcome, indent=1, sort_keys=True, default=str))
    baseline = {
        line.strip()
        for line in baseline_file.read_text().splitlines()
        if line.strip() and not line.startswith("#")
    }
    kept = ("equal", "ended alike")
    lost = sorted(n for n in baseline if n in outcome and outcome[n]["result"] not in kept)
    for name in lost:
        print(f"  REGRESSION {name}: equal in baseline.txt, now {outcome[name]['result']}")
    return 1 if lost or counts["differs"] else 0


if __name__ == "__main__":
    sys.exit(main())
