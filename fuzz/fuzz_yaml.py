"""Coverage-guided fuzzing of the Kubernetes manifest reader and its bounded YAML loader.

    python fuzz/fuzz_yaml.py [libFuzzer options] [corpus folders]

See fuzz/README.md. A crash is an exception out of the reader, a diagnostic
that hides one, or jobs that cannot be turned into JSON (``targets.check``).
"""

from __future__ import annotations

import os
import sys

import atheris

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

with atheris.instrument_imports(include=["migrate"]):
    from targets import read_yaml


def main() -> None:
    atheris.Setup(sys.argv, read_yaml)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
