"""`evalmock serve --port 0` as a child process: started, read until its ready line, stopped."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from evalmock.exits import EvalmockError
from evalmock.ready_line import url_of
from evalmock.testing.admin_client import Admin

READY_S = 60.0  # a first start compiles the documents' cache: seconds on a slow machine
STOP_S = 10.0
TAIL_LINES = 40  # of the mock's output, quoted when it does not start
CANNOT_LISTEN = "cannot listen on"  # what `evalmock serve` says when its port was taken


class MockError(EvalmockError):
    """The mock did not start (its last output lines say why), or could not be stopped."""


class Mock(Admin):
    """A mock this process started, with its admin API (Admin); `stop()` ends it."""

    def __init__(self, process: subprocess.Popen[str], base_url: str, output: deque[str]) -> None:
        super().__init__(base_url)
        self.process = process
        self._output = output

    def output(self) -> str:
        """The mock's last lines of output (banner, errors, access lines when asked for)."""
        return "".join(self._output)

    def stop(self) -> None:
        """Ask the mock to end (SIGTERM: open requests finish), then kill it if it has not."""
        self.close()
        if self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=STOP_S)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=STOP_S)


def launch(args: Sequence[str] = (), *, ready_s: float = READY_S, attempts: int = 3) -> Mock:
    """Start `evalmock serve --host 127.0.0.1 --port 0 ARGS...` with this Python and wait for its
    ready line; MockError (with the mock's last output) when it exits or is not ready in `ready_s`.
    The caller stops it (`Mock.stop`), or uses `start_mock`.

    `--port 0` has the system pick a free port, which the mock lets go and binds again to serve:
    another process may take it in between, and the mock then says it cannot listen. It is started
    again then, on another port, up to `attempts` times."""
    for _ in range(attempts - 1):
        try:
            return _launch_once(args, ready_s)
        except MockError as exc:
            if CANNOT_LISTEN not in str(exc):
                raise
    return _launch_once(args, ready_s)


def _launch_once(args: Sequence[str], ready_s: float) -> Mock:
    command = [sys.executable, "-m", "evalmock", "serve", "--host", "127.0.0.1", "--port", "0"]
    process = subprocess.Popen(
        [*command, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        text=True,
        errors="replace",
    )
    output: deque[str] = deque(maxlen=TAIL_LINES)
    found: list[str] = []
    ready = threading.Event()

    def drain() -> None:
        # read to the end, ready line or not: a pipe nobody reads fills and stops the mock
        assert process.stdout is not None
        for line in process.stdout:
            output.append(line)
            if not found and (url := url_of(line)):
                found.append(url)
                ready.set()
        ready.set()  # the mock exited

    threading.Thread(target=drain, name="evalmock-mock-output", daemon=True).start()
    deadline = time.monotonic() + ready_s
    while not ready.wait(timeout=0.1) and time.monotonic() < deadline:
        pass
    if found:
        return Mock(process, found[0], output)
    if ready.is_set():  # its output ended: it exited, or is exiting
        try:
            why = f"exited with {process.wait(timeout=STOP_S)}"
        except subprocess.TimeoutExpired:
            why = "closed its output"
    else:
        why = f"was not listening within {ready_s:g} s"
    if process.poll() is None:
        process.kill()
        process.wait(timeout=STOP_S)
    raise MockError(f"evalmock serve {why}; its last output:\n{''.join(output)}")


@contextmanager
def start_mock(args: Sequence[str] = (), *, ready_s: float = READY_S) -> Iterator[Mock]:
    """A mock of its own on a free port for the `with` block (`args`: more `evalmock serve`
    flags)."""
    mock = launch(args, ready_s=ready_s)
    try:
        yield mock
    finally:
        mock.stop()
