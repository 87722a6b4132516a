"""The submitter's $USER, $LOGNAME and $HOME: a site choice, recorded, never silently empty."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from k8s_run import documents, literal_env, pod_specs, run_pod

from migrate.diagnostics import Collector
from migrate.site.config import SiteConfigError, parse_site_config
from migrate.translators.kubernetes import submitter
from migrate.translators.kubernetes.writer import translate_job
from migrate.translators.slurm import reader

BASE: dict[str, Any] = {"site": "s", "defaults": {"image": "img:1", "namespace": "vision"}}
SCRIPT = (
    "#!/bin/bash\n#SBATCH -J sweep\n#SBATCH -N 1\nsource ~/.bashrc\nOUT=/scratch/$USER/ray_results\n"
    'mkdir -p "$OUT"\necho "$LOGNAME $HOME $OUT" > "$OUT/who"\npython tune.py --local-dir "$OUT" &\nwait\n'
)


def _translate(text: str, site: dict[str, Any], style: str = "emulate") -> Any:
    (job,) = reader.read(text, "t.sbatch", Collector("t.sbatch"))
    return translate_job(job, parse_site_config(site), "auto", style=style)


def _env(t: Any) -> dict[str, str]:
    (text,) = t.files.values()
    spec = pod_specs([d for d in documents(text) if d["kind"] != "ConfigMap"])[0]
    return literal_env(spec["containers"][0])


def test_what_a_script_reads_of_the_submitter() -> None:
    def reads(body: str) -> set[str]:
        (job,) = reader.read("#!/bin/bash\n#SBATCH -N 1\n" + body, "t.sbatch", Collector("t.sbatch"))
        return submitter.reads(job)

    assert reads("cd /scratch/$USER\n") == {"USER"}
    assert reads('cp x "${HOME}/y"\n') == {"HOME"}
    assert reads("source ~/.bashrc\n") == {"HOME"}
    assert reads("echo $LOGNAME\n") == {"LOGNAME", "USER"}
    assert reads("echo ~300 GB; echo a~b\n") == set()
    assert reads("echo $USERNAME_X\n") == set()


def test_a_user_per_namespace_and_a_home_on_the_sites_home_by_default() -> None:
    site = {**BASE, "filesystems": [{"prefix": "/home", "kind": "nfs", "pvc": "home"}]}
    t = _translate(SCRIPT, site)
    env = _env(t)
    assert (env["USER"], env["LOGNAME"], env["HOME"]) == ("vision", "vision", "/home/vision")
    items = {e.item: e for e in t.fidelity.entries}
    assert "namespace stands for the submitter" in items["$USER"].reason
    assert not any(d.code == "TRANSLATE-SUBMITTER-HOME" for d in t.diagnostics)


def test_the_sites_user_and_home_and_a_home_it_does_not_give() -> None:
    named = _env(_translate(SCRIPT, {**BASE, "kubernetes": {"user": "svc-ml", "home": "/fsx/home/{user}"}}))
    assert (named["USER"], named["HOME"]) == ("svc-ml", "/fsx/home/svc-ml")
    t = _translate(SCRIPT, BASE)  # no home file system, no kubernetes.home: said, not invented
    assert "HOME" not in _env(t) and _env(t)["USER"] == "vision"
    assert [d.code for d in t.diagnostics if d.code == "TRANSLATE-SUBMITTER-HOME"] == [
        "TRANSLATE-SUBMITTER-HOME"
    ]
    with pytest.raises(SiteConfigError):
        parse_site_config({**BASE, "kubernetes": {"usr": "x"}})


def test_a_script_that_reads_none_gets_none() -> None:
    env = _env(_translate("#!/bin/bash\n#SBATCH -N 1\npython x.py\n", BASE))
    assert not {"USER", "LOGNAME", "HOME"} & set(env)


def test_native_writes_the_sites_user_into_the_words() -> None:
    text = "#!/bin/bash\n#SBATCH -N 1\npython /home/$USER/train.py --out /scratch/$USER/run\n"
    t = _translate(text, BASE, style="auto")
    assert t.style == "native", t.style_reason
    (manifest,) = t.files.values()
    args = pod_specs(documents(manifest))[0]["containers"][0]["args"]
    assert args == ["/home/vision/train.py", "--out", "/scratch/vision/run"]


def test_the_emulated_pod_builds_the_scripts_paths_on_the_sites_user(tmp_path: Path) -> None:
    """The script's own paths, run by the pod's entrypoint: no `/scratch//ray_results`."""
    site = {**BASE, "filesystems": [{"prefix": "/home", "kind": "nfs", "pvc": "home"}]}
    (manifest,) = _translate(SCRIPT.replace("/scratch/", f"{tmp_path}/scratch/"), site).files.values()
    out = f"{tmp_path}/scratch/$USER/ray_results"
    script = f'#!/bin/bash\nOUT={out}\nmkdir -p "$OUT"\necho "$LOGNAME $HOME $OUT"\n'
    done = run_pod(manifest, tmp_path / "pod", {}, script=script)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["vision", "/home/vision", f"{tmp_path}/scratch/vision/ray_results"]


def _required(body: str) -> list[tuple[str, int | None]]:
    (job,) = reader.read("#!/bin/bash\n#SBATCH -N 1\n" + body, "t.sbatch", Collector("t.sbatch"))
    return submitter.required(job)


def test_what_a_script_stops_without_that_the_submitter_gives() -> None:
    """`${X:?}` always; under `set -u` any read without a default; never what the script, the shell or
    Slurm sets, nor where the script takes variables from elsewhere."""
    assert _required(': "${CKPT:?set CKPT}"\nls $CKPT\n') == [("CKPT", 3)]
    assert _required("SAMPLE=${SAMPLE:?export SAMPLE}\necho $SAMPLE\n") == [("SAMPLE", 3)]
    assert _required("DIR=${1:?usage: sbatch x.sbatch <dir>}\n") == [("1", 3)]
    assert _required("set -euo pipefail\nLANE=L1\nfastp -i /d/${SAMPLE}_${LANE}.fq $TMPDIR $1\n") == [
        ("SAMPLE", 5),
        ("1", 5),
    ]
    assert _required("set -o errexit -o nounset\necho $COHORT ${OUT:-/tmp} ${N:=3} ${M+x}\n") == [
        ("COHORT", 4)
    ]
    assert _required("echo $COHORT\n") == []  # unset is empty without set -u: the script goes on
    assert _required("set -u\nfor f in a b; do echo $f; done\nread -r x; echo $x $SLURM_JOB_ID $HOME\n") == []
    assert _required("set -u\nsource /fsx/env.sh\necho $DATA\n") == []
    assert _required("set -u\nmodule load gromacs\necho $EBROOTGROMACS\n") == []


def test_each_variable_the_script_stops_without_is_said_and_recorded_with_its_line() -> None:
    text = (
        "#!/bin/bash\n#SBATCH -J eval\n#SBATCH -N 1\n"
        ': "${CKPT:?set CKPT to the checkpoint directory}"\nAUDIO=${1:?usage}\n'
        'python eval.py "$CKPT" "$AUDIO"\n'
    )
    t = _translate(text, BASE)
    said = [(d.message, d.line) for d in t.diagnostics if d.code == "TRANSLATE-SUBMITTER-VARIABLE"]
    assert [line for _, line in said] == [4, 5]
    assert "$CKPT of the submitter's environment" in said[0][0] and "container's env" in said[0][0]
    assert "argument 1 of the sbatch command line" in said[1][0]
    dropped = {e.item: e.line for e in t.fidelity.entries if e.status == "dropped"}
    assert dropped["$CKPT"] == 4 and dropped["$1"] == 5


def test_what_the_script_sets_in_ways_other_than_assignment_or_in_functions_is_not_asked() -> None:
    assert _required("set -euo pipefail\nmapfile -t STEPS < <(ls)\nfor s in ${STEPS[@]}; do :; done\n") == []
    body = "set -u\nf() {\n  local label=$1\n  echo $label >> $PROM\n}\nPROM=/tmp/x\nf a\n"
    assert _required(body) == []
