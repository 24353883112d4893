"""The Redis session store on a real redis-server: the store contract every store keeps (run here
on Redis), then what only a shared store must do: two replicas see one session, a fault serves
exactly its `times` however many replicas race for it, the journal's bound and the idle expiry hold
in Redis itself, no token is kept, and a Redis gone is StoreUnavailable until it is back."""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import time
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import redis

from evalmock.server.sessions import (
    SessionLimits,
    SessionNotFound,
    SessionSpec,
    SessionStore,
    StoreUnavailable,
)
from evalmock.server.sessions.redis_link import DEFAULT_TIMEOUTS, RedisTimeouts
from evalmock.server.sessions.redis_store import RedisStore
from evalmock.server.sessions.store_choice import parse_store
from evalmock.server.sessions.tokens import token_digest
from redis_server import RedisServer, needs_redis, running_redis

from . import test_session_store as contract
from .helpers import FrozenClock
from .test_session_store import LIST, entry, fault, record, run

pytestmark = needs_redis

# The store contract (test_session_store.py), every test of it run here with `make` building a
# Redis store: a test there that a Redis store fails fails here.
CONTRACT = [
    name
    for name, value in vars(contract).items()
    if name.startswith("test_") and "make" in inspect.signature(value).parameters
]
globals().update({f"{name}_on_redis": vars(contract)[name] for name in CONTRACT})


@pytest.fixture(scope="module")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    with running_redis(tmp_path_factory.mktemp("redis")) as server:
        yield server


@pytest.fixture
def server(redis_server: RedisServer) -> Iterator[RedisServer]:
    """The module's redis-server, empty, and running again after a test that stopped it."""
    redis_server.flush()
    yield redis_server
    # running again for the next test, whatever this one did to it
    if redis_server.process is None:
        redis_server.start()
    else:
        redis_server.resume()


# For a test whose calls crowd a loaded machine: waits far past the server's, so that only a Redis
# that does not answer at all fails it.
PATIENT = RedisTimeouts(connect=10, socket=10, pool_wait=10, operation=30)


def redis_store(
    server: RedisServer,
    clock: Callable[[], float] = time.time,
    timeouts: RedisTimeouts = DEFAULT_TIMEOUTS,
    **limits: Any,
) -> RedisStore:
    location = parse_store(server.url)
    assert location is not None
    return RedisStore(location, SessionLimits(**limits), clock, timeouts)


@pytest.fixture
def make(server: RedisServer) -> Callable[..., tuple[SessionStore, FrozenClock]]:
    def build(**limits: Any) -> tuple[SessionStore, FrozenClock]:
        clock = FrozenClock()
        return redis_store(server, clock, **limits), clock

    return build


def raw(server: RedisServer) -> redis.Redis:
    return redis.Redis(port=server.port, socket_timeout=2)


def test_the_whole_store_contract_runs_on_redis():
    assert len(CONTRACT) >= 10
    assert all(f"{name}_on_redis" in globals() for name in CONTRACT)


def everything(keys: redis.Redis) -> bytes:
    """Every key and every value in Redis, as bytes to search."""
    found = []
    for name in keys.scan_iter("*"):
        kind = keys.type(name)
        if kind == b"string":
            found += [name, keys.get(name)]
        elif kind == b"hash":
            found += [name, *(b for pair in keys.hgetall(name).items() for b in pair)]
        elif kind == b"list":
            found += [name, *keys.lrange(name, 0, -1)]
        else:
            assert kind == b"zset", kind
            found += [name, *keys.zrange(name, 0, -1)]
    return b"\n".join(found)


def test_a_session_created_through_one_replica_is_served_by_another(server):
    one, two = redis_store(server), redis_store(server)
    session, token = record(SessionSpec(seed=9, data={"cases": []}))

    async def walk() -> None:
        await one.create(session)
        assert await two.find(token_digest(token)) == session
        await two.push_fault(session.id, fault(1, status=503, retry_after=3))
        taken = await one.take_fault(session.id, LIST)
        assert taken is not None and (taken.id, taken.retry_after) == ("f1", 3)
        await one.append(session.id, entry(page=1, next_cursor="c1"))
        assert [e.next_cursor for e in (await two.journal(session.id)).entries] == ["c1"]
        assert await two.cursor_page(session.id, "c1") == 2
        assert await two.delete(session.id)
        assert await one.find(token_digest(token)) is None

    run(walk())


def test_a_fault_serves_exactly_its_times_when_replicas_race_for_it(server):
    # 30 calls at once: under load one may wait past the server's 0.5 s for its answer
    replicas = [redis_store(server, timeouts=PATIENT) for _ in range(3)]
    session, _ = record()

    async def race() -> list[str | None]:
        await replicas[0].create(session)
        await replicas[0].push_fault(session.id, fault(1, times=7, status=503))
        await replicas[1].push_fault(session.id, fault(2, times=3, status=401))
        takers = [replicas[n % 3].take_fault(session.id, LIST) for n in range(30)]
        return [getattr(taken, "id", None) for taken in await asyncio.gather(*takers)]

    taken = run(race())
    assert Counter(taken) == {"f1": 7, "f2": 3, None: 20}


