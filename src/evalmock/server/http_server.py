"""The HTTP server under an ASGI app: Granian (a Rust server; the default where installed) or
uvicorn, by name.

Both serve the same app the same way: the lifespan runs (the data-file watcher lives in it), SIGINT
and SIGTERM stop the server after open requests finish, access lines go to standard output only when
asked for. In one process the app object is served in this process's event loop (so a caller can add
its own signal handlers to it, as the proxy does for SIGUSR1); with several workers each worker
process imports an app by its module path.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import signal
import socket
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from evalmock.exits import FAILED, OK, EvalmockError, UsageError
from evalmock.server.access_log import GRANIAN_ACCESS_FORMAT, RequestLine, uvicorn_logging
from evalmock.server.forced_stop import CUT_OFF, WorkerStopped

GRANIAN = "granian"
UVICORN = "uvicorn"
SERVERS = (GRANIAN, UVICORN)
SERVER_NAMES = {GRANIAN: "Granian", UVICORN: "uvicorn"}  # as the projects spell themselves
GRACEFUL_SHUTDOWN_S = 5  # how long open requests may take to finish after Ctrl-C
# Granian closes a connection whose request head has not all arrived this long after the connection
# opened or its previous answer (an idle keep-alive connection too): a half-open connection, one
# that trickles or stalls, holds its place no longer.
HEADER_READ_TIMEOUT_S = 10
# Files a Granian worker keeps for itself (the listening socket, data files, logs) out of the
# connections it may hold at once; the rest of its open-file limit is for connections.
RESERVED_FILES = 64
_CONNECTIONS_WITHOUT_LIMIT = 8192  # where the open-file limit is unknown or infinite
_GRANIAN_LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {
        "request_line": {"()": RequestLine},
        "worker_stopped": {"()": WorkerStopped, "seconds": GRACEFUL_SHUTDOWN_S},
    },
    "formatters": {"plain": {"()": "logging.Formatter", "fmt": "%(message)s"}},
    "handlers": {
        "errors": {
            "formatter": "plain",
            "class": "logging.StreamHandler",
            "stream": "ext://sys.stderr",
            "filters": ["worker_stopped"],
        },
        "access": {
            "formatter": "plain",
            "class": "logging.StreamHandler",
            "stream": "ext://sys.stdout",
            "filters": ["request_line"],
        },
    },
    # Granian's start-up lines (and its note that serving in one's own loop is "experimental") are
    # not ours to show; its errors are, and (with several workers, at warning level) a worker
    # stopped while still answering.
    "loggers": {
        "_granian": {"handlers": ["errors"], "level": "ERROR", "propagate": False},
        "granian.access": {"handlers": ["access"], "level": "INFO", "propagate": False},
    },
}


class ServerUnavailable(UsageError):
    """The server asked for cannot run here (Granian is not installed for this platform)."""


class CannotListen(EvalmockError):
    """The address cannot be served on: its port is taken, or the host is not one of this
    machine's."""

    exit_code = FAILED


def check_can_listen(host: str, port: int) -> int:
    """Bind the address as either server will (SO_REUSEADDR: a port a closed connection still holds
    is free) and let it go: a port already taken is said before a banner invites anyone to it, where
    uvicorn would say it after. Returns the port, the one the system chose for port 0 (so that the
    banner can name it); CannotListen says why it cannot."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            raise CannotListen(_listen_error(host, port, exc.strerror or str(exc))) from None
        return int(probe.getsockname()[1])


def granian_installed() -> bool:
    return importlib.util.find_spec("granian") is not None


def default_server() -> str:
    """Granian where it is installed, else uvicorn: under evalmock's app Granian served the example
    page, the generated pages and the DigitalOcean call with 10-35% more requests a second, and the
    walks as fast; on a slower host uvicorn led on the generated pages by up to 14%
    (docs/maintainers/performance.md, "The HTTP server"). The proxy keeps uvicorn
    (proxy/command.py)."""
    return GRANIAN if granian_installed() else UVICORN


def check_available(name: str) -> None:
    if name == GRANIAN and not granian_installed():
        raise ServerUnavailable("Granian is not installed for this platform; use --server uvicorn")


def granian_connections() -> int:
    """How many connections one Granian worker serves at once (its `backpressure`): as many as the
    process may open files, less RESERVED_FILES. Granian's own default (128 in one process) let 128
    half-open connections make every other request wait until they closed; past the open-file
    limit, a connection waits in the kernel's queue rather than fail to be accepted."""
    try:
        import resource
    except ImportError:  # not on Windows
        return _CONNECTIONS_WITHOUT_LIMIT
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return _CONNECTIONS_WITHOUT_LIMIT
    return max(soft - RESERVED_FILES, RESERVED_FILES)


def granian_http_options() -> dict[str, Any]:
    """What Granian is given against abuse, under `evalmock serve` and the proxy alike
    (docs/hardening.md, "The servers under abuse"): HTTP/1 only, since Granian's detection of
    HTTP/2 waits without a time limit for a connection's first bytes; HEADER_READ_TIMEOUT_S for a
    request head; granian_connections() at once."""
    from granian.constants import HTTPModes
    from granian.http import HTTP1Settings

    return {
        "http": HTTPModes.http1,
        "http1_settings": HTTP1Settings(header_read_timeout=HEADER_READ_TIMEOUT_S * 1000),
        "backpressure": granian_connections(),
    }


@dataclass(frozen=True)
class ServeOptions:
    host: str
    port: int
    access_log: bool = False


