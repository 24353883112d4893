"""The session a request is served in, for the code on its path (handlers, authentication,
`Prefer`): a context variable, set only for a request that carries a session token."""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass

from evalmock.server.sessions.records import SessionRecord
from evalmock.server.sessions.worlds import SessionWorlds
from evalmock.world import World
from evalmock.world.churn import ChurningWorld


@dataclass(eq=False, slots=True)
class ActiveSession:
    """A session serving one request, and what that request's answer was shaped by."""

    record: SessionRecord
    world: World
    worlds: SessionWorlds
    api: str
    query: tuple[tuple[str, str], ...]
    page: int | None
    arrived: float  # when, as its journal entry says
    next_cursor: str | None = None  # the nextCursor the handler sealed
    shaped_by: str | None = None

    @property
    def churn(self) -> int:
        return self.record.spec.churn

    def churning(self) -> ChurningWorld:
        return self.worlds.churning(self.record.id, self.world, self.churn)


# Whom a session's token stands for: a user of its own, this prefix and the session's id, so that
# no other caller's cursor (and no other session's) opens in it.
CALLER_PREFIX = "user-"
ACTIVE: ContextVar[ActiveSession | None] = ContextVar("evalmock_session", default=None)


def active_session() -> ActiveSession | None:
    return ACTIVE.get()
