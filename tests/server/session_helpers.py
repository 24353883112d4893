"""An in-process mock with the admin API, its session store and clock at hand, for the session
tests."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import httpx

from evalmock.server.app import create_app
from evalmock.server.sessions import MemoryStore, SessionLimits
from evalmock.server.settings import ServerSettings
from evalmock.world import World
from evalmock.world.catalog import EXAMPLE_AGENT

from .helpers import FrozenClock, cases_path, example_params

ADMIN = "/__evalmock"


@dataclass
class Mock:
    client: httpx.Client
    store: MemoryStore
    clock: FrozenClock

    def create(self, **settings: Any) -> tuple[str, str]:
        """A new session's (id, token)."""
        answer = self.client.post(f"{ADMIN}/sessions", json=settings)
        assert answer.status_code == 201, answer.text
        return answer.json()["id"], answer.json()["token"]

    def cases(self, token: str, agent: str = EXAMPLE_AGENT, **params: Any) -> httpx.Response:
        return self.client.get(
            cases_path(agent),
            params={**example_params(), **params},
            headers={"Authorization": f"Bearer {token}"},
        )

    def fault(self, session_id: str, **fault: Any) -> dict[str, Any]:
        answer = self.client.post(f"{ADMIN}/sessions/{session_id}/faults", json=fault)
        assert answer.status_code == 201, answer.text
        return answer.json()

    def journal(self, session_id: str, **filters: Any) -> dict[str, Any]:
        answer = self.client.get(f"{ADMIN}/sessions/{session_id}/requests", params=filters)
        assert answer.status_code == 200, answer.text
        return answer.json()


@contextmanager
def mock(
    world: World,
    *,
    limits: SessionLimits | None = None,
    **settings: Any,
) -> Iterator[Mock]:
    clock = FrozenClock()
    store = MemoryStore(limits or SessionLimits(), clock)
    values = {"seed": world.seed, "cases": world.cases, "validate_responses": True, **settings}
    app = create_app(ServerSettings(**values), world, store=store, session_clock=clock)
    with app.test_client(raise_server_exceptions=False) as client:
        yield Mock(client, store, clock)
