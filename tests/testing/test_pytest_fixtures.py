"""The pytest fixtures as a user's suite meets them: loaded by the pytest11 entry point alone, a
mock of their own per test session (stopped after), or the one at --evalmock-mock-url; a session per
test, deleted after; and the verdict's assertion failing with the findings' words."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from evalmock.testing import AdminError, Mock, Session, start_mock

SUITE = """
import time
from pathlib import Path

import httpx
import pytest

SEEN = Path({seen!r})
PARAMS = {{"projectId": "2489E9AD-2EE2-8E00-8EC9-32D5F69181C0", "limit": "2"}}


def cases(session):
    return httpx.get(
        session.base_url + "/v1/agents/example/test-set/cases",
        params=PARAMS,
        headers=session.headers,
        timeout=30,
    )


def seen(*sessions):
    with SEEN.open("a") as out:
        for session in sessions:
            out.write(f"{{session.id}} {{session.base_url}}\\n")


@pytest.mark.evalmock_world(cases=2)
def test_a_session_of_the_marked_world(evalmock_session):
    seen(evalmock_session)
    assert evalmock_session.info()["cases"] == 2
    assert len(cases(evalmock_session).json()["data"]) == 2


def test_more_sessions_are_sessions_of_their_own(evalmock_session, evalmock_sessions):
    other = evalmock_sessions(seed=7)
    seen(evalmock_session, other)
    assert other.id != evalmock_session.id and other.token != evalmock_session.token


def test_an_app_that_waits_retry_after_conforms(evalmock_session):
    seen(evalmock_session)
    evalmock_session.fault("test-set", status=503, retry_after=1)
    assert cases(evalmock_session).status_code == 503
    time.sleep(1.1)
    assert cases(evalmock_session).status_code == 200
    evalmock_session.assert_conforms()


def test_an_app_that_retries_at_once_fails_with_the_findings(evalmock_session):
    seen(evalmock_session)
    evalmock_session.fault("test-set", status=503, retry_after=2)
    assert cases(evalmock_session).status_code == 503
    assert cases(evalmock_session).status_code == 200
    evalmock_session.assert_conforms()
"""


@pytest.fixture(scope="module")
def mock() -> Iterator[Mock]:
    with start_mock(["--cases", "5"]) as started:
        yield started


def run_suite(tmp_path: Path, *options: str) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    """The suite in a project of its own (no conftest, no -p): the entry point alone loads the
    fixtures. Returns the run and each session's "id base_url" line."""
    seen = tmp_path / "seen.txt"
    (tmp_path / "test_app.py").write_text(SUITE.format(seen=str(seen)))
    done = subprocess.run(
        [
            *(
                sys.executable,
                "-m",
                "pytest",
                "-p",
                "no:cacheprovider",
                "-q",
            ),
            *(f"--rootdir={tmp_path}", "-W", "ignore::DeprecationWarning", *options),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    return done, seen.read_text().splitlines() if seen.exists() else []


def test_each_session_is_deleted_after_its_test_and_the_verdict_fails_in_words(
    tmp_path: Path, mock: Mock
) -> None:
    done, seen = run_suite(tmp_path, "--evalmock-mock-url", mock.base_url)
    assert done.stdout.splitlines()[-1].startswith("1 failed, 3 passed"), done.stdout + done.stderr
    assert "test_an_app_that_retries_at_once_fails_with_the_findings" in done.stdout
    assert "client verdict: VIOLATIONS" in done.stdout
    assert "client_waits_retry_after [page]" in done.stdout
    assert len(seen) == 5 and {line.split()[1] for line in seen} == {mock.base_url}
    for line in seen:
        with pytest.raises(AdminError) as gone:
            Session(mock, line.split()[0], "", mock.base_url).info()
        assert gone.value.status == 404
    # the sessions' tokens never reach the output
    assert "Bearer" not in done.stdout


def test_without_a_url_the_fixtures_start_a_mock_and_stop_it_after(tmp_path: Path) -> None:
    done, seen = run_suite(tmp_path, "-k", "marked_world")
    assert done.stdout.splitlines()[-1].startswith("1 passed"), done.stdout + done.stderr
    (line,) = seen
    with pytest.raises(httpx.TransportError):
        httpx.get(f"{line.split()[1]}/healthz", timeout=5)
