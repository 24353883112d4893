"""What a session store holds: each session's spec, its queued faults and its journal, as records
that go to JSON and back unchanged, so any replica can read what another wrote.

Wire shapes (the admin document's schemas, `openapi/evalmock-admin.yaml`):

- SessionSpec: `{"seed": int, "cases": int, "data": object | null, "dataOnly": bool, "churn": int}`
- SessionRecord: `{"id", "tokenDigest", "spec": SessionSpec, "createdAt": float seconds}`
- Fault: `{"id", "api", "times", "remaining", "status"?, "code"?, "retryAfter"?, "latencyMs"?,
  "match"?: {"query"?: {NAME: VALUE | "*"}, "page"?: int}}`
- JournalEntry: `{"at": RFC 3339, "api", "method", "path", "query": [[name, value], ...], "status",
  "authorized", "page"?, "retryAfter"?, "nextCursor"?, "shapedBy"?, "requestId"}`
"""

from __future__ import annotations

import datetime as dt
import functools
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple

import orjson

from evalmock.contract.client_exchange import ClientExchange
from evalmock.defaults import DEFAULT_CASES, DEFAULT_SEED
from evalmock.server.validation import query_pairs

ANY_VALUE = "*"  # in a fault's `match.query`: the parameter is present, whatever its value


@dataclass(frozen=True)
class SessionSpec:
    """What `POST /__evalmock/sessions` took: enough for any process to build the session's
    world."""

    seed: int = DEFAULT_SEED
    cases: int = DEFAULT_CASES
    data: dict[str, Any] | None = None  # a data file's content
    data_only: bool = False
    churn: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "seed": self.seed,
            "cases": self.cases,
            "data": self.data,
            "dataOnly": self.data_only,
            "churn": self.churn,
        }

    @classmethod
    def from_json(cls, value: dict[str, Any]) -> SessionSpec:
        return cls(
            seed=value.get("seed", DEFAULT_SEED),
            cases=value.get("cases", DEFAULT_CASES),
            data=value.get("data"),
            data_only=bool(value.get("dataOnly", False)),
            churn=value.get("churn", 0),
        )

    @functools.cached_property
    def world_key(self) -> bytes:
        """What identifies the world this spec builds (churn is the lists' motion, not the
        world); worked out once per spec, as every request of a session asks."""
        return orjson.dumps(
            [self.seed, self.cases, self.data, self.data_only], option=orjson.OPT_SORT_KEYS
        )


@dataclass(frozen=True)
class SessionRecord:
    """A session as created: its id, its token's digest (never the token), its spec."""

    id: str
    token_digest: str
    spec: SessionSpec
    created_at: float

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "tokenDigest": self.token_digest,
            "spec": self.spec.to_json(),
            "createdAt": self.created_at,
        }

    @classmethod
    def from_json(cls, value: dict[str, Any]) -> SessionRecord:
        return cls(
            value["id"],
            value["tokenDigest"],
            SessionSpec.from_json(value["spec"]),
            float(value["createdAt"]),
        )


@dataclass(frozen=True)
class SessionState:
    """A live session as `GET /__evalmock/sessions/{id}` shows it."""

    record: SessionRecord
    last_used_at: float
    requests: int  # every request served in the session, dropped journal entries included
    faults_queued: int


class FaultRequest(NamedTuple):
    """What a fault's `match` is compared with: the request's API, query, and its page of a list
    (1: no cursor; n + 1: a cursor that page n gave; None: not known). (A named tuple: one is made
    on every request of a session.)"""

    api: str
    query: tuple[tuple[str, str], ...]
    page: int | None = None


