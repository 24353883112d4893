"""What each caller sent through the proxy, as the client rules read it: a bounded journal per
caller, judged when the summary or the outputs are written.

A caller is the Authorization header it sends (an app's token; no header is one caller too): a
cursor is bound to its caller, and one app's wait is not another's. The header is kept only as a
keyed digest, in memory, under a key made at start: never the token, and nothing that could be
matched with it outside this process.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import NamedTuple
from urllib.parse import parse_qsl, urlsplit

from evalmock.contract.client_exchange import ClientExchange
from evalmock.contract.client_rules import RULES
from evalmock.contract.client_verdict import ClientVerdict, judge_callers
from evalmock.nouns import counted, noun_for

# Journals kept: an app and a few testers, not a crowd. A request of a caller past the bound is not
# journaled (counted, and said).
MAX_CALLERS = 16
# Requests kept per caller; older ones are dropped first (counted, and the verdict says so). An
# entry holds about 0.55 KiB (a page's request with its cursor, measured with tracemalloc): 1.1 MiB
# a caller, 18 MiB at most in all; journaling one takes about 13 µs.
MAX_ENTRIES = 2_000


class _Sent(NamedTuple):
    """A request as journaled: its URL whole, read into a ClientExchange only when judged (the
    proxy's hot path pays for no parsing)."""

    api: str
    method: str
    url: str
    at: float
    status: int
    authorized: bool
    retry_after: int | None
    next_cursor: str | None
    answer_read: bool

    def exchange(self) -> ClientExchange:
        split = urlsplit(self.url)
        return ClientExchange(
            api=self.api,
            method=self.method,
            path=split.path,
            query=tuple(parse_qsl(split.query, keep_blank_values=True)),
            at=self.at,
            status=self.status,
            authorized=self.authorized,
            retry_after=self.retry_after,
            next_cursor=self.next_cursor,
            answer_read=self.answer_read,
        )


@dataclass
class _Caller:
    entries: deque[_Sent]
    dropped: int = 0


@dataclass
class ClientJournals:
    """Each caller's requests to an audited API, oldest first, bounded."""

    max_callers: int = MAX_CALLERS
    max_entries: int = MAX_ENTRIES
    unjournaled: int = 0  # requests of callers past max_callers
    _callers: dict[bytes, _Caller] = field(default_factory=dict)
    _key: bytes = field(default_factory=lambda: secrets.token_bytes(32))

    def add(
        self,
        api: str,
        method: str,
        url: str,
        at: float,
        status: int,
        request_headers: Iterable[tuple[str, str]],
        response_headers: Iterable[tuple[str, str]] = (),
        answer: object = None,
        *,
        answer_read: bool = True,
    ) -> None:
        """Journal one forwarded request of `api` and what it got: `answer` is the answer's body as
        the audit parsed it (its nextCursor is read from it); `answer_read` False when the body was
        not read."""
        token = next((v for n, v in request_headers if n.lower() == "authorization"), None)
        caller = self._caller(token)
        if caller is None:
            self.unjournaled += 1
            return
        if len(caller.entries) == self.max_entries:
            caller.dropped += 1
        caller.entries.append(
            _Sent(
                api,
                method,
                url,
                at,
                status,
                token is not None,
                _whole_seconds(response_headers),
                _next_cursor(answer),
                answer_read,
            )
        )

    def verdict(self, *, strict: bool = False) -> ClientVerdict:
        """The client rules' verdict over every caller, each judged apart."""
        journals = [
            ([sent.exchange() for sent in c.entries], c.dropped) for c in self._callers.values()
        ]
        found = judge_callers(journals, RULES, strict=strict)
        if self.unjournaled:
            found.notes.append(
                f"{counted(self.unjournaled, 'request')} of callers past the first "
                f"{self.max_callers} {noun_for(self.unjournaled, 'was', plural='were')} "
                "not journaled, so not judged"
            )
        return found

    def _caller(self, token: str | None) -> _Caller | None:
        digest = hmac.digest(self._key, (token or "").encode("utf-8", "replace"), hashlib.sha256)
        caller = self._callers.get(digest)
        if caller is None and len(self._callers) < self.max_callers:
            caller = self._callers[digest] = _Caller(deque(maxlen=self.max_entries))
        return caller


def _whole_seconds(headers: Iterable[tuple[str, str]]) -> int | None:
    """The answer's Retry-After in whole seconds (RFC 9110's delay-seconds), else None (an HTTP
    date is not the page's form)."""
    value = next((v for n, v in headers if n.lower() == "retry-after"), None)
    value = value.strip() if value else ""
    return int(value) if value.isascii() and value.isdigit() and len(value) <= 9 else None


def _next_cursor(answer: object) -> str | None:
    cursor = answer.get("nextCursor") if isinstance(answer, dict) else None
    return cursor if isinstance(cursor, str) else None
