"""A session's answer is journaled before its body is sent: a test that reads the journal as soon as
it has the answer finds the entry, whether the store answers at once (the in-process one) or is
awaited (as Redis is); a store gone at that moment costs the entry, never the answer."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from evalmock.server.app import create_app
from evalmock.server.sessions import MemoryStore, SessionRecord, SessionSpec, StoreUnavailable
from evalmock.server.sessions.tokens import new_session_id, new_token, token_digest
from evalmock.server.settings import ServerSettings
from evalmock.world import World
from evalmock.world.catalog import EXAMPLE_AGENT

from .helpers import cases_path


class AwaitedStore:
    """The in-process store behind an interface the middleware must await, as a networked one."""

    def __init__(self, store: MemoryStore) -> None:
        self.store = store
        self.limits = store.limits

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)


class StoreGoneAtTheJournal(AwaitedStore):
    """A store that finds the session, then is gone when the answer is to be journaled."""

    async def append(self, session_id: str, entry: Any) -> None:
        raise StoreUnavailable("gone")


async def _statuses_journaled_at_each_message(store: Any, world: World) -> list[tuple[str, Any]]:
    """Each message the app sends for one session request (its status or body), with the statuses
    its session's journal held when that message was sent."""
    memory = store if isinstance(store, MemoryStore) else store.store
    token = new_token()
    record = SessionRecord(
        new_session_id(), token_digest(token), SessionSpec(world.seed, world.cases), 0.0
    )
    await memory.create(record)
    settings = ServerSettings(seed=world.seed, cases=world.cases)
    app = create_app(settings, world, store=store)
    seen: list[tuple[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        journal = await memory.journal(record.id)
        sent = message.get("status", message.get("body"))
        seen.append((message["type"], sent, [entry.status for entry in journal.entries]))

    project = world.project_ids(EXAMPLE_AGENT)[0]
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": cases_path(),
        "raw_path": cases_path().encode(),
        "query_string": f"projectId={project}".encode(),
        "root_path": "",
        "headers": [(b"host", b"testserver"), (b"authorization", f"Bearer {token}".encode())],
        "client": ("127.0.0.1", 50000),
        "server": ("testserver", 80),
    }
    await app(scope, receive, send)
    return seen


@pytest.mark.parametrize("kind", ["in-process", "awaited"])
def test_an_answer_is_journaled_before_its_body_is_sent(server_world, kind):
    store = MemoryStore() if kind == "in-process" else AwaitedStore(MemoryStore())
    seen = asyncio.run(_statuses_journaled_at_each_message(store, server_world))
    assert seen[0] == ("http.response.start", 200, [200]), seen
    assert [journaled for _, _, journaled in seen[1:]] == [[200]] * (len(seen) - 1), seen


def test_a_store_gone_at_the_journal_still_answers_and_says_so(server_world, caplog):
    store = StoreGoneAtTheJournal(MemoryStore())
    with caplog.at_level(logging.WARNING, logger="evalmock.server"):
        seen = asyncio.run(_statuses_journaled_at_each_message(store, server_world))
    assert seen[0][:2] == ("http.response.start", 200), seen
    assert b"".join(body for _, body, _ in seen[1:]).startswith(b'{"data":['), seen
    assert "did not journal a request of ses_" in caplog.text
