"""Every error path answers with the API's documented body, its request id echoed, never
problem+json or a 500."""

from __future__ import annotations

import asyncio
from functools import partial
from typing import Any

import httpx
import pytest
from connexion.exceptions import ProblemException
from connexion.middleware.exceptions import ExceptionMiddleware
from starlette.exceptions import HTTPException
from starlette.testclient import TestClient

from evalmock.contract.statuses import error_codes
from evalmock.server.app import create_app
from evalmock.server.errors import (
    ERROR_HANDLERS,
    ApiError,
    ErrorHandlersMiddleware,
    agent_not_found,
    bad_input,
    database_busy,
)
from evalmock.server.ratelimit import RateLimitCounter
from evalmock.server.request_id import RequestIdMiddleware
from evalmock.server.settings import ServerSettings
from evalmock.world import EncodedPage, World
from evalmock.world.catalog import EXAMPLE_PROJECT
from shared import LIMIT

from .helpers import (
    AUTH,
    FrozenClock,
    assert_digitalocean_error,
    assert_envelope,
    assert_ratelimit_headers,
    cases_path,
    evaluation_path,
    example_params,
)

SMALL_WORLD = World(seed=42, cases=50)
BAD_QUERIES = [
    pytest.param({"projectId": None}, "projectId", id="projectId-missing"),
    pytest.param({"projectId": "not-a-uuid"}, "projectId", id="projectId-not-uuid"),
    pytest.param(
        {"projectId": EXAMPLE_PROJECT + "\n"}, "projectId", id="projectId-trailing-newline"
    ),
    pytest.param({"projectId": ""}, "projectId", id="projectId-empty"),
    pytest.param({"include": "everything"}, "include", id="include-other"),
    pytest.param({"include": ""}, "include", id="include-empty"),
    pytest.param({"kind": "hand,robot"}, "kind", id="kind-other"),
    pytest.param({"kind": "hand\n"}, "kind", id="kind-trailing-newline"),
    pytest.param({"kind": ""}, "kind", id="kind-empty"),
    pytest.param({"limit": 0}, "limit", id="limit-zero"),
    pytest.param({"limit": LIMIT["maximum"] + 1}, "limit", id="limit-over"),
    pytest.param({"limit": -5}, "limit", id="limit-negative"),
    pytest.param({"limit": "10" * 40}, "limit", id="limit-huge"),
    pytest.param({"limit": "ten"}, "limit", id="limit-word"),
    pytest.param({"limit": "2.5"}, "limit", id="limit-fraction"),
    pytest.param({"limit": " 5"}, "limit", id="limit-padded"),
    pytest.param({"cursor": "garbage"}, "cursor", id="cursor-garbage"),
    pytest.param({"cursor": ""}, "cursor", id="cursor-empty"),
    pytest.param({"cursor": "A" * 10_000}, "cursor", id="cursor-over-long"),
    pytest.param({"cursor": "\x00\x01\x7f"}, "cursor", id="cursor-control-characters"),
    pytest.param({"limt": 10}, "limt", id="unknown-parameter"),
]


@pytest.mark.parametrize(("changes", "parameter"), BAD_QUERIES)
def test_bad_query_is_400_bad_input_naming_the_parameter(
    client: httpx.Client, changes: dict[str, Any], parameter: str
) -> None:
    params = {k: v for k, v in example_params(**changes).items() if v is not None}
    error = assert_envelope(client.get(cases_path(), params=params, headers=AUTH), 400, "bad-input")
    assert error["details"]["parameter"] == parameter
    assert parameter in error["message"]


def test_repeated_parameter_is_400_bad_input(client: httpx.Client) -> None:
    response = client.get(
        cases_path(),
        params=[("projectId", EXAMPLE_PROJECT), ("limit", "5"), ("limit", "6")],
        headers=AUTH,
    )
    assert assert_envelope(response, 400, "bad-input")["details"] == {"parameter": "limit"}


def test_body_on_get_is_400_bad_input(client: httpx.Client) -> None:
    response = client.request(
        "GET", cases_path(), params=example_params(), headers=AUTH, content=b'{"x": 1}'
    )
    assert assert_envelope(response, 400, "bad-input")["details"] == {"parameter": "body"}


def test_too_many_query_parameters_is_400(client: httpx.Client) -> None:
    params = [("projectId", EXAMPLE_PROJECT)] + [(f"p{i}", "x") for i in range(200)]
    assert_envelope(client.get(cases_path(), params=params, headers=AUTH), 400, "bad-input")


