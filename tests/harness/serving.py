"""Serve an ASGI app on a free 127.0.0.1 port in a background thread, for as long as a fixture needs
it."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn

from evalmock.server.one_write import HTTP_PROTOCOL
from shared import free_port

START_TIMEOUT = 20.0  # seconds


@contextmanager
def serving(app: Any, **options: Any) -> Iterator[str]:
    """Yield the base URL of `app` served by uvicorn as evalmock serves (with these further uvicorn
    options; no lifespan unless asked for); stop it on exit."""
    port = free_port()
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=port,
        log_level="warning",
        **{"lifespan": "off", "http": HTTP_PROTOCOL, **options},
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name=f"uvicorn-{port}", daemon=True)
    thread.start()
    deadline = time.monotonic() + START_TIMEOUT
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            server.should_exit = True
            raise RuntimeError(f"the test server on port {port} did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
