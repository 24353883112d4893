"""Shared fixtures: a served world in process (fast, responses validated) and `evalmock serve` as a
subprocess."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from evalmock.server.app import create_app
from evalmock.server.settings import ServerSettings
from evalmock.world import World
from shared import SERVER_CASES, SERVER_SEED, free_port, holds_listening_port, stop_process

READY_TIMEOUT_S = 30.0
THREADS_END_TIMEOUT_S = 15.0  # for the threads the tests started to end, once they are over
# Spread over processes (`dev.py test`), these start first: long modules of tests that each start
# their own audit or pytest, so that none is left running alone at the end (as measured with
# --durations; the order changes only how soon a spread run ends).
FIRST = (
    "tests/harness/test_hostile_schemathesis.py",
    "tests/harness/test_pytest_plugin.py",
    "tests/harness/test_hostile_answers.py",
    "tests/harness/test_contract_cli.py",
)


@pytest.hookimpl(optionalhook=True)  # pytest-xdist's hook: unknown where xdist is off
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """`--dist loadgroup` (as `dev.py test` runs): process_groups.GroupScheduling's groups."""
    if config.getoption("dist") != "loadgroup":
        return None
    from process_groups import GroupScheduling  # only where pytest-xdist is

    return GroupScheduling(config, log)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--reverse-order",
        action="store_true",
        help="run the tests last first: a test that passes only after another has run fails",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Spread over processes, FIRST's modules start first; with --reverse-order, the tests run last
    first (within a module too, where a shared fixture may carry what one test did to the next)."""
    if config.getoption("reverse_order"):
        items.reverse()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        order = {module: place for place, module in enumerate(FIRST)}
        items.sort(key=lambda item: order.get(item.nodeid.split("::")[0], len(FIRST)))  # stable


@pytest.fixture(scope="session", autouse=True)
def no_thread_outlives_the_tests() -> Iterator[None]:
    """Every thread the tests start has ended when they are over: one still running Python as the
    interpreter ends (an in-process server, a rate limiter's) can crash it at exit. Set up first,
    this is checked last, once every other fixture has stopped what it started."""
    before = set(threading.enumerate())
    yield
    deadline = time.monotonic() + THREADS_END_TIMEOUT_S
    for thread in set(threading.enumerate()) - before:
        thread.join(timeout=max(0.0, deadline - time.monotonic()))
    left = sorted(t.name for t in set(threading.enumerate()) - before if t.is_alive())
    assert not left, f"threads still running after the tests: {', '.join(left)}"


@pytest.fixture(scope="session", autouse=True)
def start_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The servers of a test session keep their start cache in the session's own folder: a test
    never depends on, nor writes to, what a user's earlier starts kept (the in-process ones and
    `evalmock serve` subprocesses alike)."""
    folder = tmp_path_factory.mktemp("start-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("EVALMOCK_CACHE_DIR", str(folder))
        yield folder


@pytest.fixture(scope="session")
def server_world() -> World:
    return World(seed=SERVER_SEED, cases=SERVER_CASES)


@pytest.fixture(scope="session")
def make_client(server_world: World) -> Iterator[Callable[..., httpx.Client]]:
    """Build an in-process client: `make_client(clock=..., world=..., **settings)`; response
    validation is on."""
    opened: list[httpx.Client] = []

    def build(
        *, clock: Callable[[], float] = time.time, world: World | None = None, **overrides: Any
    ) -> httpx.Client:
        values = {
            "seed": SERVER_SEED,
            "cases": SERVER_CASES,
            "validate_responses": True,
            **overrides,
        }
        settings = ServerSettings(**values)
        app = create_app(settings, world if world is not None else server_world, clock=clock)
        client = app.test_client(raise_server_exceptions=False)
        client.__enter__()  # runs the lifespan, which builds the middleware stack once
        opened.append(client)
        return client

    yield build
    for client in opened:
        client.__exit__(None, None, None)


@pytest.fixture(scope="session")
def client(make_client: Callable[..., httpx.Client]) -> httpx.Client:
    """The default in-process server (seed 42, 300 cases), validating its own responses."""
    return make_client()


@dataclass
class LiveServer:
    """A running `evalmock serve` subprocess."""

    base_url: str
    targets_path: Path
    process: subprocess.Popen[bytes]
    log_path: Path

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""


ServerContext = contextlib.AbstractContextManager[LiveServer]


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def start_server(
    tmp_dir: Path,
    *extra: str,
    sigint_ignored: bool = False,
    env: dict[str, str] | None = None,
    attempts: int = 3,
) -> LiveServer:
    """Start `python -m evalmock serve` on a free port and wait (bounded) until it answers.
    `sigint_ignored`: as a script's `evalmock serve &` starts it (without job control, a background
    command begins ignoring SIGINT); `env`: its environment, when not this one's."""
    port = free_port()
    targets_path = tmp_dir / "targets.toml"
    log_path = tmp_dir / "server.log"
    command = [
        sys.executable,
        "-m",
        "evalmock",
        "serve",
        "--port",
        str(port),
        "--host",
        "127.0.0.1",
        "--seed",
        str(SERVER_SEED),
        "--cases",
        str(SERVER_CASES),
        "--write-targets",
        str(targets_path),
        *extra,
    ]
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            command,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
            preexec_fn=_ignore_sigint if sigint_ignored else None,
        )
    server = LiveServer(f"http://127.0.0.1:{port}", targets_path, process, log_path)
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            if "already in use" in server.log() and attempts > 1:
                # taken, since free_port found it free, by another process (a test in another
                # process of a spread run): started again on another port
                return start_server(
                    tmp_dir, *extra, sigint_ignored=sigint_ignored, env=env, attempts=attempts - 1
                )
            raise RuntimeError(f"evalmock serve exited with {process.returncode}:\n{server.log()}")
        try:
            answered = httpx.get(f"{server.base_url}/v1/openapi.json", timeout=1.0)
            # an answer from another server (a test in another process, another checkout's) that
            # took the port since free_port found it free is not ours: ours will say "already in
            # use" and be started again above
            if answered.status_code == 200 and holds_listening_port(process.pid, port) is not False:
                return server
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    stop_server(server)
    raise RuntimeError(f"evalmock serve was not ready within {READY_TIMEOUT_S} s:\n{server.log()}")


def stop_server(server: LiveServer) -> None:
    stop_process(server.process)


@pytest.fixture(scope="session")
def live_server_factory(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., ServerContext]:
    """`with live_server_factory("--workers", "2") as server:` runs `evalmock serve` with extra
    flags."""

    @contextlib.contextmanager
    def run(*extra: str) -> Iterator[LiveServer]:
        server = start_server(tmp_path_factory.mktemp("live-server"), *extra)
        try:
            yield server
        finally:
            stop_server(server)

    return run


@pytest.fixture(scope="session")
def live_server(live_server_factory: Callable[..., ServerContext]) -> Iterator[LiveServer]:
    """`evalmock serve --seed 42 --cases 300 --write-targets <tmp>/targets.toml` on a free local
    port."""
    with live_server_factory() as server:
        yield server