def test_bad_input_message_matches_the_document_wording(client: httpx.Client) -> None:
    response = client.get(cases_path(), params={"projectId": "nope"}, headers=AUTH)
    assert (
        assert_envelope(response, 400, "bad-input")["message"]
        == "Query parameter 'projectId' must be a UUID."
    )


@pytest.mark.parametrize(
    ("authorization", "code"),
    [
        pytest.param(None, "unauthorized", id="missing"),
        pytest.param("", "unauthorized", id="empty-header"),
        pytest.param("Basic dXNlcjpwYXNz", "unauthorized", id="other-scheme"),
        pytest.param("Bearer", "unauthorized", id="scheme-only"),
        pytest.param("Bearer    ", "unauthorized", id="blank-token"),
        pytest.param("Bearer two words", "unauthorized", id="malformed"),
        pytest.param("Bearer tok\u00e9n", "unauthorized", id="non-ascii"),
        pytest.param("Bearer " + "a" * 5000, "unauthorized", id="over-long"),
        pytest.param("Bearer demo-expired", "token-expired", id="expired"),
        pytest.param("Bearer demo-revoked", "token-revoked", id="revoked"),
    ],
)
def test_each_token_problem_is_401_with_its_code(
    client: httpx.Client, authorization: str | None, code: str
) -> None:
    headers = {} if authorization is None else {"Authorization": authorization.encode()}
    response = client.get(cases_path(), params=example_params(), headers=headers)
    assert_envelope(response, 401, code)
    assert response.headers["www-authenticate"].startswith("Bearer")


def test_authentication_comes_before_validation(client: httpx.Client) -> None:
    assert_envelope(client.get(cases_path(), params={"limit": 0}), 401, "unauthorized")


@pytest.mark.parametrize("token", ["demo-user", "demo-service", "demo-other"])
def test_demo_tokens_list_cases(client: httpx.Client, token: str) -> None:
    response = client.get(
        cases_path(), params=example_params(limit=1), headers={"Authorization": f"Bearer {token}"}
    )
    assert response.status_code == 200


def test_a_token_without_read_learns_nothing_of_the_project(client: httpx.Client) -> None:
    # "Needs read on the project.": demo-no-read is a valid caller without read on any project.
    response = client.get(
        cases_path(), params=example_params(), headers={"Authorization": "Bearer demo-no-read"}
    )
    assert_envelope(response, 404, "agent-not-found")
    assert "data" not in response.json()


def test_a_made_up_token_is_401_naming_the_fix(client: httpx.Client) -> None:
    headers = {"Authorization": "Bearer any-well-formed.token~+/=="}
    error = assert_envelope(
        client.get(cases_path(), params=example_params(), headers=headers), 401, "unauthorized"
    )
    assert "--token" in error["message"] and "--any-token" in error["message"]


def test_registered_tokens_and_any_token_are_accepted() -> None:
    settings = ServerSettings(tokens=(("ci-user-token", "user"), ("ci-service", "service")))
    with TestClient(create_app(settings, SMALL_WORLD)) as registered:
        for token in ("ci-user-token", "ci-service", "demo-user"):
            response = registered.get(
                cases_path(),
                params=example_params(limit=1),
                headers={"Authorization": f"Bearer {token}"},
            )
            assert response.status_code == 200, token
        refused = registered.get(
            cases_path(), params=example_params(), headers={"Authorization": "Bearer other"}
        )
        assert refused.status_code == 401
    with TestClient(create_app(ServerSettings(any_token=True), SMALL_WORLD)) as anyone:
        response = anyone.get(
            cases_path(),
            params=example_params(limit=1),
            headers={"Authorization": "Bearer any-well-formed.token~+/=="},
        )
        assert response.status_code == 200


def test_unknown_agent_is_404_agent_not_found(client: httpx.Client) -> None:
    response = client.get(cases_path("acme.unknown"), params=example_params(), headers=AUTH)
    error = assert_envelope(response, 404, "agent-not-found")
    assert error["details"] == {"agentId": "acme.unknown"}
    assert "acme.unknown" in error["message"]


