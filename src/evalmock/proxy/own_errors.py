"""The proxy's own answer when the upstream gives none: the API's error body, with a request id, as
`evalmock serve` sends its errors."""

from __future__ import annotations

from starlette.types import Receive, Scope, Send

from evalmock.server.errors import ApiError, error_body
from evalmock.server.request_id import RequestIdMiddleware, current_request_id


async def send_error(
    scope: Scope, receive: Receive, send: Send, status: int, code: str, message: str
) -> None:
    """Answer with `status` in the API's own error body (the envelope on /v1, DigitalOcean's body on
    /v2) and a request id."""
    error = ApiError(status, code, message)

    async def answer(scope: Scope, receive: Receive, send: Send) -> None:
        body = error_body(error, scope["path"], current_request_id())
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode("ascii")),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})

    await RequestIdMiddleware(answer)(scope, receive, send)
