"""The scan's work counted in instructions, for comparing two versions of the code on a noisy machine.

    python -m benchmarks.instructions --files 500 [--seed 7] [--sizes real] [--site DIR]

Wall and CPU seconds of the same run move by several percent from one minute to
the next on a shared VM, more than most single changes save. Valgrind's
callgrind counts the instructions a process executes; with string hashing fixed
(``PYTHONHASHSEED=0``) two runs of the same code count the same within a few
hundredths of a percent. The scan of the site runs in one process, no cache, and
the count of the imports alone is taken off, so what is printed is the reading.
It runs some fifty times slower than the scan itself: a few hundred files are
enough. Needs ``valgrind`` (Debian's package of that name).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.generate import generate

# What the scan imports before it reads a file: counted alone and taken off.
IMPORTS = (
    "from migrate.scan import jsonstream, links, scanner\n"
    "from migrate.scan.files import load_readers\n"
    "from migrate.site import job_size\n"
    "load_readers()\n"
)
SCAN = IMPORTS + (
    "import sys\n"
    "from migrate.scan.results import ScanOptions\n"
    "for _ in scanner.iter_rendered(sys.argv[1:], ScanOptions(jobs=1)):\n"
    "    pass\n"
)
_COLLECTED = re.compile(r"^==\d+== Collected : (\d+)$", re.MULTILINE)


def collected(valgrind_output: str) -> int:
    """The instruction count callgrind prints at the end of a run."""
    found = _COLLECTED.findall(valgrind_output)
    if not found:
        raise ValueError("callgrind printed no 'Collected' line")
    return int(found[-1])


def count(code: str, args: list[str], workdir: Path) -> int:
    """Instructions executed by ``python -c code args``."""
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    done = subprocess.run(
        [
            "valgrind",
            "--tool=callgrind",
            f"--callgrind-out-file={workdir / 'callgrind.out'}",
            sys.executable,
            "-c",
            code,
            *args,
        ],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return collected(done.stderr)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--files", type=int, default=500)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--sizes", choices=("real", "corpus"), default="real")
    parser.add_argument("--site", help="an existing site to scan (default: one generated here)")
    args = parser.parse_args(argv)
    if shutil.which("valgrind") is None:
        sys.exit("benchmarks.instructions needs valgrind (apt-get install valgrind)")
    with tempfile.TemporaryDirectory(prefix="migrate-instructions-") as tmp:
        work = Path(tmp)
        site = Path(args.site) if args.site else work / "site"
        if not args.site:
            generate(site, args.files, seed=args.seed, sizes=args.sizes)
        imports = count(IMPORTS, [], work)
        total = count(SCAN, [str(site)], work)
    what = args.site or f"{args.files} generated files ({args.sizes} sizes, seed {args.seed})"
    print(f"scan of {what}: {total - imports:,} instructions ({total:,} with {imports:,} for the imports)")


if __name__ == "__main__":
    main()
