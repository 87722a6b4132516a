"""Shell body analysis: what a script does, statement by statement.

``reader`` turns the text into simple commands (bashlex where it copes, a
tolerant tokenizer elsewhere); this module walks those commands in source
order, peels each into launcher/container/profiler layers (``chain``) and
hands the pieces to the small analysers: ``environment``, ``paths``,
``monitoring``, ``submissions``, ``signals``, ``variables``. Scripts inside
scripts (``bash -c '...'``, trap handlers, ``eval``, here-documents fed to a
shell) are read the same way, with their own line numbers.

Nothing is executed or expanded. Variables the script assigns itself are
followed where that is the only way to know something: the image in
``--container-image=$IMAGE``, the path behind ``mkdir -p "$CKPT"``, the
command in ``$PW -i in``, the launcher options kept in an array
(``torchrun "${ARGS[@]}"``) or in a variable after ``srun`` (``srun
$LAUNCHER``). Environment variables are never guessed.
"""

from __future__ import annotations

import functools
import re
from dataclasses import replace

from migrate import ir
from migrate.diagnostics import Collector
from migrate.vocab import EnvOrigin, StorageVia

from . import environment, idflow, monitoring, paths, remembered, signals, submissions
from .chain import Chain, Layer, LayerKind, decompose
from .facts import BodyFacts
from .launchers import DECLARING, SHELLS, basename
from .lexer import WORD, dequote, is_assignment, lex
from .model import Command, CommandOrigin, Word, shift_command
from .reader import read_script
from .redact import redact as _redact
from .split import statement_boundary
from .tracker_switches import env_switch, without_switched_off
from .variables import slurm_variables

MAX_SCRIPT_DEPTH = 3  # scripts inside scripts inside scripts
# Past this, a body is analysed up to a statement boundary only, so that time and memory
# stay bounded (about 60 bytes per character are held while a body is read). As large as
# the default file size limit: a file scanned with the defaults is always read whole.
MAX_BODY_CHARS = 1 << 20
_INTERPRETERS = frozenset(
    {"python", "python2", "python3", "Rscript", "julia", "perl", "ruby", "bash", "sh", "zsh", "ksh"}
)
_PYTHON = re.compile(r"python[0-9.]*\Z")
_VARIABLE_WORD = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))\Z")
_ARRAY_WORD = re.compile(r'"?\$\{([A-Za-z_][A-Za-z0-9_]*)\[[@*]\]\}"?\Z')
_LEADING_VARIABLE = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")
_SETUP = frozenset({"source", ".", "conda", "mamba", "micromamba", "pip", "pip3", "uv", "ulimit"})

# Launcher lines and their words repeat across a site's scripts, and redacting runs several
# regular expressions over each: remember the answers.
redact = functools.lru_cache(maxsize=16384)(_redact)


def analyze(body: str, start_line: int, diags: Collector) -> BodyFacts:
    """Read a shell body statement by statement; never raises."""
    analysis = _Analysis(diags)
    try:
        analysis.read(
            _bounded(body.replace("\r\n", "\n"), start_line, diags), start_line, CommandOrigin.BODY, 0
        )
    except Exception as exc:  # a bug must not cost the caller the whole file
        reason = f"internal error while reading the body ({type(exc).__name__})"
        analysis.unparsed.append(ir.Unparsed(start_line, reason))
        diags.add("SHELL-UNPARSED", reason, line=start_line)
    return analysis.facts()


def _bounded(body: str, start_line: int, diags: Collector) -> str:
    if len(body) <= MAX_BODY_CHARS:
        return body
    cut = statement_boundary(body, MAX_BODY_CHARS)
    line = start_line + body.count("\n", 0, cut)
    diags.add(
        "SHELL-TOO-LONG",
        f"the body is {len(body)} characters, over the limit of {MAX_BODY_CHARS}: "
        f"kept, but not analysed from line {line} on",
        line=line,
    )
    return body[:cut]


