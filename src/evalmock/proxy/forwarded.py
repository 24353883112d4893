"""One request as the proxy forwarded it, with the upstream's answer, and who is told of it."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

Headers = list[tuple[str, str]]


@dataclass
class Forwarded:
    """One request as forwarded and the upstream's answer; `body` is the decoded body when the proxy
    held it."""

    started: datetime
    method: str
    url: str  # the upstream's URL
    path: str  # the path the client asked for
    request_headers: Headers
    status: int = 0
    reason: str = ""
    http_version: str = "HTTP/1.1"
    response_headers: Headers = field(default_factory=list)
    body: bytes | None = None
    body_size: int = 0  # bytes the upstream sent (before any decoding)
    elapsed_ms: float = 0.0
    # A whole answer that streamed through unjudged, decoded, when it was no longer than
    # KEPT_ASIDE_BYTES: kept for its secrets to be learned, not recorded (`body` stays None).
    kept_aside: bytes | None = None
    # The request's body as it was forwarded, when it came whole and no longer than the judged bound
    # (a sign-in's password, a form): for the HAR, and for the secrets it carries.
    # `request_body_size` counts what came.
    request_body: bytes | None = None
    request_body_size: int = 0
    request_body_whole: bool = False  # its last piece came
    # Why a held answer was passed on unjudged (too large once decoded, too deep, too many values):
    # its body is not recorded either.
    unjudged: str | None = None


class Observer(Protocol):
    """What the proxy tells about its traffic, and the headers a judged response gets."""

    def api_of(self, method: str, path: str) -> str | None: ...

    def judge(self, api: str, forwarded: Forwarded) -> Headers: ...

    def passed(self, forwarded: Forwarded, why: str) -> None: ...

    def unjudged(self, forwarded: Forwarded, why: str) -> None: ...

    def failed(self, forwarded: Forwarded, status: int, why: str) -> None: ...
