"""One-line checks of reading and writing, one case a line (in the manner of sqlglot's tests).

- ``validate_identity(directives)``: sbatch lines read and written back by the Slurm writer give the same
  ``#SBATCH`` lines, or the normal form given as ``write`` (itself written back unchanged).
- ``validate_all(source, ir=..., diagnostics=..., sbatch=..., manifest=..., fidelity=...)``: what one
  source reads as and what a writer makes of it, checked at once.
- ``validate_roundtrip(source, fields)``: sbatch -> Kubernetes -> sbatch keeps the named IR fields.

A source of comment lines only (``#SBATCH`` lines without a shebang) is the header of a script: a
shebang goes before it and ``srun hostname`` after, so its first line is line 2, as the diagnostics
count it. Any other source is a whole script.
Each failure names the field, option or line that differs, with the expected and the actual value.
"""

from __future__ import annotations

import textwrap
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from ir_paths import ir_problems, ir_value, split_paths
from writer_checks import ABSENT, FLAG, main_file, sbatch_options, written_problems

from migrate import ir
from migrate.diagnostics import Collector, Diagnostic
from migrate.fidelity import Translation
from migrate.serialize import job_from_dict, job_to_dict
from migrate.site.config import SiteConfig
from migrate.translators.kubernetes import reader as kubernetes_reader
from migrate.translators.kubernetes import writer as kubernetes_writer
from migrate.translators.slurm import reader as slurm_reader
from migrate.translators.slurm import writer as slurm_writer
from migrate.vocab import FidelityStatus

SHEBANG = "#!/bin/bash\n"
BODY = "srun hostname\n"
SBATCH_PATH = "job.sbatch"
MANIFEST_PATH = "job.yaml"

# A diagnostic as expected: its code; (code, line); (code, severity); (code, severity, line).
ExpectedDiagnostic = str | tuple[str, int] | tuple[str, str] | tuple[str, str, int]


@dataclass
class Checked:
    """What a check read and wrote, for the few assertions a table cannot say."""

    job: ir.Job
    diagnostics: list[Diagnostic]
    translation: Translation | None = None

    @property
    def written(self) -> Translation:
        assert self.translation is not None, "nothing was written: give sbatch=, manifest= or fidelity="
        return self.translation

    @property
    def text(self) -> str:
        """The main file the writer wrote: job.sbatch, or the Kubernetes writer's one file."""
        return main_file(self.written)


def sbatch_script(source: str) -> str:
    """``source`` as a whole script: a header (comment lines only, no shebang) gets a shebang before
    it and a body after it; anything else is a whole script already."""
    lines = [line.strip() for line in source.split("\n")]
    if source.startswith(("#!", "\ufeff")) or any(line and not line.startswith("#") for line in lines):
        return source
    return SHEBANG + source.rstrip("\n") + "\n" + BODY


# ---------------------------------------------------------------------------
# validate_identity


def validate_identity(source: str, write: str | None = None, *, config: SiteConfig | None = None) -> None:
    """The ``#SBATCH`` lines of ``source``, read and written back, are those of ``write`` (default:
    ``source``'s own). A ``write`` that differs is the normal form: it must come back unchanged too."""
    expected = _directive_lines(sbatch_script(write if write is not None else source))
    written = _written_directives(source, config)
    if written != expected:
        raise AssertionError(f"{source!r} was written back differently\n" + _line_diff(expected, written))
    if write is not None and _directive_lines(sbatch_script(source)) != expected:
        validate_identity(write, config=config)


def _written_directives(source: str, config: SiteConfig | None) -> list[str]:
    job = _one(_read_sbatch(sbatch_script(source), SBATCH_PATH, Collector(SBATCH_PATH)), source)
    return _directive_lines(main_file(slurm_writer.translate_job(job, config, "pyxis")))


def _directive_lines(text: str) -> list[str]:
    return [line for line in text.split("\n") if line.startswith("#SBATCH")]


def _line_diff(expected: list[str], written: list[str]) -> str:
    out = []
    for n in range(max(len(expected), len(written))):
        want = expected[n] if n < len(expected) else "(no line)"
        got = written[n] if n < len(written) else "(no line)"
        if want != got:
            out.append(f"  directive {n + 1}: expected {want!r}, written {got!r}")
    return "\n".join(out)


