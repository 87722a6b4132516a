"""Hostile input: every adversarial file is scanned within bounds, reported, and the scan goes on.

Each input sits in a tree next to a good sbatch script and is scanned twice in a
child process (``tests/bounded.py``): through ``scanner.scan`` and through the CLI
(``migrate scan --format json``). Each run must end normally within
``MAX_SECONDS`` of CPU and ``MAX_RSS_MB``, give the expected coded diagnostics, and
still read the good file. The committed inputs are under ``corpus/adversarial``
(``corpus/INDEX.md`` says what each one is); the big ones are written here.

Set ``MIGRATE_FIGURES=path.json`` to keep the time and memory of every run.
"""

from __future__ import annotations

import builtins
import errno
import json
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from adversarial_inputs import (
    GENERATED,
    GOOD_SBATCH,
    big_script,
    deep_block_mapping,
    scalar_bomb,
    unbalanced_arithmetic,
    unclosed_substitutions,
)
from bounded import Probe, Run
from conftest import CORPUS, REPO

from migrate import api
from migrate.diagnostics import Collector
from migrate.scan import results as scan_results
from migrate.scan import scanner
from migrate.scan.discover import Candidate, Skipped
from migrate.translators.shell.analyze import analyze

MAX_SECONDS = 10.0
MAX_RSS_MB = 500.0
ADVERSARIAL = CORPUS / "adversarial"
CORPUS_MARKER = Path("/tmp/migrate-adversarial-marker")  # what the committed hostile files try to create

# file -> (codes its result must hold, number of jobs read from it)
EXPECTED: dict[str, tuple[set[str], int]] = {
    "alias_bomb_mappings.yaml": ({"K8S-YAML-ALIAS-BOMB"}, 0),
    "alias_bomb_merge_keys.yaml": ({"K8S-YAML-ALIAS-BOMB"}, 0),
    "alias_bomb_nested_lists.yaml": ({"K8S-YAML-ALIAS-BOMB"}, 1),  # the next document is still read
    "binary_elf.sh": ({"FILE-BINARY"}, 0),
    "crlf_mixed_endings.sbatch": (set(), 1),
    "deep_block_mapping.yaml": ({"K8S-YAML-TOO-DEEP"}, 0),
    "deep_block_sequence.yaml": ({"K8S-YAML-TOO-DEEP"}, 0),
    "deep_flow_mapping.yaml": ({"K8S-YAML-TOO-DEEP"}, 0),
    "deep_flow_sequence.yaml": ({"K8S-YAML-TOO-DEEP"}, 0),
    "helm_breaks_yaml.yaml": ({"K8S-TEMPLATED", "K8S-YAML-ERROR"}, 0),
    "heredoc_never_ends.sbatch": ({"SHELL-SYNTAX"}, 1),
    "hostile_names.yaml": (set(), 8),
    "invalid_utf8_middle.yaml": ({"FILE-ENCODING"}, 1),
    "jinja_breaks_yaml.yaml.j2": ({"K8S-TEMPLATED", "K8S-YAML-ERROR"}, 0),
    "name_300_chars.sbatch": (set(), 1),
    "name_backticks.sbatch": (set(), 1),
    "name_command_substitution.sbatch": ({"SLURM-DYNAMIC-VALUE", "SLURM-UNEXPECTED-VALUE"}, 1),
    "name_traversal.sbatch": (set(), 1),
    "name_unicode.sbatch": (set(), 1),
    "nested_arithmetic.sh": (set(), 1),
    "nested_substitutions.sh": ({"SHELL-TOO-DEEP"}, 1),
    "nul_after_8k.sh": ({"FILE-NUL-BYTE"}, 1),
    "nul_in_header.sh": ({"FILE-BINARY"}, 0),
    "only_directives.sbatch": ({"SLURM-NO-SHEBANG"}, 1),
    "python_tags.yaml": ({"K8S-YAML-ERROR"}, 0),
    "unbalanced_arithmetic.sh": ({"SHELL-SYNTAX"}, 1),
    "fuzz_superscript_digits.yaml": ({"K8S-BAD-TYPE"}, 2),
    "fuzz_trap_superscript.sbatch": (set(), 1),
    "fuzz_unclosed_substitutions.sh": ({"FILE-ENCODING", "SHELL-SYNTAX", "SLURM-DIRECTIVE-AFTER-COMMAND"}, 1),
    "fuzz_repeated_comments.sbatch": ({"SHELL-SYNTAX", "SHELL-TOO-DEEP", "SLURM-DIRECTIVE-AFTER-COMMAND"}, 1),
    # generated at test time (adversarial_inputs.GENERATED)
    "many_directives.sbatch": ({"SLURM-REPEATED-OPTION", "FILE-DIAGNOSTICS-CAPPED"}, 1),
    "payload_after_12k.sh": ({"FILE-BINARY"}, 0),
    "one_line_200k.sbatch": ({"SLURM-NO-SHEBANG"}, 1),
    "one_line_200k.json": (set(), 1),
    "many_keys.yaml": (set(), 1),
}
COMMITTED = sorted(p.name for p in ADVERSARIAL.iterdir())
# Crashes found by fuzzing that are not fixed yet (in files this suite does not own): xfail, strict.
KNOWN_BUGS: dict[str, str] = {}

