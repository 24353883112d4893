"""A real redis-server for the tests: on 127.0.0.1 at a free port, in a temporary folder, saving
nothing, killed afterwards; a test may pause it, kill it and start it again to play Redis gone."""

from __future__ import annotations

import contextlib
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from shared import free_port, stop_process

REDIS_SERVER = shutil.which("redis-server")
needs_redis = pytest.mark.skipif(
    REDIS_SERVER is None,
    reason="redis-server is not installed (Debian's package: apt-get install redis-server)",
)
READY_TIMEOUT_S = 10.0


def answers(port: int) -> bool:
    """Whether a Redis on 127.0.0.1:`port` answers PING (with PONG, or asking for a password)."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as sock:
            sock.settimeout(0.5)
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith((b"+PONG", b"-NOAUTH"))
    except OSError:
        return False


class RedisServer:
    """One redis-server process, which asks for `password` when given one; `url` names its
    database 0 (with the password)."""

    def __init__(self, folder: Path, password: str | None = None) -> None:
        self.folder = folder
        self.password = password
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        secret = f":{self.password}@" if self.password else ""
        return f"redis://{secret}127.0.0.1:{self.port}/0"

    def _ask(self, command: bytes) -> bytes:
        """One command's first answer line, on a connection of its own (AUTH first)."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=2) as sock:
            if self.password:
                sock.sendall(f"AUTH {self.password}\r\n".encode())
                assert sock.recv(16).startswith(b"+OK")
            sock.sendall(command + b"\r\n")
            return sock.recv(64)

    def start(self, attempts: int = 3) -> None:
        assert REDIS_SERVER, "redis-server is not installed"
        log = self.folder / "redis.log"
        command = [
            REDIS_SERVER,
            *("--bind", "127.0.0.1", "--port", str(self.port)),
            *("--save", "", "--appendonly", "no", "--dir", str(self.folder)),
            *("--logfile", str(log), "--daemonize", "no"),
            *(("--requirepass", self.password) if self.password else ()),
        ]
        self.process = subprocess.Popen(
            command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        deadline = time.monotonic() + READY_TIMEOUT_S
        while time.monotonic() < deadline:
            if answers(self.port):
                return
            if self.process.poll() is not None:
                text = log.read_text(errors="replace") if log.exists() else ""
                if "Address already in use" in text and attempts > 1:
                    # taken since free_port found it free (a test of another process): another port
                    self.port = free_port()
                    return self.start(attempts - 1)
                raise RuntimeError(f"redis-server exited with {self.process.returncode}:\n{text}")
            time.sleep(0.05)
        self.kill()
        raise RuntimeError(f"redis-server did not answer within {READY_TIMEOUT_S} s")

    def kill(self) -> None:
        """Gone at once, as a crashed Redis is (its data with it: nothing is saved)."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGCONT)  # a paused one could not end
            stop_process(self.process, timeout=5)
        self.process = None

    def pause(self) -> None:
        """Still there, answering nothing (connections open, every command waits)."""
        assert self.process is not None
        self.process.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGCONT)

    def flush(self) -> None:
        """Every key of every database removed."""
        assert self._ask(b"FLUSHALL").startswith(b"+OK")


@contextlib.contextmanager
def running_redis(folder: Path, password: str | None = None) -> Iterator[RedisServer]:
    """A started redis-server, killed when the block ends."""
    server = RedisServer(folder, password)
    server.start()
    try:
        yield server
    finally:
        server.kill()
