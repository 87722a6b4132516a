"""Adversarial inputs too big to commit: written at test time (and used as fuzz seeds).

Each generator returns the file's bytes; ``GENERATED`` names them with the
file name they are written under (the name matters: scans look at suffixes).
"""

from __future__ import annotations

from collections.abc import Callable

GOOD_SBATCH = b"#!/bin/bash\n#SBATCH --job-name=good\n#SBATCH --nodes=1\nsrun hostname\n"


def many_directives(count: int = 10_000) -> bytes:
    """A header of ``count`` #SBATCH lines cycling through real options (most of them repeats)."""
    cycle = (
        "--nodes={n}",
        "--time=0:{m:02d}:00",
        "--job-name=many-{i}",
        "--gres=gpu:{g}",
        "--mem={n}G",
        "--comment=line-{i}",
        "--partition=p{g}",
        "--cpus-per-task={n}",
    )
    lines = ["#!/bin/bash"]
    for i in range(count):
        option = cycle[i % len(cycle)].format(i=i, n=1 + i % 4, m=1 + i % 59, g=i % 8)
        lines.append(f"#SBATCH {option}")
    lines.append("srun hostname")
    return ("\n".join(lines) + "\n").encode()


def one_line_sbatch(size: int = 200_000) -> bytes:
    """One line, no newline at all: a directive whose value is ``size`` bytes long."""
    head = b"#SBATCH --comment="
    return head + b"x" * (size - len(head))


def one_line_manifest(size: int = 200_000) -> bytes:
    """A whole Job as one line of JSON, most of it one argument."""
    head = (
        b'{"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "one-line"}, "spec": {"template": '
        b'{"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox", "args": ["'
    )
    tail = b'"]}]}}}}'
    return head + b"y" * (size - len(head) - len(tail)) + tail


def many_keys(count: int = 50_000) -> bytes:
    """A Job with ``count`` labels (under the 1 MiB limit)."""
    labels = "".join(f"    k{i}: v{i}\n" for i in range(count))
    return (
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: many-keys\n  labels:\n"
        + labels
        + "spec:\n  template:\n    spec:\n      restartPolicy: Never\n"
        "      containers: [{name: c, image: busybox}]\n"
    ).encode()


def deep_block_mapping(depth: int = 10_000) -> bytes:
    """``depth`` nested block mappings, one more space per level: about 50 MB for 10,000."""
    parts = ["apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: deep\ndata:\n"]
    parts += [" " * (i + 1) + "k:\n" for i in range(depth)]
    parts.append(" " * (depth + 1) + "leaf\n")
    return "".join(parts).encode()


def big_script(size: int = 50 << 20) -> bytes:
    """A ``size``-byte sbatch script (over any sensible limit)."""
    head = b"#!/bin/bash\n#SBATCH --job-name=huge\n#SBATCH -N 1\n"
    line = b"echo a line of a very long generated script\n"
    return head + line * ((size - len(head)) // len(line) + 1)


def scalar_bomb(scalar: int = 200_000, aliases: int = 3_000) -> bytes:
    """Few nodes, many bytes: one big scalar aliased ``aliases`` times (about 600 MB expanded)."""
    return (
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: scalar-bomb\n  annotations:\n"
        f'    big: &s "{"z" * scalar}"\n'
        "spec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n"
        "      - name: c\n        image: busybox\n"
        f"        args: [{', '.join(['*s'] * aliases)}]\n"
    ).encode()


def unbalanced_arithmetic(levels: int = 4_000) -> bytes:
    """``levels`` opening ``((`` and half as many closing: found by fuzzing (quadratic in the lexer)."""
    return (
        "#!/bin/bash\n#SBATCH -N 1\necho $" + "((" * levels + "1" + "))" * (levels // 2) + "\nsrun hostname\n"
    ).encode()


def unclosed_substitutions(copies: int = 4) -> bytes:
    """The fuzz case corpus/adversarial/fuzz_unclosed_substitutions.sh with its unclosed $( lines repeated."""
    from conftest import CORPUS

    lines = (CORPUS / "adversarial" / "fuzz_unclosed_substitutions.sh").read_bytes().split(b"\n")
    return b"\n".join(lines[:3] + lines[3:16] * copies + lines[16:])


def payload_after_text(text_bytes: int = 12_000) -> bytes:
    """A self-extracting installer: a script past the 8 KiB binary sniff, then a binary payload."""
    lines = ["#!/bin/bash", "#SBATCH -N 1", 'tail -n +"$SKIP" "$0" | tar xz', "exit 0"]
    while sum(len(x) + 1 for x in lines) < text_bytes:
        lines.insert(-1, "# unpack the bundled toolchain before the job runs")
    payload = bytes((i * 151 + 7) % 256 for i in range(4096))  # every byte value, NULs included
    return ("\n".join(lines) + "\n__ARCHIVE_BELOW__\n").encode() + payload


GENERATED: dict[str, Callable[[], bytes]] = {
    "many_directives.sbatch": many_directives,
    "payload_after_12k.sh": payload_after_text,
    "one_line_200k.sbatch": one_line_sbatch,
    "one_line_200k.json": one_line_manifest,
    "many_keys.yaml": many_keys,
}
