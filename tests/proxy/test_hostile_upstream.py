"""An upstream the auditor does not trust: its bytes reach the proxy's console escaped (it cannot
clear the screen, retitle the window or overwrite a line), and a redirect it answers is forwarded,
never followed, so no credential goes to another origin. A bomb, a drip, JSON nested too deep, a
head no client may be sent: each is passed on or refused within a bound, said, and the proxy
serves the next request."""

from __future__ import annotations

import asyncio
import functools
import gzip
import json
import os
import socketserver
import struct
import time
import zlib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from evalmock.harness.checks.exchange import MAX_JSON_DEPTH as MAX_DEPTH
from evalmock.harness.checks.exchange import TOO_DEEP, too_many
from evalmock.proxy.bounds import MAX_VALUES
from evalmock.proxy.session import PREFIX
from evalmock.proxy.upstream_client import MAX_HEADER_LINE, MAX_HEADERS
from harness.serving import serving

from .conftest import ProxyFactory, ProxyProcess, RunningProxy, proxy_process
from .upstreams import socket_upstream

PATH = "/v1/agents/acme.drafting/test-set/cases?projectId=2489e9ad-2ee2-8e00-8ec9-32d5f69181c0"
HOSTILE = "\x1b]0;CONFORMS\x07\x1b[2J\rOK \x9b"


async def refusal(request: Request) -> JSONResponse:
    """A 404 for any agent, whose error code is a terminal's escape sequences."""
    envelope = {"code": HOSTILE, "message": HOSTILE, "details": {}, "requestId": "r-1"}
    return JSONResponse({"error": envelope}, 404, headers={"X-Request-Id": "r-1"})


def test_control_characters_from_the_upstream_are_escaped_on_the_console(
    proxy_for: ProxyFactory,
) -> None:
    upstream = Starlette(routes=[Route("/v1/agents/{agent}/test-set/cases", refusal)])
    with serving(upstream) as base_url, proxy_for(base_url) as proxy:
        path = (
            "/v1/agents/acme.drafting/test-set/cases?projectId=2489e9ad-2ee2-8e00-8ec9-32d5f69181c0"
        )
        answer = httpx.get(proxy.base_url + path, headers={"Authorization": "Bearer t"})
        said = proxy.stream.getvalue()
    assert answer.status_code == 404
    assert "\\x1b]0;CONFORMS\\x07" in said  # the breach was told, its bytes shown escaped
    assert not any((ord(char) < 32 and char != "\n") or 0x7F <= ord(char) <= 0x9F for char in said)


def test_the_proxy_forwards_a_redirect_as_it_came_and_follows_none(
    proxy_for: ProxyFactory,
) -> None:
    reached: list[str] = []

    async def elsewhere(request: Request) -> JSONResponse:
        reached.append(request.headers.get("authorization", ""))
        return JSONResponse({})

    other_app = Starlette(routes=[Route("/{path:path}", elsewhere)])
    with serving(other_app) as other:

        async def redirect(request: Request) -> Response:
            return Response(status_code=307, headers={"Location": f"{other}{request.url.path}"})

        upstream = Starlette(routes=[Route("/v1/agents/{agent}/test-set/cases", redirect)])
        with serving(upstream) as base_url, proxy_for(base_url) as proxy:
            answer = httpx.get(proxy.base_url + PATH, headers={"Authorization": "Bearer s3cret"})
    assert (answer.status_code, answer.headers["location"]) == (307, f"{other}{PATH.split('?')[0]}")
    assert reached == []  # the proxy did not go there, so neither did the token


# -- answers the proxy must not read whole

PING = "/ping"  # a path of no operation, answered {"ok": true}: the next request after an attack
DECODED = 768 * 2**20  # what a bomb decodes to: far more than the proxy may hold
MAX_RSS = 500 * 2**20  # the most the proxy's process (one of its own) may grow by


