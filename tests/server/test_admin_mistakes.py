"""What a hurried developer sends the admin API: a misspelled field, a field at the wrong level, a
journal filter that could match nothing; each refused at its place with what was likely meant,
never answered as if it were right."""

from __future__ import annotations

import json
import logging

import pytest

from .helpers import cases_path
from .session_helpers import ADMIN, mock


def refusal(answer) -> dict:
    assert answer.status_code == 400, answer.text
    error = answer.json()["error"]
    assert error["code"] == "bad-input"
    return error


@pytest.mark.parametrize(
    ("body", "path", "meant"),
    [
        ({"case": 3}, "$.case", "did you mean 'cases'?"),
        ({"dataonly": True}, "$.dataonly", "did you mean 'dataOnly'?"),
        ({"data_only": True}, "$.data_only", "did you mean 'dataOnly'?"),
        ({"flavour": 1}, "$.flavour", "this object takes: seed, cases, data, dataOnly, churn"),
    ],
)
def test_a_misspelled_session_field_is_refused_at_its_path_with_the_field_meant(
    server_world, body, path, meant
):
    with mock(server_world) as m:
        error = refusal(m.client.post(f"{ADMIN}/sessions", json=body))
        [detail] = error["details"]
        assert detail["path"] == path and meant in detail["message"], error
        assert error["message"].startswith("The body is not valid (1 mistake): "), error


def test_each_unknown_field_is_a_mistake_of_its_own(server_world):
    with mock(server_world) as m:
        error = refusal(m.client.post(f"{ADMIN}/sessions", json={"case": 3, "sead": 1}))
        assert [d["path"] for d in error["details"]] == ["$.case", "$.sead"], error
        assert "(2 mistakes)" in error["message"]


def test_thousands_of_unknown_fields_list_fifty_and_count_the_rest(server_world):
    body = {f"field{n:05d}": n for n in range(5000)}
    with mock(server_world) as m:
        error = refusal(m.client.post(f"{ADMIN}/sessions", json=body))
        assert len(error["details"]) == 50
        assert "(5000 mistakes, 4950 not listed)" in error["message"], error["message"][:200]


def test_a_long_unknown_field_is_quoted_cut(server_world):
    name = "x" * 10_000
    with mock(server_world) as m:
        error = refusal(m.client.post(f"{ADMIN}/sessions", json={name: 1}))
        assert len(error["details"][0]["path"]) < 200, error["details"][0]["path"][:300]


def test_a_fault_field_written_beside_match_says_it_goes_inside_match(server_world):
    with mock(server_world) as m:
        session_id, _ = m.create()
        fault = {"api": "test-set", "status": 503, "page": 2}
        error = refusal(m.client.post(f"{ADMIN}/sessions/{session_id}/faults", json=fault))
        [detail] = error["details"]
        assert detail["path"] == "$.page", error
        assert """goes inside 'match': {"match": {"page": ...}}""" in detail["message"], error


@pytest.mark.parametrize(
    ("filters", "parameter"),
    [
        ({"query": "=2"}, "query"),
        ({"path": "v1/agents/example/test-set/cases"}, "path"),
        ({"path": "http://127.0.0.1:8080/v1/agents/example/test-set/cases"}, "path"),
        ({"path": f"{cases_path()}?limit=2"}, "path"),
        ({"path": f"{cases_path()}?"}, "path"),
    ],
)
def test_a_journal_filter_that_could_match_nothing_is_refused(server_world, filters, parameter):
    with mock(server_world) as m:
        session_id, token = m.create()
        m.cases(token, limit=2)
        for tail in ("requests", "requests/count"):
            answer = m.client.get(f"{ADMIN}/sessions/{session_id}/{tail}", params=filters)
            error = refusal(answer)
            assert [d["path"] for d in error["details"]] == [parameter], error


def test_the_method_filter_takes_any_letter_case(server_world):
    with mock(server_world) as m:
        session_id, token = m.create()
        m.cases(token, limit=2)
        for method in ("GET", "get", "Get"):
            answer = m.client.get(
                f"{ADMIN}/sessions/{session_id}/requests/count", params={"method": method}
            )
            assert answer.json() == {"count": 1}, answer.text


