"""What a check sees and how it fails: an HTTP exchange, a Violation (expected vs received) and a Skip."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

_UNSET: Any = object()


class Violation(AssertionError):
    """A response that breaks one rule of the pages, with what the rule expects and what was received."""

    def __init__(
        self,
        message: str,
        *,
        expected: Any = _UNSET,
        received: Any = _UNSET,
        exchange: Exchange | None = None,
    ) -> None:
        self.message = message
        self.expected = expected
        self.received = received
        self.exchange = exchange  # the request that shows the violation, when not the last one made
        super().__init__(self.render())

    def render(self) -> str:
        lines = [self.message]
        if self.expected is not _UNSET:
            lines.append(f"expected: {_show(self.expected)}")
        if self.received is not _UNSET:
            lines.append(f"received: {_show(self.received)}")
        return "\n".join(lines)


class Skip(Exception):
    """A scenario that cannot run against this target, and why (a missing fact, an unhonoured probe)."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


def _show(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 600 else text[:600] + "…"


@dataclass(frozen=True)
class Exchange:
    """One request and its response, as every check sees it (header names lower-case, first value only)."""

    method: str
    url: str
    status: int
    headers: Mapping[str, str] = field(default_factory=dict)
    body: bytes = b""
    request_headers: Mapping[str, str] = field(default_factory=dict)

    @cached_property
    def path(self) -> str:
        return urlsplit(self.url).path

    @cached_property
    def query(self) -> dict[str, str]:
        """The query as sent (first value of each parameter)."""
        params: dict[str, str] = {}
        for key, value in parse_qsl(urlsplit(self.url).query, keep_blank_values=True):
            params.setdefault(key, value)
        return params

    def ambiguous(self, *names: str) -> bool:
        """Whether any of these query parameters was sent more than once (the pages do not say which wins)."""
        sent = [key for key, _ in parse_qsl(urlsplit(self.url).query, keep_blank_values=True)]
        return any(sent.count(name) > 1 for name in names)

    @property
    def has_body(self) -> bool:
        """False for HEAD, whose answer never has a body."""
        return self.method.upper() != "HEAD"

    def header(self, name: str) -> str | None:
        return self.headers.get(name.lower())

    @property
    def media_type(self) -> str:
        return (self.header("content-type") or "").split(";")[0].strip().lower()

    @cached_property
    def _parsed(self) -> tuple[bool, Any]:
        try:
            return True, json.loads(self.body)
        except (ValueError, UnicodeDecodeError):
            return False, None

    def json(self) -> Any:
        """The body as JSON; a body that is not JSON is itself a violation."""
        ok, value = self._parsed
        if not ok:
            raise Violation(
                f"{self.method} {self.path} answered {self.status} with a body that is not JSON",
                expected="a JSON body",
                received=self.text[:200] or "(empty body)",
            )
        return value

    def json_or_none(self) -> Any:
        return self._parsed[1]

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", "replace")

    def path_segment(self, index: int) -> str:
        """A decoded segment of the path (0 = first after the leading slash)."""
        segments = self.path.split("/")[1:]
        return unquote(segments[index]) if index < len(segments) else ""


def exchange_from_httpx(response: Any) -> Exchange:
    """An Exchange from an `httpx.Response`."""
    request = response.request
    return Exchange(
        method=request.method,
        url=str(request.url),
        status=response.status_code,
        headers={k.lower(): v for k, v in response.headers.items()},
        body=response.content,
        request_headers={k.lower(): v for k, v in request.headers.items()},
    )


def exchange_from_schemathesis(response: Any) -> Exchange:
    """An Exchange from a `schemathesis.Response` (its headers map lower-case names to lists)."""
    request = response.request
    return Exchange(
        method=str(request.method),
        url=str(request.url),
        status=response.status_code,
        headers={k.lower(): (v[0] if isinstance(v, list) and v else str(v)) for k, v in response.headers.items()},
        body=response.content or b"",
        request_headers={k.lower(): str(v) for k, v in request.headers.items()},
    )
