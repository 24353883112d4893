"""`evalmock proxy --record DATA`: the same accumulator fed exchange by exchange as traffic passes,
the data file written on demand (Ctrl-C, `kill -USR1`) from a snapshot of it, in a thread of its own
while the traffic goes on."""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable
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
        self._writing = threading.Lock()  # one write at a time, in the order asked for
        self._writer: threading.Thread | None = None

    def feed(self, method: str, url: str, status: int, body: bytes | None) -> None:
        number = self.recording.fed
        source = Source(f"exchange {number}", method, self.redactor.url(url))
        self.recording.feed(Answer(source, method.upper(), url, status, body))

    def snapshot(self) -> Recording:
        """The recording as it stands: its store copied (a few milliseconds for thousands of
        cases), what it knows of its lists and test cases copied too."""
        copied = copy.deepcopy(self.recording)  # the store is not copied (Store.__deepcopy__)
        copied.store = self.recording.store.snapshot()
        for recorded in (*copied.lists.values(), *copied.test_cases.values()):
            recorded.store = copied.store
        return copied

    def write(self) -> None:
        """Write the data file now (OSError when it cannot be), after any write under way."""
        if self._writer is not None:
            self._writer.join()
        self._write(self.snapshot())

    def write_behind(self, failed: Callable[[OSError], None]) -> None:
        """Write the data file from a snapshot taken now, in a thread: the traffic goes on while it
        is written beside the file and then moved into place; `failed` is told an OSError."""

        def write(snapshot: Recording) -> None:
            try:
                self._write(snapshot)
            except OSError as exc:
                failed(exc)

        self._writer = threading.Thread(
            target=write, args=(self.snapshot(),), name="evalmock-record", daemon=True
        )
        self._writer.start()

    def _write(self, snapshot: Recording) -> None:
        try:
            with self._writing:
                self.written = write_recording(snapshot, self.path, self.redactor, self.options)
        finally:
            snapshot.close()

    def close(self) -> None:
        if self._writer is not None:
            self._writer.join()
        self.recording.close()

    def summary(self) -> str:
        return summary(self.recording, self.written, self.path, self.redactor)
