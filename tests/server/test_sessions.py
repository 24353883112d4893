"""Sessions: a world per token, isolated from every other token; faults used up in order; the
journal of what a session's callers sent, bounded."""

from __future__ import annotations

import inspect
import json

import pytest

from data_builders import AGENT, PROJECT, case, data
from evalmock.server.auth import DEMO_TOKENS
from evalmock.server.sessions import SessionLimits, SessionSpec, StoreUnavailable
from evalmock.server.sessions.middleware import MAX_JOURNALED_TEXT
from evalmock.server.sessions.worlds import SessionWorlds
from evalmock.server.validation import MAX_QUERY_FIELDS
from evalmock.world import World

from .helpers import AUTH, cases_path, evaluation_path
from .session_helpers import ADMIN, mock

SHOP = {"projectId": PROJECT}


def shop_with(*case_ids: str) -> dict:
    cases = [case(name, f"2026-10-{n + 1:02d}T12:00:00Z") for n, name in enumerate(case_ids)]
    return data([(AGENT, PROJECT, cases)])


def ids(answer) -> list[str]:
    assert answer.status_code == 200, answer.text
    return [item["id"] for item in answer.json()["data"]]


def test_two_sessions_with_different_data_see_only_their_own_cases(server_world):
    with mock(server_world) as m:
        _, one = m.create(data=shop_with("case-one-a", "case-one-b"), dataOnly=True)
        _, two = m.create(data=shop_with("case-two"), dataOnly=True)
        assert ids(m.cases(one, AGENT, **SHOP)) == ["case-one-b", "case-one-a"]
        assert ids(m.cases(two, AGENT, **SHOP)) == ["case-two"]
        # the mock's own world, for a demo token, has neither
        demo = m.client.get(f"/v1/agents/{AGENT}/test-set/cases", params=SHOP, headers=AUTH)
        assert demo.status_code == 404, demo.text


def test_a_default_session_shares_the_mocks_world_object():
    default = World(seed=42, cases=20)
    worlds = SessionWorlds(SessionSpec(seed=42, cases=20), lambda: default, limit=2)
    assert worlds.world(SessionSpec(seed=42, cases=20)) is default
    other = worlds.world(SessionSpec(seed=7, cases=20))
    assert other is not default and worlds.world(SessionSpec(seed=7, cases=20)) is other


def test_a_session_with_a_seed_is_served_that_seeds_world(server_world):
    with mock(server_world) as m:
        _, default = m.create()
        _, seeded = m.create(seed=server_world.seed + 1)
        assert ids(m.cases(default, limit=3)) == ids(
            m.client.get(
                "/v1/agents/example/test-set/cases",
                params={"projectId": m.cases(default).json()["data"][0]["projectId"], "limit": 3},
                headers=AUTH,
            )
        )
        assert ids(m.cases(seeded, limit=3)) != ids(m.cases(default, limit=3))


def test_a_cursor_of_another_session_or_a_demo_token_does_not_open(server_world):
    with mock(server_world) as m:
        _, one = m.create()
        _, two = m.create()
        cursor = m.cases(one, limit=2).json()["nextCursor"]
        assert m.cases(one, limit=2, cursor=cursor).status_code == 200
        refused = m.cases(two, limit=2, cursor=cursor)
        assert refused.status_code == 400 and refused.json()["error"]["code"] == "bad-input"
        demo_cursor = m.client.get(
            "/v1/agents/example/test-set/cases",
            params={"projectId": m.cases(one).json()["data"][0]["projectId"], "limit": 2},
            headers=AUTH,
        ).json()["nextCursor"]
        assert m.cases(one, limit=2, cursor=demo_cursor).status_code == 400


