"""The two places a session acts on a request: at the door (its token chooses the session, whose
journal records the answer), and after validation (its queued faults answer)."""

from __future__ import annotations

import time
from collections.abc import Callable

from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from evalmock.contract.documents import APIS, TEST_SET
from evalmock.server.errors import ApiError, error_body
from evalmock.server.prefer import pause, routed_operation
from evalmock.server.request_id import current_request_id
from evalmock.server.sessions.active import ACTIVE, SESSION_SCOPE_KEY, ActiveSession
from evalmock.server.sessions.faults import fault_error
from evalmock.server.sessions.memory import MemoryStore
from evalmock.server.sessions.records import FaultRequest, Pairs, journaled_pairs
from evalmock.server.sessions.store import SessionStore, StoreUnavailable
from evalmock.server.sessions.tokens import TOKEN_PREFIX, token_digest
from evalmock.server.sessions.worlds import SessionWorlds
from evalmock.server.validation import QUERY_SCOPE_KEY, query_pairs

_BEARER_SESSION = b"bearer " + TOKEN_PREFIX.encode()
_PREFIX_LENGTH = len(_BEARER_SESSION)
MAX_JOURNALED_TEXT = 4096  # characters of a path, name or value a journal entry keeps
CURSOR = "cursor"
PAGED_API = TEST_SET.name  # the API whose lists have pages


def session_token(scope: Scope) -> str | None:
    """The session token of the request's first Authorization header, or None; a header that is
    not `Bearer evm_…` costs one comparison."""
    for name, value in scope["headers"]:
        if name == b"authorization":
            if value[:_PREFIX_LENGTH].lower() != _BEARER_SESSION:
                return None
            return value[7:].decode("latin-1").strip(" ")
    return None


def store_unavailable() -> ApiError:
    return ApiError(
        503,
        "store-unavailable",
        "The session store does not answer; sessions are served again once it does (requests "
        "without a session token are not affected).",
        headers={"Retry-After": "1"},
    )


def _gone() -> ApiError:
    # as every 401 of the APIs, with the challenge; no demo-token hint: the caller holds a session's
    return ApiError(
        401,
        "unauthorized",
        "The session token is not one of a live session: the session was deleted, or ended after "
        "its idle time. Create another (POST /__evalmock/sessions).",
    )


_DIGESTS: dict[str, str] = {}
MAX_DIGESTS_KEPT = 4096


def _digest(token: str) -> str:
    """The token's digest, kept (in _DIGESTS) while it is among the last few thousand."""
    if len(_DIGESTS) >= MAX_DIGESTS_KEPT:
        _DIGESTS.clear()
    digest = _DIGESTS[token] = token_digest(token)
    return digest


def _parsed_query(scope: Scope, text: str) -> tuple[str | Pairs, str | None]:
    """The query of a request that may send a cursor, or whose query is long: as the journal keeps
    it (its text, or when that is long its pairs, each text bounded), and its cursor. The pairs
    are left in the scope for validation, so that the query is parsed once."""
    try:
        pairs = query_pairs(text)
    except ValueError:
        return (), None  # over MAX_QUERY_FIELDS: validation refuses the request
    scope[QUERY_SCOPE_KEY] = pairs
    kept: str | Pairs = text
    bounded: Pairs | list[tuple[str, str]] = pairs  # no part of it is longer than the whole
    if len(text) > MAX_JOURNALED_TEXT:
        kept = bounded = tuple((k[:MAX_JOURNALED_TEXT], v[:MAX_JOURNALED_TEXT]) for k, v in pairs)
    for name, value in bounded:
        if name == CURSOR:
            return kept, value
    return kept, None


class SessionMiddleware:
    """Serves a request with a session token from its session's world (ACTIVE), journals it; a
    request without one passes on after a look at its Authorization header."""

    def __init__(
        self,
        app: ASGIApp,
        store: SessionStore,
        worlds: SessionWorlds,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.app = app
        self.store = store
        self.worlds = worlds
        self.clock = clock
        # the in-process store answers at once: its requests are spared two coroutines
        self._local = store if isinstance(store, MemoryStore) else None
        # each API's name by its base path, one segment each, as a path's first segment finds it
        self._apis = {api.base_path: api.name for api in APIS.values()}
        if any(base.count("/") != 1 for base in self._apis):
            raise ValueError(f"a base path of more than one segment: {sorted(self._apis)}")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        token = session_token(scope) if scope["type"] == "http" else None
        api = None
        if token is not None:
            path = scope["path"]
            end = path.find("/", 1)  # the API is the one whose base path is the first segment
            api = self._apis.get(path if end < 0 else path[:end])
        if token is None or api is None:
            await self.app(scope, receive, send)
            return
        arrived = self.clock()
        store, local = self.store, self._local
        digest = _DIGESTS.get(token) or _digest(token)
        try:
            if local is not None:
                live = local.find_now(digest, arrived)
                record = None if live is None else live.record
            else:
                live, record = None, await store.find(digest)
            if record is None:
                raise _gone()
            query: str | Pairs = scope.get("query_string", b"").decode("latin-1")
            cursor = None
            # a name is `cursor` only if written so, or escaped; a short query without one is
            # journaled as its text and parsed by validation, as any request's
            if CURSOR in query or "%" in query or len(query) > MAX_JOURNALED_TEXT:
                query, cursor = _parsed_query(scope, query)
            page = None
            if api == PAGED_API:
                page = 1 if cursor is None else await store.cursor_page(record.id, cursor)
        except StoreUnavailable:
            await _answer(store_unavailable(), scope, receive, send)
            return
        except ApiError as error:
            await _answer(error, scope, receive, send)
            return
        path = scope["path"]
        session = ActiveSession(
            record,
            self.worlds.world(record.spec),
            self.worlds,
            api,
            query,
            page,
            arrived,
            store,
            live,
            send,
            scope["method"],
            path if len(path) <= MAX_JOURNALED_TEXT else path[:MAX_JOURNALED_TEXT],
        )
        scope[SESSION_SCOPE_KEY] = session
        reset = ACTIVE.set(session)
        try:
            await self.app(scope, receive, session)  # the session journals the answer it sends
        finally:
            ACTIVE.reset(reset)


async def _answer(error: ApiError, scope: Scope, receive: Receive, send: Send) -> None:
    """An error answered before the app: in the body of the API the path belongs to."""
    body = error_body(error, scope["path"], current_request_id())
    response = Response(body, error.status, dict(error.headers), media_type="application/json")
    await response(scope, receive, send)


class FaultMiddleware:
    """Sits where `Prefer` applies (after security and validation): the session's first queued
    fault that fits the request delays it, answers it, or both."""

    def __init__(self, app: ASGIApp, store: SessionStore) -> None:
        self.app = app
        self.store = store

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        session = scope.get(SESSION_SCOPE_KEY)
        operation = routed_operation(scope) if session is not None and session.faults else None
        if session is None or operation is None:
            await self.app(scope, receive, send)
            return
        request = FaultRequest(session.api, journaled_pairs(session.query), session.page)
        try:
            fault = await self.store.take_fault(session.record.id, request)
        except StoreUnavailable:
            raise store_unavailable() from None
        if fault is None:
            await self.app(scope, receive, send)
            return
        session.shaped_by = f"fault:{fault.id}"
        if fault.latency_ms:
            await pause(fault.latency_ms)
        if fault.status is not None:
            raise fault_error(operation, fault, scope.get("path_params", {}))
        await self.app(scope, receive, send)
