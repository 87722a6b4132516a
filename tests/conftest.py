"""Shared test setup: the --update-golden flag and paths into the repository."""

from __future__ import annotations

import functools
import importlib
import os
import random
import socket
import tempfile
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import settings

from migrate.site.config import SiteConfig, load_site_config
from migrate.site.inventory import merge_inventory, parse_inventory

# Tests (and the CLI runs they start) never touch the user's scan cache.
os.environ["MIGRATE_CACHE_DIR"] = tempfile.mkdtemp(prefix="migrate-test-cache-")

# CI runs property tests with fixed examples, so that a result never depends on the draw;
# local runs keep exploring new ones. Neither has a deadline: property tests check behaviour, and
# an example slowed by a loaded machine (the execution tests run beside them) is no failure.
settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("local", deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "local")

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "corpus"
GOLDEN = CORPUS / "golden"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-golden",
        action="store_true",
        default=False,
        help="rewrite the golden files under corpus/golden from the current output",
    )


# Modules whose every test runs generated output (pods, the step service, workflows, fuzzers, a browser).
_EXECUTION_MODULES = {
    "test_chain_argo",
    "test_chain_jobflow",
    "test_fuzz_smoke",
    "test_mpirun_env",
    "test_podrunner",
    "test_report_browser",
    "test_stepd",
}
# What a test calls, in its own body, when it runs pods or the entrypoint under bash.
_RUNNERS = {"require_pods", "run_pod", "run_entrypoint"}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the execution tests (the Slurm sandbox, the pod runner, generated shell run under bash),
    so that ``-m "not execution"`` is the fast selection the README names."""
    for item in items:
        module = item.module.__name__ if isinstance(item, pytest.Function) and item.module else ""
        code = getattr(getattr(item, "function", None), "__code__", None)
        calls = set(code.co_names) if code is not None else set()
        if item.get_closest_marker("slurm") or module in _EXECUTION_MODULES or calls & _RUNNERS:
            item.add_marker(pytest.mark.execution)
            # One worker runs them all, one at a time: they share the Slurm sandbox (its ports and
            # folder) and the pod runner's network, and two at once would race for the cores they time.
            item.add_marker(pytest.mark.xdist_group("execution"))


@pytest.fixture
def update_golden(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-golden"))


@pytest.fixture
def in_repo(monkeypatch: pytest.MonkeyPatch) -> Path:
    """Run with the repository as the working folder, so paths in outputs are stable."""
    monkeypatch.chdir(REPO)
    return REPO


ALLOCATION_CASES = CORPUS / "cases" / "allocation"
SAMPLE_CONFIG = CORPUS / "sample-site" / "migrate.yaml"


@functools.lru_cache(maxsize=2)
def site_of_cases(folder: str) -> SiteConfig:
    """The site configuration a corpus folder is translated and planned with: the sample site's, or,
    for ``cases/allocation``, its own ``migrate.yaml`` completed by its ``cluster/`` inventory files."""
    if folder != "allocation":
        return load_site_config(SAMPLE_CONFIG)
    config = load_site_config(ALLOCATION_CASES / "migrate.yaml")
    inventories = [
        parse_inventory(path.read_text(encoding="utf-8"), f"cluster/{path.name}")
        for path in sorted((ALLOCATION_CASES / "cluster").iterdir())
    ]
    merged, _ = merge_inventory(config, inventories)
    return merged


def site_for(rel: str) -> SiteConfig:
    """The site configuration of a corpus input (a path relative to the repository)."""
    return site_of_cases("allocation" if rel.startswith("corpus/cases/allocation/") else "sample-site")


def corpus_inputs() -> list[str]:
    """Every input file of the corpus, as a path relative to the repository."""
    found: list[str] = []
    for top in ("cases", "sample-site", "adversarial"):
        for dirpath, dirnames, filenames in os.walk(CORPUS / top):
            dirnames.sort()
            for name in sorted(filenames):
                found.append(str((Path(dirpath) / name).relative_to(REPO)))
    return found


def free_ports(count: int) -> int:
    """A first port with ``count`` free ports after it (slurmctld, then one per slurmd)."""
    for _ in range(50):
        first = random.randint(20000, 40000)
        try:
            for port in range(first, first + count):
                with socket.socket() as s:
                    s.bind(("127.0.0.1", port))
        except OSError:
            continue
        return first
    raise RuntimeError("no free port range for the Slurm sandbox")


def benchmark_module(name: str) -> ModuleType:
    """``benchmarks.<name>``: benchmarks/ is not installed, it runs from the repository."""
    with pytest.MonkeyPatch.context() as patch:
        patch.syspath_prepend(str(REPO))
        return importlib.import_module(f"benchmarks.{name}")
