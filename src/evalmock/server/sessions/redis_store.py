"""The Redis session store (`evalmock serve --store redis://...`): sessions, fault queues and
journals that every replica reads and writes, so a session created through one is served by all.

Keys, for session S whose token has digest D (all under `evalmock:`):

| key | type | holds |
|---|---|---|
| `session:S` | hash | `record` (its JSON), `digest`, `lastUsedAt`, `requests`, `dropped` |
| `token:D` | string | S |
| `fault-order:S` | list | the queued faults' ids, in order |
| `fault:S` | hash | each fault's JSON by id (as queued) |
| `fault-left:S` | hash | each fault's remaining uses by id |
| `journal:S` | list | the entries' JSON, oldest first, at most `max_journal` (RPUSH, LTRIM) |
| `pages:S`, `page-order:S` | hash, list | the page each cursor leads to; the oldest go first |
| `sessions:live` | sorted set | every session's id, scored by its last use (the count, its bound) |

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
from evalmock.server.sessions.store import (
    FaultQueueFull,
    SessionNotFound,
    StoreUnavailable,
    TooManySessions,
)
from evalmock.server.sessions.store_choice import RedisLocation

PREFIX = "evalmock:"
CONNECT_TIMEOUT_S = 0.5  # to open a connection
SOCKET_TIMEOUT_S = 0.5  # for one command's answer
POOL_WAIT_S = 0.5  # for a free connection when all POOL_SIZE are busy
POOL_SIZE = 32
# The whole of one store call, retry included: a request never waits longer on a Redis gone away.
OPERATION_TIMEOUT_S = 1.5

T = TypeVar("T")
V = TypeVar("V")

# Every script that reads a session first asks whether it is live by the store's clock.
_LIVE = """
local last = redis.call('HGET', KEYS[1], 'lastUsedAt')
if not last or tonumber(ARGV[1]) - tonumber(last) >= tonumber(ARGV[2]) then return -1 end
"""

# KEYS: session, token, index; ARGV: now, idle, id, record, digest, cutoff, max_sessions, ttl_ms
_CREATE = """
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', ARGV[6])
if redis.call('ZCARD', KEYS[3]) >= tonumber(ARGV[7]) then return 0 end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'record', ARGV[4], 'digest', ARGV[5], 'lastUsedAt', ARGV[1],
    'requests', 0, 'dropped', 0)
redis.call('PEXPIRE', KEYS[1], ARGV[8])
redis.call('SET', KEYS[2], ARGV[3], 'PX', ARGV[8])
redis.call('ZADD', KEYS[3], ARGV[1], ARGV[3])
return 1
"""

# KEYS: the session's 8 keys (session first, token second), index; ARGV: now, idle, id, ttl_ms,
# whether to answer the record
_USE = (
    _LIVE
    + """
redis.call('HSET', KEYS[1], 'lastUsedAt', ARGV[1])
for i = 1, 8 do redis.call('PEXPIRE', KEYS[i], ARGV[4]) end
redis.call('ZADD', KEYS[9], ARGV[1], ARGV[3])
if ARGV[5] == '1' then return redis.call('HGET', KEYS[1], 'record') end
return 1
"""
)

# KEYS: the session's 8 keys, index; ARGV: now, idle, id
_DELETE = """
local last = redis.call('HGET', KEYS[1], 'lastUsedAt')
local live = last and tonumber(ARGV[1]) - tonumber(last) < tonumber(ARGV[2])
redis.call('DEL', unpack(KEYS, 1, 8))
redis.call('ZREM', KEYS[9], ARGV[3])
if live then return 1 end
return 0
"""

# KEYS: session, fault-order, fault, fault-left; ARGV: now, idle, fault id, JSON, remaining, max
_PUSH_FAULT = (
    _LIVE
    + """
if redis.call('LLEN', KEYS[2]) >= tonumber(ARGV[6]) then return 0 end
local ttl = redis.call('PTTL', KEYS[1])
redis.call('RPUSH', KEYS[2], ARGV[3])
redis.call('HSET', KEYS[3], ARGV[3], ARGV[4])
redis.call('HSET', KEYS[4], ARGV[3], ARGV[5])
if ttl > 0 then for i = 2, 4 do redis.call('PEXPIRE', KEYS[i], ttl) end end
return 1
"""
)

# KEYS: fault-order, fault, fault-left; ARGV: fault id. One use of the fault if it has one left
# (its remaining uses before this one), else 0: another replica took the last.
_CLAIM = """
local left = tonumber(redis.call('HGET', KEYS[3], ARGV[1]) or '0')
if left <= 0 then return 0 end
left = redis.call('HINCRBY', KEYS[3], ARGV[1], -1)
if left <= 0 then
    redis.call('LREM', KEYS[1], 1, ARGV[1])
    redis.call('HDEL', KEYS[2], ARGV[1])
    redis.call('HDEL', KEYS[3], ARGV[1])
end
return left + 1
"""

# KEYS: session, then the keys to delete; ARGV: now, idle, then the session field to zero (or '')
_CLEAR = (
    _LIVE
    + """
