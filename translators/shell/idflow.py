"""Which submission a job-id variable holds, in the order a wrapper script runs.

Wrappers chain jobs through variables: ``jid=$(sbatch --parsable a.sbatch)``,
``dep=$jid``, ``sbatch ${dep:+--dependency=afterok:$dep} b.sbatch``, often
inside a small shell function called once per step. Read line by line, the
``sbatch`` inside the function is one call with ``$script`` unknown and
``$dep`` anything. This module follows the values the way bash would on the
straight path through the script (branches taken, loops once): it tracks
which submission each variable holds, opens ``${VAR:+...}`` options only when
VAR is set, binds a function's positional parameters at each call, and
rewrites a dependency on ``$dep`` into the submission it names
(``ir.SUBMITTED_AT`` plus that submission's line). Nothing is executed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from migrate import ir

from .model import Command, Word

_REFERENCE = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))\Z")
_CONDITIONAL = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*):?\+(.*)\}\Z", re.DOTALL)
_PARAMETER = re.compile(r"\$(?:\{([0-9]|[A-Za-z_][A-Za-z0-9_]*)\}|([0-9]|[A-Za-z_][A-Za-z0-9_]*))")
_ARRAY = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\[[*@]\]\}")
_JOINED = re.compile(r"\$\(\s*IFS=[^;]*;\s*echo\s+(\"?\$\{[A-Za-z_][A-Za-z0-9_]*\[[*@]\]\}\"?)\s*\)")
_ALL_ARGUMENTS = frozenset({"$@", "${@}", "$*", "${*}"})
_EMPTY = frozenset({"", '""', "''"})
# name() {   |   function name {   |   function name() {
_HEADER = re.compile(
    r"^(?P<indent>\s*)(?:function\s+(?P<kw>[A-Za-z_][\w-]*)\s*(?:\(\s*\))?|(?P<name>[A-Za-z_][\w-]*)\s*\(\s*\))"
    r"\s*(?P<rest>.*)$"
)
_CLOSE = re.compile(r"^(?P<indent>\s*)\}\s*(?:#.*)?$")
_EMPTY_PARENS = re.compile(r"\(\s*\)")  # in every header but those of the function keyword


@dataclass(frozen=True, slots=True)
class FunctionSpan:
    name: str
    first: int  # the header's line
    last: int  # the closing brace's line


def function_spans(text: str, start_line: int) -> list[FunctionSpan]:
    """Shell functions defined at the top of the script, with the lines they cover."""
    if "function" not in text and _EMPTY_PARENS.search(text) is None:
        return []  # no line can hold a header: most scripts define no function
    lines = text.split("\n")
    spans: list[FunctionSpan] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if "(" not in line and "function" not in line:  # no header: the pattern needs either
            i += 1
            continue
        m = _HEADER.match(line)
        if m is None or not (m.group("rest").startswith("{") or m.group("rest") == ""):
            i += 1
            continue
        name = m.group("kw") or m.group("name") or ""
        rest = m.group("rest").split("#", 1)[0].rstrip()
        if rest.startswith("{") and rest.endswith("}") and len(rest) > 1:
            spans.append(FunctionSpan(name, start_line + i, start_line + i))  # f() { ...; }
            i += 1
            continue
        indent = len(m.group("indent"))
        for j in range(i + 1, len(lines)):
            close = _CLOSE.match(lines[j])
            if close is not None and len(close.group("indent")) <= indent:
                spans.append(FunctionSpan(name, start_line + i, start_line + j))
                i = j
                break
        i += 1
    return spans


@dataclass
class JobIdFlow:
    """Variables that hold job ids: name -> the lines of the sbatch calls whose ids it holds, in order
    (empty when the variable is set but empty; an array of ids or ``a:b`` joined ids hold several)."""

    held: dict[str, tuple[int, ...]] = field(default_factory=dict)
    captured: dict[str, int] = field(default_factory=dict)  # name -> line of its last capture

    def assign(self, word: str, line: int) -> None:
        """One ``NAME=value`` or ``NAME+=(value)`` word, as written."""
        name, _, value = word.partition("=")
        append = name.endswith("+")
        name = name.rstrip("+")
        text = value.strip()
        if text.startswith("(") and text.endswith(")"):
            text = text[1:-1].strip()
        ids = self._ids(text)
        if ids is None and ("$(" in text or "`" in text) and self.captured.get(name) == line:
            return  # jid=$(sbatch ...): the capture just recorded it
        if ids is None:
            self.held.pop(name, None)
        elif append and name in self.held:
            self.held[name] = self.held[name] + ids
        else:
            self.held[name] = ids

    def _ids(self, text: str) -> tuple[int, ...] | None:
        """What a value holds when it is made only of job-id variables; None when it is anything else."""
        joined = _JOINED.fullmatch(text)
        if joined is not None:  # $(IFS=:; echo "${jids[*]}")
            text = joined.group(1)
        if text in _EMPTY:
            return ()
        out: tuple[int, ...] = ()
        for part in re.split(r"[:,\s]+", text.strip("\"'")):
            ref = _REFERENCE.fullmatch(part.strip("\"'")) or _ARRAY.fullmatch(part.strip("\"'"))
            source = (ref.group(1) or ref.group(2)) if ref else None
            if source is None or source not in self.held:
                return None
            out += self.held[source]
        return out

    def capture(self, name: str, line: int) -> None:
        self.held[name] = (line,)
        self.captured[name] = line

    def open_conditionals(self, words: tuple[Word, ...]) -> tuple[Word, ...]:
        """``${dep:+--dependency=afterok:$dep}``: the option when dep is set, nothing when it is empty,
        left as written (read as given) when the script never set dep."""
        out: list[Word] = []
        for word in words:
            m = _CONDITIONAL.match(word.value)
            if m is None or m.group(1) not in self.held:
                out.append(word)
            elif self.held[m.group(1)]:
                out.extend(Word(part, part, word.line) for part in m.group(2).split())
        return tuple(out)

    def resolve(self, dependency: ir.Dependency) -> ir.Dependency:
        """Targets naming a variable that holds submissions become those submissions."""
        targets: list[str] = []
        for target in dependency.targets:
            ids = self._ids(target)
            if ids:
                targets.extend(
                    f"{ir.SUBMITTED_AT}{line}" for line in ids if f"{ir.SUBMITTED_AT}{line}" not in targets
                )
            else:
                targets.append(target)
        return ir.replace(dependency, targets=tuple(targets))


def bind_arguments(cmd: Command, arguments: list[str], local: dict[str, str], line: int) -> Command:
    """A command of a function body as it runs at one call: ``$1``, ``"$@"`` and the function's
    ``local name=$1`` values filled in, every word on the call's line."""
    words: list[Word] = []
    for word in cmd.words:
        if word.value in _ALL_ARGUMENTS:
            words.extend(Word(a, a, line) for a in arguments)
            continue
        value = _PARAMETER.sub(lambda m: _parameter(m, arguments, local), word.value)
        raw = word.raw if value == word.value else value
        words.append(Word(raw, value, line))
    return Command(
        words=tuple(words),
        assignments=tuple([Word(w.raw, w.value, line) for w in cmd.assignments]),
        redirects=cmd.redirects,
        line=line,
        text=cmd.text,
        background=cmd.background,
        nested=True,
        captured_by=cmd.captured_by,
        origin=cmd.origin,
    )


def _parameter(m: re.Match[str], arguments: list[str], local: dict[str, str]) -> str:
    name = m.group(1) or m.group(2)
    if name.isdigit():
        index = int(name)
        if index == 0:
            return m.group(0)
        return arguments[index - 1] if index <= len(arguments) else ""
    return local.get(name, m.group(0))


__all__ = ["FunctionSpan", "JobIdFlow", "bind_arguments", "function_spans"]
