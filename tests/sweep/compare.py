"""What a case's programs saw on each side, with what differs by nature taken out, and the first
field where the two sides differ.

Normalised: host names and addresses become the node index they name (``<n0>`` ...), the job id
``<job>``; records are compared as a multiset of (program, argv, node, variables), since the
order in which programs start on several nodes is not the job's. A case is told by all the
records that differ, so that its outcome does not hang on which of them sorts first.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path

from standins import parse

# The variables compared: what the programs read to learn their place.
COMPARED = (
    "SLURM_JOB_ID", "SLURM_JOB_NAME", "SLURM_JOB_NUM_NODES", "SLURM_NNODES", "SLURM_NODEID",
    "SLURM_PROCID", "SLURM_LOCALID", "SLURM_NTASKS", "SLURM_NPROCS", "SLURM_NTASKS_PER_NODE",
    "SLURM_CPUS_PER_TASK", "SLURM_JOB_NODELIST", "SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_JOB_ID",
    "SLURM_ARRAY_TASK_COUNT", "SLURM_GPUS_ON_NODE", "SLURM_SUBMIT_DIR", "SLURMD_NODENAME",
    "MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "RANK", "LOCAL_RANK", "NODE_RANK",
)  # fmt: skip
_IP = re.compile(r"\b\d{1,3}(?:\.\d{1,3}){3}\b")
_SANDBOX_NODE = re.compile(r"node(\d+)")


def sandbox_address(node: str) -> str | None:
    """The address the sweep's sandbox gives node K in /etc/hosts (slurm_side.py), so that
    ``hostname --ip-address`` names a node there as a pod's address names its pod."""
    found = _SANDBOX_NODE.fullmatch(node)
    return f"127.0.1.{found.group(1)}" if found else None


# A job id that cannot be mistaken for a word: Slurm's number, a Kubernetes uid.
_ID_LIKE = re.compile(r"\d+|[0-9a-f]{8}-[0-9a-f-]{27}")


# A native translation writes the job a Kubernetes engineer would: its pods do not pose as Slurm
# (a program that finds SLURM_* takes itself for a Slurm job), so only the launchers' variables count.
NATIVE_COMPARED = tuple(k for k in COMPARED if not k.startswith("SLURM"))


def expand_hostlist(text: str) -> list[str]:
    """Slurm's compressed host list (node[1-3,5],other) as names."""
    out: list[str] = []
    for part in re.findall(r"[^,\[]+(?:\[[^\]]*\])?[^,]*", text):
        m = re.fullmatch(r"(.*)\[([^\]]*)\](.*)", part)
        if not m:
            out.append(part)
            continue
        prefix, ranges, suffix = m.groups()
        for r in ranges.split(","):
            lo, _, hi = r.partition("-")
            for i in range(int(lo), int(hi or lo) + 1):
                out.append(f"{prefix}{str(i).zfill(len(lo))}{suffix}")
    return out


def records(folders: Iterable[Path]) -> list[dict[str, object]]:
    return [parse(p) for f in folders if f.is_dir() for p in sorted(f.rglob("rec.*"))]


def _job_nodes(env: dict[str, str]) -> list[str]:
    """The job's nodes in order: a hetjob's every component in turn (its steps and its batch script
    see their component's nodes as the job's), else the job's node list."""
    groups = [f"SLURM_JOB_NODELIST_HET_GROUP_{g}" for g in range(int(env.get("SLURM_HET_SIZE") or 0))]
    if groups and all(g in env for g in groups):
        return [name for g in groups for name in expand_hostlist(env[g])]
    return expand_hostlist(env.get("SLURM_JOB_NODELIST", ""))


