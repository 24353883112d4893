"""The Redis session store (`evalmock serve --store redis://...`): sessions, fault queues and
journals that every replica reads and writes, so a session created through one is served by all
(its keys and scripts: redis_scripts.py).

A session is live while `lastUsedAt` (the store's clock) is less than `idle_seconds` ago; each key
also expires in Redis that long after the session's last use, so what nobody uses leaves memory.
Every write is one Lua script, atomic across replicas: a fault serves exactly `times` requests in
all. Each call is bounded (OPERATION_TIMEOUT_S); a Redis that does not answer is StoreUnavailable,
and the next call tries again, so the store recovers when Redis is back.
"""

from __future__ import annotations

import asyncio
import math
import sys
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any, TypeVar

import orjson
from redis.asyncio import BlockingConnectionPool, Redis
from redis.asyncio.connection import SSLConnection
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.commands.core import AsyncScript
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError

from evalmock.server.sessions.limits import DEFAULT_LIMITS, SessionLimits
from evalmock.server.sessions.records import (
    Fault,
    FaultRequest,
    Journal,
    JournalEntry,
    SessionRecord,
    SessionState,
)
from evalmock.server.sessions.redis_scripts import INDEX, SCRIPTS, key, session_keys
from evalmock.server.sessions.store import (
    FaultQueueFull,
    SessionNotFound,
    StoreUnavailable,
    TooManySessions,
)
from evalmock.server.sessions.store_choice import RedisLocation

CONNECT_TIMEOUT_S = 0.5  # to open a connection
SOCKET_TIMEOUT_S = 0.5  # for one command's answer
POOL_WAIT_S = 0.5  # for a free connection when all POOL_SIZE are busy
POOL_SIZE = 32
# The whole of one store call, retry included: a request never waits longer on a Redis gone away.
OPERATION_TIMEOUT_S = 1.5

T = TypeVar("T")
V = TypeVar("V")


def _text(value: bytes | str | None) -> str | None:
    return value.decode() if isinstance(value, bytes) else value


def _keep(cache: OrderedDict[str, V], key: str, value: V, bound: int) -> None:
    """Keep `value` as the newest of `cache`, which holds at most `bound`."""
    cache[key] = value
    cache.move_to_end(key)
    while len(cache) > bound:
        cache.popitem(last=False)


class _Connection:
    """One event loop's client and scripts (redis-py's asyncio connections belong to the loop that
    opened them)."""

    def __init__(self, location: RedisLocation) -> None:
        self.loop = asyncio.get_running_loop()
        pool = BlockingConnectionPool(
            max_connections=POOL_SIZE,
            timeout=POOL_WAIT_S,
            host=location.host,
            port=location.port,
            db=location.db,
            username=location.username,
            password=location.password,
            socket_connect_timeout=CONNECT_TIMEOUT_S,
            socket_timeout=SOCKET_TIMEOUT_S,
            # Once, on a broken connection: a pooled one that Redis closed when it restarted.
            retry=Retry(NoBackoff(), 1, supported_errors=(RedisConnectionError,)),
            **({"connection_class": SSLConnection} if location.tls else {}),
        )
        self.redis = Redis(connection_pool=pool)
        self.scripts: dict[str, AsyncScript] = {
            name: self.redis.register_script(text) for name, text in SCRIPTS.items()
        }


