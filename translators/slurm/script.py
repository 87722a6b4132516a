"""One generated batch script: its header components, its body and what it waits for."""

from __future__ import annotations

from dataclasses import dataclass, field

from .header import Header
from .quoting import comment_text

SHEBANG = "#!/bin/bash"


@dataclass
class Script:
    filename: str  # inside the job's folder
    stage: str  # its name in submit.sh
    components: list[Header] = field(default_factory=lambda: [Header()])
    body: list[str] = field(default_factory=list)
    after: list[tuple[str, str, int | None]] = field(default_factory=list)  # (stage, dependency type, line)
    intro: list[str] = field(default_factory=list)  # comment lines under the source line
    shebang: str = SHEBANG
    separate: bool = True  # a blank line between header and body (not for a body kept as it was)
    # submit.sh submits it this many times, each copy's index (0, 1 ...) in this variable (the groups
    # of a LeaderWorkerSet as heterogeneous jobs, which cannot be an array)
    copies: int = 1
    copy_var: str = ""

    @property
    def header(self) -> Header:
        return self.components[0]

    def render(self, source: str) -> str:
        lines = [self.shebang, f"# Translated by migrate from {comment_text(source)}"]
        lines += [f"# {comment_text(text)}" if text else "#" for text in self.intro]
        for i, component in enumerate(self.components):
            if i:
                lines.append("#SBATCH hetjob")
            lines += component.render()
        body = list(self.body)
        if self.separate:
            while body and not body[0].strip():
                body.pop(0)  # one blank line after the header, whatever the body started with
            lines.append("")
        lines += body
        return "\n".join(lines).rstrip("\n") + "\n"


__all__ = ["SHEBANG", "Script"]