_figures: list[dict[str, Any]] = []


@pytest.fixture(scope="module")
def probe() -> Iterator[Probe]:
    p = Probe()
    yield p
    p.close()
    target = os.environ.get("MIGRATE_FIGURES")
    if target and _figures:
        Path(target).write_text(json.dumps(_figures, indent=1) + "\n", encoding="utf-8")


def _tree(tmp_path: Path, name: str, data: bytes) -> tuple[Path, Path]:
    root = tmp_path / "tree"
    root.mkdir()
    (root / "a_good.sbatch").write_bytes(GOOD_SBATCH)
    bad = root / name
    bad.write_bytes(data)
    return root, bad


def _check_bounds(run: Run, what: str) -> None:
    assert run.signal is None and run.exit_code == 0, f"{what}: ended with {run}"
    # CPU time, not wall time: the bound is on the work, which a busy machine does not change.
    assert run.cpu_s < MAX_SECONDS, f"{what}: {run.cpu_s:.1f} s of CPU"
    assert run.max_rss_mb < MAX_RSS_MB, f"{what}: {run.max_rss_mb:.0f} MB"


def _files(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {Path(f["path"]).name: f for f in document["files"]}


def _check_result(document: dict[str, Any], name: str, codes: set[str], jobs: int) -> None:
    files = _files(document)
    good = files["a_good.sbatch"]
    assert [j["name"] for j in good["jobs"]] == ["good"], "the good file next to the bad one was not read"
    bad = files.get(name)
    assert bad is not None, f"{name} is missing from the scan"
    found = {d["code"] for d in bad["diagnostics"]}
    assert codes <= found, f"{name}: expected {sorted(codes)}, got {sorted(found)}"
    if not codes:
        assert not {c for c in found if c.startswith(("FILE-", "K8S-YAML", "INTERNAL"))}, found
    assert "INTERNAL-ERROR" not in found
    hidden = [d["message"] for d in bad["diagnostics"] if "internal error" in d["message"]]
    assert not hidden, hidden
    assert len(bad["jobs"]) == jobs, f"{name}: {len(bad['jobs'])} jobs"


def _scan_both(probe: Probe, root: Path, name: str, max_bytes: int | None = None) -> list[dict[str, Any]]:
    """The same tree through scanner.scan and through the CLI; both results, after the bound checks."""
    extra = ["--max-bytes", str(max_bytes)] if max_bytes else []
    runs = {
        "scanner.scan": probe.scan([str(root)], max_bytes),
        "migrate scan": probe.cli("scan", "--format", "json", *extra, str(root)),
    }
    documents = []
    for how, run in runs.items():
        _figures.append(
            {
                "input": name,
                "via": how,
                "bytes": sum(p.stat().st_size for p in root.iterdir()),
                "seconds": round(run.elapsed_s, 3),
                "cpu_seconds": round(run.cpu_s, 3),
                "max_rss_mb": round(run.max_rss_mb, 1),
            }
        )
        _check_bounds(run, f"{how} {name}")
        documents.append(run.json())
    return documents


def test_every_committed_input_has_an_expectation() -> None:
    assert set(COMMITTED) <= set(EXPECTED), sorted(set(COMMITTED) - set(EXPECTED))
    assert set(EXPECTED) == set(COMMITTED) | set(GENERATED)


@pytest.mark.parametrize("name", COMMITTED + sorted(GENERATED))
def test_input_is_bounded_reported_and_the_scan_goes_on(
    name: str, probe: Probe, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    if name in KNOWN_BUGS:
        request.applymarker(pytest.mark.xfail(strict=True, reason=KNOWN_BUGS[name]))
    data = (ADVERSARIAL / name).read_bytes() if name in COMMITTED else GENERATED[name]()
    root, _ = _tree(tmp_path, name, data)
    codes, jobs = EXPECTED[name]
    for document in _scan_both(probe, root, name):
        _check_result(document, name, codes, jobs)
    assert not CORPUS_MARKER.exists()


def test_hostile_names_are_kept_verbatim(probe: Probe, tmp_path: Path) -> None:
    root = tmp_path / "tree"
    shutil.copytree(ADVERSARIAL, root)
    (document,) = _scan_both(probe, root, "corpus/adversarial")[:1]
    names = {j.get("name") for f in document["files"] for j in f["jobs"]}
    assert {"../../etc/passwd", "$(rm -rf /)", "`touch /tmp/migrate-adversarial-marker`"} <= names
    assert "line\nbreak: injected\n- item" in names
    assert any(len(n or "") == 300 for n in names)


def test_ten_thousand_deep_block_mapping_of_50_mb(probe: Probe, tmp_path: Path) -> None:
    root, _ = _tree(tmp_path, "deep_10000.yaml", deep_block_mapping())
    for document in _scan_both(probe, root, "deep_10000.yaml (50 MB)", max_bytes=64 << 20):
        _check_result(document, "deep_10000.yaml", {"K8S-YAML-TOO-DEEP"}, 0)


def test_fifty_megabyte_file_is_not_read(probe: Probe, tmp_path: Path) -> None:
    root, _ = _tree(tmp_path, "huge.sbatch", big_script())
    for document in _scan_both(probe, root, "huge.sbatch (50 MB)"):
        _check_result(document, "huge.sbatch", {"FILE-TOO-LARGE"}, 0)
        assert _files(document)["huge.sbatch"]["format"] == "slurm"  # told by its head, the rest unread


def test_huge_body_is_analysed_up_to_the_limit(probe: Probe, tmp_path: Path) -> None:
    """50 MB took 95 s and 3.2 GB when every statement was read; past the limit the body is only kept."""
    analysed = []
    for megabytes in (2, 4):
        (tmp_path / str(megabytes)).mkdir()
        root, _ = _tree(tmp_path / str(megabytes), "huge.sbatch", big_script(megabytes << 20))
        for document in _scan_both(probe, root, f"huge.sbatch ({megabytes} MB)", max_bytes=64 << 20):
            _check_result(document, "huge.sbatch", {"SHELL-TOO-LONG"}, 1)
            (job,) = _files(document)["huge.sbatch"]["jobs"]
            assert len(job["script"]["body"]) > (megabytes << 20) - 100  # kept whole
            analysed.append(job["script"]["statements"])
    assert len(set(analysed)) == 1, analysed  # the statement-by-statement work does not grow with the file


def test_alias_bomb_of_one_big_scalar(probe: Probe, tmp_path: Path) -> None:
    root, _ = _tree(tmp_path, "scalar_bomb.yaml", scalar_bomb())
    run = probe.scan([str(root)])  # the bound is on its CPU time: a busy machine only slows the wall clock
    _check_bounds(run, "scalar bomb")
    assert "K8S-YAML-ALIAS-BOMB" in {d["code"] for d in _files(run.json())["scalar_bomb.yaml"]["diagnostics"]}


def test_unbalanced_arithmetic_is_bounded(probe: Probe, tmp_path: Path) -> None:
    """Found by fuzzing: 4,000 unclosed '((' (16 KB) took about 15 s when each one scanned ahead."""
    root, _ = _tree(tmp_path, "arith.sh", unbalanced_arithmetic())
    for document in _scan_both(probe, root, "unbalanced arithmetic"):
        _check_result(document, "arith.sh", set(), 1)


def test_unclosed_substitutions_are_bounded(probe: Probe, tmp_path: Path) -> None:
    """Found by fuzzing: four copies of fuzz_unclosed_substitutions.sh did not end in minutes."""
    root, _ = _tree(tmp_path, "subst.sh", unclosed_substitutions())
    for document in _scan_both(probe, root, "unclosed substitutions x4"):
        _check_result(document, "subst.sh", {"SHELL-SYNTAX"}, 1)


def _nested_substitutions(levels: int) -> str:
    inner = "hostname"
    for _ in range(levels):
        inner = f"echo $({inner})"
    return inner


@pytest.mark.parametrize("levels", [6, 7, 40])
def test_substitutions_nested_too_deep_are_reported_on_their_line(levels: int) -> None:
    body = "srun true\nX=$(" + _nested_substitutions(levels - 1) + ")\nsrun date\n"
    diags = Collector("deep.sbatch")
    analyze(body, 10, diags)
    found = [(d.code, d.line) for d in diags if d.code == "SHELL-TOO-DEEP"]
    assert found == ([] if levels <= 6 else [("SHELL-TOO-DEEP", 11)])


def test_scripts_nested_too_deep_are_reported_on_their_line() -> None:
    script = "srun inner"
    for _ in range(5):  # bash -c inside bash -c ...: each level quoted for the one around it
        script = "bash -c " + shlex.quote(script)
    diags = Collector("deep.sbatch")
    analyze("hostname\n" + script + "\n", 1, diags)
    assert [(d.code, d.line) for d in diags] == [("SHELL-TOO-DEEP", 2)]
    assert "shell-c" in next(iter(diags)).message


# ---------------------------------------------------------------------------
# the file system: links, permissions, files that change under the scan


def _codes(result: scan_results.ScanResult) -> dict[str, list[str]]:
    return {Path(f.path).name: [d.code for d in f.diagnostics] for f in result.files}


def test_symlink_loops_and_links_out_of_the_root_are_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.sbatch").write_bytes(GOOD_SBATCH.replace(b"good", b"outside"))
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    (root / "a_good.sbatch").write_bytes(GOOD_SBATCH)
    (root / "self.sbatch").symlink_to("self.sbatch")
    (root / "ping.sh").symlink_to("pong.sh")
    (root / "pong.sh").symlink_to("ping.sh")
    (root / "sub" / "up").symlink_to("..")
    (root / "sub" / "root").symlink_to(root)
    (root / "passwd.sbatch").symlink_to("/etc/passwd")
    (root / "elsewhere").symlink_to(outside)
    (root / "escape.sbatch").symlink_to(outside / "secret.sbatch")
    (root / "again.sbatch").symlink_to("a_good.sbatch")  # inside: scanned once, where it is
    result = scanner.scan([str(root)])
    codes = _codes(result)
    assert codes["self.sbatch"] == ["FILE-SYMLINK-LOOP"]
    assert codes["ping.sh"] == ["FILE-SYMLINK-LOOP"] and codes["pong.sh"] == ["FILE-SYMLINK-LOOP"]
    assert codes["up"] == ["FILE-SYMLINK-LOOP"] and codes["root"] == ["FILE-SYMLINK-LOOP"]
    for name in ("passwd.sbatch", "elsewhere", "escape.sbatch"):
        assert codes[name] == ["FILE-SYMLINK-OUTSIDE"]
    assert "again.sbatch" not in codes
    names = [j.name for j in result.jobs]
    assert names == ["good"], names  # nothing from outside the root, nothing twice
    assert "root:x:0" not in json.dumps(result.to_dict())


def test_unreadable_file_and_folder_are_reported_and_the_rest_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "root"
    (root / "locked").mkdir(parents=True)
    (root / "locked" / "inside.sbatch").write_bytes(GOOD_SBATCH)
    (root / "zz").mkdir()
    (root / "zz" / "z.sbatch").write_bytes(GOOD_SBATCH.replace(b"good", b"zz"))
    (root / "a_good.sbatch").write_bytes(GOOD_SBATCH)
    (root / "secret.sbatch").write_bytes(GOOD_SBATCH)
    _refuse(monkeypatch)
    result = scanner.scan([str(root)])
    by_name = {Path(f.path).name: f for f in result.files}
    assert [d.code for d in by_name["secret.sbatch"].diagnostics] == ["FILE-UNREADABLE"]
    assert "Permission denied" in by_name["secret.sbatch"].diagnostics[0].message
    assert [d.code for d in by_name["locked"].diagnostics] == ["FILE-UNREADABLE"]
    assert [j.name for j in result.jobs] == ["good", "zz"]


def test_unlistable_folder_walked_last_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "locked").mkdir()
    (tmp_path / "a_good.sbatch").write_bytes(GOOD_SBATCH)
    _refuse(monkeypatch)
    assert _codes(scanner.scan([str(tmp_path)])).get("locked") == ["FILE-UNREADABLE"]


def _refuse(monkeypatch: pytest.MonkeyPatch) -> None:
    """As root, permissions stop nothing: make open and scandir refuse two paths instead."""
    real_open, real_os_open, real_scandir = builtins.open, os.open, os.scandir

    def refusing_open(file: Any, *args: Any, **kwargs: Any) -> Any:
        if str(file).endswith("secret.sbatch"):
            raise PermissionError(errno.EACCES, "Permission denied", str(file))
        return real_open(file, *args, **kwargs)

    def refusing_os_open(file: Any, *args: Any, **kwargs: Any) -> Any:
        if str(file).endswith("secret.sbatch"):
            raise PermissionError(errno.EACCES, "Permission denied", str(file))
        return real_os_open(file, *args, **kwargs)

    def refusing_scandir(path: Any = ".") -> Any:
        if str(path).endswith("locked"):
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(builtins, "open", refusing_open)
    monkeypatch.setattr(os, "open", refusing_os_open)
    monkeypatch.setattr(os, "scandir", refusing_scandir)


def _changing(change: Any) -> Any:
    """A walk that changes each bad file after it was looked at and before it is read."""
    real = scanner.walk

    def walk(root: str) -> Iterator[Candidate | Skipped]:
        for item in real(root):
            if isinstance(item, Candidate) and "bad" in item.path:
                change(Path(item.path))
            yield item

    return walk


def _replace_by_folder(p: Path) -> None:
    p.unlink()
    p.mkdir()


@pytest.mark.parametrize(
    ("change", "codes"),
    [
        (lambda p: p.write_bytes(b""), ["FILE-EMPTY"]),
        (lambda p: p.write_bytes(p.read_bytes()[:30]), None),  # cut mid-line: read as it is
        (lambda p: p.write_bytes(GOOD_SBATCH + b"# more\n" * 200_000), ["FILE-TOO-LARGE"]),
        (lambda p: p.unlink(), ["FILE-UNREADABLE"]),
        (_replace_by_folder, ["FILE-UNREADABLE"]),
    ],
    ids=["emptied", "truncated", "grown-over-the-limit", "deleted", "replaced-by-a-folder"],
)
def test_file_changing_between_listing_and_reading(
    change: Any, codes: list[str] | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a_good.sbatch").write_bytes(GOOD_SBATCH)
    (tmp_path / "bad.sbatch").write_bytes(GOOD_SBATCH.replace(b"good", b"bad"))
    monkeypatch.setattr(scanner, "walk", _changing(change))
    result = scanner.scan([str(tmp_path)])
    found = _codes(result)
    assert found["a_good.sbatch"] == []
    if codes is not None:
        assert found["bad.sbatch"] == codes
    assert "INTERNAL-ERROR" not in str(found)
    assert "good" in [j.name for j in result.jobs]


def test_file_swapped_for_a_named_pipe_does_not_hang(probe: Probe, tmp_path: Path) -> None:
    fifo = tmp_path / "bad.sbatch"
    os.mkfifo(fifo)
    run = probe.run({"mode": "file", "paths": [str(fifo)], "timeout": 1})
    assert run.signal is None, "the scan hung on a named pipe"
    assert [d["code"] for d in run.json()["diagnostics"]] == ["FILE-UNREADABLE"]


# ---------------------------------------------------------------------------
# the real entry point over the whole adversarial tree at once


def test_the_migrate_command_over_the_whole_adversarial_tree(tmp_path: Path) -> None:
    root = tmp_path / "tree"
    shutil.copytree(ADVERSARIAL, root)
    for name, make in GENERATED.items():
        (root / name).write_bytes(make())
    (root / "a_good.sbatch").write_bytes(GOOD_SBATCH)
    migrate = Path(sys.executable).with_name("migrate")
    argv = [str(migrate)] if migrate.exists() else [sys.executable, "-m", "migrate.cli"]
    res = subprocess.run(
        [*argv, "scan", "--format", "json", str(root)], capture_output=True, text=True, timeout=60
    )
    assert res.returncode == 0, res.stderr[-2000:]
    assert "Traceback" not in res.stderr
    files = _files(json.loads(res.stdout))
    assert set(EXPECTED) | {"a_good.sbatch"} == set(files)
    for name, (codes, jobs) in EXPECTED.items():
        assert codes <= {d["code"] for d in files[name]["diagnostics"]}, name
        assert len(files[name]["jobs"]) == jobs or name in KNOWN_BUGS, name
    assert not CORPUS_MARKER.exists()
    assert REPO.exists()


# ---------------------------------------------------------------------------
# nothing in a scanned file is ever executed, sourced, evaluated or expanded


def _booby_trapped(root: Path, markers: Path) -> None:
    def touch(n: int) -> str:
        return f"touch {markers}/m{n}"

    root.mkdir()
    (root / "evil.sbatch").write_text(
        "#!/bin/bash\n"
        f"#SBATCH --job-name=$({touch(1)})\n"
        f"#SBATCH --output=`{touch(2)}`\n"
        f"#SBATCH --export=ALL,X=$({touch(3)}),Y=`{touch(4)}`\n"
        f"#SBATCH --chdir=$({touch(5)})\n"
        f'#SBATCH --comment="$({touch(6)})"\n'
        f"{touch(7)}\n"
        f'eval "{touch(8)}"\n'
        "source ./trap_source.sh\n"
        f". <({touch(9)})\n"
        f"bash -c '{touch(10)}'\n"
        f"X=$({touch(11)})\n"
        f'srun bash -c "{touch(12)}"\n'
        f"cat <<EOF\n$({touch(13)})\nEOF\n"
        f"sbatch --wrap='{touch(14)}'\n",
        encoding="utf-8",
    )
    (root / "trap_source.sh").write_text(f"#!/bin/bash\n{touch(15)}\nsrun true\n", encoding="utf-8")
    (root / "evil.yaml").write_text(
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: evil\nspec:\n  template:\n    spec:\n"
        "      restartPolicy: Never\n      containers:\n      - name: c\n        image: busybox\n"
        f'        command: ["sh", "-c", "{touch(16)}"]\n'
        f'        env: [{{name: X, value: "$({touch(17)})"}}]\n'
        "---\napiVersion: batch/v1\nkind: Job\nmetadata:\n"
        f"  name: !!python/object/apply:os.system ['{touch(18)}']\n"
        "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: script}\ndata:\n"
        f"  run.sh: |\n    {touch(19)}\n",
        encoding="utf-8",
    )
    (root / "migrate.yaml").write_text(f"site: !!python/object/apply:os.system ['{touch(20)}']\n")


def test_nothing_scanned_is_ever_run(probe: Probe, tmp_path: Path) -> None:
    markers = tmp_path / "markers"
    markers.mkdir()
    root = tmp_path / "tree"
    _booby_trapped(root, markers)
    good_config = tmp_path / "site.yaml"
    good_config.write_text("site: test\n")
    out = tmp_path / "out"
    commands = [
        ("scan", "--format", "json", str(root)),
        ("plan", str(root), "--to", "kubernetes"),  # the trapped migrate.yaml at the root: refused
        ("plan", str(root), "--to", "kubernetes", "-c", str(good_config), "--out", str(out / "plan")),
        ("graph", str(root), "-c", str(good_config), "--out", str(out / "graph")),
        ("translate", str(root), "--to", "kubernetes", "-c", str(good_config), "--out", str(out / "k8s")),
        ("translate", str(root), "--to", "slurm", "-c", str(good_config), "--out", str(out / "slurm")),
        ("validate", str(out / "k8s")),
        ("init", str(root), "--out", str(out / "init" / "migrate.yaml")),
        ("report", str(root), "--to", "kubernetes", "-c", str(good_config), "--out", str(out / "report")),
    ]
    codes = []
    for argv in commands:
        run = probe.cli(*argv)
        codes.append((argv[0], run.exit_code))
        assert "Traceback" not in run.stderr, run.stderr
    assert codes[0] == ("scan", 0) and codes[1] == ("plan", 2) and codes[4] == ("translate", 0)
    assert (out / "k8s" / "translation.json").exists() and (out / "slurm" / "translation.json").exists()
    if hasattr(api, "run_report"):  # the report, whether or not the CLI has its command yet
        api.run_report([str(root)], "kubernetes", str(out / "api-report"), config=str(good_config))
        assert (out / "api-report").is_dir()
    assert sorted(os.listdir(markers)) == []
    assert not CORPUS_MARKER.exists()
