"""Proxy fixtures: `evalmock proxy` built from its command line and served in this process (or,
where its memory is measured, run in a process of its own), in front of `evalmock serve`'s app
(recorded) or of a deliberately broken service, each on a free 127.0.0.1 port."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from evalmock.contract.targets import dump_targets
from evalmock.server.app import create_app
from evalmock.server.settings import ServerSettings
from evalmock.server.targets_file import targets_for
from evalmock.world import World
from harness.serving import serving
from shared import SERVER_CASES, SERVER_SEED, free_port, listening, stop_process

from .running import RunningProxy, proxying
from .upstreams import Recording, broken_upstream

ProxyFactory = Callable[..., AbstractContextManager[RunningProxy]]


@pytest.fixture(scope="session")
def proxy_for() -> ProxyFactory:
    """`with proxy_for(upstream_url, "--strict", ...) as proxy:` serves `evalmock proxy` with those
    options."""

    return proxying


@dataclass(frozen=True)
class RecordedServe:
    base_url: str
    recording: Recording
    world: World
    targets_path: Path


@pytest.fixture(scope="session")
def recorded_serve(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RecordedServe]:
    """`evalmock serve`'s app (seed 42, 300 cases), keeping what it sent for each request, and its
    targets file."""
    world = World(seed=SERVER_SEED, cases=SERVER_CASES)
    recording = Recording(create_app(ServerSettings(seed=SERVER_SEED, cases=SERVER_CASES), world))
    targets_path = tmp_path_factory.mktemp("recorded-serve") / "targets.toml"
    dump_targets(targets_for(world), targets_path)
    with serving(recording) as base_url:
        yield RecordedServe(base_url, recording, world, targets_path)


@pytest.fixture(scope="session")
def broken() -> Iterator[str]:
    """The base URL of the deliberately broken service (tests/proxy/upstreams.py)."""
    with serving(broken_upstream()) as base_url:
        yield base_url


@dataclass
class ProxyProcess:
    """`evalmock proxy` in a process of its own: its memory is its own, whatever else this process
    (and the upstream in it) holds."""

    base_url: str
    process: subprocess.Popen[bytes]
    folder: Path

    def peak_from_now(self) -> Callable[[], int]:
        """How far the proxy's resident memory rises, in bytes, above what it holds now (Linux:
        clear_refs 5 resets its VmHWM)."""
        Path(f"/proc/{self.process.pid}/clear_refs").write_text("5")
        held = self._status_kib("VmRSS")
        return lambda: (self._status_kib("VmHWM") - held) * 1024

    def peak_rss(self) -> int:
        """The proxy's peak resident memory so far, in bytes."""
        return self._status_kib("VmHWM") * 1024

    def _status_kib(self, field: str) -> int:
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        return int(re.search(rf"{field}:\s+(\d+) kB", status)[1])  # type: ignore[index]

    def stopped(self) -> tuple[str, str]:
        """Ctrl-C: what it said on its console (stderr), then in its summary (stdout)."""
        self.process.send_signal(signal.SIGINT)
        self.process.wait(timeout=STOP_S)
        return (self.folder / "err").read_text(), (self.folder / "out").read_text()


PROXY_READY_S = 30.0
# from Ctrl-C to its exit (uvicorn waits 5 s for open answers first; Granian once waited for ever)
STOP_S = 30.0


@contextmanager
def proxy_process(upstream: str, folder: Path, *options: str) -> Iterator[ProxyProcess]:
    """`evalmock proxy --upstream <upstream> <options>` on a free port, its output in `folder`."""
    port = free_port()
    command = [sys.executable, "-m", "evalmock", "proxy", "--upstream", upstream, *options]
    with open(folder / "out", "wb") as out, open(folder / "err", "wb") as err:
        process = subprocess.Popen([*command, "--port", str(port)], stdout=out, stderr=err)
    try:
        deadline = time.monotonic() + PROXY_READY_S
        while not listening(port):
            assert process.poll() is None, (folder / "err").read_text()
            assert time.monotonic() < deadline, f"the proxy did not start in {PROXY_READY_S} s"
            time.sleep(0.1)
        yield ProxyProcess(f"http://127.0.0.1:{port}", process, folder)
    finally:
        stop_process(process)
