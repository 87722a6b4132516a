"""Template values (--set, --env-file): filled before reading; what has no value is read as unknown."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import CORPUS, GOLDEN
from golden import check_json

from migrate import api
from migrate.scan import scanner, templates
from migrate.scan.results import ScanOptions
from migrate.translate import translate_jobs
from migrate.vocab import Format, PlaceholderRole

MANIFEST = CORPUS / "cases/kubernetes/pytorchjob_envsubst.yaml"
ENV_FILE = CORPUS / "cases/kubernetes/pytorch_envsubst.env"
SBATCH = CORPUS / "cases/slurm/envsubst_template.sbatch.in"


def _values() -> templates.Values:
    return api.template_values([], [str(ENV_FILE)])


def test_env_file_reads_export_and_dotenv_lines_with_shell_quotes() -> None:
    text = "# c\nexport A=1\nB='two words'  # note\nC=\"x y\"\nset -a\nexport D=\nE=1 F=2\nG=3 make\n"
    expected = {"A": "1", "B": "two words", "C": "x y", "D": "", "E": "1", "F": "2"}
    assert templates.parse_env_file(text, "f") == expected
    with pytest.raises(templates.ValuesError):
        templates.parse_env_file("A='open\n", "f")


def test_set_wins_over_env_file_and_bad_assignments_are_usage_errors(tmp_path: Path) -> None:
    env = tmp_path / "v.env"
    env.write_text("NUM_NODES=2\n")
    assert dict(api.template_values(["NUM_NODES=8"], [str(env)]))["NUM_NODES"] == "8"
    with pytest.raises(api.UsageError, match="NAME=VALUE"):
        api.template_values(["1X=3"])
    with pytest.raises(api.UsageError, match="no such file"):
        api.template_values([], [str(tmp_path / "missing.env")])


def test_fill_is_envsubst_for_given_names_only_and_keeps_lines() -> None:
    text = "a: $A\nb: ${B}\nc: $C\n"
    filled = templates.fill(text, Format.KUBERNETES, (("A", "1"), ("B", "2")))
    assert filled == "a: 1\nb: 2\nc: $C\n"
    script = "#!/bin/bash\n#SBATCH -A <ACCOUNT> -N ${N}\necho ${N} <ACCOUNT>\n"
    filled = templates.fill(script, Format.SLURM, (("ACCOUNT", "ml"), ("N", "2")))
    assert filled == "#!/bin/bash\n#SBATCH -A ml -N 2\necho ${N} <ACCOUNT>\n"  # the body is the shell's


def test_without_values_one_templated_warning_and_no_field_errors() -> None:
    result = scanner.scan([str(MANIFEST)])
    codes = [d.code for d in result.diagnostics]
    assert codes == ["K8S-TEMPLATED"]
    message = result.diagnostics[0].message
    for name in ("RUN_NAME", "NUM_NODES", "IMAGE_URI", "GPU_PER_NODE", "MODEL_CONFIG"):
        assert f"${name}" in message
    (job,) = result.jobs
    roles = {u.name: u.role for u in job.unresolved}
    assert roles["NUM_NODES"] == PlaceholderRole.NODES
    assert roles["GPU_PER_NODE"] == PlaceholderRole.GPUS
    assert roles["IMAGE_URI"] == PlaceholderRole.OTHER


def test_with_values_the_template_reads_as_rendered() -> None:
    result = scanner.scan([str(MANIFEST)], ScanOptions(values=_values()))
    assert result.diagnostics == []
    (job,) = result.jobs
    assert job.total_nodes() == 4 and job.total_gpus() == 32 and not job.unresolved
    assert job.components[0].containers[0].image.endswith("llm-train:2024.06")


def test_sbatch_placeholders_are_filled_in_directives() -> None:
    values = api.template_values(
        ["RUN_NAME=r1", "NODES=2", "GPUS_PER_NODE=4", "WALLTIME=2:00:00", "PARTITION=gpu", "ACCOUNT=ml"]
    )
    result = scanner.scan([str(SBATCH)], ScanOptions(values=values))
    assert [d.code for d in result.diagnostics] == []
    (job,) = result.jobs
    assert job.total_nodes() == 2 and job.total_gpus() == 8 and job.time_limit_s == 7200
    bare = scanner.scan([str(SBATCH)]).jobs[0]
    assert {u.name for u in bare.unresolved if u.role == PlaceholderRole.NODES} == {"NODES"}


def test_values_are_part_of_the_cache_key(tmp_path: Path) -> None:
    cold = scanner.scan([str(MANIFEST)], ScanOptions(cache=str(tmp_path)))
    warm = scanner.scan([str(MANIFEST)], ScanOptions(cache=str(tmp_path), values=_values()))
    assert cold.jobs[0].unresolved and not warm.jobs[0].unresolved
    again = scanner.scan([str(MANIFEST)], ScanOptions(cache=str(tmp_path)))
    assert again.jobs[0].unresolved == cold.jobs[0].unresolved


def test_a_placeholder_count_never_becomes_a_default_in_the_script() -> None:
    job = scanner.scan([str(MANIFEST)]).jobs[0]
    t = translate_jobs([job], to="slurm").translations[0]
    script = t.files["job.sbatch"]
    assert "#SBATCH --nodes" not in script and "#SBATCH --gres" not in script
    dropped = {e["item"] for e in t.fidelity.to_list() if e["status"] == "dropped"}
    assert any("$NUM_NODES" in item for item in dropped)
    assert any("$GPU_PER_NODE" in item for item in dropped)
    assert sum(d.code == "TO-SLURM-UNRESOLVED" for d in t.diagnostics) >= 2

    rendered = scanner.scan([str(MANIFEST)], ScanOptions(values=_values())).jobs[0]
    script = translate_jobs([rendered], to="slurm").translations[0].files["job.sbatch"]
    assert "#SBATCH --nodes=4" in script and "gpu:8" in script


def test_sbatch_placeholder_is_dropped_towards_kubernetes() -> None:
    job = scanner.scan([str(SBATCH)]).jobs[0]
    t = translate_jobs([job], to="kubernetes").translations[0]
    entries = {e["item"]: e for e in t.fidelity.to_list()}
    assert entries["--nodes=${NODES}"]["status"] == "dropped"
    assert "$NODES" in entries["--nodes=${NODES}"]["reason"]


def test_cli_scan_takes_set_and_env_file() -> None:
    base = [sys.executable, "-c", "from migrate.cli import main; main()", "scan", "--no-cache", str(MANIFEST)]
    res = subprocess.run(
        [*base, "--env-file", str(ENV_FILE), "--set", "NUM_NODES=2"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 0, res.stderr
    assert "2 nodes and 16 GPUs requested" in res.stdout
    res = subprocess.run([*base, "--set", "oops"], capture_output=True, text=True, timeout=120)
    assert res.returncode == 2 and "NAME=VALUE" in res.stderr


def test_init_lists_the_variables_the_templates_need(tmp_path: Path) -> None:
    out = tmp_path / "migrate.yaml"
    run = api.run_init([str(MANIFEST), str(SBATCH)], str(out))
    listed = [line for line in run.text.splitlines() if line.startswith("#   ")]
    names = {line.split()[1]: line.split()[2] for line in listed}
    assert names["NUM_NODES"] == "nodes" and names["GPU_PER_NODE"] == "gpus" and names["NODES"] == "nodes"
    assert any(line.endswith("pytorchjob_envsubst.yaml:12") for line in listed)
    given = api.run_init(
        [str(MANIFEST)], str(tmp_path / "given.yaml"), templating=api.template_inputs([], [str(ENV_FILE)])
    )
    assert "Template variables" not in given.text


def _run_script(script: str, tmp_path: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Run a translated script with stand-ins for srun and scontrol (which print what they were given)."""
    path = tmp_path / "job.sbatch"
    path.write_text(script)
    stand_ins = "srun() { printf '%s\\n' \"$@\"; }; scontrol() { echo node-1; }; export -f srun scontrol"
    return subprocess.run(
        ["bash", "-c", f"{stand_ins}; bash {path}"],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", **env},
    )


