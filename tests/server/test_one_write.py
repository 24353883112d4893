"""Under uvicorn a response's head and body leave in one write, byte for byte what uvicorn's own
protocol sends in two; nothing written is held past the loop's turn, and `evalmock serve` and the
proxy serve through it."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from uvicorn.config import Config
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.server import ServerState

from evalmock.proxy.command import UVICORN_OPTIONS
from evalmock.server import http_server
from evalmock.server.one_write import HTTP_PROTOCOL, HeldWrite

REQUEST = b"GET /cases HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
BODY = b'{"data":[],"hasMore":false}' * 100


class RecordingTransport(asyncio.Transport):
    """What a protocol wrote, one entry per write."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[bytes] = []
        self.closed = False

    def write(self, data: Any) -> None:
        self.writes.append(bytes(data))

    def write_eof(self) -> None:
        self.writes.append(b"<eof>")

    def close(self) -> None:
        self.closed = True

    def is_closing(self) -> bool:
        return self.closed

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"sockname": ("127.0.0.1", 8080), "peername": ("127.0.0.1", 50000)}.get(
            name, default
        )

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass


async def page_app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(BODY)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": BODY})


async def served(protocol_class: type[asyncio.Protocol], app: Any, turns: int = 20) -> list[bytes]:
    """What one request through `protocol_class` wrote within `turns` turns of the loop."""
    config = Config(
        app, date_header=False, server_header=False, proxy_headers=False, lifespan="off"
    )
    config.load()
    protocol: Any = protocol_class(config=config, server_state=ServerState(), app_state={})
    transport = RecordingTransport()
    protocol.connection_made(transport)
    protocol.data_received(REQUEST)
    for _ in range(turns):
        await asyncio.sleep(0)
    written = list(transport.writes)
    protocol.connection_lost(None)
    return written


def test_head_and_body_leave_in_one_write_with_the_bytes_uvicorn_sends_in_two() -> None:
    ours = asyncio.run(served(HTTP_PROTOCOL, page_app))  # type: ignore[arg-type]
    uvicorns = asyncio.run(served(HttpToolsProtocol, page_app))
    assert (
        len(uvicorns) == 2
        and uvicorns[0].startswith(b"HTTP/1.1 200 OK\r\n")
        and uvicorns[1] == BODY
    )
    assert ours == [b"".join(uvicorns)]


def test_a_streamed_head_leaves_before_its_body_is_ready() -> None:
    async def slow_body(scope: dict[str, Any], receive: Any, send: Any) -> None:
        await send(
            {"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]}
        )
        await asyncio.sleep(60)  # the body never comes in this test

    async def scenario() -> list[bytes]:
        return await served(HTTP_PROTOCOL, slow_body)  # type: ignore[arg-type]

    writes = asyncio.run(scenario())
    assert (
        len(writes) == 1
        and writes[0].startswith(b"HTTP/1.1 200 OK\r\n")
        and writes[0].endswith(b"\r\n\r\n")
    )


def test_a_lone_write_leaves_at_the_end_of_the_turn() -> None:
    async def scenario() -> tuple[list[bytes], list[bytes]]:
        transport = RecordingTransport()
        held = HeldWrite(transport, asyncio.get_running_loop())
        held.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        during = list(transport.writes)
        await asyncio.sleep(0)
        return during, transport.writes

    during, after = asyncio.run(scenario())
    assert during == [] and after == [b"HTTP/1.1 100 Continue\r\n\r\n"]


def test_two_writes_in_one_turn_are_one_and_a_third_is_held_again() -> None:
    async def scenario() -> list[bytes]:
        transport = RecordingTransport()
        held = HeldWrite(transport, asyncio.get_running_loop())
        for part in (b"head", b"body", b"more"):
            held.write(part)
        await asyncio.sleep(0)
        return transport.writes

    assert asyncio.run(scenario()) == [b"headbody", b"more"]


def test_closing_sends_what_is_held_first() -> None:
    async def scenario() -> RecordingTransport:
        transport = RecordingTransport()
        held = HeldWrite(transport, asyncio.get_running_loop())
        held.write(b"HTTP/1.1 400 Bad Request\r\n\r\n")
        held.close()
        await asyncio.sleep(0)  # the turn's flush finds nothing left to send
        return transport

    transport = asyncio.run(scenario())
    assert transport.writes == [b"HTTP/1.1 400 Bad Request\r\n\r\n"] and transport.closed


def test_every_way_of_writing_keeps_the_order_of_what_was_written() -> None:
    async def scenario() -> list[bytes]:
        transport = RecordingTransport()
        held = HeldWrite(transport, asyncio.get_running_loop())
        held.write(b"head")
        held.writelines([b"bo", b"dy"])
        held.write(b"last")
        held.write_eof()
        await asyncio.sleep(0)
        return transport.writes

    assert asyncio.run(scenario()) == [b"headbody", b"last", b"<eof>"]


def test_evalmock_serve_and_the_proxy_use_the_one_write_protocol(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import uvicorn

    seen: dict[str, Any] = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, **options: seen.update(options))
    assert http_server.serve_app(object(), "uvicorn", http_server.ServeOptions("127.0.0.1", 0)) == 0
    assert seen["http"] is HTTP_PROTOCOL
    assert UVICORN_OPTIONS["http"] is HTTP_PROTOCOL
    assert HTTP_PROTOCOL.__name__ == "OneWriteHttpToolsProtocol"  # type: ignore[union-attr]
