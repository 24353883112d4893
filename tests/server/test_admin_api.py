"""The admin API: on only where it is safe, its own document and envelope, and a clear 4xx for
every bad request to every route."""

from __future__ import annotations

import pytest

from evalmock.contract.documents import ADMIN as ADMIN_DOCUMENT
from evalmock.contract.documents import APIS
from evalmock.contract.validate import validate_document
from evalmock.server.admin_access import OPEN_NOTE
from evalmock.server.sessions import SessionLimits
from evalmock.server.sessions.admission import admin_api_off_reason

from .session_helpers import ADMIN, mock

UNKNOWN = "ses_AAAAAAAAAAAAAAAA"
TEN_MB = b"{" + b" " * (10 * 2**20) + b"}"


def session_routes(session_id: str) -> list[tuple[str, str]]:
    base = f"{ADMIN}/sessions/{session_id}"
    return [
        ("GET", base),
        ("DELETE", base),
        ("POST", f"{base}/faults"),
        ("GET", f"{base}/faults"),
        ("DELETE", f"{base}/faults"),
        ("GET", f"{base}/requests"),
        ("GET", f"{base}/requests/count"),
        ("DELETE", f"{base}/requests"),
        ("GET", f"{base}/verdict"),
    ]


def assert_admin_error(answer, status: int, code: str) -> dict:
    assert answer.status_code == status, answer.text
    error = answer.json()["error"]
    assert error["code"] == code
    assert isinstance(error["details"], list) and error["message"]
    # each mistake as the admin document says: where, and what is wrong there
    assert all(set(detail) == {"path", "message"} for detail in error["details"]), error
    assert error["requestId"] == answer.headers["X-Request-Id"]
    return error


def test_the_admin_document_validates_and_is_not_an_audited_api():
    assert validate_document(ADMIN_DOCUMENT.path) == []
    assert ADMIN_DOCUMENT.name not in APIS


@pytest.mark.parametrize(
    ("host", "token", "on"),
    [
        ("127.0.0.1", None, True),
        ("::1", None, True),
        ("localhost", None, True),
        ("0.0.0.0", None, False),
        ("192.0.2.7", None, False),
        ("0.0.0.0", "s3cret", True),
    ],
)
def test_the_admin_api_is_on_only_on_loopback_or_with_a_token(host, token, on):
    reason = admin_api_off_reason(host, token)
    assert (reason is None) == on
    if not on:
        assert "--admin-token" in reason and "loopback" in reason


def test_a_mock_on_every_interface_without_a_token_answers_admin_paths_404(server_world):
    with mock(server_world, host="0.0.0.0") as m:
        assert m.client.post(f"{ADMIN}/sessions", json={}).status_code == 404
        assert m.client.get(f"{ADMIN}/ui/").status_code == 404
        assert m.client.get(f"{ADMIN}/sessions/{UNKNOWN}").status_code == 404


def test_with_an_admin_token_every_admin_request_must_carry_it(server_world):
    with mock(server_world, host="0.0.0.0", admin_token="s3cret-admin") as m:
        missing = m.client.post(f"{ADMIN}/sessions", json={})
        assert_admin_error(missing, 401, "unauthorized")
        wrong = m.client.post(
            f"{ADMIN}/sessions", json={}, headers={"Authorization": "Bearer s3cret-admiN"}
        )
        assert_admin_error(wrong, 401, "unauthorized")
        assert "s3cret" not in wrong.text
        right = {"Authorization": "Bearer s3cret-admin"}
        created = m.client.post(f"{ADMIN}/sessions", json={}, headers=right)
        assert created.status_code == 201
        # a session token is not an admin token
        session = {"Authorization": f"Bearer {created.json()['token']}"}
        session_id = created.json()["id"]
        assert m.client.get(f"{ADMIN}/sessions/{session_id}", headers=session).status_code == 401
        assert m.client.get(f"{ADMIN}/sessions/{session_id}", headers=right).status_code == 200


def test_swagger_ui_and_the_document_are_served(server_world):
    with mock(server_world) as m:
        assert m.client.get(f"{ADMIN}/ui/").status_code == 200
        served = m.client.get(f"{ADMIN}/openapi.json").json()
        assert "/sessions/{sessionId}/faults" in served["paths"]


def _locks(document: dict) -> list:
    """What makes Swagger UI show a lock or an Authorize button: security requirements, schemes."""
    operations = [op for item in document["paths"].values() for op in item.values()]
    return [
        *([document["security"]] if "security" in document else []),
        *[op["security"] for op in operations if isinstance(op, dict) and "security" in op],
        *document.get("components", {}).get("securitySchemes", {}),
    ]