def test_faults_are_taken_in_order_across_replicas(server):
    one, two = redis_store(server), redis_store(server)
    session, _ = record()

    async def walk() -> list[tuple[str, int] | None]:
        await one.create(session)
        await one.push_fault(session.id, fault(1, times=2))
        await two.push_fault(session.id, fault(2))
        taken = [await store.take_fault(session.id, LIST) for store in (two, one, two, one)]
        return [(f.id, f.remaining) if f else None for f in taken]

    assert run(walk()) == [("f1", 2), ("f1", 1), ("f2", 1), None]


def test_the_journal_is_bounded_in_redis_itself(server):
    store = redis_store(server, max_journal=5, max_cursor_pages=3)
    session, _ = record()

    async def walk() -> None:
        await store.create(session)
        for number in range(12):
            await store.append(session.id, entry(page=number + 1, next_cursor=f"c{number}"))

    run(walk())
    keys = raw(server)
    assert keys.llen(f"evalmock:journal:{session.id}") == 5
    assert keys.hget(f"evalmock:session:{session.id}", "dropped") == b"7"
    assert sorted(keys.hkeys(f"evalmock:pages:{session.id}")) == [b"c10", b"c11", b"c9"]
    assert keys.llen(f"evalmock:page-order:{session.id}") == 3


def test_every_key_of_a_session_expires_in_redis_after_the_idle_time(server):
    store = redis_store(server, idle_seconds=30)
    session, _ = record()

    async def walk() -> None:
        await store.create(session)
        await store.push_fault(session.id, fault(1))
        await store.append(session.id, entry(page=1, next_cursor="c1"))

    run(walk())
    keys = raw(server)
    names = [name for name in keys.scan_iter("evalmock:*") if b"sessions:" not in name]
    assert len(names) == 8  # session, token, 3 of faults, journal, 2 of pages
    assert all(0 < keys.pttl(name) <= 30_000 for name in names)


def test_an_idle_session_leaves_redis_and_a_used_one_stays(server):
    # an idle time far longer than the gaps between uses, so that a loaded machine's late wake-ups
    # cannot end the session that is used
    store = redis_store(server, idle_seconds=2.0)
    kept, kept_token = record()
    idle, _ = record()

    async def walk() -> None:
        await store.create(kept)
        await store.create(idle)
        ends = time.monotonic() + 2.5  # past the idle time; kept used about every 0.25 s
        while time.monotonic() < ends:
            await asyncio.sleep(0.25)
            assert await store.find(token_digest(kept_token)) is not None
        assert await store.get(idle.id) is None
        assert await store.get(kept.id) is not None

    run(walk())
    assert raw(server).exists(f"evalmock:session:{idle.id}") == 0
    assert raw(server).exists(f"evalmock:session:{kept.id}") == 1


def test_redis_never_holds_a_session_token(server):
    store = redis_store(server)
    session, token = record()

    async def walk() -> None:
        await store.create(session)
        await store.append(session.id, entry())

    run(walk())
    dump = everything(raw(server))
    assert session.token_digest.encode() in dump and token.encode() not in dump


@pytest.mark.parametrize("gone", ["killed", "paused"])
def test_a_redis_gone_is_store_unavailable_within_the_bound_then_the_store_recovers(server, gone):
    store = redis_store(server)
    session, token = record()

    async def before() -> None:
        await store.create(session)

    async def while_gone() -> list[float]:
        waited = []
        for call in (
            lambda: store.find(token_digest(token)),
            lambda: store.take_fault(session.id, LIST),
            lambda: store.append(session.id, entry()),
            lambda: store.create(record()[0]),
            store.count,
        ):
            started = time.monotonic()
            with pytest.raises(StoreUnavailable) as raised:
                await call()
            waited.append(time.monotonic() - started)
            assert str(server.port) in str(raised.value)
        return waited

    async def after() -> bool:
        again, _ = record()
        await store.create(again)
        return await store.find(token_digest(token)) is not None

    run(before())
    server.kill() if gone == "killed" else server.pause()
    # a bound, not a speed target: a request must not wait on a Redis that does not answer
    assert max(run(while_gone())) < DEFAULT_TIMEOUTS.operation + 1.0
    if gone == "killed":
        server.start()  # empty: nothing was saved, so the session is gone with the old Redis
        assert run(after()) is False
    else:
        server.resume()  # the same Redis: the session is there again
        assert run(after()) is True


def test_a_store_given_longer_timeouts_waits_that_long_for_a_redis_that_does_not_answer(server):
    # each wait twice the server's longest, so a store keeping the server's gives up well before
    longest = max(dataclasses.astuple(DEFAULT_TIMEOUTS))
    longer = RedisTimeouts(*(2 * longest for _ in dataclasses.fields(RedisTimeouts)))
    store = redis_store(server, timeouts=longer)
    run(store.count())  # connected before Redis stops answering

    async def waited() -> float:
        started = time.monotonic()
        with pytest.raises(StoreUnavailable):
            await store.count()
        return time.monotonic() - started

    server.pause()
    try:
        # a lower bound: a loaded machine only makes the wait longer
        assert run(waited()) >= longer.operation - 0.1
    finally:
        server.resume()
    assert run(store.count()) == 0


