"""Coverage-guided fuzzing of the sbatch reader (and, through it, the shell analysis).

    python fuzz/fuzz_sbatch.py [libFuzzer options] [corpus folders]

See fuzz/README.md. A crash is an exception out of the reader, a diagnostic
that hides one, or jobs that cannot be turned into JSON (``targets.check``).
"""

from __future__ import annotations

import os
import sys

import atheris

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

with atheris.instrument_imports(include=["migrate"]):
    from targets import read_sbatch


def main() -> None:
    atheris.Setup(sys.argv, read_sbatch)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
