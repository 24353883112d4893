"""The Redis session store (`evalmock serve --store redis://...`): sessions, fault queues and
journals that every replica reads and writes, so a session created through one is served by all
(its keys and scripts: redis_scripts.py).

A session is live while `lastUsedAt` (the store's clock) is less than `idle_seconds` ago; each key
also expires in Redis that long after the session's last use, so what nobody uses leaves memory.
Every write is one Lua script, atomic across replicas: a fault serves exactly `times` requests in
all. Each call is bounded (redis_link.py); a Redis that does not answer is StoreUnavailable,
and the next call tries again, so the store recovers when Redis is back.
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import replace
from typing import Any, TypeVar

import orjson

from evalmock.server.sessions.limits import DEFAULT_LIMITS, SessionLimits
from evalmock.server.sessions.records import (
    Fault,
    FaultRequest,
    Journal,
    JournalEntry,
    SessionRecord,
    SessionState,
)
from evalmock.server.sessions.redis_link import (
    DEFAULT_TIMEOUTS,
    Connection,
    RedisLink,
    RedisTimeouts,
)
from evalmock.server.sessions.redis_scripts import INDEX, key, session_keys
from evalmock.server.sessions.store import (
    FaultQueueFull,
    SessionNotFound,
    TooManySessions,
)
from evalmock.server.sessions.store_choice import RedisLocation

V = TypeVar("V")
# The fault queue as the current request's find() read it: (store, session id, queue), used once by
# its take_fault. A context variable, so each request (each task) sees only its own.
_SEEN_QUEUE: ContextVar[tuple[RedisStore, str, list[Fault]] | None] = ContextVar(
    "evalmock_redis_seen_queue", default=None
)


def _text(value: bytes | str | None) -> str | None:
    return value.decode() if isinstance(value, bytes) else value


def _pairs(flat: list[bytes]) -> dict[bytes, bytes]:
    """A hash as a Lua script answers it (field, value, field, value, ...) as a dict."""
    return dict(zip(flat[::2], flat[1::2], strict=True))


def _queue_of(
    order: list[bytes], bodies: dict[bytes, bytes], left: dict[bytes, bytes]
) -> list[Fault]:
    """The queued faults in order, each with its remaining uses."""
    return [
        replace(Fault.from_json(orjson.loads(bodies[fault_id])), remaining=int(left[fault_id]))
        for fault_id in order
        if fault_id in bodies and fault_id in left
    ]


def _keep(cache: OrderedDict[str, V], name: str, value: V, bound: int) -> None:
    """Keep `value` as the newest of `cache`, which holds at most `bound`."""
    cache[name] = value
    cache.move_to_end(name)
    while len(cache) > bound:
        cache.popitem(last=False)


class RedisStore:
    """The SessionStore protocol over Redis; `clock` gives seconds since the epoch, `timeouts` how
    long each call waits on Redis (the server's defaults unless a test gives more)."""

    def __init__(
        self,
        location: RedisLocation,
        limits: SessionLimits = DEFAULT_LIMITS,
        clock: Callable[[], float] = time.time,
        timeouts: RedisTimeouts = DEFAULT_TIMEOUTS,
    ) -> None:
        self.limits = limits
        self.location = location
        self._clock = clock
        self._link = RedisLink(location, timeouts)
        # A session's record never changes: each replica keeps the latest it used, so that a
        # request fetches no spec (its data may be megabytes) from Redis, only asks if it is live.
        self._records: OrderedDict[str, SessionRecord] = OrderedDict()
        self._ids: OrderedDict[str, str] = OrderedDict()  # token digest -> session id

    # -- plumbing

    def _now_idle(self) -> list[Any]:
        return [repr(self._clock()), repr(float(self.limits.idle_seconds))]

    def _ttl_ms(self) -> int:
        return max(1, math.ceil(self.limits.idle_seconds * 1000))

    def _live(self, last_used: bytes | None) -> float | None:
        """The last use, when the session it belongs to is live."""
        if last_used is None:
            return None
        last = float(last_used)
        return last if self._clock() - last < self.limits.idle_seconds else None

    def _remember(self, record: SessionRecord) -> None:
        bound = max(1, self.limits.max_worlds)
        _keep(self._records, record.id, record, bound)
        _keep(self._ids, record.token_digest, record.id, bound)

    async def _digest(self, session_id: str) -> str | None:
        if (record := self._records.get(session_id)) is not None:
            return record.token_digest
        return _text(
            await self._link.call(lambda c: c.redis.hget(key("session", session_id), "digest"))
        )

    async def _use(self, session_id: str, digest: str, want_record: bool) -> Any:
        answer = await self._link.script(
            "use",
            [*session_keys(session_id, digest), INDEX],
            [*self._now_idle(), session_id, self._ttl_ms(), "1" if want_record else "0"],
        )
        return None if answer == -1 else answer

    # -- sessions

    async def create(self, record: SessionRecord) -> None:
        now = self._clock()
        created = await self._link.script(
            "create",
            [key("session", record.id), key("token", record.token_digest), INDEX],
            [
                *self._now_idle(),
                record.id,
                orjson.dumps(record.to_json()),
                record.token_digest,
                repr(now - self.limits.idle_seconds),
                self.limits.max_sessions,
                self._ttl_ms(),
            ],
        )
        if not created:
            raise TooManySessions(record.id)
        self._remember(record)

    async def get(self, session_id: str) -> SessionState | None:
        async def read(c: Connection) -> list[Any]:
            pipe = c.redis.pipeline(transaction=True)
            pipe.hmget(key("session", session_id), "record", "lastUsedAt", "requests")
            pipe.hvals(key("fault-left", session_id))
            return await pipe.execute()

        (raw, last, requests), left = await self._link.call(read)
        if (last_used := self._live(last)) is None or raw is None:
            return None
        record = SessionRecord.from_json(orjson.loads(raw))
        return SessionState(record, last_used, int(requests or 0), sum(int(n) for n in left))

    async def find(self, token_digest: str) -> SessionRecord | None:
        session_id = self._ids.get(token_digest)
        if session_id is None:
            found = await self._link.call(lambda c: c.redis.get(key("token", token_digest)))
            if found is None:
                return None
            session_id = found.decode()
        known = self._records.get(session_id)
        answer = await self._use(session_id, token_digest, want_record=known is None)
        if answer is None:
            return None
        raw, order, bodies, left = answer
        record = known or SessionRecord.from_json(orjson.loads(raw))
        if record.token_digest != token_digest:
            return None
        self._remember(record)
        _SEEN_QUEUE.set((self, session_id, _queue_of(order, _pairs(bodies), _pairs(left))))
        return record

    async def touch(self, session_id: str) -> bool:
        digest = await self._digest(session_id)
        return digest is not None and await self._use(session_id, digest, False) is not None

    async def delete(self, session_id: str) -> bool:
        digest = await self._digest(session_id) or ""
        self._records.pop(session_id, None)
        deleted = await self._link.script(
            "delete", [*session_keys(session_id, digest), INDEX], [*self._now_idle(), session_id]
        )
        return bool(deleted)

    async def count(self) -> int:
        cutoff = repr(self._clock() - self.limits.idle_seconds)

        async def read(c: Connection) -> list[Any]:
            pipe = c.redis.pipeline(transaction=True)
            pipe.zremrangebyscore(INDEX, "-inf", cutoff)
            pipe.zcard(INDEX)
            return await pipe.execute()

        return int((await self._link.call(read))[1])

    # -- faults

    def _fault_keys(self, session_id: str) -> list[str]:
        return [key(kind, session_id) for kind in ("fault-order", "fault", "fault-left")]

    def _forget_seen_queue(self, session_id: str) -> None:
        """After this store changed the queue, this task's take_fault reads it again."""
        seen = _SEEN_QUEUE.get()
        if seen is not None and seen[0] is self and seen[1] == session_id:
            _SEEN_QUEUE.set(None)

    async def push_fault(self, session_id: str, fault: Fault) -> None:
        self._forget_seen_queue(session_id)
        pushed = await self._link.script(
            "push_fault",
            [key("session", session_id), *self._fault_keys(session_id)],
            [
                *self._now_idle(),
                fault.id,
                orjson.dumps(fault.to_json()),
                fault.remaining,
                self.limits.max_faults,
            ],
        )
        if pushed == -1:
            raise SessionNotFound(session_id)
        if not pushed:
            raise FaultQueueFull(session_id)

    async def _queue(self, session_id: str) -> list[Fault] | None:
        """The queue with each fault's remaining uses, read at one moment; None: no live session."""

        async def read(c: Connection) -> list[Any]:
            pipe = c.redis.pipeline(transaction=True)
            pipe.hget(key("session", session_id), "lastUsedAt")
            order, bodies, left = self._fault_keys(session_id)
            pipe.lrange(order, 0, -1)
            pipe.hgetall(bodies)
            pipe.hgetall(left)
            return await pipe.execute()

        last, order, bodies, left = await self._link.call(read)
        if self._live(last) is None:
            return None
        return _queue_of(order, bodies, left)

    async def faults(self, session_id: str) -> list[Fault]:
        queue = await self._queue(session_id)
        if queue is None:
            raise SessionNotFound(session_id)
        return queue

    async def take_fault(self, session_id: str, request: FaultRequest) -> Fault | None:
        # Which fault fits is decided here (Fault.fits, the one home of that rule); taking it is
        # atomic in Redis. A claim lost to another replica means that fault is used up: the queue
        # is read again, so each try that fails has seen a fault end, and the tries are bounded.
        # The first try reads the queue as this request's find() saw it, which costs no round
        # trip: the request is answered as if it had come before any fault queued since.
        seen, queue = _SEEN_QUEUE.get(), None
        if seen is not None and seen[0] is self and seen[1] == session_id:
            _SEEN_QUEUE.set(None)
            queue = seen[2]
        for _ in range(self.limits.max_faults + 1):
            if queue is None:
                queue = await self._queue(session_id)
            fitting = next((f for f in queue or () if f.remaining > 0 and f.fits(request)), None)
            if fitting is None:
                return None
            before = await self._link.script("claim", self._fault_keys(session_id), [fitting.id])
            if before:
                return replace(fitting, remaining=int(before))
            queue = None
        return None

    def may_have_faults(self, session_id: str) -> bool:
        # the queue as this request's find() read it, if it read this session's
        seen = _SEEN_QUEUE.get()
        return seen is None or seen[0] is not self or seen[1] != session_id or bool(seen[2])

    async def clear_faults(self, session_id: str) -> None:
        self._forget_seen_queue(session_id)
        cleared = await self._link.script(
            "clear",
            [key("session", session_id), *self._fault_keys(session_id)],
            [*self._now_idle(), ""],
        )
        if cleared == -1:
            raise SessionNotFound(session_id)

    # -- the journal

    async def append(self, session_id: str, entry: JournalEntry) -> None:
        page_known = entry.next_cursor is not None and entry.page is not None
        await self._link.script(
            "append",
            [key(kind, session_id) for kind in ("session", "journal", "pages", "page-order")],
            [
                *self._now_idle(),
                orjson.dumps(entry.to_json()),
                self.limits.max_journal,
                entry.next_cursor if page_known else "",
                (entry.page or 0) + 1,
                self.limits.max_cursor_pages,
            ],
        )

    async def journal(self, session_id: str) -> Journal:
        async def read(c: Connection) -> list[Any]:
            pipe = c.redis.pipeline(transaction=True)
            pipe.hmget(key("session", session_id), "lastUsedAt", "dropped")
            pipe.lrange(key("journal", session_id), 0, -1)
            return await pipe.execute()

        (last, dropped), entries = await self._link.call(read)
        if self._live(last) is None:
            raise SessionNotFound(session_id)
        return Journal(
            tuple(JournalEntry.from_json(orjson.loads(raw)) for raw in entries), int(dropped or 0)
        )

    async def clear_journal(self, session_id: str) -> None:
        cleared = await self._link.script(
            "clear",
            [key("session", session_id), key("journal", session_id)],
            [*self._now_idle(), "dropped"],
        )
        if cleared == -1:
            raise SessionNotFound(session_id)

    async def cursor_page(self, session_id: str, cursor: str) -> int | None:
        async def read(c: Connection) -> list[Any]:
            pipe = c.redis.pipeline(transaction=True)
            pipe.hget(key("session", session_id), "lastUsedAt")
            pipe.hget(key("pages", session_id), cursor)
            return await pipe.execute()

        last, page = await self._link.call(read)
        return None if self._live(last) is None or page is None else int(page)

    async def close(self) -> None:
        await self._link.close()

    async def ping(self) -> None:
        """Whether Redis answers now (StoreUnavailable if not)."""
        await self._link.ping()
