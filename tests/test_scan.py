"""scan: by content not name; bad files give one diagnostic and the run goes on."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from migrate.scan import files as scan_files
from migrate.scan import results as scan_results
from migrate.scan import scanner
from migrate.scan.discover import Candidate

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


def _scan_dir(tmp_path: Path) -> scan_results.ScanResult:
    return scanner.scan([str(tmp_path)])


def _codes(result: scan_results.ScanResult) -> dict[str, list[str]]:
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
    result = scanner.scan([str(tmp_path)], scan_results.ScanOptions(max_bytes=1000))
    (f,) = result.files
    assert [d.code for d in f.diagnostics] == ["FILE-TOO-LARGE"]
    assert f.format == "slurm" and f.jobs == []


def test_unreadable_file(tmp_path: Path) -> None:
    (tmp_path / "gone.sbatch").symlink_to(tmp_path / "missing")
    result = _scan_dir(tmp_path)
    assert _codes(result) == {"gone.sbatch": ["FILE-UNREADABLE"]}
    vanished = Candidate(str(tmp_path / "vanished.sbatch"), "vanished.sbatch", 10)
    res = scan_files.scan_file(vanished)
    assert res is not None and [d.code for d in res.diagnostics] == ["FILE-UNREADABLE"]


def test_reader_crash_is_a_diagnostic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "x.sbatch").write_text(SBATCH)
    (tmp_path / "y.sbatch").write_text(SBATCH)

    def boom(text: str, path: str, diags: object, *site: object) -> list[object]:
        if path.endswith("x.sbatch"):
            raise RuntimeError("bug")
        return []

    from migrate.translators.slurm import reader as slurm_reader  # loaded when a file is read

    monkeypatch.setattr(slurm_reader, "read", boom)
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


# ---------------------------------------------------------------------------
# NUL bytes past the binary sniff


def _padded(tail: bytes) -> bytes:
    """A script whose first 8 KiB hold no NUL, then ``tail``."""
    return SBATCH.encode() + b"# a long comment block, as in a site header\n" * 200 + tail


def test_stray_nul_past_the_head_is_dropped_and_reported_on_its_line(tmp_path: Path) -> None:
    data = _padded(b"echo one\x00two\nsrun date\x00\n")
    (tmp_path / "late.sbatch").write_bytes(data)
    (f,) = _scan_dir(tmp_path).files
    (d,) = f.diagnostics
    assert d.code == "FILE-NUL-BYTE" and d.line == data.count(b"\n", 0, data.index(b"\0")) + 1
    assert d.message.startswith("2 NUL bytes from line")
    assert f.format == "slurm" and len(f.jobs) == 1
    assert "echo onetwo" in json.dumps(f.to_dict()) and "\\u0000" not in json.dumps(f.to_dict())


def test_binary_payload_past_the_head_is_not_read(tmp_path: Path) -> None:
    data = _padded(b"__ARCHIVE__\n\x1f\x8b\x08\x00\xff\xfe\x00\x00binary")
    (tmp_path / "installer.sh").write_bytes(data)
    (tmp_path / "installer.bin").write_bytes(data)  # not job-like by name: silent
    (f,) = _scan_dir(tmp_path).files
    assert [(d.code, d.line) for d in f.diagnostics] == [("FILE-BINARY", data.count(b"\n") + 1)]
    assert f.jobs == []


# ---------------------------------------------------------------------------
# repeated diagnostics: capped per code and file, counted in full


CLI = (sys.executable, "-c", "from migrate.cli import main; main()")


def _repeats(count: int) -> str:
    return "#!/bin/bash\n" + "#SBATCH --nodes=2\n" * (count + 1) + "#SBATCH --frobnicate=1\nsrun hostname\n"


def test_repeats_of_one_code_are_capped_and_counted(tmp_path: Path) -> None:
    (tmp_path / "many.sbatch").write_text(_repeats(500))
    (tmp_path / "few.sbatch").write_text(_repeats(scan_results.MAX_REPEATS_PER_CODE))
    result = _scan_dir(tmp_path)
    codes = _codes(result)
    assert codes["few.sbatch"].count("SLURM-REPEATED-OPTION") == scan_results.MAX_REPEATS_PER_CODE
    assert "FILE-DIAGNOSTICS-CAPPED" not in codes["few.sbatch"]
    many = codes["many.sbatch"]
    assert many.count("SLURM-REPEATED-OPTION") == scan_results.MAX_REPEATS_PER_CODE
    assert many.count("SLURM-UNKNOWN-OPTION") == 1  # other codes are kept
    (note,) = [d for d in result.files[1].diagnostics if d.code == "FILE-DIAGNOSTICS-CAPPED"]
    assert note.message.startswith(
        f"{500 - scan_results.MAX_REPEATS_PER_CODE} more SLURM-REPEATED-OPTION left out"
    )
    assert note.line == 2 + scan_results.MAX_REPEATS_PER_CODE + 1  # where the first one left out is
    summary = result.summary()
    assert summary["by_code"]["SLURM-REPEATED-OPTION"] == 500 + scan_results.MAX_REPEATS_PER_CODE
    assert summary["by_code"]["FILE-DIAGNOSTICS-CAPPED"] == 1
    assert summary["diagnostics_listed"] == len(result.diagnostics)
    assert (
        sum(summary["diagnostics"].values())
        == len(result.diagnostics) + 500 - scan_results.MAX_REPEATS_PER_CODE
    )


def test_capped_repeats_through_the_cli_and_the_cache(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "many.sbatch").write_text(_repeats(300))
    cache_dir = str(tmp_path / "cache")
    objects = _scan_dir(tree).to_dict()
    for attempt in ("cold", "warm"):
        res = subprocess.run(
            [*CLI, "scan", "--format", "json", "--cache-dir", cache_dir, str(tree)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert res.returncode == 0, res.stderr
        doc = json.loads(res.stdout)
        (f,) = doc["files"]
        assert len(f["diagnostics"]) == scan_results.MAX_REPEATS_PER_CODE + 2, (
            attempt
        )  # the note, the unknown option
        assert doc["summary"] == objects["summary"], attempt
        assert f["diagnostics"] == objects["files"][0]["diagnostics"], attempt
    cached = scanner.scan(
        [str(tree)], scan_results.ScanOptions(cache=cache_dir)
    )  # objects read back from JSON
    assert cached.summary() == objects["summary"]
    table = subprocess.run(
        [*CLI, "scan", "--no-cache", str(tree)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    listed = scan_results.MAX_REPEATS_PER_CODE + 2
    assert re.search(rf"\b{listed}\s*$", table.stdout, re.M), table.stdout  # the row's diag column


def test_a_byte_order_mark_reaches_the_sbatch_reader_which_says_sbatch_refuses_it() -> None:
    bom = b"\xef\xbb\xbf"
    script = b"#!/bin/bash\n#SBATCH --nodes=2\nsrun hostname\n"
    with_bom = scan_files.read_data(bom + script, "job.sbatch", True)
    assert with_bom is not None and [d.code for d in with_bom.diagnostics] == ["SLURM-NO-SHEBANG"]
    assert "byte order mark" in with_bom.diagnostics[0].message
    (job,) = with_bom.jobs
    assert job.components[0].resources.nodes_min == 2  # read as sbatch reads it past the mark
    plain = scan_files.read_data(script, "job.sbatch", True)
    assert plain is not None and plain.diagnostics == []
    manifest = (
        b"apiVersion: batch/v1\nkind: Job\nmetadata: {name: a}\n"
        b"spec: {template: {spec: {containers: [{name: a, image: x}], restartPolicy: Never}}}\n"
    )
    yaml_bom = scan_files.read_data(bom + manifest, "job.yaml", True)
    assert yaml_bom is not None and len(yaml_bom.jobs) == 1 and yaml_bom.diagnostics == []
