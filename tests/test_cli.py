"""The CLI through its real entry point: exit codes, JSON on stdout, no tracebacks."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import cli_runner

SBATCH = "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --frobnicate=3\nsrun hostname\n"


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return cli_runner.run(*args, cwd=cwd)


def test_scan_json_and_strict(tmp_path: Path) -> None:
    (tmp_path / "a.sbatch").write_text(SBATCH)
    res = run("scan", "--format", "json", str(tmp_path))
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["summary"]["jobs"] == 1
    strict = run("scan", "--strict", "--format", "json", str(tmp_path))
    assert strict.returncode == 1
    assert "Traceback" not in strict.stderr


def test_scan_table(tmp_path: Path) -> None:
    (tmp_path / "a.sbatch").write_text(SBATCH)
    res = run("scan", str(tmp_path))
    assert res.returncode == 0
    assert "a.sbatch" in res.stdout and "SLURM-UNKNOWN-OPTION" in res.stdout
    assert "1 job (" in res.stdout


def test_scan_reads_the_spank_options_of_the_nearest_site_configuration(tmp_path: Path) -> None:
    (tmp_path / "a.sbatch").write_text("#!/bin/bash\n#SBATCH --ssd-size=800G\nhostname\n")
    before = json.loads(run("scan", "--format", "json", "--no-cache", str(tmp_path)).stdout)
    [unknown] = before["files"][0]["diagnostics"]
    assert unknown["code"] == "SLURM-UNKNOWN-OPTION" and "spank_options" in unknown["message"]
    (tmp_path / "migrate.yaml").write_text("spank_options: [{name: --ssd-size, plugin: nvme-scratch}]\n")
    res = run("scan", "--format", "json", "--no-cache", str(tmp_path))
    [plugin] = json.loads(res.stdout)["files"][0]["diagnostics"]
    assert plugin["code"] == "SLURM-PLUGIN-OPTION" and "nvme-scratch" in plugin["message"]
    assert "spank_options are read" in res.stderr


def test_bad_usage_exits_2(tmp_path: Path) -> None:
    missing = run("scan", str(tmp_path / "nope"))
    assert missing.returncode == 2
    assert "no such file or folder" in missing.stderr
    assert "Traceback" not in missing.stderr
    bad_flag = run("scan", "--format", "xml", str(tmp_path))
    assert bad_flag.returncode == 2
    assert "Traceback" not in bad_flag.stderr


REPO = Path(__file__).resolve().parent.parent
SITE = str(REPO / "corpus" / "sample-site")


def test_plan_writes_deterministic_plan_json(tmp_path: Path) -> None:
    first = run("plan", SITE, "--to", "kubernetes", "--out", str(tmp_path / "a"))
    assert first.returncode == 0, first.stderr
    assert "pilot" in first.stdout and "shared file systems" in first.stdout
    second = run("plan", SITE, "--to", "kubernetes", "--format", "json")
    assert second.returncode == 0
    assert (tmp_path / "a" / "plan.json").read_text(encoding="utf-8") == second.stdout


def test_plan_coexistence_choice_and_its_files(tmp_path: Path) -> None:
    site = str(REPO / "corpus" / "coexistence" / "bridge")
    res = run("plan", site, "--to", "kubernetes", "--out", str(tmp_path))
    assert res.returncode == 0, res.stderr
    assert "coexistence: slurm-bridge (" in res.stdout
    assert sorted(p.name for p in (tmp_path / "coexistence").iterdir()) == ["README.md", "slurm.conf.bridge"]
    again = run("plan", site, "--to", "kubernetes", "--out", str(tmp_path), "--coexistence", "slinky")
    assert again.returncode == 2 and "--force" in again.stderr  # the files already there stay
    bad = run("plan", site, "--to", "kubernetes", "--coexistence", "shared")
    assert bad.returncode == 2 and "coexistence must be one of" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_validate_passes_the_slinky_files_plan_wrote(tmp_path: Path) -> None:
    """The values file next to the objects is checked as slurm chart values, not as an object.

    SlinkyProject/slurm-operator ``helm/slurm/values.yaml`` holds the chart's keys.
    """
    conf = str(REPO / "corpus" / "cluster" / "slurm.conf")
    res = run(
        "plan",
        SITE,
        "--to",
        "kubernetes",
        "--out",
        str(tmp_path),
        "--coexistence",
        "slinky",
        "--inventory",
        conf,
    )
    assert res.returncode == 0, res.stderr
    check = run("validate", str(tmp_path / "coexistence"))
    assert check.returncode == 0, check.stdout + check.stderr
    assert "slurm chart values 1" in check.stdout and "apiVersion" not in check.stdout


def test_plan_never_overwrites_without_force(tmp_path: Path) -> None:
    (tmp_path / "plan.json").write_text("mine\n")
    res = run("plan", SITE, "--to", "slurm", "--out", str(tmp_path))
    assert res.returncode == 2
    assert "--force" in res.stderr and "Traceback" not in res.stderr
    assert (tmp_path / "plan.json").read_text() == "mine\n"
    forced = run("plan", SITE, "--to", "slurm", "--out", str(tmp_path), "--force")
    assert forced.returncode == 0
    assert json.loads((tmp_path / "plan.json").read_text())["direction"] == "to_slurm"


def test_plan_bad_config_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "site.yaml"
    bad.write_text("partitions: [1, 2]\n")
    res = run("plan", SITE, "--to", "kubernetes", "--config", str(bad))
    assert res.returncode == 2
    assert "bad site configuration" in res.stderr and "Traceback" not in res.stderr
    missing = run("plan", SITE, "--to", "kubernetes", "--config", str(tmp_path / "nope.yaml"))
    assert missing.returncode == 2 and "no such site configuration" in missing.stderr


def test_graph_exports_graphml_and_json(tmp_path: Path) -> None:
    import networkx as nx

    res = run("graph", SITE, "--out", str(tmp_path))
    assert res.returncode == 0, res.stderr
    graph = nx.read_graphml(tmp_path / "graph.graphml")
    doc = json.loads((tmp_path / "graph.json").read_text())
    assert graph.number_of_nodes() == len(doc["nodes"]) > 30


def test_translate_then_validate(tmp_path: Path) -> None:
    out = tmp_path / "k8s"
    res = run("translate", SITE, "--to", "kubernetes", "--out", str(out))
    assert res.returncode == 0, res.stderr
    assert "jobs translated to kubernetes" in res.stdout
    doc = json.loads((out / "translation.json").read_text())
    assert doc["target"] == "kubernetes" and doc["jobs"]
    assert all(
        e["status"] in ("mapped", "approximated", "dropped") for j in doc["jobs"] for e in j["fidelity"]
    )
    check = run("validate", str(out))
    assert check.returncode == 0, check.stdout
    assert "0 problems" in check.stdout
    again = run("translate", SITE, "--to", "kubernetes", "--out", str(out))
    assert again.returncode == 2 and "--force" in again.stderr
    strict = run("translate", SITE, "--to", "kubernetes", "--out", str(out), "--force", "--strict")
    assert strict.returncode == 1 and "dropped" in strict.stderr


def test_validate_reports_problems(tmp_path: Path) -> None:
    bad = tmp_path / "job.yaml"
    bad.write_text(
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: x\nspec:\n  backoffLimitt: 2\n"
        "  template:\n    spec:\n      restartPolicy: Never\n      containers:\n"
        "      - name: c\n        image: busybox\n        gpus: 1\n"
    )
    res = run("validate", str(bad))
    assert res.returncode == 1
    assert "backoffLimitt" in res.stdout and "gpus" in res.stdout


def test_translate_unknown_flavor(tmp_path: Path) -> None:
    res = run("translate", SITE, "--to", "kubernetes", "--out", str(tmp_path), "--flavor", "swarm")
    assert res.returncode == 2 and "flavor" in res.stderr and "Traceback" not in res.stderr


def test_init_writes_a_config_that_plan_reads(tmp_path: Path) -> None:
    target = tmp_path / "migrate.yaml"
    res = run("init", SITE, "--site", "nw1", "--out", str(target))
    assert res.returncode == 0, res.stderr
    text = target.read_text()
    assert "REPLACE-ME" in text and "prefix: /fsx" in text and "gpu-h100:" in text
    plan = run("plan", SITE, "--to", "kubernetes", "--config", str(target), "--format", "json")
    assert plan.returncode == 0, plan.stderr
    assert json.loads(plan.stdout)["site"] == "nw1"
    again = run("init", SITE, "--out", str(target))
    assert again.returncode == 2 and "--force" in again.stderr


def test_report_with_translation(tmp_path: Path) -> None:
    out = tmp_path / "report"
    res = run("report", SITE, "--to", "kubernetes", "--translate", "--out", str(out))
    assert res.returncode == 0, res.stderr
    for name in ("report.md", "report.html", "plan.json", "img/graph.svg", "translated/translation.json"):
        assert (out / name).is_file(), name
    html = (out / "report.html").read_text()
    assert "Translation" in html and "translated/" in html
    again = run("report", SITE, "--to", "kubernetes", "--out", str(out))
    assert again.returncode == 2 and "--force" in again.stderr


def test_report_translates_the_chains_with_the_workflow_it_is_given(tmp_path: Path) -> None:
    chains = str(Path(SITE).parent / "cases" / "slurm" / "chains")
    written = {}
    for workflow in ("jobflow", "script"):
        out = tmp_path / workflow
        res = run(
            "report", chains, "--to", "kubernetes", "--translate", "--workflow", workflow, "--out", str(out)
        )
        assert res.returncode == 0, res.stderr
        written[workflow] = {p.name for p in (out / "translated").iterdir() if p.is_file()}
    assert "jobflow.yaml" in written["jobflow"] and "submit.sh" not in written["jobflow"]
    assert "submit.sh" in written["script"] and not {"jobflow.yaml", "workflow.yaml"} & written["script"]


def test_translate_to_slurm_then_validate(tmp_path: Path) -> None:
    out = tmp_path / "slurm"
    res = run("translate", SITE, "--to", "slurm", "--container-runtime", "apptainer", "--out", str(out))
    assert res.returncode == 0, res.stderr
    assert "jobs translated to slurm" in res.stdout
    scripts = sorted(out.rglob("*.sbatch"))
    assert scripts and all(p.read_text().startswith("#!") for p in scripts)
    assert any("apptainer exec" in p.read_text() for p in scripts)
    check = run("validate", str(out))
    assert "slurm:" in check.stdout and "scripts checked " in check.stdout


def test_the_command_line_loads_the_library_only_when_a_command_runs() -> None:
    """``migrate --help`` stays fast: the readers, the planner and rich load with a command
    (the vocabulary the options are spelled in is a few enums)."""
    probe = (
        "import sys, migrate.cli; "
        "print(sorted(m for m in sys.modules if m.startswith(('migrate.', 'rich', 'bashlex', 'networkx'))))"
    )
    res = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "['migrate.cli', 'migrate.vocab']"


def test_scan_help_names_the_library_default_size_limit() -> None:
    from migrate.scan.results import DEFAULT_MAX_BYTES

    res = run("scan", "--help")
    assert res.returncode == 0, res.stderr
    assert f"{DEFAULT_MAX_BYTES >> 20} MiB" in " ".join(res.stdout.split())


def test_each_direction_takes_its_own_writer_option() -> None:
    from migrate import cli

    kubernetes, slurm = cli.Target.kubernetes, cli.Target.slurm
    assert cli._writer_choice(kubernetes, None, None) == "auto"
    assert cli._writer_choice(kubernetes, "jobset", None) == "jobset"
    assert cli._writer_choice(slurm, None, None) == "pyxis"
    assert cli._writer_choice(slurm, None, "apptainer") == "apptainer"


def test_translate_reads_the_inventory_and_strict_fails_on_what_a_job_loses(tmp_path: Path) -> None:
    (tmp_path / "migrate.yaml").write_text(
        "partitions:\n  gpu: {queue: gpu-queue, node_selector: {pool: gpu}}\n", encoding="utf-8"
    )
    (tmp_path / "train.sbatch").write_text(
        "#!/bin/bash\n#SBATCH -N 2 --exclusive\nsrun python train.py\n", encoding="utf-8"
    )
    conf = tmp_path / "slurm.conf"
    conf.write_text(
        "NodeName=g[1-4] CPUs=96 RealMemory=500000 Gres=gpu:8\nPartitionName=gpu Nodes=g[1-4] Default=YES\n"
    )
    out = tmp_path / "k8s"
    res = run(
        "translate",
        str(tmp_path / "train.sbatch"),
        "--to",
        "kubernetes",
        "--out",
        str(out),
        "--config",
        str(tmp_path / "migrate.yaml"),
        "--inventory",
        str(conf),
        "--strict",
    )
    assert res.returncode == 1, res.stderr
    assert "give jobs less than Slurm allocated them" in res.stderr  # the node keeps CPUs for the kubelet
    (job,) = json.loads((out / "translation.json").read_text())["jobs"]
    assert any(e.get("loses") for e in job["fidelity"])
    manifest = next(p for p in out.rglob("*.yaml") if "train" in str(p))
    assert "nvidia.com/gpu: '8'" in manifest.read_text()  # the default partition's GPUs, from slurm.conf
    missing = run(
        "translate",
        str(tmp_path),
        "--to",
        "kubernetes",
        "--out",
        str(tmp_path / "x"),
        "--inventory",
        str(tmp_path / "nope.conf"),
    )
    assert missing.returncode == 2 and "--inventory" in missing.stderr
