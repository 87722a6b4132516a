"""sbatch scripts, wrapper scripts and scrontab files -> IR jobs.

``sniff`` tells by content whether a text is one of them; ``read`` turns it
into ``ir.Job`` values. The header is read by :mod:`.directives`, each option
lands where its row of :mod:`.options` says, the shell body is handed to the
shell analysis, and whatever has no typed field is kept as an ``ir.RawItem``
with its line. ``read`` never raises: one bad line gives a diagnostic and the
rest of the file is still read.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TypeVar

from migrate import ir
from migrate.diagnostics import CODES, WARNING, Collector
from migrate.translators.interfaces import NO_CONTEXT, ReadContext
from migrate.vocab import ContainerRuntime, EnvOrigin, Format, JobKind, MountKind, SecretKind, StorageVia

from ..shell import slurm_cli
from ..shell.analyze import analyze
from ..shell.conceal import analyzed
from ..shell.containers import split_mounts
from ..shell.facts import BodyFacts
from ..shell.launchers import SHELLS
from ..shell.redact import export_names_only, export_names_only_lines, literal_credential, redact
from . import directives, options
from .directives import Header, Setting, Unknown
from .options import OptionKind
from .raw_keys import RAW_KEYS

_CALLS_SBATCH = re.compile(r"(?:^|[\s;&|(`{])sbatch(?=[\s;&|)`]|$)", re.MULTILINE)
_CALLS_SRUN = re.compile(r"(?:^|[\s;&|(`{])srun(?=\s|$)", re.MULTILINE)
_CALLS_SALLOC = re.compile(r"(?:^|[\s;&|(`{])salloc(?=\s|$)", re.MULTILINE)
_ARRAY_VARS = re.compile(r"\$\{?SLURM_ARRAY_TASK_ID\b")
_COMMENT_LINE = re.compile(r"^[ \t]*#.*$", re.MULTILINE)
_DISABLED_SBATCH = re.compile(r"^[ \t]*#[# \t]*SBATCH[ \t]+-", re.MULTILINE)
_CRON_FIELD = r"[0-9A-Za-z*/,\-]+"
_CRON = re.compile(rf"(?P<when>(?:{_CRON_FIELD}[ \t]+){{4}}{_CRON_FIELD}|@[a-z]+)[ \t]+(?P<command>\S.*)\Z")
_CRON_KEYWORDS = frozenset({"@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"})
_ENV_LINE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")


# ---------------------------------------------------------------------------
# sniff
# ---------------------------------------------------------------------------


def sniff(text: str) -> bool:
    """Whether the text is a batch script, a wrapper, an interactive helper or a scrontab file."""
    return script_kind(text) is not None


def script_kind(text: str) -> JobKind | None:
    """``sbatch``, ``wrapper``, ``salloc``, ``scrontab`` or None for a text that is none of them.

    A script with ``#SBATCH`` lines is a batch script. A script without any
    is one only when it launches job steps (``srun``) or reads an array index;
    a script that calls ``sbatch`` is a wrapper. Any other shell script, even
    one that mentions Slurm, is not a job.
    """
    if text.startswith("\ufeff"):
        text = text[1:]
    shebang = text.startswith("#!")
    scron = _line_starting(text, "#SCRON")
    if scron >= 0 and _only_comments_or_cron_before(text, scron):
        return JobKind.SCRONTAB
    sbatch = _line_starting(text, "#SBATCH")
    if shebang and not runs_under_shell(text.split("\n", 1)[0]):
        # sbatch reads directives up to the first line that is not a comment: a Python or Perl
        # program whose #SBATCH lines sit in a docstring after its first statement has none.
        if sbatch >= 0 and _only_comments_or_cron_before(text, sbatch, cron=False):
            return JobKind.SBATCH
        return None
    if sbatch >= 0 and (shebang or _only_comments_or_cron_before(text, sbatch, cron=False)):
        return JobKind.SBATCH
    if shebang:
        if _DISABLED_SBATCH.search(text):  # all directives commented out: still a batch script
            return JobKind.SBATCH
        code = _COMMENT_LINE.sub("", text)
        if _CALLS_SBATCH.search(code):
            return JobKind.WRAPPER
        if _CALLS_SALLOC.search(code):  # an interactive helper: its srun runs inside salloc
            return JobKind.SALLOC
        if _CALLS_SRUN.search(code) or _ARRAY_VARS.search(code):
            return JobKind.SBATCH
        return None
    if _looks_like_crontab(text):
        return JobKind.SCRONTAB
    return None


def _line_starting(text: str, prefix: str) -> int:
    """The offset of the first line that starts with ``prefix``, or -1 (what ``^prefix`` under
    re.MULTILINE finds, at the cost of a substring search)."""
    if text.startswith(prefix):
        return 0
    at = text.find("\n" + prefix)
    return at + 1 if at >= 0 else -1


def _only_comments_or_cron_before(text: str, end: int, cron: bool = True) -> bool:
    """True when no prose precedes a directive: a README quoting #SBATCH lines is not a job."""
    for line in text[:end].split("\n"):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if cron and (_ENV_LINE.match(stripped) or _CRON.match(stripped)):
            continue
        return False
    return True


def _looks_like_crontab(text: str) -> bool:
    """A user crontab whose commands are scripts or programs given by path. Its lines are taken
    one at a time: most texts (manifests, programs) fail on their first line."""
    entries = 0
    start, n = 0, len(text)
    while start < n:
        eol = text.find("\n", start)
        eol = n if eol < 0 else eol
        line = text[start:eol]
        start = eol + 1
        stripped = line.strip()
        if not stripped or stripped.startswith("#") or _ENV_LINE.match(stripped):
            continue
        m = _CRON.match(stripped)
        if not m or "/" not in m.group("command").split()[0]:
            return False
        entries += 1
    return entries > 0


# ---------------------------------------------------------------------------
# read
# ---------------------------------------------------------------------------


def read(text: str, path: str, diags: Collector, context: ReadContext = NO_CONTEXT) -> list[ir.Job]:
    """Jobs of one file, diagnostics in line order; never raises. ``context.spank``: the #SBATCH
    options of the site's own SPANK plugins (migrate.yaml ``spank_options``)."""
    local = Collector(diags.path)
    jobs: list[ir.Job] = []
    try:
        jobs = _read(text, path, local, options.table(context.spank))
    except Exception as exc:  # a bug here must not stop a scan of thousands of files
        code = "INTERNAL-ERROR" if "INTERNAL-ERROR" in CODES else "SLURM-BAD-VALUE"
        local.add(code, f"the Slurm reader failed: {type(exc).__name__}: {exc}", job=path)
    diags.extend(sorted(local.items, key=lambda d: d.line or 0))
    return jobs