# ---------------------------------------------------------------------------
# validate_all


def validate_all(
    source: str,
    *,
    read: str = "slurm",
    path: str | None = None,
    ir: Mapping[str, object] | None = None,
    diagnostics: Sequence[ExpectedDiagnostic] | None = None,
    sbatch: Mapping[str, object] | None = None,
    manifest: Mapping[str, object] | None = None,
    fidelity: Mapping[str, FidelityStatus | tuple[FidelityStatus, str]] | None = None,
    writer_codes: Collection[str] | None = None,
    contains: Sequence[str] = (),
    lacks: Sequence[str] = (),
    config: SiteConfig | None = None,
    runtime: str = "pyxis",
) -> Checked:
    """Read ``source`` (an sbatch script, or with ``read="kubernetes"`` a manifest) into its one job
    and check, all at once, every expectation given:

    ``ir``: paths into the job (``resources.gpus_per_node``, see ``ir_paths``) -> values;
    ``diagnostics``: the reader's, all of them in order;
    ``sbatch``: the options of the Slurm writer's job.sbatch as sbatch reads them (FLAG, ABSENT);
    ``manifest``: ``Kind/json/pointer`` into the Kubernetes writer's objects -> values (ABSENT);
    ``fidelity``: the first entry mentioning each needle -> its status, or (status, reason);
    ``writer_codes``: the writer's diagnostic codes, all of them; ``contains`` / ``lacks``: texts
    that are, or are not, in the file written. Those five are of the one writer that ``sbatch`` or
    ``manifest`` names; without either, of the other scheduler's writer.
    """
    problems: list[str] = []
    collector = Collector(path or _default_path(read))
    job = _read_one(source, read, path or _default_path(read), collector)
    problems += ir_problems(job, ir or {}, "ir")
    if diagnostics is not None:
        problems += _diagnostic_problems(collector.items, diagnostics)
    target = _target(read, sbatch, manifest, fidelity, writer_codes, contains, lacks)
    translation = None
    if target is not None:
        translation = _write(job, target, config, runtime)
        problems += written_problems(translation, sbatch, manifest, fidelity, writer_codes, contains, lacks)
    if problems:
        raise AssertionError(f"{_shown(source)}:\n" + "\n".join(f"  {p}" for p in problems))
    return Checked(job, collector.items, translation)


def _default_path(read: str) -> str:
    return MANIFEST_PATH if read == "kubernetes" else SBATCH_PATH


def _read_one(source: str, read: str, path: str, collector: Collector) -> ir.Job:
    if read == "slurm":
        return _one(_read_sbatch(sbatch_script(source), path, collector), source)
    if read == "kubernetes":
        jobs = kubernetes_reader.read(textwrap.dedent(source), path, collector)
        return _one([j for j in jobs if j.kind != "ConfigMap"], source)
    raise ValueError(f"read={read!r}: the readers are 'slurm' and 'kubernetes'")


def _read_sbatch(text: str, path: str, collector: Collector) -> list[ir.Job]:
    jobs = slurm_reader.read(text, path, collector)
    for job in jobs:  # everything the reader builds survives the JSON round trip
        again = job_from_dict(job_to_dict(job))
        assert again == job, f"{job.id}: the JSON round trip changed the job:\n{again}\n!=\n{job}"
    return jobs


def _one(jobs: list[ir.Job], source: str) -> ir.Job:
    assert len(jobs) == 1, f"{_shown(source)}: expected one job, read {len(jobs)}: {[j.kind for j in jobs]}"
    return jobs[0]


def _shown(source: str) -> str:
    text = source.strip("\n")
    return repr(text) if "\n" not in text else "\n" + textwrap.indent(text, "  | ")


def _target(read: str, sbatch: object, manifest: object, *translation_checks: object) -> str | None:
    if sbatch is not None and manifest is not None:
        raise TypeError("give sbatch= or manifest=, not both: fidelity and the rest are of one writer")
    if sbatch is not None:
        return "slurm"
    if manifest is not None:
        return "kubernetes"
    if any(check for check in translation_checks):
        return "kubernetes" if read == "slurm" else "slurm"
    return None


