"""`evalmock serve --port 0` listens on a port the system picks, prints one ready line with its URL
once it listens, and writes that URL in its targets file, under Granian and uvicorn, with workers
too."""

from __future__ import annotations

import io
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from evalmock.contract.targets import load_targets
from evalmock.ready_line import PREFIX, ready_line, url_of
from evalmock.server.listening import announce_when_listening, listening_url
from shared import BOTH_SERVERS, stop_process

READY_S = 90  # several uvicorn workers start in seconds each on a busy machine


def serve_on_port_zero(tmp_path: Path, *extra: str) -> tuple[subprocess.Popen[str], list[str]]:
    """`evalmock serve --port 0 ...` and its output lines so far, read until its ready line."""
    process = subprocess.Popen(
        [
            *(sys.executable, "-m", "evalmock", "serve", "--port", "0", "--cases", "5"),
            *("--write-targets", str(tmp_path / "targets.toml"), *extra),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    lines: list[str] = []
    ready = threading.Event()

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            lines.append(line)
            if line.startswith(PREFIX):
                ready.set()
        ready.set()

    threading.Thread(target=read, daemon=True).start()
    if not ready.wait(READY_S):
        stop_process(process)
        pytest.fail(f"no ready line within {READY_S} s:\n{''.join(lines)}")
    return process, lines


@pytest.mark.parametrize("workers", ["1", "2"], ids=["one process", "two workers"])
@pytest.mark.parametrize("server", BOTH_SERVERS)
def test_port_zero_prints_one_ready_line_with_the_url_it_answers_on(
    tmp_path: Path, server: str, workers: str
) -> None:
    process, lines = serve_on_port_zero(tmp_path, "--server", server, "--workers", workers)
    try:
        url = url_of(lines[-1])
        assert url is not None and url.startswith("http://127.0.0.1:")
        assert not url.endswith(":0")
        # at once, without a retry: the line says it listens
        assert httpx.get(f"{url}/healthz", timeout=30).status_code == 200
        assert load_targets(tmp_path / "targets.toml").base_url == url
        time.sleep(0.5)  # a second line would come within the poll's steps
    finally:
        stop_process(process)
    assert [line for line in lines if line.startswith(PREFIX)] == [f"{PREFIX} {url}\n"]


def test_the_ready_line_reads_back_as_its_url() -> None:
    assert url_of(ready_line("http://127.0.0.1:4321") + "\n") == "http://127.0.0.1:4321"
    assert url_of("EVALMOCK_LISTENING") is None
    assert url_of("Try: EVALMOCK_LISTENING http://x") is None
    assert url_of("EVALMOCK_LISTENING not-a-url") is None


def test_the_line_waits_until_the_port_accepts() -> None:
    answers = [False, False, True]
    asked: list[tuple[str, int]] = []

    def accepted(host: str, port: int) -> bool:
        asked.append((host, port))
        return answers[len(asked) - 1]

    out = io.StringIO()
    announce_when_listening("0.0.0.0", 8123, out=out, accepted=accepted).join(5)
    assert len(asked) == 3
    # a wildcard address is not one a client opens: its loopback stands for it
    assert out.getvalue() == "EVALMOCK_LISTENING http://127.0.0.1:8123\n"


def test_no_line_comes_from_a_server_that_never_listens() -> None:
    out = io.StringIO()
    thread = announce_when_listening(
        "127.0.0.1", 8123, out=out, accepted=lambda host, port: False, wait_s=0.1
    )
    thread.join(5)
    assert not thread.is_alive() and out.getvalue() == ""


def test_an_ipv6_address_is_bracketed_in_the_url() -> None:
    assert listening_url("::", 9000) == "http://[::1]:9000"