def _read(text: str, path: str, diags: Collector, table: options.Table) -> list[ir.Job]:
    kind = script_kind(text)
    lines = directives.split_lines(text)
    if kind == JobKind.SCRONTAB:
        return _read_scrontab(lines, path, diags, table)
    if kind == JobKind.WRAPPER:
        wrapper = _read_wrapper(lines, path, diags)
        return [wrapper, *_wrapped_jobs(wrapper, diags, table)]
    if kind == JobKind.SBATCH:
        job = _read_sbatch(lines, path, diags, _first_dos_line(text), text.startswith("\ufeff"), table)
        return [job, *_wrapped_jobs(job, diags, table)]
    if kind == JobKind.SALLOC:
        return [_read_salloc(lines, path, diags, table)]
    return []


def _first_dos_line(text: str) -> int | None:
    """The first line that ends in CR LF, which sbatch refuses in a batch script."""
    at = text.find("\r\n")
    return None if at < 0 else text.count("\n", 0, at) + 1


def _read_sbatch(
    lines: list[str],
    path: str,
    diags: Collector,
    dos_line: int | None = None,
    bom: bool = False,
    table: options.Table = options.SBATCH,
) -> ir.Job:
    header = directives.read_header(lines, diags, job=path, table=table)
    if bom and header.shebang is not None:
        diags.add(
            "SLURM-NO-SHEBANG",
            "the script starts with a byte order mark (BOM) before #!; sbatch refuses it (save it as UTF-8 "
            "without BOM)",
            line=1,
            job=path,
        )
    if dos_line is not None:
        diags.add(
            "SLURM-DOS-LINE-BREAKS",
            "the script has DOS line breaks (CR LF); sbatch refuses it (convert it with dos2unix); "
            "it was read as if they were plain newlines",
            line=dos_line,
            job=path,
        )
    builder = _JobBuilder(path, diags, header.components, "#SBATCH")
    builder.apply_all(header.settings, header.unknown)
    builder.keep_directives(header.settings, header.unknown)
    body_start = (
        header.last_directive_line + 1 if header.last_directive_line else (2 if header.shebang else 1)
    )
    names = builder.exported_credentials()
    written = export_names_only_lines(lines[: body_start - 1], names)
    if header.shebang is not None and not runs_under_shell(header.shebang):
        body, facts = redact(_join(lines[body_start - 1 :])), BodyFacts()
        diags.add(
            "SLURM-BODY-NOT-SHELL",
            f"the body runs under {_shell_of(header.shebang) or header.shebang[2:].strip()}, not a shell: "
            "it is kept as written and not analysed (no launchers, paths or environment read from it)",
            line=body_start,
            job=path,
        )
    else:
        body, facts = _analyze(_join(lines[body_start - 1 :]), body_start, diags, path)
    if facts.self_resubmit:
        diags.add(
            "SLURM-SELF-RESUBMIT",
            "the script submits itself again (chained restart or a cron-like loop)",
            line=header.first_command_line,
            job=path,
        )
    builder.merge_facts(facts)
    script = _script_info(header.shebang, body, facts, header.first_command_line, written)
    source = ir.SourceRef(path=path, format=Format.SLURM, line=1, end_line=max(len(lines), 1))
    job = builder.build(source, JobKind.SBATCH, script, templated=header.templated)
    return replace(job, unresolved=header.unresolved) if header.unresolved else job


def submitted_as(
    job: ir.Job,
    command_line: tuple[ir.KeyValue, ...],
    environment: tuple[ir.KeyValue, ...],
    wrapper: str,
    line: int | None,
) -> ir.Job:
    """``job`` as a wrapper's ``sbatch`` submits it: its SBATCH_* variables over the script's
    #SBATCH lines, and the options on the sbatch command line over both (sbatch's order).

    The options are applied to the script's own header as the reader applies its lines, so
    the job gets exactly what it would get had they been written there; what the body does
    is the script's own. ``job.submitted`` records each option with the wrapper's line.
    """
    if job.kind != JobKind.SBATCH or job.script is None:
        return job
    words = [
        *(
            (long, kv.value, f"{kv.key}={kv.value}")
            for kv in environment
            if (long := options.INPUT_ENVIRONMENT.get(kv.key))
        ),
        *((kv.key, kv.value, _as_written(f"--{kv.key}", kv.value or None)) for kv in command_line),
    ]
    # a value the shell sets at run time (-J run-$i) is not known here; the script's own stands
    words = [
        w
        for w in words
        if w[0] in options.BY_LONG and w[0] not in _NOT_RESUBMITTED and not _set_at_run_time(w[1])
    ]
    if not words:
        return job
    quiet = Collector(job.source.path)  # the script's problems were reported when it was read
    header = directives.read_header(directives.split_lines(job.script.header), quiet, job=job.id)
    extra, _ = directives.parse_words(
        [
            directives.Word(f"--{long}" if not value else f"--{long}={value}", line or 0)
            for long, value, _ in words
        ],
        quiet,
        job.id,
    )
    builder = _JobBuilder(job.id, quiet, header.components, "#SBATCH")
    builder.apply_all(header.settings + tuple(extra), header.unknown)
    built = builder.build(job.source, job.kind, job.script)
    components = job.components
    if len(built.components) == len(components):
        components = tuple(
            replace(old, resources=new.resources)
            for old, new in zip(components, built.components, strict=True)
        )
    return replace(
        job,
        components=components,
        submitted=tuple([ir.Directive(long, text, line or 0) for long, _, text in words]),
        submitted_by=wrapper,
        **{name: getattr(built, name) for name in _OPTION_FIELDS},
    )


# The job-wide fields sbatch options set (resources are per component); the rest is the body's.
_OPTION_FIELDS = (
    "name", "time_limit_s", "time_min_s", "begin", "deadline", "hold",
    "array", "placement", "failure", "io", "mail",
)  # fmt: skip
# What a wrapper's sbatch line carries that is not an option of the job itself: the job chain is
# read as dependencies, --wrap is a job of its own, the rest only changes how sbatch runs.
_NOT_RESUBMITTED = frozenset(("dependency", "wrap", "parsable", "wait", "test-only", "export", "export-file"))


def _set_at_run_time(value: str) -> bool:
    return directives.is_dynamic(value) or "`" in value


def _read_wrapper(lines: list[str], path: str, diags: Collector) -> ir.Job:
    return _read_script_job(lines, path, diags, JobKind.WRAPPER, _JobBuilder(path, diags, 1, "#SBATCH"))