def normalise(
    recs: list[dict[str, object]], hosts: dict[str, int] | None = None, compared: tuple[str, ...] = COMPARED
) -> Counter[str]:
    """Each record as one comparable line, with the variables of ``compared``."""
    out: Counter[str] = Counter()
    for rec in recs:
        env = dict(rec["env"])  # type: ignore[call-overload]
        names = dict(hosts or {})
        if not hosts:  # Slurm: the job's own node list gives each name its index
            for i, name in enumerate(_job_nodes(env)):
                names.setdefault(name, i)
                if address := sandbox_address(name):
                    names.setdefault(address, i)
        job_ids = {env[k] for k in ("SLURM_JOB_ID", "SLURM_ARRAY_JOB_ID", "SLURM_HET_JOB_ID") if env.get(k)}

        def plain(
            value: str, names: dict[str, int] = names, job_ids: set[str] = job_ids, as_argument: bool = True
        ) -> str:
            for name in sorted(names, key=len, reverse=True):
                if name and not name.isdigit():
                    value = re.sub(
                        rf"(?<![\w-]){re.escape(name)}(?:\.[\w.-]+)?(?![\w-])", f"<n{names[name]}>", value
                    )
            for job in sorted(job_ids, key=len, reverse=True):
                if _ID_LIKE.fullmatch(job):  # as a token of its own (`ckpt-70103`, `tmp_70103_1`), not a
                    # word's digits: the sandbox's ids start at 70001, far from the counts jobs use
                    # a file name's extension may follow (`run_70103.tgz`), not a decimal's digits
                    value = re.sub(rf"(?<![A-Za-z0-9.]){re.escape(job)}(?![A-Za-z0-9]|\.\d)", "<job>", value)
                elif as_argument:  # a name (a pod's job name): only as a whole argument or option value
                    value = re.sub(rf"^(--?[\w-]+=)?{re.escape(job)}$", r"\1<job>", value)
            return _IP.sub("<ip>", value)

        program, argv = str(rec.get("prog")), list(rec["args"])  # type: ignore[call-overload]
        if program.startswith("python") and argv[:2] == ["-m", "torch.distributed.run"]:
            program, argv = "torchrun", argv[2:]  # the same program as torchrun
        node = names.get(str(rec.get("host", "")).split(".")[0])
        if node is None or not hosts:
            node = names.get(env.get("SLURMD_NODENAME", ""), node)
        args = " ".join(plain(a) for a in argv)

        def value_of(key: str, plain: Callable[..., str] = plain, env: dict[str, str] = env) -> str:
            if key.endswith("NODELIST"):  # node[1-2] and a,b alike: the nodes' indices
                return ",".join(plain(name) for name in expand_hostlist(env[key]))
            return plain(env[key], as_argument=key.endswith("JOB_ID"))

        seen = " ".join(f"{k}={value_of(k)}" for k in compared if k in env)
        out[f"{program} [{args}] node={node} | {seen}"] += 1
    return out


def differences(slurm: Counter[str], pods: Counter[str]) -> list[str]:
    """Every record one side has and the other not, each as its first differing field: records of
    the same program are paired in order (so that each pair shows a field, not a whole record), the
    rest named as only on one side. Empty when the sides are equal."""
    only_slurm = sorted((slurm - pods).elements())
    only_pods = sorted((pods - slurm).elements())
    out: list[str] = []
    left: list[str] = []
    for a in only_slurm:
        b = _closest(a, only_pods)
        if b is None:
            left.append(a)
            continue
        only_pods.remove(b)
        out.append(_pair_difference(a, b))
    for a, b in zip(left, only_pods, strict=False):  # another program in the same place
        out.append(_pair_difference(a, b))
    out += [f"only on Slurm: {a}" for a in left[len(only_pods) :]]
    out += [f"only in the pods: {b}" for b in only_pods[len(left) :]]
    return out


def _closest(a: str, candidates: list[str]) -> str | None:
    """The record of the same program most like ``a``: the same first argument (`ray start`, not
    `ray health-check`) and the same node first."""
    fa = _fields(a)
    same = [b for b in candidates if _program(b) == fa["program"]]
    if not same:
        return None

    def likeness(b: str) -> tuple[bool, bool]:
        fb = _fields(b)
        return fb["argv"].split(" ", 1)[0] == fa["argv"].split(" ", 1)[0], fb["node"] == fa["node"]

    return max(same, key=likeness)  # the first of the most alike: the order stays the records' own


def _program(line: str) -> str:
    return line.split(" [", 1)[0]


def _pair_difference(a: str, b: str) -> str:
    fa, fb = _fields(a), _fields(b)
    for key in dict.fromkeys([*fa, *fb]):
        if fa.get(key) != fb.get(key):
            told = "argv order" if key == "argv" and _reordered(fa[key], fb[key]) else key
            return f"{told}: Slurm {fa.get(key)!r}, pods {fb.get(key)!r} (in {a.split(' ', 1)[0]})"
    return f"Slurm {a!r}, pods {b!r}"


def _reordered(a: str, b: str) -> bool:
    """The same words, the options among them in another order, the other words in theirs."""
    wa, wb = a.split(), b.split()
    return sorted(wa) == sorted(wb) and [w for w in wa if not w.startswith("-")] == [
        w for w in wb if not w.startswith("-")
    ]


def _fields(line: str) -> dict[str, str]:
    head, _, env = line.partition(" | ")
    prog, _, rest = head.partition(" [")
    args, _, node = rest.rpartition("] ")
    out = {"program": prog, "argv": args, "node": node}
    for item in env.split():
        key, _, value = item.partition("=")
        out[key] = value
    return out
