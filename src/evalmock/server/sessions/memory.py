"""The in-process session store: the default, for one process (replicas need a shared store)."""

from __future__ import annotations

import time
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass, field

from evalmock.server.sessions.limits import DEFAULT_LIMITS, SessionLimits
from evalmock.server.sessions.records import (
    ROW_NEXT_CURSOR,
    ROW_PAGE,
    Fault,
    FaultRequest,
    Journal,
    JournalEntry,
    JournalRow,
    SessionRecord,
    SessionState,
    journal_entry,
)
from evalmock.server.sessions.store import FaultQueueFull, SessionNotFound, TooManySessions


@dataclass(eq=False, slots=True)
class LiveSession:
    """A session as this process holds it; `find_now` hands it to the request it serves, which
    journals into it without going through the store again."""

    record: SessionRecord
    last_used_at: float
    journal: deque[JournalRow]
    max_cursor_pages: int
    faults: list[Fault] = field(default_factory=list)
    requests: int = 0  # every request journaled
    requests_before_clear: int = 0  # of them, those before the journal was last cleared
    pages: OrderedDict[str, int] = field(default_factory=OrderedDict)

    def add(self, entry: JournalRow) -> None:
        """Journal an entry or its row last (the oldest goes past max_journal: see `journal`),
        and remember the page its nextCursor leads to."""
        self.journal.append(entry)
        self.requests += 1
        cursor, page = entry[ROW_NEXT_CURSOR], entry[ROW_PAGE]
        if cursor is not None and page is not None:
            pages = self.pages
            pages[cursor] = page + 1
            if len(pages) > self.max_cursor_pages:
                pages.popitem(last=False)


class MemoryStore:
    """Sessions in a dict of this process; `clock` gives seconds since the epoch."""

    def __init__(
        self, limits: SessionLimits = DEFAULT_LIMITS, clock: Callable[[], float] = time.time
    ) -> None:
        self.limits = limits
        self._clock = clock
        self._idle_seconds = limits.idle_seconds
        self._sessions: dict[str, LiveSession] = {}
        self._by_digest: dict[str, LiveSession] = {}

    def _expired(self, live: LiveSession, now: float) -> bool:
        return now - live.last_used_at >= self._idle_seconds

    def _drop(self, session_id: str) -> None:
        live = self._sessions.pop(session_id, None)
        if live is not None:
            self._by_digest.pop(live.record.token_digest, None)

    def _live(self, session_id: str) -> LiveSession | None:
        live = self._sessions.get(session_id)
        if live is not None and self._expired(live, self._clock()):
            self._drop(session_id)
            return None
        return live

    def _known(self, session_id: str) -> LiveSession:
        live = self._live(session_id)
        if live is None:
            raise SessionNotFound(session_id)
        return live

    def _sweep(self) -> None:
        now = self._clock()
        for session_id in [s for s, live in self._sessions.items() if self._expired(live, now)]:
            self._drop(session_id)

    async def create(self, record: SessionRecord) -> None:
        if len(self._sessions) >= self.limits.max_sessions:
            self._sweep()
            if len(self._sessions) >= self.limits.max_sessions:
                raise TooManySessions(record.id)
        limits = self.limits
        live = LiveSession(
            record, self._clock(), deque(maxlen=limits.max_journal), limits.max_cursor_pages
        )
        self._sessions[record.id] = self._by_digest[record.token_digest] = live

    async def get(self, session_id: str) -> SessionState | None:
        live = self._live(session_id)
        if live is None:
            return None
        return SessionState(
            live.record, live.last_used_at, live.requests, sum(f.remaining for f in live.faults)
        )

    async def find(self, token_digest: str) -> SessionRecord | None:
        live = self.find_now(token_digest, self._clock())
        return None if live is None else live.record

    def find_now(self, token_digest: str, now: float) -> LiveSession | None:
        """`find` without a coroutine, at `now` (the request's arrival): what a session's request
        asks first, and where it journals its answer."""
        live = self._by_digest.get(token_digest)
        if live is None:
            return None
        if now - live.last_used_at >= self._idle_seconds:
            self._drop(live.record.id)
            return None
        live.last_used_at = now
        return live

    async def touch(self, session_id: str) -> bool:
        live = self._live(session_id)
        if live is None:
            return False
        live.last_used_at = self._clock()
        return True

    async def delete(self, session_id: str) -> bool:
        known = self._live(session_id) is not None
        self._drop(session_id)
        return known

    async def count(self) -> int:
        self._sweep()
        return len(self._sessions)

    async def push_fault(self, session_id: str, fault: Fault) -> None:
        live = self._known(session_id)
        if len(live.faults) >= self.limits.max_faults:
            raise FaultQueueFull(session_id)
        live.faults.append(fault)

    async def faults(self, session_id: str) -> list[Fault]:
        return list(self._known(session_id).faults)

    async def take_fault(self, session_id: str, request: FaultRequest) -> Fault | None:
        live = self._live(session_id)
        if live is None or not live.faults:
            return None
        for index, fault in enumerate(live.faults):
            if fault.fits(request):
                if fault.remaining <= 1:
                    del live.faults[index]
                else:
                    live.faults[index] = fault.used_once()
                return fault
        return None

    def may_have_faults(self, session_id: str) -> bool:
        live = self._sessions.get(session_id)
        return live is not None and bool(live.faults)

    async def clear_faults(self, session_id: str) -> None:
        self._known(session_id).faults.clear()

    async def append(self, session_id: str, entry: JournalEntry) -> None:
        live = self._live(session_id)
        if live is not None:
            live.add(entry)

    async def journal(self, session_id: str) -> Journal:
        live = self._known(session_id)
        entries = tuple(journal_entry(row) for row in live.journal)
        return Journal(entries, live.requests - live.requests_before_clear - len(entries))

    async def clear_journal(self, session_id: str) -> None:
        live = self._known(session_id)
        live.journal.clear()
        live.requests_before_clear = live.requests

    async def cursor_page(self, session_id: str, cursor: str) -> int | None:
        live = self._live(session_id)
        return None if live is None else live.pages.get(cursor)

    async def close(self) -> None:
        pass