def test_a_placeholder_in_the_script_is_read_from_the_environment_sbatch_runs_in(tmp_path: Path) -> None:
    job = scanner.scan([str(MANIFEST)]).jobs[0]
    t = translate_jobs([job], to="slurm").translations[0]
    script = t.files["job.sbatch"]
    assert "'${IMAGE_URI}'" not in script and "=$GPU_PER_NODE'" not in script
    values = {"IMAGE_URI": "registry.example/llm:1", "GPU_PER_NODE": "8", "MODEL_CONFIG": "llama-7b"}
    ran = _run_script(script, tmp_path, values)
    assert ran.returncode == 0, ran.stderr
    argv = ran.stdout.splitlines()
    assert "--container-image=registry.example/llm:1" in argv
    assert "--nproc_per_node=8" in argv and "--config=/workspace/configs/llama-7b.yaml" in argv
    unset = _run_script(script, tmp_path, {k: v for k, v in values.items() if k != "IMAGE_URI"})
    assert unset.returncode != 0 and "IMAGE_URI: is a template placeholder" in unset.stderr
    assert unset.stdout == ""  # stopped before srun


def test_open_to_shell_leaves_comments_and_shell_text_alone() -> None:
    from migrate.translators.slurm import placeholders

    body = ["# uses ${A}", "echo '${A}-x' \"${A}\" ${B}", "printf 'it''s $A'"]
    opened, found = placeholders.open_to_shell(body, ["A"])
    assert opened == ["# uses ${A}", "echo ''\"${A}\"'-x' \"${A}\" ${B}", "printf 'it''s '\"${A}\"''"]
    assert found == ["A"]


