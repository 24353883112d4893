"""`evalmock proxy --record DATA`: the same accumulator fed exchange by exchange as traffic passes,
the data file written whole on demand (Ctrl-C, `kill -USR1`)."""

from __future__ import annotations

from pathlib import Path

from evalmock.harness.secrets.redactor import Redactor
from evalmock.recording.accumulator import Recording
from evalmock.recording.answers import Answer, Source
from evalmock.recording.output import WriteOptions, Written, write_recording
from evalmock.recording.summary import summary


class LiveRecording:
    """The data a proxy records; the redactor is the proxy's, which learns each exchange's secrets
    before it is fed."""

    def __init__(self, path: str | Path, redactor: Redactor, options: WriteOptions) -> None:
        self.path = str(path)
        self.redactor = redactor
        self.options = options
        self.recording = Recording()
        self.written = Written()

    def feed(self, method: str, url: str, status: int, body: bytes | None) -> None:
        number = self.recording.fed
        source = Source(f"exchange {number}", method, self.redactor.url(url))
        self.recording.feed(Answer(source, method.upper(), url, status, body))

    def write(self) -> None:
        """Write the data file (OSError when it cannot be)."""
        self.written = write_recording(self.recording, self.path, self.redactor, self.options)

    def summary(self) -> str:
        return summary(self.recording, self.written, self.path, self.redactor)