class _Analysis:
    def __init__(self, diags: Collector) -> None:
        self.diags = diags
        self.launchers: list[ir.Launcher] = []
        self.containers: list[ir.Container] = []
        self.modules: list[str] = []
        self.software: list[ir.KeyValue] = []
        self.env: list[ir.EnvVar] = []
        self.storage: list[ir.StoragePath] = []
        self.monitoring: list[ir.MonitoringHook] = []
        self.trackers_off: list[str] = []
        self.submits: list[ir.Submission] = []
        self.raw: list[ir.RawItem] = []
        self.signals: list[str] = []
        self.unparsed: list[ir.Unparsed] = []
        self.slurm_vars: set[str] = set()
        self.statements = 0
        self.understood = 0
        self.self_resubmit = False
        self.known: dict[str, str] = {}  # variables the script set, with their literal values
        self.arrays: dict[str, tuple[str, ...]] = {}  # arrays the script set: NAME=(a b c), as words
        self.path_vars: dict[str, str] = {}  # variables the script set to a path
        # id of a word of the current command -> container paths under which it names nothing
        # on the host; ("",) for a runtime's own options, whose paths are read elsewhere
        self.skip_paths: dict[int, tuple[str, ...]] = {}
        self.ids = idflow.JobIdFlow()
        # shell functions that call sbatch: read at each call with its arguments, not where defined
        self.functions: dict[str, list[Command]] = {}
        self.defined: list[idflow.FunctionSpan] = []

    # -- reading -------------------------------------------------------------------
    def read(self, text: str, start_line: int, origin: CommandOrigin, depth: int) -> None:
        script = read_script(text)
        self.statements += script.statements
        self.understood += script.understood
        for line, reason in script.unparsed:
            self.unparsed.append(ir.Unparsed(start_line + line, reason))
            self.diags.add(
                "SHELL-UNPARSED", f"read with the tolerant tokenizer: {reason}", line=start_line + line
            )
        for line, message in script.problems:
            self.diags.add("SHELL-SYNTAX", message, line=start_line + line)
        for line, message in script.too_deep:
            self.diags.add("SHELL-TOO-DEEP", message, line=start_line + line)
        if depth == 0:
            self.slurm_vars |= slurm_variables(script.code)
            self.monitoring.extend(monitoring.text_hooks(script.code, start_line))
        if depth == 0 and origin is CommandOrigin.BODY:
            spans = idflow.function_spans(text, start_line)
            if spans:
                self._functions(spans, script.parts, start_line)
        # Commands come as read, their lines counted from their statement's first line: moved to
        # the script's lines only when read, not when their findings are recalled.
        for line, commands in script.parts:
            for cmd in commands:
                if origin is not CommandOrigin.BODY and cmd.origin is CommandOrigin.BODY:
                    cmd = replace(cmd, origin=origin)
                self.command(cmd, depth, start_line + line)

    def _functions(
        self, spans: list[idflow.FunctionSpan], parts: tuple[tuple[int, tuple[Command, ...]], ...], start: int
    ) -> None:
        """The functions that call sbatch, with their commands at the script's lines."""
        for span in spans:
            body = [
                (c, start + line)
                for line, commands in parts
                for c in commands
                if span.first <= c.line + start + line <= span.last
            ]
            if any(c.name == "sbatch" for c, _ in body):
                self.defined.append(span)
                self.functions[span.name] = [shift_command(c, offset) for c, offset in body]

    def _defines_at(self, line: int) -> bool:
        """The line lies inside a function the script defines (whose sbatch calls are read at each call)."""
        return bool(self.defined) and any(s.first <= line <= s.last for s in self.defined)

    def _call(self, call: Command) -> None:
        """A call of a function that submits: its sbatch and job-id assignments, at the call's line."""
        arguments = [w.value for w in call.words[1:]]
        local: dict[str, str] = {}
        for cmd in self.functions[call.name]:
            bound = idflow.bind_arguments(cmd, arguments, local, call.line)
            if bound.name == "shift":
                count = bound.words[1].value if len(bound.words) > 1 else "1"
                arguments = arguments[int(count) if count.isdigit() else 1 :]
                continue
            if bound.name in DECLARING:
                for word in bound.words[1:]:
                    if not word.value.startswith("-"):
                        name, _, value = word.value.partition("=")
                        local[name] = value
                        self.ids.assign(f"{name}={value}", call.line)
            for word in bound.assignments:
                self.ids.assign(word.value, call.line)
            if bound.name == "sbatch":
                self._submit(bound, bound.words)

    def inner(self, text: str, line: int, origin: CommandOrigin, depth: int) -> None:
        if not text.strip():
            return
        if depth < MAX_SCRIPT_DEPTH:
            self.read(text, line, origin, depth + 1)
        else:
            deep = MAX_SCRIPT_DEPTH
            message = f"a script ({origin}) nested more than {deep} deep: its commands were not read"
            self.diags.add("SHELL-TOO-DEEP", message, line=line)

    # -- one command -----------------------------------------------------------------
    def command(self, cmd: Command, depth: int, offset: int) -> None:
        """``cmd`` as read, with lines counted from ``offset``."""
        k = (
            None
            if self.functions and cmd.name in self.functions  # most scripts define no function
            else remembered.key(cmd, depth, self.known, self.arrays, self.path_vars, self.ids.held)
        )
        if k is None:
            self._command(shift_command(cmd, offset), depth)
            return
        line = cmd.line + offset
        recalled = remembered.recall(k, line)
        if recalled is not None:
            found, variables = recalled
            for name, items in found:
                getattr(self, name).extend(items)
            if variables:
                remembered.apply(variables, self._tables())
            if cmd.assignments and not (depth == 0 and self._defines_at(line)):
                for word in cmd.assignments:  # as _command tells the job-id flow
                    self.ids.assign(word.value, line)
            return
        cmd = shift_command(cmd, offset)
        before, tables = self._state(), remembered.snapshot(self._tables())
        sizes = [len(getattr(self, name)) for name in remembered.FINDINGS]
        self._command(cmd, depth)
        sets = remembered.sets_of(cmd, tables, self._tables())
        if self._state() == before and sets is not None:
            found = tuple(
                (name, tuple(getattr(self, name)[size:]))
                for name, size in zip(remembered.FINDINGS, sizes, strict=True)
                if len(getattr(self, name)) > size
            )
            remembered.keep(k, cmd, found, sets)

    def _tables(self) -> remembered.Tables:
        return self.known, self.arrays, self.path_vars

    def _state(self) -> tuple[int, ...]:
        """What a command kept by :mod:`.remembered` must leave as it was (besides its findings and
        the variables an export sets, checked apart)."""
        return (
            len(self.diags),
            len(self.containers),
            len(self.submits),
            len(self.signals),
            len(self.unparsed),
            len(self.functions),
            self.statements,
            self.understood,
            int(self.self_resubmit),
        )

    def _command(self, cmd: Command, depth: int) -> None:
        top = depth == 0 and cmd.origin is CommandOrigin.BODY and not cmd.nested
        defining = depth == 0 and self._defines_at(cmd.line)
        if not defining:
            for word in cmd.assignments:
                self.ids.assign(word.value, cmd.line)
            if cmd.name in self.functions:
                self._call(cmd)
        words = self._spliced(self._command_variable(cmd))
        if not words:
            self._assignments(cmd, top)
        # Word ids are only meaningful while this command's words are alive: keep
        # the marks per command (an inner script read on the way has its own).
        outer_marks, self.skip_paths = self.skip_paths, {}
        try:
            consumed: set[int] = set()
            if words:
                for chain in decompose(words, self.resolve):
                    for layer in chain.layers:
                        self._layer(cmd, layer)
                    self._program(cmd, chain, top, depth, consumed)
                self._arguments(words, consumed)
            self._redirects(cmd)
        finally:
            self.skip_paths = outer_marks

    def _command_variable(self, cmd: Command) -> tuple[Word, ...]:
        """'$PW -i in' where the script set PW="srun pw.x": read the command it holds."""
        words = cmd.words
        if not words:
            return words
        m = _VARIABLE_WORD.match(words[0].raw)
        value = self.known.get((m.group(1) or m.group(2)) if m else "", "")
        if not value or "$(" in value or "`" in value:
            return words
        line = words[0].line
        held = tuple([Word(t.text, dequote(t.text), line) for t in lex(value).tokens if t.kind == WORD])
        return held + words[1:] if held else words

    def _spliced(self, words: tuple[Word, ...]) -> tuple[Word, ...]:
        """Arguments bash splits into several words: ``"${ARGS[@]}"`` of an array the script set, and
        an unquoted ``$LAUNCHER`` holding a command line (``srun $LAUNCHER train.py``), so that a
        launcher's options are read wherever the script keeps them."""
        if len(words) < 2 or not any("$" in w.raw for w in words[1:]):
            return words
        out: list[Word] = [words[0]]
        changed = False
        for word in words[1:]:
            held = self._held_words(word)
            if held is None:
                out.append(word)
            else:
                out.extend(held)
                changed = True
        return tuple(out) if changed else words

    def _held_words(self, word: Word) -> list[Word] | None:
        array = _ARRAY_WORD.match(word.raw)
        if array is not None and array.group(1) in self.arrays:
            return [Word(item, dequote(item), word.line) for item in self.arrays[array.group(1)]]
        m = _VARIABLE_WORD.match(word.raw)  # unquoted only: "$X" stays one word
        value = self.known.get((m.group(1) or m.group(2)) if m else "", "")
        if len(value.split()) < 2 or "$(" in value or "`" in value:
            return None
        return [Word(t.text, dequote(t.text), word.line) for t in lex(value).tokens if t.kind == WORD]

    def resolve(self, text: str) -> str:
        """$NAME -> the literal the script set NAME to (for images, mounts, module lists)."""
        m = _VARIABLE_WORD.match(text)
        if not m:
            return text
        value = self.known.get(m.group(1) or m.group(2) or "")
        if value is None or "$(" in value or "`" in value:
            return text
        return value

    def _assignments(self, cmd: Command, top: bool) -> None:
        setup = environment.Setup()
        for word in cmd.assignments:
            name, value = environment.split_assignment(word.value)
            self._track(name, value, word.line, top)
            if top and "=(" not in word.raw:  # arrays cannot be exported
                setup.add_env(name, value, EnvOrigin.ASSIGN, word.line)
        self._apply(setup)

    def _track(self, name: str, value: str, line: int, top: bool) -> None:
        """Remember what a variable holds, for later $NAME uses."""
        self.arrays.pop(name, None)
        if top:
            self.known[name] = value
            if value.startswith("(") and value.endswith(")"):
                # NAME=(a "b c"): its elements, for "${NAME[@]}"
                self.arrays[name] = tuple([t.text for t in lex(value[1:-1]).tokens if t.kind == WORD])
        else:
            self.known.pop(name, None)  # set in a branch, loop or function: no single value
        path = paths.assigned_path(value, self.path_vars)
        if path is None:
            self.path_vars.pop(name, None)
            return
        self.path_vars[name] = path
        self._storage(path, paths.UNKNOWN, StorageVia.BODY, line)

    def _layer(self, cmd: Command, layer: Layer) -> None:
        if layer.kind is LayerKind.LAUNCHER:
            self.launchers.append(
                ir.Launcher(
                    name=layer.name,
                    options=tuple([ir.KeyValue(kv.key, redact(kv.value)) for kv in layer.options]),
                    program=tuple([redact(w.value) for w in layer.runs]),
                    line=layer.word.line,
                    text=redact(cmd.text),
                )
            )
            self._option_paths(layer)
        elif layer.kind is LayerKind.PROFILER:
            self.monitoring.append(monitoring.profiler_hook(layer.name, layer.own, layer.word.line))
        if layer.container is not None:
            self._container(layer)

    def _container(self, layer: Layer) -> None:
        container = layer.container
        assert container is not None
        self.containers.append(replace(container, command=tuple([redact(c) for c in container.command])))
        for path in paths.candidates(container.image, self.path_vars):
            if "://" not in container.image:
                self._storage(path, paths.READ, StorageVia.ARGUMENT, container.line or layer.word.line)
        inside: list[str] = []
        for mount in container.mounts:
            if mount.source:
                access = paths.READ if mount.read_only else paths.READ_WRITE
                for path in paths.candidates(mount.source, self.path_vars):
                    self._storage(path, access, StorageVia.CONTAINER_MOUNT, mount.line or layer.word.line)
            if mount.source != mount.target:
                inside.append(mount.target)
        for word in layer.own:
            self.skip_paths[id(word)] = ("",)  # runtime options: their mounts are read above
        for word in layer.runs:
            self.skip_paths[id(word)] = tuple(inside)

    def _option_paths(self, layer: Layer) -> None:
        """Paths in launcher options: srun --output/--chdir, deepspeed --hostfile ..."""
        for kv in layer.options:
            if kv.key in ("container-mounts", "container-image", "container-workdir"):
                continue  # mounts and the image are read with the container; the workdir is inside it
            access = paths.option_access(kv.key) or paths.UNKNOWN
            for path in paths.candidates(kv.value, self.path_vars):
                self._storage(path, access, StorageVia.ARGUMENT, layer.word.line)
        for word in layer.own:
            self.skip_paths[id(word)] = ("",)

    # -- the innermost program -------------------------------------------------------
    def _program(self, cmd: Command, chain: Chain, top: bool, depth: int, consumed: set[int]) -> None:
        program = chain.program
        if not program:
            return
        name = chain.name
        values = [w.value for w in program]
        if name in DECLARING:
            self._declaration(program, top)
        elif name in ("module", "ml", "spack"):
            self._modules(program)
        elif name in _SETUP or (_PYTHON.match(name) and "pip" in values[1:3]):
            setup = environment.Setup()
            environment.software_command(program, setup)
            self._apply(setup)
        elif name == "sbatch":
            if not (depth == 0 and self._defines_at(cmd.line)):  # read at each call of the function
                self._submit(cmd, program)
        elif name == "scontrol" and submissions.requeues_itself(program):
            self._resubmits(program[0].line, "scontrol requeue puts the job back in the queue")
        elif name == "trap":
            handler, names = signals.trap(program)
            for sig in names:
                if sig not in self.signals:
                    self.signals.append(sig)
            if handler is not None:
                consumed.add(id(handler))
                self.inner(
                    dequote(handler.raw, keep_continuations=True), handler.line, CommandOrigin.TRAP, depth
                )
        elif name == "eval" and len(program) > 1:
            consumed.update(id(w) for w in program[1:])
            self.inner(" ".join(values[1:]), program[1].line, CommandOrigin.EVAL, depth)
        if name in SHELLS:
            self._shell(cmd, program, depth, consumed)
        self._hooks(cmd, program)
        self._utility(program, consumed)
        if name in _INTERPRETERS or _PYTHON.match(name):
            script = next((w for w in program[1:] if not w.value.startswith("-")), None)
            if script is not None and id(script) not in consumed and not any(v == "-c" for v in values[1:]):
                self._word_paths(script, paths.READ, StorageVia.ARGUMENT)
                consumed.add(id(script))
        if program[0].value.startswith(("/", "~", "$")):
            self._word_paths(program[0], paths.READ, StorageVia.ARGUMENT)
        consumed.add(id(program[0]))

    def _submit(self, cmd: Command, program: tuple[Word, ...]) -> None:
        submission, itself = submissions.sbatch_call(cmd, self.ids.open_conditionals(program))
        submission = replace(
            submission,
            dependencies=tuple([self.ids.resolve(d) for d in submission.dependencies]),
            environment=self._sbatch_environment(cmd),
        )
        self.submits.append(submission)
        if submission.captures and submission.line is not None:
            self.ids.capture(submission.captures, submission.line)
        if itself:
            self._resubmits(program[0].line, "sbatch resubmits the script itself")

    def _sbatch_environment(self, cmd: Command) -> tuple[ir.KeyValue, ...]:
        """The SBATCH_* variables sbatch sees here: exported before the call, or set on its line.

        sbatch reads them as options (below its command line, above the script's #SBATCH
        lines); only literal values are kept.
        """
        found = {
            var.name: var.value
            for var in self.env
            if var.origin == EnvOrigin.EXPORT and var.name.startswith("SBATCH_") and var.value is not None
        }
        for word in cmd.assignments:  # SBATCH_PARTITION=gpu sbatch job.sh: for this call only
            name, value = environment.split_assignment(word.value)
            if name.startswith("SBATCH_"):
                found[name] = value
        return tuple(
            ir.KeyValue(name, _redact(value))
            for name, value in sorted(found.items())
            if value and "$" not in value and "`" not in value
        )

    def _declaration(self, program: tuple[Word, ...], top: bool) -> None:
        setup = environment.Setup()
        if program[0].value in ("export", "declare", "typeset"):
            environment.exported(program, self.known, setup)
        for word in program[1:]:
            if is_assignment(word.raw):
                name, value = environment.split_assignment(word.value)
                self._track(name, value, word.line, top)
        if not top:
            setup.env.clear()  # exports inside functions and branches are not the job's environment
        self._apply(setup)

    def _modules(self, program: tuple[Word, ...]) -> None:
        # 'module load $MODULES' with MODULES="gcc/12 openmpi/4": the list the script set
        words: list[Word] = []
        for w in program:
            resolved = self.resolve(w.raw)
            if resolved != w.raw:
                words.extend(Word(part, part, w.line) for part in resolved.split())
            else:
                words.append(w)
        setup = environment.Setup()
        environment.module_command(words, setup)
        self._apply(setup)

    def _shell(self, cmd: Command, program: tuple[Word, ...], depth: int, consumed: set[int]) -> None:
        """bash -c 'script' and bash [-s] <<EOF ... EOF: read the inner script."""
        args = program[1:]
        i = 0
        while i < len(args):
            value = args[i].value
            if value in ("-o", "+o", "-O", "+O"):
                i += 2  # set -o NAME
                continue
            if value.startswith("-") and not value.startswith("--") and "c" in value[1:]:
                if i + 1 < len(args):
                    script = args[i + 1]
                    consumed.add(id(script))
                    self.inner(
                        dequote(script.raw, keep_continuations=True),
                        script.line,
                        CommandOrigin.SHELL_C,
                        depth,
                    )
                return
            if not value.startswith(("-", "+")):
                return  # 'bash script.sh': a here-document would be that script's input
            i += 1
        for r in cmd.redirects:
            if r.heredoc is not None:
                self.inner(r.heredoc.body, r.heredoc.line, CommandOrigin.HEREDOC, depth)

    def _hooks(self, cmd: Command, program: tuple[Word, ...]) -> None:
        writes = next(
            (
                r.target.value
                for r in cmd.redirects
                if r.target and paths.redirect_access(r.op) == paths.WRITE
            ),
            None,
        )
        self.monitoring.extend(monitoring.program_hooks(program, cmd.background, writes))
        if basename(program[0].value) not in paths.QUIET:
            self.monitoring.extend(monitoring.argument_hooks(program[1:]))
            self.trackers_off.extend(monitoring.argument_switches(program[1:]))

    def _utility(self, program: tuple[Word, ...], consumed: set[int]) -> None:
        accesses = paths.utility_access(program)
        if accesses is None:
            return
        consumed.update(id(w) for w in program)
        for word, access in accesses:
            self._word_paths(word, access, StorageVia.BODY)
            if access == paths.WRITE:
                self._textfile(word.value, word.line)

    # -- arguments, redirections, storage ------------------------------------------------
    def _arguments(self, words: tuple[Word, ...], consumed: set[int]) -> None:
        """Paths in program arguments, with hints from option names (--output_dir, data.path=)."""
        option = ""
        for word in words:
            if id(word) in consumed or self.skip_paths.get(id(word)) == ("",):
                option = ""
                continue
            value = word.value
            if value.startswith("-") and len(value) > 1:
                name, eq, rest = value.lstrip("-").partition("=")
                option = "" if eq else name
                if eq:
                    self._word_paths(
                        Word(word.raw, rest, word.line),
                        paths.option_access(name),
                        StorageVia.ARGUMENT,
                        id(word),
                    )
                continue
            access = paths.option_access(option) if option else None
            key, eq, rest = value.partition("=")
            if eq and re.match(r"[A-Za-z_][A-Za-z0-9_.]*\Z", key):
                access = paths.option_access(key)
                value = rest
            self._word_paths(Word(word.raw, value, word.line), access, StorageVia.ARGUMENT, id(word))
            option = ""

    def _word_paths(
        self, word: Word, access: str | None, via: StorageVia, word_id: int | None = None
    ) -> list[str]:
        inside = self.skip_paths.get(word_id if word_id is not None else id(word), ())
        found: list[str] = []
        for path in paths.candidates(word.value, self.path_vars):
            if any(path == p or path.startswith(p.rstrip("/") + "/") for p in inside if p):
                continue  # a path inside a container, under a mount listed separately
            self._storage(path, access or paths.UNKNOWN, via, word.line)
            found.append(path)
        return found

    def _redirects(self, cmd: Command) -> None:
        for r in cmd.redirects:
            access = paths.redirect_access(r.op)
            if r.target is None or access is None:
                continue
            self._word_paths(r.target, access, StorageVia.BODY)
            if access == paths.WRITE:
                self._textfile(r.target.value, r.target.line)

    def _textfile(self, written: str, line: int) -> None:
        """A write into a node_exporter textfile directory, however the path was spelled."""
        m = _LEADING_VARIABLE.match(written)
        value = self.known.get(m.group(1) or m.group(2) or "") if m else None
        if m and value is not None and "$(" not in value:
            written = value + written[m.end() :]
        hook = monitoring.textfile_hook(written, line)
        if hook is not None:
            self.monitoring.append(hook)

    def _storage(self, path: str, access: str, via: StorageVia, line: int) -> None:
        self.storage.append(ir.StoragePath(path=path, access=access, via=via, line=line))

    # -- bookkeeping --------------------------------------------------------------------
    def _apply(self, setup: environment.Setup) -> None:
        self.env.extend(setup.env)
        self.modules.extend(setup.modules)
        self.software.extend(setup.software)
        self.raw.extend(setup.raw)
        for var in setup.env:
            if var.origin == EnvOrigin.EXPORT:
                hook = monitoring.env_hook(var.name, var.value, var.line or 0)
                if hook is not None:
                    self.monitoring.append(hook)
        for name, line in setup.secret_literals:
            self.diags.add(
                "SHELL-SECRET-LITERAL",
                f"{name} is set to a literal credential in the script; the value was not kept",
                line=line,
            )

    def _resubmits(self, line: int, message: str) -> None:
        self.self_resubmit = True
        self.diags.add("SLURM-SELF-RESUBMIT", message, line=line)

    def _trackers_off(self) -> list[str]:
        from_env = [env_switch(var.name, var.value) for var in self.env]
        return self.trackers_off + [kind for kind in from_env if kind is not None]

    def facts(self) -> BodyFacts:
        return BodyFacts(
            launchers=tuple(self.launchers),
            containers=_unique_containers(self.containers),
            modules=tuple(dict.fromkeys(self.modules)),
            software_envs=tuple(dict.fromkeys(self.software)),
            environment=tuple(self.env),
            storage=_unique_storage(self.storage),
            monitoring=_unique_hooks(without_switched_off(self.monitoring, self._trackers_off())),
            trackers_off=tuple(dict.fromkeys(self._trackers_off())),
            submits=tuple(self.submits),
            slurm_vars=tuple(sorted(self.slurm_vars)),
            statements=self.statements,
            understood=self.understood,
            unparsed=tuple(self.unparsed),
            self_resubmit=self.self_resubmit,
            signals_trapped=tuple(self.signals),
            raw=tuple(self.raw),
        )


def _unique_storage(items: list[ir.StoragePath]) -> tuple[ir.StoragePath, ...]:
    """One entry per (path, access), first line kept; 'unknown' dropped when a path has a known access."""
    first: dict[tuple[str, str], ir.StoragePath] = {}
    for item in sorted(items, key=lambda s: s.line or 0):
        first.setdefault((item.path, item.access), item)
    known = {path for path, access in first if access != paths.UNKNOWN}
    return tuple([s for (path, access), s in first.items() if access != paths.UNKNOWN or path not in known])


def _unique_hooks(items: list[ir.MonitoringHook]) -> tuple[ir.MonitoringHook, ...]:
    first: dict[tuple[str, str], ir.MonitoringHook] = {}
    for item in sorted(items, key=lambda h: h.line or 0):
        first.setdefault((item.kind, item.detail), item)
    return tuple(first.values())


def _unique_containers(items: list[ir.Container]) -> tuple[ir.Container, ...]:
    """The same image run the same way is one container, at its first line."""
    first: dict[object, ir.Container] = {}
    for c in items:
        mounts = tuple([(m.source, m.target, m.read_only) for m in c.mounts])
        first.setdefault((c.runtime, c.image, mounts, c.workdir), c)
    return tuple(first.values())