def test_without_an_admin_token_the_served_document_asks_for_none(server_world):
    with mock(server_world) as m:
        served = m.client.get(f"{ADMIN}/openapi.json").json()
        assert _locks(served) == []
        assert served["info"]["description"].startswith(OPEN_NOTE)
        # and what it says holds: no Authorization header, still let in
        assert m.client.post(f"{ADMIN}/sessions", json={}).status_code == 201
    # the file, which evalmock validate checks, keeps its bearer scheme
    assert _locks(ADMIN_DOCUMENT.spec) == [[{"adminToken": []}], "adminToken"]


def test_with_an_admin_token_the_served_document_asks_for_it(server_world):
    with mock(server_world, admin_token="s3cret-admin") as m:
        served = m.client.get(f"{ADMIN}/openapi.json").json()
        assert _locks(served) == [[{"adminToken": []}], "adminToken"]
        assert OPEN_NOTE not in served["info"]["description"]
        assert "s3cret" not in m.client.get(f"{ADMIN}/openapi.json").text
        assert_admin_error(m.client.post(f"{ADMIN}/sessions", json={}), 401, "unauthorized")
        right = {"Authorization": "Bearer s3cret-admin"}
        assert m.client.post(f"{ADMIN}/sessions", json={}, headers=right).status_code == 201


@pytest.mark.parametrize(
    ("body", "path"),
    [
        ({"seed": "42"}, "$.seed"),
        ({"seed": -1}, "$.seed"),
        ({"cases": 0}, "$.cases"),
        ({"cases": 10**6}, "$.cases"),
        ({"dataOnly": "yes"}, "$.dataOnly"),
        ({"churn": 1.5}, "$.churn"),
        ({"data": []}, "$.data"),
        ({"seeds": 1}, "$.seeds"),
        ({"dataOnly": True}, "$.data"),
        ([], "$"),
    ],
)
def test_a_bad_session_body_is_refused_at_its_json_path(server_world, body, path):
    with mock(server_world) as m:
        error = assert_admin_error(m.client.post(f"{ADMIN}/sessions", json=body), 400, "bad-input")
        assert path in [detail["path"] for detail in error["details"]], error


def test_a_message_that_shows_some_mistakes_says_how_many_more_the_details_hold(server_world):
    body = {"cases": "3", "seed": -1, "dataOnly": "yes", "churn": 1.5}
    with mock(server_world) as m:
        error = assert_admin_error(m.client.post(f"{ADMIN}/sessions", json=body), 400, "bad-input")
        assert len(error["details"]) == 4
        assert error["message"].startswith("The body is not valid (4 mistakes): ")
        assert error["message"].endswith("; and 1 more in details.")


def test_a_mistyped_admin_path_names_the_admin_routes_and_its_swagger_ui(server_world):
    with mock(server_world) as m:
        for method, path in (("POST", "session"), ("GET", "sessions/x/journal"), ("GET", "")):
            answer = m.client.request(method, f"{ADMIN}/{path}", json={})
            message = assert_admin_error(answer, 404, "not-found")["message"]
            assert f"POST {ADMIN}/sessions," in message and f"Swagger UI: {ADMIN}/ui/" in message
            assert "/v1" not in message


def test_session_data_that_breaks_a_data_rule_is_refused_naming_each_mistake(server_world):
    from data_builders import AGENT, PROJECT, case, data

    broken = case("case-1", "2026-10-01T12:00:00Z", kind="sideways")
    document = data([(AGENT, PROJECT, [broken])])
    with mock(server_world) as m:
        answer = m.client.post(f"{ADMIN}/sessions", json={"data": document})
        error = assert_admin_error(answer, 400, "bad-input")
        paths = [detail["path"] for detail in error["details"]]
        assert any(p.startswith("$.data.testSet[0].cases[0]") for p in paths), error


@pytest.mark.parametrize(
    ("content", "content_type", "status", "code"),
    [
        (b"{not json", "application/json", 400, "bad-input"),
        (b"\xff\xfe", "application/json", 400, "bad-input"),
        (TEN_MB, "application/json", 413, "too-large"),
        (b"seed=1", "application/x-www-form-urlencoded", 415, "unsupported-media-type"),
    ],
)
def test_a_body_that_is_not_small_json_is_refused(
    server_world, content, content_type, status, code
):
    with mock(server_world) as m:
        session_id, _ = m.create()
        for path in (f"{ADMIN}/sessions", f"{ADMIN}/sessions/{session_id}/faults"):
            answer = m.client.post(path, content=content, headers={"Content-Type": content_type})
            message = assert_admin_error(answer, status, code)["message"]
            if status == 415:
                assert message == (
                    "The body must be application/json; the request's Content-Type is "
                    f"{content_type!r}."
                )


def test_a_streamed_body_past_the_bound_is_refused(server_world):
    def chunks():
        for _ in range(12):
            yield b" " * 2**20

    with mock(server_world, limits=SessionLimits(max_body_bytes=2**20)) as m:
        answer = m.client.post(
            f"{ADMIN}/sessions", content=chunks(), headers={"Content-Type": "application/json"}
        )
        assert_admin_error(answer, 413, "too-large")


