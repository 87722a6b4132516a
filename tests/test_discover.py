"""Discovery: stable order, skipped folders, symbolic links never followed."""

from __future__ import annotations

import os
from pathlib import Path

from migrate.scan.discover import Candidate, Skipped, walk


def _names(items: list[Candidate | Skipped], root: Path) -> list[str]:
    return [os.path.relpath(i.display, root) for i in items]


def test_sorted_and_skips_vcs_and_venvs(tmp_path: Path) -> None:
    for rel in ("b/job.sh", "a/z.yaml", "a/b.sh", ".git/config", "venv/pyvenv.cfg", "venv/x.sh"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x")
    items = list(walk(str(tmp_path)))
    assert all(isinstance(i, Candidate) for i in items)
    assert _names(items, tmp_path) == ["a/b.sh", "a/z.yaml", "b/job.sh"]


def test_single_file_root(tmp_path: Path) -> None:
    f = tmp_path / "one.sbatch"
    f.write_text("#!/bin/bash\n")
    (item,) = list(walk(str(f)))
    assert isinstance(item, Candidate) and item.size == len("#!/bin/bash\n")


def test_symlink_loop(tmp_path: Path) -> None:
    os.symlink(tmp_path / "b", tmp_path / "a")
    os.symlink(tmp_path / "a", tmp_path / "b")
    (tmp_path / "sub").mkdir()
    os.symlink(tmp_path, tmp_path / "sub" / "up")
    items = list(walk(str(tmp_path)))
    codes = sorted(i.diagnostic.code for i in items if isinstance(i, Skipped))
    assert codes == ["FILE-SYMLINK-LOOP", "FILE-SYMLINK-LOOP", "FILE-SYMLINK-LOOP"]


def test_symlink_outside(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.sh").write_text("#!/bin/bash\n#SBATCH -N1\n")
    root = tmp_path / "root"
    root.mkdir()
    os.symlink(outside, root / "escape")
    os.symlink(outside / "secret.sh", root / "escape.sh")
    items = list(walk(str(root)))
    assert [i.diagnostic.code for i in items if isinstance(i, Skipped)] == [
        "FILE-SYMLINK-OUTSIDE",
        "FILE-SYMLINK-OUTSIDE",
    ]
    assert not [i for i in items if isinstance(i, Candidate)]


def test_symlink_inside_is_not_scanned_twice(tmp_path: Path) -> None:
    (tmp_path / "real.sh").write_text("x")
    os.symlink(tmp_path / "real.sh", tmp_path / "alias.sh")
    items = list(walk(str(tmp_path)))
    assert _names(items, tmp_path) == ["real.sh"]


def test_missing_root(tmp_path: Path) -> None:
    (item,) = list(walk(str(tmp_path / "nope")))
    assert isinstance(item, Skipped) and item.diagnostic.code == "FILE-UNREADABLE"


def _tree(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


OWN_TRANSLATION = '{\n "ir_version": "1",\n "target": "kubernetes",\n "jobs": []\n}\n'


def test_a_folder_translate_wrote_is_skipped_inside_a_scanned_folder(tmp_path: Path) -> None:
    _tree(
        tmp_path,
        {
            "slurm/train.sbatch": "#!/bin/bash\n",
            "k8s-out/translation.json": OWN_TRANSLATION,
            "k8s-out/train/jobset.yaml": "kind: JobSet\n",
            "locales/translation.json": '{"greeting": "hello"}\n',  # another tool's file of that name
            "locales/job.yaml": "kind: Job\n",
        },
    )
    items = list(walk(str(tmp_path)))
    assert _names(items, tmp_path) == [
        "k8s-out",
        "locales/job.yaml",
        "locales/translation.json",
        "slurm/train.sbatch",
    ]
    (skipped,) = [i for i in items if isinstance(i, Skipped)]
    assert (skipped.diagnostic.code, skipped.diagnostic.severity) == ("FILE-MIGRATE-OUTPUT", "info")
    assert "translation.json" in skipped.diagnostic.message


def test_the_output_folder_named_itself_is_read(tmp_path: Path) -> None:
    """translate --to slurm reads the manifests it wrote back when given their folder."""
    _tree(tmp_path, {"translation.json": OWN_TRANSLATION, "train/jobset.yaml": "kind: JobSet\n"})
    items = list(walk(str(tmp_path)))
    assert all(isinstance(i, Candidate) for i in items)
    assert _names(items, tmp_path) == ["translation.json", "train/jobset.yaml"]