@dataclass(frozen=True)
class Fault:
    """An answer queued for the next requests of a session that fit it, `remaining` more times."""

    id: str
    api: str
    times: int
    remaining: int
    status: int | None = None
    code: str | None = None
    retry_after: int | None = None
    latency_ms: int | None = None
    match_query: tuple[tuple[str, str], ...] = ()
    match_page: int | None = None

    def fits(self, request: FaultRequest) -> bool:
        if request.api != self.api:
            return False
        if self.match_page is not None and request.page != self.match_page:
            return False
        for name, wanted in self.match_query:
            sent = [value for key, value in request.query if key == name]
            if not sent or (wanted != ANY_VALUE and wanted not in sent):
                return False
        return True

    def used_once(self) -> Fault:
        return replace(self, remaining=self.remaining - 1)

    def to_json(self) -> dict[str, Any]:
        value: dict[str, Any] = {
            "id": self.id,
            "api": self.api,
            "times": self.times,
            "remaining": self.remaining,
        }
        for key, item in (
            ("status", self.status),
            ("code", self.code),
            ("retryAfter", self.retry_after),
            ("latencyMs", self.latency_ms),
        ):
            if item is not None:
                value[key] = item
        match: dict[str, Any] = {}
        if self.match_query:
            match["query"] = dict(self.match_query)
        if self.match_page is not None:
            match["page"] = self.match_page
        if match:
            value["match"] = match
        return value

    @classmethod
    def from_json(cls, value: dict[str, Any]) -> Fault:
        match = value.get("match") or {}
        times = int(value.get("times", 1))
        return cls(
            id=value["id"],
            api=value["api"],
            times=times,
            remaining=int(value.get("remaining", times)),
            status=value.get("status"),
            code=value.get("code"),
            retry_after=value.get("retryAfter"),
            latency_ms=value.get("latencyMs"),
            match_query=tuple((str(k), str(v)) for k, v in (match.get("query") or {}).items()),
            match_page=match.get("page"),
        )


def rfc3339(seconds: float) -> str:
    moment = dt.datetime.fromtimestamp(seconds, dt.UTC)
    return moment.isoformat(timespec="microseconds").replace("+00:00", "Z")


def from_rfc3339(text: str) -> float:
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


class JournalEntry(NamedTuple):
    """One request a session's caller sent and what it got; never a credential, cookie or header
    value. (A named tuple: one is made on every request of a session, and it is the cheapest
    immutable record to make.)"""

    at: float
    api: str
    method: str
    path: str
    query: tuple[tuple[str, str], ...]
    status: int
    authorized: bool
    request_id: str = ""
    page: int | None = None
    retry_after: int | None = None
    next_cursor: str | None = None
    shaped_by: str | None = None

    def to_json(self) -> dict[str, Any]:
        value: dict[str, Any] = {
            "at": rfc3339(self.at),
            "api": self.api,
            "method": self.method,
            "path": self.path,
            "query": [list(pair) for pair in self.query],
            "status": self.status,
            "authorized": self.authorized,
        }
        for key, item in (
            ("page", self.page),
            ("retryAfter", self.retry_after),
            ("nextCursor", self.next_cursor),
            ("shapedBy", self.shaped_by),
        ):
            if item is not None:
                value[key] = item
        value["requestId"] = self.request_id
        return value

    @classmethod
    def from_json(cls, value: dict[str, Any]) -> JournalEntry:
        return cls(
            at=from_rfc3339(value["at"]),
            api=value["api"],
            method=value["method"],
            path=value["path"],
            query=tuple((str(k), str(v)) for k, v in value["query"]),
            status=int(value["status"]),
            authorized=bool(value["authorized"]),
            request_id=value.get("requestId", ""),
            page=value.get("page"),
            retry_after=value.get("retryAfter"),
            next_cursor=value.get("nextCursor"),
            shaped_by=value.get("shapedBy"),
        )

    def exchange(self) -> ClientExchange:
        """The entry as the client rules read it."""
        return ClientExchange(
            api=self.api,
            method=self.method,
            path=self.path,
            query=self.query,
            at=self.at,
            status=self.status,
            authorized=self.authorized,
            retry_after=self.retry_after,
            next_cursor=self.next_cursor,
            shaped_by=self.shaped_by,
        )


Pairs = tuple[tuple[str, str], ...]

# A journal entry as the in-process store keeps it: a plain tuple of JournalEntry's fields in
# order, its query the request's text as it came (parsed when the journal is read) or, when that
# text is long, its bounded pairs. A session's request makes one, and the bounded journal frees one
# made a thousand requests before: a few objects an entry rather than a score.
JournalRow = tuple[Any, ...]
ROW_PAGE = JournalEntry._fields.index("page")
ROW_NEXT_CURSOR = JournalEntry._fields.index("next_cursor")


def journaled_pairs(query: str | Pairs) -> Pairs:
    """A journaled query as pairs: a text is parsed as validation parsed it when it came."""
    if not isinstance(query, str):
        return query
    try:
        return tuple(query_pairs(query))
    except ValueError:
        return ()  # more fields than validation reads: the request was refused, its query unread


def journal_entry(row: JournalRow) -> JournalEntry:
    """A journal row as the entry it stands for (an entry is a row already)."""
    return JournalEntry(*row[:4], journaled_pairs(row[4]), *row[5:])


@dataclass(frozen=True)
class Journal:
    """A session's journal: its entries, oldest first, and how many older ones the bound dropped."""

    entries: tuple[JournalEntry, ...] = field(default=())
    dropped: int = 0
