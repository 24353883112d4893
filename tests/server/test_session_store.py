"""The session store's contract, proved on every store: `STORES` lists each store's factory (a
store built over given limits and a clock), and every test runs on each."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Coroutine
from typing import Any

import pytest

from evalmock.server.sessions import (
    Fault,
    FaultQueueFull,
    FaultRequest,
    JournalEntry,
    MemoryStore,
    SessionLimits,
    SessionNotFound,
    SessionRecord,
    SessionSpec,
    SessionStore,
    TooManySessions,
)
from evalmock.server.sessions.tokens import new_session_id, new_token, token_digest

from .helpers import FrozenClock

StoreFactory = Callable[[SessionLimits, Callable[[], float]], SessionStore]
STORES: dict[str, StoreFactory] = {"memory": lambda limits, clock: MemoryStore(limits, clock)}


def run(coroutine: Coroutine[Any, Any, Any]) -> Any:
    return asyncio.run(coroutine)


@pytest.fixture(params=sorted(STORES))
def make(request: pytest.FixtureRequest) -> Callable[..., tuple[SessionStore, FrozenClock]]:
    def build(**limits: Any) -> tuple[SessionStore, FrozenClock]:
        clock = FrozenClock()
        return STORES[request.param](SessionLimits(**limits), clock), clock

    return build


def record(spec: SessionSpec | None = None) -> tuple[SessionRecord, str]:
    token = new_token()
    return SessionRecord(new_session_id(), token_digest(token), spec or SessionSpec(), 0.0), token


def entry(status: int = 200, **fields: Any) -> JournalEntry:
    values: dict[str, Any] = {
        "at": 1_800_000_000.0,
        "api": "test-set",
        "method": "GET",
        "path": "/v1/agents/a/test-set/cases",
        "query": (("projectId", "p"),),
        "status": status,
        "authorized": True,
    }
    return JournalEntry(**{**values, **fields})


def fault(number: int, times: int = 1, **fields: Any) -> Fault:
    return Fault(id=f"f{number}", api="test-set", times=times, remaining=times, **fields)


LIST = FaultRequest("test-set", (("projectId", "p"),), page=1)


def test_a_session_is_found_by_its_token_and_by_its_id(make):
    store, _ = make()
    session, token = record(SessionSpec(seed=7))

    async def walk() -> None:
        await store.create(session)
        assert await store.find(token_digest(token)) == session
        assert await store.find(token_digest(new_token())) is None
        state = await store.get(session.id)
        assert state is not None and state.record.spec.seed == 7
        assert await store.count() == 1

    run(walk())


def test_a_deleted_session_is_gone_by_token_and_id(make):
    store, _ = make()
    session, token = record()

    async def walk() -> None:
        await store.create(session)
        assert await store.delete(session.id)
        assert await store.find(token_digest(token)) is None
        assert await store.get(session.id) is None
        assert not await store.delete(session.id)
        with pytest.raises(SessionNotFound):
            await store.journal(session.id)
        with pytest.raises(SessionNotFound):
            await store.push_fault(session.id, fault(1))

    run(walk())


def test_a_session_idle_past_its_time_ends_and_a_use_keeps_it(make):
    store, clock = make(idle_seconds=60)
    kept, kept_token = record()
    idle, idle_token = record()

    async def walk() -> None:
        await store.create(kept)
        await store.create(idle)
        clock.advance(50)
        assert await store.find(token_digest(kept_token)) is not None
        clock.advance(20)  # kept was used 20 s ago, idle 70 s ago
        assert await store.find(token_digest(idle_token)) is None
        assert await store.get(idle.id) is None
        assert await store.touch(kept.id)
        assert await store.count() == 1

    run(walk())


def test_no_more_sessions_than_the_bound_but_an_expired_one_makes_room(make):
    store, clock = make(max_sessions=2, idle_seconds=60)

    async def walk() -> None:
        await store.create(record()[0])
        await store.create(record()[0])
        with pytest.raises(TooManySessions):
            await store.create(record()[0])
        clock.advance(61)
        await store.create(record()[0])
        assert await store.count() == 1

    run(walk())


def test_faults_are_used_up_in_order_each_its_times(make):
    store, _ = make()
    session, _ = record()

    async def walk() -> list[str | None]:
        await store.create(session)
        await store.push_fault(session.id, fault(1, times=2, status=503))
        await store.push_fault(session.id, fault(2, status=401))
        taken = [await store.take_fault(session.id, LIST) for _ in range(4)]
        return [f.id if f else None for f in taken]

    assert run(walk()) == ["f1", "f1", "f2", None]


def test_a_taken_fault_shows_its_uses_left_in_the_queue(make):
    store, _ = make()
    session, _ = record()

    async def walk() -> None:
        await store.create(session)
        await store.push_fault(session.id, fault(1, times=3))
        await store.take_fault(session.id, LIST)
        [queued] = await store.faults(session.id)
        assert (queued.times, queued.remaining) == (3, 2)
        state = await store.get(session.id)
        assert state is not None and state.faults_queued == 2

    run(walk())


def test_a_request_is_spared_take_fault_only_while_its_sessions_queue_is_empty(make):
    store, _ = make()
    session, token = record()

    async def walk() -> list[bool]:
        await store.create(session)
        seen = []
        for change in (None, fault(1), "take"):
            if isinstance(change, Fault):
                await store.push_fault(session.id, change)
            elif change == "take":
                await store.take_fault(session.id, LIST)
            assert await store.find(token_digest(token)) == session  # the next request
            seen.append(store.may_have_faults(session.id))
        return seen

    assert run(walk()) == [False, True, False]


def test_a_fault_answers_only_the_requests_its_match_fits(make):
    store, _ = make()
    session, _ = record()
    second_page = FaultRequest("test-set", (("projectId", "p"), ("cursor", "c1")), page=2)

    async def walk() -> list[str | None]:
        await store.create(session)
        await store.push_fault(session.id, fault(1, match_page=2))
        await store.push_fault(session.id, fault(2, match_query=(("cursor", "*"),)))
        await store.push_fault(session.id, fault(3, match_query=(("projectId", "q"),)))
        gradient = FaultRequest("gradient", ())
        return [
            getattr(await store.take_fault(session.id, request), "id", None)
            for request in (LIST, gradient, second_page, second_page, second_page)
        ]

    assert run(walk()) == [None, None, "f1", "f2", None]


def test_the_fault_queue_is_bounded(make):
    store, _ = make(max_faults=2)
    session, _ = record()

    async def walk() -> None:
        await store.create(session)
        await store.push_fault(session.id, fault(1))
        await store.push_fault(session.id, fault(2))
        with pytest.raises(FaultQueueFull):
            await store.push_fault(session.id, fault(3))
        await store.clear_faults(session.id)
        assert await store.faults(session.id) == []

    run(walk())


def test_the_journal_keeps_the_newest_entries_and_counts_the_dropped(make):
    store, _ = make(max_journal=3)
    session, _ = record()

    async def walk() -> None:
        await store.create(session)
        for number in range(5):
            await store.append(session.id, entry(200 + number))
        journal = await store.journal(session.id)
        assert [e.status for e in journal.entries] == [202, 203, 204]
        assert journal.dropped == 2
        state = await store.get(session.id)
        assert state is not None and state.requests == 5
        await store.clear_journal(session.id)
        journal = await store.journal(session.id)
        assert (journal.entries, journal.dropped) == ((), 0)
        for number in range(4):
            await store.append(session.id, entry(300 + number))
        journal = await store.journal(session.id)
        assert ([e.status for e in journal.entries], journal.dropped) == ([301, 302, 303], 1)

    run(walk())


def test_a_cursor_leads_to_the_page_after_the_one_that_gave_it(make):
    store, _ = make()
    session, _ = record()

    async def walk() -> None:
        await store.create(session)
        await store.append(session.id, entry(page=1, next_cursor="c1"))
        await store.append(session.id, entry(page=2, next_cursor="c2"))
        assert await store.cursor_page(session.id, "c1") == 2
        assert await store.cursor_page(session.id, "c2") == 3
        assert await store.cursor_page(session.id, "forged") is None

    run(walk())


def test_sessions_do_not_share_faults_or_journals(make):
    store, _ = make()
    one, _ = record()
    two, _ = record()

    async def walk() -> None:
        await store.create(one)
        await store.create(two)
        await store.push_fault(one.id, fault(1))
        await store.append(one.id, entry())
        assert await store.take_fault(two.id, LIST) is None
        assert (await store.journal(two.id)).entries == ()

    run(walk())


def test_records_go_to_json_and_back_unchanged():
    session, _ = record(SessionSpec(seed=3, cases=5, data={"cases": []}, data_only=True, churn=2))
    queued = fault(
        1, times=2, status=503, retry_after=7, match_query=(("cursor", "*"),), match_page=2
    )
    logged = entry(page=1, next_cursor="c", retry_after=2, shaped_by="fault:f1", request_id="r")
    through = json.loads(json.dumps([session.to_json(), queued.to_json(), logged.to_json()]))
    assert SessionRecord.from_json(through[0]) == session
    assert Fault.from_json(through[1]) == queued
    assert JournalEntry.from_json(through[2]) == logged