def test_a_path_filter_of_an_id_holding_a_question_mark_still_matches(server_world):
    with mock(server_world) as m:
        session_id, token = m.create()
        path = "/v1/agents/what%3Fnow/test-set/cases"
        m.client.get(f"{path}?projectId=x", headers={"Authorization": f"Bearer {token}"})
        answer = m.client.get(
            f"{ADMIN}/sessions/{session_id}/requests/count",
            params={"path": "/v1/agents/what?now/test-set/cases"},
        )
        assert answer.json() == {"count": 1}, answer.text


def test_a_fault_without_match_answers_the_first_page_before_a_page_two_fault_is_reached(
    server_world,
):
    """As sessions.md tells it: the first fault that fits answers, so a fault meant to follow a
    page-2 fault takes the same match."""
    with mock(server_world) as m:
        unmatched_id, unmatched = m.create()
        m.fault(unmatched_id, api="test-set", status=503, retryAfter=2, match={"page": 2})
        m.fault(unmatched_id, api="test-set", status=401, code="token-expired")
        assert m.cases(unmatched, limit=2).status_code == 401

        matched_id, matched = m.create()
        m.fault(matched_id, api="test-set", status=503, retryAfter=2, match={"page": 2})
        m.fault(matched_id, api="test-set", status=401, code="token-expired", match={"page": 2})
        first = m.cases(matched, limit=2)
        cursor = first.json()["nextCursor"]
        assert first.status_code == 200
        assert m.cases(matched, limit=2, cursor=cursor).status_code == 503
        retry = m.cases(matched, limit=2, cursor=cursor)
        assert (retry.status_code, retry.json()["error"]["code"]) == (401, "token-expired")


def test_a_finding_numbers_requests_by_their_place_in_the_journal_from_zero(server_world):
    """As admin-api.md tells it, so `request #0` in a finding's words is the journal's first."""
    with mock(server_world) as m:
        session_id, token = m.create()
        m.fault(session_id, api="test-set", status=503, retryAfter=2)
        m.cases(token, limit=2)
        m.cases(token, limit=2)
        journal = m.journal(session_id)["requests"]
        verdict = m.client.get(f"{ADMIN}/sessions/{session_id}/verdict").json()
        [finding] = verdict["findings"]
        assert finding["request"]["index"] == 1 and journal[1]["status"] == 200
        assert "request #0 was answered 503" in finding["problem"] and journal[0]["status"] == 503


@pytest.mark.parametrize(
    ("fault", "path", "said"),
    [
        ({"retryAfter": "2"}, "$.retryAfter", "must be an integer, received the string '2'"),
        ({"retryAfter": 2.5}, "$.retryAfter", "must be an integer, received the number 2.5"),
        ({"retryAfter": None}, "$.retryAfter", "must be an integer, received null"),
        ({"match": []}, "$.match", "must be an object, received an array"),
    ],
)
def test_a_value_of_the_wrong_type_is_refused_naming_what_came(server_world, fault, path, said):
    with mock(server_world) as m:
        session_id, _ = m.create()
        body = {"api": "test-set", "status": 503, **fault}
        error = refusal(m.client.post(f"{ADMIN}/sessions/{session_id}/faults", json=body))
        assert {"path": path, "message": said} in error["details"], error


@pytest.mark.parametrize("route", ["", "/faults", "/requests", "/requests/count", "/verdict"])
def test_a_session_token_where_the_id_goes_is_named_so_and_never_quoted(
    server_world, route, caplog
):
    caplog.set_level(logging.DEBUG)
    with mock(server_world) as m:
        session_id, token = m.create()
        error = refusal(m.client.get(f"{ADMIN}/sessions/{token}{route}"))
        said = (
            "Path parameter 'sessionId' is a session token, not a session id: the id is the `id` "
            "that POST /__evalmock/sessions answered."
        )
        assert error["message"] == said
        assert error["details"] == [{"path": "sessionId", "message": said}]
        # no part of the secret: not the token, nor its random part
        secret = token.removeprefix("evm_")
        # the server's logs (the test's own client, httpx, logs the URL it was given)
        logged = [r.getMessage() for r in caplog.records if not r.name.startswith("http")]
        assert secret[:8] not in json.dumps(error) and secret[:8] not in "\n".join(logged)
        # an id that is neither still gets the pattern's words
        other = refusal(m.client.get(f"{ADMIN}/sessions/not-an-id{route}"))
        assert "must match ^ses_" in other["message"]
        assert m.client.get(f"{ADMIN}/sessions/{session_id}{route}").status_code == 200
