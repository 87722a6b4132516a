"""The ``migrate`` console script: a Ctrl-C at any moment ends in one line, never a traceback.

Loading the command line takes a moment (typer, and then whatever the command
needs); a Ctrl-C in that moment would print the traceback of the import it
interrupted. This module is small and imports nothing heavy, so that its
handler is in place before the loading starts.
"""

from __future__ import annotations

import os
import signal
import sys
from types import FrameType

from migrate import EXIT_INTERRUPTED, INTERRUPTED


def main() -> None:
    """Load the command line with Ctrl-C ending the process quietly, then run it."""
    previous = signal.signal(signal.SIGINT, _interrupted_while_loading)
    from migrate import cli

    # From here on a Ctrl-C is a KeyboardInterrupt again, which the commands turn into 130
    # once they have removed what they were writing.
    signal.signal(signal.SIGINT, previous)
    cli.main()


def _interrupted_while_loading(signum: int, frame: FrameType | None) -> None:
    # Nothing has been read or written yet: leave at once, from inside whatever import runs.
    sys.stderr.write(INTERRUPTED + "\n")
    sys.stderr.flush()
    os._exit(EXIT_INTERRUPTED)


__all__ = ["main"]
