"""translate_jobs: one output tree for many jobs, dependencies, names, paths, determinism."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from conftest import CORPUS, GOLDEN, REPO, site_for
from golden import check_json

from migrate import ir, serialize
from migrate.diagnostics import CODES, Collector
from migrate.names import DNS1123_LABEL_MAX
from migrate.outputs import safe_relpath
from migrate.scan import scanner
from migrate.site.config import load_site_config
from migrate.translate import translate_jobs
from migrate.translators.interfaces import ReadContext
from migrate.translators.kubernetes import validate
from migrate.translators.kubernetes.cron import schedule_from_begin
from migrate.translators.kubernetes.flavor_registry import FLAVORS
from migrate.translators.slurm import reader
from migrate.yamlload import load_documents

SITE = load_site_config(CORPUS / "sample-site" / "migrate.yaml")


def corpus_jobs() -> list[ir.Job]:
    jobs: list[ir.Job] = []
    for top in ("cases/slurm", "sample-site"):
        for path in sorted((CORPUS / top).rglob("*")):
            if not path.is_file():
                continue
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            rel = os.path.relpath(path, CORPUS.parent)
            jobs += reader.read(text, rel, Collector(rel))
    return jobs


def simple(name: str, path: str = "job.sbatch", **kw: object) -> ir.Job:
    return ir.Job(
        id=f"{path}#{name}",
        source=ir.SourceRef(path, "slurm"),
        kind="sbatch",
        name=name,
        script=ir.ScriptInfo(body="echo hi\n"),
        **kw,
    )  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def every_corpus_job() -> list[ir.Job]:
    """The whole corpus, Kubernetes manifests too (their IR goes back to Kubernetes), read once: a
    translation leaves the jobs it reads as they were."""
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(REPO)  # paths as the repository names them
        return scanner.scan(["corpus"]).jobs


def test_a_translation_leaves_the_jobs_it_reads_as_they_were(every_corpus_job: list[ir.Job]) -> None:
    """The report translates the same jobs to both targets, and the tests above share one scan."""
    before = [serialize.to_dict(job) for job in every_corpus_job]
    translate_jobs(every_corpus_job, flavor="jobset", config=SITE, style="emulate")
    translate_jobs(every_corpus_job, to="slurm", config=SITE)
    assert [serialize.to_dict(job) for job in every_corpus_job] == before


# Documents an earlier flavor's tree already had, checked and valid: the flavors share most ConfigMaps,
# Services and policies, and each distinct document is checked once (the schemas take most of the time).
_VALID_BEFORE: set[str] = set()


def _problems_of_new_documents(root: Path) -> tuple[list[str], int]:
    """Problems of every written document not seen (valid) in an earlier tree, and the number of documents."""
    problems: list[str] = []
    objects = 0
    for path in sorted(root.rglob("*.y*ml")):
        if path.name == "kustomization.yaml":
            continue
        diags = Collector(str(path))
        documents = load_documents(path.read_text(encoding="utf-8"), diags)
        problems += [f"{path}:{d.line}: {d.code}: {d.message}" for d in diags]
        for document in documents:
            objects += 1
            key = json.dumps(document.data, sort_keys=True)
            if key in _VALID_BEFORE:
                continue
            found = validate.validate_object(document.data)
            problems += [f"{path}: {problem.render()}" for problem in found]
            if not found:
                _VALID_BEFORE.add(key)
    return problems, objects


@pytest.mark.parametrize(
    ("flavor", "style"), [*((f, "auto") for f in FLAVORS), ("auto", "emulate")], ids=lambda v: str(v)
)
def test_every_manifest_of_the_corpus_passes_strict_validation(
    flavor: str, style: str, every_corpus_job: list[ir.Job], tmp_path: Path, in_repo: Path
) -> None:
    """``auto`` writes native pods where the script allows; ``emulate`` the script with its shims."""
    result = translate_jobs(every_corpus_job, flavor=flavor, config=SITE, style=style)
    result.tree.commit(str(tmp_path / "out"))
    problems, objects = _problems_of_new_documents(tmp_path / "out")
    assert problems == []
    assert objects > 100


def test_output_layout_kustomization_and_translation_json(tmp_path: Path, in_repo: Path) -> None:
    result = translate_jobs(corpus_jobs(), config=SITE)
    files = result.tree.files
    kustomization = yaml.safe_load(files["kustomization.yaml"])
    manifests = sorted(p for p in files if p.endswith(".yaml") and p != "kustomization.yaml")
    assert kustomization["resources"] == manifests
    assert any(p.startswith("kueue/") for p in files) is False  # auto does not use Kueue
    assert any(p.startswith("storage/") for p in files)
    doc = json.loads(files["translation.json"])
    assert doc["target"] == "kubernetes" and doc["ir_version"] == ir.IR_VERSION
    for job in doc["jobs"]:
        assert set(job) >= {
            "source",
            "line",
            "job",
            "flavor",
            "flavor_reason",
            "outputs",
            "fidelity",
            "diagnostics",
        }
        for out in job["outputs"]:
            assert out in files
        for e in job["fidelity"]:
            assert e["status"] in ("mapped", "approximated", "dropped") and e["reason"]
    assert result.strict is True  # the corpus has mail options, reservations ...


def test_same_input_gives_the_same_bytes(in_repo: Path) -> None:
    a = translate_jobs(corpus_jobs(), flavor="kueue", config=SITE).tree.files
    b = translate_jobs(corpus_jobs(), flavor="kueue", config=SITE).tree.files
    assert a == b


def test_fifty_jobs_with_one_name_get_valid_distinct_names() -> None:
    jobs = [simple("train", f"dir{i}/train.sbatch") for i in range(50)]
    result = translate_jobs(jobs)
    names = [t.name for t in result.translations]
    assert len(set(names)) == 50
    folders = {p.split("/", 1)[0] for p in result.tree.files if "/" in p}
    assert len(folders) == 50
    for text in (v for k, v in result.tree.files.items() if k.endswith("job.yaml")):
        for doc in yaml.safe_load_all(text):
            assert len(doc["metadata"]["name"]) <= DNS1123_LABEL_MAX
    for t in result.translations:
        assert validate.validate_documents(t.files["job.yaml"]) == []


def test_hostile_names_stay_inside_the_output_folder(tmp_path: Path) -> None:
    jobs = [simple("../../etc/passwd"), simple("/abs/path"), simple(".."), simple("storage"), simple("kueue")]
    result = translate_jobs(jobs)
    for rel in result.tree.files:
        assert safe_relpath(rel) == rel
        assert not rel.startswith(("/", ".."))
    folders = sorted({t.name for t in result.translations})
    assert "storage" not in folders and "kueue" not in folders  # shared folders keep their names
    written = result.tree.commit(str(tmp_path / "out"))
    for path in written:
        assert Path(path).resolve().is_relative_to((tmp_path / "out").resolve())


def test_dependencies_between_translated_jobs_make_an_ordered_submit_script(
    tmp_path: Path, in_repo: Path
) -> None:
    jobs = [
        j
        for j in corpus_jobs()
        if Path(j.source.path).name in ("submit_pipeline.sh", "prep.sbatch", "train.sbatch", "eval.sbatch")
    ]
    result = translate_jobs(jobs, config=SITE, workflow="script")
    by_name = {t.name: t for t in result.translations}
    assert {
        (e.dep_type, by_name_of(result, e.dependent), by_name_of(result, e.prerequisite))
        for e in result.edges
    } >= {("afterok", "train", "prep"), ("afterany", "eval", "train")}
    assert "submit.sh" in result.tree.files
    assert result.tree.modes["submit.sh"] == 0o755
    wrapper = next(t for t in result.translations if t.flavor == "submit.sh")
    assert not wrapper.files
    assert any("after" in e.item for e in by_name["train"].fidelity.entries)

    out = tmp_path / "out"
    result.tree.commit(str(out))
    log = run_submit(out, tmp_path)
    applies = [line for line in log if line.startswith("apply")]
    order = [Path(line.split()[-1]).parent.name for line in applies]
    assert order.index("prep") < order.index("train") < order.index("eval")


def by_name_of(result: object, job_id: str) -> str:
    return next(t.name for t in result.translations if t.job_id == job_id)  # type: ignore[attr-defined]


FAKE_KUBECTL = r"""#!/bin/bash
# A kubectl that records applies; every applied object completes at once.
state=${FAKE_STATE:?}
case "$1" in
  apply)
    shift
    while [ $# -gt 0 ]; do
      if [ "$1" = -f ]; then
        echo "apply $2" >> "$state/log"
        touch "$state/applied-$(basename "$(dirname "$2")")"
      fi
      shift
    done ;;
  get)
    name=$3
    if [ -e "$state/applied-$name" ]; then
      case "$*" in
        *conditions*) printf 'Complete Completed Succeeded ' ;;
        *startTime*) printf '2026-01-01T00:00:00Z' ;;
        *phase*) printf 'Completed' ;;
      esac
    fi ;;
