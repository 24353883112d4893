"""The upstream the proxy forwards to: its origin and credentials, and how its failures are told."""

from __future__ import annotations

import base64
from dataclasses import dataclass

import aiohttp
import httpx


@dataclass(frozen=True)
class Origin:
    """The upstream's scheme, host and port; its path, to which a request's own target is appended;
    the Basic credentials a user and password in the URL stand for (httpx sent them)."""

    root: str
    prefix: str
    authorization: str | None

    @property
    def shown(self) -> str:
        """The upstream as the proxy's own error bodies name it: without its credentials, which are
        not the client's to see."""
        return self.root + self.prefix

    @classmethod
    def of(cls, upstream: str) -> Origin:
        try:
            url = httpx.URL(upstream)
        except httpx.InvalidURL:  # every request then answers 502, saying why
            return cls("http://invalid.invalid", "", None)
        authorization = None
        if url.username or url.password:
            userpass = f"{url.username}:{url.password}".encode()
            authorization = "Basic " + base64.b64encode(userpass).decode("ascii")
        root = str(url.copy_with(username=None, password=None, raw_path=b"/")).removesuffix("/")
        return cls(root, url.raw_path.split(b"?")[0].rstrip(b"/").decode("ascii"), authorization)


def too_slow(timeout: float, exc: Exception) -> str:
    """The message of the proxy's 504: the upstream did not answer in time."""
    return (
        f"evalmock proxy: the upstream did not answer within {timeout:g} s ({type(exc).__name__})."
    )


def too_late(deadline: float, what: str) -> str:
    """The message of the proxy's 504: `what` of the answer (the whole of one to be judged, the
    head of any other) did not come by the deadline."""
    return f"evalmock proxy: the upstream did not send {what} within {deadline:g} s."


def unreadable(upstream: str, why: str) -> str:
    """The message of the proxy's 502: the upstream's answer has a head the proxy cannot pass on (on
    one line: aiohttp's reasons may run over several)."""
    why = " ".join(why.split())
    return (
        f"evalmock proxy: the upstream {upstream} sent an answer the proxy cannot pass on ({why})."
    )


def unreachable(upstream: str, exc: Exception) -> str:
    """The message of the proxy's 502: the upstream could not be reached."""
    # its text names aiohttp's pool key (`ssl:default`), not the cause
    if type(exc) is aiohttp.ClientConnectorError:
        exc = exc.os_error
    detail = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return f"evalmock proxy: the upstream {upstream} could not be reached ({detail})."
