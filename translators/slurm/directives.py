"""Reading ``#SBATCH`` lines the way sbatch does.

sbatch reads ``#SBATCH`` lines (the magic word at column 0, case-sensitive)
until the first line that is neither blank nor a comment. Each line is split
into words like a shell would, minus expansion: single and double quotes group,
a backslash escapes the next character, and an unquoted ``#`` ends the line. The
words of all lines of one hetjob component form one argv that getopt_long
parses, so ``--nodes`` at the end of one line takes the first word of the next
as its value, long options may be abbreviated to any unambiguous prefix, and a
stray word makes sbatch refuse the script. A directive whose first word is
``hetjob`` (or the old ``packjob``) starts the next component; sbatch ignores
the rest of that line. (The edge cases were checked against a real sbatch.)

Nothing here raises on input: problems become diagnostics and reading goes on.
"""

from __future__ import annotations

import difflib
import functools
import re
from dataclasses import dataclass

from migrate import ir
from migrate.diagnostics import ERROR, WARNING, Collector
from migrate.vocab import PlaceholderRole

from ..shell.redact import export_names_only
from . import options as opts
from .options import Option

MAGIC = "#SBATCH"

# Disabled directives: '##SBATCH', '# SBATCH', '  #SBATCH' (sbatch wants column 0), '#sbatch'.
# A lowercase '# sbatch --x' is usually a usage note, so only '#sbatch' glued to the hash counts.
_DISABLED = re.compile(r"\s*#[#\s]*SBATCH(?=[\s-]|$)|\s*#+(?i:sbatch)\s+-")
_DYNAMIC = re.compile(r"\$(?:[A-Za-z_][A-Za-z0-9_]*|\{[^}]*\}|\(|[0-9@*#?$!-])")
_ENVSUBST = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*(?:[:?=+-][^}]*)?\}")
_PLACEHOLDER = re.compile(r"<[A-Za-z][A-Za-z0-9_ :./-]*>|@[A-Z][A-Z0-9_]*@")
_JINJA = re.compile(
    r"\{\{-?\s*[A-Za-z_][\w.]*(?:\s*\|[^}]*|\s*\([^)]*\))?\s*-?\}\}"
    r"|\{%-?\s*(?:if|elif|else|endif|for|endfor|set|macro|endmacro|include|import|block|endblock|extends|raw)\b"
)
_JINJA_LINE = re.compile(r"\s*(?:\{%.*%\}|\{#.*#\}|\{\{.*\}\})\s*\Z")
_JINJA_SPAN = re.compile(r"\{\{.*?\}\}|\{%.*?%\}")
_SPACES = re.compile(r"\s+")
_NEEDS_SCAN = re.compile(r"[\\'\"#]")


@dataclass(frozen=True)
class Word:
    """One word of a directive line after quote removal."""

    text: str
    line: int


@dataclass(frozen=True)
class Setting:
    """One option as given: the table row, its raw value and where it was."""

    option: Option
    value: str | None  # None for flags and for optional arguments given bare
    line: int
    spelled: str  # as written: -N, --nodes, --workdir, --part
    component: int = 0
    dynamic: bool = False  # holds $VAR or a template marker: kept verbatim, not parsed


@dataclass(frozen=True)
class Unknown:
    """An option sbatch does not know (or no longer knows); kept as a raw item."""

    spelled: str
    value: str | None
    line: int
    component: int = 0


@dataclass(frozen=True)
class Header:
    settings: tuple[Setting, ...] = ()
    unknown: tuple[Unknown, ...] = ()
    components: int = 1
    separator_lines: tuple[int, ...] = ()
    last_directive_line: int = 0  # 0 when there is no directive
    first_command_line: int | None = None
    shebang: str | None = None
    templated: bool = False
    unresolved: tuple[ir.Unresolved, ...] = ()  # placeholders left without a value


# Options whose value sizes the job: a placeholder there leaves its nodes or GPUs unknown.
_NODE_OPTIONS = frozenset({"nodes"})
_GPU_OPTIONS = frozenset({"gpus", "gpus-per-node", "gpus-per-task", "gres"})