def test_a_deleted_sessions_token_gets_401_and_its_id_404(server_world):
    with mock(server_world) as m:
        session_id, token = m.create()
        assert m.client.delete(f"{ADMIN}/sessions/{session_id}").status_code == 204
        answer = m.cases(token)
        assert answer.status_code == 401
        assert answer.json()["error"]["code"] == "unauthorized"
        assert "WWW-Authenticate" in answer.headers
        assert m.client.get(f"{ADMIN}/sessions/{session_id}").status_code == 404


def test_an_idle_session_ends_and_a_used_one_lives_on(server_world):
    with mock(server_world, limits=SessionLimits(idle_seconds=60)) as m:
        idle_id, idle = m.create()
        _, used = m.create()
        m.clock.advance(40)
        assert m.cases(used).status_code == 200
        m.clock.advance(30)
        assert m.cases(idle).status_code == 401
        assert m.cases(used).status_code == 200
        assert m.client.get(f"{ADMIN}/sessions/{idle_id}").status_code == 404


def test_a_token_no_session_issued_gets_401(server_world):
    with mock(server_world) as m:
        assert m.cases("evm_" + "A" * 43).status_code == 401


def test_a_session_token_also_works_on_the_gradient_api(server_world):
    with mock(server_world) as m:
        session_id, token = m.create()
        answer = m.client.get(evaluation_path(), headers={"Authorization": f"Bearer {token}"})
        assert answer.status_code == 200, answer.text
        [entry] = m.journal(session_id)["requests"]
        assert (entry["api"], entry["status"]) == ("gradient", 200)


def test_faults_are_used_up_in_order_then_answers_are_normal_again(server_world):
    with mock(server_world) as m:
        session_id, token = m.create()
        m.fault(session_id, api="test-set", status=503, retryAfter=4, times=2)
        m.fault(session_id, api="test-set", status=401, code="token-expired")
        answers = [m.cases(token) for _ in range(4)]
        assert [a.status_code for a in answers] == [503, 503, 401, 200]
        assert answers[0].headers["Retry-After"] == "4"
        assert answers[0].json()["error"]["details"]["retryAfterSeconds"] == 4
        assert answers[0].json()["error"]["code"] == "database-busy"
        assert answers[2].json()["error"]["code"] == "token-expired"
        assert m.client.get(f"{ADMIN}/sessions/{session_id}/faults").json() == {"faults": []}


@pytest.mark.parametrize("api", ["test-set", "gradient"])
def test_a_queued_401_says_the_test_queued_it_and_names_no_demo_token(server_world, api):
    with mock(server_world) as m:
        session_id, token = m.create()
        fault = m.fault(session_id, api=api, status=401)
        bearer = {"Authorization": f"Bearer {token}"}
        gradient = api == "gradient"
        answer = m.client.get(evaluation_path(), headers=bearer) if gradient else m.cases(token)
        assert answer.status_code == 401, answer.text
        body = answer.json()
        message = body["message"] if gradient else body["error"]["message"]
        assert message == (
            f"A 401 queued for this session's next request (fault {fault['id']}): the app should "
            "act as if its token were refused."
        )
        assert not any(demo in answer.text for demo in DEMO_TOKENS)
        assert "WWW-Authenticate" in answer.headers


def test_a_fault_for_the_second_page_spares_the_first(server_world):
    with mock(server_world) as m:
        session_id, token = m.create()
        m.fault(session_id, api="test-set", status=503, retryAfter=2, match={"page": 2})
        first = m.cases(token, limit=2)
        assert first.status_code == 200
        assert m.cases(token, limit=2).status_code == 200  # a first page again
        second = m.cases(token, limit=2, cursor=first.json()["nextCursor"])
        assert second.status_code == 503 and second.headers["Retry-After"] == "2"
        assert m.cases(token, limit=2, cursor=first.json()["nextCursor"]).status_code == 200


def test_a_fault_matching_a_query_parameter_waits_for_it(server_world):
    with mock(server_world) as m:
        session_id, token = m.create()
        m.fault(session_id, api="test-set", status=400, match={"query": {"limit": "5"}})
        assert m.cases(token, limit=4).status_code == 200
        assert m.cases(token, limit=5).status_code == 400