@functools.cache
def gzip_bomb() -> bytes:
    """A gzip member of DECODED zero bytes, about 1 MB on the wire: one block of 1 MiB of zeros,
    compressed once and repeated (each ends with a full flush, so that each is the same bytes)."""
    zeros = bytes(2**20)
    compressor = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    block = compressor.compress(zeros) + compressor.flush(zlib.Z_FULL_FLUSH)
    crc = 0
    for _ in range(DECODED // len(zeros)):
        crc = zlib.crc32(zeros, crc)
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"
    trailer = compressor.flush() + struct.pack("<II", crc, DECODED % 2**32)
    return header + block * (DECODED // len(zeros)) + trailer


def raw_answer(client: httpx.Client, url: str) -> tuple[int, bytes, httpx.Headers]:
    """The answer as the proxy sent it, its bytes not decoded (a bomb stays a bomb)."""
    with client.stream("GET", url, headers={"Authorization": "Bearer t"}) as answer:
        return answer.status_code, b"".join(answer.iter_raw()), answer.headers


def hostile(route: Callable[[Request], Awaitable[Response]], path: str) -> Starlette:
    """An upstream answering `route` at `path`, and {"ok": true} at PING."""

    async def ping(request: Request) -> JSONResponse:
        return JSONResponse({"ok": True})

    return Starlette(routes=[Route(path, route), Route(PING, ping)])


def assert_still_serving(proxy: RunningProxy | ProxyProcess) -> None:
    answer = httpx.get(proxy.base_url + PING, timeout=10)
    assert (answer.status_code, answer.json()) == (200, {"ok": True})


def assert_escaped(said: str) -> None:
    assert not any((ord(char) < 32 and char != "\n") or 0x7F <= ord(char) <= 0x9F for char in said)


def test_a_gzip_bomb_is_passed_on_as_it_came_and_never_decoded_whole(tmp_path: Path) -> None:
    bomb = gzip_bomb()

    async def bombed(request: Request) -> Response:
        return Response(bomb, headers={"Content-Encoding": "gzip"}, media_type="application/json")

    upstream = hostile(bombed, "/v1/agents/{agent}/test-set/cases")
    with (
        serving(upstream) as base_url,
        proxy_process(base_url, tmp_path, "--har", os.devnull) as proxy,
    ):
        peak = proxy.peak_from_now()
        with httpx.Client(timeout=30) as client:
            status, body, headers = raw_answer(client, proxy.base_url + PATH)
        assert peak() < MAX_RSS
        assert_still_serving(proxy)
        said, summary = proxy.stopped()
    assert (status, headers["content-encoding"], body) == (200, "gzip", bomb)
    why = "larger than 4 MiB once decoded (passed through unjudged)"
    assert f"evalmock proxy: UNJUDGED GET {base_url}{PATH} -> 200: {why}" in said.splitlines()
    assert any(line.startswith("note: ") and why in line for line in summary.splitlines()), summary


@pytest.mark.parametrize("path", [PATH, PING + "/sign-in"], ids=["judged", "kept-aside"])
def test_stacked_gzip_is_decoded_within_the_bound_too(tmp_path: Path, path: str) -> None:
    bomb = gzip.compress(gzip_bomb(), 9)  # a few KB: held to be judged, or kept aside for secrets

    async def bombed(request: Request) -> Response:
        headers = {"Content-Encoding": "gzip, gzip"}
        return Response(bomb, headers=headers, media_type="application/json")

    upstream = hostile(bombed, path.split("?")[0].replace("acme.drafting", "{agent}"))
    with serving(upstream) as base_url, proxy_process(base_url, tmp_path) as proxy:
        peak = proxy.peak_from_now()
        with httpx.Client(timeout=30) as client:
            status, body, headers = raw_answer(client, proxy.base_url + path)
        assert peak() < MAX_RSS
        assert_still_serving(proxy)
        said, _ = proxy.stopped()
    assert (status, headers["content-encoding"], body) == (200, "gzip, gzip", bomb)
    if path == PATH:
        assert "-> 200: larger than 4 MiB once decoded (passed through unjudged)" in said


# How long the drips below take whole: a proxy that waited for one answered no sooner. The tests
# hold the proxy to this, not to a few seconds past its deadline, so that a busy machine never
# fails them.
BODY_DRIPPED = 40 * 0.2
HEAD_DRIPPED = 75 * 0.2  # the head below is 79 bytes


def test_a_drip_is_cut_at_the_deadline_with_a_504(proxy_for: ProxyFactory) -> None:
    async def drip(request: Request) -> StreamingResponse:
        async def pieces() -> AsyncIterator[bytes]:
            yield b'{"data": [], "hasMore": false'
            for _ in range(40):  # BODY_DRIPPED in all, each piece well within the timeout
                await asyncio.sleep(0.2)
                yield b" "
            yield b"}"

        return StreamingResponse(pieces(), media_type="application/json")

    upstream = hostile(drip, "/v1/agents/{agent}/test-set/cases")
    with serving(upstream) as base_url, proxy_for(base_url, "--deadline", "1") as proxy:
        started = time.monotonic()
        answer = httpx.get(proxy.base_url + PATH, headers={"Authorization": "Bearer t"}, timeout=30)
        elapsed = time.monotonic() - started
        assert_still_serving(proxy)
        lines = proxy.lines()
    assert answer.status_code == 504 and elapsed < BODY_DRIPPED
    error = answer.json()["error"]
    message = "evalmock proxy: the upstream did not send its whole answer within 1 s."
    assert (error["code"], error["message"]) == ("gateway-timeout", message)
    assert f"evalmock proxy: 504 GET {base_url}{PATH}: {message.removeprefix(PREFIX)}" in lines


DEEP = b"[" * 1100 + b"]" * 1100


@pytest.mark.parametrize(
    "path, body",
    [(PATH, DEEP), (PING + "/sign-in", b'{"access_token": ' + DEEP + b"}")],
    ids=["judged", "kept-aside"],
)
def test_json_nested_too_deep_is_passed_on_unjudged(
    proxy_for: ProxyFactory, path: str, body: bytes, tmp_path: Path
) -> None:
    async def deep(request: Request) -> Response:
        return Response(body, media_type="application/json")

    upstream = hostile(deep, path.split("?")[0].replace("acme.drafting", "{agent}"))
    har = tmp_path / "traffic.har"
    with serving(upstream) as base_url, proxy_for(base_url, "--har", str(har)) as proxy:
        answer = httpx.get(proxy.base_url + path, headers={"Authorization": "Bearer t"})
        assert_still_serving(proxy)
        notes = proxy.session.write_outputs().notes
        lines = proxy.lines()
    assert (answer.status_code, answer.content) == (200, body)
    content = json.loads(har.read_text())["log"]["entries"][0]["response"]["content"]
    assert "text" not in content  # neither recorded nor left for `contract --har` to parse
    if path == PATH:
        why = f"{TOO_DEEP} (passed through unjudged)"
        assert lines[0] == f"evalmock proxy: UNJUDGED GET {base_url}{PATH} -> 200: {why}"
        assert any(why in note for note in notes)
        assert content["comment"] == f"body not recorded: {why}"


def test_json_of_too_many_values_is_passed_on_unjudged(proxy_for: ProxyFactory) -> None:
    members = b",".join(b'"k%d": 0' % n for n in range(200_000))  # 2.6 MB: held, not too large
    body = b'{"data": [{' + members + b'}], "hasMore": false}'

    async def wide(request: Request) -> Response:
        return Response(body, media_type="application/json")

    upstream = hostile(wide, "/v1/agents/{agent}/test-set/cases")
    with serving(upstream) as base_url, proxy_for(base_url) as proxy:
        answer = httpx.get(proxy.base_url + PATH, headers={"Authorization": "Bearer t"}, timeout=10)
        assert_still_serving(proxy)
        lines = proxy.lines()
    assert (answer.status_code, answer.content) == (200, body)
    why = f"{too_many(MAX_VALUES)} (passed through unjudged)"
    assert lines == [f"evalmock proxy: UNJUDGED GET {base_url}{PATH} -> 200: {why}"]


def test_json_nested_as_deep_as_the_bound_is_judged(proxy_for: ProxyFactory) -> None:
    body = b'{"data": ' + b"[" * (MAX_DEPTH - 1) + b"]" * (MAX_DEPTH - 1) + b"}"

    async def deep(request: Request) -> Response:
        return Response(body, media_type="application/json")

    upstream = hostile(deep, "/v1/agents/{agent}/test-set/cases")
    with serving(upstream) as base_url, proxy_for(base_url) as proxy:
        answer = httpx.get(proxy.base_url + PATH, headers={"Authorization": "Bearer t"})
        said = proxy.stream.getvalue()
    assert (answer.status_code, answer.content) == (200, body)
    assert "FAILED response_schema_conformance" in said and "UNJUDGED" not in said


# -- a head no client may be sent


@contextmanager
def raw_upstream(head: bytes, pause: float = 0.0) -> Iterator[str]:
    """A service answering every request with `head` (then `{}`), a byte every `pause` seconds when
    one is given, and a request for PING with a plain JSON answer, as raw bytes on a socket: no HTTP
    server would send what `head` holds, nor drip it."""

    class Answer(socketserver.StreamRequestHandler):
        def handle(self) -> None:
            line = self.rfile.readline(65536)
            while self.rfile.readline(65536) not in (b"\r\n", b"\n", b""):
                pass
            if line.split(b" ")[1:2] == [PING.encode()]:
                body = b'{"ok": true}'
                plain = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                self.wfile.write(plain + b"Content-Length: %d\r\n\r\n" % len(body) + body)
            elif pause:
                try:
                    for byte in head:
                        self.wfile.write(bytes([byte]))
                        time.sleep(pause)
                except OSError:  # the proxy stopped waiting
                    return
            else:
                self.wfile.write(head + b"Content-Length: 2\r\nConnection: close\r\n\r\n{}")

    with socket_upstream(Answer) as base_url:
        yield base_url


OK_HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"


def a_502_to(proxy_for: ProxyFactory, headers: bytes) -> tuple[str, dict[str, Any]]:
    """The upstream's base URL and the error body of the proxy's 502 to an answer of OK_HEAD and
    `headers`; the proxy serves on, and its console names the upstream, escaped."""
    with raw_upstream(OK_HEAD + headers) as base_url, proxy_for(base_url) as proxy:
        answer = httpx.get(proxy.base_url + PATH, headers={"Authorization": "Bearer t"})
        assert_still_serving(proxy)
        said = proxy.stream.getvalue()
    assert answer.status_code == 502
    assert f"502 GET {base_url}{PATH}: the upstream {base_url} sent an answer" in said
    assert_escaped(said)
    return base_url, answer.json()["error"]


@pytest.mark.parametrize(
    "header, why",
    [
        (b"X-Note: a\x01b\x1b[2J\r\n", "a control character in the value of X-Note"),
        (b"X-Note: a\x00b\r\n", "Invalid HTTP header: b'a\\x00b'"),
    ],
    ids=["control-character", "nul"],
)
def test_control_characters_in_a_header_are_a_502(
    proxy_for: ProxyFactory, header: bytes, why: str
) -> None:
    base_url, error = a_502_to(proxy_for, header)
    message = f"evalmock proxy: the upstream {base_url} sent an answer the proxy cannot pass on"
    assert (error["code"], error["message"]) == ("bad-gateway", f"{message} ({why}).")


@pytest.mark.parametrize(
    "flood, why",
    [
        (b"".join(b"X-Flood-%d: v\r\n" % n for n in range(1000)), "Too many headers"),
        (b"X-Flood: " + b"v" * 100_000 + b"\r\n", "Got more than 8190 bytes"),
    ],
    ids=["many-headers", "long-header"],
)
def test_a_header_flood_is_a_502(proxy_for: ProxyFactory, flood: bytes, why: str) -> None:
    assert flood.count(b"\r\n") > MAX_HEADERS or len(flood) > MAX_HEADER_LINE
    _, error = a_502_to(proxy_for, flood)
    assert error["code"] == "bad-gateway" and why in error["message"]


def test_a_head_dripped_is_cut_at_the_deadline_with_a_504(proxy_for: ProxyFactory) -> None:
    head = OK_HEAD + b"X-Drip: " + b"." * 20 + b"\r\n"  # a byte every 0.2 s
    with raw_upstream(head, pause=0.2) as base_url, proxy_for(base_url, "--deadline", "1") as proxy:
        started = time.monotonic()
        answer = httpx.get(proxy.base_url + PATH, headers={"Authorization": "Bearer t"}, timeout=30)
        elapsed = time.monotonic() - started
        assert_still_serving(proxy)
    assert answer.status_code == 504 and elapsed < HEAD_DRIPPED
    assert answer.json()["error"]["message"] == (
        "evalmock proxy: the upstream did not send its whole answer within 1 s."
    )


def test_a_head_dripped_to_a_request_not_judged_is_cut_at_the_deadline_with_a_504(
    proxy_for: ProxyFactory,
) -> None:
    """An answer the proxy streams through unjudged has its head bounded all the same."""
    head = OK_HEAD + b"X-Drip: " + b"." * 20 + b"\r\n"
    with raw_upstream(head, pause=0.2) as base_url, proxy_for(base_url, "--deadline", "1") as proxy:
        started = time.monotonic()
        answer = httpx.get(proxy.base_url + "/not-an-operation", timeout=30)
        elapsed = time.monotonic() - started
        assert_still_serving(proxy)
    assert answer.status_code == 504 and elapsed < HEAD_DRIPPED
    assert answer.json()["error"]["message"] == (
        "evalmock proxy: the upstream did not send its answer's head within 1 s."
    )


def test_an_upload_slower_than_the_deadline_gets_its_answer(proxy_for: ProxyFactory) -> None:
    """The head's deadline of an answer not judged counts from the request's last byte: a client's
    upload takes the time it takes."""

    async def count(request: Request) -> JSONResponse:
        return JSONResponse({"received": len(await request.body())})

    def slowly() -> Iterator[bytes]:
        for _ in range(5):  # 2.5 s in all, past the deadline of 1 s
            time.sleep(0.5)
            yield b"x" * 1000

    upstream = Starlette(routes=[Route("/upload", count, methods=["POST"])])
    with serving(upstream) as base_url, proxy_for(base_url, "--deadline", "1") as proxy:
        answer = httpx.post(proxy.base_url + "/upload", content=slowly(), timeout=30)
    assert (answer.status_code, answer.json()) == (200, {"received": 5000})
