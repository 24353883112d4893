"""The live progress display: a rich spinner on a terminal, plain lines otherwise, nothing when quiet."""

from __future__ import annotations

import sys
from typing import TextIO

from evalmock.harness.audit import Reporter
from evalmock.harness.redact import Redactor


class PlainReporter(Reporter):
    """One line per finished stage (for logs and CI)."""

    def __init__(self, redactor: Redactor, stream: TextIO | None = None) -> None:
        self.redactor = redactor
        self.stream = stream or sys.stderr

    def stage(self, text: str) -> None:
        print(self.redactor.text(text) + " …", file=self.stream, flush=True)

    def finish(self, text: str) -> None:
        print(self.redactor.text(text), file=self.stream, flush=True)


class LiveReporter(Reporter):
    """A rich status line that follows the audit on a terminal."""

    def __init__(self, redactor: Redactor, stream: TextIO | None = None) -> None:
        from rich.console import Console

        self.redactor = redactor
        self.console = Console(file=stream or sys.stderr)
        self._status = self.console.status("starting")
        self._status.start()

    def stage(self, text: str) -> None:
        self._status.update(self.redactor.text(text))

    def advance(self, text: str) -> None:
        self._status.update(self.redactor.text(text))

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
