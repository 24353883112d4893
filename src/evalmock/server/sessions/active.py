"""The session a request is served in, for the code on its path (handlers, authentication,
`Prefer`): a context variable, set only for a request that carries a session token."""

from __future__ import annotations

import logging
from collections.abc import Awaitable
from contextvars import ContextVar

from starlette.types import Message, Send

from evalmock.server.request_id import REQUEST_ID
from evalmock.server.sessions.memory import LiveSession
from evalmock.server.sessions.records import JournalEntry, Pairs, SessionRecord, journal_entry
from evalmock.server.sessions.store import SessionStore, StoreUnavailable
from evalmock.server.sessions.worlds import SessionWorlds
from evalmock.world import World
from evalmock.world.churn import ChurningWorld

logger = logging.getLogger("evalmock.server")


class ActiveSession:
    """A session serving one request, what that request's answer was shaped by, and the request's
    `send`: called with each message, it journals the answer as it starts, before its body is
    sent, so that a test that reads the journal once it has its answer finds the entry.

    (One object a request for both jobs, with slots: one is made on every request of a session.
    Its call is not a coroutine but returns the next `send`'s, so that a message passes through it
    without a frame of its own.)"""

    __slots__ = (
        "api",
        "arrived",
        "churn",
        "faults",
        "local",
        "method",
        "next_cursor",
        "page",
        "path",
        "query",
        "record",
        "send",
        "shaped_by",
        "store",
        "world",
        "worlds",
    )

    def __init__(
        self,
        record: SessionRecord,
        world: World,
        worlds: SessionWorlds,
        api: str,
        query: str | Pairs,  # as the journal keeps it (records.JournalRow)
        page: int | None,
        arrived: float,  # when, as its journal entry says
        store: SessionStore,
        local: LiveSession | None,  # the session as the in-process store holds it
        send: Send,
        method: str,
        path: str,  # as the journal keeps it (bounded)
    ) -> None:
        self.record = record
        self.world = world
        self.worlds = worlds
        self.api = api
        self.query = query
        self.page = page
        self.arrived = arrived
        self.store = store
        self.local = local
        self.send = send
        self.method = method
        self.path = path
        self.churn = record.spec.churn
        # truthy when the session may have faults queued (FaultMiddleware asks): the in-process
        # session's queue itself, or what a shared store's look-up of this request saw
        self.faults: object = (
            local.faults if local is not None else store.may_have_faults(record.id)
        )
        self.next_cursor: str | None = None  # the nextCursor the handler sealed
        self.shaped_by: str | None = None

    def churning(self) -> ChurningWorld:
        return self.worlds.churning(self.record.id, self.world, self.churn)

    def __call__(self, message: Message) -> Awaitable[None]:
        if message["type"] != "http.response.start":
            return self.send(message)
        status = message["status"]
        row = (
            self.arrived,
            self.api,
            self.method,
            self.path,
            self.query,
            status,
            True,
            REQUEST_ID.get(),  # set by RequestIdMiddleware, outside this one
            self.page,
            _retry_after(message) if status >= 400 else None,
            self.next_cursor if status == 200 else None,
            self.shaped_by,
        )
        if self.local is not None:
            self.local.add(row)
            return self.send(message)
        return self._journal_then_send(journal_entry(row), message)

    async def _journal_then_send(self, entry: JournalEntry, message: Message) -> None:
        try:
            await self.store.append(self.record.id, entry)
        except StoreUnavailable:
            logger.warning("the session store did not journal a request of %s", self.record.id)
        await self.send(message)


def _retry_after(start: Message) -> int | None:
    """The whole seconds of an error's Retry-After (a 503, DigitalOcean's 429), if any."""
    retry_after = None
    for name, value in start.get("headers", ()):
        if name.lower() == b"retry-after" and value.isdigit():
            retry_after = int(value)
    return retry_after


# Whom a session's token stands for: a user of its own, this prefix and the session's id, so that
# no other caller's cursor (and no other session's) opens in it.
CALLER_PREFIX = "user-"
ACTIVE: ContextVar[ActiveSession | None] = ContextVar("evalmock_session", default=None)
# The same session in the request's scope, for the code on its path that has the scope at hand (the
# bearer check, the fault check): a dictionary's look-up, where a context variable's first read of a
# request is a walk of the context (a request without a session reads it too).
SESSION_SCOPE_KEY = "evalmock.session"


def active_session() -> ActiveSession | None:
    return ACTIVE.get()
