"""The `evalmock` command's entry point: the command line, imported with the garbage collector paused."""

from __future__ import annotations

from evalmock.importing import long_lived


def main() -> int:
    with long_lived():
        from evalmock.cli import main as command_line
    return command_line()
