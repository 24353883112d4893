"""The live progress display: a rich spinner on a terminal, plain lines otherwise, nothing when
quiet."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from typing import TextIO

from evalmock.harness.run.engine import Reporter
from evalmock.harness.secrets.redactor import Redactor

# A log without a line for this long looks hung, and CI services stop a job that prints nothing for
# 10 minutes; an audit of a slow service (300 ms an answer) runs for minutes.
HEARTBEAT_S = 30.0


class PlainReporter(Reporter):
    """One line per API done (for logs and CI), and a line of tasks done at most every
    HEARTBEAT_S."""

    def __init__(
        self,
        redactor: Redactor,
        stream: TextIO | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.redactor = redactor
        self.stream = stream or sys.stderr
        self.clock = clock
        self._last = clock()
        self._lock = threading.Lock()

    def done(self, count: int, total: int, text: str) -> None:
        with self._lock:
            if self.clock() - self._last < HEARTBEAT_S:
                return
            self._last = self.clock()
            print(
                f"{count} of {total} tasks done (last: {self.redactor.text(text)}) …",
                file=self.stream,
                flush=True,
            )

    def finish(self, text: str) -> None:
        with self._lock:
            self._last = self.clock()
            print(self.redactor.text(text), file=self.stream, flush=True)


class LiveReporter(Reporter):
    """A rich status line that follows the audit on a terminal."""

    def __init__(self, redactor: Redactor, stream: TextIO | None = None) -> None:
        from rich.console import Console

        self.redactor = redactor
        self.console = Console(file=stream or sys.stderr)
        self._status = self.console.status("starting")
        self._status.start()

    def done(self, count: int, total: int, text: str) -> None:
        self._status.update(f"{count}/{total} {self.redactor.text(text)}")

    def finish(self, text: str) -> None:
        self.console.print(f"[green]✓[/green] {self.redactor.text(text)}", highlight=False)

    def close(self) -> None:
        self._status.stop()


def make_reporter(redactor: Redactor, *, quiet: bool, stream: TextIO | None = None) -> Reporter:
    stream = stream or sys.stderr
    if quiet:
        return Reporter()
    if stream.isatty():
        return LiveReporter(redactor, stream)
    return PlainReporter(redactor, stream)
