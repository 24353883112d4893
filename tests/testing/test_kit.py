"""evalmock.testing against a real mock: started on a free port and stopped, a session per world,
faults, the journal and its count, deletion, errors in the admin API's words, and no token shown."""

from __future__ import annotations

import re
from collections.abc import Iterator

import httpx
import pytest

from data_builders import AGENT, PROJECT
from evalmock.testing import Admin, AdminError, Mock, MockError, Session, Verdict, start_mock
from evalmock.testing import mock as mock_module

CASES = f"/v1/agents/{AGENT}/test-set/cases"


def world_of(*case_ids: str) -> dict:
    """A data-only world: one list of AGENT and PROJECT holding these cases, newest first (short
    form: the rest of each case is filled in)."""
    cases = [{"id": case_id} for case_id in case_ids]
    return {
        "data": {"testSet": [{"agentId": AGENT, "projectId": PROJECT, "cases": cases}]},
        "data_only": True,
    }


@pytest.fixture(scope="module")
def mock() -> Iterator[Mock]:
    with start_mock(["--cases", "5"]) as started:
        yield started


def page(session: Session, **params: str) -> httpx.Response:
    return httpx.get(
        f"{session.base_url}{CASES}",
        params={"projectId": PROJECT, **params},
        headers=session.headers,
        timeout=30,
    )


def test_a_started_mock_answers_at_its_url_and_is_stopped_after() -> None:
    with start_mock(["--cases", "5"]) as started:
        assert httpx.get(f"{started.base_url}/healthz", timeout=30).status_code == 200
    assert started.process.returncode is not None


def test_a_mock_that_cannot_start_says_why_in_its_own_words(tmp_path) -> None:
    missing = str(tmp_path / "no-such-file.yaml")
    with (
        pytest.raises(MockError, match=r"exited with 2(.|\n)*no-such-file\.yaml"),
        start_mock(["--data", missing]),
    ):
        pass


def test_two_sessions_of_one_mock_serve_their_own_data_under_the_same_ids(mock: Mock) -> None:
    first = mock.create_session(**world_of("case-first-b", "case-first-a"))
    second = mock.create_session(**world_of("case-second"))
    try:
        assert [c["id"] for c in page(first).json()["data"]] == ["case-first-b", "case-first-a"]
        assert [c["id"] for c in page(second).json()["data"]] == ["case-second"]
    finally:
        first.delete()
        second.delete()


def test_faults_answer_the_next_requests_in_order_and_the_journal_says_so(mock: Mock) -> None:
    session = mock.create_session(**world_of("case-a", "case-b", "case-c"))
    try:
        busy = session.fault("test-set", status=503, retry_after=3)
        session.fault("test-set", status=401, code="token-expired")
        assert [fault["id"] for fault in session.faults()] == [
            busy["id"],
            session.faults()[1]["id"],
        ]
        answers = [page(session, limit="2") for _ in range(3)]
        assert [answer.status_code for answer in answers] == [503, 401, 200]
        assert answers[0].headers["Retry-After"] == "3"
        assert session.faults() == []
        journal = session.requests("test-set")
        assert [entry["status"] for entry in journal] == [503, 401, 200]
        assert journal[0]["shapedBy"] == f"fault:{busy['id']}"
        assert session.count("test-set", query="limit=2") == 3
        assert session.count(query="cursor") == 0
        page(session, limit="2", cursor=answers[2].json()["nextCursor"])
        assert session.count(query="cursor") == 1
        # a fault's match.query form filters the same, never as the text of a dict
        assert session.count(query={"cursor": "*"}) == 1
        assert len(session.requests(query={"limit": "2"})) == 4
        with pytest.raises(ValueError, match="one parameter"):
            session.count(query={"cursor": "*", "limit": "2"})
        session.clear_requests()
        assert session.requests() == [] and session.count() == 0
    finally:
        session.delete()


def test_a_deleted_session_is_gone_for_its_token_and_its_id(mock: Mock) -> None:
    session = mock.create_session()
    session.delete()
    session.delete()  # already gone: no error
    assert page(session).status_code == 401
    with pytest.raises(AdminError) as refused:
        session.info()
    assert (refused.value.status, refused.value.code) == (404, "session-not-found")


def test_a_refusal_names_each_mistake_with_its_json_path(mock: Mock) -> None:
    with pytest.raises(AdminError) as refused:
        mock.create_session(cases=0)
    assert refused.value.status == 400 and refused.value.code == "bad-input"
    assert "$.cases" in str(refused.value)


def test_no_token_shows_in_a_session_s_repr(mock: Mock) -> None:
    session = mock.create_session()
    try:
        assert session.token and session.token not in repr(session)
    finally:
        session.delete()


def test_a_verdict_with_findings_explains_each_in_the_mock_s_words() -> None:
    verdict = Verdict(
        verdict="VIOLATIONS",
        findings=[
            {
                "rule": "client_waits_retry_after",
                "level": "page",
                "message": "retried at once: expected 2 s or more, received 0.1 s",
                "source": 'page: "Retry-After (whole seconds) says when to try again."',
            }
        ],
        not_judged=[],
        judged=3,
    )
    text = verdict.explain()
    assert not verdict.conforms
    assert "client_waits_retry_after [page]: retried at once: expected 2 s or more" in text
    assert "Retry-After (whole seconds)" in text


def test_a_mock_whose_port_is_taken_meanwhile_is_started_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    tries: list[int] = []
    real = mock_module._launch_once

    def taken_once(args, ready_s):
        tries.append(1)
        if len(tries) == 1:
            raise MockError("evalmock serve exited with 1; error: cannot listen on 127.0.0.1:1")
        return real(args, ready_s)

    monkeypatch.setattr(mock_module, "_launch_once", taken_once)
    with start_mock(["--cases", "5"]) as started:
        assert httpx.get(f"{started.base_url}/healthz", timeout=30).status_code == 200
    assert len(tries) == 2


def test_a_mock_that_does_not_answer_is_one_short_error_without_the_transport_s_traceback() -> None:
    from evalmock.testing import Admin

    admin = Admin("http://127.0.0.1:1")
    with pytest.raises(AdminError) as raised:
        admin.create_session()
    admin.close()
    assert "POST /__evalmock/sessions: the mock did not answer" in str(raised.value)
    assert raised.value.__cause__ is None and raised.value.__suppress_context__


@pytest.mark.parametrize(
    ("call", "written", "meant"),
    [
        (lambda s: s.fault("test-set", status=503, retryAfter=2), "retryAfter", "retry_after"),
        (lambda s: s.fault("test-set", latencyMs=20), "latencyMs", "latency_ms"),
        (lambda s: s.admin.create_session(dataOnly=True), "dataOnly", "data_only"),
    ],
)
def test_a_camel_case_keyword_names_the_snake_case_one_meant(call, written, meant) -> None:
    # refused before any request: the admin API at this address is never asked
    admin = Admin("http://127.0.0.1:9")
    session = Session(admin, "ses_0123456789abcdef", "evm_unused", admin.base_url)
    with pytest.raises(TypeError, match=re.escape(f"'{written}': did you mean '{meant}'?")):
        call(session)
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'flavour'$"):
        session.fault("test-set", flavour=1)  # no keyword meant: Python's own words
    admin.close()
