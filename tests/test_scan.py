"""scan: by content not name; bad files give one diagnostic and the run goes on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from migrate import scan
from migrate.discover import Candidate

SBATCH = "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --time=01:00:00\nsrun hostname\n"
JOB = """apiVersion: batch/v1
kind: Job
metadata:
  name: x
spec:
  template:
    spec:
      containers:
      - name: c
        image: busybox
      restartPolicy: Never
"""


def _scan_dir(tmp_path: Path) -> scan.ScanResult:
    return scan.scan([str(tmp_path)])


def _codes(result: scan.ScanResult) -> dict[str, list[str]]:
    return {Path(f.path).name: [d.code for d in f.diagnostics] for f in result.files}


def test_found_by_content_not_name(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text(SBATCH)
    (tmp_path / "deploy").write_text(JOB)
    (tmp_path / "README.md").write_text("# hello\n")
    result = _scan_dir(tmp_path)
    formats = {Path(f.path).name: f.format for f in result.files}
    assert formats == {"deploy": "kubernetes", "notes.txt": "slurm"}


def test_bad_files_each_give_one_diagnostic(tmp_path: Path) -> None:
    (tmp_path / "a_empty.sbatch").write_text("")
    (tmp_path / "b_binary.sh").write_bytes(b"\x7fELF\x00\x01\x02" * 50)
    (tmp_path / "c_latin1.sbatch").write_bytes(b"#!/bin/bash\n# caf\xe9\n#SBATCH -N1\nhostname\n")
    (tmp_path / "d_plain.sh").write_text("#!/bin/bash\necho hello\n")
    (tmp_path / "e_good.sbatch").write_text(SBATCH)
    (tmp_path / "data.bin").write_bytes(b"\x00" * 100)  # not job-like by name: silent
    codes = _codes(_scan_dir(tmp_path))
    assert codes["a_empty.sbatch"] == ["FILE-EMPTY"]
    assert codes["b_binary.sh"] == ["FILE-BINARY"]
    assert codes["c_latin1.sbatch"][0] == "FILE-ENCODING"
    assert codes["d_plain.sh"] == ["FILE-NOT-A-JOB"]
    assert "data.bin" not in codes
    assert "e_good.sbatch" in codes


def test_too_large(tmp_path: Path) -> None:
    big = SBATCH + "# padding\n" * 2000
    (tmp_path / "big.sbatch").write_text(big)
    result = scan.scan([str(tmp_path)], scan.ScanOptions(max_bytes=1000))
    (f,) = result.files
    assert [d.code for d in f.diagnostics] == ["FILE-TOO-LARGE"]
    assert f.format == "slurm" and f.jobs == []


def test_unreadable_file(tmp_path: Path) -> None:
    (tmp_path / "gone.sbatch").symlink_to(tmp_path / "missing")
    result = _scan_dir(tmp_path)
    assert _codes(result) == {"gone.sbatch": ["FILE-UNREADABLE"]}
    vanished = Candidate(str(tmp_path / "vanished.sbatch"), "vanished.sbatch", 10)
    res = scan.scan_file(vanished)
    assert res is not None and [d.code for d in res.diagnostics] == ["FILE-UNREADABLE"]


def test_reader_crash_is_a_diagnostic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "x.sbatch").write_text(SBATCH)
    (tmp_path / "y.sbatch").write_text(SBATCH)

    def boom(text: str, path: str, diags: object) -> list[object]:
        if path.endswith("x.sbatch"):
            raise RuntimeError("bug")
        return []

    monkeypatch.setattr(scan.slurm_reader, "read", boom)
    codes = _codes(_scan_dir(tmp_path))
    assert codes == {"x.sbatch": ["INTERNAL-ERROR"], "y.sbatch": []}


def test_json_document_shape(tmp_path: Path) -> None:
    (tmp_path / "t.sbatch").write_text(SBATCH)
    doc = json.loads(json.dumps(_scan_dir(tmp_path).to_dict()))
    assert doc["ir_version"] == "1"
    (f,) = doc["files"]
    assert set(f) == {"path", "format", "jobs", "diagnostics"}
    assert doc["summary"]["jobs"] == 1 and doc["summary"]["nodes"] == 2


def test_json_manifest_is_a_job_but_json_quoting_one_is_not(tmp_path: Path) -> None:
    manifest = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "from-kubectl"},
        "spec": {
            "template": {
                "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}
            }
        },
    }
    (tmp_path / "exported").write_text(json.dumps(manifest, indent=4))
    (tmp_path / "train.sbatch.json").write_text(json.dumps({"path": "x", "jobs": [manifest]}))
    result = _scan_dir(tmp_path)
    assert [(Path(f.path).name, f.format, len(f.jobs)) for f in result.files] == [
        ("exported", "kubernetes", 1)
    ]
