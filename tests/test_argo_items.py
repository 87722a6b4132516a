"""An Argo fan-out's ``{{item}}`` on Slurm: each array task gets its own item from its task id.

The scripts run with bash (a stand-in ``srun`` that runs the program as is)
for two task ids each; what each task printed must be the item Argo would
have given that task.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from migrate.fidelity import Translation
from migrate.scan import scanner
from migrate.translate import translate_jobs
from migrate.translators.argo import items

WORKFLOW = """\
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: items}
spec:
  entrypoint: main
  templates:
  - name: main
    dag:
      tasks:
      - name: words
        template: show
        arguments: {parameters: [{name: v, value: "{{item}}"}]}
        withItems: ["it's", "a b", "$(HOME)", "`x` $y", "ünï", "*", 7, 0.5, true]
      - name: maps
        template: pair
        withItems: [{name: a, size: 1}, {name: "b'c <d>", size: 2.5, tags: [x, y]}]
      - name: down
        template: counted
        withSequence: {start: "5", end: "2", format: "n%03d"}
      - name: count
        template: counted
        withSequence: {count: "3", start: "10"}
      - name: listed
        template: show-env
        withParam: "{{tasks.words.outputs.result}}"
  - name: show
    inputs: {parameters: [{name: v}]}
    container: {image: busybox, command: [printf, "%s|"], args: ["{{inputs.parameters.v}}"]}
  - name: pair
    container:
      image: "busybox:{{item.name}}"
      command: [printf, "%s|%s|%s"]
      args: ["{{item.name}}", "{{ item.size }}", "{{item}}"]
  - name: counted
    script: {image: busybox, command: [sh], source: "echo \\"got {{item}}\\""}
  - name: show-env
    container:
      image: busybox
      command: [sh, -c, 'printf %s "$V"']
      env: [{name: V, value: "{{item}}"}]
"""
STAND_IN_SRUN = '#!/bin/bash\nwhile [[ $# -gt 0 && $1 == -* ]]; do shift; done\nexec "$@"\n'


@pytest.fixture(scope="module")
def translated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Translation]]:
    folder = tmp_path_factory.mktemp("items")
    source = folder / "items.yaml"
    source.write_text(WORKFLOW, encoding="utf-8")
    result = translate_jobs(scanner.scan([str(source)]).jobs, to="slurm", runtime="none")
    result.tree.commit(str(folder / "out"))
    bin_dir = folder / "bin"
    bin_dir.mkdir()
    (bin_dir / "srun").write_text(STAND_IN_SRUN)
    (bin_dir / "srun").chmod(0o755)
    return folder, {t.name: t for t in result.translations}


def _run(folder: Path, job: str, task_id: int) -> str:
    path = f"{folder / 'bin'}:{os.environ['PATH']}"
    env = {**os.environ, "PATH": path, "SLURM_ARRAY_TASK_ID": str(task_id)}
    env.pop("V", None)
    done = subprocess.run(
        ["bash", str(folder / "out" / job / "job.sbatch")],
        env=env,
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize(
    ("job", "task_id", "printed"),
    [
        ("items-words", 0, "it's|"),
        ("items-words", 3, "`x` $y|"),  # a value, never run as shell text
        ("items-words", 2, "$(HOME)|"),
        ("items-words", 5, "*|"),
        ("items-words", 8, "true|"),
        ("items-maps", 0, 'a|1|{"name":"a","size":1}'),
        ("items-maps", 1, 'b\'c <d>|2.5|{"name":"b\'c \\u003cd\\u003e","size":2.5,"tags":["x","y"]}'),
        ("items-down", 2, "got n005\n"),  # Argo counts down from the start: the first task gets it
        ("items-down", 5, "got n002\n"),
        ("items-count", 10, "got 10\n"),
        ("items-count", 12, "got 12\n"),
    ],
)
def test_each_array_task_prints_its_own_item(
    translated: tuple[Path, dict[str, Translation]], job: str, task_id: int, printed: str
) -> None:
    folder, _ = translated
    assert _run(folder, job, task_id) == printed


def test_the_arrays_cover_the_items(translated: tuple[Path, dict[str, Translation]]) -> None:
    folder, _ = translated
    arrays = {
        job: next(line for line in (folder / "out" / job / "job.sbatch").open() if "--array" in line).strip()
        for job in ("items-words", "items-maps", "items-down", "items-count")
    }
    assert arrays == {
        "items-words": "#SBATCH --array=0-8",
        "items-maps": "#SBATCH --array=0-1",
        "items-down": "#SBATCH --array=2-5",
        "items-count": "#SBATCH --array=10-12",
    }


def test_placeholders_no_task_can_fill_stay_and_are_reported(
    translated: tuple[Path, dict[str, Translation]],
) -> None:
    folder, by_name = translated
    listed = by_name["items-listed"]
    dropped = [(e.item, e.status.value) for e in listed.fidelity.entries if "{{item}}" in e.item]
    assert dropped == [
        ("{{item}} in container.env[0].value: the withParam items exist only at run time", "dropped")
    ]
    assert "'{{item}}'" in (folder / "out" / "items-listed" / "job.sbatch").read_text()
    maps = by_name["items-maps"]
    image = [e.item for e in maps.fidelity.entries if e.status.value == "dropped"]
    assert image == [
        "{{item.name}} in container.image: only the command, args, env values and script source vary per task"
    ]


def test_go_formats_become_printf_formats_or_none() -> None:
    assert items.printf_format("shard-%02d") == "shard-%02d"
    assert items.printf_format("%v of 100%%") == "%d of 100%%"
    assert items.printf_format("a\\b%x") == "a\\\\b%x"  # printf reads backslashes, Go does not
    assert items.printf_format("%s") is None
    assert items.printf_format("%d-%d") is None
    assert items.printf_format("plain") is None


def test_item_text_is_argos() -> None:
    assert items.go_json({"b": [1, 0.0001, None], "a": "x&y"}) == '{"a":"x\\u0026y","b":[1,0.0001,null]}'
    assert items.go_json(1e-7) == "1e-07"
    assert items.go_json(3.0) == "3"
