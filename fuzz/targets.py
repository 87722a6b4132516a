"""The fuzz targets as plain functions: bytes in, an exception out on a crash.

``fuzz_sbatch.py`` and ``fuzz_yaml.py`` run them under atheris; the CI smoke
test (``tests/test_fuzz_smoke.py``) runs them there too, or, where atheris is
not installed, under hypothesis with random and mutated bytes.

The readers never raise: a bug becomes an ``INTERNAL-ERROR`` diagnostic (or a
note that the shell body or an option "could not be read") and the scan goes
on. That is right for users and wrong for a fuzzer, which must see the bug:
``check`` turns those diagnostics back into an exception.
"""

from __future__ import annotations

import json
from typing import Any

from migrate.diagnostics import Collector, Diagnostic
from migrate.serialize import job_to_dict
from migrate.translators.kubernetes import reader as k8s_reader
from migrate.translators.slurm import reader as slurm_reader

_HIDDEN = ("internal error", "reader failed", "could not be read (", "could not be analysed")


class HiddenCrash(Exception):
    """A reader caught its own exception and reported it as a diagnostic."""


def decode(data: bytes) -> str:
    """UTF-8, else Latin-1: what ``migrate.scan.decode`` does, without its diagnostic."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def check(jobs: list[Any], diags: Collector) -> None:
    """Fail on a hidden crash; the jobs must also serialise, as a scan does with them."""
    for d in diags.items:
        if not isinstance(d, Diagnostic):
            raise HiddenCrash(f"not a diagnostic: {d!r}")
        if d.code == "INTERNAL-ERROR" or any(h in d.message for h in _HIDDEN):
            raise HiddenCrash(f"{d.code}: {d.message}")
    json.dumps([job_to_dict(j) for j in jobs])


def read_sbatch(data: bytes) -> None:
    """The sbatch reader, and through it the shell analysis of the body."""
    text = decode(data)
    slurm_reader.sniff(text)
    diags = Collector("fuzz.sbatch")
    check(slurm_reader.read(text, "fuzz.sbatch", diags), diags)


def read_yaml(data: bytes) -> None:
    """The Kubernetes manifest reader and its bounded YAML loader."""
    text = decode(data)
    k8s_reader.sniff(text)
    diags = Collector("fuzz.yaml")
    check(k8s_reader.read(text, "fuzz.yaml", diags), diags)


TARGETS = {"sbatch": read_sbatch, "yaml": read_yaml}