def _placeholder_names(text: str) -> list[str]:
    """The variables of ``${NAME}`` and ``<NAME>`` placeholders in a directive's word."""
    if "${" not in text and "<" not in text and "@" not in text:
        return []  # every directive word is asked: most hold no placeholder's opening
    names = [m.group(0)[2:].split("}")[0].split(":")[0].rstrip("?=+-") for m in _ENVSUBST.finditer(text)]
    names += [m.group(0).strip("<>@") for m in _PLACEHOLDER.finditer(text)]
    return names


def unresolved_settings(settings: tuple[Setting, ...]) -> tuple[ir.Unresolved, ...]:
    """Each placeholder of the directives, typed by what its option sizes."""
    found: list[ir.Unresolved] = []
    for setting in settings:
        for name in _placeholder_names(setting.value or ""):
            long = setting.option.long
            role = (
                PlaceholderRole.NODES
                if long in _NODE_OPTIONS
                else PlaceholderRole.GPUS
                if long in _GPU_OPTIONS
                else PlaceholderRole.OTHER
            )
            found.append(ir.Unresolved(name, role, f"--{long}", setting.line))
    return tuple(dict.fromkeys(found))


def split_lines(text: str) -> list[str]:
    """Lines as sbatch sees them: BOM and CR removed, split on newlines only."""
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if "\r" not in text:
        return lines
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def tokenize(text: str, line: int) -> tuple[list[Word], str | None, bool]:
    """Split a directive's text into words.

    Returns the words, an error sbatch would stop on, and whether an unquoted
    ``#`` inside a word cut the line short (a value like ``nvcr.io#nvidia/...``).
    """
    if not _NEEDS_SCAN.search(text):  # the common case: no quotes, escapes or comments
        parts = text.split()
        if parts and parts[0].startswith(":"):
            return [], "a directive cannot start with ':'", False
        return [Word(p, line) for p in parts], None, False
    if "'" not in text and '"' not in text and "\\" not in text:
        at = text.index("#")
        cut = at > 0 and not text[at - 1].isspace()
        words, error, _ = tokenize(text[:at], line)
        return words, error, cut and not error and bool(words)
    words = []
    i, n = 0, len(text)
    while i < n:
        while i < n and text[i].isspace():
            i += 1
        if i >= n or text[i] == "#":
            break
        if not words and text[i] == ":":
            return words, "a directive cannot start with ':'", False
        chars: list[str] = []
        quote = ""
        while i < n and (quote or not text[i].isspace()):
            ch = text[i]
            if ch == "\\":  # escapes the next character, inside quotes too
                chars.append(text[i + 1 : i + 2])
                i += 2
                continue
            if quote:
                if ch == quote:
                    quote = ""
                else:
                    chars.append(ch)
            elif ch in "'\"":
                quote = ch
            elif ch == "#":  # an unquoted '#' ends the line, even inside a word
                words.append(Word("".join(chars), line))
                return words, None, True
            else:
                chars.append(ch)
            i += 1
        if quote:
            return words, f"unmatched {quote} quote", False
        if chars:  # sbatch drops an empty word ('' or ""): -J '' is -J with no value
            words.append(Word("".join(chars), line))
    return words, None, False


def is_dynamic(value: str) -> bool:
    """True when a value holds shell syntax or template markers sbatch takes literally."""
    return bool(_DYNAMIC.search(value) or _PLACEHOLDER.search(value) or "{{" in value or "{%" in value)


def is_jinja(text: str) -> bool:
    return bool(_JINJA.search(text))


def _first_jinja_line(lines: list[str]) -> int | None:
    """The number of the first line holding Jinja, if any."""
    whole = "\n".join(lines)
    if "{{" not in whole and "{%" not in whole:  # both open every Jinja match
        return None
    return next((n for n, line in enumerate(lines, 1) if is_jinja(line)), None)


class _Reporter:
    """Diagnostics for one file, tagged with the job id."""

    def __init__(self, diags: Collector, job: str | None) -> None:
        self.diags = diags
        self.job = job

    def add(self, code: str, message: str, line: int | None, severity: str | None = None) -> None:
        self.diags.add(code, message, line=line, job=self.job, severity=severity)