def test_a_fault_of_one_api_leaves_the_other_alone(server_world):
    with mock(server_world) as m:
        session_id, token = m.create()
        m.fault(session_id, api="gradient", status=429, retryAfter=9)
        assert m.cases(token).status_code == 200
        answer = m.client.get(evaluation_path(), headers={"Authorization": f"Bearer {token}"})
        assert answer.status_code == 429 and answer.headers["Retry-After"] == "9"


def test_a_latency_fault_delays_a_normal_answer_and_says_so(server_world):
    with mock(server_world) as m:
        session_id, token = m.create()
        fault = m.fault(session_id, api="test-set", latencyMs=20)
        assert m.cases(token).status_code == 200
        [entry] = m.journal(session_id)["requests"]
        assert entry["shapedBy"] == f"fault:{fault['id']}"


def test_faults_of_one_session_never_reach_another(server_world):
    with mock(server_world) as m:
        one_id, _ = m.create()
        _, two = m.create()
        m.fault(one_id, api="test-set", status=503)
        assert m.cases(two).status_code == 200


@pytest.mark.parametrize(
    ("fault", "path"),
    [
        ({"api": "test-set", "status": 418}, "$.status"),
        ({"api": "test-set", "status": 401, "code": "database-busy"}, "$.code"),
        ({"api": "test-set", "status": 401, "retryAfter": 3}, "$.retryAfter"),
        ({"api": "test-set"}, "$"),
        ({"api": "test-set", "code": "token-expired", "latencyMs": 5}, "$.status"),
        ({"api": "gradient", "status": 503}, "$.status"),
        ({"api": "test-set", "status": "503"}, "$.status"),
        ({"api": "rest", "status": 503}, "$.api"),
        ({"status": 503}, "$.api"),
        ({"api": "test-set", "status": 503, "times": 0}, "$.times"),
        ({"api": "test-set", "status": 503, "times": 1001}, "$.times"),
        ({"api": "test-set", "latencyMs": 60001}, "$.latencyMs"),
        ({"api": "test-set", "status": 503, "match": {"page": 0}}, "$.match.page"),
        (
            {"api": "test-set", "status": 503, "match": {"query": {"cursor": 1}}},
            "$.match.query.cursor",
        ),
        ({"api": "test-set", "status": 503, "when": "later"}, "$.when"),
    ],
)
def test_a_fault_the_document_does_not_have_is_refused_at_its_json_path(server_world, fault, path):
    with mock(server_world) as m:
        session_id, _ = m.create()
        answer = m.client.post(f"{ADMIN}/sessions/{session_id}/faults", json=fault)
        assert answer.status_code == 400, answer.text
        error = answer.json()["error"]
        assert error["code"] == "bad-input"
        assert path in [detail["path"] for detail in error["details"]], error


def test_the_journal_lists_what_was_sent_newest_last_without_credentials(server_world):
    with mock(server_world) as m:
        session_id, token = m.create()
        m.client.cookies.set("session", "cookie-secret")
        first = m.cases(token, limit=2)
        m.cases(token, limit=2, cursor=first.json()["nextCursor"])
        m.client.cookies.clear()
        journal = m.journal(session_id)
        text = json.dumps(journal)
        assert token not in text and "cookie-secret" not in text
        one, two = journal["requests"]
        assert (one["page"], two["page"]) == (1, 2)
        assert one["nextCursor"] == first.json()["nextCursor"]
        assert ["cursor", first.json()["nextCursor"]] in two["query"]
        assert one["at"] <= two["at"] and one["method"] == "GET" and one["status"] == 200
        assert one["requestId"] == first.headers["X-Request-Id"]


