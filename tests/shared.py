"""What several test packages share: the seed and size the test servers serve, and a free local port."""

from __future__ import annotations

import socket

SERVER_SEED = 42
SERVER_CASES = 300


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