esac
"""


def run_submit(out: Path, tmp_path: Path) -> list[str]:
    if shutil.which("bash") is None:
        pytest.skip("bash is needed")
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "kubectl").write_text(FAKE_KUBECTL)
    (fake / "kubectl").chmod(0o755)
    state = tmp_path / "state"
    state.mkdir()
    env = {
        **os.environ,
        "PATH": f"{fake}:{os.environ['PATH']}",
        "FAKE_STATE": str(state),
        "MIGRATE_POLL_SECONDS": "0.05",
    }
    done = subprocess.run(
        ["bash", str(out / "submit.sh")], env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    return (state / "log").read_text().splitlines()


def test_unresolved_dependencies_are_dropped_entries() -> None:
    job = simple("late", dependencies=(ir.Dependency("afterok", ("77001",)),))
    result = translate_jobs([job])
    (t,) = result.translations
    dep = next(e for e in t.fidelity.entries if e.item.startswith("--dependency"))
    assert dep.status == "dropped"
    assert "submit.sh" not in result.tree.files


def test_an_unresolved_dependency_drops_its_own_entry_only() -> None:
    """Found by what the entry is about (type and target), not by the words of its item."""
    job = simple(
        "late",
        dependencies=(
            ir.Dependency("afterok", ("77001+30",)),
            ir.Dependency("afterany", ("77001",)),
        ),
    )
    (t,) = translate_jobs([job]).translations
    deps = [e for e in t.fidelity.entries if e.key[:1] == ("dependency",)]
    assert [(e.key[1], e.status) for e in deps] == [("afterok", "dropped"), ("afterany", "dropped")]
    assert len([e for e in t.fidelity.entries if "77001" in e.item]) == 2  # no second entry per dependency


# ---------------------------------------------------------------------------
# golden files: corpus/golden/translate/<input>.json (pytest --update-golden rewrites them)

TRANSLATE_GOLDEN = GOLDEN / "translate"
GOLDEN_FLAVORS = ("job", "jobset", "volcano", "kueue", "pytorchjob", "mpijob", "cronjob")
SLURM_INPUTS = [
    str(p.relative_to(REPO))
    for top in ("cases/slurm", "cases/allocation", "sample-site")
    for p in sorted((CORPUS / top).rglob("*"))
    if p.is_file() and not p.name.endswith((".yaml", ".yml", ".md")) and p.parent.name != "cluster"
]


def _shim_free(text: str, source: str) -> object:
    """The documents of a file, shims and an unchanged job script elided (both are tested elsewhere)."""
    docs = []
    for doc in yaml.safe_load_all(text):
        if doc and doc.get("kind") == "ConfigMap":
            doc["data"] = {
                k: "<the job file>" if v == source else v if k == "job.sh" else "<migrate shim>"
                for k, v in doc["data"].items()
            }
        docs.append(doc)
    return docs


def golden_of(rel: str) -> dict[str, object]:
    source = (REPO / rel).read_text(encoding="utf-8")
    site = site_for(rel)  # the sample site's, or the allocation cases' own with their cluster files
    jobs = reader.read(source, rel, Collector(rel), ReadContext(spank=site.spank_options))
    out: list[dict[str, object]] = []
    for job in jobs:
        if job.kind == "wrapper":
            continue
        auto = translate_jobs([job], config=site).translations[0]
        entry: dict[str, object] = {
            "job": job.id,
            "flavor": auto.flavor,
            "flavor_reason": auto.flavor_reason,
            "style": auto.style,
            "style_reason": auto.style_reason,
            "files": {name: _shim_free(text, source) for name, text in sorted(auto.files.items())},
            "fidelity": auto.fidelity.to_list(),
            "diagnostics": [d.to_dict() for d in auto.diagnostics],
            "other_flavors": {},
        }
        for flavor in GOLDEN_FLAVORS:
            t = translate_jobs([job], flavor=flavor, config=site).translations[0]
            entry["other_flavors"][flavor] = {  # type: ignore[index]
                "flavor": t.flavor,
                "counts": t.fidelity.counts(),
                "diagnostics": [d.to_dict() for d in t.diagnostics if d.code.startswith("TRANSLATE-")],
            }
        if auto.style == "emulate":  # what --style native says when it cannot
            forced = translate_jobs([job], config=site, style="native").translations[0]
            entry["style_native"] = [
                d.to_dict() for d in forced.diagnostics if d.code.startswith("TRANSLATE-STYLE")
            ]
        bare = translate_jobs([job]).translations[0]  # no migrate.yaml: placeholders and diagnostics
        entry["without_site_config"] = {
            "flavor": bare.flavor,
            "counts": bare.fidelity.counts(),
            "diagnostics": [d.to_dict() for d in bare.diagnostics if d.code.startswith("TRANSLATE-")],
        }
        out.append(entry)
    return {"source": rel, "jobs": out}


@pytest.mark.parametrize("rel", SLURM_INPUTS)
def test_translate_golden(rel: str, in_repo: Path, update_golden: bool) -> None:
    check_json(TRANSLATE_GOLDEN / (rel.removeprefix("corpus/") + ".json"), golden_of(rel), update_golden)


def test_every_translate_code_appears_in_a_golden(in_repo: Path) -> None:
    seen: set[str] = set()
    for golden in TRANSLATE_GOLDEN.rglob("*.json"):
        seen |= set(re.findall(r'"code": "(TRANSLATE-[A-Z-]+)"', golden.read_text(encoding="utf-8")))
    wanted = {c for c in CODES if c.startswith("TRANSLATE-")}
    assert sorted(wanted - seen) == []


def test_schedule_from_begin() -> None:
    assert schedule_from_begin("now+15minutes") == ("*/15 * * * *", True)
    assert schedule_from_begin("now+6hours") == ("0 */6 * * *", True)
    assert schedule_from_begin("now+1day") == ("0 0 * * *", True)
    assert schedule_from_begin("04:30") == ("30 4 * * *", True)
    assert schedule_from_begin("now+7minutes") == ("0 0 * * *", False)
