"""Which session store `evalmock serve --store` names: `memory` (one process) or a Redis URL,
validated, shown without its password, and opened.

Accepted forms (anything else is refused, naming the part that is wrong, never the password):

- `memory`: the in-process store, the default;
- `redis://[[USER]:PASSWORD@]HOST[:PORT][/DB]`: Redis, PORT 6379 and DB 0 when left out;
- `rediss://...`: the same over TLS.

A query string is refused: redis-py would read timeouts from it, and the store's are fixed
(`RedisTimeouts`, redis_link.py) so that a request never waits long on a Redis that has gone away.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import SplitResult, unquote, urlsplit

from evalmock.defaults import DEFAULT_STORE, REDIS_STORE_FORM
from evalmock.server.sessions.limits import DEFAULT_LIMITS, SessionLimits
from evalmock.server.sessions.memory import MemoryStore
from evalmock.server.sessions.store import SessionStore

MEMORY = DEFAULT_STORE
SCHEMES = ("redis", "rediss")
DEFAULT_REDIS_PORT = 6379
MAX_URL_CHARS = 2048
MAX_DB = 2**31 - 1  # Redis takes `databases` up to this
FORMS = f"`{MEMORY}` or {REDIS_STORE_FORM}"


class StoreURLError(ValueError):
    """`--store` names no store evalmock can use; the message never holds a password."""


@dataclass(frozen=True)
class RedisLocation:
    """Where a Redis store is: each part of its URL, decoded."""

    host: str
    port: int = DEFAULT_REDIS_PORT
    db: int = 0
    username: str | None = None
    password: str | None = None
    tls: bool = False

    def shown(self) -> str:
        """The URL for a banner or a log: the password, when there is one, as `***`."""
        user = self.username or ""
        secret = ":***" if self.password is not None else ""
        userinfo = f"{user}{secret}@" if user or secret else ""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{'rediss' if self.tls else 'redis'}://{userinfo}{host}:{self.port}/{self.db}"


def _refuse(reason: str) -> StoreURLError:
    return StoreURLError(f"--store takes {FORMS}: {reason}")


def _port(parts: SplitResult) -> int:
    try:
        port = parts.port
    except ValueError:
        raise _refuse("its port is not a number from 1 to 65535") from None
    if port == 0:
        raise _refuse("its port is not a number from 1 to 65535")
    return DEFAULT_REDIS_PORT if port is None else port


def _db(path: str) -> int:
    number = path.removeprefix("/")
    if not number:
        return 0
    if not (number.isascii() and number.isdigit()) or int(number) > MAX_DB:
        raise _refuse(f"its path is /DB, a database number from 0 to {MAX_DB}")
    return int(number)


def parse_store(text: str) -> RedisLocation | None:
    """The Redis `text` names, or None for the in-process store (StoreURLError when neither)."""
    if text == MEMORY:
        return None
    if len(text) > MAX_URL_CHARS:
        raise _refuse(f"it is longer than {MAX_URL_CHARS} characters")
    if not text.isprintable() or any(char.isspace() for char in text):
        raise _refuse("it holds a space or a control character")
    scheme, separator, _ = text.partition("://")
    if not separator:
        raise _refuse("it is neither `memory` nor a URL")
    if scheme.lower() not in SCHEMES:
        raise _refuse(f"its scheme is {scheme!r}, not redis or rediss")
    parts = urlsplit(text)
    if parts.query or parts.fragment or "?" in text or "#" in text:
        raise _refuse("it takes no query string or fragment (the store's timeouts are fixed)")
    if not parts.hostname:
        raise _refuse("it names no host")
    return RedisLocation(
        host=parts.hostname,
        port=_port(parts),
        db=_db(parts.path),
        username=unquote(parts.username) if parts.username else None,
        password=unquote(parts.password) if parts.password else None,
        tls=scheme.lower() == "rediss",
    )


def shown(text: str) -> str:
    """`--store`'s value for a banner: `memory`, or the URL without its password."""
    location = parse_store(text)
    return MEMORY if location is None else location.shown()


def open_store(
    text: str, limits: SessionLimits = DEFAULT_LIMITS, clock: Callable[[], float] = time.time
) -> SessionStore:
    """The store `text` names, not yet connected (a Redis store connects on first use)."""
    location = parse_store(text)
    if location is None:
        return MemoryStore(limits, clock)
    # Imported only here: a mock with the in-process store never loads redis-py.
    from evalmock.server.sessions.redis_store import RedisStore

    return RedisStore(location, limits, clock)


def check_store(location: RedisLocation) -> bool:
    """Ask Redis once, at start: whether it answers. When it does not, the store says so on stderr
    (the mock serves anyway: the default world needs no store, and sessions answer once it does)."""
    from evalmock.server.sessions.redis_store import RedisStore
    from evalmock.server.sessions.store import StoreUnavailable

    store = RedisStore(location)

    async def ping() -> bool:
        try:
            await store.ping()
        except StoreUnavailable:
            return False
        finally:
            await store.close()
        return True

    return asyncio.run(ping())
