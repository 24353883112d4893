"""The session store's interface: what every store (in-process, Redis) offers the server, and the
one error family it raises.

A store holds records, never worlds: each process builds a session's world from its spec
(worlds.py). Every method that reaches the store is a coroutine, so a networked store never blocks
the event loop (`may_have_faults` answers from what this process holds; a session's request finds
its session in the in-process store with `find_now`, without a coroutine, and journals into what
that hands it); each one is atomic on its own (a fault is taken by one request only, even across
replicas). A session whose idle time has passed is gone: every method treats it as never created.
"""

from __future__ import annotations

from typing import Protocol

from evalmock.server.sessions.limits import SessionLimits
from evalmock.server.sessions.records import (
    Fault,
    FaultRequest,
    Journal,
    JournalEntry,
    SessionRecord,
    SessionState,
)


class SessionStoreError(Exception):
    """Every error a session store raises."""


class StoreUnavailable(SessionStoreError):
    """The store does not answer (Redis gone): session requests get 503 store-unavailable."""


class SessionNotFound(SessionStoreError):
    """No live session has this id (never created, deleted, or idle past its time)."""


class TooManySessions(SessionStoreError):
    """Creating one more session would pass `max_sessions`."""


class FaultQueueFull(SessionStoreError):
    """Queuing one more fault would pass `max_faults`."""


class SessionStore(Protocol):
    """Sessions by id and by token digest, each with a fault queue, a bounded journal, and the page
    each cursor it was given came from."""

    limits: SessionLimits

    async def create(self, record: SessionRecord) -> None:
        """Keep a new session, used now (TooManySessions at the bound)."""

    async def get(self, session_id: str) -> SessionState | None:
        """The live session with this id, or None; does not count as a use."""

    async def find(self, token_digest: str) -> SessionRecord | None:
        """The live session whose token has this digest, touched (used now), or None."""

    async def touch(self, session_id: str) -> bool:
        """Count a use now (its idle time starts again); False when it is not live."""

    async def delete(self, session_id: str) -> bool:
        """End the session: its token, faults and journal go; False when it was not live."""

    async def count(self) -> int:
        """How many sessions are live."""

    async def push_fault(self, session_id: str, fault: Fault) -> None:
        """Queue `fault` last (SessionNotFound, FaultQueueFull)."""

    async def faults(self, session_id: str) -> list[Fault]:
        """The queue, in order, each with its remaining uses (SessionNotFound)."""

    async def take_fault(self, session_id: str, request: FaultRequest) -> Fault | None:
        """Atomically: the first queued fault that fits `request`, used once (it leaves the queue
        when none remain), as it was before this use; None when none fits or the session is gone."""

    def may_have_faults(self, session_id: str) -> bool:
        """False only when the session's queue is known to be empty for the current request (no
        round trip): a request of a session without faults is spared take_fault."""

    async def clear_faults(self, session_id: str) -> None:
        """Empty the queue (SessionNotFound)."""

    async def append(self, session_id: str, entry: JournalEntry) -> None:
        """Journal `entry` last, dropping (and counting) the oldest past `max_journal`; remember
        that its `next_cursor` leads to page `entry.page + 1` (when both are known). A session gone
        meanwhile is ignored."""

    async def journal(self, session_id: str) -> Journal:
        """The entries, oldest first, and how many were dropped (SessionNotFound)."""

    async def clear_journal(self, session_id: str) -> None:
        """Empty the journal and its dropped count (SessionNotFound); cursors' pages are kept."""

    async def cursor_page(self, session_id: str, cursor: str) -> int | None:
        """The page a cursor this session was given leads to; None when not known."""

    async def close(self) -> None:
        """Release connections (nothing for the in-process store)."""
