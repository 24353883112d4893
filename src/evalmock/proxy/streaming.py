"""Answers the proxy streams through unjudged: sent on as they come, counted, kept aside while
small for the secrets they may carry, and ended when the proxy stops."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import suppress

import aiohttp
from starlette.types import Send

from evalmock.proxy.bounds import NotRead, judgeable
from evalmock.proxy.forwarded import Forwarded, Observer
from evalmock.proxy.wire import RawHeaders

# An answer streamed through unjudged is also kept aside, up to this size, for the secrets it may
# carry: a sign-in's answer is small, and a copy of every large body that passes would cost each one
# more than forwarding it.
KEPT_ASIDE_BYTES = 16 * 2**10
CUT_SHORT = "cut short by the upstream while streaming"
STOPPED = "cut short: the proxy was stopped while streaming it"


class Streams:
    """The answers being streamed through, and the task streaming each, so that a stopping proxy
    can end them."""

    def __init__(self, observer: Observer) -> None:
        self.observer = observer
        self._open: dict[aiohttp.ClientResponse, asyncio.Task[object] | None] = {}
        self.stopping = False

    def end(self) -> None:
        """End every answer still streaming through (the server is stopping, and one that never
        ends would hold it open): each upstream connection closed, each answer counted as
        STOPPED."""
        self.stopping = True
        for response, task in list(self._open.items()):
            response.close()  # a stream waiting for the upstream ends
            if task is not None:
                task.cancel()  # and so does one waiting for a client that reads no more

    async def send_through(
        self,
        send: Send,
        response: aiohttp.ClientResponse,
        sent_back: RawHeaders,
        chunks: AsyncIterator[bytes],
        forwarded: Forwarded,
        held: list[bytes],
        started: float,
        why: str,
        max_judged_bytes: int,
    ) -> None:
        """Send the answer on as it comes (the chunks `held` first, each let go once sent), one
        piece behind, so that it is counted before its last piece is sent (a client that has its
        whole answer finds it counted). What passes is kept aside only while it is small."""
        await send({"type": "http.response.start", "status": response.status, "headers": sent_back})
        size, pending, aside = 0, b"", []
        self._open[response] = asyncio.current_task()
        held.reverse()  # taken from the end, so that letting one go costs nothing
        try:
            while (chunk := held.pop() if held else await anext(chunks, None)) is not None:
                size += len(chunk)
                if size <= KEPT_ASIDE_BYTES:
                    aside.append(chunk)
                else:
                    aside.clear()
                if pending:
                    await send({"type": "http.response.body", "body": pending, "more_body": True})
                pending = chunk
        except (TimeoutError, aiohttp.ClientError) as exc:
            # The status line is gone: all that is left is to end the connection, which tells the
            # client.
            forwarded.body_size, forwarded.elapsed_ms = size, elapsed_ms(started)
            cut = STOPPED if self.stopping else f"{CUT_SHORT} ({type(exc).__name__})"
            self.observer.passed(forwarded, cut)
            return
        except asyncio.CancelledError:  # the server cancels what is still open as it stops
            forwarded.body_size, forwarded.elapsed_ms = size, elapsed_ms(started)
            self.observer.passed(forwarded, STOPPED)
            raise
        finally:
            self._open.pop(response, None)
        forwarded.body_size, forwarded.elapsed_ms = size, elapsed_ms(started)
        if 0 < size <= KEPT_ASIDE_BYTES:
            # one the proxy does not read has its secrets unlearned
            with suppress(NotRead):
                forwarded.kept_aside = judgeable(sent_back, b"".join(aside), max_judged_bytes)
        self.observer.passed(forwarded, why)
        await send({"type": "http.response.body", "body": pending, "more_body": False})


def elapsed_ms(started: float) -> float:
    """Milliseconds since `started` (a `time.perf_counter()`)."""
    return round((time.perf_counter() - started) * 1000, 3)
