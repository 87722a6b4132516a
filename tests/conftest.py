"""Shared test setup: the --update-golden flag and paths into the repository."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import settings

# Tests (and the CLI runs they start) never touch the user's scan cache.
os.environ["MIGRATE_CACHE_DIR"] = tempfile.mkdtemp(prefix="migrate-test-cache-")

# CI runs property tests with fixed examples, so that a result never depends on the draw;
# local runs keep exploring new ones.
settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")

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


@pytest.fixture
def update_golden(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-golden"))


@pytest.fixture
def in_repo(monkeypatch: pytest.MonkeyPatch) -> Path:
    """Run with the repository as the working folder, so paths in outputs are stable."""
    monkeypatch.chdir(REPO)
    return REPO


def corpus_inputs() -> list[str]:
    """Every input file of the corpus, as a path relative to the repository."""
    found: list[str] = []
    for top in ("cases", "sample-site", "adversarial"):
        for dirpath, dirnames, filenames in os.walk(CORPUS / top):
            dirnames.sort()
            for name in sorted(filenames):
                found.append(str((Path(dirpath) / name).relative_to(REPO)))
    return found
