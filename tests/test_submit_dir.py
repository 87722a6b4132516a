"""The folder a job was submitted from: a site fact (kubernetes.submit_dirs), the folder the pod
starts in and what SLURM_SUBMIT_DIR names, or a warning naming what the job uses of it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from k8s_run import documents, literal_env, pod_specs
from podrunner import testing as pods

from migrate.diagnostics import Collector
from migrate.site.config import SiteConfigError, parse_site_config
from migrate.translators.kubernetes import submit_dir
from migrate.translators.kubernetes.writer import translate_job
from migrate.translators.slurm import reader

SITE: dict[str, Any] = {
    "site": "s",
    "filesystems": [{"prefix": "/fsx", "kind": "lustre", "pvc": "fsx"}],
    "defaults": {"image": "img:1", "namespace": "vision"},
}
PLACED = {
    **SITE,
    "kubernetes": {"submit_dirs": {"jobs": "/fsx/projects/jobs", "jobs/mine": "/fsx/{user}/mine"}},
}


def _job(body: str, path: str = "jobs/train/t.sbatch", header: str = "#SBATCH -N 1\n") -> Any:
    (job,) = reader.read("#!/bin/bash\n" + header + body, path, Collector(path))
    return job


def _translate(
    body: str, site: dict[str, Any], path: str = "jobs/train/t.sbatch", style: str = "emulate"
) -> Any:
    return translate_job(_job(body, path), parse_site_config(site), "auto", style=style)


def _container(t: Any, init: bool = False) -> dict[str, Any]:
    (text,) = t.files.values()
    spec = pod_specs([d for d in documents(text) if d["kind"] != "ConfigMap"])[0]
    return spec["initContainers"][0] if init else spec["containers"][0]


def test_what_a_job_uses_of_the_folder_it_was_submitted_from() -> None:
    def reads(body: str, header: str = "#SBATCH -N 1\n") -> list[str]:
        return submit_dir.reads(_job(body, header=header))

    assert reads('cd "$SLURM_SUBMIT_DIR"\n') == ["$SLURM_SUBMIT_DIR"]
    assert reads("python $(pwd)/ddp.py\n") == ["$(pwd)"]
    assert reads("python train.py --config conf/a.yaml\n../src/convert.py\n") == [
        "train.py",
        "conf/a.yaml",
        "../src/convert.py",
    ]
    assert reads("cd /fsx/code\npython train.py\n") == []  # relative to the folder it went to
    assert reads("python train.py\n", header="#SBATCH --chdir=/fsx/code\n") == []
    assert reads("true\n", header="#SBATCH --output=logs/%j.out\n") == ["logs/%j.out"]
    assert reads("python /fsx/a.py --out /fsx/out.json\n# python old.py\n") == []


def test_the_sites_folders_longest_match_first_and_the_rest_kept_below() -> None:
    def placed(path: str) -> str | None:
        t = translate_job(_job("python train.py\n", path), parse_site_config(PLACED), "auto", style="emulate")
        return literal_env(_container(t)).get("SLURM_SUBMIT_DIR")

    assert placed("jobs/train/t.sbatch") == "/fsx/projects/jobs/train"
    assert placed("jobs/t.sbatch") == "/fsx/projects/jobs"
    assert placed("jobs/mine/deep/t.sbatch") == "/fsx/vision/mine/deep"  # {user}: kubernetes.user
    assert placed("other/t.sbatch") is None


def test_the_emulated_pod_starts_there_and_says_so() -> None:
    t = _translate("python train.py\n", PLACED)
    container = _container(t)
    assert container["workingDir"] == "/fsx/projects/jobs/train"
    assert literal_env(container)["SLURM_SUBMIT_DIR"] == "/fsx/projects/jobs/train"
    (entry,) = [e for e in t.fidelity.entries if e.item == "submit folder"]
    assert entry.status == "mapped" and "kubernetes.submit_dirs" in entry.reason
    assert not [d for d in t.diagnostics if d.code == "TRANSLATE-SUBMIT-DIR"]


def test_chdir_moves_the_script_not_the_submit_folder() -> None:
    (job,) = reader.read(
        "#!/bin/bash\n#SBATCH --chdir=/fsx/run\npython train.py\n",
        "jobs/t.sbatch",
        Collector("jobs/t.sbatch"),
    )
    t = translate_job(job, parse_site_config(PLACED), "auto", style="emulate")
    container = _container(t)
    assert container["workingDir"] == "/fsx/run"
    assert literal_env(container)["SLURM_SUBMIT_DIR"] == "/fsx/projects/jobs"


def test_unknown_folder_is_a_warning_naming_what_the_job_uses() -> None:
    t = _translate("python train.py --config conf/a.yaml\n", SITE)
    (diag,) = [d for d in t.diagnostics if d.code == "TRANSLATE-SUBMIT-DIR"]
    assert "train.py, conf/a.yaml" in diag.message and "kubernetes.submit_dirs" in diag.message
    assert "SLURM_SUBMIT_DIR" not in literal_env(_container(t))
    quiet = _translate("python /fsx/train.py\n", SITE)
    assert not [d for d in quiet.diagnostics if d.code == "TRANSLATE-SUBMIT-DIR"]


def test_a_folder_on_no_site_file_system_is_said() -> None:
    site = {**SITE, "kubernetes": {"submit_dirs": {".": "/home/alice/jobs"}}}
    t = _translate("python train.py\n", site)
    (diag,) = [d for d in t.diagnostics if d.code == "TRANSLATE-SUBMIT-DIR"]
    assert "/home/alice/jobs/jobs/train is on no file system" in diag.message


def test_native_set_up_runs_where_the_job_starts() -> None:
    body = "python prepare.py\ncd /fsx/run\nsrun python train.py\n"
    t = _translate(body, PLACED, style="auto")
    assert t.style == "native", t.style_reason
    assert _container(t)["workingDir"] == "/fsx/run"
    assert _container(t, init=True)["workingDir"] == "/fsx/projects/jobs/train"  # the cd is in its script
    before = _translate("cd /fsx/run\npython prepare.py\nsrun python train.py\n", PLACED, style="auto")
    assert _container(before, init=True)["workingDir"] == "/fsx/run"


def test_a_relative_cluster_folder_is_refused() -> None:
    with pytest.raises(SiteConfigError, match="absolute folder"):
        parse_site_config({**SITE, "kubernetes": {"submit_dirs": {"jobs": "projects/jobs"}}})


def test_the_pod_finds_the_jobs_files_where_sbatch_would(tmp_path: Path) -> None:
    """Run in the pod runner: the job's relative config file and its relative output file are in the
    submit folder on the shared file system, and SLURM_SUBMIT_DIR names it, as under sbatch."""
    pods.require_pods()
    body = 'echo "from $SLURM_SUBMIT_DIR in $(pwd)"\ncat conf/a.txt\n'
    header = "#SBATCH -N 1\n#SBATCH --output=logs/%x.out\n#SBATCH -J rel\n"
    (job,) = reader.read("#!/bin/bash\n" + header + body, "jobs/train/t.sbatch", Collector("t"))
    t = translate_job(job, parse_site_config(PLACED), "auto", style="emulate")
    (manifest,) = t.files.values()
    fsx = tmp_path / "fsx"
    folder = fsx / "projects" / "jobs" / "train"
    (folder / "conf").mkdir(parents=True)
    (folder / "logs").mkdir()
    (folder / "conf" / "a.txt").write_text("the job's own config\n")
    result = pods.run(manifest, tmp_path / "pods", claims={"fsx": fsx})
    assert result.status == "Complete", result.describe()
    where = "/fsx/projects/jobs/train"
    assert (folder / "logs" / "rel.out").read_text().splitlines() == [
        f"from {where} in {where}",
        "the job's own config",
    ]
