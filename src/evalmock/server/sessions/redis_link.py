"""The Redis session store's link to Redis: one client per event loop with the store's scripts,
every call bounded in time, and Redis gone or failing as StoreUnavailable, said once on stderr (and
once again when Redis answers)."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from redis.asyncio import BlockingConnectionPool, Redis
from redis.asyncio.connection import SSLConnection
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.commands.core import AsyncScript
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError

from evalmock.server.sessions.redis_scripts import SCRIPTS
from evalmock.server.sessions.store import StoreUnavailable
from evalmock.server.sessions.store_choice import RedisLocation

POOL_SIZE = 32


@dataclass(frozen=True)
class RedisTimeouts:
    """How long the store waits on Redis, in seconds. The defaults are the server's: a request
    never waits longer on a Redis gone away. Tests on a loaded machine may give more."""

    connect: float = 0.5  # to open a connection
    socket: float = 0.5  # for one command's answer
    pool_wait: float = 0.5  # for a free connection when all POOL_SIZE are busy
    operation: float = 1.5  # the whole of one store call, retry included


DEFAULT_TIMEOUTS = RedisTimeouts()

T = TypeVar("T")


class Connection:
    """One event loop's client and scripts (redis-py's asyncio connections belong to the loop that
    opened them)."""

    def __init__(self, location: RedisLocation, timeouts: RedisTimeouts) -> None:
        self.loop = asyncio.get_running_loop()
        pool = BlockingConnectionPool(
            max_connections=POOL_SIZE,
            timeout=timeouts.pool_wait,
            host=location.host,
            port=location.port,
            db=location.db,
            username=location.username,
            password=location.password,
            socket_connect_timeout=timeouts.connect,
            socket_timeout=timeouts.socket,
            # Once, on a broken connection: a pooled one that Redis closed when it restarted.
            retry=Retry(NoBackoff(), 1, supported_errors=(RedisConnectionError,)),
            **({"connection_class": SSLConnection} if location.tls else {}),
        )
        self.redis = Redis(connection_pool=pool)
        self.scripts: dict[str, AsyncScript] = {
            name: self.redis.register_script(text) for name, text in SCRIPTS.items()
        }


class RedisLink:
    """Calls to the Redis at `location`, from whichever event loop makes them."""

    def __init__(self, location: RedisLocation, timeouts: RedisTimeouts = DEFAULT_TIMEOUTS) -> None:
        self.location = location
        self.timeouts = timeouts
        self._connection: Connection | None = None
        self._answering = True

    def _connected(self) -> Connection:
        connection = self._connection
        if connection is None or connection.loop is not asyncio.get_running_loop():
            connection = self._connection = Connection(self.location, self.timeouts)
        return connection

    async def call(self, operation: Callable[[Connection], Awaitable[T]]) -> T:
        """`operation` within the operation timeout; Redis gone or failing is StoreUnavailable."""
        try:
            async with asyncio.timeout(self.timeouts.operation):
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

    async def script(self, name: str, keys: list[str], args: list[Any]) -> Any:
        return await self.call(lambda c: c.scripts[name](keys=keys, args=args))

    async def close(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None and connection.loop is asyncio.get_running_loop():
            await connection.redis.aclose()

    async def ping(self) -> None:
        """Whether Redis answers now (StoreUnavailable if not)."""
        await self.call(lambda c: c.redis.ping())