redis.call('DEL', unpack(KEYS, 2))
if ARGV[3] ~= '' then redis.call('HSET', KEYS[1], ARGV[3], 0) end
return 1
"""
)

# KEYS: session, journal, pages, page-order; ARGV: now, idle, entry, max_journal, cursor (or ''),
# its page, max_cursor_pages
_APPEND = (
    _LIVE
    + """
local ttl = redis.call('PTTL', KEYS[1])
local length = redis.call('RPUSH', KEYS[2], ARGV[3])
local bound = tonumber(ARGV[4])
if length > bound then
    redis.call('LTRIM', KEYS[2], length - bound, -1)
    redis.call('HINCRBY', KEYS[1], 'dropped', length - bound)
end
redis.call('HINCRBY', KEYS[1], 'requests', 1)
if ttl > 0 then redis.call('PEXPIRE', KEYS[2], ttl) end
if ARGV[5] ~= '' then
    if redis.call('HSET', KEYS[3], ARGV[5], ARGV[6]) == 1 then
        if redis.call('RPUSH', KEYS[4], ARGV[5]) > tonumber(ARGV[7]) then
            redis.call('HDEL', KEYS[3], redis.call('LPOP', KEYS[4]))
        end
    end
    if ttl > 0 then
        redis.call('PEXPIRE', KEYS[3], ttl)
        redis.call('PEXPIRE', KEYS[4], ttl)
    end
end
return 1
"""
)

_SCRIPTS = {
    "create": _CREATE,
    "use": _USE,
    "delete": _DELETE,
    "push_fault": _PUSH_FAULT,
    "claim": _CLAIM,
    "clear": _CLEAR,
    "append": _APPEND,
}


def _key(kind: str, name: str) -> str:
    return f"{PREFIX}{kind}:{name}"


def _session_keys(session_id: str, digest: str) -> list[str]:
    """Every key of a session, the session's hash first and its token second."""
    return [
        _key("session", session_id),
        _key("token", digest),
        *(
            _key(kind, session_id)
            for kind in ("fault-order", "fault", "fault-left", "journal", "pages", "page-order")
        ),
    ]


INDEX = _key("sessions", "live")


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
            name: self.redis.register_script(text) for name, text in _SCRIPTS.items()
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
        return _text(
            await self._call(lambda c: c.redis.hget(_key("session", session_id), "digest"))
        )

    async def _use(self, session_id: str, digest: str, want_record: bool) -> Any:
        answer = await self._script(
            "use",
            [*_session_keys(session_id, digest), INDEX],
            [*self._now_idle(), session_id, self._ttl_ms(), "1" if want_record else "0"],
        )
        return None if answer == -1 else answer

    # -- sessions

    async def create(self, record: SessionRecord) -> None:
        now = self._clock()
        created = await self._script(
            "create",
            [_key("session", record.id), _key("token", record.token_digest), INDEX],
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
            pipe.hmget(_key("session", session_id), "record", "lastUsedAt", "requests")
            pipe.hvals(_key("fault-left", session_id))
            return await pipe.execute()

        (raw, last, requests), left = await self._call(read)
        if (last_used := self._live(last)) is None or raw is None:
            return None
        record = SessionRecord.from_json(orjson.loads(raw))
        return SessionState(record, last_used, int(requests or 0), sum(int(n) for n in left))

    async def find(self, token_digest: str) -> SessionRecord | None:
        session_id = self._ids.get(token_digest)
        if session_id is None:
            found = await self._call(lambda c: c.redis.get(_key("token", token_digest)))
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
            "delete", [*_session_keys(session_id, digest), INDEX], [*self._now_idle(), session_id]
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
        return [_key(kind, session_id) for kind in ("fault-order", "fault", "fault-left")]

    async def push_fault(self, session_id: str, fault: Fault) -> None:
        pushed = await self._script(
            "push_fault",
            [_key("session", session_id), *self._fault_keys(session_id)],
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
            pipe.hget(_key("session", session_id), "lastUsedAt")
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
            [_key("session", session_id), *self._fault_keys(session_id)],
            [*self._now_idle(), ""],
        )
        if cleared == -1:
            raise SessionNotFound(session_id)

    # -- the journal

    async def append(self, session_id: str, entry: JournalEntry) -> None:
        page_known = entry.next_cursor is not None and entry.page is not None
        await self._script(
            "append",
            [_key(kind, session_id) for kind in ("session", "journal", "pages", "page-order")],
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
            pipe.hmget(_key("session", session_id), "lastUsedAt", "dropped")
            pipe.lrange(_key("journal", session_id), 0, -1)
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
            [_key("session", session_id), _key("journal", session_id)],
            [*self._now_idle(), "dropped"],
        )
        if cleared == -1:
            raise SessionNotFound(session_id)

    async def cursor_page(self, session_id: str, cursor: str) -> int | None:
        async def read(c: _Connection) -> list[Any]:
            pipe = c.redis.pipeline(transaction=True)
            pipe.hget(_key("session", session_id), "lastUsedAt")
            pipe.hget(_key("pages", session_id), cursor)
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
