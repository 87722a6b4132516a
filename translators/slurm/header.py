"""``#SBATCH`` (and ``#SCRON``) lines, spelled through the one sbatch option table.

Every option the writer emits goes through :data:`options.BY_LONG`: the row
says whether the option takes a value, and its parser must accept the value
the writer formats (the ``format_*`` inverses), so a writer bug shows up here
as an exception instead of as a script that sbatch refuses.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from . import options
from .quoting import comment_text, directive_word


class OptionError(ValueError):
    """The writer asked for an option or a value that the option table refuses."""


@dataclass(frozen=True)
class Line:
    long: str
    value: str | None
    note: str = ""  # written as a '# migrate: ...' comment above the option


@dataclass
class Header:
    """The options of one batch script (or one scrontab entry), in the order they were added."""

    lines: list[Line] = field(default_factory=list)

    def add(self, long: str, value: object = None, note: str = "") -> str:
        """Add ``--long[=value]``; returns the option as written, for fidelity entries."""
        option = options.BY_LONG.get(long)
        if option is None:
            raise OptionError(f"--{long} is not an sbatch option")
        # a directive is one line: line breaks become spaces, NUL bytes go
        text = None if value is None else " ".join(str(value).splitlines()).replace("\0", "")
        if text is None:
            if option.arg == options.REQUIRED:
                raise OptionError(f"--{long} needs a value")
        else:
            if option.arg == options.NONE:
                raise OptionError(f"--{long} takes no value")
            try:
                option.parse(text)
            except ValueError as exc:
                raise OptionError(f"--{long}={text}: {exc}") from exc
        self.lines = [line for line in self.lines if line.long != long or option.accumulate]
        self.lines.append(Line(long, text, note))
        return spelled(long, text)

    def remove(self, long: str) -> None:
        self.lines = [line for line in self.lines if line.long != long]

    def has(self, long: str) -> bool:
        return any(line.long == long for line in self.lines)

    def value(self, long: str) -> str | None:
        for line in self.lines:
            if line.long == long:
                return line.value
        return None

    def render(self, magic: str = "#SBATCH") -> list[str]:
        out: list[str] = []
        for line in self.lines:
            if line.note:
                out.append(f"# migrate: {comment_text(line.note)}")
            value = "" if line.value is None else "=" + directive_word(line.value)
            out.append(f"{magic} --{line.long}{value}")
        return out


def spelled(long: str, value: str | None) -> str:
    return f"--{long}" if value is None else f"--{long}={value}"


__all__ = ["Header", "Line", "OptionError", "spelled"]