@pytest.mark.parametrize(
    "path", ["/v1", "/v1/", "/v1/agents/example/test-set/case", cases_path() + "/"]
)
def test_a_wrong_path_under_the_test_set_api_is_404_naming_its_operation_and_ui(
    client: httpx.Client, path: str
) -> None:
    response = client.get(path, params=example_params(), headers=AUTH, follow_redirects=False)
    # the bare base path too: no redirect to /v1/, itself a 404
    error = assert_envelope(response, 404, "not-found")
    assert error["message"].endswith(
        "; this API answers GET /v1/agents/{agentId}/test-set/cases (Swagger UI: /v1/ui/)."
    )


@pytest.mark.parametrize("path", ["/v2", "/v2/gen-ai/evaluation_test_case/x"])
def test_a_wrong_path_under_the_digitalocean_api_is_404_naming_its_operation_and_ui(
    client: httpx.Client, path: str
) -> None:
    response = client.get(path, headers=AUTH, follow_redirects=False)
    assert_digitalocean_error(response, 404, "not_found")
    assert response.json()["message"].endswith(
        "; this API answers GET /v2/gen-ai/evaluation_test_cases/{test_case_uuid} (Swagger UI: "
        "/v2/ui/)."
    )


def test_a_path_under_no_api_is_404_saying_where_the_apis_live(client: httpx.Client) -> None:
    error = assert_envelope(client.get("/v3/cases", headers=AUTH), 404, "not-found")
    assert error["message"] == "No route GET '/v3/cases'; the APIs live under /v1 and /v2."


@pytest.mark.parametrize("control", ["%00", "%01", "%0A", "%1b", "%7F", "%C2%85"])
def test_agent_id_with_a_control_character_is_400_naming_it_as_the_document_says(
    client: httpx.Client, control: str
) -> None:
    response = client.get(
        cases_path("acme" + control + "x" * 3000), params=example_params(), headers=AUTH
    )
    error = assert_envelope(response, 400, "bad-input")
    assert error["details"] == {"parameter": "agentId"} and len(error["message"]) < 300


def test_agent_id_with_other_unusual_characters_is_404_agent_not_found(
    client: httpx.Client,
) -> None:
    response = client.get(
        cases_path("acme%E2%80%8F" + "x" * 3000), params=example_params(), headers=AUTH
    )
    # a right-to-left mark is a format character
    error = assert_envelope(response, 404, "agent-not-found")
    assert len(error["message"]) < 300


def test_database_busy_via_prefer_is_503_with_retry_after(client: httpx.Client) -> None:
    response = client.get(
        cases_path(), params=example_params(), headers={**AUTH, "Prefer": "code=503"}
    )
    error = assert_envelope(response, 503, "database-busy")
    assert response.headers["retry-after"].isdigit()
    assert error["details"]["retryAfterSeconds"] == int(response.headers["retry-after"])


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH", "TRACE"])
def test_other_methods_are_405_with_allow(client: httpx.Client, method: str) -> None:
    response = client.request(method, cases_path(), params=example_params(), headers=AUTH)
    assert_envelope(response, 405, "method-not-allowed")
    assert "GET" in response.headers["allow"]


def test_gradient_other_method_is_405_with_allow_and_digitalocean_body(
    client: httpx.Client,
) -> None:
    response = client.delete(evaluation_path(), headers=AUTH)
    assert_digitalocean_error(response, 405, "method_not_allowed")
    assert "GET" in response.headers["allow"]


@pytest.mark.parametrize(
    "path", ["/", "/nothing", "/v1", "/v1/agents", "/v1/agents/example/test-set", "/v3/x"]
)
def test_unknown_route_is_404_not_found_envelope(client: httpx.Client, path: str) -> None:
    assert_envelope(client.get(path, headers=AUTH), 404, "not-found")


def test_a_path_with_a_slash_added_is_404_not_a_redirect_to_the_operation(
    client: httpx.Client,
) -> None:
    listed = client.get(
        cases_path() + "/", params=example_params(), headers=AUTH, follow_redirects=False
    )
    assert_envelope(listed, 404, "not-found")
    test_case = client.get(evaluation_path() + "/", headers=AUTH, follow_redirects=False)
    assert_digitalocean_error(test_case, 404, "not_found")
    assert "location" not in listed.headers and "location" not in test_case.headers
    # the UI's own
    assert client.get("/v1/ui", follow_redirects=False).headers["location"].endswith("/v1/ui/")


def test_unknown_gradient_route_is_404_with_digitalocean_body(client: httpx.Client) -> None:
    assert_digitalocean_error(client.get("/v2/gen-ai/nothing", headers=AUTH), 404, "not_found")