def _suggest(name: str, table: opts.Table) -> str:
    close = _closest(name, table.names())
    return f"; did you mean --{close}?" if close else ""


@functools.lru_cache(maxsize=4096)
def _closest(name: str, names: tuple[str, ...]) -> str | None:
    # A site copies its misspelt options from script to script, and each look costs a
    # third of a millisecond against every name sbatch takes: each spelling is looked up once.
    close = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
    return close[0] if close else None


# What an unknown long option with no close spelling may be: a SPANK plugin's that the site has
# not listed yet.
_SITE_PLUGIN_HINT = (
    "; if a SPANK plugin of this site adds it, list it in migrate.yaml under spank_options "
    "(name, plugin, takes_value)"
)


def parse_words(
    words: list[Word],
    diags: Collector,
    job: str | None = None,
    component: int = 0,
    table: opts.Table = opts.SBATCH,
) -> tuple[list[Setting], list[Unknown]]:
    """Parse sbatch arguments like getopt_long with sbatch's option table.

    Also usable on the options of an ``sbatch`` command line in a wrapper
    script. Diagnostics are added for unknown, obsolete, abbreviated or
    malformed options; every option, known or not, is returned.
    """
    settings, unknown, _ = _ArgvParser(_Reporter(diags, job), component, table=table).run(words)
    return settings, unknown


def parse_command_line(
    words: list[Word], diags: Collector, job: str | None = None, table: opts.Table = opts.SBATCH
) -> tuple[list[Setting], list[Unknown], list[Word]]:
    """The options of an ``sbatch`` command line (without ``sbatch`` itself).

    Like getopt, parsing stops at the first word that is not an option: that
    word (the script) and its arguments are returned as the third item.
    """
    return _ArgvParser(_Reporter(diags, job), 0, stop_at_positional=True, table=table).run(words)


