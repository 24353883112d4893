"""`GET /healthz`: a pure ASGI answer, outside both APIs, that the world is loaded and the server
serves it.

It sits outside every other middleware, so a probe is never counted by the rate-limit headers, never
validated, never delayed by `--latency` nor failed by `--error-rate`, whichever ASGI server runs the
app.
"""

from __future__ import annotations

import orjson
from starlette.types import ASGIApp, Receive, Scope, Send

from evalmock.server.live_world import LiveWorld

PATH = "/healthz"
_METHODS = {"GET", "HEAD"}


def health_body(live: LiveWorld) -> bytes:
    """What an orchestrator (or a person) reads: the world being served, as its banner names it."""
    world = live.world
    return orjson.dumps(
        {
            "status": "ok",
            "world": {
                "seed": world.seed,
                "generated": world.generated,
                "casesPerList": world.cases if world.generated else None,
                "agents": len(world.agent_ids()),
                "dataFiles": list(world.data.files),
            },
        }
    )


class HealthMiddleware:
    """Answers PATH itself; every other request goes on to the app untouched."""

    def __init__(self, app: ASGIApp, live: LiveWorld) -> None:
        self.app = app
        self.live = live

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] != PATH:
            await self.app(scope, receive, send)
            return
        if scope["method"] in _METHODS:
            status, body = 200, health_body(self.live)
            headers = [(b"content-type", b"application/json")]
        else:
            status, body = 405, b""
            headers = [(b"allow", b"GET, HEAD")]
        headers += [(b"cache-control", b"no-store"), (b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send(
            {"type": "http.response.body", "body": b"" if scope["method"] == "HEAD" else body}
        )