class RedisStore:
    """The SessionStore protocol over Redis; `clock` gives seconds since the epoch."""

    def __init__(
        self,
        location: RedisLocation,
        limits: SessionLimits = DEFAULT_LIMITS,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.limits = limits
        self.location = location
        self._clock = clock
        self._connection: _Connection | None = None
        self._answering = True
        # A session's record never changes: each replica keeps the latest it used, so that a
        # request fetches no spec (its data may be megabytes) from Redis, only asks if it is live.
        self._records: OrderedDict[str, SessionRecord] = OrderedDict()
        self._ids: OrderedDict[str, str] = OrderedDict()  # token digest -> session id

    # -- plumbing

    def _connected(self) -> _Connection:
        connection = self._connection
        if connection is None or connection.loop is not asyncio.get_running_loop():
            connection = self._connection = _Connection(self.location)
        return connection

    async def _call(self, operation: Callable[[_Connection], Awaitable[T]]) -> T:
        """`operation` within OPERATION_TIMEOUT_S; Redis gone or failing is StoreUnavailable."""
        try:
            async with asyncio.timeout(OPERATION_TIMEOUT_S):
                answer = await operation(self._connected())
        except (RedisError, OSError, TimeoutError) as error:
            reason = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
            if self._answering:
                self._answering = False
                print(
                    f"evalmock: the session store {self.location.shown()} does not answer "
                    f"({reason}); session requests answer 503 until it does",
                    file=sys.stderr,
                    flush=True,
                )
            raise StoreUnavailable(
                f"the session store {self.location.shown()} does not answer ({reason})"
            ) from None
        if not self._answering:
            self._answering = True
            print(
                f"evalmock: the session store {self.location.shown()} answers again",
                file=sys.stderr,
                flush=True,
            )
        return answer

    async def _script(self, name: str, keys: list[str], args: list[Any]) -> Any:
        return await self._call(lambda c: c.scripts[name](keys=keys, args=args))

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
        return _text(await self._call(lambda c: c.redis.hget(key("session", session_id), "digest")))

    async def _use(self, session_id: str, digest: str, want_record: bool) -> Any:
        answer = await self._script(
            "use",
            [*session_keys(session_id, digest), INDEX],
            [*self._now_idle(), session_id, self._ttl_ms(), "1" if want_record else "0"],
        )
        return None if answer == -1 else answer

    # -- sessions

    async def create(self, record: SessionRecord) -> None:
        now = self._clock()
        created = await self._script(
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
        async def read(c: _Connection) -> list[Any]:
            pipe = c.redis.pipeline(transaction=True)
            pipe.hmget(key("session", session_id), "record", "lastUsedAt", "requests")
            pipe.hvals(key("fault-left", session_id))
            return await pipe.execute()

        (raw, last, requests), left = await self._call(read)
        if (last_used := self._live(last)) is None or raw is None:
            return None
        record = SessionRecord.from_json(orjson.loads(raw))
        return SessionState(record, last_used, int(requests or 0), sum(int(n) for n in left))

    async def find(self, token_digest: str) -> SessionRecord | None:
        session_id = self._ids.get(token_digest)
        if session_id is None:
            found = await self._call(lambda c: c.redis.get(key("token", token_digest)))
            if found is None:
                return None
            session_id = found.decode()
        known = self._records.get(session_id)
        answer = await self._use(session_id, token_digest, want_record=known is None)
        if answer is None:
            return None
        record = known or SessionRecord.from_json(orjson.loads(answer))
        if record.token_digest != token_digest:
            return None
        self._remember(record)
        return record

    async def touch(self, session_id: str) -> bool:
        digest = await self._digest(session_id)
        return digest is not None and await self._use(session_id, digest, False) is not None

    async def delete(self, session_id: str) -> bool:
        digest = await self._digest(session_id) or ""
        self._records.pop(session_id, None)
        deleted = await self._script(
            "delete", [*session_keys(session_id, digest), INDEX], [*self._now_idle(), session_id]
        )
        return bool(deleted)

    async def count(self) -> int:
        cutoff = repr(self._clock() - self.limits.idle_seconds)

        async def read(c: _Connection) -> list[Any]:
            pipe = c.redis.pipeline(transaction=True)
            pipe.zremrangebyscore(INDEX, "-inf", cutoff)
            pipe.zcard(INDEX)
            return await pipe.execute()

        return int((await self._call(read))[1])

    # -- faults

    def _fault_keys(self, session_id: str) -> list[str]:
        return [key(kind, session_id) for kind in ("fault-order", "fault", "fault-left")]

    async def push_fault(self, session_id: str, fault: Fault) -> None:
        pushed = await self._script(
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

        async def read(c: _Connection) -> list[Any]:
            pipe = c.redis.pipeline(transaction=True)
            pipe.hget(key("session", session_id), "lastUsedAt")
            order, bodies, left = self._fault_keys(session_id)
            pipe.lrange(order, 0, -1)
            pipe.hgetall(bodies)
            pipe.hgetall(left)
            return await pipe.execute()

        last, order, bodies, left = await self._call(read)
        if self._live(last) is None:
            return None
        return [
            replace(Fault.from_json(orjson.loads(bodies[fault_id])), remaining=int(left[fault_id]))
            for fault_id in order
            if fault_id in bodies and fault_id in left
        ]

    async def faults(self, session_id: str) -> list[Fault]:
        queue = await self._queue(session_id)
        if queue is None:
            raise SessionNotFound(session_id)
        return queue

    async def take_fault(self, session_id: str, request: FaultRequest) -> Fault | None:
        # Which fault fits is decided here (Fault.fits, the one home of that rule); taking it is
        # atomic in Redis. A claim lost to another replica means that fault is used up: the queue
        # is read again, so each try that fails has seen a fault end, and the tries are bounded.
        for _ in range(self.limits.max_faults + 1):
            queue = await self._queue(session_id)
            fitting = next((f for f in queue or () if f.remaining > 0 and f.fits(request)), None)
            if fitting is None:
                return None
            before = await self._script("claim", self._fault_keys(session_id), [fitting.id])
            if before:
                return replace(fitting, remaining=int(before))
        return None

    async def clear_faults(self, session_id: str) -> None:
        cleared = await self._script(
            "clear",
            [key("session", session_id), *self._fault_keys(session_id)],
            [*self._now_idle(), ""],
        )
        if cleared == -1:
            raise SessionNotFound(session_id)

    # -- the journal

    async def append(self, session_id: str, entry: JournalEntry) -> None:
        page_known = entry.next_cursor is not None and entry.page is not None
        await self._script(
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
        async def read(c: _Connection) -> list[Any]:
            pipe = c.redis.pipeline(transaction=True)
            pipe.hmget(key("session", session_id), "lastUsedAt", "dropped")
            pipe.lrange(key("journal", session_id), 0, -1)
            return await pipe.execute()

        (last, dropped), entries = await self._call(read)
        if self._live(last) is None:
            raise SessionNotFound(session_id)
        return Journal(
            tuple(JournalEntry.from_json(orjson.loads(raw)) for raw in entries), int(dropped or 0)
        )

    async def clear_journal(self, session_id: str) -> None:
        cleared = await self._script(
            "clear",
            [key("session", session_id), key("journal", session_id)],
            [*self._now_idle(), "dropped"],
        )
        if cleared == -1:
            raise SessionNotFound(session_id)

    async def cursor_page(self, session_id: str, cursor: str) -> int | None:
        async def read(c: _Connection) -> list[Any]:
            pipe = c.redis.pipeline(transaction=True)
            pipe.hget(key("session", session_id), "lastUsedAt")
            pipe.hget(key("pages", session_id), cursor)
            return await pipe.execute()

        last, page = await self._call(read)
        return None if self._live(last) is None or page is None else int(page)

    async def close(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None and connection.loop is asyncio.get_running_loop():
            await connection.redis.aclose()

    async def ping(self) -> None:
        """Whether Redis answers now (StoreUnavailable if not)."""
        await self._call(lambda c: c.redis.ping())
