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
STOP_TIMEOUT = 10.0  # seconds, for the answers being sent to end, then again once they are cut


# A port found free may be taken by another process (a test in another process of a spread run)
# before the server binds it: the server is then started again on another.
START_ATTEMPTS = 3


@contextmanager
def serving(app: Any, **options: Any) -> Iterator[str]:
    """Yield the base URL of `app` served by uvicorn as evalmock serve serves (with these further
    uvicorn options; no lifespan unless asked for); stop it on exit."""
    for _ in range(START_ATTEMPTS):
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
        if _started(server, thread):
            break
    else:
        raise RuntimeError(f"the test server did not start in {START_ATTEMPTS} attempts")
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=STOP_TIMEOUT)
        if thread.is_alive():  # an answer still being sent (a drip, an endless stream): cut it
            server.force_exit = True
            thread.join(timeout=STOP_TIMEOUT)
        if thread.is_alive():
            # a server thread running on as the interpreter ends can crash it at exit
            raise RuntimeError(f"the test server on port {port} did not stop")


def _started(server: uvicorn.Server, thread: threading.Thread) -> bool:
    """Whether the server listens; False if it could not (its thread ended), and an error if it
    neither listens nor ends within START_TIMEOUT."""
    deadline = time.monotonic() + START_TIMEOUT
    while not server.started:
        if not thread.is_alive():
            return False
        if time.monotonic() > deadline:
            server.should_exit = True
            raise RuntimeError(f"the test server on port {server.config.port} did not start")
        time.sleep(0.02)
    return True