class _ArgvParser:
    def __init__(
        self,
        report: _Reporter,
        component: int,
        stop_at_positional: bool = False,
        table: opts.Table = opts.SBATCH,
    ) -> None:
        self.report = report
        self.table = table
        self.component = component
        self.stop_at_positional = stop_at_positional
        self.settings: list[Setting] = []
        self.unknown: list[Unknown] = []
        self.bare_optional: Setting | None = None  # the last optional-argument option given bare

    def run(self, words: list[Word]) -> tuple[list[Setting], list[Unknown], list[Word]]:
        i = 0
        options_ended = False
        while i < len(words):
            word = words[i]
            text = word.text
            i += 1
            if options_ended or not text.startswith("-") or text == "-":
                if self.stop_at_positional:
                    return self.settings, self.unknown, words[i - 1 :]
                self._stray(word)
                continue
            if text == "--":
                options_ended = True
                continue
            parse = self._long if text.startswith("--") else self._short
            i = parse(words, i, word)
        return self.settings, self.unknown, []

    # -- long options --------------------------------------------------------

    def _long(self, words: list[Word], i: int, word: Word) -> int:
        name, eq, attached = word.text[2:].partition("=")
        value = attached if eq else None
        option = self._resolve_long(name, word.line)
        if option is None:
            if value is None and i < len(words) and not words[i].text.startswith("-"):
                value = words[i].text  # an unknown option probably took the next word
                i += 1
            self.unknown.append(Unknown(f"--{name}", value, word.line, self.component))
            return i
        spelled = f"--{name}"
        if option.arg == opts.NONE:
            if value is not None:
                self.report.add(
                    "SLURM-UNEXPECTED-VALUE",
                    f"{spelled} takes no value but was given {value!r}; sbatch refuses it",
                    word.line,
                    severity=ERROR,
                )
            self._add(option, None, word.line, spelled)
            return i
        if option.arg == opts.OPTIONAL:
            self._add(option, value, word.line, spelled)
            return i
        if value is None and i < len(words) and not words[i].text.startswith("--"):
            value = words[i].text
            i += 1
        self._required(option, value, word.line, spelled)
        return i

    def _resolve_long(self, name: str, line: int) -> Option | None:
        option, candidates = self.table.lookup_long(name)
        if option is not None:
            if option.plugin:
                listed = " (listed in migrate.yaml spank_options)" if option.long in self.table.site else ""
                self.report.add(
                    "SLURM-PLUGIN-OPTION",
                    f"--{option.long} comes from the {option.plugin} SPANK plugin{listed}; sbatch takes it "
                    "only where the plugin is installed",
                    line,
                )
            if option.long != name:
                self.report.add(
                    "SLURM-OBSOLETE-OPTION",
                    f"--{name} is an abbreviation of --{option.long} that sbatch accepts; write it in full",
                    line,
                )
            return option
        old = opts.OBSOLETE.get(name)
        if old is not None:
            replacement = opts.BY_LONG.get(old.replacement) if old.replacement else None
            if old.accepted:
                self.report.add("SLURM-OBSOLETE-OPTION", f"--{name}: {old.note}", line)
            else:
                where = f"; read as --{replacement.long}" if replacement else "; kept as a raw item"
                self.report.add(
                    "SLURM-OBSOLETE-OPTION",
                    f"--{name}: {old.note}; current sbatch rejects it{where}",
                    line,
                    severity=ERROR,
                )
            return replacement
        if candidates:
            self.report.add(
                "SLURM-UNKNOWN-OPTION",
                f"--{name} is ambiguous: it could be {', '.join('--' + c for c in candidates)}",
                line,
            )
        elif name in opts.SRUN_ONLY:
            self.report.add("SLURM-UNKNOWN-OPTION", f"--{name} is an srun option, not an sbatch one", line)
        else:
            # no close spelling: more likely a SPANK plugin's option than a typo
            hint = _suggest(name, self.table) or _SITE_PLUGIN_HINT
            self.report.add("SLURM-UNKNOWN-OPTION", f"unknown option --{name}{hint}", line)
        return None

    # -- short options -------------------------------------------------------

    def _short(self, words: list[Word], i: int, word: Word) -> int:
        text = word.text
        pos = 1
        while pos < len(text):
            letter = text[pos]
            rest = text[pos + 1 :]
            spelled = f"-{letter}"
            option = self._resolve_short(letter, word.line)
            if option is None:
                self.unknown.append(Unknown(spelled, rest or None, word.line, self.component))
                return i
            if option.arg == opts.NONE:
                self._add(option, None, word.line, spelled)
                pos += 1
                continue
            if option.arg == opts.OPTIONAL:  # getopt: only an attached value counts
                self._add(option, rest or None, word.line, spelled)
                return i
            value: str | None = rest or None
            if value is None and i < len(words) and not words[i].text.startswith("--"):
                value = words[i].text
                i += 1
            self._required(option, value, word.line, spelled)
            return i
        return i

    def _resolve_short(self, letter: str, line: int) -> Option | None:
        option = opts.BY_SHORT.get(letter)
        if option is not None:
            return option
        old = opts.OBSOLETE_SHORT.get(letter)
        if old is not None:
            replacement = opts.BY_LONG.get(old)
            where = f"; read as --{replacement.long}" if replacement else ""
            self.report.add(
                "SLURM-OBSOLETE-OPTION",
                f"-{letter} is an old short option that current sbatch rejects{where}",
                line,
                severity=ERROR,
            )
            return replacement
        other = letter.swapcase()
        hint = f"; did you mean -{other} (--{opts.BY_SHORT[other].long})?" if other in opts.BY_SHORT else ""
        self.report.add("SLURM-UNKNOWN-OPTION", f"unknown option -{letter}{hint}", line)
        return None

    # -- values ----------------------------------------------------------------

    def _required(self, option: Option, value: str | None, line: int, spelled: str) -> None:
        if value == "" and option.long in opts.EMPTY_ACCEPTED:
            self.report.add(
                "SLURM-MISSING-VALUE",
                f"{spelled} is given an empty value; sbatch accepts it as if the option were not given",
                line,
                severity=WARNING,
            )
            return
        if not value:
            self.report.add("SLURM-MISSING-VALUE", f"{spelled} needs a value", line)
            return
        self._add(option, value, line, spelled)

    def _add(self, option: Option, value: str | None, line: int, spelled: str) -> None:
        setting = Setting(
            option, value, line, spelled, self.component, bool(value) and is_dynamic(value or "")
        )
        self.settings.append(setting)
        self.bare_optional = setting if option.arg == opts.OPTIONAL and value is None else None

    def _stray(self, word: Word) -> None:
        bare = self.bare_optional
        if bare is not None and bare.line == word.line:
            message = (
                f"{bare.spelled} takes its value only as {bare.spelled}={word.text}; "
                f"sbatch stops on the stray word {word.text!r}"
            )
        else:
            message = f"stray word {word.text!r}: sbatch stops on it (values follow their option)"
        self.report.add("SLURM-UNEXPECTED-VALUE", message, word.line, severity=ERROR)
        self.bare_optional = None