def _read_salloc(lines: list[str], path: str, diags: Collector, table: options.Table) -> ir.Job:
    """A script that runs salloc: the allocation's options are read as sbatch reads its own."""
    builder = _JobBuilder(path, diags, 1, "salloc")
    found = _salloc_words(lines)
    if found is not None:
        values = [w.text for w in found]
        _, end = slurm_cli.parse_options(values, 0, slurm_cli.table("sbatch"))
        settings, unknown = directives.parse_words(found[:end], diags, path, table=table)
        directives.check_settings(settings, diags, path, command_line=True)
        builder.apply_all(tuple(settings), tuple(unknown))
    return _read_script_job(lines, path, diags, JobKind.SALLOC, builder)


def _read_script_job(
    lines: list[str], path: str, diags: Collector, kind: JobKind, builder: _JobBuilder
) -> ir.Job:
    """A job whose whole file is its body (no #SBATCH header): a wrapper or an salloc helper."""
    start = 2 if lines and lines[0].startswith("#!") else 1
    body, facts = _analyze(_join(lines[start - 1 :]), start, diags, path)
    builder.merge_facts(facts)
    shebang = lines[0] if start == 2 else None
    first = next((n for n, line in enumerate(lines, 1) if _is_command(line)), None)
    script = _script_info(shebang, body, facts, first)
    source = ir.SourceRef(path=path, format=Format.SLURM, line=1, end_line=max(len(lines), 1))
    return builder.build(source, kind, script)


_NOT_JOB_OPTIONS = frozenset({"wrap", "parsable", "dependency", "script"})


def _wrapped_jobs(submitter: ir.Job, diags: Collector, table: options.Table) -> list[ir.Job]:
    """Each ``sbatch --wrap "command"`` in a script is a job of its own: its options as sbatch reads
    them, its command as the body of the ``#!/bin/sh`` script sbatch writes around it."""
    jobs: list[ir.Job] = []
    path = submitter.source.path
    for sub in submitter.submits:
        command = next((kv.value for kv in sub.options if kv.key == "wrap"), None)
        if command is None or sub.script is not None:
            continue
        line = sub.line or 1
        job_id = ir.wrap_job_id(path, sub.line)
        words = [
            directives.Word(f"--{kv.key}={kv.value}" if kv.value else f"--{kv.key}", line)
            for kv in sub.options
            if kv.key not in _NOT_JOB_OPTIONS
        ]
        settings, unknown = directives.parse_words(words, diags, job_id, table=table)
        directives.check_settings(settings, diags, job_id, command_line=True)
        builder = _JobBuilder(job_id, diags, 1, "sbatch")
        builder.apply_all(tuple(settings), tuple(unknown))
        builder.keep_directives(tuple(settings), tuple(unknown))
        body, facts = _analyze(command + "\n", line, diags, job_id)
        builder.merge_facts(facts)
        script = _script_info("#!/bin/sh", body, facts, line)
        source = ir.SourceRef(path=path, format=Format.SLURM, line=line, end_line=line)
        jobs.append(builder.build(source, JobKind.SBATCH, script))
    return jobs


def _salloc_words(lines: list[str]) -> list[directives.Word] | None:
    """The words after the first ``salloc``, continuation lines joined; they carry its line."""
    for number, line in enumerate(lines, start=1):
        if line.lstrip().startswith("#"):
            continue
        m = _CALLS_SALLOC.search(line)
        if m is None:
            continue
        text = line[m.end() :]
        following = number
        while text.endswith("\\") and following < len(lines):
            text = text[:-1] + " " + lines[following]
            following += 1
        words, _, _ = directives.tokenize(text, number)
        return words
    return None


def _read_scrontab(lines: list[str], path: str, diags: Collector, table: options.Table) -> list[ir.Job]:
    jobs: list[ir.Job] = []
    pending: list[directives.Word] = []
    pending_lines: list[int] = []
    pending_env: list[ir.RawItem] = []
    for number, line in enumerate(lines, start=1):
        stripped = line.strip()
        if line.startswith("#SCRON"):
            words, error, _ = directives.tokenize(line[len("#SCRON") :], number)
            if error:
                diags.add("SLURM-BAD-VALUE", f"{error}; scrontab refuses the file", line=number, job=path)
            pending.extend(words)
            pending_lines.append(number)
            continue
        if not stripped or stripped.startswith("#"):
            continue
        if _ENV_LINE.match(stripped):
            kept = redact(stripped)
            if kept != stripped:
                diags.add(
                    "SHELL-SECRET-LITERAL",
                    "a crontab variable holds a literal credential; its value was not kept",
                    line=number,
                    job=path,
                )
            pending_env.append(RAW_KEYS.item("crontab-env", kept, number, "scrontab"))
            continue
        try:
            jobs.append(_scrontab_entry(stripped, number, path, pending, pending_env, diags, table))
        except ValueError as exc:
            diags.add("SLURM-BAD-VALUE", str(exc), line=number, job=path)
        pending, pending_lines, pending_env = [], [], []
    if pending_lines:
        diags.add(
            "SLURM-COMMENTED-DIRECTIVE",
            "#SCRON options with no cron line after them are ignored by scrontab",
            line=pending_lines[0],
            job=path,
        )
    return jobs


def _scrontab_entry(
    line: str,
    number: int,
    path: str,
    words: list[directives.Word],
    env: list[ir.RawItem],
    diags: Collector,
    table: options.Table,
) -> ir.Job:
    m = _CRON.match(line)
    if not m:
        raise ValueError(f"not a cron line: {line[:60]!r}")
    when, command = m.group("when"), m.group("command")
    if when.startswith("@") and when not in _CRON_KEYWORDS:
        raise ValueError(f"{when} is not a schedule scrontab knows")
    job_id = f"{path}@{number}"
    settings, unknown = directives.parse_words(words, diags, job_id, table=table)
    directives.check_settings(settings, diags, job_id)
    builder = _JobBuilder(job_id, diags, 1, "#SCRON")
    builder.apply_all(tuple(settings), tuple(unknown))
    builder.keep_directives(tuple(settings), tuple(unknown))
    builder.raw.extend(env)
    body, facts = _analyze(command + "\n", number, diags, job_id)
    builder.merge_facts(facts)
    shown = body.rstrip("\n")[:80]
    diags.add("SLURM-SCRONTAB-ENTRY", f"scrontab entry '{when}' runs {shown}", line=number, job=job_id)
    script = _script_info(None, body, facts, number)
    source = ir.SourceRef(
        path=path, format=Format.SLURM, line=words[0].line if words else number, end_line=number
    )
    return builder.build(source, JobKind.SCRONTAB, script, schedule=ir.Schedule(cron=when, line=number))