def test_every_session_route_answers_an_unknown_or_deleted_session_404(server_world):
    with mock(server_world) as m:
        deleted, _ = m.create()
        assert m.client.delete(f"{ADMIN}/sessions/{deleted}").status_code == 204
        for session_id in (UNKNOWN, deleted):
            for method, path in session_routes(session_id):
                body = {"api": "test-set", "status": 503} if method == "POST" else None
                answer = m.client.request(method, path, json=body)
                assert_admin_error(answer, 404, "session-not-found")


def test_every_session_route_refuses_a_malformed_session_id(server_world):
    with mock(server_world) as m:
        for method, path in session_routes("../../v1"):
            answer = m.client.request(method, path.replace("../../v1", "not-an-id"))
            assert answer.status_code in (400, 404), answer.text
            assert answer.json()["error"]["code"] in ("bad-input", "not-found")


@pytest.mark.parametrize(
    "params",
    [
        {"limit": "0"},
        {"limit": "ten"},
        {"limit": "1001"},
        {"api": "rest"},
        {"method": "G3T"},
        {"filter": "x"},
        {"query": ""},
    ],
)
def test_a_bad_journal_filter_is_refused(server_world, params):
    with mock(server_world) as m:
        session_id, _ = m.create()
        for path in ("requests", "requests/count"):
            if path.endswith("count") and "limit" in params:
                continue
            answer = m.client.get(f"{ADMIN}/sessions/{session_id}/{path}", params=params)
            assert_admin_error(answer, 400, "bad-input")


def test_over_the_session_bound_a_create_is_refused_429(server_world):
    with mock(server_world, limits=SessionLimits(max_sessions=2)) as m:
        first, _ = m.create()
        m.create()
        answer = m.client.post(f"{ADMIN}/sessions", json={})
        assert "2 sessions" in assert_admin_error(answer, 429, "too-many-sessions")["message"]
        m.client.delete(f"{ADMIN}/sessions/{first}")
        assert m.client.post(f"{ADMIN}/sessions", json={}).status_code == 201


def test_over_the_fault_bound_a_fault_is_refused_409(server_world):
    with mock(server_world, limits=SessionLimits(max_faults=1)) as m:
        session_id, _ = m.create()
        m.fault(session_id, api="test-set", status=503)
        answer = m.client.post(
            f"{ADMIN}/sessions/{session_id}/faults", json={"api": "test-set", "status": 503}
        )
        assert_admin_error(answer, 409, "fault-queue-full")
        assert m.client.delete(f"{ADMIN}/sessions/{session_id}/faults").status_code == 204
        m.fault(session_id, api="test-set", status=503)


def test_a_wrong_method_on_an_admin_route_is_405_in_the_admin_envelope(server_world):
    with mock(server_world) as m:
        session_id, _ = m.create()
        answer = m.client.put(f"{ADMIN}/sessions/{session_id}", json={})
        assert_admin_error(answer, 405, "method-not-allowed")


def test_a_session_answer_never_shows_its_token(server_world):
    with mock(server_world) as m:
        session_id, token = m.create()
        shown = m.client.get(f"{ADMIN}/sessions/{session_id}")
        assert shown.status_code == 200 and token not in shown.text
        assert set(shown.json()) >= {"id", "seed", "cases", "createdAt", "lastUsedAt", "requests"}


def test_session_tokens_are_unguessable(server_world):
    with mock(server_world) as m:
        tokens = {m.create()[1] for _ in range(20)}
        assert len(tokens) == 20
        assert all(t.startswith("evm_") and len(t) >= 4 + 43 for t in tokens)


def test_the_banner_says_where_the_admin_api_is_or_why_it_is_off(server_world):
    from evalmock.server.banner import banner
    from evalmock.server.settings import ServerSettings

    on = banner(ServerSettings(cases=server_world.cases), server_world)
    assert "/__evalmock/sessions" in on and "/__evalmock/ui/" in on
    guarded = banner(ServerSettings(host="0.0.0.0", admin_token="s3cret"), server_world)
    assert "/__evalmock/sessions" in guarded and "s3cret" not in guarded
    off = banner(ServerSettings(host="0.0.0.0"), server_world)
    assert "/__evalmock/sessions" not in off
    assert "is off" in off and "--admin-token" in off


def test_a_web_page_of_another_origin_cannot_drive_the_admin_api(server_world):
    with mock(server_world) as m:
        other = {"Origin": "http://evil.example"}
        answer = m.client.post(f"{ADMIN}/sessions", headers=other)
        assert_admin_error(answer, 403, "forbidden")
        same = {"Origin": "http://testserver"}  # the test client's own host: Swagger UI's case
        assert m.client.post(f"{ADMIN}/sessions", headers=same).status_code == 201
        assert m.client.post(f"{ADMIN}/sessions").status_code == 201  # a test runner sends none