# ---------------------------------------------------------------------------
# The header of a script
# ---------------------------------------------------------------------------


def read_header(
    lines: list[str], diags: Collector, job: str | None = None, table: opts.Table = opts.SBATCH
) -> Header:
    """Read the directives of a batch script; the lines come from :func:`split_lines`."""
    report = _Reporter(diags, job)
    shebang = lines[0] if lines and lines[0].startswith("#!") else None
    if shebang is None:
        report.add(
            "SLURM-NO-SHEBANG",
            "the first line is not #!interpreter; sbatch refuses the script (add #!/bin/bash)",
            1,
        )
    templated_at = _first_jinja_line(lines)
    jinja = templated_at is not None
    components: list[list[Word]] = [[]]
    separators: list[int] = []
    last_directive = 0
    first_command: int | None = None
    placeholder_names: list[str] = []  # the placeholders' variables, in line order
    for number, line in enumerate(lines, start=1):
        if first_command is not None:
            if line.startswith(MAGIC):
                report.add(
                    "SLURM-DIRECTIVE-AFTER-COMMAND",
                    f"#SBATCH after the first command (line {first_command}); sbatch ignores it",
                    number,
                )
            continue
        if not line.startswith(MAGIC):
            stripped = line.lstrip()
            if not stripped:
                continue
            if stripped.startswith("#"):
                if _DISABLED.match(line):
                    report.add(
                        "SLURM-COMMENTED-DIRECTIVE",
                        f"disabled directive {stripped[:40]!r} ignored (sbatch reads only '#SBATCH' at "
                        "the start of a line)",
                        number,
                    )
                continue
            if jinja and _JINJA_LINE.match(line):
                continue  # a template statement, not a command
            first_command = number
            continue
        last_directive = number
        rest = line[len(MAGIC) :]
        if jinja:  # keep each {{ expression }} in one word, as the rendered value will be
            rest = _JINJA_SPAN.sub(lambda m: _SPACES.sub("", m.group()), rest)
        words, error, cut = tokenize(rest, number)
        if error:
            report.add("SLURM-BAD-VALUE", f"{error}; sbatch refuses the script", number)
        if cut:
            report.add(
                "SLURM-BAD-VALUE",
                f"an unquoted '#' inside {words[-1].text + '#'!r}... starts a comment: sbatch reads only "
                f"{words[-1].text!r} and ignores the rest of the line (quote or escape the '#')",
                number,
                severity=WARNING,
            )
        names = [name for w in words for name in _placeholder_names(w.text)]
        placeholder_names.extend(names)
        if templated_at is None and names:
            templated_at = number
        if words and words[0].text.lower() in opts.HETJOB_WORDS:
            separators.append(number)
            components.append([])
            _note_separator(words, report)
            continue
        components[-1].extend(_without_separator_words(words, report))
    if templated_at is not None:
        report.add(
            "SLURM-TEMPLATED", _templated_message(jinja, list(dict.fromkeys(placeholder_names))), templated_at
        )
    settings: list[Setting] = []
    unknown: list[Unknown] = []
    for index, words in enumerate(components):
        found, missing = parse_words(words, diags, job, index, table)
        check_settings(found, diags, job, templated_at is not None)
        settings.extend(found)
        unknown.extend(missing)
    if len(components) > 1:
        report.add(
            "SLURM-HETJOB",
            f"a heterogeneous job with {len(components)} components (separators on lines "
            f"{', '.join(map(str, separators))})",
            separators[0],
        )
    return Header(
        settings=tuple(settings),
        unknown=tuple(unknown),
        components=len(components),
        separator_lines=tuple(separators),
        last_directive_line=last_directive,
        first_command_line=first_command,
        shebang=shebang,
        templated=templated_at is not None,
        unresolved=unresolved_settings(tuple(settings)),
    )