def _analyze(body: str, start_line: int, diags: Collector, job: str) -> tuple[str, BodyFacts]:
    """The body with its literal credentials replaced by references, and what it does."""
    try:
        return analyzed(body, start_line, diags, job, lambda *a: analyze(*a))  # looked up per call
    except Exception as exc:  # the shell analysis is best effort; the directives still count
        diags.add("SHELL-UNPARSED", f"the shell body could not be analysed: {exc}", line=start_line, job=job)
        return redact(body), BodyFacts()


def _join(lines: list[str]) -> str:
    return "\n".join(lines) + "\n" if lines else ""


def _is_command(line: str) -> bool:
    stripped = line.strip()
    return bool(stripped) and not stripped.startswith("#")


def _shell_of(shebang: str | None) -> str | None:
    if shebang is None:
        return None
    words = shebang[2:].split()
    if not words:
        return None
    if os.path.basename(words[0]) == "env":
        rest = [w for w in words[1:] if not w.startswith("-") and "=" not in w]
        return os.path.basename(rest[0]) if rest else None
    return os.path.basename(words[0])


# Interpreters sbatch scripts are written for besides the shells; an unknown #! word is taken as a
# shell (a misspelt /bin/bsah is still meant as one).
_PROGRAM_INTERPRETERS = re.compile(
    r"(?:python|perl|ruby|lua|php|pypy)[0-9.]*|Rscript|R|node|julia|tclsh|pwsh"
)


def runs_under_shell(shebang: str) -> bool:
    """Whether a ``#!`` line starts a shell, not a Python, Perl, R ... program."""
    interpreter = _shell_of(shebang)
    return interpreter is None or interpreter in SHELLS or not _PROGRAM_INTERPRETERS.fullmatch(interpreter)


def _script_info(
    shebang: str | None, body: str, facts: BodyFacts, first_command: int | None, header: str = ""
) -> ir.ScriptInfo:
    return ir.ScriptInfo(
        shell=_shell_of(shebang),
        statements=facts.statements,
        understood=facts.understood,
        unparsed=facts.unparsed,
        slurm_vars=facts.slurm_vars,
        first_command_line=first_command,
        body=body,
        header=header,
    )


# ---------------------------------------------------------------------------
# Applying options to the IR
# ---------------------------------------------------------------------------


@dataclass
class _Pyxis:
    """pyxis options of one component, turned into a Container at the end."""

    image: str | None = None
    mounts: str | None = None
    workdir: str | None = None
    name: str | None = None
    line: int | None = None
    mounts_line: int | None = None