@pytest.mark.parametrize(
    "uuid", ["00000000-0000-0000-0000-000000000000", "not-a-uuid", "x" * 5000, "%00%ff"]
)
def test_gradient_unknown_test_case_is_404_not_found(client: httpx.Client, uuid: str) -> None:
    assert_digitalocean_error(client.get(evaluation_path(uuid), headers=AUTH), 404, "not_found")


@pytest.mark.parametrize("version", ["0", "999", "-1", "99999999999999999999"])
def test_gradient_version_the_case_does_not_have_is_404(client: httpx.Client, version: str) -> None:
    response = client.get(
        evaluation_path(), params={"evaluation_test_case_version": version}, headers=AUTH
    )
    assert_digitalocean_error(response, 404, "not_found")


@pytest.mark.parametrize("version", ["latest", "1.5", "", "1e3", " 2"])
def test_gradient_version_of_wrong_type_is_400_bad_request(
    client: httpx.Client, version: str
) -> None:
    response = client.get(
        evaluation_path(), params={"evaluation_test_case_version": version}, headers=AUTH
    )
    body = assert_digitalocean_error(response, 400, "bad_request")
    assert "evaluation_test_case_version" in body["message"]


@pytest.mark.parametrize(
    ("token", "message_part"),
    [
        (None, "required"),
        ("demo-expired", "expired"),
        ("demo-revoked", "revoked"),
        ("a b", "malformed"),
    ],
)
def test_gradient_auth_failures_are_401_unauthorized(
    client: httpx.Client, token: str | None, message_part: str
) -> None:
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    body = assert_digitalocean_error(
        client.get(evaluation_path(), headers=headers), 401, "unauthorized"
    )
    assert message_part in body["message"]


def test_every_gradient_response_carries_integer_ratelimit_headers(client: httpx.Client) -> None:
    for response in (
        client.get(evaluation_path(), headers=AUTH),
        client.get(evaluation_path(), headers={**AUTH, "Prefer": "code=500"}),
        client.get("/v2/openapi.json"),
    ):
        assert_ratelimit_headers(response)


def test_ratelimit_remaining_counts_down(client: httpx.Client) -> None:
    first = client.get(evaluation_path(), headers=AUTH)
    second = client.get(evaluation_path(), headers=AUTH)
    assert (
        int(second.headers["ratelimit-remaining"]) == int(first.headers["ratelimit-remaining"]) - 1
    )


def test_ratelimit_counts_only_api_requests_not_the_document_ui_or_preflights(
    client: httpx.Client,
) -> None:
    preflight = {
        "Origin": "http://localhost:5173",
        "Access-Control-Request-Method": "GET",
        "Access-Control-Request-Headers": "authorization",
    }
    first = client.get(evaluation_path(), headers=AUTH)
    for response in (
        client.get("/v2/openapi.json"),
        client.get("/v2/ui/"),
        client.options(evaluation_path(), headers=preflight),
    ):
        assert response.status_code == 200
        assert response.headers["ratelimit-remaining"] == first.headers["ratelimit-remaining"]
    second = client.get(evaluation_path(), headers=AUTH)
    assert (
        int(second.headers["ratelimit-remaining"]) == int(first.headers["ratelimit-remaining"]) - 1
    )


def test_test_set_responses_have_no_ratelimit_headers(client: httpx.Client) -> None:
    assert (
        "ratelimit-limit"
        not in client.get(cases_path(), params=example_params(), headers=AUTH).headers
    )


@pytest.mark.parametrize(
    ("incoming", "kept"),
    [
        ("abc-123.x:y_z", True),
        ("a" * 128, True),
        ("a" * 129, False),
        ("has space", False),
        ("tab\there", False),
    ],
)
def test_incoming_request_id_is_kept_only_when_sane(
    client: httpx.Client, incoming: str, kept: bool
) -> None:
    response = client.get("/nothing", headers={"X-Request-Id": incoming})
    error = assert_envelope(response, 404, "not-found")
    assert (error["requestId"] == incoming) is kept
    assert 1 <= len(error["requestId"]) <= 128


def test_successful_responses_carry_a_request_id(client: httpx.Client) -> None:
    response = client.get(
        cases_path(), params=example_params(limit=1), headers={**AUTH, "X-Request-Id": "trace-1"}
    )
    assert response.headers["x-request-id"] == "trace-1"


