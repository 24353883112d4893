"""What several test packages share: the test servers' seed and size, both HTTP servers, a free
local port, a sleep that does not wait, and assertions that an answer is the documented body."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest

from evalmock.contract.documents import GRADIENT, TEST_SET, ApiDocument
from evalmock.contract.operations import iter_operations, operation
from evalmock.contract.schemas import component_schema, deref, inline_refs, schema_errors
from evalmock.harness.run.throttle import Throttle, ThrottleOptions
from evalmock.server.http_server import granian_installed

SERVER_SEED = 42
# the document's limit (default, minimum, maximum): what a test of page sizes reads, never a number
LIMIT = operation("test-set").parameters["limit"]["schema"]
SERVER_CASES = 300
AUTH = {"Authorization": "Bearer demo-user"}
ERROR_SCHEMAS = {TEST_SET.name: "ErrorEnvelope", GRADIENT.name: "error"}
needs_granian = pytest.mark.skipif(
    not granian_installed(), reason="Granian is not installed for this platform"
)
# for @pytest.mark.parametrize
BOTH_SERVERS = [
    pytest.param("granian", marks=needs_granian),
    "uvicorn",
]


def self_signed_certificate(folder: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 (its own authority) and its key, in `folder`, made by
    the openssl command."""
    openssl = shutil.which("openssl")
    assert openssl, (
        "the openssl command is needed to make a test certificate (Debian: apt-get install openssl)"
    )
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        [
            *(openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2"),
            *("-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"),
            *("-keyout", str(key), "-out", str(cert)),
        ],
        check=True,
        capture_output=True,
    )
    return cert, key


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def holds_listening_port(pid: int, port: int) -> bool | None:
    """Whether process `pid` (or a child of it: a worker) listens on TCP `port`, from Linux's /proc;
    None where /proc cannot tell. Something answering on the port may be another process that took
    it after free_port let it go."""
    listening_sockets = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            rows = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            fields = row.split()
            # local address as HEXIP:HEXPORT; state 0A is LISTEN; the socket's inode is field 9
            if fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:
                listening_sockets.add(f"socket:[{fields[9]}]")
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return None
    for process in (str(pid), *children):
        with contextlib.suppress(OSError):  # a worker may just have ended
            for fd in Path(f"/proc/{process}/fd").iterdir():
                with contextlib.suppress(OSError):
                    if os.readlink(fd) in listening_sockets:
                        return True
    return False


def listening(port: int) -> bool:
    """Whether something accepts connections on 127.0.0.1:`port` (no request is sent)."""
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1.0).close()
    except OSError:
        return False
    return True


class Waits:
    """A sleep that records how long it was asked to wait and moves its own clock (`clock`) on by as
    much, so the tests honour Retry-After, and spend a wait budget, without waiting."""

    def __init__(self) -> None:
        self.asked: list[float] = []
        self.now = 1000.0
        self._lock = threading.Lock()  # audit workers sleep from several threads

    def __call__(self, seconds: float) -> None:
        with self._lock:
            self.asked.append(seconds)
            self.now += seconds

    def clock(self) -> float:
        return self.now

    def throttle(self, options: ThrottleOptions | None = None) -> Throttle:
        """A Throttle that sleeps, and tells the time, by this."""
        return Throttle(options, sleep=self, clock=self.clock)


def stop_process(process: subprocess.Popen[Any], timeout: float = 10) -> None:
    """Stop a process a test started: asked to end, then killed if it has not within `timeout`."""
    process.terminate()
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=timeout)


def response_schema(api: ApiDocument, status: int) -> dict[str, Any]:
    """The JSON schema the document gives the (only) operation's response with this status (or
    default)."""
    spec = api.spec
    ((_, _, operation),) = iter_operations(spec)
    responses = operation["responses"]
    declared = responses.get(str(status)) or responses.get("default")
    # a status the operation does not list (405, an unknown route): the error schema
    if declared is None:
        return component_schema(spec, ERROR_SCHEMAS[api.name])
    return inline_refs(spec, deref(spec, declared)["content"]["application/json"]["schema"])


def assert_conforms(api: ApiDocument, response: httpx.Response) -> None:
    """The body is valid against the document's schema for its status."""
    errors = [
        e.message
        for e in schema_errors(
            api.spec, response_schema(api, response.status_code), response.json()
        )
    ]
    assert not errors, f"{response.status_code} body does not conform to {api.name}: {errors[:3]}"


def assert_envelope(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    """A test-set error: our envelope with this status and code, its requestId equal to
    X-Request-Id."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/json"
    error = response.json()["error"]
    assert error["code"] == code, error
    assert isinstance(error["details"], dict)
    assert error["message"]
    assert error["requestId"] == response.headers["x-request-id"]
    assert_conforms(TEST_SET, response)
    return error


def assert_ratelimit_headers(response: httpx.Response) -> None:
    for name in ("ratelimit-limit", "ratelimit-remaining", "ratelimit-reset"):
        assert response.headers.get(name, "").isdigit(), (
            f"{name} missing or not an integer: {response.headers}"
        )


def assert_digitalocean_error(
    response: httpx.Response, status: int, error_id: str
) -> dict[str, Any]:
    """A /v2 error: DigitalOcean's body with this status and id, rate-limit headers, request ids
    equal."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert body["id"] == error_id, body
    assert body["message"]
    assert body["request_id"] == response.headers["x-request-id"]
    assert_ratelimit_headers(response)
    assert_conforms(GRADIENT, response)
    return body