def test_validate_checks_the_template_with_its_values() -> None:
    bare = api.run_validate(str(MANIFEST))
    assert not bare.kubernetes.ok
    filled = api.run_validate(str(MANIFEST), api.template_inputs([], [str(ENV_FILE)]))
    assert filled.kubernetes.ok, filled.kubernetes.to_dict()


WITH_VALUES_GOLDEN = GOLDEN / "templates"


@pytest.mark.parametrize(
    ("source", "to", "given"),
    [
        (MANIFEST, "slurm", {"env_files": [str(ENV_FILE)]}),
        (
            SBATCH,
            "kubernetes",
            {
                "assignments": [
                    "RUN_NAME=sft-7b",
                    "NODES=2",
                    "GPUS_PER_NODE=8",
                    "WALLTIME=12:00:00",
                    "PARTITION=gpu",
                    "ACCOUNT=ml-research",
                    "IMAGE=nvcr.io/nvidia/pytorch:24.05-py3",
                ]
            },
        ),
    ],
)
def test_golden_with_values(
    source: Path, to: str, given: dict[str, list[str]], in_repo: Path, update_golden: bool
) -> None:
    """The envsubst examples with their values: the scan (no diagnostics) and the translation."""
    rel = str(source.relative_to(CORPUS.parent))
    values = api.template_values(given.get("assignments", []), given.get("env_files", []))
    result = scanner.scan([rel], ScanOptions(values=values))
    assert [d for d in result.diagnostics if d.severity != "info"] == []
    t = translate_jobs(result.jobs, to=to).translations[0]
    golden = {
        "source": rel,
        "values": dict(values),
        "scan": result.files[0].to_dict(),
        "translation": {
            "files": dict(sorted(t.files.items())),
            "fidelity": t.fidelity.to_list(),
            "diagnostics": [d.to_dict() for d in t.diagnostics],
        },
    }
    check_json(WITH_VALUES_GOLDEN / (source.name + ".with-values.json"), golden, update_golden)


def test_cli_translate_and_plan_take_the_values(tmp_path: Path) -> None:
    cli = [sys.executable, "-c", "from migrate.cli import main; main()"]
    out = tmp_path / "out"
    res = subprocess.run(
        [*cli, "translate", str(MANIFEST), "--to", "slurm", "-o", str(out), "--env-file", str(ENV_FILE)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 0, res.stderr
    (script,) = out.rglob("job.sbatch")
    assert "#SBATCH --nodes=4" in script.read_text()
    res = subprocess.run(
        [*cli, "plan", str(MANIFEST), "--to", "slurm", "-f", "json", "--set", "NUM_NODES=3"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 0, res.stderr
    assert '"gpus_placeholder"' in res.stdout and '"nodes_placeholder"' not in res.stdout


def test_validate_of_one_script_checks_it_with_the_values(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SLURM_CONF", raising=False)  # the static check: no controller
    script = tmp_path / "train.sbatch"
    script.write_text("#!/bin/bash\n#SBATCH --nodes=${NUM_NODES}\nsrun true\n", encoding="utf-8")
    [bare] = api.run_validate(str(script)).slurm
    assert (bare.path, bare.accepted) == (str(script), False)
    [filled] = api.run_validate(str(script), api.template_inputs(["NUM_NODES=4"], [])).slurm
    assert (filled.path, filled.accepted) == (str(script), True), filled.message
