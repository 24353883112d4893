"""The statuses each API's operation documents and the error code each names, read from its
document: the one home of these facts for the server, the harness and the proxy."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from evalmock.contract.operations import Operation, Response, operation

# Where each API's error body names its code and its message: the test-set envelope's `error`
# object, DigitalOcean's body itself (the documents' ErrorEnvelope and error schemas).
ERROR_FIELDS: dict[str, tuple[tuple[str, ...], str, str]] = {
    "test-set": (("error",), "code", "message"),
    "gradient": ((), "id", "message"),
}
RETRY_AFTER = "retry-after"


@dataclass(frozen=True)
class DocumentedStatus:
    """One numbered response of an operation, as its document states it."""

    status: int
    # The one code every example of its body names; None when its examples name none, or several:
    # the code is then the service's choice (the test-set 401's examples name three).
    code: str | None
    message: str | None  # the message of its first example that has one
    live: bool  # stated by DigitalOcean's live service, not its page (x-evalmock-level: live)
    retry_after: bool  # it declares a Retry-After header

    @property
    def is_error(self) -> bool:
        return self.status >= 400


def _field(body: Any, inside: tuple[str, ...], name: str) -> str | None:
    for key in inside:
        body = body.get(key) if isinstance(body, Mapping) else None
    value = body.get(name) if isinstance(body, Mapping) else None
    return value if isinstance(value, str) else None


def body_code(api: str, body: Any) -> str | None:
    """The code an error body of the API names (None when it names none that is a string)."""
    inside, code_name, _ = ERROR_FIELDS[api]
    return _field(body, inside, code_name)


def read_status(api: str, status: int, response: Response) -> DocumentedStatus:
    """What a response says of its status: the code and message of its examples' bodies, whether it
    is the live service's, whether it declares Retry-After."""
    inside, code_name, message_name = ERROR_FIELDS[api]
    bodies = [*response.examples.values(), *([response.example] if response.example else [])]
    codes = {_field(body, inside, code_name) for body in bodies} - {None}
    messages = [m for body in bodies if (m := _field(body, inside, message_name)) is not None]
    return DocumentedStatus(
        status=status,
        code=next(iter(codes)) if len(codes) == 1 else None,
        message=messages[0] if messages else None,
        live=response.live,
        retry_after=RETRY_AFTER in response.headers,
    )


def statuses_of(op: Operation) -> dict[int, DocumentedStatus]:
    """Every numbered status the operation lists, in ascending order (`default` is none: it stands
    for any error status the others leave out)."""
    numbered = sorted((int(s), response) for s, response in op.responses.items() if s.isdigit())
    return {status: read_status(op.api, status, response) for status, response in numbered}


@functools.cache
def documented(api: str) -> dict[int, DocumentedStatus]:
    """The statuses of the API's operation (each API's document declares one)."""
    return statuses_of(operation(api))


def statuses(api: str, *, live: bool = False) -> tuple[int, ...]:
    """The statuses the page documents; with `live`, those the live service documents too."""
    return tuple(s for s, found in documented(api).items() if live or not found.live)


def error_statuses(api: str, *, live: bool = False) -> tuple[int, ...]:
    """The error statuses (4xx and 5xx) among `statuses`."""
    return tuple(s for s in statuses(api, live=live) if documented(api)[s].is_error)


def error_codes(api: str, *, live: bool = False) -> dict[int, str]:
    """Each error status of `error_statuses` that names one code -> that code."""
    found = documented(api)
    return {s: code for s in error_statuses(api, live=live) if (code := found[s].code) is not None}


def retry_after_statuses(api: str, *, live: bool = False) -> tuple[int, ...]:
    """The statuses among `statuses` whose answer carries Retry-After."""
    return tuple(s for s in statuses(api, live=live) if documented(api)[s].retry_after)


def spoken(items: list[str], last: str = "and") -> str:
    """`a, b and c`: a list of statuses (or anything) as a rule's text says it."""
    return f"{', '.join(items[:-1])} {last} {items[-1]}" if len(items) > 1 else "".join(items)
