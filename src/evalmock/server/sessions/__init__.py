"""Sessions: isolated worlds per bearer token, with queued faults and a journal of what was sent
(the admin API under /__evalmock); the store interface any store implements, and the in-process
store."""

from evalmock.server.sessions.limits import DEFAULT_LIMITS, SessionLimits
from evalmock.server.sessions.memory import MemoryStore
from evalmock.server.sessions.records import (
    Fault,
    FaultRequest,
    Journal,
    JournalEntry,
    SessionRecord,
    SessionSpec,
    SessionState,
)
from evalmock.server.sessions.store import (
    FaultQueueFull,
    SessionNotFound,
    SessionStore,
    SessionStoreError,
    StoreUnavailable,
    TooManySessions,
)

__all__ = [
    "DEFAULT_LIMITS",
    "Fault",
    "FaultQueueFull",
    "FaultRequest",
    "Journal",
    "JournalEntry",
    "MemoryStore",
    "SessionLimits",
    "SessionNotFound",
    "SessionRecord",
    "SessionSpec",
    "SessionState",
    "SessionStore",
    "SessionStoreError",
    "StoreUnavailable",
    "TooManySessions",
]
