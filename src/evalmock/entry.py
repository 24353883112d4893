"""The `evalmock` command's entry point: the command line, imported with the garbage collector paused."""

from __future__ import annotations

import gc


def main() -> int:
    # Importing the command line's dependencies (Connexion, jsonschema, Starlette, ...) makes some 130 collections
    # that free almost nothing and take about a tenth of `evalmock serve`'s start-up. The collector runs again as
    # soon as the imports are done.
    gc.disable()
    try:
        from evalmock.cli import main as command_line
    finally:
        gc.enable()
    return command_line()
