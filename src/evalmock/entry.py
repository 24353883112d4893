"""The `evalmock` command's entry point: the command line, imported with the garbage collector paused."""

from __future__ import annotations

import sys

from evalmock.importing import long_lived

INTERRUPTED = 130  # the shell's code for a command stopped by Ctrl-C (128 + SIGINT)


def main() -> int:
    try:
        with long_lived():
            from evalmock.cli import main as command_line
        return command_line()
    except KeyboardInterrupt:
        # Ctrl-C where no server is serving (a start, an audit): one line, not a traceback. A serving `serve` or
        # `proxy` stops cleanly on it instead, and exits as its own docs say.
        print("evalmock: interrupted", file=sys.stderr)
        return INTERRUPTED