def _write(job: ir.Job, target: str, config: SiteConfig | None, runtime: str) -> Translation:
    if target == "slurm":
        return slurm_writer.translate_job(job, config, runtime)
    return kubernetes_writer.translate_job(job, config)


# ---------------------------------------------------------------------------
# Diagnostics


def _as_expected(diag: Diagnostic, like: ExpectedDiagnostic) -> object:
    """``diag`` in the shape of one expected item, so that the two compare and print alike."""
    if isinstance(like, str):
        return diag.code
    if len(like) == 3:
        return (diag.code, diag.severity, diag.line)
    if isinstance(like[1], int):
        return (diag.code, diag.line)
    return (diag.code, diag.severity)


def _diagnostic_problems(diags: list[Diagnostic], expected: Sequence[ExpectedDiagnostic]) -> list[str]:
    full = [(d.code, d.severity, d.line) for d in diags]
    if len(diags) != len(expected):
        return [f"diagnostics: expected {list(expected)!r}, got {full!r}"]
    got = [_as_expected(d, want) for d, want in zip(diags, expected, strict=True)]
    return [
        f"diagnostic {n}: expected {want!r}, got {have!r} (all: {full!r})"
        for n, (want, have) in enumerate(zip(expected, got, strict=True), 1)
        if want != have
    ]


# ---------------------------------------------------------------------------
# validate_roundtrip


@dataclass
class Trip:
    """One job's way sbatch -> Kubernetes -> sbatch: the three reads and the two translations."""

    before: ir.Job
    to_kubernetes: Translation
    kubernetes: ir.Job
    to_slurm: Translation
    after: ir.Job


def validate_roundtrip(
    source: str,
    fields: Sequence[str],
    *,
    kubernetes: Mapping[str, object] | None = None,
    config: SiteConfig | None = None,
    style: str = "emulate",
) -> Trip:
    """The sbatch ``source`` written as manifests (``style`` emulate: the script rides along in a
    ConfigMap), those read back and written as sbatch again: each of ``fields`` (IR paths, as in
    ``validate_all``) is the same in the job read at the end as in the first; where the writers may
    spell a request another way, name the computed view (``resources.computed_nodes()``).
    ``kubernetes``: values the job read from the manifests has (IR paths -> values)."""
    before = _one(_read_sbatch(sbatch_script(source), SBATCH_PATH, Collector(SBATCH_PATH)), source)
    to_kubernetes = kubernetes_writer.translate_job(before, config, style=style)
    ((file, text),) = to_kubernetes.files.items()
    read_back = kubernetes_reader.read(text, file, Collector(file))
    middle = _one([j for j in read_back if j.kind != "ConfigMap"], f"the manifests of {source!r}")
    to_slurm = slurm_writer.translate_job(middle, config, "pyxis")
    after = _one(_read_sbatch(main_file(to_slurm), "back.sbatch", Collector("back.sbatch")), source)
    problems = ir_problems(middle, kubernetes or {}, "kubernetes")
    for path in (one for paths in fields for one in split_paths(paths)):
        try:
            want, got = ir_value(before, path), ir_value(after, path)
        except KeyError as exc:
            problems.append(str(exc.args[0]))
            continue
        if got != want:
            problems.append(
                f"{path}: read {want!r}, came back {got!r} (Kubernetes: {_value_or_none(middle, path)})"
            )
    if problems:
        raise AssertionError(
            f"{_shown(source)} made the round trip with changes:\n  " + "\n  ".join(problems)
        )
    return Trip(before, to_kubernetes, middle, to_slurm, after)


def _value_or_none(job: ir.Job, path: str) -> str:
    try:
        return repr(ir_value(job, path))
    except KeyError:
        return "no such field"


__all__ = [
    "ABSENT",
    "FLAG",
    "Checked",
    "Trip",
    "sbatch_options",
    "sbatch_script",
    "validate_all",
    "validate_identity",
    "validate_roundtrip",
]
