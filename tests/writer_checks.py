"""What a writer wrote, compared with what a test expects: the options of an sbatch script, values in
the Kubernetes objects, fidelity entries, diagnostic codes and texts (see ``one_line``)."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from functools import partial
from typing import Any

from ir_paths import value_problems

from migrate.diagnostics import Collector
from migrate.fidelity import Translation
from migrate.translators.slurm import directives
from migrate.vocab import FidelityStatus


class _Marker:
    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


ABSENT = _Marker("ABSENT")  # the option, field or key is not written at all
FLAG = _Marker("FLAG")  # the option is written without a value (--exclusive)


def main_file(translation: Translation) -> str:
    """The file a test reads: job.sbatch, or the one file the writer wrote."""
    if "job.sbatch" in translation.files:
        return translation.files["job.sbatch"]
    if len(translation.files) == 1:
        return next(iter(translation.files.values()))
    raise AssertionError(f"no job.sbatch nor one file among {sorted(translation.files)}")


def sbatch_options(text: str) -> dict[str, str | None]:
    """The #SBATCH options of a script as sbatch reads them (long name -> value, None for a flag)."""
    header = directives.read_header(directives.split_lines(text), Collector("x"))
    return {s.option.long: s.value for s in header.settings}


def _option_problems(text: str, expected: Mapping[str, object]) -> list[str]:
    options = sbatch_options(text)
    problems = []
    for long, want in expected.items():
        got: object = ABSENT if long not in options else FLAG if options[long] is None else options[long]
        if got != want:
            problems.append(f"sbatch --{long}: expected {want!r}, written {got!r}")
    return problems


def manifest_value(translation: Translation, pointer: str) -> object:
    """The value at ``Kind/json/pointer`` of the Kubernetes writer's objects (ABSENT where none)."""
    kind, _, rest = pointer.partition("/")
    bodies = [body for _, objects in translation.objects.values() for body in objects]
    of_kind = [body for body in bodies if body.get("kind") == kind]
    if len(of_kind) != 1:
        kinds = [body.get("kind") for body in bodies]
        raise KeyError(f"{pointer}: expected one {kind} among the objects written, found {kinds}")
    value: Any = of_kind[0]
    for token in rest.split("/") if rest else []:
        key = token.replace("~1", "/").replace("~0", "~")
        if isinstance(value, list) and key.isdigit() and int(key) < len(value):
            value = value[int(key)]
        elif isinstance(value, dict) and key in value:
            value = value[key]
        else:
            return ABSENT
    return value


def _fidelity_problems(
    translation: Translation, expected: Mapping[str, FidelityStatus | tuple[FidelityStatus, str]]
) -> list[str]:
    problems = []
    for needle, want in expected.items():
        entry = next((e for e in translation.fidelity.entries if needle in e.item), None)
        if entry is None:
            items = [e.item for e in translation.fidelity.entries]
            problems.append(f"fidelity {needle!r}: no entry mentions it; entries: {items}")
            continue
        # plain strings, so that the message shows 'mapped' rather than the enum's repr
        expected_plain = str(want) if isinstance(want, str) else (str(want[0]), want[1])
        got = str(entry.status) if isinstance(want, str) else (str(entry.status), entry.reason)
        if got != expected_plain:
            problems.append(f"fidelity {needle!r} ({entry.item}): expected {expected_plain!r}, got {got!r}")
    return problems


def written_problems(
    translation: Translation,
    sbatch: Mapping[str, object] | None,
    manifest: Mapping[str, object] | None,
    fidelity: Mapping[str, FidelityStatus | tuple[FidelityStatus, str]] | None,
    writer_codes: Collection[str] | None,
    contains: Sequence[str],
    lacks: Sequence[str],
) -> list[str]:
    problems = []
    if sbatch:
        problems += _option_problems(main_file(translation), sbatch)
    if manifest:
        value_at = partial(manifest_value, translation)
        problems += value_problems("manifest", manifest.items(), value_at, verb="written")
    problems += _fidelity_problems(translation, fidelity or {})
    if writer_codes is not None:
        got = sorted({d.code for d in translation.diagnostics})
        if got != sorted(set(writer_codes)):
            problems.append(f"writer diagnostics: expected {sorted(set(writer_codes))}, got {got}")
    if contains or lacks:
        text = main_file(translation)
        problems += [f"written text lacks {needle!r}" for needle in contains if needle not in text]
        problems += [f"written text has {needle!r}" for needle in lacks if needle in text]
    return problems


__all__ = ["ABSENT", "FLAG", "main_file", "manifest_value", "sbatch_options", "written_problems"]