def test_the_journal_says_which_prefer_shaped_an_answer(server_world):
    with mock(server_world) as m:
        session_id, token = m.create()
        m.client.get(
            "/v1/agents/example/test-set/cases",
            params=m.cases(token).request.url.params,
            headers={"Authorization": f"Bearer {token}", "Prefer": "code=503"},
        )
        assert m.journal(session_id)["requests"][-1]["shapedBy"] == "prefer:code=503"


def test_the_journal_filters_and_counts_by_api_method_path_and_query(server_world):
    with mock(server_world) as m:
        session_id, token = m.create()
        m.cases(token, limit=2)
        m.cases(token, limit=3)
        m.client.get(evaluation_path(), headers={"Authorization": f"Bearer {token}"})

        def count(**filters) -> int:
            answer = m.client.get(f"{ADMIN}/sessions/{session_id}/requests/count", params=filters)
            assert answer.status_code == 200, answer.text
            return answer.json()["count"]

        assert count() == 3
        assert count(api="test-set") == 2
        assert count(query="limit=3") == 1
        assert count(query="limit") == 2
        assert count(query="cursor") == 0
        assert count(method="POST") == 0
        assert count(path=evaluation_path()) == 1
        [last] = m.journal(session_id, api="test-set", limit=1)["requests"]
        assert ["limit", "3"] in last["query"]


def test_the_journal_gives_each_query_back_as_validation_read_it(server_world):
    """Decoded, in order, repeats and blanks kept, each text bounded; a query over the field limit
    (which validation refuses) as none."""
    long_value = "z" * (MAX_JOURNALED_TEXT + 10)
    sent = {
        "limit=2&include=retired&include=all&q=a%20b+c&blank=": [
            ["limit", "2"],
            ["include", "retired"],
            ["include", "all"],
            ["q", "a b c"],
            ["blank", ""],
        ],
        f"limit=2&long={long_value}": [["limit", "2"], ["long", "z" * MAX_JOURNALED_TEXT]],
        "&".join(["limit=2"] * (MAX_QUERY_FIELDS + 1)): [],
    }
    with mock(server_world) as m:
        session_id, token = m.create()
        for query in sent:
            m.client.get(f"{cases_path()}?{query}", headers={"Authorization": f"Bearer {token}"})
        journaled = [entry["query"] for entry in m.journal(session_id)["requests"]]
        assert journaled == list(sent.values())


def test_the_journal_keeps_its_newest_entries_and_counts_the_dropped(server_world):
    with mock(server_world, limits=SessionLimits(max_journal=2)) as m:
        session_id, token = m.create()
        for limit in (1, 2, 3):
            m.cases(token, limit=limit)
        journal = m.journal(session_id)
        assert [dict(e["query"])["limit"] for e in journal["requests"]] == ["2", "3"]
        assert journal["dropped"] == 1
        assert m.client.get(f"{ADMIN}/sessions/{session_id}").json()["requests"] == 3
        assert m.client.delete(f"{ADMIN}/sessions/{session_id}/requests").status_code == 204
        assert m.journal(session_id) == {"requests": [], "dropped": 0}


def test_journals_of_two_sessions_are_apart(server_world):
    with mock(server_world) as m:
        one_id, one = m.create()
        two_id, _ = m.create()
        m.cases(one)
        m.client.get("/v1/agents/example/test-set/cases", params={"projectId": "x"}, headers=AUTH)
        assert len(m.journal(one_id)["requests"]) == 1
        assert m.journal(two_id)["requests"] == []


def test_a_refused_request_is_journaled_with_its_status(server_world):
    with mock(server_world) as m:
        session_id, token = m.create()
        assert m.cases(token, limit="many").status_code == 400
        [entry] = m.journal(session_id)["requests"]
        assert entry["status"] == 400 and "shapedBy" not in entry


