"""What the Kubernetes writer asks of a job's script several times is worked out once per script,
a scalar it writes in every manifest is spelled once, and the submit folder's patterns run only on the
lines that may hold them."""

from __future__ import annotations

import re
from typing import Any

import pytest

from migrate.diagnostics import Collector
from migrate.site.config import parse_site_config
from migrate.translators.kubernetes import pod_template, submit_dir, submitter, yamlemit
from migrate.translators.kubernetes.writer import translate_job
from migrate.translators.slurm import reader

SCRIPT = (
    "#!/bin/bash\n#SBATCH -J once\n#SBATCH -N 2\nOUT=/scratch/$USER/run\nmkdir -p ~/logs\n"
    "srun shifter --image=img:1 python train.py --out $OUT\n"
)


class _Counted:
    """A compiled pattern that counts its searches."""

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern = pattern
        self.calls = 0

    def findall(self, text: str) -> list[Any]:
        self.calls += 1
        return self.pattern.findall(text)


def _translate() -> Any:
    (job,) = reader.read(SCRIPT, "once.sbatch", Collector("once.sbatch"))
    site = parse_site_config({"site": "s", "defaults": {"image": "img:1", "namespace": "ns"}})
    return translate_job(job, site, "auto", style="emulate")


def test_the_submitters_variables_are_searched_once_per_script(monkeypatch: pytest.MonkeyPatch) -> None:
    counted = _Counted(submitter._READ)
    monkeypatch.setattr(submitter, "_READ", counted)
    submitter._read_in.cache_clear()
    translation = _translate()
    assert "USER" in "".join(translation.files.values())
    assert counted.calls == 1


def test_the_container_runtimes_are_searched_once_per_script(monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[_Counted] = []

    def counting(names: tuple[str, ...]) -> _Counted:
        made.append(_Counted(re.compile("|".join(map(re.escape, names)))))
        return made[-1]

    monkeypatch.setattr(pod_template, "_runtime_word", counting)
    pod_template._runtimes_started.cache_clear()
    translation = _translate()
    assert "shifter" in "".join(translation.files.values())
    assert sum(c.calls for c in made) == 1


def test_a_scalar_is_spelled_once(monkeypatch: pytest.MonkeyPatch) -> None:
    spelled: list[object] = []

    def written(value: object) -> str:
        spelled.append(value)
        return "spelled"

    monkeypatch.setattr(yamlemit, "_written", written)
    monkeypatch.setattr(yamlemit, "_SCALARS", {})
    assert [yamlemit.scalar("a b"), yamlemit.scalar("a b"), yamlemit.scalar(3), yamlemit.scalar(3)] == [
        "spelled"
    ] * 4
    assert spelled == ["a b", 3, 3]  # strings repeat in every manifest; numbers are spelled at once


def test_the_submit_folder_patterns_run_only_on_lines_that_may_hold_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    counted = {name: _Counted(getattr(submit_dir, name)) for name in ("_READ", "_RELATIVE")}
    for name, pattern in counted.items():
        monkeypatch.setattr(submit_dir, name, pattern)
    (job,) = reader.read(
        "#!/bin/bash\n#SBATCH -N 1\nmodule load cuda\necho start\npython train.py\ncd $PWD/run\n",
        "t.sbatch",
        Collector("t.sbatch"),
    )
    assert submit_dir.reads(job) == ["train.py", "$PWD"]
    # module, echo: neither; python train.py: a relative path only; cd $PWD/run: a read only
    assert (counted["_READ"].calls, counted["_RELATIVE"].calls) == (1, 1)
