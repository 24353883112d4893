"""Scenarios: `Prefer: code=… / example=… / delay=…` per request (as Prism reads them), server
latency, error rate.

Prefer and the error rate apply after authentication and request validation, so a request must be
valid to be answered with a chosen status or example, and what is chosen must be declared by the
operation's document. Server latency applies to every request routed to an operation.
"""

from __future__ import annotations

import asyncio
import functools
import random
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import orjson
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from evalmock.contract.documents import GRADIENT
from evalmock.contract.operations import Operation, operations
from evalmock.contract.statuses import RETRY_AFTER, documented
from evalmock.server.auth import unauthorized
from evalmock.server.errors import (
    MESSAGES,
    ApiError,
    agent_not_found,
    bad_input,
    database_busy,
    digitalocean_errors,
    for_status,
)
from evalmock.server.responses import encoded_json_response
from evalmock.server.sessions.active import active_session

MAX_DELAY_MS = 60_000
PREFER_VALUES_KEPT = 256
RETRY_AFTER_SECONDS = 1
_KNOWN = ("code", "example", "delay")
# RFC 7240's answer to Prefer: which preferences shaped this response. A 401 or a 503 a developer
# did not expect is then seen, in the browser's network panel, to be one their Prefer header asked
# for.
PREFERENCE_APPLIED = "Preference-Applied"
_TOKEN = frozenset("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


@dataclass(frozen=True)
class Preferences:
    code: int | None = None
    example: str | None = None
    delay_ms: int = 0

    @property
    def chooses_response(self) -> bool:
        return self.code is not None or self.example is not None

    def applied(self) -> str:
        """The Preference-Applied value for these preferences (empty when none was given)."""
        example = self.example
        if example is not None and not set(example) <= _TOKEN:
            example = '"' + example.replace("\\", "\\\\").replace('"', '\\"') + '"'
        parts = [
            f"code={self.code}" if self.code is not None else "",
            f"example={example}" if example is not None else "",
            f"delay={self.delay_ms}" if self.delay_ms else "",
        ]
        return ", ".join(part for part in parts if part)


def _tokens(values: Iterable[str]) -> Iterable[tuple[str, str]]:
    for value in values:
        for item in value.split(","):
            preference = item.split(";", 1)[0].strip()  # RFC 7240 parameters after ';' are ignored
            if not preference:
                continue
            name, _, text = preference.partition("=")
            text = text.strip()
            if len(text) >= 2 and text[0] == text[-1] == '"':
                text = text[1:-1]
            yield name.strip().lower(), text


def _whole_number(name: str, text: str, low: int, high: int) -> int:
    if not text.isascii() or not text.isdigit() or len(text) > 6 or not low <= int(text) <= high:
        raise bad_input(
            "Prefer",
            f"Prefer: {name}= must be a whole number from {low} to {high}, not {text[:40]!r}.",
        )
    return int(text)


def parse_prefer(values: Iterable[str]) -> Preferences:
    """Read Prefer header values; unknown preferences are ignored and only the first of each counts
    (RFC 7240)."""
    found: dict[str, str] = {}
    for name, text in _tokens(values):
        if name in _KNOWN and name not in found:
            found[name] = text
    code = _whole_number("code", found["code"], 100, 599) if "code" in found else None
    delay = _whole_number("delay", found["delay"], 0, MAX_DELAY_MS) if "delay" in found else 0
    example = found.get("example")
    if example is not None and not example:
        raise bad_input("Prefer", "Prefer: example= needs the name of an example.")
    return Preferences(code=code, example=example, delay_ms=delay)


@functools.lru_cache(maxsize=PREFER_VALUES_KEPT)
def _parsed(values: tuple[str, ...]) -> Preferences:
    # Clients send the same few Prefer values again and again; malformed ones raise, and are not
    # kept.
    return parse_prefer(values)


def _choices(operation: Operation) -> str:
    listed = ", ".join(s for s in operation.responses if s != "default")
    return listed + (
        ", or any 4xx/5xx status (the document has a default response)"
        if operation.has_default
        else ""
    )


def check_against(operation: Operation, preferences: Preferences) -> None:
    """Refuse a status the operation does not declare, or an example its response does not have."""
    status = preferences.code or 200
    if not operation.declares(status):
        raise bad_input(
            "Prefer",
            f"Prefer: code={status} is not a response of {operation.operation_id}; choose from "
            f"{_choices(operation)}.",
        )
    if preferences.example is not None:
        response = operation.response_for(status)
        examples = response.examples if response else {}
        if preferences.example not in examples:
            names = ", ".join(examples) or "none (this response has no named examples)"
            raise bad_input(
                "Prefer",
                f"Prefer: example={preferences.example[:80]!r} is not an example of the {status} "
                "response of "
                f"{operation.operation_id}; choose from {names}.",
            )


def too_many_requests() -> ApiError:
    """DigitalOcean's 429, with the Retry-After in whole seconds its burst limit's 429 carries (its
    ratelimit-* headers come with every /v2 answer: ratelimit.py)."""
    error = for_status(429)
    error.headers = {"Retry-After": str(RETRY_AFTER_SECONDS)}
    return error


def transient_error(operation: Operation) -> ApiError:
    """The error an overloaded server answers with: 429 on DigitalOcean's API, 503 database-busy on
    ours."""
    if operation.document is GRADIENT:
        return too_many_requests()
    return database_busy(RETRY_AFTER_SECONDS)


def forced_error(
    operation: Operation, status: int, example: str | None, path_params: dict[str, Any]
) -> ApiError:
    """The error answer for `Prefer: code=status` (and `example=`), with this request's id in the
    body (and, as any ApiError of its status, a 401's challenge)."""
    response = operation.response_for(status)
    if example is not None and response is not None:
        value = response.examples[example]
        inner = value.get("error", value) if isinstance(value, dict) else {}
        details = inner.get("details") if isinstance(inner.get("details"), dict) else {}
        headers = (
            {"Retry-After": str(details.get("retryAfterSeconds", RETRY_AFTER_SECONDS))}
            if RETRY_AFTER in response.headers
            else {}
        )
        code = str(inner.get("code") or for_status(status).code)
        return ApiError(status, code, inner.get("message"), details, headers)
    if status == 401:  # named the demo tokens, as every 401 is
        gradient = operation.document is GRADIENT
        return unauthorized(digitalocean_errors()[401][1] if gradient else MESSAGES["unauthorized"])
    if operation.document is GRADIENT:
        return documented_error(operation, status)
    if status == 404 and "agentId" in path_params:
        return agent_not_found(str(path_params["agentId"]))
    if status == 503:
        return database_busy(RETRY_AFTER_SECONDS)
    return documented_error(operation, status)


def documented_error(operation: Operation, status: int) -> ApiError:
    """A declared error status's answer as the document states it: the code its examples name, with
    their message (or ours, for a code we know), and Retry-After when it declares one. The generic
    error of the status when the document names no code (a `default` response), and on
    DigitalOcean's API, whose body takes its id and message from the status (errors.py)."""
    found = documented(operation.api).get(status)
    if found is None or found.code is None or operation.document is GRADIENT:
        error = for_status(status)
    else:
        error = ApiError(status, found.code, None if found.code in MESSAGES else found.message)
    if found is not None and found.retry_after:
        error.headers = {**error.headers, "Retry-After": str(RETRY_AFTER_SECONDS)}
    return error


@functools.cache
def encoded_example(operation_id: str, status: int, name: str) -> bytes:
    """A named example of a declared response, as JSON (encoded once: the documents do not
    change)."""
    return orjson.dumps(operations()[operation_id].response_for(status).examples[name])  # type: ignore[union-attr]


async def pause(milliseconds: int) -> None:
    await asyncio.sleep(milliseconds / 1000)


class Latency:
    """A fixed or uniformly drawn added latency, in milliseconds."""

    def __init__(self, low_ms: int, high_ms: int, rng: random.Random) -> None:
        self.low_ms, self.high_ms, self._rng = low_ms, high_ms, rng

    def sample(self) -> int:
        return (
            self.low_ms
            if self.high_ms <= self.low_ms
            else self._rng.randint(self.low_ms, self.high_ms)
        )


def routed_operation(scope: Scope) -> Operation | None:
    routing = (
        scope.get("extensions", {}).get("connexion_routing", {}) if scope["type"] == "http" else {}
    )
    return operations().get(routing.get("operation_id") or "")


class LatencyMiddleware:
    """`--latency`: sits right after routing, so every API request waits, whether it succeeds or
    not."""

    def __init__(self, app: ASGIApp, latency_ms: tuple[int, int] = (0, 0), seed: int = 0) -> None:
        self.app = app
        self._latency = Latency(latency_ms[0], latency_ms[1], random.Random(seed))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self._latency.high_ms and routed_operation(scope) is not None:
            await pause(self._latency.sample())
        await self.app(scope, receive, send)


class ScenarioMiddleware:
    """Sits after security and validation: honours Prefer (code, example, delay) and fails at the
    error rate."""

    def __init__(self, app: ASGIApp, error_rate: float = 0.0, seed: int = 0) -> None:
        self.app = app
        self._rng = random.Random(seed)
        self._error_rate = error_rate

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        prefer = (
            [v.decode("latin-1") for k, v in scope["headers"] if k == b"prefer"]
            if scope["type"] == "http"
            else []
        )
        operation = routed_operation(scope) if prefer or self._error_rate else None
        # nothing asked for (or not an operation): no cost beyond looking for the header
        if operation is None:
            await self.app(scope, receive, send)
            return
        preferences = _parsed(tuple(prefer)) if prefer else Preferences()
        check_against(operation, preferences)
        if preferences.delay_ms:
            await pause(preferences.delay_ms)
        value = preferences.applied()
        applied = {PREFERENCE_APPLIED: value} if value else {}
        session = active_session()
        if session is not None and value:
            session.shaped_by = f"prefer:{value}"
        if not preferences.chooses_response:
            if self._error_rate and self._rng.random() < self._error_rate:
                raise _with_headers(transient_error(operation), applied)
            await self.app(scope, receive, _adding(send, applied))
            return
        status = preferences.code or 200
        if status >= 300:
            raise _with_headers(
                forced_error(operation, status, preferences.example, scope.get("path_params", {})),
                applied,
            )
        if preferences.example is None:
            await self.app(scope, receive, _adding(send, applied))
            return
        body = encoded_example(operation.operation_id, status, preferences.example)
        await encoded_json_response(body, status, applied)(scope, receive, send)


def _with_headers(error: ApiError, headers: dict[str, str]) -> ApiError:
    error.headers = {**error.headers, **headers}
    return error


def _adding(send: Send, headers: dict[str, str]) -> Send:
    """`send`, with `headers` added to the response's start (`send` itself when there are none)."""
    if not headers:
        return send
    raw = [
        (name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in headers.items()
    ]

    async def send_with_headers(message: Message) -> None:
        if message["type"] == "http.response.start":
            message["headers"] = [*message.get("headers", []), *raw]
        await send(message)

    return send_with_headers