class BrokenWorld(World):
    """A world that breaks its promises: an invalid case, and an exception."""

    def encoded_page(self, query: Any, after: int | None, limit: int) -> EncodedPage:
        return EncodedPage([b'{"id":"half-a-case"}'], None)

    def encoded_evaluation_test_case(
        self, test_case_uuid: str, version: int | None
    ) -> bytes | None:
        raise RuntimeError("the world broke")


@pytest.fixture(scope="module")
def broken_client(make_client: Any) -> httpx.Client:
    return make_client(world=BrokenWorld(seed=1, cases=10))


def test_non_conforming_response_is_500_internal_envelope(broken_client: httpx.Client) -> None:
    response = broken_client.get(cases_path(), params=example_params(), headers=AUTH)
    error = assert_envelope(response, 500, "internal")
    assert "conform" in error["message"]


def test_unhandled_exception_is_500_without_a_stack_trace(broken_client: httpx.Client) -> None:
    response = broken_client.get(evaluation_path(), headers=AUTH)
    body = assert_digitalocean_error(response, 500, "server_error")
    assert "Traceback" not in response.text and "the world broke" not in body["message"]


async def _start_then(exc: Exception, scope: Any, receive: Any, send: Any) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": []})
    raise exc


async def _raise(exc: Exception, scope: Any, receive: Any, send: Any) -> None:
    raise exc


async def _answer(scope: Any, receive: Any, send: Any) -> None:
    await send(
        {"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]}
    )
    await send({"type": "http.response.body", "body": b"{}"})


INNER_APPS = [
    pytest.param(_answer, id="answers"),
    pytest.param(partial(_raise, ApiError(404, "agent-not-found", "No agent.")), id="api-error"),
    pytest.param(
        partial(_raise, HTTPException(405, headers={"Allow": "GET"})), id="http-exception"
    ),
    pytest.param(partial(_raise, ProblemException(status=400, detail="bad")), id="problem"),
    pytest.param(partial(_raise, ValueError("boom")), id="unhandled"),
    pytest.param(partial(_start_then, ApiError(400, "bad-input")), id="error-after-start"),
]


def _through(middleware: type[ExceptionMiddleware], inner: Any) -> tuple[list[Any], str | None]:
    """The messages sent and the exception raised (by type) when `inner` runs behind
    `middleware`."""
    app = middleware(inner)
    for exception_or_status, handler in ERROR_HANDLERS:
        app.add_exception_handler(exception_or_status, handler)
    sent: list[Any] = []

    async def send(message: Any) -> None:
        sent.append(message)

    async def receive() -> Any:
        return {"type": "http.request", "body": b"", "more_body": False}

    scope = {
        "type": "http",
        "method": "GET",
        "path": "/v1/x",
        "headers": [(b"x-request-id", b"errors")],
        "query_string": b"",
    }
    raised = None
    try:
        asyncio.run(RequestIdMiddleware(app)(scope, receive, send))
    except Exception as exc:
        raised = type(exc).__name__
    return sent, raised


@pytest.mark.parametrize("inner", INNER_APPS)
def test_errors_are_handled_as_connexions_exception_middleware_handles_them(inner: Any) -> None:
    assert _through(ErrorHandlersMiddleware, inner) == _through(ExceptionMiddleware, inner)


def test_the_ratelimit_window_starts_again_each_hour_with_its_own_reset() -> None:
    clock = FrozenClock(3600 * 10 + 5)
    counter = RateLimitCounter(limit=3, clock=clock)
    assert dict(counter.count()) == {
        b"ratelimit-limit": b"3",
        b"ratelimit-remaining": b"2",
        b"ratelimit-reset": b"39600",
    }
    counter.count()
    counter.count()
    assert dict(counter.count())[b"ratelimit-remaining"] == b"0"  # never below zero
    clock.advance(3600)
    assert dict(counter.count()) == {
        b"ratelimit-limit": b"3",
        b"ratelimit-remaining": b"2",
        b"ratelimit-reset": b"43200",
    }
    assert dict(counter.count(counted=False))[b"ratelimit-remaining"] == b"2"


def test_the_server_s_own_errors_name_the_codes_the_document_names() -> None:
    """The handlers' refusals, for a bad parameter, an unknown agent and a busy database, name the
    code the document gives their status (a code the document changes fails here first)."""
    answers = (bad_input("projectId", "m"), agent_not_found("acme.x"), database_busy(1))
    assert {error.status: error.code for error in answers} == {
        status: error_codes("test-set")[status] for status in (400, 404, 503)
    }