def _note_separator(words: list[Word], report: _Reporter) -> None:
    """What sbatch does not say about a separator line: old spelling, ignored options."""
    first = words[0]
    if first.text.lower() == "packjob":
        report.add("SLURM-OBSOLETE-OPTION", "packjob is the pre-20.02 name of hetjob", first.line)
    if len(words) > 1:
        report.add(
            "SLURM-HETJOB",
            f"sbatch ignores what follows {first.text} on its line: {' '.join(w.text for w in words[1:])}",
            first.line,
            severity=WARNING,
        )


def _without_separator_words(words: list[Word], report: _Reporter) -> list[Word]:
    """sbatch skips a separator word that is not first on its line; it starts no component."""
    kept: list[Word] = []
    for word in words:
        if word.text.lower() in opts.HETJOB_WORDS:
            report.add(
                "SLURM-HETJOB",
                f"'{word.text}' separates hetjob components only as the first word of a directive; "
                "sbatch ignores it here",
                word.line,
                severity=WARNING,
            )
        else:
            kept.append(word)
    return kept


def check_settings(
    settings: list[Setting],
    diags: Collector,
    job: str | None = None,
    templated: bool = False,
    command_line: bool = False,
) -> None:
    """Diagnostics about one component's options as a whole: repeats and dynamic values.

    ``command_line``: the options were given to a command in the script (salloc), where the
    shell expands them when the script runs, not in ``#SBATCH`` lines, where nothing does.
    """
    report = _Reporter(diags, job)
    _report_repeats(settings, report)
    if command_line:
        _report_run_time(settings, report)
    else:
        _report_dynamic(settings, report, templated)


def _report_run_time(settings: list[Setting], report: _Reporter) -> None:
    for setting in settings:
        if setting.dynamic and setting.value is not None:
            report.add(
                "SLURM-DYNAMIC-VALUE",
                f"{setting.spelled}={export_names_only(setting.value)}: the shell sets it when the script "
                "runs; the plan uses what it can tell without running it",
                setting.line,
            )


def _report_repeats(settings: list[Setting], report: _Reporter) -> None:
    seen: dict[str, Setting] = {}
    for setting in settings:
        option = setting.option
        earlier = seen.get(option.long)
        seen[option.long] = setting
        if earlier is None or option.accumulate:
            continue
        shown = f" ({export_names_only(setting.value)})" if setting.value is not None else ""
        report.add(
            "SLURM-REPEATED-OPTION",
            f"--{option.long} is given on lines {earlier.line} and {setting.line}; "
            f"the last value{shown} wins, as in sbatch",
            setting.line,
        )


def _templated_message(jinja: bool, missing: list[str]) -> str:
    if not missing:
        return "the script is a template (Jinja); render it first, sbatch does not expand it"
    shown = ", ".join(missing)
    also = " and Jinja" if jinja else ""
    return (
        f"the script is a template{also}; no value for {shown}: the directives that hold them are read "
        "as unknown (give the values with --set NAME=VALUE or --env-file FILE); sbatch does not expand them"
    )


def _report_dynamic(settings: list[Setting], report: _Reporter, templated: bool) -> None:
    for setting in settings:
        if not setting.dynamic or setting.value is None:
            continue
        if templated and not _bare_variable(setting.value):
            continue  # the one SLURM-TEMPLATED diagnostic covers template markers
        report.add(
            "SLURM-DYNAMIC-VALUE",
            f"{setting.spelled}={export_names_only(setting.value)}: sbatch does not expand shell syntax "
            "in directives; the value is kept verbatim",
            setting.line,
        )


def _bare_variable(value: str) -> bool:
    """A $VAR that no template engine filled: what the user expected the shell to do."""
    return bool(_DYNAMIC.search(_ENVSUBST.sub("", value)))
