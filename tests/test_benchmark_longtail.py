"""The benchmark's real-sized site: the sizes it draws, and files that stay valid as they grow."""

from __future__ import annotations

import random
import shutil
import subprocess
from pathlib import Path
from types import ModuleType

import pytest
import yaml
from conftest import benchmark_module


@pytest.fixture(scope="module")
def longtail() -> ModuleType:
    return benchmark_module("longtail")


@pytest.fixture(scope="module")
def generate() -> ModuleType:
    return benchmark_module("generate")


def test_target_sizes_have_the_median_and_tail_asked_for(longtail: ModuleType) -> None:
    rng = random.Random(1)
    median, p90, largest = longtail.SCRIPT_SIZES
    sizes = sorted(longtail.target_size(longtail.SCRIPT_SIZES, rng) for _ in range(20_000))
    assert abs(sizes[len(sizes) // 2] - median) / median < 0.05
    assert abs(sizes[int(len(sizes) * 0.9)] - p90) / p90 < 0.08
    assert sizes[-1] == largest  # the tail is cut at the largest size


SCRIPT = "#!/bin/bash\n#SBATCH --job-name=train\n#SBATCH --nodes=2\n\nset -e\nsrun python train.py\n"


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash for the syntax check")
@pytest.mark.parametrize("seed", range(8))
def test_a_grown_script_keeps_its_header_and_stays_valid_bash(longtail: ModuleType, seed: int) -> None:
    grown = longtail.grow_script(SCRIPT, 6000, seed, random.Random(seed))
    assert len(grown) >= 6000
    assert grown.startswith("#!/bin/bash\n#SBATCH --job-name=train\n#SBATCH --nodes=2\n")
    assert grown.endswith("srun python train.py\n")
    check = subprocess.run(["bash", "-n"], input=grown, text=True, capture_output=True, check=False)
    assert check.returncode == 0, check.stderr


def test_templates_and_large_scripts_do_not_grow(longtail: ModuleType) -> None:
    template = "#!/bin/bash\n#SBATCH -N {{ nodes }}\nsrun a\n"
    assert longtail.grow_script(template, 5000, 1, random.Random(1)) == template
    assert longtail.grow_script(SCRIPT, 10, 1, random.Random(1)) == SCRIPT


MANIFEST = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: v\n"


@pytest.mark.parametrize("seed", range(6))
def test_a_grown_manifest_is_a_bundle_that_still_loads(longtail: ModuleType, seed: int) -> None:
    grown = longtail.grow_manifest(MANIFEST, 12_000, seed, random.Random(seed))
    assert len(grown) >= 12_000 and grown.startswith(MANIFEST + "---\n")
    documents = list(yaml.safe_load_all(grown))
    assert documents[0] == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "a"},
        "data": {"k": "v"},
    }
    kinds = {d["kind"] for d in documents[1:]}
    assert kinds <= {"Job", "ConfigMap"} and len(documents) > 2


def test_the_real_site_has_real_sizes_and_the_same_bytes_for_the_same_seed(
    generate: ModuleType, tmp_path: Path
) -> None:
    first = generate.generate(tmp_path / "a", 400, seed=5)
    again = generate.generate(tmp_path / "b", 400, seed=5)
    assert [p.read_bytes() for p in first] == [p.read_bytes() for p in again]
    shape = generate.size_distribution(tmp_path / "a")
    assert 1100 <= shape["scripts"]["median"] <= 2100
    assert 3500 <= shape["scripts"]["p90"] <= 6000
    assert shape["manifests"]["max"] <= 22_000  # bundles end near 20 KB; the last document may overshoot
    assert sum(shape["buckets"].values()) == 400 and shape["buckets"]["4-16 KB"] > 0
    small = generate.size_distribution(
        generate.generate(tmp_path / "c", 400, seed=5, sizes="corpus")[0].parents[2]
    )
    assert small["scripts"]["median"] < shape["scripts"]["median"]


def test_bucket_names_cover_every_size(generate: ModuleType) -> None:
    assert [generate.bucket_of(n) for n in (0, 1023, 1024, 4095, 4096, 16383, 16384, 10**6)] == [
        "<1 KB",
        "<1 KB",
        "1-4 KB",
        "1-4 KB",
        "4-16 KB",
        "4-16 KB",
        ">16 KB",
        ">16 KB",
    ]