def test_a_store_recovers_within_one_event_loop_after_redis_restarts(server):
    store = redis_store(server)

    async def walk() -> None:
        await store.create(record()[0])  # a pooled connection, which the restart breaks
        server.kill()
        with pytest.raises(StoreUnavailable):
            await store.count()
        await asyncio.to_thread(server.start)
        await store.create(record()[0])
        assert await store.count() == 1

    run(walk())


def test_redis_failing_says_so_once_and_again_once_it_answers(server, capsys):
    store = redis_store(server)

    async def walk() -> None:
        await store.count()
        server.kill()
        for _ in range(3):
            with pytest.raises(StoreUnavailable):
                await store.count()
        await asyncio.to_thread(server.start)
        await store.count()
        await store.count()

    run(walk())
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 2, lines
    assert "does not answer" in lines[0] and "answers again" in lines[1]


def test_a_wrong_password_is_store_unavailable_and_the_password_is_never_said(tmp_path):
    with running_redis(tmp_path, password="right-one") as secured:
        location = parse_store(f"redis://:wrong-one@127.0.0.1:{secured.port}/0")
        assert location is not None
        store = RedisStore(location)
        with pytest.raises(StoreUnavailable) as raised:
            run(store.count())
        assert "wrong-one" not in str(raised.value) and ":***@" in str(raised.value)
        good = parse_store(f"redis://:right-one@127.0.0.1:{secured.port}/0")
        assert good is not None
        assert run(RedisStore(good).count()) == 0


def test_an_unknown_session_is_not_found_on_redis_too(server):
    store = redis_store(server)

    async def walk() -> None:
        for call in (store.faults, store.journal, store.clear_faults, store.clear_journal):
            with pytest.raises(SessionNotFound):
                await call("ses_unknown")
        assert await store.take_fault("ses_unknown", LIST) is None
        await store.append("ses_unknown", entry())  # ignored, and nothing left in Redis
        assert await store.cursor_page("ses_unknown", "c") is None

    run(walk())
    assert list(raw(server).scan_iter("evalmock:*ses_unknown*")) == []


def commands(keys: redis.Redis) -> dict[str, int]:
    """How many times Redis ran each command since its stats were reset."""
    return {
        name.removeprefix("cmdstat_"): stats["calls"]
        for name, stats in keys.info("commandstats").items()
    }


def test_a_session_request_with_no_fault_queued_costs_two_redis_calls(server):
    """find (one script, which also reads the fault queue), take_fault (nothing more to ask), and
    append (one script): a session's request without faults asks Redis twice."""
    store = redis_store(server)
    session, token = record()
    keys = raw(server)

    async def request() -> None:
        assert await store.find(token_digest(token)) is not None
        assert await store.take_fault(session.id, LIST) is None
        await store.append(session.id, entry())

    async def walk() -> None:
        await store.create(session)
        await request()  # loads the scripts
        keys.config_resetstat()
        await request()

    run(walk())
    ran = commands(keys)  # a script's own commands count too, but no other call was made
    assert ran["evalsha"] == 2 and not {"multi", "exec", "get"} & ran.keys(), ran


def test_the_fault_queue_find_saw_serves_that_request_and_the_next_sees_later_faults(server):
    one, two = redis_store(server), redis_store(server)
    session, token = record()

    async def walk() -> list[str | None]:
        await one.create(session)
        taken: list[str | None] = []
        assert await one.find(token_digest(token)) is not None
        await two.push_fault(session.id, fault(1))  # another replica, after this request came
        taken.append(getattr(await one.take_fault(session.id, LIST), "id", None))
        assert await one.find(token_digest(token)) is not None  # the next request
        taken.append(getattr(await one.take_fault(session.id, LIST), "id", None))
        assert await one.find(token_digest(token)) is not None
        await one.push_fault(session.id, fault(2))  # through this replica, in this task
        taken.append(getattr(await one.take_fault(session.id, LIST), "id", None))
        return taken

    assert run(walk()) == [None, "f1", "f2"]


def test_a_fault_a_request_saw_that_another_took_meanwhile_is_not_served_twice(server):
    one, two = redis_store(server), redis_store(server)
    session, token = record()

    async def walk() -> list[str | None]:
        await one.create(session)
        await one.push_fault(session.id, fault(1))
        await one.push_fault(session.id, fault(2))
        assert await one.find(token_digest(token)) is not None  # saw f1 and f2
        first = await two.take_fault(session.id, LIST)  # another replica's request takes f1
        second = await one.take_fault(session.id, LIST)  # this one's claim of f1 fails: f2
        return [getattr(first, "id", None), getattr(second, "id", None)]

    assert run(walk()) == ["f1", "f2"]
