"""pytest fixtures for testing an app against the mock, installed as a pytest11 plugin: one mock
per test session, one mock session per test (docs/sessions.md).

    def test_the_list_shows_the_busy_state(evalmock_session):
        evalmock_session.fault("test-set", status=503, retry_after=2)
        ...  # the app under test, given evalmock_session.base_url and evalmock_session.token
        evalmock_session.assert_conforms()

`evalmock_mock` starts `evalmock serve --port 0` once per test session (per process, under
pytest-xdist), or uses the mock at `--evalmock-mock-url` (`EVALMOCK_MOCK_URL`). `evalmock_session`
is a session of the default world, or of the world a test's `@pytest.mark.evalmock_world(cases=3,
data={...})` names, deleted after the test; `evalmock_sessions(**world)` makes more, each deleted
after the test too. Nothing is imported or started until a test asks for a fixture.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import pytest

from evalmock import environment

if TYPE_CHECKING:
    from evalmock.testing.admin_client import Admin, Session

MARKER = "evalmock_world"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("evalmock-sessions", "evalmock sessions (the evalmock_session fixture)")
    group.addoption(
        "--evalmock-mock-url",
        help="use the mock running at this URL instead of starting one (env "
        f"{environment.MOCK_URL})",
    )
    group.addoption(
        "--evalmock-mock-args",
        default="",
        help="more `evalmock serve` flags for the mock the fixtures start, as one shell-quoted "
        "string, e.g. '--server uvicorn'",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{MARKER}(seed=, cases=, data=, data_only=, churn=): the world of the test's "
        "evalmock_session",
    )


@pytest.fixture(scope="session")
def evalmock_mock(request: pytest.FixtureRequest) -> Iterator[Admin]:
    """The mock the tests' sessions live in: started once on a free port, or the one at
    --evalmock-mock-url (with EVALMOCK_ADMIN_TOKEN where it asks for an admin token)."""
    from evalmock.testing.admin_client import Admin
    from evalmock.testing.mock import start_mock

    url = request.config.getoption("--evalmock-mock-url") or environment.mock_url()
    if url:
        admin = Admin(url, admin_token=environment.admin_token())
        try:
            yield admin
        finally:
            admin.close()
        return
    args = shlex.split(request.config.getoption("--evalmock-mock-args") or "")
    with start_mock(args) as mock:
        yield mock


@pytest.fixture
def evalmock_sessions(evalmock_mock: Admin) -> Iterator[Callable[..., Session]]:
    """`evalmock_sessions(cases=3)`: a new session of that world; every one made is deleted after
    the test."""
    made: list[Session] = []

    def create(**world: Any) -> Session:
        session = evalmock_mock.create_session(**world)
        made.append(session)
        return session

    yield create
    for session in made:
        session.delete()


@pytest.fixture
def evalmock_session(
    request: pytest.FixtureRequest, evalmock_sessions: Callable[..., Session]
) -> Session:
    """A session for this test (its `id`, `token`, `base_url`, `headers`), deleted after it; its
    world is the default one, or what the test's evalmock_world marker names."""
    marker = request.node.get_closest_marker(MARKER)
    return evalmock_sessions(**(marker.kwargs if marker else {}))