def run_in_loop(main: Callable[[], Awaitable[int]]) -> int:
    """Run `main()` in a new event loop (uvloop where installed, as uvicorn and Granian pick it)."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(main())
    return uvloop.run(main())


async def serve_granian(
    app: Any,
    options: ServeOptions,
    *,
    second_stop_exits: bool = False,
    stopping: Callable[[], None] | None = None,
) -> int:
    """Serve `app` with Granian in the running loop until SIGINT or SIGTERM; 0, or 1 when it could
    not listen.

    A second signal exits the process at once when `second_stop_exits` (the mock: Ctrl-C twice, as
    under uvicorn); otherwise open requests are always waited for (the proxy, whose outputs are
    written after the server stops). `stopping` is called at the first signal (the proxy ends the
    answers it streams, which may never end on their own).
    """
    from granian.constants import Interfaces
    from granian.log import LogLevels
    from granian.server.embed import Server

    server = Server(
        app,
        address=options.host,
        port=options.port,
        interface=Interfaces.ASGI,
        websockets=False,
        log_dictconfig=_GRANIAN_LOGGING,
        log_level=LogLevels.error,
        log_access=options.access_log,
        log_access_format=GRANIAN_ACCESS_FORMAT,
        **granian_http_options(),
    )
    loop = asyncio.get_running_loop()
    asked = 0

    def on_stop() -> None:
        nonlocal asked
        asked += 1
        if asked == 1 or not second_stop_exits:
            if asked == 1 and stopping is not None:
                stopping()
            server.stop()  # open requests finish first
            return
        # Ctrl-C twice stops at once, as under uvicorn. Cancelling Granian's tasks instead leaves a
        # traceback per request and one from its own shutdown callback; an exit says it in one line
        # and cuts off the same.
        sys.stdout.flush()
        print(f"WARNING:  {CUT_OFF}", file=sys.stderr, flush=True)
        os._exit(OK)

    stops = (signal.SIGINT, signal.SIGTERM)
    for stop in stops:
        loop.add_signal_handler(stop, on_stop)
    try:
        await server.serve()
    except (OSError, RuntimeError) as exc:
        return _cannot_listen(options, exc)
    finally:
        for stop in stops:
            loop.remove_signal_handler(stop)
    return OK


def serve_app(app: Any, name: str, options: ServeOptions) -> int:
    """Serve `app` in this process until SIGINT or SIGTERM (0), or say why it could not listen
    (1)."""
    check_available(name)
    if name == UVICORN:
        return _run_uvicorn(app, options)
    return run_in_loop(lambda: serve_granian(app, options, second_stop_exits=True))


def serve_workers(target: str, name: str, options: ServeOptions, workers: int) -> int:
    """Serve the app at `target` ("module:attribute") in `workers` processes, each importing it."""
    check_available(name)
    if name == UVICORN:
        return _run_uvicorn(target, options, workers=workers)
    from granian.constants import Interfaces
    from granian.log import LogLevels
    from granian.server import Server

    # Workers are separate processes; each one gets SIGINT or SIGTERM from this one and finishes its
    # requests within GRACEFUL_SHUTDOWN_S, or is stopped (WorkerStopped says so in the log).
    server = Server(
        target,
        address=options.host,
        port=options.port,
        interface=Interfaces.ASGI,
        workers=workers,
        websockets=False,
        log_dictconfig=_GRANIAN_LOGGING,
        log_level=LogLevels.warning,
        log_access=options.access_log,
        log_access_format=GRANIAN_ACCESS_FORMAT,
        workers_kill_timeout=GRACEFUL_SHUTDOWN_S,
        **granian_http_options(),
    )
    try:
        server.serve()
    except (OSError, RuntimeError) as exc:
        return _cannot_listen(options, exc)
    return OK


def _run_uvicorn(app: Any, options: ServeOptions, **extra: Any) -> int:
    import uvicorn

    from evalmock.server.one_write import HTTP_PROTOCOL

    # A requested stop (docker stop, Kubernetes, systemd: SIGTERM) is a clean stop, as Ctrl-C is:
    # exit 0. uvicorn stops on either signal, then raises it again with the handler it found; both
    # end here as KeyboardInterrupt. SIGINT has Python's own handler even in a script's background
    # job (entry.py): raised into "ignored", a second Ctrl-C would cut the tasks off without the
    # interrupt that marks them as such (forced_stop.py), and each would write a traceback.
    previous = signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        uvicorn.run(
            app,
            host=options.host,
            port=options.port,
            access_log=options.access_log,
            log_config=uvicorn_logging(),
            http=HTTP_PROTOCOL,
            **extra,
        )
    except KeyboardInterrupt:
        pass
    except (
        SystemExit
    ) as exc:  # uvicorn could not listen after all (the port taken since the check); it said why
        return FAILED if exc.code else OK
    finally:
        signal.signal(signal.SIGTERM, previous)
    return OK


def _cannot_listen(options: ServeOptions, exc: Exception) -> int:
    # Granian says "Address already in use (os error 98)" as a RuntimeError, with a Rust backtrace
    # when RUST_BACKTRACE is set: its first line is the reason.
    reason = (str(exc).splitlines() or [type(exc).__name__])[0]
    print(f"error: {_listen_error(options.host, options.port, reason)}", file=sys.stderr)
    return FAILED


def _listen_error(host: str, port: int, reason: str) -> str:
    return f"cannot listen on {host}:{port}: {reason}"
