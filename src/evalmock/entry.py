"""The `evalmock` command's entry point: the command line, imported with the garbage collector
paused."""

from __future__ import annotations

import os
import signal
import sys
import threading

from evalmock.crash import crash_line
from evalmock.defaults import AUDIT_THREADS
from evalmock.exits import CRASHED, INTERRUPTED
from evalmock.importing import long_lived


def main() -> int:
    if threading.current_thread() is threading.main_thread():
        # A command a script started in the background (`evalmock contract ... &`, a CI step) begins
        # with SIGINT ignored, and Python then leaves it so: a kill -INT (a CI job's cancel) would
        # not stop an audit. Every command stops on SIGINT as on Ctrl-C, as `serve` and `proxy`
        # already do whatever they inherited.
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with long_lived():
            from evalmock.cli import main as command_line
        return command_line()
    except KeyboardInterrupt:
        # Ctrl-C where no server is serving (a start, an audit): one line, not a traceback. A
        # serving `serve` or `proxy` stops cleanly on it instead, and exits as its own docs say.
        print("evalmock: interrupted", file=sys.stderr)
        if any(thread.name.startswith(AUDIT_THREADS) for thread in threading.enumerate()):
            # An audit's workers are still sending requests, and Python would wait for each to
            # finish its task (a minute and more against a slow service) before exiting: nothing of
            # theirs is written, so stop now.
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(INTERRUPTED)
        return INTERRUPTED
    except Exception as exc:  # a crash must not read as a verdict: exit 1 is VIOLATIONS
        print(crash_line(exc), file=sys.stderr)
        return CRASHED