class FailingStore:
    """A store that stops answering when told to."""

    def __init__(self, store) -> None:
        self.store, self.down = store, False
        self.limits = store.limits

    def __getattr__(self, name):
        method = getattr(self.store, name)
        if not inspect.iscoroutinefunction(method):
            return method  # answers from what the request read already, as the store's own

        async def call(*args, **kwargs):
            if self.down:
                raise StoreUnavailable("gone")
            return await method(*args, **kwargs)

        return call


def test_a_store_gone_answers_session_requests_503_and_leaves_the_default_world(server_world):
    from evalmock.server.app import create_app
    from evalmock.server.sessions import MemoryStore
    from evalmock.server.settings import ServerSettings

    store = FailingStore(MemoryStore())
    settings = ServerSettings(seed=server_world.seed, cases=server_world.cases)
    app = create_app(settings, server_world, store=store)
    with app.test_client(raise_server_exceptions=False) as client:
        created = client.post(f"{ADMIN}/sessions", json={}).json()
        store.down = True
        path = "/v1/agents/example/test-set/cases"
        params = {"projectId": server_world.project_ids("example")[0]}
        answer = client.get(
            path, params=params, headers={"Authorization": f"Bearer {created['token']}"}
        )
        assert answer.status_code == 503, answer.text
        assert answer.json()["error"]["code"] == "store-unavailable"
        assert client.get(path, params=params, headers=AUTH).status_code == 200
        admin = client.get(f"{ADMIN}/sessions/{created['id']}")
        assert admin.status_code == 503 and admin.json()["error"]["code"] == "store-unavailable"


def verdict(m, session_id: str) -> dict:
    answer = m.client.get(f"{ADMIN}/sessions/{session_id}/verdict")
    assert answer.status_code == 200, answer.text
    return answer.json()


def broken_rules(found: dict) -> set[str]:
    return {finding["rule"] for finding in found["findings"]}


def test_the_verdict_of_an_app_that_walks_the_pages_as_asked_conforms(server_world):
    with mock(server_world) as m:
        session_id, token = m.create()
        first = m.cases(token, limit=2)
        m.cases(token, limit=2, cursor=first.json()["nextCursor"])
        found = verdict(m, session_id)
        assert found["verdict"] == "CONFORMS", found
        assert found["judged"] == 2


def test_the_verdict_names_a_cursor_the_app_changed(server_world):
    with mock(server_world) as m:
        session_id, token = m.create()
        first = m.cases(token, limit=2)
        m.cases(token, limit=2, cursor=first.json()["nextCursor"][:-2])
        found = verdict(m, session_id)
        assert found["verdict"] == "VIOLATIONS"
        assert "client_sends_the_cursor_as_it_came" in broken_rules(found)


@pytest.mark.parametrize(("waited", "kept"), [(1, False), (5, True)])
def test_the_verdict_judges_the_wait_after_a_busy_answer(server_world, waited, kept):
    with mock(server_world) as m:
        session_id, token = m.create()
        m.fault(session_id, api="test-set", status=503, retryAfter=5)
        assert m.cases(token).status_code == 503
        m.clock.advance(waited)
        assert m.cases(token).status_code == 200
        found = verdict(m, session_id)
        assert ("client_waits_retry_after" not in broken_rules(found)) == kept, found


def test_the_verdict_of_a_session_nobody_used_is_incomplete(server_world):
    with mock(server_world) as m:
        session_id, _ = m.create()
        assert verdict(m, session_id)["verdict"] == "INCOMPLETE"


def test_a_session_of_short_form_cases_serves_them_filled_in(server_world):
    short = {"testSet": [{"agentId": AGENT, "projectId": PROJECT, "cases": [{}, {"retired": {}}]}]}
    with mock(server_world) as m:
        _, token = m.create(data=short, dataOnly=True)
        answer = m.cases(token, AGENT, include="retired", **SHOP)
        assert answer.status_code == 200, answer.text
        served = answer.json()["data"]
        assert len(served) == 2 and all(c["projectId"] == PROJECT for c in served)
        assert sum("retired" in c for c in served) == 1