@dataclass(slots=True)
class _Resources:
    """The resource fields of one component while its options are read (see ``ir.Resources``)."""

    nodes_min: int | None = None
    nodes_max: int | None = None
    tasks: int | None = None
    tasks_per_node: int | None = None
    cpus_per_task: int | None = None
    cpus_per_node: int | None = None
    mem_per_node_mb: int | None = None
    mem_per_cpu_mb: int | None = None
    mem_per_gpu_mb: int | None = None
    gpus: int | None = None
    gpus_per_node: int | None = None
    gpus_per_task: int | None = None
    gpu_type: str | None = None
    gpu_types: tuple[ir.GpuCount, ...] = ()
    cpus_per_gpu: int | None = None
    tmp_disk_mb: int | None = None
    exclusive: str | None = None
    constraint: str | None = None
    licenses: tuple[ir.GenericResource, ...] = ()
    tasks_per_gpu: int | None = None  # --ntasks-per-gpu: folded into the task or GPU count

    def build(self, generic: tuple[ir.GenericResource, ...]) -> ir.Resources:
        tasks, per_node, gpus = self._with_tasks_per_gpu()
        return ir.Resources(
            nodes_min=self.nodes_min,
            nodes_max=self.nodes_max,
            tasks=tasks,
            tasks_per_node=per_node,
            cpus_per_task=self.cpus_per_task,
            cpus_per_node=self.cpus_per_node,
            mem_per_node_mb=self.mem_per_node_mb,
            mem_per_cpu_mb=self.mem_per_cpu_mb,
            mem_per_gpu_mb=self.mem_per_gpu_mb,
            gpus=gpus,
            gpus_per_node=self.gpus_per_node,
            gpus_per_task=self.gpus_per_task,
            gpu_type=self.gpu_type,
            gpu_types=self.gpu_types,
            cpus_per_gpu=self.cpus_per_gpu,
            tasks_per_gpu=self.tasks_per_gpu,
            generic=generic,
            tmp_disk_mb=self.tmp_disk_mb,
            exclusive=self.exclusive,
            constraint=self.constraint,
            licenses=self.licenses,
        )

    def _with_tasks_per_gpu(self) -> tuple[int | None, int | None, int | None]:
        """(tasks, tasks per node, GPUs) as sbatch derives them from --ntasks-per-gpu: with the GPUs
        given and no task count, that many tasks per GPU of the job; with --ntasks and no GPUs, a GPU
        per that many tasks (checked on the sandbox: -N 2 --gpus-per-node=4 --ntasks-per-gpu=2 gives
        SLURM_NTASKS=16 and 8 tasks a node; -n 6 --ntasks-per-gpu=2 gives 3 GPUs)."""
        tasks, per_node, gpus, each = self.tasks, self.tasks_per_node, self.gpus, self.tasks_per_gpu
        if not each:
            return tasks, per_node, gpus
        if tasks is None and per_node is None:
            # a task count, not one per node: sbatch sets SLURM_NTASKS, not SLURM_NTASKS_PER_NODE
            if self.gpus_per_node:
                tasks = each * self.gpus_per_node * (self.nodes_min or 1)
            elif gpus:
                tasks = each * gpus
        elif tasks is not None and not (gpus or self.gpus_per_node or self.gpus_per_task):
            gpus = -(-tasks // each)
        return tasks, per_node, gpus


@dataclass
class _Component:
    resources: _Resources = field(default_factory=_Resources)
    gres_generic: tuple[ir.GenericResource, ...] = ()
    task_generic: tuple[ir.GenericResource, ...] = ()
    containers: list[ir.Container] = field(default_factory=list)
    pyxis: _Pyxis = field(default_factory=_Pyxis)
    shifter_mounts: list[ir.Mount] = field(default_factory=list)  # #SBATCH --volume, for the --image
    launchers: list[ir.Launcher] = field(default_factory=list)
    environment: list[ir.EnvVar] = field(default_factory=list)
    line: int | None = None


@dataclass(slots=True)
class _JobWide:
    """The fields options set once per job, a hetjob too (see ``ir.Job`` and its sections)."""

    name: str | None = None
    time_limit_s: int | None = None
    time_min_s: int | None = None
    begin: str | None = None
    deadline: str | None = None
    hold: bool = False
    array: ir.ArraySpec | None = None
    dependencies: tuple[ir.Dependency, ...] = ()
    export: str | None = None
    partitions: tuple[str, ...] = ()
    qos: str | None = None
    priority: str | None = None
    nice: int | None = None
    account: str | None = None
    reservation: str | None = None
    nodelist: str | None = None
    exclude: str | None = None
    clusters: str | None = None
    topology: dict[str, str] = field(default_factory=dict)
    requeue: bool | None = None
    signal: ir.Signal | None = None
    no_kill: bool = False
    workdir: str | None = None
    stdout: str | None = None
    stderr: str | None = None
    stdin: str | None = None
    open_mode: str | None = None
    mail: bool = False  # a mail option was given
    mail_types: tuple[str, ...] = ()
    mail_user: str | None = None

    def placement(self) -> ir.Placement:
        return ir.Placement(
            partitions=self.partitions,
            qos=self.qos,
            priority=self.priority,
            nice=self.nice,
            account=self.account,
            reservation=self.reservation,
            nodelist=self.nodelist,
            exclude=self.exclude,
            clusters=self.clusters,
            topology=tuple([ir.KeyValue(k, v) for k, v in self.topology.items()]),
        )

    def failure(self) -> ir.FailurePolicy:
        return ir.FailurePolicy(requeue=self.requeue, signal=self.signal, no_kill=self.no_kill)

    def io(self) -> ir.IOSpec:
        return ir.IOSpec(
            workdir=self.workdir,
            stdout=self.stdout,
            stderr=self.stderr,
            stdin=self.stdin,
            open_mode=self.open_mode,
        )


_Handler = Callable[["_JobBuilder", Setting, object], None]

# Value kinds sbatch reads with C's strtoll, taking whatever does not start with a number as 0.
_STRTOLL_KINDS = frozenset((OptionKind.NICE, OptionKind.PRIORITY))


class _JobBuilder:
    """Mutable state for one job; ``build`` freezes it into an ``ir.Job``."""

    def __init__(self, job_id: str, diags: Collector, components: int, origin: str) -> None:
        self.diags = diags
        self.job_id = job_id
        self.origin = origin
        self.components = [_Component() for _ in range(max(components, 1))]
        self.job = _JobWide()
        self.given: dict[str, object] = {}  # job-wide field -> the value an option gave it
        self.environment: list[ir.EnvVar] = []
        self.storage: list[ir.StoragePath] = []
        self.raw: list[ir.RawItem] = []
        self.written: list[Setting | Unknown] = []  # the directives, for ir.Job.directives
        self.facts = BodyFacts()

    # -- applying settings -------------------------------------------------

    def apply_all(self, settings: tuple[Setting, ...], unknown: tuple[Unknown, ...]) -> None:
        for setting in settings:
            comp = self._comp(setting)
            if comp.line is None:
                comp.line = setting.line
            try:
                self.apply(setting)
            except ValueError as exc:
                self._bad_value(setting, str(exc))
            except Exception as exc:  # one bad line must not lose the others
                self._bad_value(setting, f"could not be read ({type(exc).__name__}: {exc})")
        for item in unknown:
            self.raw.append(
                ir.RawItem(item.spelled, item.value or "", item.line, self.origin, item.component)
            )

    def keep_directives(self, settings: tuple[Setting, ...], unknown: tuple[Unknown, ...]) -> None:
        """Remember the options as written: writers name them in the user's words, at their line."""
        self.written += settings
        self.written += unknown

    def apply(self, setting: Setting) -> None:
        option = setting.option
        if option.target == "raw":
            if setting.value is not None and not setting.dynamic:
                option.parse(setting.value)  # a value sbatch refuses is reported even where it stays raw
            self.keep_raw(setting)
            return
        if setting.dynamic and not _literal_export(setting):  # kept verbatim: only free-text fields can
            if option.kind not in options.TEXT_KINDS or setting.value is None:
                self.keep_raw(setting)
                return
            listed = option.kind is OptionKind.LIST
            value: object = tuple(setting.value.split(",")) if listed else setting.value
        else:
            value = option.default if setting.value is None else option.parse(setting.value)
            if option.kind in _STRTOLL_KINDS and setting.value and not options.is_integer(setting.value):
                self._read_as_number(setting, value)
        handler = _HANDLERS.get(option.target)
        if handler is not None:
            handler(self, setting, value)
        else:
            self._set(setting, value)

    def _set(self, setting: Setting, value: object) -> None:
        """Put a value in the field its target names: resources per component, the rest per job."""
        target = setting.option.target
        if target.startswith("resources."):
            if not _assign_resource(self._comp(setting).resources, target, value):
                self.keep_raw(setting)  # a target the IR has no field for
        elif self.job_wide(setting, target, value) and not _assign_job(self.job, target, value):
            self.keep_raw(setting)

    def job_wide(self, setting: Setting, key: str, value: object) -> bool:
        """Whether ``value`` may go into the job-wide field ``key``: the IR holds one value per job,
        so a different one in a later hetjob component stays raw."""
        if setting.component > 0 and key in self.given and self.given[key] != value:
            self.keep_raw(setting)
            return False
        self.given[key] = value
        return True

    def _comp(self, setting: Setting) -> _Component:
        return self.components[min(setting.component, len(self.components) - 1)]

    def keep_raw(self, setting: Setting) -> None:
        value = redact(setting.value or "")  # an --export list that could not be read may hold one
        self.raw.append(
            ir.RawItem(setting.option.spelling, value, setting.line, self.origin, setting.component)
        )

    def _read_as_number(self, setting: Setting, value: object) -> None:
        """A number sbatch reads with strtoll, written with text: it takes the leading digits, or 0."""
        if setting.value is not None and setting.value.upper() != "TOP":
            self.diags.add(
                "SLURM-BAD-VALUE",
                f"{setting.spelled}={redact(setting.value)} is not a number; sbatch reads it as {value}",
                line=setting.line,
                job=self.job_id,
                severity=WARNING,
            )

    def _bad_value(self, setting: Setting, reason: str) -> None:
        self.diags.add(
            "SLURM-BAD-VALUE",
            f"{setting.spelled}={redact(setting.value or '')}: {redact(reason)}; kept as a raw item",
            line=setting.line,
            job=self.job_id,
        )
        self.keep_raw(setting)

    # -- facts of the body -----------------------------------------------

    def merge_facts(self, facts: BodyFacts) -> None:
        self.facts = facts
        by_line: dict[int, int] = {}
        for launcher in facts.launchers:
            index = _het_group(launcher, len(self.components))
            self.components[index].launchers.append(launcher)
            if launcher.line is not None:
                by_line[launcher.line] = index
        for container in facts.containers:
            index = by_line.get(container.line or -1, 0)
            self.components[index].containers.append(container)
        self.components[0].environment.extend(facts.environment)
        inside = [m.target.rstrip("/") + "/" for comp in self.components for m in comp.shifter_mounts]
        # a path the body names inside the job's Shifter volumes is the host folder listed with them
        self.storage.extend(s for s in facts.storage if not any((s.path + "/").startswith(t) for t in inside))
        self.raw.extend(facts.raw)

    # -- build ---------------------------------------------------------------

    def exported_credentials(self) -> list[str]:
        """The variables an --export list set to a literal credential: as written, only their names."""
        return [
            e.name for e in self.environment if e.secret is not None and e.origin == EnvOrigin.SBATCH_EXPORT
        ]

    def _directives(self) -> tuple[ir.Directive, ...]:
        names = self.exported_credentials()
        out = []
        for item in self.written:
            long = item.option.long if isinstance(item, Setting) else item.spelled.lstrip("-")
            text = export_names_only(_as_written(item.spelled, item.value), names)
            out.append(ir.Directive(long, text, item.line, item.component))
        # in line order; on one line the options sbatch knows come first, as the writers read them
        return tuple(sorted(out, key=lambda d: d.line))

    def build(
        self,
        source: ir.SourceRef,
        kind: JobKind,
        script: ir.ScriptInfo,
        templated: bool = False,
        schedule: ir.Schedule | None = None,
    ) -> ir.Job:
        job = self.job
        facts = self.facts
        many = len(self.components) > 1
        return ir.Job(
            id=self.job_id,
            source=source,
            kind=kind,
            name=job.name,
            components=tuple([self._component(i, c, many) for i, c in enumerate(self.components)]),
            time_limit_s=job.time_limit_s,
            time_min_s=job.time_min_s,
            begin=job.begin,
            deadline=job.deadline,
            hold=job.hold,
            array=job.array,
            dependencies=job.dependencies,
            placement=job.placement(),
            failure=job.failure(),
            io=job.io(),
            mail=ir.Mail(types=job.mail_types, user=job.mail_user) if job.mail else None,
            environment=tuple(self.environment),
            export=job.export,
            modules=facts.modules,
            software_envs=facts.software_envs,
            storage=tuple(self.storage),
            monitoring=facts.monitoring,
            schedule=schedule,
            submits=facts.submits,
            script=script,
            templated=templated,
            raw=tuple(self.raw),
            directives=self._directives(),
        )

    def _component(self, index: int, comp: _Component, many: bool) -> ir.Component:
        containers = [
            replace(c, mounts=tuple(comp.shifter_mounts)) if _shifter_of_job(c) else c
            for c in comp.containers
        ]
        pyxis = comp.pyxis
        if pyxis.image is not None:
            containers.append(
                ir.Container(
                    image=pyxis.image,
                    name=pyxis.name,
                    runtime=ContainerRuntime.PYXIS,
                    workdir=pyxis.workdir,
                    mounts=_mounts(pyxis.mounts or "", pyxis.mounts_line),
                    line=pyxis.line,
                )
            )
        return ir.Component(
            name=f"het{index}" if many else "main",
            resources=comp.resources.build(comp.gres_generic + comp.task_generic),
            containers=tuple(containers),
            launchers=tuple(comp.launchers),
            environment=tuple(comp.environment),
            line=comp.line,
        )


def _as_written(spelled: str, value: str | None) -> str:
    if value is None:
        return spelled
    return f"{spelled}={value}" if spelled.startswith("--") else f"{spelled} {value}"


# Typed values: the option table's parsers return ``object``; each field says what it holds.
# A value of another type is a bug in the table, reported like a bad value.


def _int(value: object) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise TypeError(f"expected a number, got {value!r}")


def _text(value: object) -> str:
    if isinstance(value, str):
        return value
    raise TypeError(f"expected text, got {value!r}")


def _texts(value: object) -> tuple[str, ...]:
    if isinstance(value, tuple) and all(isinstance(v, str) for v in value):
        return value
    raise TypeError(f"expected a list of text, got {value!r}")


def _flag(value: object) -> bool:
    if isinstance(value, bool):
        return value
    raise TypeError(f"expected yes or no, got {value!r}")


_T = TypeVar("_T")


def _of(cls: type[_T], value: object) -> _T:
    if isinstance(value, cls):
        return value
    raise TypeError(f"expected {cls.__name__}, got {value!r}")


def _assign_resource(r: _Resources, target: str, value: object) -> bool:
    """Targets filled by one assignment, per component; False for a target with no field."""
    match target:
        case "resources.tasks":
            r.tasks = _int(value)
        case "resources.tasks_per_node":
            r.tasks_per_node = _int(value)
        case "resources.cpus_per_task":
            r.cpus_per_task = _int(value)
        case "resources.cpus_per_node":
            r.cpus_per_node = _int(value)
        case "resources.cpus_per_gpu":
            r.cpus_per_gpu = _int(value)
        case "resources.mem_per_node_mb":
            r.mem_per_node_mb = _int(value)
        case "resources.mem_per_cpu_mb":
            r.mem_per_cpu_mb = _int(value)
        case "resources.mem_per_gpu_mb":
            r.mem_per_gpu_mb = _int(value)
        case "resources.tmp_disk_mb":
            r.tmp_disk_mb = _int(value)
        case "resources.constraint":
            r.constraint = _text(value)
        case _:
            return False
    return True


def _assign_job(j: _JobWide, target: str, value: object) -> bool:
    """Targets filled by one assignment, per job; False for a target with no field."""
    match target:
        case "job.name":
            j.name = _text(value)
        case "job.begin":
            j.begin = _text(value)
        case "job.deadline":
            j.deadline = _text(value)
        case "job.hold":
            j.hold = _flag(value)
        case "job.array":
            j.array = _of(ir.ArraySpec, value)
        case "placement.partitions":
            j.partitions = _texts(value)
        case "placement.qos":
            j.qos = _text(value)
        case "placement.priority":
            j.priority = _text(value)
        case "placement.nice":
            j.nice = _int(value)
        case "placement.account":
            j.account = _text(value)
        case "placement.reservation":
            j.reservation = _text(value)
        case "placement.nodelist":
            j.nodelist = _text(value)
        case "placement.exclude":
            j.exclude = _text(value)
        case "placement.clusters":
            j.clusters = _text(value)
        case "failure.signal":
            j.signal = _of(ir.Signal, value)
        case "failure.no_kill":
            j.no_kill = _flag(value)
        case "io.open_mode":
            j.open_mode = _text(value)
        case "mail.user":
            j.mail, j.mail_user = True, _text(value)
        case _:
            return False
    return True


def _het_group(launcher: ir.Launcher, components: int) -> int:
    """The hetjob component an ``srun --het-group=N`` runs in (the first one of a list)."""
    if components == 1:
        return 0
    for kv in launcher.options:
        if kv.key.lstrip("-") in ("het-group", "pack-group"):
            m = re.match(r"[0-9]+", kv.value)
            if m and int(m.group()) < components:
                return int(m.group())
    return 0


def _mounts(spec: str, line: int | None) -> tuple[ir.Mount, ...]:
    mounts: list[ir.Mount] = []
    for item in spec.split(","):
        if not item:
            continue
        parts = item.split(":")
        source = parts[0]
        target = parts[1] if len(parts) > 1 and parts[1] else source
        flags = parts[2].split("+") if len(parts) > 2 else []
        mounts.append(
            ir.Mount(target=target, source=source, kind=MountKind.BIND, read_only="ro" in flags, line=line)
        )
    return tuple(mounts)


# ---------------------------------------------------------------------------
# Handlers for targets that need more than one assignment
# ---------------------------------------------------------------------------


def _nodes(b: _JobBuilder, s: Setting, value: object) -> None:
    low, high = _of(tuple, value)
    res = b._comp(s).resources
    res.nodes_min, res.nodes_max = _int(low), None if high is None else _int(high)
    if s.value and ("," in s.value or ":" in s.value):
        b.keep_raw(s)  # the allowed sizes between min and max have no IR field


def _generic(value: object) -> tuple[ir.GenericResource, ...]:
    items = _of(tuple, value)
    if all(isinstance(g, ir.GenericResource) for g in items):
        return items
    raise TypeError(f"expected resources, got {value!r}")


_Count = Callable[[_Resources, int], None]


def _gpus_total(r: _Resources, count: int) -> None:
    r.gpus = count


def _gpus_per_node(r: _Resources, count: int) -> None:
    r.gpus_per_node = count


def _gpus_per_task(r: _Resources, count: int) -> None:
    r.gpus_per_task = count


def _gpu_fields(b: _JobBuilder, s: Setting, items: tuple[ir.GenericResource, ...], count: _Count) -> None:
    res = b._comp(s).resources
    count(res, sum(g.count for g in items))
    types = {g.type for g in items}
    typed = tuple([ir.GpuCount(g.type, g.count) for g in items if g.type is not None])
    if len(types) == 1:
        if typed:
            res.gpu_type = typed[0].type
    elif len(typed) == len(items) == len(types):
        # a100:1,v100:2 asks for each type at once: the types stay apart, the count field holds the sum
        res.gpu_type, res.gpu_types = None, typed
    else:
        b.keep_raw(s)  # a type named twice, or typed and untyped GPUs mixed: only the total is typed


def _gpus(count: _Count) -> _Handler:
    def handle(b: _JobBuilder, s: Setting, value: object) -> None:
        _gpu_fields(b, s, _generic(value), count)

    return handle


def _gres(b: _JobBuilder, s: Setting, value: object) -> None:
    items = _generic(value)
    gpus = tuple([g for g in items if g.name == "gpu"])
    if gpus:
        _gpu_fields(b, s, gpus, _gpus_per_node)
    b._comp(s).gres_generic = tuple([g for g in items if g.name != "gpu"])


def _tres_per_task(b: _JobBuilder, s: Setting, value: object) -> None:
    comp = b._comp(s)
    rest: list[ir.GenericResource] = []
    gpus: list[ir.GenericResource] = []
    for item in _generic(value):
        if item.name == "cpu":
            comp.resources.cpus_per_task = item.count
        elif item.name == "gpu":
            gpus.append(item)
        else:
            rest.append(item)
    if gpus:
        _gpu_fields(b, s, tuple(gpus), _gpus_per_task)
    comp.task_generic = tuple(rest)


def _exclusive(b: _JobBuilder, s: Setting, value: object) -> None:
    if value == "oversubscribe":
        b.keep_raw(s)
    else:
        b._comp(s).resources.exclusive = _text(value)


def _tasks_per_gpu(b: _JobBuilder, s: Setting, value: object) -> None:
    """--ntasks-per-gpu has no IR field: the component's task or GPU count takes it when built."""
    b._comp(s).resources.tasks_per_gpu = _int(value)


def _licenses(b: _JobBuilder, s: Setting, value: object) -> None:
    b._comp(s).resources.licenses = _generic(value)
    if s.value and "|" in s.value:
        b.keep_raw(s)  # "any one of" license alternatives: the typed list reads as "all of"


def _time_limit(b: _JobBuilder, s: Setting, value: object) -> None:
    if value is None or value == 0:  # UNLIMITED, INFINITE and 0 all mean no limit
        b.given.pop("job.time_limit_s", None)
        b.job.time_limit_s = None
        b.keep_raw(s)
    elif b.job_wide(s, "job.time_limit_s", value):
        b.job.time_limit_s = _int(value)


def _time_min(b: _JobBuilder, s: Setting, value: object) -> None:
    if value is None or value == 0:
        b.given.pop("job.time_min_s", None)
        b.job.time_min_s = None
        b.keep_raw(s)
    elif b.job_wide(s, "job.time_min_s", value):
        b.job.time_min_s = _int(value)


def _dependencies(b: _JobBuilder, s: Setting, value: object) -> None:
    deps = tuple([replace(_of(ir.Dependency, d), line=s.line) for d in _of(tuple, value)])
    if b.job_wide(s, "job.dependencies", deps):
        b.job.dependencies = deps


def _export(b: _JobBuilder, s: Setting, value: object) -> None:
    spec = _of(options.ExportSpec, value)
    names = ",".join(name for name, _ in spec.variables)
    export = spec.policy if spec.policy != "LIST" else names
    if b.job_wide(s, "job.export", export):
        b.job.export = export
    b.environment = [e for e in b.environment if e.origin != EnvOrigin.SBATCH_EXPORT]
    for name, literal in spec.variables:
        if literal and literal_credential(name, literal):
            # the value is never kept: the translated job provides it from a secret
            ref = ir.SecretRef(name=name, kind=SecretKind.LITERAL)
            b.environment.append(
                ir.EnvVar(name=name, secret=ref, origin=EnvOrigin.SBATCH_EXPORT, line=s.line)
            )
            b.diags.add(
                "SHELL-SECRET-LITERAL",
                f"--export sets {name} to a literal credential; its value was not kept "
                "(the translated job provides it from a secret)",
                line=s.line,
                job=b.job_id,
            )
            continue
        b.environment.append(ir.EnvVar(name=name, value=literal, origin=EnvOrigin.SBATCH_EXPORT, line=s.line))


def _literal_export(setting: Setting) -> bool:
    """--export=NAME=value,...: sbatch takes '$' and template marks in a value literally."""
    if setting.option.target != "job.export" or setting.value is None:
        return False
    try:
        spec = options.parse_export(setting.value)
    except ValueError:
        return False
    return all(name.isidentifier() for name, _ in spec.variables)


def _topology(b: _JobBuilder, s: Setting, value: object) -> None:
    b.job.topology[s.option.long] = s.value if s.value is not None else "true"


def _requeue(b: _JobBuilder, s: Setting, value: object) -> None:
    if b.job_wide(s, "failure.requeue", True):
        b.job.requeue = True
    if value == "expedite":
        b.keep_raw(s)  # expedited requeue (25.11) has no typed field


def _no_requeue(b: _JobBuilder, s: Setting, value: object) -> None:
    if b.job_wide(s, "failure.requeue", False):
        b.job.requeue = False


_DEV_NULL = "/dev/null"


def _set_workdir(j: _JobWide, path: str) -> None:
    j.workdir = path


def _set_stdout(j: _JobWide, path: str) -> None:
    j.stdout = path


def _set_stderr(j: _JobWide, path: str) -> None:
    j.stderr = path


def _set_stdin(j: _JobWide, path: str) -> None:
    j.stdin = path


def _io(key: str, via: StorageVia, access: str, assign: Callable[[_JobWide, str], None]) -> _Handler:
    def handle(b: _JobBuilder, s: Setting, value: object) -> None:
        text = _text(value)
        path = _DEV_NULL if text.lower() == "none" and via != StorageVia.CHDIR else text
        if b.job_wide(s, key, path):
            assign(b.job, path)
        if path != _DEV_NULL:
            b.storage = [p for p in b.storage if p.via != via]
            b.storage.append(ir.StoragePath(path=path, access=access, via=via, line=s.line))

    return handle


def _mail_types(b: _JobBuilder, s: Setting, value: object) -> None:
    skipped = options.unknown_mail_types(s.value or "")
    if skipped:
        b.diags.add(
            "SLURM-BAD-VALUE",
            f"--mail-type: sbatch skips the unknown {'type' if len(skipped) == 1 else 'types'} "
            + ", ".join(skipped),
            line=s.line,
            job=b.job_id,
            severity=WARNING,
        )
    job = b.job
    job.mail = True
    job.mail_types += tuple([t for t in _texts(value) if t not in job.mail_types])  # repeats add up


def _oci_bundle(b: _JobBuilder, s: Setting, value: object) -> None:
    comp = b._comp(s)
    bundle = _text(value)
    comp.containers = [c for c in comp.containers if c.runtime != ContainerRuntime.OCI_BUNDLE]
    comp.containers.append(ir.Container(image=bundle, runtime=ContainerRuntime.OCI_BUNDLE, line=s.line))
    b.storage.append(ir.StoragePath(path=bundle, access=ir.READ, via=StorageVia.CONTAINER_MOUNT, line=s.line))


def _pyxis(update: Callable[[_Pyxis, str], None], image: bool = False) -> _Handler:
    def handle(b: _JobBuilder, s: Setting, value: object) -> None:
        pyxis = b._comp(s).pyxis
        update(pyxis, _text(value))
        if image or pyxis.line is None:
            pyxis.line = s.line

    return handle


def _pyxis_image(pyxis: _Pyxis, value: str) -> None:
    pyxis.image = value


def _pyxis_workdir(pyxis: _Pyxis, value: str) -> None:
    pyxis.workdir = value


def _pyxis_name(pyxis: _Pyxis, value: str) -> None:
    pyxis.name = value


def _pyxis_mounts(b: _JobBuilder, s: Setting, value: object) -> None:
    pyxis = b._comp(s).pyxis
    pyxis.mounts = _text(value)
    if pyxis.line is None:
        pyxis.line = s.line
    pyxis.mounts_line = s.line
    for mount in _mounts(pyxis.mounts, s.line):
        where = mount.source or mount.target
        b.storage.append(ir.StoragePath(where, ir.UNKNOWN, StorageVia.CONTAINER_MOUNT, s.line))


def _shifter_of_job(container: ir.Container) -> bool:
    return container.runtime == ContainerRuntime.SHIFTER and container.command == ()


def _shifter_image(b: _JobBuilder, s: Setting, value: object) -> None:
    """Shifter's --image: the container every step that runs `shifter` starts in."""
    comp = b._comp(s)
    comp.containers = [c for c in comp.containers if not _shifter_of_job(c)]
    comp.containers.append(ir.Container(image=_text(value), runtime=ContainerRuntime.SHIFTER, line=s.line))


def _shifter_volume(b: _JobBuilder, s: Setting, value: object) -> None:
    """Shifter's --volume: 'host:container[:flags]' maps, ';' between them; repeats add up."""
    mounts = split_mounts(_text(value), ";", s.line)
    b._comp(s).shifter_mounts.extend(mounts)
    b.storage.extend(
        ir.StoragePath(m.source or m.target, ir.UNKNOWN, StorageVia.CONTAINER_MOUNT, s.line) for m in mounts
    )


_HANDLERS: dict[str, _Handler] = {
    "resources.nodes": _nodes,
    "resources.gpus": _gpus(_gpus_total),
    "resources.gpus_per_node": _gpus(_gpus_per_node),
    "resources.gpus_per_task": _gpus(_gpus_per_task),
    "resources.gres": _gres,
    "resources.tres_per_task": _tres_per_task,
    "resources.exclusive": _exclusive,
    "resources.tasks_per_gpu": _tasks_per_gpu,
    "resources.licenses": _licenses,
    "job.time_limit_s": _time_limit,
    "job.time_min_s": _time_min,
    "job.dependencies": _dependencies,
    "job.export": _export,
    "placement.topology": _topology,
    "failure.requeue": _requeue,
    "failure.no_requeue": _no_requeue,
    "io.workdir": _io("io.workdir", StorageVia.CHDIR, ir.READ_WRITE, _set_workdir),
    "io.stdout": _io("io.stdout", StorageVia.OUTPUT, ir.WRITE, _set_stdout),
    "io.stderr": _io("io.stderr", StorageVia.ERROR, ir.WRITE, _set_stderr),
    "io.stdin": _io("io.stdin", StorageVia.INPUT, ir.READ, _set_stdin),
    "mail.types": _mail_types,
    "container.oci_bundle": _oci_bundle,
    "container.pyxis_image": _pyxis(_pyxis_image, image=True),
    "container.pyxis_mounts": _pyxis_mounts,
    "container.pyxis_workdir": _pyxis(_pyxis_workdir),
    "container.pyxis_name": _pyxis(_pyxis_name),
    "container.shifter_image": _shifter_image,
    "container.shifter_volume": _shifter_volume,
}

__all__ = [
    "Header",
    "read",
    "script_kind",
    "sniff",
    "submitted_as",
]
