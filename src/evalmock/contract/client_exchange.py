"""One request a client sent and what it got, as the client rules read it: an entry of a mock
session's journal, or an exchange the proxy forwarded.

It holds no credential: whether the request carried a token is kept, never the token, a cookie or
any other header's value. Times are seconds since the epoch, on the clock of whoever wrote the
entry (the mock, or the proxy).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ClientExchange:
    """A request as sent (its query decoded, in order, repeats kept) and the answer's facts the
    client rules need."""

    api: str  # the API's name (evalmock.contract.documents.APIS), or "" for a path no API has
    method: str
    path: str  # without the query, as sent
    query: tuple[tuple[str, str], ...]
    at: float  # when the request arrived
    status: int
    authorized: bool  # an Authorization header came with it (its value is never kept)
    retry_after: int | None = None  # the answer's Retry-After, in whole seconds
    next_cursor: str | None = None  # the nextCursor the answer's body gave
    shaped_by: str | None = None  # what shaped the answer: a session's fault, or a Prefer header
    # False when the answer's body was not read (a proxy that did not hold it): its nextCursor is
    # then unknown, so a cursor it may have given is not judged
    answer_read: bool = True

    def param(self, name: str) -> str | None:
        """The first value the request sent for `name`, or None."""
        for key, value in self.query:
            if key == name:
                return value
        return None
