"""What a client rule reads and yields: a caller's journal, and for each occasion a breach, kept, or
not judged; and the rule itself, a named function with its Source.

A journal holds the exchanges of one caller in arrival order (`ClientExchange`: a mock session's
journal, or what the proxy forwarded). Only requests of an API's operation (its method, its path)
are judged: a CORS preflight, or a path no API has, is none of the pages' business.
"""

from __future__ import annotations

import bisect
import functools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, unquote

from evalmock.contract.client_exchange import ClientExchange
from evalmock.contract.documents import APIS
from evalmock.contract.operations import Operation, operation
from evalmock.contract.sources import Level, Source

SHOWN = 120  # characters of a value a finding quotes; the rest is cut, saying how much


@dataclass(frozen=True)
class ClientBreach:
    """A request that breaks a rule: which request (its index in the journal), what is wrong, what
    the page asks and what the app sent."""

    rule: str
    index: int
    problem: str
    expected: str
    received: str


@dataclass(frozen=True)
class Kept:
    """An occasion a rule judged (a request, or a request and the answer before it) and found
    kept."""

    index: int


@dataclass(frozen=True)
class Unjudged:
    """An occasion a rule cannot judge from the journal, and why."""

    index: int
    why: str


Outcome = ClientBreach | Kept | Unjudged


@dataclass(frozen=True)
class Journal:
    """What a caller sent, oldest first, and how many older entries a bounded journal dropped."""

    exchanges: Sequence[ClientExchange]
    dropped: int = 0

    def judged(self) -> Iterator[tuple[int, ClientExchange]]:
        """The requests of an API's operation (its method and path), with their index."""
        for index, exchange in enumerate(self.exchanges):
            if operation_of(exchange) is not None:
                yield index, exchange

    @functools.cached_property
    def issued(self) -> dict[str, list[int]]:
        """Each nextCursor the answers gave, and the indexes of the requests they answered."""
        found: dict[str, list[int]] = {}
        for index, exchange in enumerate(self.exchanges):
            if exchange.next_cursor is not None:
                found.setdefault(exchange.next_cursor, []).append(index)
        return found

    def issuer(self, index: int, cursor: str) -> int | None:
        """The latest request before `index` whose answer gave `cursor`, byte for byte."""
        given = self.issued.get(cursor, [])
        before = bisect.bisect_left(given, index)
        return given[before - 1] if before else None

    def unread_before(self, index: int, api: str) -> bool:
        """Whether an answer of `api` before `index` may have given a nextCursor the journal does
        not hold: entries were dropped, or an answer's body was not read."""
        return self.dropped > 0 or any(
            e.api == api and not e.answer_read for e in self.exchanges[:index]
        )

    def near_miss(self, index: int, cursor: str) -> str:
        """What the app did to a cursor it was given, when the one it sent before `index` is
        recognisably that one: ` (it is request #N's nextCursor cut short)`, or ""."""
        for earlier in range(index - 1, -1, -1):
            given = self.exchanges[earlier].next_cursor
            if not given:
                continue
            if cursor.strip() == given:
                how = "with white space added"
            elif unquote(cursor) == given or quote(cursor, safe="") == given:
                how = "percent-encoded differently"
            elif given.startswith(cursor):
                how = "cut short"
            elif cursor.startswith(given):
                how = "with characters added"
            elif cursor.lower() == given.lower():
                how = "in another letter case"
            else:
                continue
            return f" (it is request #{earlier}'s nextCursor {how})"
        return ""


@dataclass(frozen=True)
class ClientRule:
    """A named client rule with its source, the rule in our words, the API whose requests it
    judges, and what traffic it needs (said when the journal held none)."""

    name: str
    source: Source
    rule: str
    api: str  # a name of evalmock.contract.documents.APIS
    needs: str
    check: Callable[[Journal], Iterator[Outcome]]

    @property
    def level(self) -> Level:
        return self.source.level

    def __call__(self, journal: Journal) -> Iterator[Outcome]:
        return self.check(journal)


def client_rule(
    source: Source, *, api: str, needs: str
) -> Callable[[Callable[..., Any]], ClientRule]:
    """Make a function a ClientRule: its docstring states the rule, `api` names the API whose
    requests it judges, `needs` says what it judges."""

    def decorate(func: Callable[..., Any]) -> ClientRule:
        rule = " ".join((func.__doc__ or "").split())
        if not rule:
            raise ValueError(f"client rule {func.__name__} must state its rule")
        if api not in APIS:
            raise ValueError(f"client rule {func.__name__} names no API: {api!r}")
        return ClientRule(func.__name__, source, rule, api, needs, func)

    return decorate


def operation_of(exchange: ClientExchange) -> Operation | None:
    """The operation a request is one of (its API's, by method and path), or None."""
    try:
        found = operation(exchange.api)
    except (KeyError, ValueError):
        return None  # "" or a name no document has
    if exchange.method.upper() != found.method or found.path_parameters(exchange.path) is None:
        return None
    return found


def shown(value: str) -> str:
    """A value as a finding quotes it: in quotes, its control characters escaped, cut to a
    bound."""
    if len(value) <= SHOWN:
        return repr(value)
    return f"{value[:SHOWN]!r}… ({len(value)} characters)"


def clipped(text: str) -> str:
    """A path as a finding names it, cut to a bound (JSON escapes the rest)."""
    return text if len(text) <= SHOWN else f"{text[:SHOWN]}… ({len(text)} characters)"
